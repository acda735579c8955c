/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env_hooks.c - secure_getenv for every variable the CLI reads, and
 * loading a library named by the environment
 * only from a path no other user can write (env_hooks.h says what each
 * door trusts).
 *
 * Invariant of xpc_dlopen_trusted(): the inode dlopen() maps is the one
 * whose owner and mode were checked -- it is reached through the O_PATH
 * descriptor that fstat() examined, never through the path again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env_hooks.h"

const char *xpc_env(const char *name)
{
	const char *v = secure_getenv(name);

	return v && v[0] ? v : NULL;
}

/* Owner root or the real uid, writable by nobody else. */
static bool trusted_stat(const struct stat *st, const char *what, const char *path,
			 const char *var, char *why, size_t why_size)
{
	uid_t ruid = getuid();

	if (st->st_uid != 0 && st->st_uid != ruid) {
		snprintf(why, why_size,
			 "refused: %s %s is owned by uid %u, neither root nor the real user (uid %u); %s must name a file that only root or you can write",
			 what, path, (unsigned)st->st_uid, (unsigned)ruid, var);
		return false;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_size,
			 "refused: %s %s is writable by group or others (mode %04o); %s must name a file that only root or you can write",
			 what, path, (unsigned)(st->st_mode & 07777), var);
		return false;
	}
	return true;
}

static void open_failed(const char *path, int e, char *why, size_t why_size)
{
	snprintf(why, why_size, "%s: cannot open shared object file: %s", path, strerror(e));
}

void *xpc_dlopen_trusted(const char *path, int flags, const char *var, char *why,
			 size_t why_size)
{
	char dir[PATH_MAX], proc[64];
	const char *slash, *base;
	int dfd = -1, fd = -1;
	struct stat st;
	void *h = NULL;

	why[0] = '\0';
	if (!path || path[0] != '/') {
		snprintf(why, why_size, "refused: %s must be an absolute path, not \"%s\"", var,
			 path ? path : "");
		return NULL;
	}
	slash = strrchr(path, '/');
	base = slash + 1;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
	    (size_t)(slash - path) >= sizeof(dir)) {
		snprintf(why, why_size, "refused: %s \"%s\" does not name a file", var, path);
		return NULL;
	}
	if (slash == path) {
		dir[0] = '/';
		dir[1] = '\0';
	} else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		open_failed(path, errno, why, why_size);
		goto out;
	}
	if (fstat(dfd, &st) < 0) {
		open_failed(path, errno, why, why_size);
		goto out;
	}
	if (!trusted_stat(&st, "directory", dir, var, why, why_size))
		goto out;
	fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		open_failed(path, errno, why, why_size);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		open_failed(path, errno, why, why_size);
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, why_size, "refused: %s is a symbolic link; %s must name the file itself",
			 path, var);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "refused: %s is not a regular file", path);
		goto out;
	}
	if (!trusted_stat(&st, "file", path, var, why, why_size))
		goto out;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	h = dlopen(proc, flags);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, why_size, "%s: %s", path, e ? e : "dlopen failed");
	}
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return h;
}
