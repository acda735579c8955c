/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_session.c - the inspect session: begin/stop/close lifecycle and
 * its misuse codes, the output tree (default ./output, mkdir -p, the two
 * reserved cases with their own codes and messages), what a session writes
 * (host records, type filter, drops, samples, trace_info), fetch (records
 * and JSON, each event once, truncation), ring limits, the environment
 * door (begin reads it, begin-with-options does not), the monitor.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];

static struct xprobe_inspect_config *cfg_at(const char *base)
{
	struct xprobe_inspect_config *c = NULL;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_instance_id(c, "unit");
	xprobe_inspect_config_set_monitor_period_ms(c, 20);
	return c;
}

static void test_lifecycle(void)
{
	struct xprobe_inspect_config *c = cfg_at("lifecycle");
	char dir[PATH_MAX], dir2[PATH_MAX], want[PATH_MAX];
	struct stat st;

	CHECK(xprobe_inspect_stop() == -XPROBE_E_NOT_ACTIVE || xprobe_inspect_stop() == 0);
	CHECK(xprobe_inspect_close() == 0); /* nothing to close */
	CHECK(xprobe_inspect_stop() == -XPROBE_E_NOT_ACTIVE);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) == -XPROBE_E_NOT_ACTIVE);
	CHECK(xprobe_inspect_is_active() == 0);

	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_is_active() == 1);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(strstr(xprobe_last_error(), "already recording") != NULL);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	snprintf(want, sizeof(want), "lifecycle/unit-%d/", (int)getpid());
	CHECK(strncmp(dir, want, strlen(want)) == 0);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	CHECK(xprobe_inspect_get_output_dir(dir2, 5) == -XPROBE_E_TRUNCATED);
	CHECK(strlen(dir2) == 4);
	CHECK(xprobe_inspect_get_output_dir(NULL, 5) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_get_output_dir(dir2, 0) == -XPROBE_E_INVALID_ARGUMENT);

	/* stop is idempotent; close after stop is fine; the dir stays readable */
	CHECK(xprobe_inspect_stop() == 0);
	CHECK(xprobe_inspect_is_active() == 0);
	CHECK(xprobe_inspect_stop() == 0);
	CHECK(lt_exists(dir, "trace_info.pb"));
	CHECK(lt_exists(dir, "ntrace.pb"));
	CHECK(lt_exists(dir, "cpu_util.pb"));
	CHECK(lt_exists(dir, "host_mem.pb"));
	CHECK(!lt_exists(dir, "host_rings.live")); /* harvested and removed */
	CHECK(xprobe_inspect_get_output_dir(dir2, sizeof(dir2)) > 0);
	CHECK_STR(dir2, dir);
	/* begin again after a stop: a new session directory */
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir2, sizeof(dir2)) > 0);
	CHECK(strcmp(dir, dir2) != 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_inspect_get_output_dir(dir2, sizeof(dir2)) == -XPROBE_E_NOT_ACTIVE);

	/* a disabled config begins nothing */
	xprobe_inspect_config_set_enable(c, false);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_is_active() == 0);
	CHECK(xprobe_inspect_get_output_dir(dir2, sizeof(dir2)) == -XPROBE_E_NOT_ACTIVE);
	xprobe_inspect_config_free(c);
}

