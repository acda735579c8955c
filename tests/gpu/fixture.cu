// SPDX-License-Identifier: Apache-2.0
/*
 * fixture.cu - xpgpu_fixture, the CUDA target of the GPU truth check
 * (tests/gpu/run.sh, tests/gpu/truth.py).  It owns the ground truth the
 * check compares xprobe against: what it launched, copied and set, in
 * which order, and how long each kernel took by cudaEvent, printed as JSON
 * lines on stdout.
 *
 * It initializes CUDA (context, module loading, one of every operation:
 * the warm-up, so nothing lazy lands inside a measurement window), makes
 * one NVTX call (so a process started with NVTX_INJECTION64_PATH has its
 * Agent up), prints a ready line, then waits for commands on stdin, one a
 * line.  xprobe attaches while it waits; each command runs a step and ends
 * with a {"done":true,...} line whose counts are the step's truth:
 *
 *   kernels US[,US...] REPS  cudaLaunchKernel launches of xpgpu_spin, each
 *                            bracketed by two cudaEvents and synchronized;
 *                            one line per launch with cudaEventElapsedTime
 *   chevron N US             the same with <<<>>> (CUDA 13: __cudaLaunchKernel)
 *   driver N US              N cuLaunchKernel launches of xpgpu_drv, timed
 *                            the same way
 *   burst N US               N back-to-back launches of xpgpu_spin on one
 *                            stream, one synchronize at the end
 *   copies REPS              per rep: 2 HtoD + 1 DtoH cudaMemcpyAsync of
 *                            4 MiB (pinned host memory) and 1 cudaMemsetAsync
 *                            of 4 MiB, each synchronized
 *   nvtx N US                N NVTX thread ranges "xpgpu_step", each around
 *                            one xpgpu_spin launch; one line per range with
 *                            its CLOCK_MONOTONIC duration taken around the
 *                            push and the pop
 *   requests N               N calls of the host function xpgpu_request(),
 *                            each launching xpgpu_touch and synchronizing
 *   mix ROUNDS               per round: 2 xpgpu_spin, 1 xpgpu_tick, 1
 *                            xpgpu_drv (driver API), 1 request (xpgpu_touch),
 *                            1 copies rep
 *   paced RATE SECONDS US    xpgpu_tick launched at RATE per second for
 *                            SECONDS, each synchronized; reports achieved
 *                            throughput, latency and process CPU time
 *   quit                     exit 0 (so does end of input)
 *
 * Kernels run one thread; xpgpu_spin, xpgpu_tick and xpgpu_drv spin on
 * clock64() for a cycle count computed from a calibration at start (cycles per microsecond measured
 * with cudaEvents), so "US" is a nominal duration; the check compares
 * xprobe with the cudaEvent times, never with the nominal ones.  Kernel
 * names are extern "C", so CUPTI reports them unmangled.  All work runs
 * on one non-blocking stream from the main thread, so kernels execute in
 * launch order.  A CUDA error or a malformed command prints
 * {"done":false,"step":...,"error":...} and exits 1.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#define COPY_BYTES (4u << 20)

extern "C" __global__ void xpgpu_spin(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles) {
	}
}

extern "C" __global__ void xpgpu_tick(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles) {
	}
}

extern "C" __global__ void xpgpu_drv(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles) {
	}
}

extern "C" __global__ void xpgpu_touch(int *p, int v)
{
	*p = v;
}

static cudaStream_t g_stream;
static cudaEvent_t g_ev0, g_ev1;
static CUfunction g_drv_fn;
static double g_cycles_per_us = 1000.0;
static void *g_host[2], *g_dev[2];
static int *g_dev_int;

static void put_json_string(const char *s);

static void die(const char *what, const char *why)
{
	printf("{\"done\":false,\"step\":");
	put_json_string(what);
	printf(",\"error\":");
	put_json_string(why);
	printf("}\n");
	fflush(stdout);
	exit(1);
}

static void ck(cudaError_t e, const char *what)
{
	if (e != cudaSuccess)
		die(what, cudaGetErrorString(e));
}

static void ckd(CUresult r, const char *what)
{
	const char *s = NULL;

	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorString(r, &s);
	die(what, s ? s : "unknown driver error");
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static long long cycles_for(double us)
{
	double c = us * g_cycles_per_us;

	return c < 1.0 ? 1 : (long long)c;
}

/* A JSON string (the executable's path may hold anything). */
static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/*
 * Launch helpers: every launch goes to g_stream.  Runtime launches call
 * cudaLaunchKernel itself, the runtime API the contract's selectors name:
 * with CUDA 13, <<<>>> compiles to __cudaLaunchKernel instead (its own
 * CUPTI callback id, __cudaLaunchKernel_v13000), which only the chevron
 * step uses.
 */
