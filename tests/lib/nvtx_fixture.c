/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvtx_fixture.c - an ordinary NVTX v3 program, not linked with libxprobe:
 * what it reports to a session comes only through the NVTX injection
 * protocol (NVTX_INJECTION64_PATH).  Written against the standard NVTX
 * names, it is built with tests/lib/nvtx_loader.c, our implementation of
 * the protocol's application side, so it needs no CUDA toolkit (with
 * -DXPL_FIXTURE_REAL_NVTX it builds against <nvtx3/nvToolsExt.h> instead).  It says what it did on stdout, one
 * "KEY value" per line, so the test compares the session with the
 * fixture's own account:
 *
 *   TID_A / TID_B        the two worker threads
 *   LEVELS ok|bad        whether push/pop returned the levels NVTX promises
 *                        (without an injection NVTX answers -2: "bad")
 *   PUSH n / POP n / START n / END n / MARK n   calls made
 *   FIRST_NVTX_NS t      CLOCK_MONOTONIC just before the first NVTX call
 *
 * Thread A: ITER x (push "outer", push "inner", mark "tick", pop, pop).
 * Thread B: ITER x process range "span" (start on B), ended on main.
 * Main: PushEx ASCII "ex_push"/pop, MarkEx "ex_mark", StartEx "ex_span"/End,
 * PushEx wide L"wide"/pop (name not collected), a 200-byte name push/pop.
 * With argv[1] = "sleep" it sleeps 50 ms before its first NVTX call.
 */
#ifdef XPL_FIXTURE_REAL_NVTX
#include <nvtx3/nvToolsExt.h>
#else
#include "nvtx_loader.h"
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ITER 100

static nvtxRangeId_t span_ids[ITER];
static long tid_a, tid_b;
static int levels_ok = 1;
static int pushes, pops, starts, ends, marks;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(int *c, int n)
{
	pthread_mutex_lock(&count_lock);
	*c += n;
	pthread_mutex_unlock(&count_lock);
}

static void *thread_a(void *arg)
{
	(void)arg;
	tid_a = syscall(SYS_gettid);
	for (int i = 0; i < ITER; i++) {
		if (nvtxRangePushA("outer") != 0)
			levels_ok = 0;
		if (nvtxRangePushA("inner") != 1)
			levels_ok = 0;
		nvtxMarkA("tick");
		if (nvtxRangePop() != 1)
			levels_ok = 0;
		if (nvtxRangePop() != 0)
			levels_ok = 0;
	}
	count(&pushes, 2 * ITER);
	count(&pops, 2 * ITER);
	count(&marks, ITER);
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	tid_b = syscall(SYS_gettid);
	for (int i = 0; i < ITER; i++)
		span_ids[i] = nvtxRangeStartA("span");
	count(&starts, ITER);
	return NULL;
}

static nvtxEventAttributes_t attrs_ascii(const char *msg)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct timespec ts;
	nvtxEventAttributes_t at;
	char longname[201];

	if (argc > 1 && !strcmp(argv[1], "sleep"))
		usleep(50000);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("FIRST_NVTX_NS %llu\n",
	       (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	/* main's own ranges first: the first NVTX call loads the injection */
	at = attrs_ascii("ex_push");
	if (nvtxRangePushEx(&at) != 0)
		levels_ok = 0;
	if (nvtxRangePop() != 0)
		levels_ok = 0;
	at = attrs_ascii("ex_mark");
	nvtxMarkEx(&at);
	at = attrs_ascii("ex_span");
	nvtxRangeEnd(nvtxRangeStartEx(&at));
	memset(&at, 0, sizeof(at));
	at.version = NVTX_VERSION;
	at.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	at.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	at.message.unicode = L"wide";
	if (nvtxRangePushEx(&at) != 0)
		levels_ok = 0;
	if (nvtxRangePop() != 0)
		levels_ok = 0;
	memset(longname, 'L', 200);
	longname[200] = '\0';
	nvtxRangePushA(longname);
	nvtxRangePop();
	count(&pushes, 3);
	count(&pops, 3);
	count(&marks, 1);
	count(&starts, 1);
	count(&ends, 1);

	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	for (int i = 0; i < ITER; i++)
		nvtxRangeEnd(span_ids[i]); /* ended on another thread */
	count(&ends, ITER);
	if (nvtxRangePop() >= 0) /* nothing open */
		levels_ok = 0;
	printf("TID_MAIN %ld\nTID_A %ld\nTID_B %ld\n", (long)syscall(SYS_gettid), tid_a, tid_b);
	printf("LEVELS %s\n", levels_ok ? "ok" : "bad");
	printf("PUSH %d\nPOP %d\nSTART %d\nEND %d\nMARK %d\n", pushes, pops, starts, ends, marks);
	return 0;
}
