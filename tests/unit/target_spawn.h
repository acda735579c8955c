/* SPDX-License-Identifier: Apache-2.0 */
/*
 * target_spawn.h - start a fixture program for the target unit tests and
 * read what it says about itself ("addr <name> 0x<hex>" lines up to
 * "ready").  Fixtures live beside the test binaries:
 * <build>/tests/fixtures, found from /proc/self/exe.
 */
#ifndef XP_TEST_TARGET_SPAWN_H
#define XP_TEST_TARGET_SPAWN_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/parse.h"

#define FX_MAX_ADDRS 32

struct fx_proc {
	pid_t pid;
	int stdin_fd;
	FILE *out;
	size_t naddrs;
	char names[FX_MAX_ADDRS][128];
	uint64_t addrs[FX_MAX_ADDRS];
};

static __attribute__((unused)) const char *fx_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return "tests/fixtures";
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(dir, sizeof(dir), "%s/fixtures", exe);
	return dir;
}

static __attribute__((unused)) void fx_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", fx_dir(), name);
}

/* argv[0] is a fixture name or an absolute program path. */
static __attribute__((unused)) int fx_start(struct fx_proc *p, char *const argv[])
{
	int in[2], out[2];
	char prog[PATH_MAX], line[512];

	memset(p, 0, sizeof(*p));
	if (argv[0][0] == '/')
		snprintf(prog, sizeof(prog), "%s", argv[0]);
	else
		fx_path(prog, sizeof(prog), argv[0]);
	if (pipe(in) || pipe(out))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(prog, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->stdin_fd = in[1];
	p->out = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), p->out)) {
		char name[128], *tab, *nl;
		uint64_t a;

		if (strcmp(line, "ready\n") == 0)
			return 0;
		if (strncmp(line, "addr ", 5) != 0 || p->naddrs == FX_MAX_ADDRS)
			continue;
		tab = strrchr(line, '\t');
		if (!tab)
			tab = strrchr(line, ' ');
		if (!tab)
			continue;
		nl = strchr(tab + 1, '\n');
		if (nl)
			*nl = '\0';
		if (xpc_parse_hex_u64(tab + 1, &a))
			continue;
		*tab = '\0';
		snprintf(name, sizeof(name), "%s", line + 5);
		memcpy(p->names[p->naddrs], name, sizeof(name));
		p->addrs[p->naddrs++] = a;
	}
	return -EIO;
}

static __attribute__((unused)) uint64_t fx_addr(const struct fx_proc *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->naddrs; i++)
		if (strcmp(p->names[i], name) == 0)
			return p->addrs[i];
	fprintf(stderr, "fixture printed no address for %s\n", name);
	return 0;
}

/* End the fixture and reap it. */
static __attribute__((unused)) void fx_stop(struct fx_proc *p)
{
	int st;

	if (p->pid <= 0)
		return;
	close(p->stdin_fd);
	kill(p->pid, SIGTERM);
	waitpid(p->pid, &st, 0);
	if (p->out)
		fclose(p->out);
	p->pid = 0;
}

#endif /* XP_TEST_TARGET_SPAWN_H */
