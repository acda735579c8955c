/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_nvtx.c - an ordinary NVTX v3 program (not linked with libxprobe):
 * N x (nvtxRangePushA("bench"); nvtxRangePop()) -> ns per pair on stdout.
 * bench/bench_lib.sh runs it with NVTX_INJECTION64_PATH=libxprobe.so and an
 * XPROBE_INSPECT_* session (the pair then costs two records), and without
 * (NVTX's own no-op path: no tracing at all).  Built against
 * <nvtx3/nvToolsExt.h> where the CUDA toolkit is installed, else with
 * -DXPL_OWN_NVTX_LOADER against tests/lib/nvtx_loader.c (the same protocol).
 *
 *   bench_nvtx N
 *
 * Prints "<ns per pair> <records dropped>".  The drops are the session's
 * own count: after timing, the program finds the libxprobe the loader
 * injected (dlopen RTLD_NOLOAD of NVTX_INJECTION64_PATH), stops the session
 * and reads host_dropped from its trace_info.pb.  Exits 1 when a record
 * was dropped or the count cannot be read (the cost of a drop is not the
 * cost of a record), 0 otherwise; without injection nothing is recorded
 * and the count is 0.
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
#include <time.h>

#include "bench_util.h"
#include "xprobe/xprobe.h"

#define SYM(h, name) (__typeof__(&name))dlsym(h, #name)

/* The records the injected session dropped, or -1 when it cannot say. */
static long session_drops(void)
{
	const char *lib = getenv("NVTX_INJECTION64_PATH");
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	struct xprobe_session *s = NULL;
	char dir[4096], err[512];
	long drops = -1;
	void *h;

	if (!lib || !lib[0])
		return 0; /* NVTX's no-op path: nothing recorded */
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return -1;
	{
		__typeof__(&xprobe_inspect_get_output_dir) outdir =
			SYM(h, xprobe_inspect_get_output_dir);
		__typeof__(&xprobe_inspect_stop) stop = SYM(h, xprobe_inspect_stop);
		__typeof__(&xprobe_session_open) sopen = SYM(h, xprobe_session_open);
		__typeof__(&xprobe_session_get_file) sfile = SYM(h, xprobe_session_get_file);
		__typeof__(&xprobe_session_close) sclose = SYM(h, xprobe_session_close);
		__typeof__(&xprobe_xtf_get_info) info = SYM(h, xprobe_xtf_get_info);
		const char *name = NULL;
		const struct xprobe_xtf *ti;

		if (!outdir || !stop || !sopen || !sfile || !sclose || !info ||
		    outdir(dir, sizeof(dir)) <= 0 || stop() != 0 ||
		    sopen(dir, &s, err, sizeof(err)) != 0) {
			fprintf(stderr, "bench_nvtx: no session to read the drops of\n");
			goto out;
		}
		ti = sfile(s, 0, &name);
		if (ti && name && !strcmp(name, "trace_info.pb") && info(ti, &in) == 0)
			drops = (long)in.host_dropped;
		sclose(s);
	}
out:
	dlclose(h);
	return drops;
}

int main(int argc, char **argv)
{
	long n, drops;
	double t0, t1;

	n = bench_args(argc, argv, 2);
	if (n < 0)
		return 2;
	/* warm-up: the first call loads the injection; the first record of
	 * the thread attaches its ring */
	for (int i = 0; i < 100; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t1 = bench_now_ns();
	drops = session_drops();
	printf("%.2f %ld\n", (t1 - t0) / n, drops);
	return drops != 0;
}
