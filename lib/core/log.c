/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c - libxprobe's one way to say things: a leveled log callback (after
 * libbpf_set_print) and the per-thread text of the last error (after curl's
 * error buffer), plus the sz-versioned options check.
 *
 * The default callback writes "libxprobe: <level>: <msg>\n" to fd 2 with
 * one write(2), so it is usable from the fatal-signal stop path; messages
 * above the threshold (default WARN, XPROBE_LOG_LEVEL at load) are not
 * formatted at all.  The callback pointer and threshold are atomics: a
 * message racing with xprobe_set_log_fn goes to the old or the new
 * callback, never to a torn one (the pair is published callback first).
 *
 * Not here: the formatting of error documents (the CLI owns those).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static void default_log(enum xprobe_log_level level, const char *msg, void *ctx);

static _Atomic(xprobe_log_fn) log_fn = default_log;
static void *_Atomic log_ctx;
static _Atomic int log_threshold = XPROBE_LOG_WARN;

/* The last error of this thread: what xprobe_last_error() returns. */
static __thread char last_error[512];

static const char *level_name(enum xprobe_log_level level)
{
	switch (level) {
	case XPROBE_LOG_NONE:
		return "none";
	case XPROBE_LOG_WARN:
		return "warning";
	case XPROBE_LOG_INFO:
		return "info";
	case XPROBE_LOG_DEBUG:
		return "debug";
	}
	return "?";
}

static void default_log(enum xprobe_log_level level, const char *msg, void *ctx)
{
	char line[1024];
	size_t n;

	(void)ctx;
	n = xpl_sfmt(line, sizeof(line) - 1, "libxprobe: %s: %s", level_name(level), msg);
	line[n++] = '\n';
	(void)xpl_write_all(2, line, n);
}

XPROBE_API xprobe_log_fn xprobe_set_log_fn(xprobe_log_fn fn, void *ctx)
{
	atomic_store(&log_ctx, ctx);
	return atomic_exchange(&log_fn, fn);
}

XPROBE_API int xprobe_set_log_level(int level)
{
	if (level < XPROBE_LOG_NONE || level > XPROBE_LOG_DEBUG)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"log level %d is not one of 0 (none) .. 3 (debug)", level);
	atomic_store(&log_threshold, level);
	return 0;
}

/* XPROBE_LOG_LEVEL=none|warn|info|debug, read once when the library loads
 * (a constructor with a lower priority than the session's env activation,
 * so activation messages already obey it). */
__attribute__((constructor(101))) static void log_level_from_env(void)
{
	const char *v = secure_getenv("XPROBE_LOG_LEVEL");

	if (!v)
		return;
	if (!strcmp(v, "none"))
		atomic_store(&log_threshold, XPROBE_LOG_NONE);
	else if (!strcmp(v, "warn"))
		atomic_store(&log_threshold, XPROBE_LOG_WARN);
	else if (!strcmp(v, "info"))
		atomic_store(&log_threshold, XPROBE_LOG_INFO);
	else if (!strcmp(v, "debug"))
		atomic_store(&log_threshold, XPROBE_LOG_DEBUG);
	else
		xpl_log(XPROBE_LOG_WARN,
			"XPROBE_LOG_LEVEL=%s is not none|warn|info|debug; kept warn", v);
}

void xpl_log(enum xprobe_log_level level, const char *fmt, ...)
{
	xprobe_log_fn fn = atomic_load(&log_fn);
	char msg[768];
	va_list ap;

	if (!fn || (int)level > atomic_load(&log_threshold) || level == XPROBE_LOG_NONE)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(level, msg, atomic_load(&log_ctx));
}

void xpl_log_signal_safe(enum xprobe_log_level level, const char *msg)
{
	xprobe_log_fn fn = atomic_load(&log_fn);

	if (!fn || (int)level > atomic_load(&log_threshold) || level == XPROBE_LOG_NONE)
		return;
	fn(level, msg, atomic_load(&log_ctx));
}

int xpl_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	xpl_log(XPROBE_LOG_DEBUG, "%s", last_error);
	errno = err < 0 ? -err : err;
	return err;
}

void xpl_clear_error(void)
{
	last_error[0] = '\0';
}

XPROBE_API const char *xprobe_last_error(void)
{
	return last_error;
}

XPROBE_API const char *xprobe_version(void)
{
	return "0.1.0";
}

bool xpl_opts_valid(const void *opts, size_t known_size)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t))
		return false;
	for (i = known_size; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Async-signal-safe formatter: %s, %d, %u, %lu, %llu, %x (no width, no
 * precision).  Always NUL-terminates; returns the length written.
 */
size_t xpl_sfmt(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;

	if (!size)
		return 0;
#define PUTC(c)                         \
	do {                            \
		if (n + 1 < size)       \
			buf[n++] = (c); \
	} while (0)
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		char tmp[24];
		unsigned long long u;
		int neg = 0, base = 10, len = 0;

		if (*f != '%') {
			PUTC(*f);
			continue;
		}
		f++;
		switch (*f) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			while (*s)
				PUTC(*s++);
			continue;
		}
		case 'd': {
			long long v = va_arg(ap, int);

			neg = v < 0;
			u = neg ? (unsigned long long)(-v) : (unsigned long long)v;
			break;
		}
		case 'u':
			u = va_arg(ap, unsigned int);
			break;
		case 'x':
			u = va_arg(ap, unsigned int);
			base = 16;
			break;
		case 'l':
			if (f[1] == 'l' && f[2] == 'u') {
				f += 2;
				u = va_arg(ap, unsigned long long);
			} else if (f[1] == 'u') {
				f += 1;
				u = va_arg(ap, unsigned long);
			} else {
				PUTC('?');
				continue;
			}
			break;
		case '%':
			PUTC('%');
			continue;
		default:
			PUTC('?');
			if (!*f)
				f--;
			continue;
		}
		do {
			tmp[len++] = "0123456789abcdef"[u % base];
			u /= base;
		} while (u && len < (int)sizeof(tmp));
		if (neg)
			PUTC('-');
		while (len)
			PUTC(tmp[--len]);
	}
	va_end(ap);
#undef PUTC
	buf[n] = '\0';
	return n;
}