static void test_output_dirs(void)
{
	struct xprobe_inspect_config *c = cfg_at("");
	char dir[PATH_MAX], msg_devnull[512], msg_file[512], want[PATH_MAX];
	FILE *f;

	/* empty -> ./output */
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	snprintf(want, sizeof(want), "./output/unit-%d/", (int)getpid());
	CHECK(strncmp(dir, want, strlen(want)) == 0);
	CHECK(xprobe_inspect_close() == 0);

	/* mkdir -p of a deep base */
	xprobe_inspect_config_set_output_dir(c, "deep/a/b/c");
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(strncmp(dir, "deep/a/b/c/unit-", 16) == 0);
	CHECK(xprobe_inspect_close() == 0);

	/* /dev/null: its own code and a sentence about /dev/null */
	xprobe_inspect_config_set_output_dir(c, "/dev/null");
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_OUTPUT_NOT_DIRECTORY);
	snprintf(msg_devnull, sizeof(msg_devnull), "%s", xprobe_last_error());
	CHECK(strstr(msg_devnull, "/dev/null") && strstr(msg_devnull, "null device"));
	CHECK(xprobe_inspect_is_active() == 0);

	/* another non-directory: same code, a different, accurate sentence */
	f = fopen("plainfile", "w");
	fclose(f);
	xprobe_inspect_config_set_output_dir(c, "plainfile");
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_OUTPUT_NOT_DIRECTORY);
	snprintf(msg_file, sizeof(msg_file), "%s", xprobe_last_error());
	CHECK(strstr(msg_file, "regular file") != NULL);
	CHECK(strcmp(msg_file, msg_devnull) != 0);

	/* the on-fail salvage name: a different code and sentence */
	xprobe_inspect_config_set_output_dir(c, "somewhere/on_fail");
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_RESERVED_OUTPUT_DIR);
	CHECK(strstr(xprobe_last_error(), "salvage") != NULL);
	xprobe_inspect_config_set_output_dir(c, "somewhere/on_fail/");
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_RESERVED_OUTPUT_DIR);
	/* a name merely containing it is fine */
	xprobe_inspect_config_set_output_dir(c, "somewhere/on_failure");
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_close() == 0);

	/* mkdir failure: a file in the middle of the path */
	xprobe_inspect_config_set_output_dir(c, "plainfile/sub");
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_OUTPUT_FAILED);
	CHECK(strstr(xprobe_last_error(), "plainfile") != NULL);
	xprobe_inspect_config_free(c);
}

static const struct xprobe_session *open_dir(const char *dir, struct xprobe_session **s)
{
	char err[512];

	*s = NULL;
	CHECK(xprobe_session_open(dir, s, err, sizeof(err)) == 0);
	if (!*s)
		fprintf(stderr, "session_open %s: %s\n", dir, err);
	return *s;
}

