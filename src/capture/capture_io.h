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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../model/error_record.h"
#include "../model/event.h"

struct xpc_json;

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
 * The largest input read whole into memory: a host-capture document
 * (simdjson's limit for one document), an .xtf file, one file of a
 * session directory.  Checked by fstat's st_size before reading and again
 * while reading (common/readfile.h).
 */
#define XP_INPUT_MAX_BYTES ((size_t)0xFFFFFFFFu)

/* TRACE_EXPORT_FAILED for @path (@what: "the host capture", ...) over
 * XP_INPUT_MAX_BYTES; @size its st_size, 0 when it grew while read. */
int xp_input_too_large(struct xp_error *err, const char *path, const char *what, uint64_t size);

/*
 * A libxprobe .xtf file or session directory open at @fd (xpc_file_open,
 * @sb its fstat) whose path is @path (decode_xtf.c, through the public
 * reader of include/xprobe/xtf.h).  A file is read here, bounded, and
 * handed to the reader in memory; a directory is checked first (every
 * entry of it and of on_fail/ a regular file within the bound, or a
 * directory) and then opened by the reader.  Appends events; a capture
 * bound crossed is EVENT_RATE_TOO_HIGH with the input's total.
 */
int xp_decode_xtf_fd(int fd, const struct stat *sb, const char *path, struct xp_capture *c,
		     struct xp_error *err);

enum xp_export_format {
	XP_EXPORT_JSONL = 0,
	XP_EXPORT_CHROME,
};
const char *xp_export_format_name(enum xp_export_format f);
int xp_export_format_parse(const char *s); /* -1 unknown */

/*
 * Write the whole capture to @path atomically (mode 0600).  Failure is
 * TRACE_EXPORT_FAILED "failed to write <path>: <reason>".  Only a regular
 * file is replaced (common/atomic_file.h): a FIFO, device, socket,
 * directory or symlink at @path is refused before anything is written,
 * with details.file_type.
 */
int xp_export_write(const char *path, enum xp_export_format fmt, const struct xp_capture *c,
		    const char *session_id, struct xp_error *err);

/* One matched pair: indexes of its start and end event in the capture. */
struct xp_export_span {
	uint32_t start;
	uint32_t end;
	uint64_t latency_ns;
};

/* The measurement's pairs, drawn as complete events ("ph": "X") in a
 * Chrome export (JSONL has no room for them: every line is an Event). */
struct xp_export_pairs {
	const char *name;           /* the span name: the measurement's, or NULL */
	const char *start_selector; /* named in every span's args */
	const char *end_selector;
	const char *match_policy;   /* kebab-case, as given to --match */
	const struct xp_export_span *v;
	size_t n;
	/* Records of xprobe's own event extension (--explain's scheduler
	 * events, docs/output.md), written after the capture's events by
	 * their owner: in JSONL one line each (xpc_json_line_end after every
	 * one), in a Chrome trace one element each of traceEvents.  NULL:
	 * none. */
	void (*extension)(struct xpc_json *w, bool chrome, void *ctx);
	void *extension_ctx;
};

/* xp_export_write, plus @pairs (NULL = none) as Chrome spans. */
int xp_export_write_pairs(const char *path, enum xp_export_format fmt,
			  const struct xp_capture *c, const char *session_id,
			  const struct xp_export_pairs *pairs, struct xp_error *err);

#endif /* XP_CAPTURE_IO_H */
