/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_crash.c - what a session leaves when its process dies, with
 * tests/lib/crash_target:
 *
 *   SIGSEGV    the signal-path stop writes a complete, readable tree (every
 *              recorded event, device profiles, samples, trace_info.pb with
 *              stop_reason "signal"), then the default action still kills
 *              the process with SIGSEGV;
 *   SIGSEGV while another thread records: the same, counts exact for the
 *              joined threads, the busy thread's records in order;
 *   overflow   a stack overflow of the main thread: the same, the handler
 *              running on the alternate stack libxprobe installed;
 *   chained    a SIGSEGV handler installed before the session still runs
 *              (exit 42) after the stop;
 *   SIGABRT, SIGTERM (default action): stop, then the same death;
 *   exit()     without close: the atexit stop;
 *   SIGKILL    nothing can run: no trace_info.pb; the host rings survive in
 *              host_rings.live and the reader recovers every recorded event;
 *              the per-execution profile written before the kill survives;
 *              the in-flight execution's, the session captures and the
 *              /proc samples (process memory) do not.
 */
#include <signal.h>
#include <stdlib.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];

struct ready {
	char dir[PATH_MAX];
	unsigned long long events, exec_id;
};

static int run_target(const char *mode, const char *base, int threads, int events, struct ready *r,
		      int *status)
{
	char exe[PATH_MAX], out[PATH_MAX + 16], buf[8192], tn[16], en[16];
	char *argv[6];
	const char *env[] = { "ASAN_OPTIONS=handle_segv=0:handle_abort=0:detect_leaks=0", NULL };
	char *p;

	lt_build_path(exe, sizeof(exe), "tests/lib/crash_target");
	snprintf(out, sizeof(out), "%s/%s.out", scratch, mode);
	snprintf(tn, sizeof(tn), "%d", threads);
	snprintf(en, sizeof(en), "%d", events);
	argv[0] = exe;
	argv[1] = (char *)mode;
	argv[2] = (char *)base;
	argv[3] = tn;
	argv[4] = en;
	argv[5] = NULL;
	*status = lt_run(argv, env, out);
	lt_read_file(out, buf, sizeof(buf));
	p = strstr(buf, "READY ");
	if (!p || sscanf(p, "READY %4095s %llu %llu", r->dir, &r->events, &r->exec_id) != 3) {
		fprintf(stderr, "%s: no READY line in '%s' (status 0x%x)\n", mode, buf, *status);
		return -1;
	}
	return 0;
}

/* The tree a signal-path stop must leave. */
static void check_signal_tree(const struct ready *r, int sig, const char *what)
{
	struct xprobe_session *s = NULL;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	const struct xprobe_xtf *nt, *ti, *dev;
	char err[512];

	CHECK(xprobe_session_open(r->dir, &s, err, sizeof(err)) == 0);
	if (!s) {
		fprintf(stderr, "%s: %s\n", what, err);
		return;
	}
	CHECK(xprobe_session_recovered(s) == 0);
	ti = lt_file(s, "trace_info.pb");
	nt = lt_file(s, "ntrace.pb");
	dev = lt_file(s, "profile_dev_0_session_1.xtf");
	CHECK(ti && nt && dev && lt_file(s, "profile_dev_1_session_1.xtf"));
	CHECK(lt_file(s, "cpu_util.pb") && lt_file(s, "host_mem.pb"));
	if (!ti || !nt || !dev)
		goto out;
	xprobe_xtf_get_info(ti, &in);
	CHECK_STR(in.stop_reason, "signal");
	CHECK(in.signal == sig);
	CHECK(in.flags & XPROBE_XTF_F_SIGNAL);
	CHECK(in.simulated);
	CHECK_EQ_U64(lt_count_aux(nt, XPROBE_EV_USER, 1), r->events); /* every recorded event */
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_SIGNAL), 1);
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_NVTX_MARK), 3); /* one "thread done" per thread */
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_EXEC_BEGIN), 2);
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_EXEC_END), 1);
	in.sz = sizeof(in);
	xprobe_xtf_get_info(dev, &in);
	CHECK(!in.complete); /* stopped by the signal */
	CHECK_EQ_U64(in.records, 2); /* the completed execution */
	CHECK(in.flags & XPROBE_XTF_F_SIGNAL);
out:
	xprobe_session_close(s);
}

/* Run crash_target @mode with 3 recording threads: the process must die of
 * SIGSEGV (the default action still runs after the stop) and leave the
 * complete signal-path tree. */
static void expect_segv_tree(const char *mode, int events)
{
	struct ready r;
	int st;

	if (run_target(mode, mode, 3, events, &r, &st)) {
		CHECK(!"crash target ran");
		return;
	}
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	check_signal_tree(&r, SIGSEGV, mode);
}

static void test_segv(void)
{
	expect_segv_tree("segv", 20000);
}

/* A stack overflow on the thread that began the session: the handler runs
 * on the alternate stack libxprobe gave that thread. */
static void test_overflow(void)
{
	expect_segv_tree("overflow", 5000);
}

