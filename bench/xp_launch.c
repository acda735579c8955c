/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_launch.c - the launcher bench_app.sh and bench_inventory.sh run a
 * collector under, for its CPU time and peak RSS alone:
 *
 *   xp_launch STAT TOOL ARGS...
 *
 * Forks, execs TOOL, forwards SIGINT/SIGTERM to it, and writes
 * "<user+system CPU us> <peak RSS KiB>" (wait4 rusage) to STAT; exits with
 * the tool's status (128 + signal when a signal ended it).  Why C and not
 * the scripts' Python: a child forked by Python carries Python's RSS into
 * ru_maxrss (the kernel folds the pre-exec mm's high-water mark into it).
 * The scripts compile it with cc when they start.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void fwd(int s)
{
	if (child > 0)
		kill(child, s);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int st = 0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: xp_launch STAT TOOL ARGS...\n");
		return 2;
	}
	signal(SIGINT, fwd);
	signal(SIGTERM, fwd);
	child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(child, &st, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	if (!f)
		return 127;
	fprintf(f, "%ld %ld\n",
		(long)(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
		       ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec),
		ru.ru_maxrss);
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
