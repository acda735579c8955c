/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_fast.c - the canonical-line scanner of Event streams (the fast
 * path of decode_json.cc; the contract is in decode_fast.h).
 *
 * A canonical line is what src/model/event_json.c writes: the Event keys
 * in reference order, every one present, no whitespace, then '\n'.  The
 * text between values is therefore fixed ("\",\"event_id\":\"", ...) and
 * is compared as constant words (eqn), numbers are read eight digits at a
 * time (SWAR), strings are skipped sixteen bytes at a time (SSE2) up to a
 * quote, a backslash, a control byte or a non-ASCII byte, and only those
 * bytes are looked at one by one.
 *
 * Why this accepts nothing the simdjson path rejects, and decodes what it
 * accepts to the same event:
 *   - every key is compared as part of a fixed sequence, so a line with an
 *     unknown, duplicate, missing or misplaced key does not match;
 *   - numbers: digits only, no leading zero, no "-0", nothing after them
 *     but the next fixed text (so "1.5", "1e3" decline), ranges checked
 *     per field (out of range declines; simdjson's path has the message);
 *   - strings: UTF-8 validated strictly (shortest form, no surrogates, at
 *     most U+10FFFF, as simdjson), no raw control byte, and only the
 *     escapes our escaper (common/json.c) writes: \" \\ \b \f \n \r \t and
 *     \u00XX (lowercase) for the other control bytes.  A string in that
 *     form is the canonical text of its value, so attribute and argument
 *     values are stored as their raw bytes;
 *   - attribute and argument values: null, true, false, integers, strings,
 *     arrays and objects of those (no floats: their canonical text is
 *     re-formatted), at most 8 deep, objects of at most 16 keys without
 *     escapes and without duplicates;
 *   - enum strings go through the model's own parsers.
 * Everything else declines, including limits of this scanner (more than
 * XP_FAST_MAX_ARGS arguments, ...).
 *
 * Kept tails (decode_fast.h): after process_start_time the rest of the
 * line is compared with the tails kept for its event type and tid (a set
 * of XP_FAST_TAIL_WAYS, most recently used first; a tail followed by the
 * '\n' matches); a hit takes the tail's parts, a miss reads the tail and
 * keeps a copy of it in place of the least recently used.  Every window of
 * TAIL_WINDOW lookups that hits less than one in eight pauses the lookups
 * for TAIL_PAUSE lines: a stream without repeats pays a few failed
 * compares per line for a while, then nothing.  Head stretches (the lead
 * up to the event id, source/type/pid, clock/error/start time) are kept
 * one (two for source/type/pid) at a time and compared with the bytes
 * that follow them, the ',' that ends the last number included.
 *
 * Reads: every primitive stops at a '\n' or NUL byte (neither can be part
 * of a match, a number, a string or a kept stretch) and reads at most 48
 * bytes beyond where it stops, within the caller's 64 bytes of padding;
 * compares with kept tails stay before @end.
 */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "decode_fast.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ALWAYS_INLINE __attribute__((always_inline)) inline

#define MAX_VALUE_DEPTH 8
#define MAX_OBJECT_KEYS 16

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "word tricks assume little-endian");

static ALWAYS_INLINE uint64_t ld64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static ALWAYS_INLINE uint32_t ld32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static ALWAYS_INLINE uint16_t ld16(const char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* bytes [0, n) of @p and @s equal; with a constant @s and @n the words of
 * @s fold into immediates */
static ALWAYS_INLINE bool eqn(const char *p, const char *s, size_t n)
{
	uint64_t d = 0;
	size_t i;

	if (n >= 8) {
		for (i = 0; i + 8 <= n; i += 8)
			d |= ld64(p + i) ^ ld64(s + i);
		if (i < n)
			d |= ld64(p + n - 8) ^ ld64(s + n - 8);
		return d == 0;
	}
	if (n >= 4)
		return ((ld32(p) ^ ld32(s)) | (ld32(p + n - 4) ^ ld32(s + n - 4))) == 0;
	if (n >= 2)
		return ((ld16(p) ^ ld16(s)) | (ld16(p + n - 2) ^ ld16(s + n - 2))) == 0;
	return n == 0 || p[0] == s[0];
}

/* Match the fixed text @s at p and step over it, or decline. */
#define LIT(s)                                          \
	do {                                            \
		if (unlikely(!eqn(p, s, sizeof(s) - 1))) \
			return 0;                       \
		p += sizeof(s) - 1;                     \
	} while (0)

/* Step over "null" if it is at p (the next fixed text checks what follows). */
static ALWAYS_INLINE bool is_null(const char **pp)
{
	if (ld32(*pp) != ld32("null"))
		return false;
	*pp += 4;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Strings                                                                 */

/* Offset of the first '"', '\\', control (< 0x20) or non-ASCII byte. */
static ALWAYS_INLINE size_t skip_plain(const char *p)
{
	size_t off = 0;

#if defined(__SSE2__)
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x20);

	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + off));
		/* signed compare: bytes >= 0x80 are negative, below 0x20 too */
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
					 _mm_cmplt_epi8(v, ctl));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);

		if (mask)
			return off + (size_t)__builtin_ctz(mask);
		off += 16;
	}
