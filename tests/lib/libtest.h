/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libtest.h - helpers shared by libxprobe's C tests (tests/unit/test_lib_*.c):
 * scratch directories, locating the build's helper programs and
 * libxprobe.so, running a helper with an environment, counting the
 * records of a session directory through the public reader, small tmpfs
 * mounts (a full file system on demand; the tests run as root), and
 * forking a scenario into a child whose death is a failure, not a crash of
 * the test.
 *
 * Header-only (static functions) so each test stays one file.
 */
#ifndef XPL_LIBTEST_H
#define XPL_LIBTEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xprobe/xprobe.h"

/* rm -rf @path (test scratch only). */
static __attribute__((unused)) int lt_rm_rf(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char sub[PATH_MAX];

	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			lt_rm_rf(sub);
		}
		closedir(d);
	}
	return rmdir(path);
}

/* A fresh scratch directory under /tmp; the test chdirs into it so that
 * relative defaults ("./output") land there, never in the source tree. */
static __attribute__((unused)) void lt_scratch(char *out, size_t size, const char *tag)
{
	snprintf(out, size, "/tmp/xpl-test-%s-%d", tag, (int)getpid());
	lt_rm_rf(out);
	mkdir(out, 0700);
	if (chdir(out) != 0)
		perror("chdir");
}

/* The build directory: two levels above this test binary (build/tests/x). */
static __attribute__((unused)) void lt_build_dir(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0) {
		snprintf(out, size, ".");
		return;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0'; /* build/tests */
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0'; /* build */
	snprintf(out, size, "%s", exe);
}

static __attribute__((unused)) void lt_build_path(char *out, size_t size, const char *rel)
{
	char b[PATH_MAX];

	lt_build_dir(b, sizeof(b));
	snprintf(out, size, "%s/%s", b, rel);
}

/* The single <base>/<inst>-<pid>/<ns> session directory under @base. */
static __attribute__((unused)) int lt_find_session(const char *base, char *out, size_t size)
{
	DIR *d1 = opendir(base), *d2;
	struct dirent *a, *b;
	char mid[PATH_MAX];
	int found = 0;

	if (!d1)
		return -1;
	while ((a = readdir(d1))) {
		if (a->d_name[0] == '.')
			continue;
		snprintf(mid, sizeof(mid), "%s/%s", base, a->d_name);
		d2 = opendir(mid);
		if (!d2)
			continue;
		while ((b = readdir(d2))) {
			if (b->d_name[0] == '.')
				continue;
			snprintf(out, size, "%s/%s", mid, b->d_name);
			found++;
		}
		closedir(d2);
	}
	closedir(d1);
	return found == 1 ? 0 : -1;
}

/*
 * Run @argv with @env added to the environment; stdout goes to @out_path,
 * stderr to @err_path (NULL: inherited).  Returns the wait status.
 */
static __attribute__((unused)) int lt_run_err(char *const argv[], const char *const env[],
					      const char *out_path, const char *err_path)
{
	pid_t pid = fork();
	int st = -1;

	if (pid == 0) {
		const char *paths[2] = { out_path, err_path };

		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		for (int k = 0; k < 2; k++) {
			int fd;

			if (!paths[k])
				continue;
			fd = open(paths[k], O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				dup2(fd, 1 + k);
				close(fd);
			}
		}
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return st;
}

static __attribute__((unused)) int lt_run(char *const argv[], const char *const env[],
					  const char *out_path)
{
	return lt_run_err(argv, env, out_path, NULL);
}

static __attribute__((unused)) size_t lt_read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* Count records of @type (0 = all) whose aux is @aux (-1 = any) across
 * every stream of @x. */
static __attribute__((unused)) uint64_t lt_count_aux(const struct xprobe_xtf *x, uint32_t type,
						     int64_t aux)
{
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	uint64_t n = 0;

	xprobe_xtf_get_info(x, &in);
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream s;
		size_t cur = 0;
		const struct xprobe_record *r;

		xprobe_xtf_get_stream(x, i, &s);
		while ((r = xprobe_xtf_next_record(&s, &cur)))
			if ((!type || r->type == type) && (aux < 0 || r->aux == (uint64_t)aux))
				n++;
	}
	return n;
}

/* Count records of @type across every stream of @x (type 0 = all). */
static __attribute__((unused)) uint64_t lt_count(const struct xprobe_xtf *x, uint32_t type)
{
	return lt_count_aux(x, type, -1);
}

/* The file named @name in session @s, or NULL. */
static __attribute__((unused)) const struct xprobe_xtf *lt_file(const struct xprobe_session *s,
								const char *name)
{
	for (size_t i = 0; i < xprobe_session_file_count(s); i++) {
		const char *n;
		const struct xprobe_xtf *x = xprobe_session_get_file(s, i, &n);

		if (!strcmp(n, name))
			return x;
	}
	return NULL;
}

static __attribute__((unused)) bool lt_exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* Mount a tmpfs of @kib KiB at @dir (created), 0755, with the mount
 * flags @mflags (MS_NOSUID ...).  0 or -1. */
static __attribute__((unused)) int lt_tmpfs_mount_flags(const char *dir, unsigned kib,
							unsigned long mflags)
{
	char opts[64];

	mkdir(dir, 0755);
	umount2(dir, MNT_DETACH); /* a leftover of an earlier crash */
	snprintf(opts, sizeof(opts), "size=%uk,mode=0755", kib);
	if (mount("none", dir, "tmpfs", mflags, opts) != 0) {
		fprintf(stderr, "mount tmpfs at %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static __attribute__((unused)) int lt_tmpfs_mount(const char *dir, unsigned kib)
{
	return lt_tmpfs_mount_flags(dir, kib, MS_NOSUID | MS_NODEV);
}

/* Copy @from to @to (created with @mode).  0 or -1. */
static __attribute__((unused)) int lt_copy(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out, rc = 0;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (n < 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

static __attribute__((unused)) void lt_tmpfs_umount(const char *dir)
{
	if (umount2(dir, MNT_DETACH) != 0)
		fprintf(stderr, "umount %s: %s\n", dir, strerror(errno));
	rmdir(dir);
}

/* Fill the file system of @dir with @dir/filler until it is full (ENOSPC).
 * Returns the bytes written. */
static __attribute__((unused)) size_t lt_fill_fs(const char *dir)
{
	static char block[4096];
	char path[PATH_MAX];
	size_t total = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/filler", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		return 0;
	while ((n = write(fd, block, sizeof(block))) > 0)
		total += (size_t)n;
	close(fd);
	return total;
}

static __attribute__((unused)) void lt_unfill_fs(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/filler", dir);
	unlink(path);
}

/* How many entries of @dir contain @part in their name. */
static __attribute__((unused)) int lt_count_names(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, part) != NULL;
	closedir(d);
	return n;
}

/*
 * Run @fn in a child process: it returns the number of failed checks it
 * saw.  True when the child exited 0; a child killed by a signal (the
 * SIGBUS of a full disk, an alarm after @secs) is reported and false.
 */
static __attribute__((unused)) bool lt_in_child(const char *what, int (*fn)(void *), void *arg,
						unsigned secs)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		alarm(secs);
		_exit(fn(arg) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	if (WIFSIGNALED(st))
		fprintf(stderr, "%s: the process died of signal %d (%s)\n", what, WTERMSIG(st),
			strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st))
		fprintf(stderr, "%s: failed checks in the child\n", what);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#endif /* XPL_LIBTEST_H */
