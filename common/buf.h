/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.h - a growable byte buffer (xpc_buf), the one string builder of the
 * project.  Shared by libxprobe and the CLI; no library state.
 *
 * Invariant: data[len] == '\0' whenever data != NULL, so the content is
 * always a C string as well.  An allocation failure sets `failed` and turns
 * every later append into a no-op; callers check it once at the end
 * (xpc_buf_ok) instead of after every append.
 */
#ifndef XPC_BUF_H
#define XPC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct xpc_buf {
	char *data;  /* NUL-terminated content, or NULL before the first append */
	size_t len;  /* bytes used, not counting the NUL */
	size_t cap;  /* bytes allocated */
	bool failed; /* an allocation failed; content is truncated */
};

#define XPC_BUF_INIT { NULL, 0, 0, false }

int xpc_buf_reserve(struct xpc_buf *b, size_t extra);
/* The out-of-line part of xpc_buf_append/_putc: grows the buffer. */
void xpc_buf_append_slow(struct xpc_buf *b, const void *p, size_t n);

/* Inline: the JSON writer appends a few bytes at a time, millions of times
 * for a large document; only growth leaves the caller. */
static inline void xpc_buf_append(struct xpc_buf *b, const void *p, size_t n)
{
	if (b->len + n < b->cap && !b->failed) {
		__builtin_memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return;
	}
	xpc_buf_append_slow(b, p, n);
}

static inline void xpc_buf_putc(struct xpc_buf *b, char c)
{
	if (b->len + 1 < b->cap && !b->failed) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return;
	}
	xpc_buf_append_slow(b, &c, 1);
}

void xpc_buf_puts(struct xpc_buf *b, const char *s);
void xpc_buf_printf(struct xpc_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xpc_buf_vprintf(struct xpc_buf *b, const char *fmt, va_list ap);
void xpc_buf_reset(struct xpc_buf *b); /* len = 0, keeps memory */
void xpc_buf_free(struct xpc_buf *b);
/* Hand the content to the caller (malloc'ed, never NULL unless failed). */
char *xpc_buf_steal(struct xpc_buf *b);

static inline bool xpc_buf_ok(const struct xpc_buf *b)
{
	return !b->failed;
}

static inline const char *xpc_buf_str(const struct xpc_buf *b)
{
	return b->data ? b->data : "";
}

#endif /* XPC_BUF_H */