#else
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;

	for (;;) {
		uint64_t x = ld64(p + off);
		uint64_t xq = x ^ (ones * '"'), xb = x ^ (ones * '\\');
		/* high bit of a byte set for a zero byte of xq/xb, for bytes below
		 * 0x20 and for bytes >= 0x80; false positives only above a true hit */
		uint64_t m = ((xq - ones) & ~xq) | ((xb - ones) & ~xb) | (x - ones * 0x20) | x;

		m &= high;
		if (m)
			return off + ((size_t)__builtin_ctzll(m) >> 3);
		off += 8;
	}
#endif
}

/* Length of the strict UTF-8 sequence at @s (lead byte >= 0x80), or 0. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong; a surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0; /* overlong; above U+10FFFF */
		return 4;
	}
	return 0;
}

static int hex_lower(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * At a backslash: the length of the escape if it is one our escaper
 * writes (so the raw text is canonical), else 0.  *out: the byte it means.
 */
static size_t canon_escape(const char *p, char *out)
{
	int lo, cp;

	switch (p[1]) {
	case '"':
	case '\\':
		*out = p[1];
		return 2;
	case 'b':
		*out = '\b';
		return 2;
	case 'f':
		*out = '\f';
		return 2;
	case 'n':
		*out = '\n';
		return 2;
	case 'r':
		*out = '\r';
		return 2;
	case 't':
		*out = '\t';
		return 2;
	case 'u':
		if (p[2] != '0' || p[3] != '0' || (p[4] != '0' && p[4] != '1'))
			return 0;
		lo = hex_lower(p[5]);
		if (lo < 0)
			return 0;
		cp = (p[4] - '0') * 16 + lo;
		/* these have short forms */
		if (cp == '\b' || cp == '\f' || cp == '\n' || cp == '\r' || cp == '\t')
			return 0;
		*out = (char)cp;
		return 6;
	}
	return 0;
}

/* The string whose first byte is at *pp (after its opening quote); *pp
 * ends after the closing quote. */
static ALWAYS_INLINE bool scan_str(const char **pp, struct xp_fast_str *s)
{
	const char *p = *pp, *start = p;
	uint32_t esc = 0;

	for (;;) {
		unsigned char c;
		size_t l;
		char ignored;

		p += skip_plain(p);
		c = (unsigned char)*p;
		if (likely(c == '"'))
			break;
		if (c == '\\') {
			l = canon_escape(p, &ignored);
			esc++;
		} else if (c >= 0x80) {
			l = utf8_seq((const unsigned char *)p);
		} else {
			return false; /* a raw control byte, the line's end */
		}
		if (!l)
			return false;
		p += l;
	}
	s->p = start;
	s->n = (uint32_t)(p - start);
	s->esc = esc;
	*pp = p + 1;
	return true;
}

size_t xp_fast_unescape(const struct xp_fast_str *s, char *dst)
{
	const char *p = s->p, *end = s->p + s->n;
	size_t n = 0;

	while (p < end) {
		if (*p == '\\') {
			p += canon_escape(p, &dst[n++]);
			continue;
		}
		dst[n++] = *p++;
	}
	return n;
}

/* string|null */
static ALWAYS_INLINE bool scan_opt_str(const char **pp, struct xp_fast_str *s)
{
	if (**pp == '"') {
		++*pp;
		return scan_str(pp, s);
	}
	s->p = NULL;
	s->n = 0;
	s->esc = 0;
	return is_null(pp);
}

/* ---------------------------------------------------------------------- */
/* Numbers                                                                 */

/* How many of the 8 bytes of @x (ASCII ^ '0' in every byte) are digits
 * before the first one that is not. */
static ALWAYS_INLINE unsigned digits8(uint64_t x)
{
	/* a byte is a digit iff its high nibble is 0 and its low one < 10 */
	uint64_t nd = (x & 0xf0f0f0f0f0f0f0f0ull) |
		      (((x & 0x0f0f0f0f0f0f0f0full) + 0x0606060606060606ull) & 0x1010101010101010ull);

	nd = (((nd & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | nd) & 0x8080808080808080ull;
	return nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
}

/* The value of 8 digits (one per byte, the first in the lowest byte). */
static ALWAYS_INLINE uint64_t conv8(uint64_t x)
{
	x = (x & 0x0f0f0f0f0f0f0f0full) * 2561 >> 8;
	x = (x & 0x00ff00ff00ff00ffull) * 6553601 >> 16;
	return (x & 0x0000ffff0000ffffull) * 42949672960001ull >> 32;
}

static const uint64_t pow10_8[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
				     100000000 };

/* A JSON integer without sign in canonical form (no leading zero) that
 * fits in 64 bits. */
static ALWAYS_INLINE bool parse_u64(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t x = ld64(p) ^ 0x3030303030303030ull, v;
	unsigned k = digits8(x), i;

	if (unlikely(k == 0))
		return false;
	if (p[0] == '0') {
		if (k > 1)
			return false;
		*out = 0;
		*pp = p + 1;
		return true;
	}
	if (likely(k < 8)) {
		*out = conv8(x << (8 * (8 - k)));
		*pp = p + k;
		return true;
	}
	v = conv8(x);
	p += 8;
	x = ld64(p) ^ 0x3030303030303030ull;
	k = digits8(x);
	if (k < 8) {
		if (k)
			v = v * pow10_8[k] + conv8(x << (8 * (8 - k)));
		*out = v;
		*pp = p + k;
		return true;
	}
	v = v * 100000000 + conv8(x);
	p += 8;
	/* 16 digits so far: at most 4 more (2^64-1 has 20) */
	for (i = 0; i < 5 && (unsigned char)(p[i] - '0') < 10; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (i == 4 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	*pp = p + i;
	return true;
}

static ALWAYS_INLINE bool parse_u32(const char **pp, uint32_t *out)
{
	uint64_t v;

	if (!parse_u64(pp, &v) || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* An i64 in canonical form ("-0" declines: simdjson reads it as 0). */
static bool parse_i64(const char **pp, int64_t *out)
{
	uint64_t v;

	if (**pp == '-') {
		++*pp;
		if (!parse_u64(pp, &v) || v == 0 || v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = (int64_t)(0 - v);
		return true;
	}
	if (!parse_u64(pp, &v) || v > INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/* u64|null into *out, setting @bit in *flags when present */
#define OPT_U64(field, flags, bit)                        \
	do {                                              \
		if (!is_null(&p)) {                       \
			if (!parse_u64(&p, &(field)))     \
				return 0;                 \
			(flags) |= (bit);                 \
		}                                         \
	} while (0)

#define OPT_U32(field, flags, bit)                        \
	do {                                              \
		if (!is_null(&p)) {                       \
			if (!parse_u32(&p, &(field)))     \
				return 0;                 \
			(flags) |= (bit);                 \
		}                                         \
	} while (0)

/* ---------------------------------------------------------------------- */
/* Free-form values (attributes, argument values)                          */

struct key_span {
	const char *p;
	uint32_t n;
};

/* Step over a value in canonical compact form at *pp, or decline. */
static bool scan_value(const char **pp, int depth);

/* scan_value() with the common case, a plain unsigned integer, inline */
static ALWAYS_INLINE bool scan_value_fast(const char **pp)
{
	uint64_t v;

	if ((unsigned char)(**pp - '0') < 10)
		return parse_u64(pp, &v);
	return scan_value(pp, 0);
}

static bool scan_value(const char **pp, int depth)
{
	const char *p = *pp;
	struct xp_fast_str s;

	switch (*p) {
	case '"':
		p++;
		if (!scan_str(&p, &s))
			return false;
		break;
	case 'n':
		if (!is_null(&p))
			return false;
		break;
	case 't':
		if (ld32(p) != ld32("true"))
			return false;
		p += 4;
		break;
	case 'f':
		if (ld32(p + 1) != ld32("alse"))
			return false;
		p += 5;
		break;
	case '-': {
		int64_t v;

		if (!parse_i64(&p, &v))
			return false;
		break;
	}
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9': {
		uint64_t v;

		if (!parse_u64(&p, &v))
			return false;
		break;
	}
	case '[':
		if (depth >= MAX_VALUE_DEPTH)
			return false;
		p++;
		if (*p == ']') {
			p++;
			break;
		}
		for (;;) {
			if (!scan_value(&p, depth + 1))
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != ']')
				return false;
			p++;
			break;
		}
		break;
	case '{': {
		struct key_span keys[MAX_OBJECT_KEYS];
		unsigned nk = 0, i;

		if (depth >= MAX_VALUE_DEPTH)
			return false;
		p++;
		if (*p == '}') {
			p++;
			break;
		}
		for (;;) {
			if (*p != '"' || nk == MAX_OBJECT_KEYS)
				return false;
			p++;
			if (!scan_str(&p, &s) || s.esc)
				return false;
			for (i = 0; i < nk; i++)
				if (keys[i].n == s.n && memcmp(keys[i].p, s.p, s.n) == 0)
					return false; /* duplicate: simdjson's path says so */
			keys[nk].p = s.p;
			keys[nk++].n = s.n;
			if (*p != ':')
				return false;
			p++;
			if (!scan_value(&p, depth + 1))
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != '}')
				return false;
			p++;
			break;
		}
		break;
	}
	default:
		return false;
	}
	*pp = p;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Enums                                                                   */

enum { EN_SOURCE, EN_EVENT_TYPE, EN_CLOCK, EN_PROBE_KIND, EN_MEMCPY_KIND, EN_RANGE_KIND };

static const char *(*const enum_name[6])(unsigned) = {
	xp_source_name,	    xp_event_type_name,	  xp_clock_domain_name,
	xp_probe_kind_name, xp_memcpy_kind_name, xp_nvtx_range_kind_name,
};

static int (*const enum_parse[6])(const char *, size_t) = {
	xp_source_parse,     xp_event_type_parse,   xp_clock_domain_parse,
	xp_probe_kind_parse, xp_memcpy_kind_parse, xp_nvtx_range_kind_parse,
};

/* An enum string whose first byte is at *pp (after the opening quote):
 * the two spellings met last (entries and exits alternate) first, then the
 * model's parser. */
static ALWAYS_INLINE bool scan_enum(struct xp_fast_hints *h, int k, const char **pp, uint8_t *out)
{
	const char *p = *pp;
	struct xp_fast_str s;
	const char *nm;
	int v;

	for (int i = 0; i < 2; i++) {
		size_t n = h->len[k][i];

		nm = h->name[k][i];
		if (nm && eqn(p, nm, n) && p[n] == '"') {
			*out = h->val[k][i];
			*pp = p + n + 1;
			return true;
		}
	}
	if (!scan_str(&p, &s) || s.esc)
		return false;
	v = enum_parse[k](s.p, s.n);
	if (v < 0 || v > 255)
		return false;
	nm = enum_name[k]((unsigned)v);
	h->name[k][1] = h->name[k][0];
	h->len[k][1] = h->len[k][0];
	h->val[k][1] = h->val[k][0];
	h->name[k][0] = nm;
	h->len[k][0] = (uint8_t)strlen(nm);
	h->val[k][0] = (uint8_t)v;
	*out = (uint8_t)v;
	*pp = p;
	return true;
}

#define ENUM(k, out)                             \
	do {                                     \
		if (!scan_enum(h, (k), &p, &(out))) \
			return 0;                \
	} while (0)

#define STR(s)                          \
	do {                            \
		if (!scan_str(&p, &(s))) \
			return 0;       \
	} while (0)

#define OPT_STR(s)                          \
	do {                                \
		if (!scan_opt_str(&p, &(s))) \
			return 0;           \
	} while (0)

/* ---------------------------------------------------------------------- */
/* The parts of an Event                                                   */

static ALWAYS_INLINE bool scan_dim3(const char **pp, struct xp_dim3 *d)
{
	const char *p = *pp;

#define LIT_B(s)                                 \
	do {                                     \
		if (!eqn(p, s, sizeof(s) - 1))   \
			return false;            \
		p += sizeof(s) - 1;              \
	} while (0)
	LIT_B("{\"x\":");
	if (!parse_u32(&p, &d->x))
		return false;
	LIT_B(",\"y\":");
	if (!parse_u32(&p, &d->y))
		return false;
	LIT_B(",\"z\":");
	if (!parse_u32(&p, &d->z))
		return false;
	LIT_B("}");
#undef LIT_B
	*pp = p;
	return true;
}

/* "arguments":[...] after the '[' */
static size_t scan_args(const char **pp, struct xp_fast_event *out)
{
	const char *p = *pp;
	unsigned n = 0;

	if (*p == ']') {
		*pp = p + 1;
		return 1;
	}
	for (;;) {
		struct xp_fast_arg *a = &out->pt.args[n];
		uint64_t idx;
		const char *v;

		if (n == XP_FAST_MAX_ARGS)
			return 0;
		LIT("{\"index\":");
		if (!parse_u64(&p, &idx) || idx > UINT16_MAX)
			return 0;
		a->index = (uint16_t)idx;
		LIT(",\"abi_type\":\"");
		STR(a->abi_type);
		LIT(",\"value\":");
		v = p;
		if (is_null(&p)) {
			a->value = NULL;
			a->value_len = 0;
		} else {
			if (!scan_value_fast(&p))
				return 0;
			a->value = v;
			a->value_len = (uint32_t)(p - v);
		}
		LIT(",\"read_error\":");
		OPT_STR(a->read_error);
		LIT("}");
		n++;
		if (*p == ',') {
			p++;
			continue;
		}
		LIT("]");
		break;
	}
	out->pt.nargs = n;
	*pp = p;
	return 1;
}

/* "attributes":{...} after the '{' */
static size_t scan_attrs(const char **pp, struct xp_fast_event *out)
{
	const char *p = *pp;
	unsigned n = 0, i;

	if (*p == '}') {
		*pp = p + 1;
		return 1;
	}
	for (;;) {
		struct xp_fast_attr *a = &out->pt.attrs[n];
		struct xp_fast_str k;
		const char *v;

		if (n == XP_FAST_MAX_ATTRS || *p != '"')
			return 0;
		p++;
		/* no escapes in names: no NUL, and raw bytes compare as values */
		if (!scan_str(&p, &k) || k.esc)
			return 0;
		for (i = 0; i < n; i++)
			if (out->pt.attrs[i].key_len == k.n && memcmp(out->pt.attrs[i].key, k.p, k.n) == 0)
				return 0;
		a->key = k.p;
		a->key_len = k.n;
		if (*p != ':')
			return 0;
		p++;
		v = p;
		if (!scan_value_fast(&p))
			return 0;
		a->value = v;
		a->value_len = (uint32_t)(p - v);
		n++;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '}')
			return 0;
		p++;
		break;
	}
	out->pt.nattrs = n;
	*pp = p;
	return 1;
}

static size_t scan_host(struct xp_fast_hints *h, const char **pp, struct xp_fast_event *out)
{
	struct xp_event *e = &out->ev;
	struct xp_host_part *ho = &e->host;
	const char *p = *pp;

	LIT("{\"probe_kind\":\"");
	ENUM(EN_PROBE_KIND, ho->probe_kind);
	LIT(",\"binary_path\":");
	OPT_STR(out->pt.str[XP_FS_BINARY_PATH]);
	LIT(",\"build_id\":");
	OPT_STR(out->pt.str[XP_FS_BUILD_ID]);
	LIT(",\"symbol\":");
	OPT_STR(out->pt.str[XP_FS_SYMBOL]);
	LIT(",\"symbol_demangled\":");
	OPT_STR(out->pt.str[XP_FS_SYMBOL_DEMANGLED]);
	LIT(",\"offset\":");
	OPT_U64(ho->offset, ho->flags, XP_HOSTF_OFFSET);
	LIT(",\"return_value\":");
	if (!is_null(&p)) {
		if (!parse_i64(&p, &ho->return_value))
			return 0;
		ho->flags |= XP_HOSTF_RETURN_VALUE;
	}
	LIT(",\"arguments\":[");
	if (!scan_args(&p, out))
		return 0;
	LIT("}");
	e->flags |= XP_EVF_HOST;
	*pp = p;
	return 1;
}

static size_t scan_cuda(struct xp_fast_hints *h, const char **pp, struct xp_fast_event *out)
{
	struct xp_event *e = &out->ev;
	struct xp_cuda_part *cu = &e->cuda;
	const char *p = *pp;

	LIT("{\"device_id\":");
	OPT_U32(cu->device_id, cu->flags, XP_CUDAF_DEVICE_ID);
	LIT(",\"context_id\":");
	OPT_U32(cu->context_id, cu->flags, XP_CUDAF_CONTEXT_ID);
	LIT(",\"stream_id\":");
	OPT_U64(cu->stream_id, cu->flags, XP_CUDAF_STREAM_ID);
	LIT(",\"correlation_id\":");
	OPT_U32(cu->correlation_id, cu->flags, XP_CUDAF_CORRELATION_ID);
	LIT(",\"runtime_correlation_id\":");
	OPT_U32(cu->runtime_correlation_id, cu->flags, XP_CUDAF_RUNTIME_CORRELATION_ID);
	LIT(",\"callback_domain\":");
	OPT_U32(cu->callback_domain, cu->flags, XP_CUDAF_CALLBACK_DOMAIN);
	LIT(",\"callback_id\":");
	OPT_U32(cu->callback_id, cu->flags, XP_CUDAF_CALLBACK_ID);
	LIT(",\"kernel_name\":");
	OPT_STR(out->pt.str[XP_FS_KERNEL_NAME]);
	LIT(",\"kernel_name_mangled\":");
	OPT_STR(out->pt.str[XP_FS_KERNEL_NAME_MANGLED]);
	LIT(",\"start_ns\":");
	OPT_U64(cu->start_ns, cu->flags, XP_CUDAF_START_NS);
	LIT(",\"end_ns\":");
	OPT_U64(cu->end_ns, cu->flags, XP_CUDAF_END_NS);
	LIT(",\"grid\":");
	if (!is_null(&p)) {
		if (!scan_dim3(&p, &cu->grid))
			return 0;
		cu->flags |= XP_CUDAF_GRID;
	}
	LIT(",\"block\":");
	if (!is_null(&p)) {
		if (!scan_dim3(&p, &cu->block))
			return 0;
		cu->flags |= XP_CUDAF_BLOCK;
	}
	LIT(",\"bytes\":");
	OPT_U64(cu->bytes, cu->flags, XP_CUDAF_BYTES);
	LIT(",\"memcpy_kind\":");
	if (!is_null(&p)) {
		LIT("\"");
		ENUM(EN_MEMCPY_KIND, cu->memcpy_kind);
		cu->flags |= XP_CUDAF_MEMCPY_KIND;
	}
	LIT("}");
	e->flags |= XP_EVF_CUDA;
	*pp = p;
	return 1;
}

static size_t scan_nvtx(struct xp_fast_hints *h, const char **pp, struct xp_fast_event *out)
{
	struct xp_event *e = &out->ev;
	struct xp_nvtx_part *nv = &e->nvtx;
	const char *p = *pp;

	LIT("{\"name\":\"");
	STR(out->pt.str[XP_FS_NVTX_NAME]);
	LIT(",\"name_complete\":");
	if (ld32(p) == ld32("true")) {
		nv->name_complete = 1;
		p += 4;
	} else {
		LIT("false");
	}
	LIT(",\"range_kind\":\"");
	ENUM(EN_RANGE_KIND, nv->range_kind);
	LIT(",\"range_id\":");
	if (!parse_u64(&p, &nv->range_id))
		return 0;
	LIT(",\"start_tid\":");
	if (!parse_u32(&p, &nv->start_tid))
		return 0;
	LIT("}");
	e->flags |= XP_EVF_NVTX;
	*pp = p;
	return 1;
}

/* ---------------------------------------------------------------------- */
/* Kept tails                                                              */

static ALWAYS_INLINE unsigned tail_set(unsigned type, uint32_t tid)
{
	return ((tid * 0x9e3779b1u) ^ (type * 0x85ebca6bu)) >> (32 - 4);
}

_Static_assert(XP_FAST_TAIL_SETS == 16, "tail_set() makes 4 bits");

/* A window of lookups, and how long to pause when it found little. */
#define TAIL_WINDOW 1024
#define TAIL_PAUSE 8192

void xp_fast_state_init(struct xp_fast_state *st)
{
	memset(st, 0, sizeof(*st));
	st->cgen = 1;
	for (unsigned i = 0; i < XP_FAST_TAIL_SETS; i++)
		for (unsigned w = 0; w < XP_FAST_TAIL_WAYS; w++)
			st->set[i][w] = &st->pool[i * XP_FAST_TAIL_WAYS + w];
}

void xp_fast_state_uncommit(struct xp_fast_state *st)
{
	if (++st->cgen == 0)
		st->cgen = 1;
}

/*
 * The kept tail that the line at @p ends with (its bytes, then the '\n'),
 * moved to the front of its set.  A kept tail holds no '\n', so a compare
 * that runs into the next line fails there; @avail bytes (the segment's
 * rest) bound it.
 */
static struct xp_fast_tail *find_tail(struct xp_fast_tail **set, const char *p, size_t avail)
{
	for (unsigned w = 0; w < XP_FAST_TAIL_WAYS; w++) {
		struct xp_fast_tail *t = set[w];

		if (t->len && t->len < avail && p[t->len] == '\n' &&
		    memcmp(t->text, p, t->len) == 0) {
			for (; w; w--)
				set[w] = set[w - 1];
			set[0] = t;
			return t;
		}
	}
	return NULL;
}

/* Keep the tail just read (its @n bytes at @p) in place of the least
 * recently used of its set. */
static struct xp_fast_tail *keep_tail(struct xp_fast_tail **set, const char *p, size_t n,
				      struct xp_fast_event *out)
{
	struct xp_fast_tail *t = set[XP_FAST_TAIL_WAYS - 1];
	const struct xp_event *e = &out->ev;
	ptrdiff_t d;
	unsigned i;

	for (i = XP_FAST_TAIL_WAYS - 1; i; i--)
		set[i] = set[i - 1];
	set[0] = t;
	t->len = (uint32_t)n;
	memcpy(t->text, p, n);
	t->flags = e->flags & (XP_EVF_HOST | XP_EVF_CUDA | XP_EVF_NVTX);
	t->host = e->host;
	t->cuda = e->cuda;
	t->nvtx = e->nvtx;
	t->committed = false;
	/* the spans, moved from the line into the copy */
	d = t->text - p;
	t->pt.nargs = out->pt.nargs;
	t->pt.nattrs = out->pt.nattrs;
	/* Only the strings the flags say were read point into the line; the
	 * others hold whatever an earlier line left and are cleared, never
	 * moved (moving a stray pointer is undefined). */
	for (i = 0; i < XP_FS__COUNT; i++) {
		const struct xp_fast_str *s = &out->pt.str[i];
		uintptr_t sp = (uintptr_t)s->p, lp = (uintptr_t)p;

		if (s->p && sp >= lp && sp - lp <= n) {
			t->pt.str[i] = *s;
			t->pt.str[i].p = t->text + (sp - lp);
		} else {
			memset(&t->pt.str[i], 0, sizeof(t->pt.str[i]));
		}
	}
	for (i = 0; i < out->pt.nargs; i++) {
		struct xp_fast_arg *a = &t->pt.args[i];

		*a = out->pt.args[i];
		a->abi_type.p += d;
		if (a->read_error.p)
			a->read_error.p += d;
		if (a->value)
			a->value += d;
	}
	for (i = 0; i < out->pt.nattrs; i++) {
		t->pt.attrs[i] = out->pt.attrs[i];
		t->pt.attrs[i].key += d;
		t->pt.attrs[i].value += d;
	}
	return t;
}

/* ---------------------------------------------------------------------- */
/* Head stretches                                                          */

/*
 * The bytes [0, @n) at @p equal @s (n >= 16), compared sixteen at a time
 * from the start: a stretch holds no '\n' or NUL, so the compare fails at
 * the line's end at the latest and reads at most 16 bytes past it.
 */
static ALWAYS_INLINE bool stretch_eq(const char *p, const struct xp_fast_stretch *s)
{
	size_t n = s->len, i;

	if (!n)
		return false;
#if defined(__SSE2__)
	for (i = 0; i + 16 <= n; i += 16)
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(
			    _mm_loadu_si128((const __m128i *)(const void *)(p + i)),
			    _mm_loadu_si128((const __m128i *)(const void *)(s->text + i)))) != 0xffff)
			return false;
	return i == n ||
	       _mm_movemask_epi8(_mm_cmpeq_epi8(
		       _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16)),
		       _mm_loadu_si128((const __m128i *)(const void *)(s->text + n - 16)))) ==
		       0xffff;
#else
	for (i = 0; i + 8 <= n; i += 8)
		if (ld64(p + i) != ld64(s->text + i))
			return false;
	return i == n || ld64(p + n - 8) == ld64(s->text + n - 8);
#endif
}

/* Keep the @n bytes at @p (what was just read, and the ',' after it when
 * it ends with a value) as stretch @s. */
static ALWAYS_INLINE void keep_stretch(struct xp_fast_stretch *s, const char *p, size_t n)
{
	if (n < 16 || n > XP_FAST_STRETCH_MAX || (p[n - 1] != ',' && p[n - 1] != '"')) {
		s->len = 0;
		return;
	}
	memcpy(s->text, p, n);
	s->len = (uint16_t)n;
}

/* ---------------------------------------------------------------------- */
/* A line                                                                  */

size_t xp_fast_scan(struct xp_fast_state *st, const char *p, const char *end,
		    struct xp_fast_event *out)
{
	struct xp_fast_hints *h = &st->hints;
	struct xp_fast_tail **set = NULL;
	const char *start = p, *tail = NULL;
	struct xp_event *e = &out->ev;
	struct xp_fast_str ignored;
	size_t tail_len = 0, raw_n;
	const char *raw;
	const struct xp_fast_stretch *mid;

	memset(e, 0, sizeof(*e));
	out->tail = NULL;
	out->pt.nargs = 0;
	out->pt.nattrs = 0;

	/*
	 * The head's stretches that repeat from line to line are compared
	 * with the last ones read, their bytes and the one after them (what
	 * ends a number): the session, then source, event type and pid (two
	 * kept: entries and exits alternate), then the clock domain, the
	 * timestamp error and the start time.
	 */
	if (stretch_eq(p, &st->lead)) {
		p += st->lead.len;
	} else {
		const char *s0 = p;

		LIT("{\"schema_version\":\"2.0\",\"session_id\":\"");
		STR(ignored); /* checked, then dropped */
		LIT(",\"event_id\":\"");
		keep_stretch(&st->lead, s0, (size_t)(p - s0));
	}
	STR(ignored);
	LIT(",\"sequence\":");
	if (!parse_u64(&p, &e->sequence))
		return 0;
	mid = stretch_eq(p, &st->mid[0]) ? &st->mid[0] :
	      stretch_eq(p, &st->mid[1]) ? &st->mid[1] :
					   NULL;
	if (mid) {
		const struct xp_fast_stretch *m = mid;

		e->source = m->a;
		e->event_type = m->b;
		e->pid = m->u32;
		p += m->len - 1;
	} else {
		const char *s0 = p;
		struct xp_fast_stretch *m;

		LIT(",\"source\":\"");
		ENUM(EN_SOURCE, e->source);
		LIT(",\"event_type\":\"");
		ENUM(EN_EVENT_TYPE, e->event_type);
		LIT(",\"pid\":");
		if (!parse_u32(&p, &e->pid))
			return 0;
		m = &st->mid[st->mid_next];
		st->mid_next ^= 1;
		keep_stretch(m, s0, (size_t)(p + 1 - s0));
		m->a = e->source;
		m->b = e->event_type;
		m->u32 = e->pid;
	}
	LIT(",\"tid\":");
	if (!parse_u32(&p, &e->tid))
		return 0;
	LIT(",\"cpu\":");
	OPT_U32(e->cpu, e->flags, XP_EVF_CPU);
	LIT(",\"timestamp_raw\":");
	raw = p;
	if (!parse_u64(&p, &e->timestamp_raw))
		return 0;
	raw_n = (size_t)(p - raw);
	LIT(",\"timestamp_ns\":");
	/* producers write the same number twice: the same digits, the same
	 * value (and then a non-digit) */
	if (eqn(p, raw, raw_n) && (unsigned char)(p[raw_n] - '0') >= 10) {
		e->timestamp_ns = e->timestamp_raw;
		p += raw_n;
	} else if (!parse_u64(&p, &e->timestamp_ns)) {
		return 0;
	}
	if (stretch_eq(p, &st->clock)) {
		e->clock_domain = st->clock.a;
		e->flags |= st->clock.flags;
		e->timestamp_error_ns = st->clock.u64[0];
		e->process_start_time = st->clock.u64[1];
		p += st->clock.len - 1;
	} else {
		const char *s0 = p;
		unsigned f = e->flags;

		LIT(",\"clock_domain\":\"");
		ENUM(EN_CLOCK, e->clock_domain);
		LIT(",\"timestamp_error_ns\":");
		OPT_U64(e->timestamp_error_ns, e->flags, XP_EVF_TS_ERROR);
		LIT(",\"process_start_time\":");
		OPT_U64(e->process_start_time, e->flags, XP_EVF_START_TIME);
		keep_stretch(&st->clock, s0, (size_t)(p + 1 - s0));
		st->clock.a = e->clock_domain;
		st->clock.flags = (uint8_t)(e->flags & ~f);
		st->clock.u64[0] = e->timestamp_error_ns;
		st->clock.u64[1] = e->process_start_time;
	}

	/* the rest of the line: one kept before? */
	if (st->pause) {
		st->pause--;
	} else {
		struct xp_fast_tail *t;

		tail = p;
		set = st->set[tail_set(e->event_type, e->tid)];
		t = find_tail(set, p, (size_t)(end - p));
		if (++st->lookups == TAIL_WINDOW) {
			if (st->hits < TAIL_WINDOW / 8)
				st->pause = TAIL_PAUSE;
			st->lookups = st->hits = 0;
		}
		if (t) {
			st->hits++;
			e->flags |= t->flags;
			e->host = t->host;
			e->cuda = t->cuda;
			e->nvtx = t->nvtx;
			out->tail = t;
			return (size_t)(p + t->len + 1 - start);
		}
	}
	LIT(",\"host\":");
	if (!is_null(&p) && !scan_host(h, &p, out))
		return 0;
	LIT(",\"cuda\":");
	if (!is_null(&p) && !scan_cuda(h, &p, out))
		return 0;
	LIT(",\"nvtx\":");
	if (!is_null(&p) && !scan_nvtx(h, &p, out))
		return 0;
	LIT(",\"attributes\":{");
	if (!scan_attrs(&p, out))
		return 0;
	LIT("}");
	if (p >= end || *p != '\n')
		return 0;
	tail_len = (size_t)(p - tail);
	if (set && tail_len <= XP_FAST_TAIL_MAX)
		out->tail = keep_tail(set, tail, tail_len, out);
	return (size_t)(p + 1 - start);
}
