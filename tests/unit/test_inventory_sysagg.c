/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inventory_sysagg.c - `--syscall-aggregate` below the CLI: the
 * summary (per-CPU folding, names, hints, order) on synthetic values, then
 * the BPF collector on real child processes with exactly known syscalls:
 * counts, matched/unmatched exits, errors, in flight at the end, an
 * unknown number, a tiny --max-groups and --max-inflight (overflow counted,
 * never silent), and a child in its own PID namespace.  Needs root (BPF).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../bpf/syscall_agg.h"
#include "../../src/inventory/syscall_aggregate.h"
#include "testlib.h"

static void test_summary(void)
{
	struct xp_sa_group v[3];
	struct xp_inv_sa_result r;
	struct xp_inv_sa_summary_group *g;
	char hint[64];

	memset(&r, 0, sizeof(r));
	memset(v, 0, sizeof(v));
	v[0].entries = 3;
	v[0].matched_exits = 2;
	v[0].total_ns = 300;
	v[0].min_ns = 100;
	v[0].max_ns = 200;
	v[0].has_min = 1;
	v[1].entries = 1;
	v[1].unmatched_exits = 1;
	v[1].errors = 1;
	v[2].entries = 2;
	v[2].matched_exits = 2;
	v[2].total_ns = 100;
	v[2].min_ns = 40;
	v[2].max_ns = 60;
	v[2].has_min = 1;
	g = xp_inv_sa_result_group(&r, 0); /* read */
	xp_inv_sa_fold_percpu(g, v, 3);
	CHECK_EQ_U64(g->entries, 6);
	CHECK_EQ_U64(g->matched_exits, 4);
	CHECK_EQ_U64(g->min_ns, 40);
	CHECK_EQ_U64(g->max_ns, 200);
	CHECK_EQ_U64(g->total_ns, 400);
	CHECK_EQ_U64(g->errors, 1);
	/* a CPU that only saw unmatched exits contributes no min */
	memset(v, 0, sizeof(v));
	v[0].unmatched_exits = 5;
	g = xp_inv_sa_result_group(&r, 1000);
	xp_inv_sa_fold_percpu(g, v, 1);
	CHECK_EQ_U64(g->min_ns, 0);
	g = xp_inv_sa_result_group(&r, -1);
	g->entries = 9;
	g = xp_inv_sa_result_group(&r, 39); /* getpid */
	g->entries = 9;
	CHECK(xp_inv_sa_result_group(&r, 0) == &r.groups[0]);
	xp_inv_sa_result_finish(&r);
	CHECK_EQ_U64(r.ngroups, 4);
	/* total_ns desc, then entries desc, then unmatched desc, then nr */
	CHECK_EQ_U64(r.groups[0].nr, 0);
	CHECK_STR(r.groups[0].name, "read");
	CHECK(r.groups[1].nr == -1);
	CHECK(r.groups[1].name == NULL);
	CHECK_EQ_U64(r.groups[2].nr, 39);
	CHECK_STR(r.groups[2].name, "getpid");
	CHECK_EQ_U64(r.groups[3].nr, 1000);
	CHECK(r.groups[3].name == NULL);
	CHECK_EQ_U64(r.entries, 24);
	CHECK(xp_inv_sa_selector_hint(0, false, hint, sizeof(hint)));
	CHECK_STR(hint, "syscall:read:entry");
	CHECK(xp_inv_sa_selector_hint(9, true, hint, sizeof(hint)));
	CHECK_STR(hint, "syscall:mmap:exit");
	CHECK(!xp_inv_sa_selector_hint(1000, false, hint, sizeof(hint)));
	CHECK(!xp_inv_sa_selector_hint(-1, false, hint, sizeof(hint)));
	CHECK(!xp_inv_sa_selector_hint(0, false, hint, 8)); /* does not fit */
	xp_inv_sa_result_free(&r);
}

/* ---------------------------------------------------------------------- */

#define N_GETPPID 1000
#define N_CLOSE_BAD 250
#define N_UNKNOWN 7

struct child {
	pid_t pid;
	int go;      /* write end: start the burst */
	int hold;    /* write end: the child blocks reading it at the end */
	int nthreads; /* sleeper threads for the in-flight bound test */
};

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 200000 };

	for (;;)
		syscall(SYS_nanosleep, &ts, NULL); /* glibc would use clock_nanosleep */
	return arg;
}

