/* SPDX-License-Identifier: Apache-2.0 */
/*
 * target_files.h - reaching a target's files from xprobe, whichever mount
 * namespace or root the target lives in.
 *
 * A selector names a binary as the target sees it.  It is resolved inside
 * the target's root (openat2 RESOLVE_IN_ROOT on /proc/<pid>/root, so an
 * absolute symlink in a container resolves inside the container) and
 * matched to the target's mappings by inode, never by comparing text:
 * symlinks, hard links and bind mounts all name the same mapped file.
 * The path reported (binary_path) is the kernel's path of the mapping.
 *
 * The path xprobe opens (access_path) is, in order of preference, the
 * mapping's path itself (same root and mount namespace, same inode),
 * /proc/<pid>/root/<path>, or /proc/<pid>/map_files/<start>-<end> (a
 * file replaced or deleted since the target mapped it).  Each candidate
 * is checked by inode before it is used.
 */
#ifndef XP_RESOLVE_TARGET_FILES_H
#define XP_RESOLVE_TARGET_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../model/error_record.h"
#include "../process/identity.h"
#include "../process/procfs.h"
#include "resolve.h"

struct xp_target_fs {
	const struct xp_target *t;
	char base[64]; /* /proc/<pid>, or a live thread's /proc/<pid>/task/<tid> */
	int root_fd; /* O_PATH <base>/root */
	bool same_root; /* the target's root and mount ns are ours */
	bool same_mntns;
	bool has_exe;
	dev_t exe_dev; /* /proc/<pid>/exe's file */
	ino_t exe_ino;
};

/* Errors: TARGET_EXITED/REUSED, PERMISSION_DENIED. */
int xp_target_fs_open(const struct xp_target *t, struct xp_target_fs *fs, struct xp_error *err);
void xp_target_fs_close(struct xp_target_fs *fs);

/* stat @path resolved inside the target's root.  Return 0 or -errno. */
int xp_target_fs_stat(struct xp_target_fs *fs, const char *path, struct stat *st);

/*
 * An openable path for the file of mapping @m (malloc'ed into *out).
 * Return 0, -EACCES when no candidate is readable, -ENOENT when none
 * holds the mapped inode.
 */
int xp_target_fs_access(struct xp_target_fs *fs, const struct xp_map_entry *m, char **out);

/*
 * Where the CPython runtime is looked for first: 0 for the target's
 * executable, 1 for a libpython*, 2 for any other mapped file (GC USDT
 * resolution and validate's --cpu-sample check search in this order).
 */
int xp_target_fs_python_rank(const struct xp_target_fs *fs, const struct xp_map_entry *f);

/* The object kind of an opened ELF file (fd) of type @e_type.  -EINVAL
 * for an ELF type that cannot be probed (relocatable, core). */
int xp_target_fs_kind(struct xp_target_fs *fs, int fd, uint16_t e_type, enum xp_object_kind *kind);

#endif /* XP_RESOLVE_TARGET_FILES_H */
