/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_fixture.c - an ordinary NVTX v3 program for the Agent's tests
 * (tests/unit/test_lib_agent.c): not linked with libxprobe, run under
 * NVTX_INJECTION64_PATH=libxprobe.so, so its Agent exists only because the
 * NVTX loader injected the library.  Built on tests/lib/nvtx_loader.c (no
 * CUDA toolkit).  The test drives it one command per stdin line and reads
 * one answer line per command on stdout, so it can ARM the Agent between
 * the fixture's calls and compare the capture with what the fixture says
 * it did:
 *
 *   init            first NVTX call (loads libxprobe, which starts the
 *                   Agent); "READY <pid> <socket path>"
 *   names N         N x (push/pop of "step", "stepper", "prestep", "other",
 *                   and LONGNAME: "step" + 192 x 'x' + "step", 200 bytes)
 *   nest N          two threads, each N x (push n_a, push n_b, push n_c,
 *                   pop x 3); "DONE nest <tid1> <tid2>"
 *   xthread N       thread B starts N process ranges "span"; main ends
 *                   them; "DONE xthread <tid B> <tid main>"
 *   open            push "open_push", start "open_span" (left open)
 *   close_open      pop, end "open_span"; then one more push/pop of
 *                   "open_push" and start/end of "open_span"
 *   burst N         N x push/pop "step"
 *   ex N            N x (PushEx ASCII "step", pop; StartEx ASCII "step",
 *                   end); then one PushEx wide, pop; one StartEx wide, end;
 *                   one PushEx(NULL), pop
 *   levels          "LEVELS ok|bad": push/pop returned the levels NVTX
 *                   promises in every command so far
 *   inject          what online injection does after its dlopen: call
 *                   xprobe_agent_start() of the loaded libxprobe;
 *                   "DONE inject <rc> <socket path>"
 *   spin N          N (<= 4) threads loop push "step", start + end "step",
 *                   pop (a 50 us sleep every 32 loops) until unspin
 *   unspin          stop and join them
 *   fork            fork a child that sleeps 5 s and exits; "DONE fork <pid>"
 *   forkexit        fork a child that does "names 1" and exit(0)s (its atexit
 *                   handlers run); wait for it; "DONE forkexit <status>"
 *   flush           xprobe_agent_output_flush() of the loaded libxprobe;
 *                   "DONE flush <rc>"
 *   loadclose       dlopen $AGENT_FIXTURE_LIB, dlclose it;
 *                   "DONE loadclose <loaded> <still mapped>"
 *   path            "PATH <socket path or ->"
 *   reuse_fds       what a daemon does: every socket descriptor above 2 (the
 *                   Agent's: its listening socket and connections) is
 *                   replaced by a file of the program's own (dup2 over
 *                   the number); "DONE reuse_fds <count>"
 *   exhaust_fds     open /dev/null until the descriptor limit (EMFILE):
 *                   "DONE exhaust_fds <count>"; release_fds closes them
 *   check_fds       "FDS ok <count>": every number reuse_fds took still
 *                   holds the program's file with its bytes, "FDS lost <fd>"
 *   quit            exit 0
 *
 * Every command but init/levels/inject/path answers "DONE <command>".
 */
#include "nvtx_loader.h"

#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int levels_ok = 1; /* any thread clears it (__atomic builtins) */

static void bad_level(void)
{
	__atomic_store_n(&levels_ok, 0, __ATOMIC_RELAXED);
}
static char longname[201];

static void push(const char *name, int want)
{
	if (nvtxRangePushA(name) != want)
		bad_level();
}

static void pop(int want)
{
	if (nvtxRangePop() != want)
		bad_level();
}

static void *lib_sym(const char *name)
{
	const char *lib = getenv("NVTX_INJECTION64_PATH");
	void *h;

	if (!lib)
		return NULL;
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	return h ? dlsym(h, name) : NULL;
}

static void print_path(const char *tag)
{
	int (*path)(char *, size_t) = (int (*)(char *, size_t))lib_sym("xprobe_agent_socket_path");
	char buf[256];

	if (!path || path(buf, sizeof(buf)) != 0)
		snprintf(buf, sizeof(buf), "-");
	printf("%s%s%s\n", tag, tag[0] ? " " : "", buf);
}

struct nest_arg {
	long n;
	long tid;
};

static void *nest_thread(void *p)
{
	struct nest_arg *a = p;

	a->tid = syscall(SYS_gettid);
	for (long i = 0; i < a->n; i++) {
		push("n_a", 0);
		push("n_b", 1);
		push("n_c", 2);
		pop(2);
		pop(1);
		pop(0);
	}
	return NULL;
}

/* spin: threads looping push "step", start/end "step", pop until told */
#define MAX_SPIN 4
static int spinning; /* __atomic builtins */
static pthread_t spin_threads[MAX_SPIN];
static long spin_n;

