/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c - streaming JSON writer, escaper and shortest float formatting.
 * Layout rules are in json.h.  The writer never allocates per value: it
 * appends to one buffer that is flushed to the fd sink in 1 MiB steps.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "parse.h"

void xpc_json_init_buf(struct xpc_json *w, struct xpc_buf *out, unsigned flags)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->fd = -1;
	w->flags = flags;
	w->first[0] = true;
}

void xpc_json_init_fd(struct xpc_json *w, int fd, unsigned flags)
{
	memset(w, 0, sizeof(*w));
	w->out = &w->own;
	w->fd = fd;
	w->flags = flags;
	w->first[0] = true;
}

static void flush_sink(struct xpc_json *w)
{
	size_t off = 0;

	if (w->fd < 0 || w->err)
		return;
	while (off < w->out->len) {
		ssize_t n = write(w->fd, w->out->data + off, w->out->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->err = -errno;
			return;
		}
		off += (size_t)n;
	}
	xpc_buf_reset(w->out);
}

static void maybe_flush(struct xpc_json *w)
{
	if (w->fd >= 0 && w->out->len >= XPC_JSON_FLUSH_AT)
		flush_sink(w);
}

int xpc_json_finish(struct xpc_json *w)
{
	if (!w->err && w->out->failed)
		w->err = -ENOMEM;
	if (!w->err && w->depth != 0)
		w->err = -EINVAL;
	if (w->fd >= 0)
		flush_sink(w);
	xpc_buf_free(&w->own);
	return w->err;
}

/* A newline and two spaces a level, for every depth the writer allows. */
static const char newline_indent[] = "\n"
	"                                                                "
	"                                                                ";
_Static_assert(sizeof(newline_indent) - 2 >= 2 * XPC_JSON_MAX_DEPTH, "indent covers every depth");

static void indent(struct xpc_json *w)
{
	xpc_buf_append(w->out, newline_indent, 1 + 2 * (size_t)w->depth);
}

/* Punctuation before a value or a key at the current depth. */
static void element_prefix(struct xpc_json *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		xpc_buf_putc(w->out, ',');
	w->first[w->depth] = false;
	if ((w->flags & XPC_JSON_PRETTY) && w->depth > 0)
		indent(w);
}

static void open_container(struct xpc_json *w, char c)
{
	element_prefix(w);
	xpc_buf_putc(w->out, c);
	if (w->depth >= XPC_JSON_MAX_DEPTH) {
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	w->depth++;
	w->first[w->depth] = true;
}

static void close_container(struct xpc_json *w, char c)
{
	bool empty;

	if (w->depth == 0) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	empty = w->first[w->depth];
	w->depth--;
	if ((w->flags & XPC_JSON_PRETTY) && !empty)
		indent(w);
	xpc_buf_putc(w->out, c);
	/* Flush inside documents too, so one large document (a Chrome trace
	 * of a million events) streams in bounded memory. */
	maybe_flush(w);
}

void xpc_json_line_end(struct xpc_json *w)
{
	if (w->depth != 0) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	xpc_buf_putc(w->out, '\n');
	w->first[0] = true;
	maybe_flush(w);
}

void xpc_json_obj_begin(struct xpc_json *w)
{
	open_container(w, '{');
}

void xpc_json_obj_end(struct xpc_json *w)
{
	close_container(w, '}');
}

void xpc_json_arr_begin(struct xpc_json *w)
{
	open_container(w, '[');
}

void xpc_json_arr_end(struct xpc_json *w)
{
	close_container(w, ']');
}

/*
 * Decode one UTF-8 sequence at s[0..n).  Returns its length, or 0 when the
 * bytes are not a valid, shortest-form encoding of a scalar value.
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	return len;
}

/* Whether the 8 bytes of @x are all printable ASCII other than '"' and
 * '\\' (each test is the "has a byte below/equal" trick: exact, no false
 * negatives; a word it refuses goes through the byte loop). */
static inline bool word_plain(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
	uint64_t bad = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | x;

	return !(bad & highs);
}

void xpc_json_escape(struct xpc_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c;
		size_t l;
		uint64_t x;

		if (i + 8 <= n) {
			memcpy(&x, s + i, 8);
			if (word_plain(x)) {
				i += 8;
				run += 8;
				continue;
			}
		}
		c = s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			run++;
			continue;
		}
		if (c >= 0x80) {
			l = utf8_len(s + i, n - i);
			if (l) {
				i += l;
				run += l;
				continue;
			}
		}
		if (run)
			xpc_buf_append(b, s + i - run, run);
		run = 0;
		switch (c) {
		case '"': xpc_buf_append(b, "\\\"", 2); break;
		case '\\': xpc_buf_append(b, "\\\\", 2); break;
		case '\b': xpc_buf_append(b, "\\b", 2); break;
		case '\f': xpc_buf_append(b, "\\f", 2); break;
		case '\n': xpc_buf_append(b, "\\n", 2); break;
		case '\r': xpc_buf_append(b, "\\r", 2); break;
		case '\t': xpc_buf_append(b, "\\t", 2); break;
		default:
			if (c < 0x20)
				xpc_buf_printf(b, "\\u%04x", c);
			else /* invalid UTF-8 byte */
				xpc_buf_append(b, "\xef\xbf\xbd", 3);
		}
		i++;
	}
	if (run)
		xpc_buf_append(b, s + n - run, run);
}