static void launch_rt(const void *fn, long long cycles)
{
	void *args[] = { &cycles };

	ck(cudaLaunchKernel(fn, dim3(1), dim3(1), args, 0, g_stream), "cudaLaunchKernel");
}

static void launch_spin(long long cycles)
{
	launch_rt((const void *)xpgpu_spin, cycles);
}

static void launch_tick(long long cycles)
{
	launch_rt((const void *)xpgpu_tick, cycles);
}

static void launch_chevron(long long cycles)
{
	xpgpu_spin<<<1, 1, 0, g_stream>>>(cycles);
	ck(cudaGetLastError(), "xpgpu_spin <<<>>> launch");
}

static void launch_drv(long long cycles)
{
	void *args[] = { &cycles };

	ckd(cuLaunchKernel(g_drv_fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)g_stream, args, NULL),
	    "cuLaunchKernel");
}

/*
 * The host function a uprobe selector names: not inlined, not static, so
 * it has its own symbol and entry.  Each call launches one xpgpu_touch.
 */
extern "C" __attribute__((noinline, used, visibility("default"))) void xpgpu_request(int i)
{
	void *args[] = { &g_dev_int, &i };

	ck(cudaLaunchKernel((const void *)xpgpu_touch, dim3(1), dim3(1), args, 0, g_stream),
	   "cudaLaunchKernel xpgpu_touch");
	ck(cudaStreamSynchronize(g_stream), "request sync");
	__asm__ __volatile__("" ::: "memory");
}

/* Elapsed ms between g_ev0 and g_ev1 around one launch. */
static float timed(void (*fn)(long long), long long cycles)
{
	float ms = 0;

	ck(cudaEventRecord(g_ev0, g_stream), "cudaEventRecord");
	fn(cycles);
	ck(cudaEventRecord(g_ev1, g_stream), "cudaEventRecord");
	ck(cudaEventSynchronize(g_ev1), "cudaEventSynchronize");
	ck(cudaEventElapsedTime(&ms, g_ev0, g_ev1), "cudaEventElapsedTime");
	return ms;
}

static void one_copy_rep(void)
{
	ck(cudaMemcpyAsync(g_dev[0], g_host[0], COPY_BYTES, cudaMemcpyHostToDevice, g_stream),
	   "HtoD");
	ck(cudaStreamSynchronize(g_stream), "HtoD sync");
	ck(cudaMemcpyAsync(g_dev[1], g_host[1], COPY_BYTES, cudaMemcpyHostToDevice, g_stream),
	   "HtoD");
	ck(cudaStreamSynchronize(g_stream), "HtoD sync");
	ck(cudaMemcpyAsync(g_host[0], g_dev[0], COPY_BYTES, cudaMemcpyDeviceToHost, g_stream),
	   "DtoH");
	ck(cudaStreamSynchronize(g_stream), "DtoH sync");
	ck(cudaMemsetAsync(g_dev[1], 0x5a, COPY_BYTES, g_stream), "memset");
	ck(cudaStreamSynchronize(g_stream), "memset sync");
}

/* Cycles per microsecond: a fixed cycle count timed with cudaEvents. */
static void calibrate(void)
{
	const long long cycles = 2000000;
	float best = 0;

	/* the clocks ramp up under load: keep the last of a few runs */
	for (int i = 0; i < 6; i++)
		best = timed(launch_spin, cycles);
	if (best <= 0)
		die("calibration", "zero elapsed time");
	g_cycles_per_us = (double)cycles / (best * 1000.0);
}

