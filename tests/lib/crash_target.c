/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crash_target.c - a program linked against libxprobe that begins a
 * session, records a known number of events from several threads and then
 * dies the way it is told to.  tests/unit/test_lib_crash.c runs it and
 * reads what the session left behind.
 *
 *   crash_target MODE OUTPUT_BASE THREADS EVENTS
 *
 * MODE: segv (write through NULL), abort, term (raise SIGTERM), kill
 * (raise SIGKILL), chain (own SIGSEGV handler installed before the session
 * begins; it exits 42), exit (a normal exit without close: the atexit
 * stop), busy-segv (a thread keeps recording while main crashes),
 * full-segv (fill the file system of OUTPUT_BASE, start a thread that
 * records, print FILLED, then write through NULL).
 *
 * Prints "READY <session dir> <user records> <exec id>" on stdout before
 * dying (flushed), so the test knows what was recorded.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xprobe/xprobe.h"

static uint64_t events;
static volatile uintptr_t bad_address = 8;
static _Atomic int busy_started;

static void *recorder(void *arg)
{
	uint64_t idx = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < events; i++)
		xprobe_trace_record(1, idx, i);
	xprobe_trace_mark("thread done");
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (uint64_t i = 0;; i++) {
		xprobe_trace_record(2, 99, i);
		atomic_store(&busy_started, 1);
	}
	return NULL;
}

static void own_segv(int sig)
{
	(void)sig;
	if (write(1, "CHAINED\n", 8) < 0)
		_exit(43);
	_exit(42);
}

/* Deeper and deeper until the stack's guard page: SIGSEGV with the stack
 * exhausted, so only a handler on an alternate stack can run. */
static volatile int depth_limit = -1;

__attribute__((noinline)) static int recurse(int n)
{
	volatile char pad[512];

	pad[0] = (char)n;
	if (n == depth_limit)
		return 0;
	return recurse(n + 1) + pad[0];
}

static uint64_t num(const char *s)
{
	uint64_t v = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

int main(int argc, char **argv)
{
	struct xprobe_inspect_config *c = NULL;
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 2);
	pthread_t th[64];
	uint64_t nthreads, exec_id = 0, exec2 = 0;
	char dir[4096];
	const char *mode;
	int rc;

	if (argc != 5)
		return 2;
	mode = argv[1];
	nthreads = num(argv[3]);
	events = num(argv[4]);
	if (nthreads > 64)
		return 2;
	if (!strcmp(mode, "chain"))
		signal(SIGSEGV, own_segv);
	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, argv[2]);
	xprobe_inspect_config_set_instance_id(c, "crash");
	xprobe_inspect_config_set_monitor_period_ms(c, 10);
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	/* MODEL for kill (per-execution files are written as executions end
	 * and must survive), SESSION otherwise (written by the stop) */
	xprobe_inspect_config_set_device_profile_mode(c, strcmp(mode, "kill") ?
								 XPROBE_DEVICE_PROFILE_SESSION :
								 XPROBE_DEVICE_PROFILE_MODEL);
	rc = xprobe_inspect_begin_with_options(c);
	if (rc) {
		fprintf(stderr, "begin: %s\n", xprobe_last_error());
		return 3;
	}
	xprobe_inspect_config_free(c);
	for (uint64_t i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, recorder, (void *)(uintptr_t)i);
	for (uint64_t i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	xprobe_execution_begin("crashnet", &exec_id);
	xprobe_execution_end(exec_id, 0);
	xprobe_execution_begin("crashnet", &exec2); /* in flight when we die */
	usleep(30000); /* a few monitor samples */
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	printf("READY %s %llu %llu\n", dir, (unsigned long long)(nthreads * events),
	       (unsigned long long)exec_id);
	fflush(stdout);
	if (!strcmp(mode, "busy-segv")) {
		pthread_t b;

		pthread_create(&b, NULL, busy, NULL);
		while (!atomic_load(&busy_started))
			;
		usleep(2000);
	}
	if (!strcmp(mode, "full-segv")) {
		static char block[4096];
		char filler[4200];
		pthread_t late;
		int fd;

		snprintf(filler, sizeof(filler), "%s/filler", argv[2]);
		fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0600);
		while (fd >= 0 && write(fd, block, sizeof(block)) > 0)
			;
		if (fd >= 0)
			close(fd);
		/* a thread whose ring cannot get space, recording */
		pthread_create(&late, NULL, recorder, (void *)(uintptr_t)99);
		pthread_join(late, NULL);
		printf("FILLED\n");
		fflush(stdout);
	}
	if (!strcmp(mode, "segv") || !strcmp(mode, "chain") || !strcmp(mode, "busy-segv") ||
	    !strcmp(mode, "full-segv"))
		*(volatile int *)bad_address = 1; /* page 0: unmapped */
	else if (!strcmp(mode, "overflow"))
		return recurse(0);
	else if (!strcmp(mode, "abort"))
		abort();
	else if (!strcmp(mode, "term"))
		raise(SIGTERM);
	else if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	else if (!strcmp(mode, "exit"))
		exit(7); /* atexit stops the session */
	return 0;
}