static void put_string(struct xpc_json *w, const char *s, size_t n)
{
	xpc_buf_putc(w->out, '"');
	xpc_json_escape(w->out, s, n);
	xpc_buf_putc(w->out, '"');
}

void xpc_json_key(struct xpc_json *w, const char *key)
{
	element_prefix(w);
	put_string(w, key, strlen(key));
	if (w->flags & XPC_JSON_PRETTY)
		xpc_buf_append(w->out, ": ", 2);
	else
		xpc_buf_putc(w->out, ':');
	w->after_key = true;
}

void xpc_json_strn(struct xpc_json *w, const char *s, size_t n)
{
	element_prefix(w);
	put_string(w, s, n);
}

void xpc_json_str(struct xpc_json *w, const char *s)
{
	if (!s) {
		xpc_json_null(w);
		return;
	}
	xpc_json_strn(w, s, strlen(s));
}

/* @v in decimal, ending at @end (a buffer of 20 bytes before it); returns
 * where the digits start.  printf's cost shows in a document of a million
 * events. */
static char *u64_digits(uint64_t v, char *end)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

void xpc_json_u64(struct xpc_json *w, uint64_t v)
{
	char tmp[24], *p = u64_digits(v, tmp + sizeof(tmp));

	element_prefix(w);
	xpc_buf_append(w->out, p, (size_t)(tmp + sizeof(tmp) - p));
}

void xpc_json_i64(struct xpc_json *w, int64_t v)
{
	char tmp[24], *p;

	/* the magnitude as unsigned: INT64_MIN has no positive twin */
	p = u64_digits(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, tmp + sizeof(tmp));
	if (v < 0)
		*--p = '-';
	element_prefix(w);
	xpc_buf_append(w->out, p, (size_t)(tmp + sizeof(tmp) - p));
}

int xpc_fmt_f64(double v, char *buf, size_t size)
{
	char digits[40], *e, *dot;
	int prec, exp10, n, ndig, i, pos;
	char mant[24];
	bool neg;

	if (!isfinite(v))
		return snprintf(buf, size, "null");
	if (v == 0)
		return snprintf(buf, size, signbit(v) ? "-0.0" : "0.0");
	/* Shortest precision that round-trips. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(digits, sizeof(digits), "%.*e", prec - 1, v);
		if (strtod(digits, NULL) == v)
			break;
	}
	/* digits = [-]d[.ddd]e[+-]xx ; split mantissa digits and exponent */
	neg = digits[0] == '-';
	e = strchr(digits, 'e');
	{
		int64_t x = 0;

		/* "%e" always prints a sign and at least two digits */
		xpc_parse_i64(e[1] == '+' ? e + 2 : e + 1, -400, 400, &x);
		exp10 = (int)x;
	}
	*e = '\0';
	ndig = 0;
	for (i = neg ? 1 : 0; digits[i]; i++)
		if (digits[i] != '.')
			mant[ndig++] = digits[i];
	while (ndig > 1 && mant[ndig - 1] == '0')
		ndig--;
	mant[ndig] = '\0';
	(void)dot;
	pos = 0;
	if (exp10 < -5 || exp10 >= 16) {
		/* d.ddde[-]x, ryu style: 1e16, 1.5e-7 */
		n = snprintf(buf, size, "%s%c%s%s%se%d", neg ? "-" : "", mant[0],
			     ndig > 1 ? "." : "", ndig > 1 ? mant + 1 : "", "", exp10);
		return n;
	}
	if (neg)
		buf[pos++] = '-';
	if (exp10 < 0) {
		buf[pos++] = '0';
		buf[pos++] = '.';
		for (i = -1; i > exp10; i--)
			buf[pos++] = '0';
		memcpy(buf + pos, mant, (size_t)ndig);
		pos += ndig;
	} else if (ndig <= exp10 + 1) {
		memcpy(buf + pos, mant, (size_t)ndig);
		pos += ndig;
		for (i = ndig; i <= exp10; i++)
			buf[pos++] = '0';
		buf[pos++] = '.';
		buf[pos++] = '0';
	} else {
		memcpy(buf + pos, mant, (size_t)exp10 + 1);
		pos += exp10 + 1;
		buf[pos++] = '.';
		memcpy(buf + pos, mant + exp10 + 1, (size_t)(ndig - exp10 - 1));
		pos += ndig - exp10 - 1;
	}
	buf[pos] = '\0';
	(void)size;
	return pos;
}