static void test_contents_and_filter(void)
{
	struct xprobe_inspect_config *c = cfg_at("contents");
	struct xprobe_session *s;
	const struct xprobe_xtf *nt, *ti;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	char dir[PATH_MAX], longname[300];
	uint64_t prev_ts = 0;
	int bad = 0;

	xprobe_inspect_config_set_session_id(c, 77);
	xprobe_inspect_config_set_capture_enabled_for_event_type(c, "nvtx_mark", false);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (uint64_t i = 0; i < 5000; i++)
		CHECK(xprobe_trace_record(9, i, i * i) == 0);
	CHECK(xprobe_trace_mark("filtered") == -XPROBE_E_NOT_ACTIVE);
	CHECK(xprobe_trace_mark(NULL) == -XPROBE_E_INVALID_ARGUMENT);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_trace_record(1, 2, 3) == -XPROBE_E_NOT_ACTIVE); /* no session */

	if (!open_dir(dir, &s))
		goto out;
	nt = lt_file(s, "ntrace.pb");
	ti = lt_file(s, "trace_info.pb");
	CHECK(nt && ti && lt_file(s, "cpu_util.pb") && lt_file(s, "host_mem.pb"));
	if (!nt || !ti)
		goto out;
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_USER), 5000);
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_NVTX_MARK), 0);
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_SESSION_BEGIN), 1);
	CHECK_EQ_U64(lt_count(nt, XPROBE_EV_SESSION_END), 1);
	/* payload and order: one thread, its records in order, ts monotonic */
	{
		struct xprobe_xtf_stream st;
		size_t cur = 0;
		const struct xprobe_record *r;
		uint64_t i = 0;

		CHECK(xprobe_xtf_get_stream(nt, 0, &st) == 0);
		CHECK_EQ_U64(st.tid, (uint32_t)gettid());
		while ((r = xprobe_xtf_next_record(&st, &cur))) {
			if (r->ts < prev_ts)
				bad++;
			prev_ts = r->ts;
			if (r->type == XPROBE_EV_SESSION_BEGIN)
				CHECK_EQ_U64(r->a0, 77);
			if (r->type != XPROBE_EV_USER)
				continue;
			if (r->aux != 9 || r->a0 != i || r->a1 != i * i)
				bad++;
			i++;
		}
		CHECK(bad == 0);
	}
	/* timestamps are CLOCK_MONOTONIC ns: near now */
	{
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		CHECK(prev_ts <= (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
		CHECK(prev_ts + 60ull * 1000000000ull >
		      (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	}
	CHECK(xprobe_xtf_get_info(ti, &in) == 0);
	CHECK_STR(in.stop_reason, "close");
	CHECK_EQ_U64(in.host_events, 5002); /* 5000 + session begin + end */
	CHECK_EQ_U64(in.host_dropped, 0);
	CHECK_EQ_U64(in.threads, 1);
	CHECK(in.complete);
	CHECK_STR(in.backend, "none");
	CHECK(!in.simulated);
	CHECK_EQ_U64(in.files, 3);
	CHECK_EQ_U64(in.pid, (uint64_t)getpid());
	CHECK(in.process_start_time > 0);
	{
		struct xprobe_xtf_info ci = { .sz = sizeof(ci) };

		CHECK(xprobe_xtf_get_info(lt_file(s, "cpu_util.pb"), &ci) == 0);
		CHECK(ci.records >= 2); /* one at start, one at stop */
	}
out:
	xprobe_session_close(s);

	/* names: a long one is cut at 127 bytes on a UTF-8 boundary */
	xprobe_inspect_config_set_capture_enabled_for_event_type(c, "all", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	memset(longname, 'n', 126);
	memcpy(longname + 126, "\xc3\xa9tail", 6); /* 'é' straddles the bound */
	longname[132] = '\0';
	CHECK(xprobe_trace_mark(longname) == 0);
	CHECK(xprobe_trace_mark("short") == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_close() == 0);
	if (open_dir(dir, &s)) {
		struct xprobe_xtf_stream st;
		size_t cur = 0;
		const struct xprobe_record *r;
		int marks = 0;

		xprobe_xtf_get_stream(lt_file(s, "ntrace.pb"), 0, &st);
		while ((r = xprobe_xtf_next_record(&st, &cur))) {
			if (r->type != XPROBE_EV_NVTX_MARK)
				continue;
			if (marks++ == 0) {
				CHECK_EQ_U64(r->name_len, 126);
				CHECK(!(r->flags & XPROBE_RECF_NAME_COMPLETE));
			} else {
				CHECK_EQ_U64(r->name_len, 5);
				CHECK(r->flags & XPROBE_RECF_NAME_COMPLETE);
				CHECK(!memcmp((const char *)r + 40, "short", 5));
			}
		}
		CHECK(marks == 2);
	}
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
}

static void test_fetch(void)
{
	struct xprobe_inspect_config *c = cfg_at("fetch");
	static uint8_t buf[1 << 20];
	struct xprobe_session *s;
	size_t len = 0, n = 0, total = 0;
	char dir[PATH_MAX];

	CHECK(xprobe_inspect_fetch(NULL, buf, sizeof(buf), &len, &n) == -XPROBE_E_NOT_ACTIVE);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_fetch(NULL, NULL, sizeof(buf), &len, &n) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_fetch(NULL, buf, sizeof(buf), NULL, &n) == -XPROBE_E_INVALID_ARGUMENT);
	{
		XPROBE_OPTS(xprobe_fetch_opts, o, .format = 7);
		CHECK(xprobe_inspect_fetch(&o, buf, sizeof(buf), &len, &n) ==
		      -XPROBE_E_INVALID_ARGUMENT);
	}
	/* the session-begin event is there already */
	CHECK(xprobe_inspect_fetch(NULL, buf, sizeof(buf), &len, &n) == 0);
	CHECK_EQ_U64(n, 1);
	CHECK(((struct xprobe_record *)buf)->type == XPROBE_EV_SESSION_BEGIN);
	CHECK(xprobe_inspect_fetch(NULL, buf, sizeof(buf), &len, &n) == 0);
	CHECK_EQ_U64(n, 0); /* each event once */
	for (int i = 0; i < 100; i++)
		xprobe_trace_record(1, (uint64_t)i, 0);
	/* too small for one record: nothing consumed */
	CHECK(xprobe_inspect_fetch(NULL, buf, 39, &len, &n) == -XPROBE_E_TRUNCATED);
	CHECK(len == 0 && n == 0);
	/* records: whole ones, in order; 10 at a time with max_events */
	{
		XPROBE_OPTS(xprobe_fetch_opts, o, .max_events = 10);
		uint64_t expect = 0;

		while (total < 60) {
			CHECK(xprobe_inspect_fetch(&o, buf, sizeof(buf), &len, &n) == 0);
			CHECK_EQ_U64(n, 10);
			CHECK_EQ_U64(len, 10 * 40);
			for (size_t i = 0; i < n; i++) {
				const struct xprobe_record *r = (const void *)(buf + i * 40);

				CHECK(r->type == XPROBE_EV_USER && r->a0 == expect);
				expect++;
			}
			total += n;
		}
	}
	/* JSON lines for the rest */
	{
		XPROBE_OPTS(xprobe_fetch_opts, o, .format = XPROBE_FETCH_JSON);
		char *line;

		CHECK(xprobe_inspect_fetch(&o, buf, sizeof(buf), &len, &n) == 0);
		CHECK_EQ_U64(n, 40);
		buf[len] = '\0';
		line = (char *)buf;
		CHECK(strncmp(line, "{\"type\":\"user\",\"ts_ns\":", 23) == 0);
		CHECK(strstr(line, "\"a0\":60,") != NULL);
		CHECK(strstr(line, "\"name\":null") != NULL);
		total += n;
	}
	CHECK(xprobe_trace_mark("after") == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_close() == 0);
	/* fetched events are not written again; trace_info counts them */
	if (open_dir(dir, &s)) {
		struct xprobe_xtf_info in = { .sz = sizeof(in) };

		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_USER), 0);
		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_NVTX_MARK), 1);
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_EQ_U64(in.fetched_events, 101);
	}
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
}

