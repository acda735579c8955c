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
 * Repeated tails.  After the numbers that change from event to event
 * (sequence, tid, timestamps) an Event line ends with its host, cuda, nvtx
 * and attributes parts, and those repeat: the same probe and symbol, the
 * same argument list, the same attribute map.  The scanner keeps the last
 * tails it accepted (from ',"host":' to the end of the line; a few per
 * event type and tid), and a line whose tail is byte for byte one of them
 * takes that tail's values instead of reading it, and decode_json.cc takes
 * what the tail's strings and lists became in the capture (struct
 * xp_fast_tail) instead of interning and sharing them again.  Reading a
 * tail depends on its bytes only, so equal bytes mean an equal verdict and
 * equal values.  When few tails repeat, the scanner stops looking for a
 * while (the lookup costs a compare per candidate).  Stretches of the
 * head repeat too (the session, the source, type and pid, the clock) and
 * are compared with the last ones read in the same way
 * (struct xp_fast_stretch).
 *
 * The scanner allocates nothing and interns nothing: it fills a struct
 * xp_fast_event with the numbers and with spans of the line for the
 * strings and value texts, which decode_json.cc interns exactly as the
 * simdjson path does.
 *
 * Bounds.  The scanner stops at the first '\n' or NUL byte after @p at the
 * latest and may read up to 64 bytes beyond it (XP_JSON_PADDING), so the
 * caller guarantees that one of those bytes occurs at or before @end, or
 * at @end itself, with 64 readable bytes after it.  Kept tails are copies:
 * they stay valid when the buffer changes.
 */
#ifndef XP_CAPTURE_DECODE_FAST_H
#define XP_CAPTURE_DECODE_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../model/event.h"

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

/* The strings of an event (xp_fast_parts.str[], xp_fast_tail.str_id[]). */
enum {
	XP_FS_BINARY_PATH,
	XP_FS_BUILD_ID,
	XP_FS_SYMBOL,
	XP_FS_SYMBOL_DEMANGLED,
	XP_FS_KERNEL_NAME,
	XP_FS_KERNEL_NAME_MANGLED,
	XP_FS_NVTX_NAME,
	XP_FS__COUNT
};

/* The strings and lists of an event's host, cuda, nvtx and attributes. */
struct xp_fast_parts {
	struct xp_fast_str str[XP_FS__COUNT]; /* valid where ev's flags say */
	unsigned nargs, nattrs;
	struct xp_fast_arg args[XP_FAST_MAX_ARGS];
	struct xp_fast_attr attrs[XP_FAST_MAX_ATTRS];
};

#define XP_FAST_TAIL_MAX 1024 /* longer tails are not kept */

/* A tail kept for the lines that repeat it (its spans point into text). */
struct xp_fast_tail {
	uint32_t len; /* 0: empty */
	uint8_t flags; /* its XP_EVF_HOST, XP_EVF_CUDA, XP_EVF_NVTX */
	struct xp_host_part host; /* ids and table links 0 */
	struct xp_cuda_part cuda;
	struct xp_nvtx_part nvtx;
	struct xp_fast_parts pt;
	/* the committer's (decode_json.cc): what its strings and lists became
	 * in the capture; valid when committed and cgen is the state's */
	bool committed;
	uint32_t cgen;
	xp_str_t str_id[XP_FS__COUNT];
	uint32_t args_first, attrs_first;
	uint16_t args_count, attrs_count;
	char text[XP_FAST_TAIL_MAX];
};

/* One accepted line.  ev holds every number, enum and presence flag; its
 * string ids and table links are 0.  With a tail, the strings and lists
 * are the tail's (tail->pt), else pt. */
struct xp_fast_event {
	struct xp_event ev;
	struct xp_fast_tail *tail;
	struct xp_fast_parts pt;
};

/* The enum spellings matched last (consecutive lines repeat them). */
struct xp_fast_hints {
	const char *name[6][2];
	uint8_t len[6][2];
	uint8_t val[6][2];
};

#define XP_FAST_TAIL_SETS 16 /* by event type and tid */
#define XP_FAST_TAIL_WAYS 8

/* A stretch of a line's head seen before, with the values it holds
 * (decode_fast.c: the lead, the source/type/pid, the clock stretches). */
#define XP_FAST_STRETCH_MAX 128
struct xp_fast_stretch {
	uint16_t len; /* 0: none */
	uint8_t a, b, flags;
	uint32_t u32;
	uint64_t u64[2];
	char text[XP_FAST_STRETCH_MAX];
};

/* A scanner's state: hints, head stretches and kept tails.  One per
 * thread. */
struct xp_fast_state {
	struct xp_fast_hints hints;
	struct xp_fast_stretch lead, mid[2], clock;
	unsigned mid_next; /* the mid[] to replace next */
	uint32_t cgen; /* xp_fast_tail.cgen of committed tails still valid */
	uint32_t lookups, hits; /* this window's */
	uint32_t pause; /* lines left without looking */
	struct xp_fast_tail *set[XP_FAST_TAIL_SETS][XP_FAST_TAIL_WAYS]; /* MRU first */
	struct xp_fast_tail pool[XP_FAST_TAIL_SETS * XP_FAST_TAIL_WAYS];
};

void xp_fast_state_init(struct xp_fast_state *st);
/* What the kept tails became in the capture is gone (a capture's tables
 * were cut back): commit them again when they are used. */
void xp_fast_state_uncommit(struct xp_fast_state *st);

/*
 * Scan the line at @p (the segment ends at @end) into @out.  Returns the
 * bytes consumed, the closing '\n' included; or 0: declined (@out is then
 * garbage).
 */
size_t xp_fast_scan(struct xp_fast_state *st, const char *p, const char *end,
		    struct xp_fast_event *out);

/* The value of @s (which has escapes) into @dst, which holds s->n bytes;
 * returns its length. */
size_t xp_fast_unescape(const struct xp_fast_str *s, char *dst);

#ifdef __cplusplus
}
#endif

#endif /* XP_CAPTURE_DECODE_FAST_H */
