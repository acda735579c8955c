/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtf.h - the public reader of .xtf trace files and libxprobe session
 * directories.  The CLI reads sessions through this header only (the
 * `xtf_reader` static library); docs/xtf-format.md describes the bytes.
 *
 * The reader is strict: a file is accepted only if every byte is accounted
 * for -- magic, version, header size, reserved bytes, the header, metadata
 * and blob checksums (CRC32C), section offsets and lengths against the real
 * size, the protobuf metadata (required fields, no unknown fields), every
 * stream inside the blob section, and every record of every stream (size,
 * type allowed in this kind of file, name length, flags, timestamps).  Any
 * failure is an error with a sentence saying what and where; nothing is
 * returned half-read.  Because records are checked at open, iterating them
 * cannot fail.
 *
 * Session directories (<base>/<instance-id>-<pid>/<start-ns>) are read
 * through xprobe_session_open(): the files trace_info.pb lists, or -- when
 * the process died before stop could write trace_info.pb (SIGKILL) -- the
 * host rings recovered from host_rings.live plus every complete file found.
 */
#ifndef XPROBE_XTF_H
#define XPROBE_XTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XPROBE_XTF_HEADER_SIZE 128
#define XPROBE_XTF_VERSION_MAJOR 1
#define XPROBE_XTF_VERSION_MINOR 0

enum xprobe_xtf_kind {
	XPROBE_XTF_DEVICE_PROFILE = 1,
	XPROBE_XTF_NTRACE = 2,
	XPROBE_XTF_TRACE_INFO = 3,
	XPROBE_XTF_CPU_UTIL = 4,
	XPROBE_XTF_HOST_MEM = 5,
};

/* header flags */
#define XPROBE_XTF_F_SIMULATED 0x1u /* made with the sim backend */
#define XPROBE_XTF_F_RECOVERED 0x2u /* rebuilt from host_rings.live after a kill */
#define XPROBE_XTF_F_SIGNAL 0x4u /* written by the fatal-signal stop path */
#define XPROBE_XTF_F__ALL 0x7u

/* An opened, validated file. */
struct xprobe_xtf;

/* What a file says about itself.  Strings live as long as the handle. */
struct xprobe_xtf_info {
	size_t sz; /* set by the caller: sizeof(struct xprobe_xtf_info) */
	uint32_t kind; /* enum xprobe_xtf_kind */
	uint32_t flags; /* XPROBE_XTF_F_* */
	uint32_t version_major;
	uint32_t version_minor;
	uint32_t pid;
	uint64_t process_start_time; /* clock ticks since boot (/proc/<pid>/stat 22) */
	uint64_t session_start_ns; /* CLOCK_REALTIME at begin */
	const char *producer;
	const char *instance_id;
	const char *backend; /* "none", "sim", "cupti" */
	bool simulated;
	const char *clock_source; /* "tsc" or "clock_gettime" */
	size_t streams;
	uint64_t records; /* across streams, pads excluded */
	uint64_t dropped; /* across streams */
	/* kind DEVICE_PROFILE (else NULL / 0) */
	const char *key_space; /* "session", "model", "continuous", "on_fail" */
	int32_t device; /* SESSION device, -1 when absent */
	uint64_t session_id;
	const char *model;
	const char *filename;
	uint64_t execution_id;
	int32_t status;
	bool has_status;
	bool complete; /* DEVICE_PROFILE and TRACE_INFO */
	const char *harvest_error;
	/* kind TRACE_INFO (else NULL / 0) */
	const char *stop_reason; /* "stop", "close", "atexit", "signal" */
	int32_t signal;
	uint64_t host_events;
	uint64_t host_dropped;
	uint64_t fetched_events;
	uint32_t threads;
	uint32_t threads_without_ring;
	size_t files; /* entries of the file list */
	size_t notes;
	size_t : 0;
};
#define xprobe_xtf_info__last_field notes

struct xprobe_xtf_stream {
	uint32_t tid; /* host rings: the thread; else 0 */
	int32_t device; /* device streams: the device; else -1 */
	uint64_t records; /* pads excluded */
	uint64_t dropped;
	const uint8_t *data; /* the stream's bytes (8-aligned) */
	size_t len;
};

/**
 * xprobe_xtf_open_mem() - validate @len bytes at @data as an .xtf file.
 * @data: the bytes; copied, so the caller may free them afterwards.
 * @len: their length.
 * @out: receives the handle.
 * @err: NULL or a buffer for the reason of a rejection. @errlen: its size.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (NULL @data with @len > 0, NULL
 * @out); -XPROBE_E_FORMAT (malformed or truncated: @err says how);
 * -ENOMEM.
 */
XPROBE_API int xprobe_xtf_open_mem(const void *data, size_t len, struct xprobe_xtf **out, char *err,
				   size_t errlen);

/**
 * xprobe_xtf_open_file() - read and validate the file at @path.
 * @path: the file, a regular file: it is opened non-blocking and checked
 * with fstat before any read, so a FIFO, device or directory is refused
 * at once (-XPROBE_E_FORMAT, "not a regular file: a FIFO"), never waited
 * on. Others: as xprobe_xtf_open_mem().
 *
 * Return: as xprobe_xtf_open_mem(); -errno when the file cannot be read.
 */
