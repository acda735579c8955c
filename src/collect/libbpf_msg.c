/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libbpf_msg.c - libbpf's messages captured into one buffer instead of
 * stderr, and the details of a failed libbpf step; see libbpf_msg.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "libbpf_msg.h"

static char last_msg[512];

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[sizeof(last_msg)];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	/* an empty line (libbpf ends some reports with one) keeps the last
	 * message that said something */
	if (n)
		memcpy(last_msg, buf, n + 1);
	return 0;
}

void xp_libbpf_capture(void)
{
	last_msg[0] = '\0';
	libbpf_set_print(capture_print);
}

const char *xp_libbpf_message(void)
{
	return last_msg;
}

int xp_libbpf_fail_details(struct xp_error *err, int e, char *why, size_t size)
{
	if (e < 0)
		e = -e;
	if (!e)
		e = EINVAL;
	/* not strerror_r: with _GNU_SOURCE it returns a static string and
	 * may leave @why unwritten */
	snprintf(why, size, "%s", strerror(e));
	xp_error_detail_str(err, "errno", why);
	if (last_msg[0])
		xp_error_detail_str(err, "libbpf_message", last_msg);
	return e;
}
