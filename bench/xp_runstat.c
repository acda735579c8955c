/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_runstat.c - run a tool the way bench/bench_host.sh measures it:
 *
 *   xp_runstat STATS.json OUT.txt -- TOOL ARGS...
 *
 * Takes CLOCK_MONOTONIC just before exec (t0_ns), copies the tool's stdout
 * to OUT.txt and notes when its first byte arrived (first_output_ns; 0 if
 * none), forwards SIGINT/SIGTERM to it, and writes its peak RSS and CPU
 * time (wait4 rusage) with its exit status to STATS.json.  stdin is
 * inherited, so a tool that waits for stdin can be driven.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child = -1;

static void forward(int signo)
{
	if (child > 0)
		kill(child, signo);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t t0, first = 0, t_end;
	struct sigaction sa;
	struct rusage ru;
	FILE *out, *st;
	int fds[2], status = 0;
	char buf[65536];
	ssize_t n;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: xp_runstat STATS.json OUT.txt -- TOOL ARGS...\n");
		return 2;
	}
	out = fopen(argv[2], "w");
	if (!out || pipe(fds))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = now_ns();
	child = fork();
	if (child == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!first)
			first = now_ns();
		fwrite(buf, 1, (size_t)n, out);
	}
	fclose(out);
	while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR)
		;
	t_end = now_ns();
	st = fopen(argv[1], "w");
	if (!st)
		return 2;
	fprintf(st,
		"{\"t0_ns\": %llu, \"first_output_ns\": %llu, \"wall_ns\": %llu, \"maxrss_kb\": %ld, "
		"\"utime_us\": %ld, \"stime_us\": %ld, \"exit\": %d, \"signal\": %d}\n",
		(unsigned long long)t0, (unsigned long long)first, (unsigned long long)(t_end - t0),
		ru.ru_maxrss, (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec),
		(long)(ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec),
		WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	fclose(st);
	return 0;
}