static void setup(void)
{
	int dev = 0;

	ck(cudaSetDevice(dev), "cudaSetDevice");
	ck(cudaFree(0), "context");
	ck(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking), "cudaStreamCreate");
	ck(cudaEventCreate(&g_ev0), "cudaEventCreate");
	ck(cudaEventCreate(&g_ev1), "cudaEventCreate");
	for (int i = 0; i < 2; i++) {
		ck(cudaMallocHost(&g_host[i], COPY_BYTES), "cudaMallocHost");
		memset(g_host[i], 0x11 * (i + 1), COPY_BYTES);
		ck(cudaMalloc(&g_dev[i], COPY_BYTES), "cudaMalloc");
	}
	ck(cudaMalloc((void **)&g_dev_int, sizeof(int)), "cudaMalloc");
	ck(cudaGetFuncBySymbol((cudaFunction_t *)&g_drv_fn, (const void *)xpgpu_drv),
	   "cudaGetFuncBySymbol");

	/* warm-up: load every kernel, touch every path once */
	launch_spin(1000);
	launch_chevron(1000);
	launch_tick(1000);
	launch_drv(1000);
	xpgpu_request(-1);
	one_copy_rep();
	ck(cudaStreamSynchronize(g_stream), "warm-up");
	calibrate();

	/* NVTX's first call: loads the injection library, if one is set */
	nvtxRangePushA("xpgpu_init");
	nvtxRangePop();
}

static void ready(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cudaDeviceProp prop;
	int rt = 0, drv = 0;
	const char *inj = getenv("NVTX_INJECTION64_PATH");

	exe[n > 0 ? n : 0] = '\0';
	ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	printf("{\"ready\":true,\"pid\":%d,\"exe\":", (int)getpid());
	put_json_string(exe);
	printf(",\"device\":");
	put_json_string(prop.name);
	printf(",\"cc\":\"%d.%d\",\"cuda_runtime\":%d,\"cuda_driver\":%d,"
	       "\"cycles_per_us\":%.3f,\"nvtx_injection\":",
	       prop.major, prop.minor, rt, drv, g_cycles_per_us);
	if (inj)
		put_json_string(inj);
	else
		printf("null");
	printf("}\n");
	fflush(stdout);
}

static void cmd_kernels(char *list, int reps)
{
	std::vector<double> us;
	int k = 0;

	for (char *p = list, *end;; p = end + 1) {
		double u = strtod(p, &end);

		if (end == p || u <= 0 || (*end != ',' && *end != '\0'))
			die("kernels", "usage: kernels US[,US...] REPS");
		us.push_back(u);
		if (*end == '\0')
			break;
	}
	if (reps <= 0)
		die("kernels", "usage: kernels US[,US...] REPS");
	for (int r = 0; r < reps; r++) {
		for (double u : us) {
			float ms = timed(launch_spin, cycles_for(u));

			printf("{\"launch\":%d,\"kernel\":\"xpgpu_spin\",\"api\":\"cudaLaunchKernel\","
			       "\"nominal_us\":%.1f,\"event_ms\":%.6f}\n",
			       k++, u, ms);
		}
	}
	printf("{\"done\":true,\"step\":\"kernels\",\"kernel\":\"xpgpu_spin\",\"launches\":%d}\n",
	       k);
}

static void cmd_driver(int n, double u)
{
	if (n <= 0)
		die("driver", "usage: driver N US");
	for (int k = 0; k < n; k++) {
		float ms = timed(launch_drv, cycles_for(u));

		printf("{\"launch\":%d,\"kernel\":\"xpgpu_drv\",\"api\":\"cuLaunchKernel\","
		       "\"nominal_us\":%.1f,\"event_ms\":%.6f}\n",
		       k, u, ms);
	}
	printf("{\"done\":true,\"step\":\"driver\",\"kernel\":\"xpgpu_drv\",\"launches\":%d}\n", n);
}

