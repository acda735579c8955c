/* SPDX-License-Identifier: Apache-2.0 */
/*
 * atomic_file.c - temporary + fsync + rename + directory fsync; see
 * atomic_file.h for the guarantees.  The sequence number makes concurrent
 * writers in one process use distinct temporaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "readfile.h"

int xpc_atomic_fault_before_rename;

static unsigned long tmp_seq;

/*
 * Temporaries that exist now, for xpc_atomic_unlink_inflight() (a signal
 * handler: cancel.c).  A slot's path is written before its flag is set
 * and the flag cleared before the file goes, so the handler only reads
 * complete paths; at worst it unlinks a name already gone.  More writes
 * in flight than slots go unregistered (the CLI has one at a time).
 */
#define INFLIGHT_SLOTS 4
static char inflight_path[INFLIGHT_SLOTS][PATH_MAX];
static volatile sig_atomic_t inflight_used[INFLIGHT_SLOTS];

static void inflight_add(const char *tmp)
{
	size_t i, n = strlen(tmp);

	if (n >= PATH_MAX)
		return;
	for (i = 0; i < INFLIGHT_SLOTS; i++) {
		if (inflight_used[i])
			continue;
		memcpy(inflight_path[i], tmp, n + 1);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		inflight_used[i] = 1;
		return;
	}
}

static void inflight_del(const char *tmp)
{
	size_t i;

	for (i = 0; i < INFLIGHT_SLOTS; i++)
		if (inflight_used[i] && strcmp(inflight_path[i], tmp) == 0)
			inflight_used[i] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void xpc_atomic_unlink_inflight(void)
{
	size_t i;

	for (i = 0; i < INFLIGHT_SLOTS; i++)
		if (inflight_used[i])
			unlink(inflight_path[i]);
}

/*
 * May @path be replaced?  0: a regular file is there; 1: nothing is
 * there; -ELOOP, -EISDIR, -XPC_EFTYPE (the type in *mode) or the lstat's
 * -errno otherwise.  lstat, not stat: a symlink is itself the entry the
 * rename would replace.
 */
static int check_dest(const char *path, unsigned *mode)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 1 : -errno;
	if (S_ISREG(st.st_mode))
		return 0;
	*mode = (unsigned)st.st_mode;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return S_ISDIR(st.st_mode) ? -EISDIR : -XPC_EFTYPE;
}

int xpc_atomic_open(struct xpc_atomic_file *f, const char *path)
{
	char *dup_dir = NULL, *dup_base = NULL;
	const char *dir, *base;
	size_t n;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (!path || !*path)
		return -EINVAL;
	dup_dir = strdup(path);
	dup_base = strdup(path);
	f->path = strdup(path);
	if (!dup_dir || !dup_base || !f->path) {
		err = -ENOMEM;
		goto out;
	}
	dir = dirname(dup_dir);
	base = basename(dup_base);
	if (!*base || strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		err = -EISDIR;
		goto out;
	}
	/* refuse before a byte is written (checked again at commit) */
	err = check_dest(path, &f->dest_mode);
	if (err < 0)
		goto out;
	err = 0;
	n = strlen(dir) + strlen(base) + 64;
	f->tmp_path = malloc(n);
	if (!f->tmp_path) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(f->tmp_path, n, "%s/.%s.xprobe-%d-%lu.tmp", dir, base, (int)getpid(),
		 __atomic_add_fetch(&tmp_seq, 1, __ATOMIC_RELAXED));
	f->fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f->fd < 0) {
		err = -errno;
		free(f->tmp_path);
		f->tmp_path = NULL;
		goto out;
	}
	inflight_add(f->tmp_path);
	/* O_CREAT honours the umask; make 0600 explicit. */
	if (fchmod(f->fd, 0600) < 0)
		err = -errno;
out:
	free(dup_dir);
	free(dup_base);
	if (err)
		xpc_atomic_abort(f); /* keeps dest_mode */
	return err;
}

/* Rename the temporary onto a destination that check_dest() allows. */
static int replace_dest(struct xpc_atomic_file *f)
{
	int tries, rc;

	for (tries = 0; tries < 2; tries++) {
		rc = check_dest(f->path, &f->dest_mode);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return rename(f->tmp_path, f->path) < 0 ? -errno : 0;
		/* absent: create it, but replace nothing that appeared since */
		if (renameat2(AT_FDCWD, f->tmp_path, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EINVAL || errno == ENOSYS) /* no RENAME_NOREPLACE here */
			return rename(f->tmp_path, f->path) < 0 ? -errno : 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int fsync_dir_of(const char *path)
{
	char *dup = strdup(path);
	int fd, err = 0;

	if (!dup)
		return -ENOMEM;
	fd = open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		if (fsync(fd) < 0 && errno != EINVAL)
			err = -errno;
		close(fd);
	}
	free(dup);
	return err;
}

int xpc_atomic_commit(struct xpc_atomic_file *f)
{
	int err = 0;

	if (f->fd < 0 || !f->tmp_path)
		return -EBADF;
	if (fsync(f->fd) < 0)
		err = -errno;
	if (close(f->fd) < 0 && !err)
		err = -errno;
	f->fd = -1;
	if (!err && xpc_atomic_fault_before_rename)
		err = xpc_atomic_fault_before_rename;
	if (!err)
		err = replace_dest(f);
	if (err) {
		xpc_atomic_abort(f);
		return err;
	}
	inflight_del(f->tmp_path); /* renamed: no longer ours to remove */
	free(f->tmp_path);
	f->tmp_path = NULL;
	err = fsync_dir_of(f->path);
	xpc_atomic_abort(f);
	return err;
}

void xpc_atomic_abort(struct xpc_atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp_path) {
		inflight_del(f->tmp_path);
		unlink(f->tmp_path);
	}
	free(f->tmp_path);
	free(f->path);
	f->tmp_path = NULL;
	f->path = NULL;
}

int xpc_atomic_write(const char *path, const void *data, size_t len)
{
	struct xpc_atomic_file f;
	const char *p = data;
	int err;

	err = xpc_atomic_open(&f, path);
	if (err)
		return err;
	while (len) {
		ssize_t n = write(f.fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			xpc_atomic_abort(&f);
			return err;
		}
		p += n;
		len -= (size_t)n;
	}
	return xpc_atomic_commit(&f);
}

/* realpath(dirname(p)) "/" basename(p) into @out, or the text of @p. */
static void canonical_name(const char *p, char *out, size_t size)
{
	char *d = strdup(p), *b = strdup(p), dir[PATH_MAX];

	if (d && b && realpath(dirname(d), dir))
		snprintf(out, size, "%s/%s", dir, basename(b));
	else
		snprintf(out, size, "%s", p);
	free(d);
	free(b);
}

int xpc_same_file(const char *a, const char *b)
{
	char ca[PATH_MAX + NAME_MAX + 2], cb[sizeof(ca)];
	struct stat sa, sb;
	int ea = stat(a, &sa), eb = stat(b, &sb);

	if (ea == 0 && eb == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ea == 0 || eb == 0)
		return 0;
	canonical_name(a, ca, sizeof(ca));
	canonical_name(b, cb, sizeof(cb));
	return strcmp(ca, cb) == 0;
}