XPROBE_API int xprobe_xtf_open_file(const char *path, struct xprobe_xtf **out, char *err,
				    size_t errlen);

/**
 * xprobe_xtf_close() - free a handle (NULL accepted).
 * @x: the handle.
 */
XPROBE_API void xprobe_xtf_close(struct xprobe_xtf *x);

/**
 * xprobe_xtf_get_info() - fill @info (up to @info->sz bytes).
 * @x: the handle. @info: sz set by the caller.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT (NULL, sz too small).
 */
XPROBE_API int xprobe_xtf_get_info(const struct xprobe_xtf *x, struct xprobe_xtf_info *info);

/**
 * xprobe_xtf_get_stream() - stream @i of the file.
 * @x: the handle. @i: 0 .. info.streams-1. @out: receives it.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_xtf_get_stream(const struct xprobe_xtf *x, size_t i,
				     struct xprobe_xtf_stream *out);

/**
 * xprobe_xtf_next_record() - walk a stream.  Pads are skipped.
 * @s: the stream. @cursor: 0 at the start; advanced by the call.
 *
 * Return: the next record (valid while the handle is open), NULL at the end.
 */
XPROBE_API const struct xprobe_record *xprobe_xtf_next_record(const struct xprobe_xtf_stream *s,
							      size_t *cursor);

/**
 * xprobe_xtf_get_file() - entry @i of a trace_info.pb file list.
 * @x: a TRACE_INFO handle. @i: index. @name, @kind, @size: receive it (any
 * may be NULL).
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT.
 */
XPROBE_API int xprobe_xtf_get_file(const struct xprobe_xtf *x, size_t i, const char **name,
				   uint32_t *kind, uint64_t *size);

/**
 * xprobe_xtf_get_note() - note @i of a trace_info.pb ("device 2: harvest
 * failed ...").
 * Return: the note, NULL when @i is out of range.
 */
XPROBE_API const char *xprobe_xtf_get_note(const struct xprobe_xtf *x, size_t i);

/**
 * xprobe_event_type_name() - enum xprobe_event_type -> name.
 * Return: a static string, NULL for an unknown value.
 */
XPROBE_API const char *xprobe_event_type_name(uint32_t type);

/* A session directory, opened. */
struct xprobe_session;

/**
 * xprobe_session_open() - open the session directory @dir
 * (<base>/<instance-id>-<pid>/<session-start-ns>).
 *
 * With trace_info.pb: every file it lists must exist with the listed size
 * and validate, and all must name the same pid, instance and start.
 * Without it (the process was killed before stop): the host rings are
 * recovered from host_rings.live (flag XPROBE_XTF_F_RECOVERED) and every
 * file of the directory and of on_fail/ that validates is taken.  Every
 * file is opened as xprobe_xtf_open_file() does: a FIFO or device in the
 * directory (listed, stray, or as host_rings.live) is refused, never
 * waited on; temporaries (*.tmp.*) are skipped.
 * @dir: the directory. @out: receives the handle. @err, @errlen: reason.
 *
 * Return: 0; -XPROBE_E_INVALID_ARGUMENT; -XPROBE_E_FORMAT (a file is
 * malformed, missing, or the directory is not a session); -errno; -ENOMEM.
 */
XPROBE_API int xprobe_session_open(const char *dir, struct xprobe_session **out, char *err,
				   size_t errlen);

/**
 * xprobe_session_file_count() - files opened (trace_info.pb included).
 */
XPROBE_API size_t xprobe_session_file_count(const struct xprobe_session *s);

/**
 * xprobe_session_get_file() - file @i and its name relative to the
 * directory.
 * Return: the handle (owned by the session), NULL when @i is out of range.
 */
XPROBE_API const struct xprobe_xtf *xprobe_session_get_file(const struct xprobe_session *s,
							    size_t i, const char **name);

/**
 * xprobe_session_recovered() - 1 when the session was read without
 * trace_info.pb (recovered after a kill), else 0.
 */
XPROBE_API int xprobe_session_recovered(const struct xprobe_session *s);

/**
 * xprobe_session_close() - free (NULL accepted).
 */
XPROBE_API void xprobe_session_close(struct xprobe_session *s);

/**
 * xprobe_rings_recover() - rebuild the host events of a session whose
 * process died from its host_rings.live file: every record whose ring head
 * was published before the death, timestamps converted with the last
 * calibration the session stored.
 * @path: the host_rings.live file, a regular file (as
 * xprobe_xtf_open_file()). Others as xprobe_xtf_open_mem().
 *
 * Return: as xprobe_xtf_open_file(); the handle is of kind NTRACE with
 * XPROBE_XTF_F_RECOVERED.
 */
XPROBE_API int xprobe_rings_recover(const char *path, struct xprobe_xtf **out, char *err,
				    size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_XTF_H */
