/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_io.h - reading completed captures into a struct xp_capture and
 * writing a capture out (JSONL, Chrome Trace Event Format).
 *
 * Inputs (xp_input_load detects the format from the content):
 *   - Event JSONL: whitespace-separated Event documents (decode_json.cc,
 *     simdjson underneath);
 *   - host-capture JSON: one HostCaptureResult document with "events";
 *   - .xtf trace files and libxprobe session directories (xtf reader).
 * Every decoder is strict: unknown fields, duplicate keys, other
 * schema_version values, malformed documents and more events than the
 * capture's max_events are errors with a stable code (TRACE_EXPORT_FAILED
 * for unreadable/undecodable input, EVENT_RATE_TOO_HIGH for the bound)
 * and details naming the path and the line and byte offset.
 */
#ifndef XP_CAPTURE_IO_H
#define XP_CAPTURE_IO_H

#include <stddef.h>

#include "../model/error_record.h"
#include "../model/event.h"

/*
 * Decode one input file (or .xtf session directory) and append its events
 * to @c (bounded by c->max_events; the check against other inputs' pids is
 * the caller's, via xp_inputs_load).
 */
int xp_input_load(const char *path, struct xp_capture *c, struct xp_error *err);

/*
 * Load @n inputs, check they all observe one target, merge them, sort by
 * timestamp and renumber sequences.  @c must be initialized with the bound.
 */
int xp_inputs_load(const char *const *paths, size_t n, struct xp_capture *c,
		   struct xp_error *err);

/* Individual decoders (exposed for tests and fuzz targets).  @name is used
 * in messages only. */
int xp_decode_event_stream(const char *data, size_t len, const char *name, struct xp_capture *c,
			   struct xp_error *err);
int xp_decode_event_stream_fd(int fd, const char *name, struct xp_capture *c,
			      struct xp_error *err);
int xp_decode_host_capture(const char *data, size_t len, const char *name, struct xp_capture *c,
			   struct xp_error *err);
/*
 * A libxprobe .xtf file or session directory (decode_xtf.c, through the
 * public reader of include/xprobe/xtf.h).  Appends events; a capture bound
 * crossed is EVENT_RATE_TOO_HIGH with the input's total.
 */
int xp_decode_xtf_path(const char *path, struct xp_capture *c, struct xp_error *err);

enum xp_export_format {
	XP_EXPORT_JSONL = 0,
	XP_EXPORT_CHROME,
};
const char *xp_export_format_name(enum xp_export_format f);
int xp_export_format_parse(const char *s); /* -1 unknown */

/*
 * Write the whole capture to @path atomically (mode 0600).  Failure is
 * TRACE_EXPORT_FAILED "failed to write <path>: <reason>".
 */
int xp_export_write(const char *path, enum xp_export_format fmt, const struct xp_capture *c,
		    const char *session_id, struct xp_error *err);

#endif /* XP_CAPTURE_IO_H */