static void child_body(int go, int hold, int nthreads)
{
	char c;
	int i;

	if (read(go, &c, 1) != 1) /* entered before arming: an unmatched exit */
		_exit(2);
	for (i = 0; i < nthreads; i++) {
		pthread_t t;

		pthread_create(&t, NULL, sleeper, NULL);
	}
	for (i = 0; i < N_GETPPID; i++)
		syscall(SYS_getppid);
	for (i = 0; i < N_CLOSE_BAD; i++)
		syscall(SYS_close, -1);                /* EBADF */
	for (i = 0; i < N_UNKNOWN; i++)
		syscall(1000);                          /* ENOSYS, unknown number */
	(void)!read(hold, &c, 1);                       /* in flight at the end */
	_exit(0);
}

static int start_child(struct child *ch, int nthreads, bool newpidns)
{
	int go[2], hold[2];

	if (pipe(go) || pipe(hold))
		return -1;
	ch->nthreads = nthreads;
	if (newpidns) {
		/* the grandchild is pid 1 of a new PID namespace */
		if (unshare(CLONE_NEWPID))
			return -1;
	}
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		close(go[1]);
		close(hold[1]);
		child_body(go[0], hold[0], nthreads);
	}
	close(go[0]);
	close(hold[0]);
	ch->go = go[1];
	ch->hold = hold[1];
	return 0;
}

static void stop_child(struct child *ch)
{
	int st;

	kill(ch->pid, SIGKILL);
	waitpid(ch->pid, &st, 0);
	close(ch->go);
	close(ch->hold);
}

static int go_armed(void *ctx, struct xp_error *err)
{
	struct child *ch = ctx;

	(void)err;
	return write(ch->go, "g", 1) == 1 ? 0 : -EIO;
}

static const struct xp_inv_sa_summary_group *find(const struct xp_inv_sa_result *r, int32_t nr)
{
	size_t i;

	for (i = 0; i < r->ngroups; i++)
		if (r->groups[i].nr == nr)
			return &r->groups[i];
	return NULL;
}

static void check_exact(const struct xp_inv_sa_result *r)
{
	const struct xp_inv_sa_summary_group *g;

	g = find(r, SYS_getppid);
	CHECK(g != NULL);
	if (g) {
		CHECK_STR(g->name, "getppid");
		CHECK_EQ_U64(g->entries, N_GETPPID);
		CHECK_EQ_U64(g->matched_exits, N_GETPPID);
		CHECK_EQ_U64(g->unmatched_exits, 0);
		CHECK_EQ_U64(g->errors, 0);
		CHECK(g->min_ns > 0 && g->min_ns <= g->max_ns);
		CHECK(g->total_ns >= g->min_ns * N_GETPPID);
	}
	g = find(r, SYS_close);
	CHECK(g != NULL);
	if (g) {
		CHECK_EQ_U64(g->entries, N_CLOSE_BAD);
		CHECK_EQ_U64(g->matched_exits, N_CLOSE_BAD);
		CHECK_EQ_U64(g->errors, N_CLOSE_BAD);
	}
	g = find(r, 1000);
	CHECK(g != NULL);
	if (g) {
		CHECK(g->name == NULL);
		CHECK_EQ_U64(g->entries, N_UNKNOWN);
		CHECK_EQ_U64(g->errors, N_UNKNOWN);
	}
	g = find(r, SYS_read);
	CHECK(g != NULL);
	if (g) {
		CHECK_EQ_U64(g->unmatched_exits, 1);  /* the trigger read */
		CHECK_EQ_U64(g->entries, 1);          /* the final read ... */
		CHECK_EQ_U64(g->inflight_at_end, 1);  /* ... still blocked */
		CHECK_EQ_U64(g->matched_exits, 0);
	}
	CHECK_EQ_U64(r->group_drop_entries, 0);
	CHECK_EQ_U64(r->inflight_drops, 0);
	CHECK_EQ_U64(r->regs_read_errors, 0);
	CHECK_EQ_U64(r->inflight_occupied, r->inflight_at_end);
}