static void test_busy_segv(void)
{
	struct xprobe_session *s = NULL;
	struct ready r;
	char err[512];
	int st;

	if (run_target("busy-segv", "busy", 3, 5000, &r, &st)) {
		CHECK(!"busy target ran");
		return;
	}
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	check_signal_tree(&r, SIGSEGV, "busy-segv");
	CHECK(xprobe_session_open(r.dir, &s, err, sizeof(err)) == 0);
	if (s) {
		const struct xprobe_xtf *nt = lt_file(s, "ntrace.pb");
		struct xprobe_xtf_info in = { .sz = sizeof(in) };
		uint64_t busy = 0, next = 0;
		int order = 0;

		xprobe_xtf_get_info(nt, &in);
		for (size_t i = 0; i < in.streams; i++) {
			struct xprobe_xtf_stream st2;
			size_t cur = 0;
			const struct xprobe_record *rec;

			xprobe_xtf_get_stream(nt, i, &st2);
			while ((rec = xprobe_xtf_next_record(&st2, &cur))) {
				if (rec->type != XPROBE_EV_USER || rec->aux != 2)
					continue;
				order += rec->a1 < next;
				next = rec->a1 + 1;
				busy++;
			}
		}
		CHECK(busy > 0 && order == 0);
	}
	xprobe_session_close(s);
}

static void test_chain(void)
{
	struct xprobe_session *s = NULL;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	struct ready r;
	char err[512], buf[8192], out[PATH_MAX + 16];
	int st;

	if (run_target("chain", "chain", 1, 100, &r, &st)) {
		CHECK(!"chain target ran");
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42); /* the previous handler ran */
	snprintf(out, sizeof(out), "%s/chain.out", scratch);
	lt_read_file(out, buf, sizeof(buf));
	CHECK(strstr(buf, "CHAINED") != NULL);
	CHECK(xprobe_session_open(r.dir, &s, err, sizeof(err)) == 0);
	if (s) {
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_STR(in.stop_reason, "signal");
		CHECK_EQ_U64(lt_count_aux(lt_file(s, "ntrace.pb"), XPROBE_EV_USER, 1), 100);
	}
	xprobe_session_close(s);
}

static void test_abort_term_exit(void)
{
	static const struct {
		const char *mode;
		int sig; /* death by this signal, 0 = exit */
		int code;
		const char *reason;
	} cases[] = {
		{ "abort", SIGABRT, 0, "signal" },
		{ "term", SIGTERM, 0, "signal" },
		{ "exit", 0, 7, "atexit" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xprobe_session *s = NULL;
		struct xprobe_xtf_info in = { .sz = sizeof(in) };
		struct ready r;
		char err[512];
		int st;

		if (run_target(cases[i].mode, cases[i].mode, 2, 1000, &r, &st)) {
			CHECK(!"target ran");
			continue;
		}
		if (cases[i].sig)
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == cases[i].sig);
		else
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == cases[i].code);
		CHECK(xprobe_session_open(r.dir, &s, err, sizeof(err)) == 0);
		if (!s) {
			fprintf(stderr, "%s: %s\n", cases[i].mode, err);
			continue;
		}
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_STR(in.stop_reason, cases[i].reason);
		CHECK(in.signal == cases[i].sig);
		CHECK_EQ_U64(lt_count_aux(lt_file(s, "ntrace.pb"), XPROBE_EV_USER, 1), r.events);
		if (!cases[i].sig) {
			CHECK(in.complete);
			CHECK(!(in.flags & XPROBE_XTF_F_SIGNAL));
		}
		xprobe_session_close(s);
	}
}

static void test_kill(void)
{
	struct xprobe_session *s = NULL;
	struct ready r;
	char err[512], name[128];
	int st;

	if (run_target("kill", "kill", 3, 20000, &r, &st)) {
		CHECK(!"kill target ran");
		return;
	}
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(!lt_exists(r.dir, "trace_info.pb")); /* stop never ran */
	CHECK(lt_exists(r.dir, "host_rings.live")); /* the rings did survive */
	CHECK(xprobe_session_open(r.dir, &s, err, sizeof(err)) == 0);
	if (!s) {
		fprintf(stderr, "kill: %s\n", err);
		return;
	}
	CHECK(xprobe_session_recovered(s) == 1);
	{
		const struct xprobe_xtf *rings = lt_file(s, "host_rings.live");
		struct xprobe_xtf_info in = { .sz = sizeof(in) };

		CHECK(rings != NULL);
		if (rings) {
			xprobe_xtf_get_info(rings, &in);
			CHECK(in.flags & XPROBE_XTF_F_RECOVERED);
			CHECK(in.simulated);
			CHECK_EQ_U64(lt_count_aux(rings, XPROBE_EV_USER, 1),
				     r.events); /* every recorded event */
			CHECK_EQ_U64(lt_count(rings, XPROBE_EV_EXEC_BEGIN), 2);
			CHECK_EQ_U64(lt_count(rings, XPROBE_EV_SESSION_END), 0);
		}
	}
	/* the completed execution's MODEL profile was written before the kill */
	snprintf(name, sizeof(name), "crashnet_exec_%llu.xtf", r.exec_id);
	CHECK(lt_file(s, name) != NULL);
	/* process memory is gone: no samples, no in-flight profile */
	CHECK(lt_file(s, "cpu_util.pb") == NULL);
	snprintf(name, sizeof(name), "crashnet_exec_%llu.xtf", r.exec_id + 1);
	CHECK(lt_file(s, name) == NULL);
	xprobe_session_close(s);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "crash");
	xprobe_set_log_fn(NULL, NULL);
	test_segv();
	test_overflow();
	test_busy_segv();
	test_chain();
	test_abort_term_exit();
	test_kill();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
