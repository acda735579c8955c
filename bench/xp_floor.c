/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xp_floor.c - attach the empty programs of bpf/xp_floor.bpf.c the way
 * xprobe attaches its own, print "armed", and hold them until stdin closes
 * or SIGINT/SIGTERM: the floor bench/bench_host.sh measures against.
 *
 *   xp_bench_floor uprobe PID PATH OFFSET   uprobe + uretprobe at OFFSET
 *   xp_bench_floor syscalls                 raw sys_enter + sys_exit
 *   xp_bench_floor usdt PID PATH PROVIDER NAME1 NAME2
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "xp_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct bpf_link *links[4] = { NULL };
	struct xp_floor_bpf *skel = NULL;
	struct sigaction sa;
	int n = 0, err = 1, i;
	char c;

	if (argc < 2) {
		fprintf(stderr, "usage: xp_bench_floor uprobe|syscalls|usdt ...\n");
		return 2;
	}
	libbpf_set_print(quiet);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = xp_floor_bpf__open();
	if (!skel)
		goto out;
	bpf_program__set_autoload(skel->progs.floor_uprobe, !strcmp(argv[1], "uprobe"));
	bpf_program__set_autoload(skel->progs.floor_sys_enter, !strcmp(argv[1], "syscalls"));
	bpf_program__set_autoload(skel->progs.floor_sys_exit, !strcmp(argv[1], "syscalls"));
	bpf_program__set_autoload(skel->progs.floor_usdt, !strcmp(argv[1], "usdt"));
	if (xp_floor_bpf__load(skel))
		goto out;
	if (!strcmp(argv[1], "uprobe") && argc == 5) {
		pid_t pid = (pid_t)strtol(argv[2], NULL, 0);
		size_t off = (size_t)strtoul(argv[4], NULL, 0);
		LIBBPF_OPTS(bpf_uprobe_opts, entry, .retprobe = false);
		LIBBPF_OPTS(bpf_uprobe_opts, ret, .retprobe = true);

		links[n++] = bpf_program__attach_uprobe_opts(skel->progs.floor_uprobe, pid, argv[3],
							     off, &entry);
		links[n++] = bpf_program__attach_uprobe_opts(skel->progs.floor_uprobe, pid, argv[3],
							     off, &ret);
	} else if (!strcmp(argv[1], "syscalls")) {
		links[n++] = bpf_program__attach_raw_tracepoint(skel->progs.floor_sys_enter,
								"sys_enter");
		links[n++] = bpf_program__attach_raw_tracepoint(skel->progs.floor_sys_exit,
								"sys_exit");
	} else if (!strcmp(argv[1], "usdt") && argc == 7) {
		pid_t pid = (pid_t)strtol(argv[2], NULL, 0);

		links[n++] = bpf_program__attach_usdt(skel->progs.floor_usdt, pid, argv[3], argv[4],
						      argv[5], NULL);
		links[n++] = bpf_program__attach_usdt(skel->progs.floor_usdt, pid, argv[3], argv[4],
						      argv[6], NULL);
	} else {
		fprintf(stderr, "xp_bench_floor: bad arguments\n");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (!links[i]) {
			fprintf(stderr, "xp_bench_floor: attach failed: %s\n", strerror(errno));
			goto out;
		}
	printf("armed\n");
	fflush(stdout);
	while (!stop && read(0, &c, 1) > 0)
		;
	err = 0;
out:
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	xp_floor_bpf__destroy(skel);
	return err;
}