static void *spin_thread(void *p)
{
	(void)p;
	for (unsigned i = 0; __atomic_load_n(&spinning, __ATOMIC_RELAXED); i++) {
		push("step", 0);
		nvtxRangeEnd(nvtxRangeStartA("step"));
		pop(0);
		if (i % 32 == 31)
			usleep(50); /* a few million records a second, not a flood */
	}
	return NULL;
}

struct span_arg {
	long n;
	long tid;
	nvtxRangeId_t *ids;
};

static void *span_thread(void *p)
{
	struct span_arg *a = p;

	a->tid = syscall(SYS_gettid);
	for (long i = 0; i < a->n; i++)
		a->ids[i] = nvtxRangeStartA("span");
	return NULL;
}

static nvtxEventAttributes_t attrs(int type, const void *msg)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = type;
	a.message.ascii = msg;
	return a;
}

/*
 * ThreadSanitizer (the sanitizer builds' fixture): reuse_fds races the
 * Agent's thread on purpose -- a program closing descriptors another
 * thread polls is the case under test -- so TSan's report of the dup2
 * against the server's poll/recv on the same number is expected there
 * and only there.
 */
__attribute__((used)) const char *__tsan_default_suppressions(void)
{
	return "race:reuse_fds\n";
}

/* exhaust_fds / release_fds: what it holds */
#define HELD_MAX 65536
static int held[HELD_MAX], nheld;

/* reuse_fds / check_fds: the descriptors taken and the file put there */
static int reused[64], nreused, keep_fd = -1;

static int reuse_fds(void)
{
	char tmpl[] = "/tmp/xpl-agent-fixture-XXXXXX", link[128], p[64];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	keep_fd = mkstemp(tmpl);
	if (!d || keep_fd < 0 || write(keep_fd, "keep", 4) != 4)
		return -1;
	unlink(tmpl);
	while ((e = readdir(d)) && nreused < 64) {
		int fd = atoi(e->d_name);
		ssize_t n;

		if (fd <= 2 || fd == dirfd(d) || fd == keep_fd)
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "socket:", 7) != 0)
			continue;
		if (dup2(keep_fd, fd) != fd)
			return -1;
		reused[nreused++] = fd;
	}
	closedir(d);
	return nreused;
}

static void check_fds(void)
{
	struct stat a, b;
	char buf[4];

	for (int i = 0; i < nreused; i++) {
		if (fstat(reused[i], &a) != 0 || fstat(keep_fd, &b) != 0 || a.st_ino != b.st_ino ||
		    pread(reused[i], buf, 4, 0) != 4 || memcmp(buf, "keep", 4) != 0) {
			printf("FDS lost %d\n", reused[i]);
			return;
		}
	}
	printf("FDS ok %d\n", nreused);
}

