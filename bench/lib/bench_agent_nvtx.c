/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_agent_nvtx.c - what an NVTX push/pop pair costs an application
 * while `xprobe measure` has the Agent's capture armed in it: an ordinary
 * NVTX v3 program (not linked with libxprobe) run under
 * NVTX_INJECTION64_PATH=libxprobe.so, which drives its own Agent over the
 * real control socket the way the CLI does (tests/lib/agent_peer.h: HELLO,
 * ARM with one NVTX name rule, timed loop, STOP) and times
 * N x (nvtxRangePushA("bench"); nvtxRangePop()).
 *
 *   bench_agent_nvtx match N     rule exact "bench": every pair recorded
 *   bench_agent_nvtx reject N    rule exact "other": every pair refused by
 *                                the hot-path filter
 *   bench_agent_nvtx off N       nothing armed (the injected library's
 *                                unarmed cost)
 *   bench_agent_nvtx hist N      a HISTOGRAM capture (rule exact "bench"):
 *                                each pair paired in the target and
 *                                counted into the buckets, no record
 *
 * Prints "<ns per pair> <records dropped>".  Exits 1 when the capture does
 * not hold exactly what the loop did (match: 2 (N + warm-up) records, none
 * dropped; reject: none observed), 2 for bad arguments or no Agent.  Built
 * by bench/bench_lib.sh like bench_nvtx.c (NVIDIA's headers, or
 * tests/lib/nvtx_loader.c with -DXPL_OWN_NVTX_LOADER).
 */
#ifdef XPL_OWN_NVTX_LOADER
#include "nvtx_loader.h"
#else
#include <nvtx3/nvToolsExt.h>
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_peer.h"
#include "bench_util.h"

#define WARMUP 100

int main(int argc, char **argv)
{
	int (*sock_path)(char *, size_t);
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const char *lib = getenv("NVTX_INJECTION64_PATH");
	char path[256];
	double t0, t1;
	long n;
	int fd, mode;
	void *h;

	if (argc != 3)
		return 2;
	mode = !strcmp(argv[1], "match")  ? 1 :
	       !strcmp(argv[1], "reject") ? 2 :
	       !strcmp(argv[1], "off")	  ? 3 :
	       !strcmp(argv[1], "hist")	  ? 4 :
					    0;
	n = bench_count(argv[2]);
	if (!mode || n < 0 || !lib)
		return 2;
	nvtxMarkA("load"); /* the first NVTX call loads the injection */
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&sock_path = h ? dlsym(h, "xprobe_agent_socket_path") : NULL;
	if (!sock_path || sock_path(path, sizeof(path)) != 0) {
		fprintf(stderr, "bench_agent_nvtx: no Agent in this process\n");
		return 2;
	}
	fd = ap_connect(path);
	if (fd < 0 || ap_simple(fd, XPROBE_AGENT_OP_HELLO, 0, &r) != 0 ||
	    !(r.h.features & XPROBE_AGENT_F_NVTX_ROUTED)) {
		fprintf(stderr,
			"bench_agent_nvtx: the Agent does not answer or NVTX is not routed\n");
		return 2;
	}
	if (mode != 3) {
		ap_arm(&q, mode == 4 ? 1 : 2 * ((uint64_t)n + WARMUP));
		if (mode == 4) { /* the total only, 16 thread stacks */
			q.mode = XPROBE_AGENT_MODE_HISTOGRAM;
			q.offset = 16;
		}
		ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_EXACT,
			  mode == 2 ? "other" : "bench");
		if (ap_rpc(fd, &q, &r) != 0 || r.h.status != 0) {
			fprintf(stderr, "bench_agent_nvtx: ARM failed: %s\n", r.h.message);
			return 2;
		}
	}
	for (int i = 0; i < WARMUP; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t1 = bench_now_ns();
	if (mode == 4) {
		/* STOP from offset 1: the counters, no histogram */
		if (ap_simple(fd, XPROBE_AGENT_OP_STOP, 1, &r) != 0) {
			fprintf(stderr, "bench_agent_nvtx: STOP failed: %s\n", r.h.message);
			return 1;
		}
		printf("%.2f %llu\n", (t1 - t0) / n, (unsigned long long)r.h.dropped);
		if (r.h.observed != (uint64_t)n + WARMUP || r.h.dropped) {
			fprintf(stderr, "bench_agent_nvtx: %llu pairs counted, expected %llu\n",
				(unsigned long long)r.h.observed, (unsigned long long)n + WARMUP);
			return 1;
		}
	} else if (mode != 3) {
		uint64_t want = mode == 1 ? 2 * ((uint64_t)n + WARMUP) : 0;

		/* STOP from the end: only the counts come back */
		if (ap_simple(fd, XPROBE_AGENT_OP_STOP, want, &r) != 0) {
			fprintf(stderr, "bench_agent_nvtx: STOP failed: %s\n", r.h.message);
			return 1;
		}
		printf("%.2f %llu\n", (t1 - t0) / n, (unsigned long long)r.h.dropped);
		if (r.h.retained != want || r.h.observed != want || r.h.dropped) {
			fprintf(stderr,
				"bench_agent_nvtx: the capture holds %llu records (%llu observed, "
				"%llu dropped), expected %llu\n",
				(unsigned long long)r.h.retained, (unsigned long long)r.h.observed,
				(unsigned long long)r.h.dropped, (unsigned long long)want);
			return 1;
		}
	} else {
		printf("%.2f 0\n", (t1 - t0) / n);
	}
	ap_reply_free(&r);
	close(fd);
	return 0;
}