static void test_live(void)
{
	struct xp_inv_sa_opts o = {
		.max_groups = 256,
		.max_inflight = 1024,
		.duration_ms = 400,
		.on_armed = go_armed,
	};
	struct xp_error err = { 0 };
	struct xp_inv_sa_result r;
	struct child ch;
	int rc;

	/* exact counts */
	CHECK(start_child(&ch, 0, false) == 0);
	o.pid = o.filter.global_tgid = (uint32_t)ch.pid;
	o.on_armed_ctx = &ch;
	usleep(50000); /* the child is blocked in read() before we arm */
	rc = xp_inv_sa_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (rc)
		fprintf(stderr, "xp_inv_sa_collect: %s\n", err.message);
	if (!rc) {
		check_exact(&r);
		CHECK(r.setup_ns > 0 && r.setup_ns < 2000000000ull);
		CHECK(r.window_ns >= 400000000ull);
		CHECK_EQ_U64(r.group_capacity, 256);
		xp_inv_sa_result_free(&r);
	}
	stop_child(&ch);
	xp_error_clear(&err);

	/* --max-groups 2: read and getppid get groups, the rest is counted */
	CHECK(start_child(&ch, 0, false) == 0);
	o.pid = o.filter.global_tgid = (uint32_t)ch.pid;
	o.on_armed_ctx = &ch;
	o.max_groups = 2;
	usleep(50000);
	rc = xp_inv_sa_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK_EQ_U64(r.ngroups, 2);
		CHECK(find(&r, SYS_read) && find(&r, SYS_getppid));
		CHECK_EQ_U64(r.group_drop_entries, N_CLOSE_BAD + N_UNKNOWN);
		CHECK_EQ_U64(r.group_drop_exits, N_CLOSE_BAD + N_UNKNOWN);
		xp_inv_sa_result_free(&r);
	}
	stop_child(&ch);
	xp_error_clear(&err);

	/* --max-inflight 1 with four sleeping threads: starts are dropped */
	CHECK(start_child(&ch, 4, false) == 0);
	o.pid = o.filter.global_tgid = (uint32_t)ch.pid;
	o.on_armed_ctx = &ch;
	o.max_groups = 256;
	o.max_inflight = 1;
	usleep(50000);
	rc = xp_inv_sa_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		const struct xp_inv_sa_summary_group *g = find(&r, SYS_nanosleep);

		CHECK(r.inflight_drops > 0);
		CHECK(r.inflight_occupied <= 1);
		CHECK(g && g->inflight_drops > 0);
		CHECK(g && g->unmatched_exits > 0); /* exits whose start was dropped */
		xp_inv_sa_result_free(&r);
	}
	stop_child(&ch);
	xp_error_clear(&err);
}

/* The child in its own PID namespace, forked from a helper process that
 * unshared (so this test process keeps its namespace).  The helper passes
 * the child's global pid back and forwards the go byte to it. */
static void test_pidns(void)
{
	struct xp_inv_sa_opts o = {
		.max_groups = 256,
		.max_inflight = 1024,
		.duration_ms = 400,
		.on_armed = go_armed,
		.filter = { .use_pidns = true, .ns_tgid = 1 },
	};
	struct xp_error err = { 0 };
	struct xp_inv_sa_result r;
	struct child ch;
	int pidpipe[2], gopipe[2], rc, st;
	int32_t pid = 0;
	pid_t helper;
	char path[64];
	struct stat sb;

	if (pipe(pidpipe) || pipe(gopipe))
		return;
	helper = fork();
	if (helper == 0) {
		struct child c;
		char b;

		if (start_child(&c, 0, true))
			_exit(1);
		pid = c.pid;
		(void)!write(pidpipe[1], &pid, sizeof(pid));
		while (read(gopipe[0], &b, 1) == 1)
			(void)!write(c.go, &b, 1);
		pause();
		_exit(0);
	}
	CHECK(read(pidpipe[0], &pid, sizeof(pid)) == sizeof(pid));
	ch.pid = pid;
	ch.go = gopipe[1];
	ch.hold = -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", ch.pid);
	CHECK(stat(path, &sb) == 0);
	o.pid = (uint32_t)ch.pid;
	o.filter.global_tgid = (uint32_t)ch.pid;
	o.filter.pidns_dev = sb.st_dev;
	o.filter.pidns_ino = sb.st_ino;
	o.on_armed_ctx = &ch;
	usleep(50000);
	rc = xp_inv_sa_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		check_exact(&r);
		xp_inv_sa_result_free(&r);
	}
	kill(ch.pid, SIGKILL);
	kill(helper, SIGKILL);
	waitpid(helper, &st, 0);
	close(pidpipe[0]);
	close(pidpipe[1]);
	close(gopipe[0]);
	close(gopipe[1]);
	xp_error_clear(&err);
}

int main(void)
{
	test_summary();
	if (geteuid() != 0) {
		CHECK(!"the live part needs root (BPF)");
		TEST_MAIN_END();
	}
	test_live();
	test_pidns();
	TEST_MAIN_END();
}
