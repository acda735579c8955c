/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h - the streaming JSON writer (after bpftool's json_writer) and the
 * number/string formatting every emitted document goes through.
 *
 * The writer tracks nesting depth and the pending comma, so callers never
 * write punctuation.  Two layouts:
 *   - compact: no whitespace at all (JSONL records, {"a":1,"b":[1,2]});
 *   - pretty (XPC_JSON_PRETTY): two-space indent, "key": value, empty
 *     containers as {} and [] -- the layout of serde_json's
 *     to_string_pretty, which the reference documents use.
 * Strings are escaped as serde_json does ("\\", "\"", \b \f \n \r \t, other
 * bytes below 0x20 as \u00XX); invalid UTF-8 is replaced by U+FFFD so a
 * document is always valid JSON whatever bytes a comm or path held.
 * Floats use the shortest form that reads back to the same double, with
 * ".0" on integral values (ryu's layout: exponent below 1e-5 and from 1e16).
 *
 * Output goes to an xpc_buf; with a file descriptor sink the buffer is
 * flushed whenever it passes XPC_JSON_FLUSH_AT bytes, so arbitrarily large
 * exports stream in bounded memory.  Errors (allocation, write) are sticky
 * and reported once by xpc_json_finish().
 */
#ifndef XPC_JSON_H
#define XPC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define XPC_JSON_PRETTY 0x1u
#define XPC_JSON_MAX_DEPTH 64
#define XPC_JSON_FLUSH_AT (1u << 20)

struct xpc_json {
	struct xpc_buf *out;   /* destination buffer (owned iff own_buf) */
	struct xpc_buf own;    /* storage when the writer owns its buffer */
	int fd;                /* sink flushed to when out grows, or -1 */
	unsigned flags;        /* XPC_JSON_* */
	int depth;             /* open containers */
	bool first[XPC_JSON_MAX_DEPTH + 1]; /* no element written yet at depth */
	bool after_key;        /* a key was written; the value comes next */
	int err;               /* first error, negative errno; sticky */
};

/* Write into @out (caller owns it). */
void xpc_json_init_buf(struct xpc_json *w, struct xpc_buf *out, unsigned flags);
/* Write to @fd through an internal buffer. */
void xpc_json_init_fd(struct xpc_json *w, int fd, unsigned flags);
/*
 * Flush to the fd sink (if any), check balance, release internal storage.
 * Return: 0 or the first negative errno met (-ENOMEM, write errors, -EINVAL
 * for unbalanced containers).
 */
int xpc_json_finish(struct xpc_json *w);

/*
 * End one top-level value of a JSON Lines stream: write "\n" and let the
 * next top-level value follow without a comma.  -EINVAL (sticky) when a
 * container is still open.
 */
void xpc_json_line_end(struct xpc_json *w);

void xpc_json_obj_begin(struct xpc_json *w);
void xpc_json_obj_end(struct xpc_json *w);
void xpc_json_arr_begin(struct xpc_json *w);
void xpc_json_arr_end(struct xpc_json *w);
void xpc_json_key(struct xpc_json *w, const char *key);

void xpc_json_str(struct xpc_json *w, const char *s); /* NULL writes null */
void xpc_json_strn(struct xpc_json *w, const char *s, size_t n);
void xpc_json_u64(struct xpc_json *w, uint64_t v);
void xpc_json_i64(struct xpc_json *w, int64_t v);
void xpc_json_f64(struct xpc_json *w, double v);
void xpc_json_bool(struct xpc_json *w, bool v);
void xpc_json_null(struct xpc_json *w);
/*
 * Insert a JSON value given as text.  @text must be valid JSON (the project
 * only passes text it produced itself, compact); in pretty mode it is
 * re-laid out with the current indentation.
 */
void xpc_json_raw(struct xpc_json *w, const char *text);

/* key + value shorthands */
void xpc_json_kstr(struct xpc_json *w, const char *k, const char *s);
void xpc_json_ku64(struct xpc_json *w, const char *k, uint64_t v);
void xpc_json_ki64(struct xpc_json *w, const char *k, int64_t v);
void xpc_json_kf64(struct xpc_json *w, const char *k, double v);
void xpc_json_kbool(struct xpc_json *w, const char *k, bool v);
void xpc_json_knull(struct xpc_json *w, const char *k);
void xpc_json_kraw(struct xpc_json *w, const char *k, const char *text);
/* optional values: null unless @has */
void xpc_json_kopt_u64(struct xpc_json *w, const char *k, bool has, uint64_t v);
void xpc_json_kopt_i64(struct xpc_json *w, const char *k, bool has, int64_t v);
void xpc_json_kobj_begin(struct xpc_json *w, const char *k);
void xpc_json_karr_begin(struct xpc_json *w, const char *k);

/*
 * Escape @n bytes of @s as the body of a JSON string (no quotes) into @b.
 */
void xpc_json_escape(struct xpc_buf *b, const char *s, size_t n);

/* Shortest round-trip decimal form of @v into @buf (at least 32 bytes).
 * Non-finite values print as "null" (JSON has no NaN). Returns length. */
int xpc_fmt_f64(double v, char *buf, size_t size);

#endif /* XPC_JSON_H */
