/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_process_identity.c - the pidfd identification holds (identity.h):
 * a process that exited is noticed through its pidfd, and a PID reused
 * within one clock tick -- same number, same start time, which the stat
 * file cannot tell apart -- is TARGET_REUSED.  The reuse is provoked in a
 * PID namespace of our own (unshare + ns_last_pid), where nothing else
 * takes PIDs, so it is deterministic.  Runs as root.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/identity.h"
#include "testlib.h"

static pid_t pause_child(void)
{
	pid_t p = fork();

	if (p == 0) {
		pause();
		_exit(0);
	}
	return p;
}

static void end_child(pid_t p)
{
	int st;

	kill(p, SIGKILL);
	waitpid(p, &st, 0);
}

static void test_held_pidfd(void)
{
	struct xp_error err = { 0 };
	struct xp_target t, copy;
	pid_t p = pause_child();

	CHECK(xp_target_identify((uint32_t)p, &t, &err) == 0);
	CHECK(t.has_pidfd && t.pidfd >= 0);
	CHECK(xp_target_pidfd_exited(&t) == 0);
	CHECK(xp_target_verify(&t, &err) == 0);
	/* a forged start time is still caught while the process runs */
	copy = t;
	copy.start_time++;
	CHECK(xp_target_verify(&copy, &err) == -XPROBE_E_TARGET_REUSED);
	xp_error_clear(&err);
	end_child(p);
	CHECK(xp_target_pidfd_exited(&t) == 1);
	CHECK(xp_target_verify(&t, &err) == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	xp_target_release(&t);
	CHECK(!t.has_pidfd && t.pidfd == -1);
	xp_target_release(&t); /* twice is fine */
	CHECK(xp_target_pidfd_exited(&t) == -1);
}

/* A child that exited but is not reaped: a zombie holds its PID. */
static void test_zombie(void)
{
	struct xp_error err = { 0 };
	struct xp_proc_stat st;
	struct xp_target t, z;
	int fds[2], i, wst;
	pid_t p;
	char c;

	CHECK(pipe(fds) == 0);
	p = fork();
	if (p == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[0]);
	CHECK(xp_target_identify((uint32_t)p, &t, &err) == 0);
	close(fds[1]); /* the child exits */
	for (i = 0; i < 1000; i++) {
		if (xp_proc_stat_read((uint32_t)p, 0, &st) == 0 && st.state == 'Z')
			break;
		usleep(1000);
	}
	CHECK(st.state == 'Z');
	CHECK(xp_target_verify(&t, &err) == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	CHECK(xp_target_identify((uint32_t)p, &z, &err) == -XPROBE_E_TARGET_NOT_FOUND);
	CHECK(!z.has_pidfd);
	xp_error_clear(&err);
	xp_target_release(&t);
	waitpid(p, &wst, 0);
}

static int write_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int rc;

	if (!f)
		return -1;
	rc = fprintf(f, "%d", (int)pid) > 0 ? 0 : -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

/*
 * As PID 1 of a fresh PID namespace with its own /proc: identify A, end
 * it, hand its PID to B at once; retry until B started in A's tick.
 */
static void reuse_in_namespace(void)
{
	struct xp_error err = { 0 };
	int attempt, same_tick = 0;

	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	CHECK(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0);
	for (attempt = 0; attempt < 200 && !same_tick; attempt++) {
		struct xp_target old, stat_only;
		struct xp_proc_stat st;
		pid_t a, b;

		a = pause_child();
		CHECK(xp_target_identify((uint32_t)a, &old, &err) == 0);
		CHECK(old.has_pidfd);
		end_child(a);
		CHECK(write_last_pid(a - 1) == 0);
		b = pause_child();
		CHECK(b == a);
		if (b == a && xp_proc_stat_read((uint32_t)b, 0, &st) == 0 &&
		    st.start_time == old.start_time) {
			same_tick = 1;
			/* what the stat file alone concludes: the same process */
			stat_only = old;
			stat_only.has_pidfd = false;
			CHECK(xp_target_verify(&stat_only, &err) == 0);
			/* the pidfd knows better */
			CHECK(xp_target_pidfd_exited(&old) == 1);
			CHECK(xp_target_verify(&old, &err) == -XPROBE_E_TARGET_REUSED);
			CHECK(strstr(err.message, "within one clock tick") != NULL);
			CHECK(xp_error_detail_get(&err, "observed_process_start_time") != NULL);
			xp_error_clear(&err);
		}
		xp_target_release(&old);
		end_child(b);
	}
	CHECK(same_tick);
}

static void test_reuse_within_one_tick(void)
{
	pid_t h;
	int st = 0;

	h = fork();
	if (h == 0) {
		pid_t init;
		int ist = 0;

		if (unshare(CLONE_NEWPID | CLONE_NEWNS)) {
			perror("unshare");
			_exit(3);
		}
		init = fork();
		if (init == 0) {
			reuse_in_namespace();
			fprintf(stderr, "%s (in the PID namespace): %d checks, %d failures\n",
				__FILE__, xpt_checks, xpt_failures);
			_exit(xpt_failures ? 1 : 0);
		}
		waitpid(init, &ist, 0);
		_exit(WIFEXITED(ist) ? WEXITSTATUS(ist) : 4);
	}
	CHECK(waitpid(h, &st, 0) == h);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	test_held_pidfd();
	test_zombie();
	test_reuse_within_one_tick();
	TEST_MAIN_END();
}
