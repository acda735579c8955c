/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_live_libbpf.c - the one capture of libbpf's messages
 * (src/live/libbpf_msg.h), shared by the live collector and the
 * syscall aggregate: a real libbpf warning is kept and never reaches
 * stderr, trailing newlines are cut, an empty line keeps the message
 * before it, debug chatter is ignored, a new capture forgets the old
 * message, and a failed step's details carry errno and the message; the
 * shared failure rules map each errno to its contract code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "../../src/live/libbpf_msg.h"
#include "../../src/live/live.h"
#include "testlib.h"

/* Call libbpf's current print callback as libbpf would. */
static void libbpf_says(enum libbpf_print_level level, const char *fmt, ...)
{
	libbpf_print_fn_t fn = libbpf_set_print(NULL);
	va_list ap;

	libbpf_set_print(fn);
	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

static void test_real_warning_is_captured_not_printed(void)
{
	char path[] = "/tmp/xp-libbpf-stderr-XXXXXX";
	struct bpf_object *obj;
	int fd, saved;
	off_t size;

	/* stderr goes to a file for the duration of the libbpf call */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);

	xp_live_libbpf_capture();
	obj = bpf_object__open_file("/nonexistent/xp-missing.bpf.o", NULL);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size = lseek(fd, 0, SEEK_END);
	close(fd);

	CHECK(obj == NULL || libbpf_get_error(obj));
	CHECK_EQ_U64(size, 0); /* nothing on stderr */
	CHECK(strstr(xp_live_libbpf_message(), "xp-missing.bpf.o") != NULL);
	CHECK(xp_live_libbpf_message()[strlen(xp_live_libbpf_message()) - 1] != '\n');
}

static void test_message_rules(void)
{
	xp_live_libbpf_capture();
	CHECK_STR(xp_live_libbpf_message(), "");
	libbpf_says(LIBBPF_WARN, "map '%s': failed to create: %d\n", "xp_sa_groups", -7);
	CHECK_STR(xp_live_libbpf_message(), "map 'xp_sa_groups': failed to create: -7");
	/* an empty line and debug output keep the last message that said something */
	libbpf_says(LIBBPF_WARN, "\n");
	libbpf_says(LIBBPF_DEBUG, "libbpf: loading object\n");
	CHECK_STR(xp_live_libbpf_message(), "map 'xp_sa_groups': failed to create: -7");
	libbpf_says(LIBBPF_INFO, "prog '%s': verifier said no  \n", "xp_sa_enter");
	CHECK_STR(xp_live_libbpf_message(), "prog 'xp_sa_enter': verifier said no");
	/* a new capture forgets it */
	xp_live_libbpf_capture();
	CHECK_STR(xp_live_libbpf_message(), "");
}

static void test_fail_details(void)
{
	struct xp_error err = { 0 };
	char why[128];

	xp_live_libbpf_capture();
	CHECK_EQ_U64(xp_live_libbpf_fail_details(&err, -ENOENT, why, sizeof(why)), ENOENT);
	CHECK_STR(why, "No such file or directory");
	CHECK_STR(xp_error_detail_get(&err, "errno"), "\"No such file or directory\"");
	CHECK(xp_error_detail_get(&err, "libbpf_message") == NULL); /* libbpf said nothing */
	xp_error_clear(&err);

	libbpf_says(LIBBPF_WARN, "failed to load: %s\n", "Permission denied");
	CHECK_EQ_U64(xp_live_libbpf_fail_details(&err, EPERM, why, sizeof(why)), EPERM);
	CHECK_STR(xp_error_detail_get(&err, "libbpf_message"), "\"failed to load: Permission denied\"");
	xp_error_clear(&err);

	/* errno 0 (libbpf returned NULL without setting it) reads as EINVAL */
	CHECK_EQ_U64(xp_live_libbpf_fail_details(&err, 0, why, sizeof(why)), EINVAL);
	CHECK_STR(why, "Invalid argument");
	xp_error_clear(&err);
}

/* xp_live_libbpf_fail: errno -> code, in its order; 0 leaves it to the caller. */
static void test_fail_rules(void)
{
	struct xp_live_endpoint up = { .kind = XP_LIVE_UPROBE,
				       .selector = "uprobe:/bin/x:f:entry",
				       .access_path = "/bin/x" };
	struct xp_live_endpoint tp = { .kind = XP_LIVE_TRACEPOINT, .selector = "tracepoint:a:b" };
	struct xp_live_libbpf_failure f = { .what = "attach", .objects = "the probes" };
	struct xp_error err = { 0 };

	xp_live_libbpf_capture();
	f.e = -EACCES;
	CHECK_EQ_U64(-xp_live_libbpf_fail(&err, &f), XPROBE_E_PERMISSION_DENIED);
	CHECK_STR(err.message, "permission denied to attach the probes");
	xp_error_clear(&err);
	f.e = -ESRCH;
	CHECK_EQ_U64(-xp_live_libbpf_fail(&err, &f), XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	/* ENOMEM: a limit only when the maps are sized by flags */
	f.e = -ENOMEM;
	CHECK_EQ_U64(xp_live_libbpf_fail(&err, &f), 0);
	CHECK_EQ_U64(-xp_live_libbpf_fail_internal(&err, &f), XPROBE_E_INTERNAL);
	CHECK_STR(err.message, "failed to attach the probes: Cannot allocate memory");
	xp_error_clear(&err);
	f.maps = "the maps";
	f.e = -ENOMEM;
	CHECK_EQ_U64(-xp_live_libbpf_fail(&err, &f), XPROBE_E_SESSION_LIMIT_EXCEEDED);
	xp_error_clear(&err);
	/* a uprobe's binary gone; an instruction the kernel will not probe */
	f.ep = &up;
	f.e = -ENOENT;
	CHECK_EQ_U64(-xp_live_libbpf_fail(&err, &f), XPROBE_E_BINARY_NOT_MAPPED);
	CHECK_STR(xp_error_detail_get(&err, "selector"), "\"uprobe:/bin/x:f:entry\"");
	xp_error_clear(&err);
	f.e = -XP_ENOTSUPP_KERNEL;
	CHECK_EQ_U64(-xp_live_libbpf_fail(&err, &f), XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(err.message, "refused to probe the instruction at uprobe:/bin/x:f:entry") != NULL);
	CHECK_STR(xp_error_detail_get(&err, "errno"),
		  "\"ENOTSUPP (the kernel does not support it here)\"");
	xp_error_clear(&err);
	/* the same errnos on another kind: the caller's rules */
	f.ep = &tp;
	f.e = -XP_ENOTSUPP_KERNEL;
	CHECK_EQ_U64(xp_live_libbpf_fail(&err, &f), 0);
	CHECK_STR(f.why, "ENOTSUPP (the kernel does not support it here)");
	xp_error_clear(&err);
	f.e = -ENOENT;
	CHECK_EQ_U64(xp_live_libbpf_fail(&err, &f), 0);
	xp_error_clear(&err);
}

int main(void)
{
	test_real_warning_is_captured_not_printed();
	test_message_rules();
	test_fail_details();
	test_fail_rules();
	TEST_MAIN_END();
}
