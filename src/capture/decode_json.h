/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_json.h - private interface of src/capture between the JSON
 * decoders (decode_json.cc, C++ over simdjson) and their C callers
 * (input.c: format detection and multi-input loading; spec.c: the
 * MeasurementSpec parser).  Nothing outside src/capture includes it.
 *
 * Two things live here:
 *
 *   1. The "_ex" decoders behind the public ones in capture_io.h.  They take
 *      bytes already read for format detection (@prefix), report how many
 *      events the input held (struct xp_decode_stats) and, with
 *      XP_DECODE_DEFER_LIMIT, leave the EVENT_RATE_TOO_HIGH error to the
 *      caller, so xp_inputs_load() can count events across several inputs
 *      before failing.  Once the capture is full (xp_capture_add() says
 *      -E2BIG), or from the start with XP_DECODE_COUNT_ONLY, a decoder keeps
 *      validating and counting documents but retains nothing: memory follows
 *      max_events, never the input size.
 *
 *   2. A minimal read-only C view of a parsed JSON document (xp_jdoc), for
 *      small documents read by C code (specs).  It parses with simdjson's
 *      DOM and exposes values, objects and arrays by value handles; keys are
 *      reported as they appear, duplicates included, so callers can reject
 *      duplicate and unknown keys themselves.
 *
 * Where the code lives.  Everything below is implemented in decode_json.cc
 * (with decode_fast.c, both in src/capture/json/) and reached through one table of functions, struct
 * xp_json_api.  The functions declared here are json_api.c's: they find
 * the table once and call through it.  The CLI ships the table in a
 * plugin, lib/xprobe/xprobe-json.so next to bin/ (json_api.c), so that
 * simdjson and the C++ runtime are loaded only by the commands that read
 * JSON: loading them costs every start of xprobe about 1.3 ms here, more
 * than `validate` on a small binary does in all.  Programs that link the
 * decoder in (fuzz targets, benchmarks) pass xp_json_builtin to
 * xp_json_use() instead.
 */