static void test_ring_full_and_threads(void)
{
	struct xprobe_inspect_config *c = cfg_at("full");
	struct xprobe_session *s;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	char dir[PATH_MAX];
	int dropped = 0, ok = 0;

	xprobe_inspect_config_set_ring_events(c, 1024); /* 64 KiB: 1638 40-byte records */
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 3000; i++) {
		int rc = xprobe_trace_record(2, (uint64_t)i, 0);

		if (rc == 0)
			ok++;
		else if (rc == -XPROBE_E_EVENTS_DROPPED)
			dropped++;
	}
	CHECK(ok + dropped == 3000);
	CHECK(ok == 65536 / 40 - 1); /* the session-begin record took one slot */
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_close() == 0);
	if (open_dir(dir, &s)) {
		CHECK(lt_file(s, "cpu_util.pb") == NULL); /* activity off: no file */
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_EQ_U64(in.host_dropped, (uint64_t)dropped + 1); /* + the session-end record */
		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_USER), (uint64_t)ok);
	}
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
}

static void test_env(void)
{
	struct xprobe_inspect_config *c = cfg_at("opts_dir");
	char dir[PATH_MAX];

	setenv("XPROBE_INSPECT_OUTPUT_DIR", "env_dir", 1);
	setenv("XPROBE_INSPECT_INSTANCE_ID", "envinst", 1);
	setenv("XPROBE_INSPECT_ACTIVITIES", "system_profile", 1);
	/* begin-with-options ignores the environment */
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(strncmp(dir, "opts_dir/unit-", 14) == 0);
	CHECK(xprobe_inspect_close() == 0);
	/* begin reads it */
	CHECK(xprobe_inspect_begin() == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(strncmp(dir, "env_dir/envinst-", 16) == 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(!lt_exists(dir, "cpu_util.pb"));
	/* a bad variable: the error names it, nothing begins */
	setenv("XPROBE_INSPECT_RING_EVENTS", "lots", 1);
	CHECK(xprobe_inspect_begin() == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(xprobe_last_error(), "XPROBE_INSPECT_RING_EVENTS=lots") != NULL);
	CHECK(xprobe_inspect_is_active() == 0);
	unsetenv("XPROBE_INSPECT_RING_EVENTS");
	setenv("XPROBE_INSPECT_ACTIVITIES", "system_profile,gpu", 1);
	CHECK(xprobe_inspect_begin() == -XPROBE_E_UNKNOWN_NAME);
	CHECK(strstr(xprobe_last_error(), "XPROBE_INSPECT_ACTIVITIES") != NULL);
	setenv("XPROBE_INSPECT_ACTIVITIES", "system_profile", 1);
	setenv("XPROBE_INSPECT_DEVICES", "0,3-x", 1);
	CHECK(xprobe_inspect_begin() == -XPROBE_E_INVALID_ARGUMENT);
	unsetenv("XPROBE_INSPECT_DEVICES");
	setenv("XPROBE_INSPECT_ENABLE", "maybe", 1);
	CHECK(xprobe_inspect_begin() == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(xprobe_last_error(), "XPROBE_INSPECT_ENABLE") != NULL);
	setenv("XPROBE_INSPECT_ENABLE", "0", 1);
	CHECK(xprobe_inspect_begin() == 0); /* disabled: nothing */
	CHECK(xprobe_inspect_is_active() == 0);
	unsetenv("XPROBE_INSPECT_ENABLE");
	unsetenv("XPROBE_INSPECT_OUTPUT_DIR");
	unsetenv("XPROBE_INSPECT_INSTANCE_ID");
	unsetenv("XPROBE_INSPECT_ACTIVITIES");
	xprobe_inspect_config_free(c);
}

static void test_anon_backing(void)
{
	struct xprobe_inspect_config *c = cfg_at("anon");
	struct xprobe_session *s;
	char dir[PATH_MAX];

	xprobe_inspect_config_set_ring_backing(c, XPROBE_RING_ANON);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(!lt_exists(dir, "host_rings.live"));
	CHECK(xprobe_trace_record(1, 1, 1) == 0);
	CHECK(xprobe_inspect_close() == 0);
	if (open_dir(dir, &s))
		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_USER), 1);
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
}

