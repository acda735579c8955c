/* SPDX-License-Identifier: Apache-2.0 */
/*
 * target_files.c - resolve paths inside a target's root and pick paths xprobe
 * can open for its mapped files (rules in files.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target_files.h"

static long sys_openat2(int dirfd, const char *path, struct open_how *how)
{
#ifdef SYS_openat2
	return syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
#else
	errno = ENOSYS;
	return -1;
#endif
}

int xp_target_fs_open(const struct xp_target *t, struct xp_target_fs *fs, struct xp_error *err)
{
	char path[96], a[64], b[64];
	struct stat rs, ours;
	int rc;

	memset(fs, 0, sizeof(*fs));
	fs->t = t;
	fs->root_fd = -1;
	/* a zombie leader's root and exe are gone: a live thread's are the same */
	xp_proc_base(t->pid, fs->base, sizeof(fs->base));
	snprintf(path, sizeof(path), "%s/root", fs->base);
	fs->root_fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fs->root_fd < 0)
		return xp_proc_fail(t, "root", -errno, err);
	if (fstat(fs->root_fd, &rs) < 0 || stat("/", &ours) < 0) {
		rc = -errno;
		xp_target_fs_close(fs);
		return xp_proc_fail(t, "root", rc, err);
	}
	rc = xp_proc_ns_link(t->pid, "mnt", a, sizeof(a));
	if (!rc)
		rc = xp_proc_ns_link(0, "mnt", b, sizeof(b));
	if (rc) {
		xp_target_fs_close(fs);
		return xp_proc_fail(t, "ns/mnt", rc, err);
	}
	fs->same_mntns = strcmp(a, b) == 0;
	fs->same_root = fs->same_mntns && rs.st_dev == ours.st_dev && rs.st_ino == ours.st_ino;
	snprintf(path, sizeof(path), "%s/exe", fs->base);
	if (stat(path, &rs) == 0) {
		fs->has_exe = true;
		fs->exe_dev = rs.st_dev;
		fs->exe_ino = rs.st_ino;
	}
	return 0;
}

void xp_target_fs_close(struct xp_target_fs *fs)
{
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	fs->root_fd = -1;
}

int xp_target_fs_stat(struct xp_target_fs *fs, const char *path, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT,
	};
	char buf[4200];
	long fd;
	int rc;

	if (fs->same_root)
		return stat(path, st) < 0 ? -errno : 0;
	fd = sys_openat2(fs->root_fd, path, &how);
	if (fd >= 0) {
		rc = fstat((int)fd, st) < 0 ? -errno : 0;
		close((int)fd);
		return rc;
	}
	if (errno != ENOSYS && errno != EINVAL)
		return -errno;
	/* no openat2: the magic root link (absolute symlinks may escape) */
	snprintf(buf, sizeof(buf), "%s/root%s", fs->base, path);
	return stat(buf, st) < 0 ? -errno : 0;
}

static int try_path(const char *path, const struct xp_map_entry *m, char **out, int *seen)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == EACCES || errno == EPERM)
			*seen = -EACCES;
		return -1;
	}
	if ((uint64_t)st.st_ino != m->inode || !S_ISREG(st.st_mode))
		return -1;
	if (access(path, R_OK) < 0) {
		*seen = -EACCES;
		return -1;
	}
	*out = strdup(path);
	return *out ? 0 : -ENOMEM;
}

int xp_target_fs_access(struct xp_target_fs *fs, const struct xp_map_entry *m, char **out)
{
	char buf[4200];
	int seen = -ENOENT, rc;

	*out = NULL;
	if (!xp_map_is_file(m))
		return -ENOENT;
	if (fs->same_root && !m->deleted && (rc = try_path(m->path, m, out, &seen)) >= 0)
		return rc;
	if (!m->deleted) {
		snprintf(buf, sizeof(buf), "%s/root%s", fs->base, m->path);
		if ((rc = try_path(buf, m, out, &seen)) >= 0)
			return rc;
	}
	snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", fs->t->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	if ((rc = try_path(buf, m, out, &seen)) >= 0)
		return rc;
	return seen;
}

int xp_target_fs_python_rank(const struct xp_target_fs *fs, const struct xp_map_entry *f)
{
	if (fs->has_exe && f->inode == (uint64_t)fs->exe_ino)
		return 0;
	return strncmp(xp_path_base(f->path), "libpython", 9) == 0 ? 1 : 2;
}

int xp_target_fs_kind(struct xp_target_fs *fs, int fd, uint16_t e_type, enum xp_object_kind *kind)
{
	struct stat st;

	if (e_type == ET_EXEC) {
		*kind = XP_OBJ_EXECUTABLE;
		return 0;
	}
	if (e_type != ET_DYN)
		return -EINVAL;
	if (fs->has_exe && fstat(fd, &st) == 0 && st.st_dev == fs->exe_dev &&
	    st.st_ino == fs->exe_ino)
		*kind = XP_OBJ_PIE;
	else
		*kind = XP_OBJ_SHARED_LIBRARY;
	return 0;
}
