/* SPDX-License-Identifier: Apache-2.0 */
/*
 * atomic_file.c - unnamed temporary (or a named one) + fsync + link or
 * rename + directory fsync; see atomic_file.h for the guarantees.  The
 * sequence number makes concurrent writers in one process use distinct
 * temporary names.
 */
#include <dirent.h>
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
#include "parse.h"
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

static int inflight_has(const char *tmp)
{
	size_t i;

	for (i = 0; i < INFLIGHT_SLOTS; i++)
		if (inflight_used[i] && strcmp(inflight_path[i], tmp) == 0)
			return 1;
	return 0;
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

int xpc_atomic_no_tmpfile;

/* The pid in a temporary's name ".<base>.xprobe-<pid>-<seq>.tmp", or 0. */
static pid_t temp_owner(const char *name)
{
	const char *p = strstr(name, ".xprobe-"), *dash;
	char digits[16];
	size_t n = strlen(name);
	uint64_t v;

	if (name[0] != '.' || !p || n < 5 || strcmp(name + n - 4, ".tmp") != 0)
		return 0;
	p += 8;
	dash = strchr(p, '-');
	if (!dash || (size_t)(dash - p) >= sizeof(digits) || dash == p)
		return 0;
	memcpy(digits, p, (size_t)(dash - p));
	digits[dash - p] = '\0';
	if (xpc_parse_u64(digits, 1, INT32_MAX, &v))
		return 0;
	return (pid_t)v;
}

/*
 * Remove the named temporaries of xprobe processes that are gone (killed
 * between writing and renaming): ours by owner, theirs by a pid no
 * process holds.  A pid reused since is left alone.  At most SWEEP_MAX
 * entries are looked at, so a huge directory costs a bounded time.
 */
#define SWEEP_MAX 4096
static void sweep_dead(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned looked = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && looked++ < SWEEP_MAX) {
		struct stat st;
		pid_t pid = temp_owner(e->d_name);

		if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid())
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int xpc_atomic_check(const char *path, unsigned *mode)
{
	char *dup_dir = NULL, *dup_base = NULL;
	const char *base, *dir;
	struct stat st;
	int rc = 0;

	*mode = 0;
	if (!path || !*path)
		return -EINVAL;
	dup_dir = strdup(path);
	dup_base = strdup(path);
	if (!dup_dir || !dup_base) {
		rc = -ENOMEM;
		goto out;
	}
	base = basename(dup_base);
	if (!*base || strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		rc = -EISDIR;
		goto out;
	}
	dir = dirname(dup_dir); /* may be a static "." */
	if (stat(dir, &st) < 0)
		rc = -errno;
	else if (!S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	else if (access(dir, W_OK | X_OK) < 0)
		rc = -errno;
	else if ((rc = check_dest(path, mode)) > 0)
		rc = 0;
out:
	free(dup_dir);
	free(dup_base);
	return rc;
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
	sweep_dead(dir);
	n = strlen(dir) + strlen(base) + 64;
	f->tmp_path = malloc(n);
	if (!f->tmp_path) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(f->tmp_path, n, "%s/.%s.xprobe-%d-%lu.tmp", dir, base, (int)getpid(),
		 __atomic_add_fetch(&tmp_seq, 1, __ATOMIC_RELAXED));
	/* unnamed first: a writer killed mid-way leaves nothing behind */
	f->fd = xpc_atomic_no_tmpfile ? -1 :
					open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (f->fd >= 0) {
		f->unnamed = true;
	} else {
		f->fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (f->fd < 0) {
			err = -errno;
			free(f->tmp_path);
			f->tmp_path = NULL;
			goto out;
		}
		inflight_add(f->tmp_path);
	}
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

/* Give the unnamed temporary @name (no file may have it). */
static int link_unnamed(int fd, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* no /proc: the empty path needs CAP_DAC_READ_SEARCH */
	return linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) < 0 ? -errno : 0;
}

/*
 * The unnamed temporary into place: linked under the final name when
 * nothing has it (atomic: the name appears with the whole content), or
 * linked under the temporary name and renamed over a regular file (the
 * name exists for that moment only; a writer killed there leaves it for
 * the next write's sweep).
 */
static int place_unnamed(struct xpc_atomic_file *f)
{
	int tries, rc;

	for (tries = 0; tries < 2; tries++) {
		rc = check_dest(f->path, &f->dest_mode);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			rc = link_unnamed(f->fd, f->path);
			if (rc != -EEXIST)
				return rc;
			continue; /* appeared meanwhile: check it again */
		}
		rc = link_unnamed(f->fd, f->tmp_path);
		if (rc)
			return rc;
		inflight_add(f->tmp_path);
		if (rename(f->tmp_path, f->path) < 0) {
			rc = -errno;
			return rc; /* the abort removes the name */
		}
		inflight_del(f->tmp_path);
		return 0;
	}
	return -EEXIST;
}

/* Rename the temporary onto a destination that check_dest() allows. */
static int replace_dest(struct xpc_atomic_file *f)
{
	int tries, rc;

	if (f->unnamed)
		return place_unnamed(f);
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
	if (!f->unnamed) {
		if (close(f->fd) < 0 && !err)
			err = -errno;
		f->fd = -1;
	}
	if (!err && xpc_atomic_fault_before_rename)
		err = xpc_atomic_fault_before_rename;
	if (!err)
		err = replace_dest(f);
	if (f->unnamed && f->fd >= 0) {
		if (close(f->fd) < 0 && !err)
			err = -errno;
		f->fd = -1;
	}
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
		/* unnamed: the name exists only if linked and not yet renamed */
		if (!f->unnamed || inflight_has(f->tmp_path))
			unlink(f->tmp_path);
		inflight_del(f->tmp_path);
	}
	free(f->tmp_path);
	free(f->path);
	f->tmp_path = NULL;
	f->path = NULL;
}

int xpc_atomic_write(const char *path, const void *data, size_t len)
{
	return xpc_atomic_write_mode(path, data, len, 0600);
}

int xpc_atomic_write_mode(const char *path, const void *data, size_t len, unsigned mode)
{
	struct xpc_atomic_file f;
	const char *p = data;
	int err;

	err = xpc_atomic_open(&f, path);
	if (err)
		return err;
	if (mode != 0600 && fchmod(f.fd, mode) < 0) {
		err = -errno;
		xpc_atomic_abort(&f);
		return err;
	}
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
