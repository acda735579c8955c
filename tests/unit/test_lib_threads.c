/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_threads.c - the multi-threaded recorder: threads record while
 * the main thread fetches, threads come and go (slots reused), and a stop
 * lands while every thread is still recording.  The accounting must be
 * exact: every record a call reported as recorded is either fetched or in
 * ntrace.pb, exactly once, in its thread's order; everything else was
 * reported as dropped or not active.
 *
 * Run in the plain and ASan builds like every unit test, and under
 * ThreadSanitizer by `make test-tsan` (build-tsan, -DXPROBE_TSAN=ON), where
 * the producers' fences are seq_cst instead of membarrier-based.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

#define NTHREADS 4
#define PER_THREAD 40000
#define MAXT 16

static char scratch[PATH_MAX];
static _Atomic int stop_flag;

struct worker {
	pthread_t th;
	uint32_t idx;
	uint32_t tid;
	uint64_t ok; /* records reported recorded */
	uint64_t dropped; /* reported dropped */
	uint64_t inactive; /* reported not active */
	uint64_t n; /* records attempted (bounded run) */
	_Atomic int saw_stop; /* a record reported not active */
};

/* what the consumer saw, per worker index */
static uint64_t seen[MAXT];
static uint64_t next_seq[MAXT];
static int order_errors;

static void *work_bounded(void *arg)
{
	struct worker *w = arg;

	w->tid = (uint32_t)gettid();
	for (uint64_t i = 0; i < w->n; i++) {
		int rc = xprobe_trace_record(w->idx, w->idx, i);

		if (rc == 0)
			w->ok++;
		else if (rc == -XPROBE_E_EVENTS_DROPPED)
			w->dropped++;
		else
			w->inactive++;
		if (i % 1000 == 0)
			xprobe_trace_mark("progress");
	}
	return NULL;
}

static void *work_until_stopped(void *arg)
{
	struct worker *w = arg;

	w->tid = (uint32_t)gettid();
	while (!atomic_load(&stop_flag)) {
		int rc = xprobe_trace_record(w->idx, w->idx, w->n++);

		if (rc == 0)
			w->ok++;
		else if (rc == -XPROBE_E_EVENTS_DROPPED)
			w->dropped++;
		else {
			w->inactive++;
			atomic_store(&w->saw_stop, 1);
		}
	}
	return NULL;
}

/* A user record: check its thread's sequence only grows. */
static void account(const struct xprobe_record *r)
{
	if (r->type != XPROBE_EV_USER || r->aux >= MAXT)
		return;
	if (r->a1 < next_seq[r->aux])
		order_errors++;
	next_seq[r->aux] = r->a1 + 1;
	seen[r->aux]++;
}

static void drain(uint8_t *buf, size_t size)
{
	size_t len, n;

	while (xprobe_inspect_fetch(NULL, buf, size, &len, &n) == 0 && n) {
		for (size_t o = 0; o < len;) {
			const struct xprobe_record *r = (const void *)(buf + o);

			account(r);
			o += r->size;
		}
	}
}

static void read_file_records(const char *dir)
{
	struct xprobe_session *s = NULL;
	char err[256];

	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	{
		const struct xprobe_xtf *nt = lt_file(s, "ntrace.pb");
		struct xprobe_xtf_info in = { .sz = sizeof(in) };

		CHECK(nt != NULL);
		xprobe_xtf_get_info(nt, &in);
		for (size_t i = 0; i < in.streams; i++) {
			struct xprobe_xtf_stream st;
			size_t cur = 0;
			const struct xprobe_record *r;

			xprobe_xtf_get_stream(nt, i, &st);
			while ((r = xprobe_xtf_next_record(&st, &cur)))
				account(r);
		}
	}
	xprobe_session_close(s);
}

static struct xprobe_inspect_config *cfg(const char *base)
{
	struct xprobe_inspect_config *c = NULL;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	xprobe_inspect_config_set_ring_events(c, 4096); /* small: fetch and drops both happen */
	return c;
}

static void test_fetch_while_recording(void)
{
	struct xprobe_inspect_config *c = cfg("fetching");
	static uint8_t buf[1 << 16];
	struct worker w[MAXT];
	char dir[PATH_MAX];
	uint64_t ok = 0, dropped = 0, total_seen = 0;

	memset(w, 0, sizeof(w));
	memset(seen, 0, sizeof(seen));
	memset(next_seq, 0, sizeof(next_seq));
	order_errors = 0;
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	/* two waves: the second wave's threads reuse the first wave's slots */
	for (int wave = 0; wave < 2; wave++) {
		for (uint32_t i = 0; i < NTHREADS; i++) {
			struct worker *x = &w[wave * NTHREADS + i];

			x->idx = wave * NTHREADS + i;
			x->n = PER_THREAD;
			pthread_create(&x->th, NULL, work_bounded, x);
		}
		for (int k = 0; k < 200; k++)
			drain(buf, sizeof(buf));
		for (uint32_t i = 0; i < NTHREADS; i++)
			pthread_join(w[wave * NTHREADS + i].th, NULL);
	}
	drain(buf, sizeof(buf));
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_close() == 0);
	read_file_records(dir);
	for (int i = 0; i < 2 * NTHREADS; i++) {
		ok += w[i].ok;
		dropped += w[i].dropped;
		CHECK_EQ_U64(w[i].inactive, 0);
		CHECK_EQ_U64(w[i].ok + w[i].dropped, PER_THREAD);
		CHECK_EQ_U64(seen[i], w[i].ok); /* every recorded event, exactly once */
		total_seen += seen[i];
	}
	CHECK(order_errors == 0);
	CHECK_EQ_U64(total_seen, ok);
	fprintf(stderr, "threads: %llu recorded, %llu dropped (ring full), %llu seen\n",
		(unsigned long long)ok, (unsigned long long)dropped,
		(unsigned long long)total_seen);
	xprobe_inspect_config_free(c);
}

static void test_stop_under_load(void)
{
	struct xprobe_inspect_config *c = cfg("stopping");
	struct worker w[NTHREADS];
	char dir[PATH_MAX];

	memset(w, 0, sizeof(w));
	memset(seen, 0, sizeof(seen));
	memset(next_seq, 0, sizeof(next_seq));
	order_errors = 0;
	atomic_store(&stop_flag, 0);
	xprobe_inspect_config_set_ring_events(c, 1 << 16);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (uint32_t i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		pthread_create(&w[i].th, NULL, work_until_stopped, &w[i]);
	}
	usleep(20000);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_inspect_stop() == 0); /* while every thread records */
	/* let every thread see the stop (bounded: a loaded machine may not
	 * schedule them at once) */
	for (int k = 0; k < 5000; k++) {
		int all = 1;

		for (uint32_t i = 0; i < NTHREADS; i++)
			all &= atomic_load(&w[i].saw_stop);
		if (all)
			break;
		usleep(1000);
	}
	atomic_store(&stop_flag, 1);
	for (uint32_t i = 0; i < NTHREADS; i++)
		pthread_join(w[i].th, NULL);
	CHECK(xprobe_inspect_close() == 0);
	read_file_records(dir);
	for (uint32_t i = 0; i < NTHREADS; i++) {
		CHECK(w[i].inactive > 0); /* the stop was seen */
		CHECK_EQ_U64(seen[i], w[i].ok);
	}
	CHECK(order_errors == 0);
	xprobe_inspect_config_free(c);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "threads");
	test_fetch_while_recording();
	test_stop_under_load();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