static void cmd_chevron(int n, double u)
{
	if (n <= 0)
		die("chevron", "usage: chevron N US");
	for (int k = 0; k < n; k++) {
		float ms = timed(launch_chevron, cycles_for(u));

		printf("{\"launch\":%d,\"kernel\":\"xpgpu_spin\",\"api\":\"<<<>>>\","
		       "\"nominal_us\":%.1f,\"event_ms\":%.6f}\n",
		       k, u, ms);
	}
	printf("{\"done\":true,\"step\":\"chevron\",\"kernel\":\"xpgpu_spin\",\"launches\":%d}\n",
	       n);
}

static void cmd_burst(int n, double u)
{
	if (n <= 0)
		die("burst", "usage: burst N US");
	for (int k = 0; k < n; k++)
		launch_spin(cycles_for(u));
	ck(cudaStreamSynchronize(g_stream), "burst sync");
	printf("{\"done\":true,\"step\":\"burst\",\"kernel\":\"xpgpu_spin\",\"launches\":%d}\n", n);
}

static void cmd_copies(int reps)
{
	if (reps <= 0)
		die("copies", "usage: copies REPS");
	for (int r = 0; r < reps; r++)
		one_copy_rep();
	printf("{\"done\":true,\"step\":\"copies\",\"htod\":%d,\"dtoh\":%d,\"memset\":%d,"
	       "\"bytes\":%u}\n",
	       2 * reps, reps, reps, COPY_BYTES);
}

static void cmd_nvtx(int n, double u)
{
	if (n <= 0)
		die("nvtx", "usage: nvtx N US");
	for (int k = 0; k < n; k++) {
		unsigned long long t0 = mono_ns();

		nvtxRangePushA("xpgpu_step");
		launch_spin(cycles_for(u));
		ck(cudaStreamSynchronize(g_stream), "nvtx step sync");
		nvtxRangePop();
		printf("{\"range\":%d,\"name\":\"xpgpu_step\",\"host_ns\":%llu}\n", k,
		       mono_ns() - t0);
	}
	printf("{\"done\":true,\"step\":\"nvtx\",\"name\":\"xpgpu_step\",\"ranges\":%d}\n", n);
}

static void cmd_requests(int n)
{
	if (n <= 0)
		die("requests", "usage: requests N");
	for (int k = 0; k < n; k++)
		xpgpu_request(k);
	printf("{\"done\":true,\"step\":\"requests\",\"function\":\"xpgpu_request\","
	       "\"kernel\":\"xpgpu_touch\",\"requests\":%d}\n",
	       n);
}

static void cmd_mix(int rounds)
{
	if (rounds <= 0)
		die("mix", "usage: mix ROUNDS");
	for (int r = 0; r < rounds; r++) {
		launch_spin(cycles_for(20));
		launch_spin(cycles_for(20));
		launch_tick(cycles_for(5));
		launch_drv(cycles_for(10));
		ck(cudaStreamSynchronize(g_stream), "mix sync");
		xpgpu_request(r);
		one_copy_rep();
	}
	printf("{\"done\":true,\"step\":\"mix\",\"kernels\":{\"xpgpu_drv\":%d,\"xpgpu_spin\":%d,"
	       "\"xpgpu_tick\":%d,\"xpgpu_touch\":%d},\"memcpy\":{\"DtoH\":%d,\"HtoD\":%d},"
	       "\"memset\":%d,\"bytes\":%u}\n",
	       rounds, 2 * rounds, rounds, rounds, rounds, 2 * rounds, rounds, COPY_BYTES);
}

static double pct(std::vector<double> &v, double p)
{
	size_t i;

	if (v.empty())
		return 0;
	i = (size_t)(p / 100.0 * (double)v.size());
	if (i >= v.size())
		i = v.size() - 1;
	return v[i];
}

/*
 * The paced workload: launch i is due at start + i / rate (absolute sleep
 * to it), then launch + synchronize.  lat = launch call to completion, call
 * = the launch call alone, late = how far past its due time a launch
 * began.  cpu_s is the whole process's CPU time over the run (the Agent's
 * threads and CUPTI's included).
 */