static char last_warning[512];

static void keep_warning(enum xprobe_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == XPROBE_LOG_WARN && strstr(msg, "ntrace.pb"))
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

/*
 * The note of a failed ntrace.pb write says what is true: with anonymous
 * rings there is no host_rings.live to recover from (before, it said the
 * file was kept).  The write fails in a child whose file size limit is 0.
 */
static void test_anon_write_failure_note(void)
{
	struct xprobe_inspect_config *c = cfg_at("anon_fail");
	int status = 0;
	pid_t p;

	xprobe_inspect_config_set_ring_backing(c, XPROBE_RING_ANON);
	p = fork();
	if (p == 0) {
		struct rlimit rl = { 0, 0 };

		xprobe_set_log_fn(keep_warning, NULL);
		signal(SIGXFSZ, SIG_IGN);
		if (xprobe_inspect_begin_with_options(c) || xprobe_trace_record(1, 1, 1))
			_exit(2);
		setrlimit(RLIMIT_FSIZE, &rl);
		xprobe_inspect_close();
		_exit(strstr(last_warning, "could not write ntrace.pb") &&
				      strstr(last_warning, "anonymous memory") &&
				      !strstr(last_warning, "host_rings.live") ?
			      0 :
			      3);
	}
	CHECK(p > 0 && waitpid(p, &status, 0) == p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	xprobe_inspect_config_free(c);
}

/* Device profiling without a backend named: the message names the ones
 * this build has (before: "'cupti' is not in this build" in builds that
 * have it). */
static void test_no_backend_message(void)
{
	struct xprobe_inspect_config *c = cfg_at("nobackend");

	xprobe_inspect_config_set_activity(c, "device_profile", true);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_BACKEND_UNAVAILABLE);
	CHECK(strstr(xprobe_last_error(), "'cupti' (NVIDIA GPUs) or 'sim'") != NULL);
	CHECK(strstr(xprobe_last_error(), "not in this build") == NULL);
	xprobe_inspect_config_free(c);
}

/* A forked child records nothing into the parent's (shared) rings and its
 * exit does not stop the parent's session. */
