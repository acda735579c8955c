/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.c - growable byte buffer.  Doubling growth; see buf.h for the
 * NUL-termination and sticky-failure invariants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int xpc_buf_reserve(struct xpc_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return -1;
	if (extra > (size_t)-1 / 2 - b->len)
		goto fail;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		goto fail;
	b->data = p;
	b->cap = cap;
	return 0;
fail:
	b->failed = true;
	return -1;
}

void xpc_buf_append_slow(struct xpc_buf *b, const void *p, size_t n)
{
	if (xpc_buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void xpc_buf_puts(struct xpc_buf *b, const char *s)
{
	xpc_buf_append(b, s, strlen(s));
}

void xpc_buf_vprintf(struct xpc_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if (xpc_buf_reserve(b, (size_t)n))
		return;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void xpc_buf_printf(struct xpc_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xpc_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void xpc_buf_reset(struct xpc_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void xpc_buf_free(struct xpc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}

char *xpc_buf_steal(struct xpc_buf *b)
{
	char *p;

	if (b->failed) {
		xpc_buf_free(b);
		return NULL;
	}
	if (!b->data)
		return strdup("");
	p = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
