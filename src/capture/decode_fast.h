/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_fast.h - the canonical-line scanner of Event streams: the fast
 * path in front of the simdjson decoder (decode_json.cc).  Private to
 * src/capture.
 *
 * Most Event JSONL is written by an exporter (ours, src/model/event_json.c,
 * or the reference's serde): compact JSON, one document per line, every
 * key present and in the reference order.  xp_fast_scan() accepts exactly
 * that shape and nothing else: the keys are compared as one fixed byte
 * sequence, numbers must be plain integers in canonical form, strings may
 * use only the escapes our escaper writes, values of attributes and
 * arguments only canonical compact JSON without floats.  Anything else --
 * whitespace, another key order, an omitted optional key, an unusual
 * escape, a float, a bad byte -- makes it decline (return 0), and the
 * caller decodes the line with simdjson, which gives the same event or
 * the same error as always.  The scanner never accepts a line that the
 * simdjson decoder would reject, and what it accepts decodes to the same
 * event (tests/fuzz/fuzz_event_fastpath.cc checks both).
 *
 * The scanner allocates nothing and interns nothing: it fills a struct
 * xp_fast_event with the numbers and with spans of the line for the
 * strings and value texts, which decode_json.cc interns exactly as the
 * simdjson path does.
 *
 * Bounds.  The scanner stops at the first '\n' or NUL byte after @p at the
 * latest and may read up to 64 bytes beyond it (XP_JSON_PADDING), so the
 * caller guarantees that one of those bytes occurs at or before @end, or
 * at @end itself, with 64 readable bytes after it.
 */
#ifndef XP_CAPTURE_DECODE_FAST_H
#define XP_CAPTURE_DECODE_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lines with more arguments or attributes than this are declined. */
#define XP_FAST_MAX_ARGS 16
#define XP_FAST_MAX_ATTRS 16

/* A string of the line: the bytes between its quotes. */
struct xp_fast_str {
	const char *p; /* NULL: JSON null */
	uint32_t n;
	uint32_t esc; /* escapes inside; 0: the raw bytes are the value */
};

struct xp_fast_arg {
	struct xp_fast_str abi_type;
	struct xp_fast_str read_error;
	const char *value; /* canonical JSON text; NULL: null */
	uint32_t value_len;
	uint16_t index;
};

struct xp_fast_attr {
	const char *key; /* no escapes, no NUL */
	const char *value; /* canonical JSON text (null is "null") */
	uint32_t key_len;
	uint32_t value_len;
};

/* One accepted line.  ev holds every number, enum and presence flag; its
 * string ids and table links are 0 (the strings are below). */
struct xp_fast_event {
	struct xp_event ev;
	struct xp_fast_str binary_path, build_id, symbol, symbol_demangled; /* XP_EVF_HOST */
	struct xp_fast_str kernel_name, kernel_name_mangled; /* XP_EVF_CUDA */
	struct xp_fast_str nvtx_name; /* XP_EVF_NVTX */
	unsigned nargs, nattrs;
	struct xp_fast_arg args[XP_FAST_MAX_ARGS];
	struct xp_fast_attr attrs[XP_FAST_MAX_ATTRS];
};

/* The enum spellings matched last (consecutive lines repeat them); zero
 * it before the first use.  One per thread. */
struct xp_fast_hints {
	const char *name[6][2];
	uint8_t len[6][2];
	uint8_t val[6][2];
};

/*
 * Scan the line at @p (the segment ends at @end).  Returns the bytes
 * consumed, the closing '\n' included, with @out filled; or 0: declined
 * (@out is then garbage).
 */
size_t xp_fast_scan(struct xp_fast_hints *h, const char *p, const char *end,
		    struct xp_fast_event *out);

/* The value of @s (which has escapes) into @dst, which holds s->n bytes;
 * returns its length. */
size_t xp_fast_unescape(const struct xp_fast_str *s, char *dst);

#ifdef __cplusplus
}
#endif

#endif /* XP_CAPTURE_DECODE_FAST_H */
