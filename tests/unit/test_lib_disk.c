/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_disk.c - a full file system never kills the traced process.
 * Each scenario runs in a child process (a SIGBUS there is a failed check,
 * not a dead test) against a small tmpfs mounted for it:
 *
 *   begin      a 1 MiB tmpfs cannot hold the ring file's header and one
 *              4 MiB ring: begin fails with OUTPUT_FAILED naming the
 *              file and the reason, leaves no session tree, and a session
 *              with 64 KiB rings then begins in the same file system
 *              (the ring file was a sparse MAP_SHARED mapping whose
 *              prefault raised SIGBUS inside begin);
 *   thread     the disk fills during the session; a thread that records
 *              for the first time finds no space for its ring: its records
 *              are dropped and counted, the others' are kept, and
 *              trace_info.pb says how many threads had no ring and why;
 *   stop       the disk is full at stop: stop fails with the reason, no
 *              temporary file is left, host_rings.live is kept and the
 *              reader recovers every event from it;
 *   profile    a MODEL profile written at an execution's end, a profile
 *              stopped by xprobe_profile_stop: OUTPUT_FAILED with the
 *              reason, nothing left behind, the next write works once
 *              space is back;
 *   save       continuous save on a full disk: OUTPUT_FAILED with the
 *              reason, no temporary file, the execution still saved later;
 *   crash      tests/lib/crash_target fills the disk, starts a thread that
 *              records, then dies of SIGSEGV: the crash flush writes what
 *              it can, reports what it cannot, the process dies of the
 *              SIGSEGV (not of a SIGBUS, not hung), no temporary file is
 *              left and the rings are recovered from host_rings.live.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];
static char mnt[PATH_MAX + 16];

#define ENOSPC_TEXT "No space left on device"

static struct xprobe_inspect_config *host_cfg(const char *base, uint64_t ring_events)
{
	struct xprobe_inspect_config *c = NULL;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_instance_id(c, "disk");
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	if (ring_events)
		xprobe_inspect_config_set_ring_events(c, ring_events);
	return c;
}

static uint64_t count_user(const struct xprobe_xtf *x)
{
	return x ? lt_count(x, XPROBE_EV_USER) : 0;
}

/* --- begin ------------------------------------------------------------------ */

static int sc_begin(void *arg)
{
	int failures = xpt_failures;
	struct xprobe_inspect_config *c;
	struct xprobe_session *s = NULL;
	char base[PATH_MAX + 32], dir[PATH_MAX], err[512];
	int rc;

	(void)arg;
	snprintf(base, sizeof(base), "%s/out", mnt);
	c = host_cfg(base, 0); /* 4 MiB rings: more than the file system holds */
	rc = xprobe_inspect_begin_with_options(c);
	CHECK(rc == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  begin on a full disk: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "host_rings.live") != NULL);
	CHECK(strstr(xprobe_last_error(), ENOSPC_TEXT) != NULL);
	CHECK(xprobe_inspect_is_active() == 0);
	CHECK(lt_find_session(base, dir, sizeof(dir)) != 0); /* no tree left */
	CHECK(xprobe_trace_record(1, 1, 1) == -XPROBE_E_NOT_ACTIVE);
	/* the same file system holds a session with 64 KiB rings */
	xprobe_inspect_config_set_ring_events(c, 1024);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 100; i++)
		CHECK(xprobe_trace_record(1, (uint64_t)i, 0) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	CHECK_EQ_U64(count_user(s ? lt_file(s, "ntrace.pb") : NULL), 100);
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
	return xpt_failures - failures;
}

/* --- a thread attaches its ring on a full disk -------------------------------- */

static void *late_thread(void *arg)
{
	int *dropped = arg;

	for (int i = 0; i < 20; i++)
		*dropped += xprobe_trace_record(2, (uint64_t)i, 0) == -XPROBE_E_EVENTS_DROPPED;
	return NULL;
}

