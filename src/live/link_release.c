/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link_release.c - the child that waits out the kernel's detach
 * (link_release.h says why and what it keeps).
 *
 * Invariant: the child holds only the descriptors the parent classified
 * as probe holders before the fork, plus /dev/null on 0, 1 and 2.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../common/env_hooks.h"
#include "../../common/parse.h"
#include "link_release.h"
#include "uprobe_link.h"

/* descriptors one release hands over at most (more: the parent waits) */
#define RELEASE_MAX 4096

/* Whether descriptor @fd of this process holds a probe. */
static bool holds_probe(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:bpf_link") || !strcmp(target, "anon_inode:[perf_event]");
}

static int fd_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The probe holders of this process, sorted, in @fds; their count, or
 * -errno (-E2BIG: more than @max). */
static int collect(int *fds, int max)
{
	struct dirent *d;
	int n = 0, rc = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long fd = strtol(d->d_name, &end, 10);

		if (*end || end == d->d_name || fd < 3 || fd == dirfd(dir) || !holds_probe((int)fd))
			continue;
		if (n == max) {
			rc = -E2BIG;
			break;
		}
		fds[n++] = (int)fd;
	}
	closedir(dir);
	if (rc)
		return rc;
	qsort(fds, (size_t)n, sizeof(*fds), fd_cmp);
	return n;
}

/* The child: every inherited descriptor but @fds closed, the standard
 * streams on /dev/null, then @fds (each close may wait in the kernel). */
/* Close [@from, @to] in the child: close_range (5.9+), else one by one up
 * to @open_max (the descriptor limit, read before the fork). */
static void close_span(unsigned int from, unsigned int to, long open_max)
{
	if (!syscall(SYS_close_range, from, to, 0))
		return;
	for (long fd = from; fd <= (long)to && fd < open_max; fd++)
		close((int)fd);
}

static __attribute__((noreturn)) void child(const int *fds, int n, long hold_ms, long open_max)
{
	int null = open("/dev/null", O_RDWR);
	unsigned int from = 3;

	prctl(PR_SET_NAME, "xprobe-release");
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	/* the gaps [3, fds[0]), (fds[i], fds[i+1]), (last, ~0] */
	for (int i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)fds[i] : ~0u;

		if (to > from)
			close_span(from, to - 1, open_max);
		if (i == n)
			break;
		from = to + 1;
	}
	if (hold_ms > 0) { /* test builds: time to look at the child */
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	_exit(0);
}

/* XPROBE_TEST_RELEASE_HOLD_MS (test builds): the child waits that long
 * before its closes. */
static long hold_ms(void)
{
	const char *v = xpc_test_hook_env("XPROBE_TEST_RELEASE_HOLD_MS");
	uint64_t ms;

	if (!v || xpc_parse_u64(v, 0, 60000, &ms))
		return 0;
	return (long)ms;
}

int xp_link_release_to_child(void)
{
	long hold = hold_ms(), open_max = sysconf(_SC_OPEN_MAX);
	int *fds, n;
	pid_t pid;

	xp_uprobe_warm_join(); /* no thread inside a registration at the fork */
	fds = malloc(RELEASE_MAX * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	n = collect(fds, RELEASE_MAX);
	if (n <= 0) {
		free(fds);
		return n;
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		n = -errno;
		free(fds);
		return n;
	}
	if (pid == 0)
		child(fds, n, hold, open_max > 0 ? open_max : 1024);
	free(fds);
	return n;
}