#ifndef XP_CAPTURE_DECODE_JSON_H
#define XP_CAPTURE_DECODE_JSON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../model/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of slack the JSON parser may read past the end of its input
 * (simdjson's SIMDJSON_PADDING; checked by a static_assert). */
#define XP_JSON_PADDING 64

/* Flags of the _ex decoders. */
#define XP_DECODE_COUNT_ONLY 0x1u /* retain nothing: validate and count */
#define XP_DECODE_DEFER_LIMIT 0x2u /* don't raise EVENT_RATE_TOO_HIGH */

struct xp_decode_stats {
	uint64_t observed; /* documents (events) the input held */
	bool over_limit; /* some were not retained (capture full) */
};

/*
 * Decode an Event stream read from @fd (after @prefix_len bytes already
 * read from it into @prefix, which may be NULL).  @fd is read to EOF in
 * bounded chunks.  Returns 0 or a negative code with @err filled.
 */
int xp_decode_event_stream_fd_ex(int fd, const char *prefix, size_t prefix_len, const char *name,
				 struct xp_capture *c, unsigned flags,
				 struct xp_decode_stats *stats, struct xp_error *err);

/*
 * Decode one HostCaptureResult document held in @buf[0..len), which must
 * have XP_JSON_PADDING readable bytes after @len (their content does not
 * matter).
 */
int xp_decode_host_capture_padded(const char *buf, size_t len, const char *name,
				  struct xp_capture *c, unsigned flags,
				  struct xp_decode_stats *stats, struct xp_error *err);

/*
 * Test hook (sqlite3FaultSim style): read Event streams in chunks of @bytes
 * instead of the default, so tests cross chunk boundaries with small
 * inputs.  0 restores the default.  Not thread-safe; tests only.
 */
void xp_decode_test_chunk_bytes(size_t bytes);

/*
 * Test hooks of the canonical-line fast path (decode_fast.h).  It is on
 * by default and off when the environment has XPROBE_DECODE_NO_FASTPATH
 * set (to anything but "" or "0"); xp_decode_test_fastpath() overrides
 * that: 1 on, 0 off, -1 back to the environment.  xp_decode_test_fast_stats()
 * reads and resets the counts of all decodes so far: lines the fast path
 * decoded, lines it declined (simdjson decoded them), and segments decoded
 * again by simdjson alone to report a failure.  xp_decode_test_fast_line()
 * offers one line (no '\n') to the fast path alone and appends its event
 * to @c: 1 accepted, 0 declined, -1 failed (c's target, memory).  Not
 * thread-safe; tests only.
 */
struct xp_decode_fast_stats {
	uint64_t fast_lines;
	uint64_t declined;
	uint64_t reruns;
};

void xp_decode_test_fastpath(int mode);
void xp_decode_test_fast_stats(struct xp_decode_fast_stats *out);
int xp_decode_test_fast_line(const char *line, size_t len, struct xp_capture *c);

/* --- xp_jdoc: a small read-only JSON document view ------------------------ */

enum xp_jtype {
	XP_J_NULL = 0,
	XP_J_BOOL,
	XP_J_INT, /* an integer that fits int64_t */
	XP_J_UINT, /* an integer above INT64_MAX (fits uint64_t) */
	XP_J_DOUBLE, /* anything with a fraction or an exponent */
	XP_J_STRING,
	XP_J_ARRAY,
	XP_J_OBJECT,
};

struct xp_jdoc;

/* A value of a document; valid while the document lives. */
struct xp_jval {
	uint64_t opaque[2];
};

/* Iteration state over an object's members or an array's elements. */
struct xp_jiter {
	uint64_t opaque[4];
};

/*
 * Parse exactly one JSON document (surrounding whitespace allowed).  On
 * failure returns NULL and writes a reason to @why (NUL-terminated).
 */
struct xp_jdoc *xp_jdoc_parse(const char *data, size_t len, char *why, size_t why_size);
void xp_jdoc_free(struct xp_jdoc *d);
struct xp_jval xp_jdoc_root(const struct xp_jdoc *d);

enum xp_jtype xp_jval_type(struct xp_jval v);
const char *xp_jtype_name(enum xp_jtype t); /* "a string", "null", ... */
bool xp_jval_bool(struct xp_jval v);
int64_t xp_jval_i64(struct xp_jval v); /* XP_J_INT */
uint64_t xp_jval_u64(struct xp_jval v); /* XP_J_UINT, or XP_J_INT >= 0 */
double xp_jval_f64(struct xp_jval v);
/* XP_J_STRING: the unescaped bytes (may hold NUL bytes), NUL-terminated. */
const char *xp_jval_str(struct xp_jval v, size_t *len);

/* Members of an object, in document order. */
void xp_jobj_iter(struct xp_jval obj, struct xp_jiter *it);
bool xp_jobj_next(struct xp_jiter *it, const char **key, size_t *klen, struct xp_jval *val);

/* --- where the decoder is --------------------------------------------- */

/* Bumped whenever struct xp_json_api changes. */
#define XP_JSON_API_ABI 2

/* The decoder's functions, in the order of the declarations above. */
struct xp_json_api {
	uint32_t abi; /* XP_JSON_API_ABI */
	uint32_t size; /* sizeof(struct xp_json_api) */
	int (*event_stream_fd_ex)(int fd, const char *prefix, size_t prefix_len, const char *name,
				  struct xp_capture *c, unsigned flags,
				  struct xp_decode_stats *stats, struct xp_error *err);
	int (*host_capture_padded)(const char *buf, size_t len, const char *name,
				   struct xp_capture *c, unsigned flags,
				   struct xp_decode_stats *stats, struct xp_error *err);
	int (*event_stream)(const char *data, size_t len, const char *name, struct xp_capture *c,
			    struct xp_error *err);
	void (*test_chunk_bytes)(size_t bytes);
	void (*test_fastpath)(int mode);
	void (*test_fast_stats)(struct xp_decode_fast_stats *out);
	int (*test_fast_line)(const char *line, size_t len, struct xp_capture *c);
	struct xp_jdoc *(*jdoc_parse)(const char *data, size_t len, char *why, size_t why_size);
	void (*jdoc_free)(struct xp_jdoc *d);
	struct xp_jval (*jdoc_root)(const struct xp_jdoc *d);
	enum xp_jtype (*jval_type)(struct xp_jval v);
	bool (*jval_bool)(struct xp_jval v);
	int64_t (*jval_i64)(struct xp_jval v);
	uint64_t (*jval_u64)(struct xp_jval v);
	double (*jval_f64)(struct xp_jval v);
	const char *(*jval_str)(struct xp_jval v, size_t *len);
	void (*jobj_iter)(struct xp_jval obj, struct xp_jiter *it);
	bool (*jobj_next)(struct xp_jiter *it, const char **key, size_t *klen, struct xp_jval *val);
	/* the loader's stop request (common/cancel.h): the plugin's decoders
	 * test that flag, not their own copy's */
	void (*share_cancel)(volatile sig_atomic_t *flag);
};

/* The table of decode_json.cc (linked in by the plugin, fuzz targets and
 * benchmarks). */
extern const struct xp_json_api xp_json_builtin;

/* The plugin's one exported symbol: returns its table. */
#define XP_JSON_PLUGIN_ENTRY "xp_json_plugin_v1"
typedef const struct xp_json_api *(*xp_json_plugin_fn)(void);

/* Use @api from now on instead of loading the plugin (call it before the
 * first decode). */
void xp_json_use(const struct xp_json_api *api);

/*
 * 0 when the decoder is there (loading the plugin the first time), or
 * INTERNAL with the plugin's path and the loader's reason in @err.  The
 * plugin is $XPROBE_JSON_PLUGIN when set (an absolute path only root or the
 * real user can write, common/env_hooks.h), else ../lib/xprobe/xprobe-json.so
 * from the directory of the running executable.  Every decoder above
 * that takes an xp_error checks this itself; callers of xp_jdoc_parse()
 * check it first.  The test hooks abort when the decoder cannot be loaded.
 */
int xp_json_ready(struct xp_error *err);

#ifdef __cplusplus
}
#endif

#endif /* XP_CAPTURE_DECODE_JSON_H */