static void cmd_paced(double rate, double seconds, double u)
{
	long n = (long)(rate * seconds);
	std::vector<double> lat, call;
	double late_max = 0, busy = 0, c0, c1;
	unsigned long long t0, end;
	long long cycles = cycles_for(u);

	if (rate <= 0 || seconds <= 0 || n <= 0)
		die("paced", "usage: paced RATE SECONDS US");
	lat.reserve(n);
	call.reserve(n);
	c0 = cpu_s();
	t0 = mono_ns() + 1000000ull;
	for (long i = 0; i < n; i++) {
		unsigned long long due = t0 + (unsigned long long)((double)i * 1e9 / rate);
		struct timespec ts = { (time_t)(due / 1000000000ull), (long)(due % 1000000000ull) };
		unsigned long long a, b, c;

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
		}
		a = mono_ns();
		launch_tick(cycles);
		b = mono_ns();
		ck(cudaStreamSynchronize(g_stream), "paced sync");
		c = mono_ns();
		lat.push_back((double)(c - a) / 1000.0);
		call.push_back((double)(b - a) / 1000.0);
		busy += (double)(c - a);
		if (a > due && (double)(a - due) / 1000.0 > late_max)
			late_max = (double)(a - due) / 1000.0;
	}
	end = mono_ns();
	c1 = cpu_s();
	double wall = (double)(end - t0) / 1e9;
	double mean = 0, cmean = 0;

	for (double x : lat)
		mean += x;
	for (double x : call)
		cmean += x;
	mean /= (double)n;
	cmean /= (double)n;
	std::sort(lat.begin(), lat.end());
	std::sort(call.begin(), call.end());
	printf("{\"done\":true,\"step\":\"paced\",\"kernel\":\"xpgpu_tick\",\"launches\":%ld,"
	       "\"rate_target\":%.1f,\"wall_s\":%.6f,\"achieved_per_s\":%.3f,"
	       "\"lat_p50_us\":%.3f,\"lat_p90_us\":%.3f,\"lat_p99_us\":%.3f,\"lat_mean_us\":%.3f,"
	       "\"call_p50_us\":%.3f,\"call_mean_us\":%.3f,\"late_max_us\":%.1f,"
	       "\"busy_frac\":%.6f,\"cpu_s\":%.6f}\n",
	       n, rate, wall, (double)n / wall, pct(lat, 50), pct(lat, 90), pct(lat, 99), mean,
	       pct(call, 50), cmean, late_max, busy / 1e9 / wall, c1 - c0);
}

/* Splits @line at blanks into at most @max words; returns how many. */
static int split(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	while (n < max) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static double num(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end)
		die("command", "not a number");
	return v;
}

int main(void)
{
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	ready();
	while (fgets(line, sizeof(line), stdin)) {
		char *w[4];
		int n = split(line, w, 4);

		if (n < 1)
			continue;
		if (!strcmp(w[0], "quit"))
			break;
		if (!strcmp(w[0], "kernels") && n == 3)
			cmd_kernels(w[1], (int)num(w[2]));
		else if (!strcmp(w[0], "driver") && n == 3)
			cmd_driver((int)num(w[1]), num(w[2]));
		else if (!strcmp(w[0], "chevron") && n == 3)
			cmd_chevron((int)num(w[1]), num(w[2]));
		else if (!strcmp(w[0], "burst") && n == 3)
			cmd_burst((int)num(w[1]), num(w[2]));
		else if (!strcmp(w[0], "copies") && n == 2)
			cmd_copies((int)num(w[1]));
		else if (!strcmp(w[0], "nvtx") && n == 3)
			cmd_nvtx((int)num(w[1]), num(w[2]));
		else if (!strcmp(w[0], "requests") && n == 2)
			cmd_requests((int)num(w[1]));
		else if (!strcmp(w[0], "mix") && n == 2)
			cmd_mix((int)num(w[1]));
		else if (!strcmp(w[0], "paced") && n == 4)
			cmd_paced(num(w[1]), num(w[2]), num(w[3]));
		else
			die("command", "unknown command or arguments");
		fflush(stdout);
	}
	cudaStreamSynchronize(g_stream);
	return 0;
}
