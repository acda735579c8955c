/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_record.c - libxprobe's direct record call and stop/serialize, for
 * bench/bench_lib.sh.  Linked against libxprobe.so.
 *
 *   bench_record direct N     session active (file-backed rings, big enough
 *                             for N records): N x xprobe_trace_record(type,
 *                             a0, a1) -> ns per call
 *   bench_record off N        no session: the same call when not tracing
 *   bench_record empty N      a non-inlined empty function with the same
 *                             arguments: the call floor
 *   bench_record rdtsc N      the TSC read alone
 *   bench_record floor N      the physical floor of a record: 40 bytes
 *                             written in sequence into a prefaulted buffer,
 *                             one of them rdtsc (no filter, no protocol)
 *   bench_record serialize N  record N events (one thread), then time
 *                             xprobe_inspect_stop() -> "bytes ns" of ntrace.pb
 *
 * Prints one line on stdout; exits non-zero if a record was dropped (the
 * cost of a drop is not the cost of a record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "xprobe/xprobe.h"

__attribute__((noinline)) int empty_call(uint32_t t, uint64_t a, uint64_t b)
{
	__asm__ __volatile__("" : : "r"(t), "r"(a), "r"(b) : "memory");
	return 0;
}

static int begin(long events, const char *dir)
{
	struct xprobe_inspect_config *c = NULL;
	uint64_t ring = 1024;
	int rc;

	while (ring < (uint64_t)events + 4096)
		ring <<= 1;
	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, dir);
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	xprobe_inspect_config_set_ring_events(c, ring);
	rc = xprobe_inspect_begin_with_options(c);
	xprobe_inspect_config_free(c);
	if (rc)
		fprintf(stderr, "begin: %s\n", xprobe_last_error());
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("BENCH_OUT") ? getenv("BENCH_OUT") : "/tmp/xp-bench-out";
	long n, bad = 0;
	double t0, t1;

	n = bench_args(argc, argv, 3);
	if (n < 0)
		return 2;
	if (!strcmp(argv[1], "empty")) {
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			empty_call(1, (uint64_t)i, (uint64_t)i);
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return 0;
	}
	if (!strcmp(argv[1], "rdtsc")) {
		uint64_t acc = 0;

		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			acc += __builtin_ia32_rdtsc();
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return acc == 1;
	}
	if (!strcmp(argv[1], "mono")) {
		uint64_t acc = 0;
		struct timespec ts;

		t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			acc += (uint64_t)ts.tv_nsec;
		}
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return acc == 1;
	}
	if (!strcmp(argv[1], "floor")) {
		size_t sz = (size_t)n * 40 + 4096;
		uint8_t *b =
			mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		volatile uint64_t head = 0;

		if (b == MAP_FAILED)
			return 3;
		memset(b, 0, sz); /* prefault */
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++) {
			uint64_t *r = (uint64_t *)(b + (size_t)i * 40);

			r[0] = 0x80028ull | (uint64_t)i << 32;
			r[1] = __builtin_ia32_rdtsc();
			r[2] = 1;
			r[3] = (uint64_t)i;
			r[4] = (uint64_t)i;
			head = (uint64_t)(i + 1) * 40;
		}
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		munmap(b, sz);
		return head == 0;
	}
	if (!strcmp(argv[1], "off")) {
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			bad += xprobe_trace_record(1, (uint64_t)i, (uint64_t)i) !=
			       -XPROBE_E_NOT_ACTIVE;
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return bad != 0;
	}
	if (begin(n, dir))
		return 3;
	/* the thread's first record attaches (and prefaults) its ring */
	xprobe_trace_record(0, 0, 0);
	if (!strcmp(argv[1], "direct")) {
		t0 = bench_now_ns();
		for (long i = 0; i < n; i++)
			bad += xprobe_trace_record(1, (uint64_t)i, (uint64_t)i) != 0;
		t1 = bench_now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		xprobe_inspect_close();
		return bad != 0;
	}
	if (!strcmp(argv[1], "serialize")) {
		char out[4096], path[4200];
		struct stat st;

		for (long i = 0; i < n; i++)
			bad += xprobe_trace_record(1, (uint64_t)i, (uint64_t)i) != 0;
		xprobe_inspect_get_output_dir(out, sizeof(out));
		t0 = bench_now_ns();
		if (xprobe_inspect_stop() != 0)
			return 4;
		t1 = bench_now_ns();
		snprintf(path, sizeof(path), "%s/ntrace.pb", out);
		if (stat(path, &st) != 0)
			return 5;
		printf("%lld %.0f\n", (long long)st.st_size, t1 - t0);
		xprobe_inspect_close();
		return bad != 0;
	}
	return 2;
}