static void test_fork(void)
{
	struct xprobe_inspect_config *c = cfg_at("fork");
	struct xprobe_session *s;
	char dir[PATH_MAX];
	pid_t pid;
	int st = 0;

	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_trace_record(1, 1, 0) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	pid = fork();
	if (pid == 0) {
		int bad = xprobe_trace_record(1, 99, 0) != -XPROBE_E_NOT_ACTIVE;

		bad |= xprobe_inspect_is_active();
		exit(bad ? 1 : 0); /* runs atexit: must not touch the parent's session */
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(!lt_exists(dir, "trace_info.pb"));
	CHECK(xprobe_trace_record(1, 2, 0) == 0);
	CHECK(xprobe_inspect_close() == 0);
	if (open_dir(dir, &s)) {
		struct xprobe_xtf_info in = { .sz = sizeof(in) };

		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_USER), 2);
		xprobe_xtf_get_info(lt_file(s, "trace_info.pb"), &in);
		CHECK_STR(in.stop_reason, "close");
	}
	xprobe_session_close(s);
	xprobe_inspect_config_free(c);
}

/* A thread records once (it attaches a ring: reserved in the ring file). */
static void *record_once(void *arg)
{
	(void)arg;
	xprobe_trace_record(1, 2, 0);
	return NULL;
}

/*
 * The program replaces the session's descriptors with a file of its own
 * (a daemon closes every descriptor and opens its own): a thread that
 * attaches a ring afterwards is not reserved through the reused number
 * (that would grow the program's file), the stop writes every file through
 * the directory opened again by its path and says so in a note, and the
 * program's file keeps its bytes and stays open at every number.
 */
static void test_reused_descriptors(void)
{
	struct xprobe_inspect_config *c = cfg_at("reused");
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	char dir[PATH_MAX], abs[PATH_MAX], rings[PATH_MAX + 32], tmpl[] = "/tmp/xpl-reused-XXXXXX";
	char link[PATH_MAX + 32], p[64], buf[8];
	const struct xprobe_xtf *ti;
	struct xprobe_session *s;
	int reused[8], n = 0, keep, said = 0;
	struct stat st;
	pthread_t th;
	DIR *d;
	struct dirent *e;

	xprobe_inspect_config_set_ring_events(c, 1024);
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_trace_record(1, 1, 0) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	CHECK(realpath(dir, abs) != NULL); /* what /proc/self/fd/N says */
	snprintf(rings, sizeof(rings), "%s/host_rings.live", abs);
	keep = mkstemp(tmpl);
	CHECK(keep >= 0 && write(keep, "keep", 4) == 4);
	unlink(tmpl);
	d = opendir("/proc/self/fd");
	while (d && (e = readdir(d)) && n < 8) {
		int fd = atoi(e->d_name);
		ssize_t l;

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		l = readlink(p, link, sizeof(link) - 1);
		if (fd <= 2 || fd == keep || fd == dirfd(d) || l <= 0)
			continue;
		link[l] = '\0';
		if (!strcmp(link, abs) || !strcmp(link, rings)) {
			CHECK(dup2(keep, fd) == fd);
			reused[n++] = fd;
		}
	}
	if (d)
		closedir(d);
	CHECK(n == 2); /* the session directory and the ring file */
	CHECK(pthread_create(&th, NULL, record_once, NULL) == 0 && pthread_join(th, NULL) == 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(fstat(keep, &st) == 0 && st.st_size == 4);
	for (int i = 0; i < n; i++)
		CHECK(pread(reused[i], buf, 4, 0) == 4 && !memcmp(buf, "keep", 4));
	if (open_dir(dir, &s)) {
		ti = lt_file(s, "trace_info.pb");
		xprobe_xtf_get_info(ti, &in);
		CHECK_EQ_U64(in.threads_without_ring, 1); /* the thread after the reuse */
		CHECK_EQ_U64(lt_count(lt_file(s, "ntrace.pb"), XPROBE_EV_USER), 1);
		for (size_t i = 0; i < in.notes; i++)
			said |= strstr(xprobe_xtf_get_note(ti, i),
				       "descriptor was closed by the program; the directory was "
				       "opened again by its path") != NULL;
		CHECK(said);
	}
	xprobe_session_close(s);
	for (int i = 0; i < n; i++)
		close(reused[i]);
	close(keep);
	xprobe_inspect_config_free(c);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "session");
	test_lifecycle();
	test_output_dirs();
	test_contents_and_filter();
	test_fetch();
	test_ring_full_and_threads();
	test_env();
	test_anon_backing();
	test_anon_write_failure_note();
	test_no_backend_message();
	test_fork();
	test_reused_descriptors();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
