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
#include "live.h"

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

void xp_live_libbpf_capture(void)
{
	last_msg[0] = '\0';
	libbpf_set_print(capture_print);
}

const char *xp_live_libbpf_message(void)
{
	return last_msg;
}

int xp_live_libbpf_fail_details(struct xp_error *err, int e, char *why, size_t size)
{
	if (e < 0)
		e = -e;
	if (!e)
		e = EINVAL;
	/* not strerror_r: with _GNU_SOURCE it returns a static string and
	 * may leave @why unwritten.  ENOTSUPP (524) is the kernel's own,
	 * unknown to libc: a uprobe on an instruction it will not probe. */
	if (e == XP_ENOTSUPP_KERNEL)
		snprintf(why, size, "ENOTSUPP (the kernel does not support it here)");
	else
		snprintf(why, size, "%s", strerror(e));
	xp_error_detail_str(err, "errno", why);
	if (last_msg[0])
		xp_error_detail_str(err, "libbpf_message", last_msg);
	return e;
}

int xp_live_libbpf_fail(struct xp_error *err, struct xp_live_libbpf_failure *f)
{
	const struct xp_live_endpoint *ep = f->ep;

	f->e = xp_live_libbpf_fail_details(err, f->e, f->why, sizeof(f->why));
	if (ep)
		xp_error_detail_str(err, "selector", ep->selector);
	if (f->e == EPERM || f->e == EACCES) {
		xp_error_hint(err, "run xprobe as root, or grant it CAP_BPF and CAP_PERFMON");
		if (f->perm_hint)
			xp_error_hint(err, "%s", f->perm_hint);
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied to %s %s", f->what, f->objects);
	}
	if (f->e == ESRCH) {
		xp_error_hint(err, "the target exited while probes were attached; start it again");
		return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				    "target process exited while xprobe attached its probes");
	}
	if (f->maps && (f->e == E2BIG || f->e == ENOMEM)) {
		xp_error_hint(err, "lower --max-groups or --max-inflight");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "the kernel refused %s at their configured sizes", f->maps);
	}
	if (ep && ep->kind == XP_LIVE_UPROBE && f->e == XP_ENOTSUPP_KERNEL) {
		xp_error_hint(err, "run xprobe validate: it names the instruction and the next one to probe");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "the kernel refused to probe the instruction at %s (ENOTSUPP: a lock or segment prefix, or an opcode it does not probe)",
				    ep->selector);
	}
	if (ep && ep->kind == XP_LIVE_UPROBE && f->e == ENOENT) {
		xp_error_detail_str(err, "binary_path", ep->access_path);
		xp_error_hint(err, "run xprobe validate with the exact selector text");
		return xp_error_set(err, XPROBE_E_BINARY_NOT_MAPPED, true,
				    "cannot attach %s: %s is not accessible", ep->selector,
				    ep->access_path);
	}
	return 0;
}

int xp_live_libbpf_fail_internal(struct xp_error *err, const struct xp_live_libbpf_failure *f)
{
	xp_error_hint(err, "run xprobe doctor; the libbpf_message detail has the kernel's reason");
	return xp_error_set(err, XPROBE_E_INTERNAL, false, "failed to %s %s: %s", f->what,
			    f->objects, f->why);
}

void xp_live_libbpf_load_failed(char *detail, size_t size, const char *object, int rc)
{
	const char *msg = xp_live_libbpf_message();

	snprintf(detail, size, "loading the %s object failed: %s%s%s", object,
		 strerror(rc < 0 ? -rc : rc), msg[0] ? ": " : "", msg);
}