int main(void)
{
	char line[256], cmd[32];
	nvtxRangeId_t open_span = 0;
	long n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(longname, 'x', 200);
	memcpy(longname, "step", 4);
	memcpy(longname + 196, "step", 4);
	longname[200] = '\0';
	while (fgets(line, sizeof(line), stdin)) {
		n = 0;
		if (sscanf(line, "%31s %ld", cmd, &n) < 1)
			continue;
		if (!strcmp(cmd, "init")) {
			nvtxMarkA("init");
			printf("READY %ld ", (long)getpid());
			print_path("");
			continue;
		}
		if (!strcmp(cmd, "names")) {
			for (long i = 0; i < n; i++) {
				push("step", 0);
				pop(0);
				push("stepper", 0);
				pop(0);
				push("prestep", 0);
				pop(0);
				push("other", 0);
				pop(0);
				push(longname, 0);
				pop(0);
			}
		} else if (!strcmp(cmd, "nest")) {
			struct nest_arg a = { n, 0 }, b = { n, 0 };
			pthread_t ta, tb;

			pthread_create(&ta, NULL, nest_thread, &a);
			pthread_create(&tb, NULL, nest_thread, &b);
			pthread_join(ta, NULL);
			pthread_join(tb, NULL);
			printf("DONE nest %ld %ld\n", a.tid, b.tid);
			continue;
		} else if (!strcmp(cmd, "xthread")) {
			struct span_arg a = { n, 0, calloc((size_t)n + 1, sizeof(nvtxRangeId_t)) };
			pthread_t t;

			pthread_create(&t, NULL, span_thread, &a);
			pthread_join(t, NULL);
			for (long i = 0; i < n; i++)
				nvtxRangeEnd(a.ids[i]);
			free(a.ids);
			printf("DONE xthread %ld %ld\n", a.tid, (long)syscall(SYS_gettid));
			continue;
		} else if (!strcmp(cmd, "open")) {
			push("open_push", 0);
			open_span = nvtxRangeStartA("open_span");
		} else if (!strcmp(cmd, "close_open")) {
			pop(0);
			nvtxRangeEnd(open_span);
			push("open_push", 0);
			pop(0);
			nvtxRangeEnd(nvtxRangeStartA("open_span"));
		} else if (!strcmp(cmd, "burst")) {
			for (long i = 0; i < n; i++) {
				push("step", 0);
				pop(0);
			}
		} else if (!strcmp(cmd, "ex")) {
			nvtxEventAttributes_t a = attrs(NVTX_MESSAGE_TYPE_ASCII, "step");

			for (long i = 0; i < n; i++) {
				if (nvtxRangePushEx(&a) != 0)
					bad_level();
				pop(0);
				nvtxRangeEnd(nvtxRangeStartEx(&a));
			}
			a = attrs(NVTX_MESSAGE_TYPE_UNICODE, L"step");
			if (nvtxRangePushEx(&a) != 0)
				bad_level();
			pop(0);
			nvtxRangeEnd(nvtxRangeStartEx(&a));
			if (nvtxRangePushEx(NULL) != 0)
				bad_level();
			pop(0);
		} else if (!strcmp(cmd, "levels")) {
			printf("LEVELS %s\n",
			       __atomic_load_n(&levels_ok, __ATOMIC_RELAXED) ? "ok" : "bad");
			continue;
		} else if (!strcmp(cmd, "inject")) {
			int (*start)(void) = (int (*)(void))lib_sym("xprobe_agent_start");

			printf("DONE inject %d ", start ? start() : -1);
			print_path("");
			continue;
		} else if (!strcmp(cmd, "spin")) {
			spin_n = n < 1 ? 1 : n > MAX_SPIN ? MAX_SPIN : n;
			__atomic_store_n(&spinning, 1, __ATOMIC_RELAXED);
			for (long i = 0; i < spin_n; i++)
				pthread_create(&spin_threads[i], NULL, spin_thread, NULL);
		} else if (!strcmp(cmd, "unspin")) {
			__atomic_store_n(&spinning, 0, __ATOMIC_RELAXED);
			for (long i = 0; i < spin_n; i++)
				pthread_join(spin_threads[i], NULL);
			spin_n = 0;
		} else if (!strcmp(cmd, "fork")) {
			int p[2];
			pid_t kid;
			char c = 0;

			if (pipe(p) != 0)
				return 1;
			kid = fork();
			if (kid == 0) {
				/* fork() has returned here: the atfork handlers ran */
				if (write(p[1], "k", 1) != 1)
					_exit(1);
				sleep(5);
				_exit(0);
			}
			if (read(p[0], &c, 1) != 1)
				return 1;
			close(p[0]);
			close(p[1]);
			printf("DONE fork %d\n", (int)kid);
			continue;
		} else if (!strcmp(cmd, "forkexit")) {
			pid_t kid = fork();
			int st = -1;

			if (kid == 0) {
				push("step", 0);
				pop(0);
				exit(0);
			}
			waitpid(kid, &st, 0);
			printf("DONE forkexit %d\n", st);
			continue;
		} else if (!strcmp(cmd, "flush")) {
			int (*flush)(void) = (int (*)(void))lib_sym("xprobe_agent_output_flush");

			printf("DONE flush %d\n", flush ? flush() : -1);
			continue;
		} else if (!strcmp(cmd, "loadclose")) {
			/* a program that dlopens libxprobe and dlcloses it */
			const char *lib = getenv("AGENT_FIXTURE_LIB");
			void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;
			char maps[1 << 16];
			FILE *f;
			size_t got = 0;

			if (h)
				dlclose(h);
			f = fopen("/proc/self/maps", "r");
			if (f) {
				got = fread(maps, 1, sizeof(maps) - 1, f);
				fclose(f);
			}
			maps[got] = '\0';
			printf("DONE loadclose %d %d\n", h != NULL,
			       strstr(maps, "libxprobe.so") != NULL);
			continue;
		} else if (!strcmp(cmd, "reuse_fds")) {
			printf("DONE reuse_fds %d\n", reuse_fds());
			continue;
		} else if (!strcmp(cmd, "exhaust_fds")) {
			while (nheld < HELD_MAX && (held[nheld] = open("/dev/null", O_RDONLY)) >= 0)
				nheld++;
			printf("DONE exhaust_fds %d\n", nheld);
			continue;
		} else if (!strcmp(cmd, "release_fds")) {
			while (nheld)
				close(held[--nheld]);
		} else if (!strcmp(cmd, "check_fds")) {
			check_fds();
			continue;
		} else if (!strcmp(cmd, "path")) {
			print_path("PATH");
			continue;
		} else if (!strcmp(cmd, "quit")) {
			return 0;
		} else {
			printf("UNKNOWN %s\n", cmd);
			continue;
		}
		printf("DONE %s\n", cmd);
	}
	return 0;
}
