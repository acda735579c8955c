/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_nvtx.c - NVTX without CUDA: tests/lib/nvtx_fixture, an ordinary
 * NVTX v3 program (its NVTX side is tests/lib/nvtx_loader.c, the protocol
 * written from NVTX's documentation, so no CUDA toolkit is needed), run with
 * NVTX_INJECTION64_PATH=libxprobe.so and the XPROBE_INSPECT_* environment.  The session must hold exactly the ranges
 * and marks the fixture says it made: names, threads, push levels, process
 * range ids (ended on another thread), the Ex ASCII forms, a wide Ex
 * message tracked without its name, a 200-byte name cut to 127.
 *
 * Three ways to run it:
 *   injection            the session begins at the first NVTX call (the
 *                        loader dlopens libxprobe then), ends at exit
 *   injection + preload  the session begins when the process starts
 *   preload alone        a session, but no NVTX in it: preloading does not
 *                        route NVTX (the fixture sees NVTX's no-op levels)
 */
#include <stdlib.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];

struct fixture_report {
	unsigned long tid_main, tid_a, tid_b;
	char levels[8];
	int push, pop, start, end, mark;
	unsigned long long first_ns;
};

static int parse_report(const char *path, struct fixture_report *f)
{
	char buf[4096], *p;

	memset(f, 0, sizeof(*f));
	if (!lt_read_file(path, buf, sizeof(buf)))
		return -1;
#define GET(key, fmt, dst)                                            \
	do {                                                          \
		p = strstr(buf, key " ");                             \
		if (!p || sscanf(p + strlen(key) + 1, fmt, dst) != 1) \
			return -1;                                    \
	} while (0)
	GET("TID_MAIN", "%lu", &f->tid_main);
	GET("TID_A", "%lu", &f->tid_a);
	GET("TID_B", "%lu", &f->tid_b);
	GET("LEVELS", "%7s", f->levels);
	GET("PUSH", "%d", &f->push);
	GET("POP", "%d", &f->pop);
	GET("START", "%d", &f->start);
	GET("END", "%d", &f->end);
	GET("MARK", "%d", &f->mark);
	GET("FIRST_NVTX_NS", "%llu", &f->first_ns);
#undef GET
	return 0;
}

static int run_fixture(const char *tag, bool inject, bool preload, bool sleep_first,
		       struct fixture_report *rep, char *session, size_t session_len)
{
	static char env_inject[PATH_MAX + 32], env_preload[PATH_MAX + 32], env_dir[PATH_MAX];
	char exe[PATH_MAX], lib[PATH_MAX], out[PATH_MAX], base[PATH_MAX];
	const char *env[8];
	char *argv[3];
	int n = 0, st;

	lt_build_path(exe, sizeof(exe), "tests/lib/nvtx_fixture");
	lt_build_path(lib, sizeof(lib), "lib/libxprobe.so");
	if (access(exe, X_OK) != 0) {
		fprintf(stderr, "%s missing: build the xpl_nvtx_fixture target\n", exe);
		return -1;
	}
	snprintf(base, sizeof(base), "%s/%s", scratch, tag);
	snprintf(out, sizeof(out), "%s/%s.out", scratch, tag);
	snprintf(env_inject, sizeof(env_inject), "NVTX_INJECTION64_PATH=%s", lib);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", lib);
	snprintf(env_dir, sizeof(env_dir), "XPROBE_INSPECT_OUTPUT_DIR=%s", base);
	env[n++] = "XPROBE_INSPECT_ENABLE=1";
	env[n++] = env_dir;
	env[n++] = "XPROBE_INSPECT_ACTIVITIES=system_profile";
	env[n++] = "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0";
	if (inject)
		env[n++] = env_inject;
	if (preload)
		env[n++] = env_preload;
	env[n] = NULL;
	argv[0] = exe;
	argv[1] = sleep_first ? (char *)"sleep" : (char *)"nosleep";
	argv[2] = NULL;
	st = lt_run(argv, env, out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (parse_report(out, rep)) {
		fprintf(stderr, "%s: fixture report unreadable\n", tag);
		return -1;
	}
	return lt_find_session(base, session, session_len);
}

struct seen {
	int push, pop, start, end, mark;
	int outer_level0, inner_level1, levels_bad;
	int wide_unsupported, long_cut, ex_push, ex_mark, ex_span;
	int end_on_main, span_on_b;
	uint64_t first_nvtx_ts, session_begin_ts;
};

static void walk(const struct xprobe_xtf *x, const struct fixture_report *f, struct seen *s)
{
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	uint64_t span_ids[1024];
	size_t nspan = 0;

	memset(s, 0, sizeof(*s));
	xprobe_xtf_get_info(x, &in);
	/* the span ids first: their ends may sit in a stream visited earlier */
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream st;
		size_t cur = 0;
		const struct xprobe_record *r;

		xprobe_xtf_get_stream(x, i, &st);
		while ((r = xprobe_xtf_next_record(&st, &cur)))
			if (r->type == XPROBE_EV_NVTX_START && r->name_len == 4 &&
			    !memcmp((const char *)r + 40, "span", 4) && nspan < 1024)
				span_ids[nspan++] = r->a0;
	}
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream st;
		size_t cur = 0;
		const struct xprobe_record *r;

		xprobe_xtf_get_stream(x, i, &st);
		while ((r = xprobe_xtf_next_record(&st, &cur))) {
			const char *name = (const char *)r + 40;
			bool is = r->type >= XPROBE_EV_NVTX_PUSH && r->type <= XPROBE_EV_NVTX_MARK;

			if (r->type == XPROBE_EV_SESSION_BEGIN)
				s->session_begin_ts = r->ts;
			if (is && (!s->first_nvtx_ts || r->ts < s->first_nvtx_ts))
				s->first_nvtx_ts = r->ts;
			switch (r->type) {
			case XPROBE_EV_NVTX_PUSH:
				s->push++;
				if (r->name_len == 5 && !memcmp(name, "outer", 5)) {
					s->outer_level0 += r->aux == 0 && r->tid == f->tid_a;
					s->levels_bad += r->aux != 0;
				}
				if (r->name_len == 5 && !memcmp(name, "inner", 5)) {
					s->inner_level1 += r->aux == 1 && r->tid == f->tid_a;
					s->levels_bad += r->aux != 1;
				}
				if (r->flags & XPROBE_RECF_NAME_UNSUPPORTED)
					s->wide_unsupported += r->name_len == 0;
				if (r->name_len == 127 && !(r->flags & XPROBE_RECF_NAME_COMPLETE) &&
				    name[0] == 'L' && name[126] == 'L')
					s->long_cut++;
				if (r->name_len == 7 && !memcmp(name, "ex_push", 7))
					s->ex_push++;
				break;
			case XPROBE_EV_NVTX_POP:
				s->pop++;
				break;
			case XPROBE_EV_NVTX_START:
				s->start++;
				if (r->name_len == 4 && !memcmp(name, "span", 4))
					s->span_on_b += r->tid == f->tid_b;
				if (r->name_len == 7 && !memcmp(name, "ex_span", 7))
					s->ex_span++;
				CHECK(r->a0 != 0);
				break;
			case XPROBE_EV_NVTX_END:
				s->end++;
				for (size_t k = 0; k < nspan; k++)
					if (span_ids[k] == r->a0)
						s->end_on_main += r->tid == f->tid_main;
				break;
			case XPROBE_EV_NVTX_MARK:
				s->mark++;
				if (r->name_len == 7 && !memcmp(name, "ex_mark", 7))
					s->ex_mark++;
				break;
			}
		}
	}
}

static void check_full(const char *tag, bool preload)
{
	struct fixture_report f;
	struct xprobe_session *s = NULL;
	struct seen n;
	char dir[PATH_MAX], err[512];

	if (run_fixture(tag, true, preload, preload, &f, dir, sizeof(dir))) {
		CHECK(!"fixture ran and left one session");
		return;
	}
	CHECK_STR(f.levels, "ok"); /* the injection answered push/pop */
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	if (!s) {
		fprintf(stderr, "%s: %s\n", tag, err);
		return;
	}
	{
		const struct xprobe_xtf *nt = lt_file(s, "ntrace.pb");
		struct xprobe_xtf_info in = { .sz = sizeof(in) };

		CHECK(nt != NULL);
		if (!nt)
			goto out;
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_STR(in.stop_reason, "atexit");
		walk(nt, &f, &n);
		CHECK(n.push == f.push && n.pop == f.pop);
		CHECK(n.start == f.start && n.end == f.end && n.mark == f.mark);
		CHECK(n.outer_level0 == 100 && n.inner_level1 == 100 && n.levels_bad == 0);
		CHECK(n.span_on_b == 100 && n.end_on_main == 100);
		CHECK(n.wide_unsupported == 1 && n.long_cut == 1);
		CHECK(n.ex_push == 1 && n.ex_mark == 1 && n.ex_span == 1);
		if (preload) {
			/* began when the process started, ~50 ms before the first NVTX call */
			CHECK(n.session_begin_ts + 40000000ull < n.first_nvtx_ts);
			CHECK(n.session_begin_ts < f.first_ns);
		} else {
			/* began inside the first NVTX call, when the loader dlopened us */
			CHECK(n.session_begin_ts >= f.first_ns);
			CHECK(n.session_begin_ts <= n.first_nvtx_ts);
		}
	}
out:
	xprobe_session_close(s);
}

static void test_preload_alone(void)
{
	struct fixture_report f;
	struct xprobe_session *s = NULL;
	char dir[PATH_MAX], err[512];

	if (run_fixture("preload_only", false, true, false, &f, dir, sizeof(dir))) {
		CHECK(!"fixture ran and left one session");
		return;
	}
	CHECK_STR(f.levels, "bad"); /* NVTX's own no-op answers */
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	if (s) {
		const struct xprobe_xtf *nt = lt_file(s, "ntrace.pb");

		CHECK_EQ_U64(lt_count(nt, XPROBE_EV_NVTX_PUSH) + lt_count(nt, XPROBE_EV_NVTX_MARK) +
				     lt_count(nt, XPROBE_EV_NVTX_START),
			     0);
		CHECK_EQ_U64(lt_count(nt, XPROBE_EV_SESSION_BEGIN), 1);
	}
	xprobe_session_close(s);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "nvtx");
	check_full("inject", false);
	check_full("inject_preload", true);
	test_preload_alone();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