static int sc_thread(void *arg)
{
	int failures = xpt_failures, dropped = 0;
	struct xprobe_inspect_config *c;
	struct xprobe_session *s = NULL;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	const struct xprobe_xtf *ti;
	char base[PATH_MAX + 32], dir[PATH_MAX], err[512];
	bool said = false;
	pthread_t th;

	(void)arg;
	snprintf(base, sizeof(base), "%s/out", mnt);
	c = host_cfg(base, 1024);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 50; i++)
		CHECK(xprobe_trace_record(1, (uint64_t)i, 0) == 0);
	CHECK(lt_fill_fs(mnt) > 0);
	CHECK(pthread_create(&th, NULL, late_thread, &dropped) == 0);
	pthread_join(th, NULL);
	CHECK(dropped == 20); /* every record of the ringless thread: dropped */
	CHECK(xprobe_trace_record(1, 50, 0) == 0); /* main's ring still records */
	lt_unfill_fs(mnt);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(xprobe_inspect_stop() == 0);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	ti = s ? lt_file(s, "trace_info.pb") : NULL;
	CHECK(ti != NULL);
	if (ti) {
		xprobe_xtf_get_info(ti, &in);
		CHECK_EQ_U64(in.threads_without_ring, 1);
		CHECK(in.host_dropped >= 20);
		CHECK(!in.complete);
		for (size_t i = 0; i < in.notes; i++) {
			const char *n = xprobe_xtf_get_note(ti, i);

			fprintf(stderr, "  note: %s\n", n);
			said |= strstr(n, "no ring") && strstr(n, ENOSPC_TEXT);
		}
		CHECK(said);
	}
	CHECK_EQ_U64(count_user(s ? lt_file(s, "ntrace.pb") : NULL), 51);
	xprobe_session_close(s);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
	return xpt_failures - failures;
}

/* --- stop on a full disk ---------------------------------------------------- */

static int sc_stop(void *arg)
{
	int failures = xpt_failures;
	struct xprobe_inspect_config *c;
	struct xprobe_session *s = NULL;
	char base[PATH_MAX + 32], dir[PATH_MAX], err[512];

	(void)arg;
	snprintf(base, sizeof(base), "%s/out", mnt);
	c = host_cfg(base, 4096); /* 256 KiB ring: ntrace.pb will not fit */
	xprobe_inspect_config_set_activity(c, "cpu_util", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 3000; i++)
		CHECK(xprobe_trace_record(1, (uint64_t)i, 0) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(lt_fill_fs(mnt) > 0);
	CHECK(xprobe_inspect_stop() == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  stop on a full disk: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "ntrace.pb") != NULL);
	CHECK(strstr(xprobe_last_error(), ENOSPC_TEXT) != NULL);
	CHECK(lt_count_names(dir, ".tmp") == 0);
	CHECK(lt_exists(dir, "host_rings.live"));
	lt_unfill_fs(mnt);
	/* trace_info.pb did not fit either: the reader recovers the rings */
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	if (s) {
		CHECK(xprobe_session_recovered(s) == 1);
		CHECK_EQ_U64(count_user(lt_file(s, "host_rings.live")), 3000);
	}
	xprobe_session_close(s);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
	return xpt_failures - failures;
}

/* --- device profiles written during the session ------------------------------ */

static int sc_profile(void *arg)
{
	int failures = xpt_failures;
	struct xprobe_inspect_config *c = NULL;
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 64);
	char base[PATH_MAX + 32], dir[PATH_MAX];
	uint64_t id;

	(void)arg;
	snprintf(base, sizeof(base), "%s/out", mnt);
	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_instance_id(c, "disk");
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	xprobe_inspect_config_set_device_profile_mode(c, XPROBE_DEVICE_PROFILE_MODEL);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(xprobe_profile_start("net", "user_net.xtf") == 0);
	CHECK(lt_fill_fs(mnt) > 0);
	/* MODEL mode: the execution's own file, at its end */
	CHECK(xprobe_execution_begin("net", &id) == 0);
	CHECK(xprobe_execution_end(id, 0) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  execution end on a full disk: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "net_exec_") != NULL);
	CHECK(strstr(xprobe_last_error(), ENOSPC_TEXT) != NULL);
	/* a user MODEL profile */
	CHECK(xprobe_profile_stop("user_net.xtf") == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  profile stop on a full disk: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "user_net.xtf") != NULL);
	CHECK(strstr(xprobe_last_error(), ENOSPC_TEXT) != NULL);
	CHECK(lt_count_names(dir, ".tmp") == 0);
	CHECK(lt_count_names(dir, ".xtf") == 0);
	lt_unfill_fs(mnt);
	CHECK(xprobe_execution_begin("net", &id) == 0);
	CHECK(xprobe_execution_end(id, 0) == 0);
	CHECK(lt_count_names(dir, "net_exec_") == 1);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
	return xpt_failures - failures;
}

/* --- continuous save ---------------------------------------------------------- */