void xpc_json_f64(struct xpc_json *w, double v)
{
	char tmp[48];
	int n = xpc_fmt_f64(v, tmp, sizeof(tmp));

	element_prefix(w);
	xpc_buf_append(w->out, tmp, (size_t)n);
}

void xpc_json_bool(struct xpc_json *w, bool v)
{
	element_prefix(w);
	if (v)
		xpc_buf_append(w->out, "true", 4);
	else
		xpc_buf_append(w->out, "false", 5);
}

void xpc_json_null(struct xpc_json *w)
{
	element_prefix(w);
	xpc_buf_append(w->out, "null", 4);
}

/* Length of the JSON string token starting at s[0] == '"', quotes included. */
static size_t string_token_len(const char *s)
{
	size_t i = 1;

	while (s[i] && s[i] != '"') {
		if (s[i] == '\\' && s[i + 1])
			i++;
		i++;
	}
	return s[i] ? i + 1 : i;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

/* Re-emit trusted JSON text through the writer so it gets the layout. */
static void raw_relayout(struct xpc_json *w, const char *s)
{
	while (*(s = skip_ws(s))) {
		size_t n;

		switch (*s) {
		case '{': xpc_json_obj_begin(w); s++; break;
		case '}': xpc_json_obj_end(w); s++; break;
		case '[': xpc_json_arr_begin(w); s++; break;
		case ']': xpc_json_arr_end(w); s++; break;
		case ',': s++; break;
		case ':': s++; break;
		case '"':
			n = string_token_len(s);
			if (*skip_ws(s + n) == ':') {
				element_prefix(w);
				xpc_buf_append(w->out, s, n);
				if (w->flags & XPC_JSON_PRETTY)
					xpc_buf_append(w->out, ": ", 2);
				else
					xpc_buf_putc(w->out, ':');
				w->after_key = true;
			} else {
				element_prefix(w);
				xpc_buf_append(w->out, s, n);
			}
			s += n;
			break;
		default:
			n = strcspn(s, ",]} \n\t\r:");
			if (n == 0) { /* stray byte: never produced by us */
				w->err = w->err ? w->err : -EINVAL;
				return;
			}
			element_prefix(w);
			xpc_buf_append(w->out, s, n);
			s += n;
		}
	}
}

void xpc_json_raw(struct xpc_json *w, const char *text)
{
	if (!text) {
		xpc_json_null(w);
		return;
	}
	if (!(w->flags & XPC_JSON_PRETTY) && text[0] != '{' && text[0] != '[') {
		element_prefix(w);
		xpc_buf_puts(w->out, text);
		return;
	}
	raw_relayout(w, text);
}

void xpc_json_kstr(struct xpc_json *w, const char *k, const char *s)
{
	xpc_json_key(w, k);
	xpc_json_str(w, s);
}

void xpc_json_ku64(struct xpc_json *w, const char *k, uint64_t v)
{
	xpc_json_key(w, k);
	xpc_json_u64(w, v);
}

void xpc_json_ki64(struct xpc_json *w, const char *k, int64_t v)
{
	xpc_json_key(w, k);
	xpc_json_i64(w, v);
}

void xpc_json_kf64(struct xpc_json *w, const char *k, double v)
{
	xpc_json_key(w, k);
	xpc_json_f64(w, v);
}

void xpc_json_kbool(struct xpc_json *w, const char *k, bool v)
{
	xpc_json_key(w, k);
	xpc_json_bool(w, v);
}

void xpc_json_knull(struct xpc_json *w, const char *k)
{
	xpc_json_key(w, k);
	xpc_json_null(w);
}

void xpc_json_kraw(struct xpc_json *w, const char *k, const char *text)
{
	xpc_json_key(w, k);
	xpc_json_raw(w, text);
}

void xpc_json_kopt_u64(struct xpc_json *w, const char *k, bool has, uint64_t v)
{
	xpc_json_key(w, k);
	if (has)
		xpc_json_u64(w, v);
	else
		xpc_json_null(w);
}

void xpc_json_kopt_i64(struct xpc_json *w, const char *k, bool has, int64_t v)
{
	xpc_json_key(w, k);
	if (has)
		xpc_json_i64(w, v);
	else
		xpc_json_null(w);
}

void xpc_json_kobj_begin(struct xpc_json *w, const char *k)
{
	xpc_json_key(w, k);
	xpc_json_obj_begin(w);
}

void xpc_json_karr_begin(struct xpc_json *w, const char *k)
{
	xpc_json_key(w, k);
	xpc_json_arr_begin(w);
}