static int sc_save(void *arg)
{
	int failures = xpt_failures;
	char base[PATH_MAX + 32];
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 64);
	XPROBE_OPTS(xprobe_continuous_opts, co, .backend = "sim", .backend_opts = &bo,
		    .output_dir = base);
	uint64_t id;

	(void)arg;
	snprintf(base, sizeof(base), "%s/flight", mnt);
	CHECK(mkdir(base, 0700) == 0);
	CHECK(xprobe_profile_continuous_start(&co) == 0);
	CHECK(xprobe_execution_begin("net", &id) == 0);
	CHECK(xprobe_execution_end(id, 0) == 0);
	CHECK(lt_fill_fs(mnt) > 0);
	CHECK(xprobe_profile_continuous_save(NULL) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  continuous save on a full disk: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), ENOSPC_TEXT) != NULL);
	CHECK(lt_count_names(base, ".tmp") == 0);
	CHECK(lt_count_names(base, ".xtf") == 0);
	lt_unfill_fs(mnt);
	CHECK(xprobe_profile_continuous_save(NULL) == 1); /* the execution was kept */
	CHECK(lt_count_names(base, "model_net_pid_") == 1);
	CHECK(xprobe_profile_continuous_stop() == 0);
	return xpt_failures - failures;
}

/* --- the crash flush ----------------------------------------------------------- */

static void test_crash_flush(void)
{
	char exe[PATH_MAX], out[PATH_MAX + 16], errp[PATH_MAX + 16], buf[16384], dir[PATH_MAX];
	char base[PATH_MAX + 32], err[512];
	const char *env[] = { "ASAN_OPTIONS=handle_segv=0:handle_abort=0:detect_leaks=0", NULL };
	struct xprobe_session *s = NULL;
	unsigned long long events = 0, exec_id;
	char *argv[6], *p;
	int st;

	lt_build_path(exe, sizeof(exe), "tests/lib/crash_target");
	snprintf(base, sizeof(base), "%s/out", mnt);
	snprintf(out, sizeof(out), "%s/crash.out", scratch);
	snprintf(errp, sizeof(errp), "%s/crash.err", scratch);
	argv[0] = exe;
	argv[1] = (char *)"full-segv";
	argv[2] = base;
	argv[3] = (char *)"2";
	argv[4] = (char *)"1000";
	argv[5] = NULL;
	st = lt_run_err(argv, env, out, errp);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	if (WIFSIGNALED(st) && WTERMSIG(st) != SIGSEGV)
		fprintf(stderr, "crash_target died of signal %d\n", WTERMSIG(st));
	lt_read_file(out, buf, sizeof(buf));
	p = strstr(buf, "READY ");
	CHECK(p && sscanf(p, "READY %4095s %llu %llu", dir, &events, &exec_id) == 3);
	CHECK(strstr(buf, "FILLED") != NULL);
	lt_read_file(errp, buf, sizeof(buf));
	fprintf(stderr, "  crash_target's stderr:\n%s", buf);
	/* what could not be written is reported, with the reason */
	CHECK(strstr(buf, "could not write ntrace.pb: " ENOSPC_TEXT) != NULL);
	if (!p)
		return;
	CHECK(lt_count_names(dir, ".tmp") == 0);
	CHECK(!lt_exists(dir, "trace_info.pb"));
	lt_unfill_fs(mnt);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	if (s) {
		CHECK(xprobe_session_recovered(s) == 1);
		CHECK_EQ_U64(count_user(lt_file(s, "host_rings.live")), events);
	}
	xprobe_session_close(s);
}

/* --- driver ---------------------------------------------------------------------- */

static bool scenario(const char *what, int (*fn)(void *), unsigned kib)
{
	bool ok;

	if (lt_tmpfs_mount(mnt, kib) != 0) {
		CHECK(!"tmpfs mounted (the tests run as root)");
		return false;
	}
	ok = lt_in_child(what, fn, NULL, 60);
	CHECK(ok);
	lt_tmpfs_umount(mnt);
	return ok;
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "disk");
	snprintf(mnt, sizeof(mnt), "%s/mnt", scratch);
	scenario("begin", sc_begin, 1024);
	scenario("thread", sc_thread, 1024);
	scenario("stop", sc_stop, 1024);
	scenario("profile", sc_profile, 1024);
	scenario("save", sc_save, 1024);
	if (lt_tmpfs_mount(mnt, 32 * 1024) == 0) {
		test_crash_flush();
		lt_tmpfs_umount(mnt);
	} else {
		CHECK(!"tmpfs mounted (the tests run as root)");
	}
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
