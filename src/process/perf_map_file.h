/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_map_file.h - the target's /tmp/perf-<pid>.map as a file: whether
 * xprobe may read it, decided once for validate --cpu-sample (is a map
 * present?) and the symbolizer that reads it (src/inventory/symbolize.c).
 *
 * The map is written by the target at a path in a world-writable /tmp,
 * and xprobe runs as root, so before a byte is read the file must be
 * what the target would have written: opened O_NONBLOCK|O_NOFOLLOW
 * (common/readfile.h: a FIFO cannot hang xprobe, a symlink is not
 * followed), a regular file, owned by root or the target (perf's rule,
 * below), within XP_PERF_MAP_MAX_BYTES.  Files are reached through
 * /proc/<pid>/root, so a target in another mount namespace is read as it
 * sees its own files.
 */
#ifndef XP_PROCESS_PERF_MAP_FILE_H
#define XP_PROCESS_PERF_MAP_FILE_H

#include <stddef.h>
#include <stdint.h>

#define XP_PERF_MAP_MAX_BYTES (1ull << 30) /* read at most this much of a map */

/* Why a map that could be opened is refused (xp_perf_map_open: -EPERM). */
enum xp_perf_map_refusal {
	XP_PERF_MAP_ACCEPTED = 0,
	XP_PERF_MAP_SYMLINK, /* "symlink": the path is a symbolic link */
	XP_PERF_MAP_NOT_REGULAR, /* "not_regular_file": a FIFO, socket, device, directory */
	XP_PERF_MAP_FOREIGN_OWNER, /* "foreign_owner": owned by neither root nor the target */
	XP_PERF_MAP_TOO_LARGE, /* "too_large": st_size over XP_PERF_MAP_MAX_BYTES */
};
const char *xp_perf_map_refusal_name(enum xp_perf_map_refusal r);

/*
 * Who may own a perf map.  perf's rule (tools/perf/util/symbol.c,
 * dso__load: "not owned by current user or root, ignoring it") accepts
 * root and perf's own euid; xprobe reads another process's map, so the
 * trusted owner is that process: its effective uid and its filesystem
 * uid (the owner of the files it creates), and root.  A map of anyone
 * else would put that user's names into the report of the target.
 */
struct xp_perf_map_owners {
	uint32_t uid[2];
	size_t n; /* 0: root only */
};

/* The owners of @pid's map, from /proc/<pid>/status (unknown: root only). */
void xp_perf_map_owners_of(uint32_t pid, struct xp_perf_map_owners *o);

/* What fstat (lstat for a refused link) said of the file. */
struct xp_perf_map_file {
	enum xp_perf_map_refusal refusal;
	uint32_t mode; /* st_mode (S_IFLNK for a refused symlink) */
	uint32_t uid; /* st_uid */
	uint64_t size; /* st_size */
};

/*
 * Open @path under the rules above (@owners NULL: any owner, for tests
 * and fuzzing).  Returns the descriptor; -ENOENT (absent); -EPERM with
 * @f->refusal saying why; or -errno.  @f is filled whatever the return.
 */
int xp_perf_map_open(const char *path, const struct xp_perf_map_owners *owners,
		     struct xp_perf_map_file *f);

/* Why a refused map was not used, as the end of a sentence: "it is
 * owned by uid 1234, neither root nor the target's uid 1000". */
void xp_perf_map_refusal_text(const struct xp_perf_map_file *f, const struct xp_perf_map_owners *o,
			      char *buf, size_t size);

struct xp_warnings; /* model/error_record.h */

/*
 * The PERF_MAP_REFUSED warning of a refused map at @path (what the target
 * sees), as measure --cpu-sample and validate --cpu-sample give it:
 * "the target's perf map P was not read: <why>; <tail>", details sorted
 * (allowed_owner_uids, file_type, file_uid, path, reason, size_bytes,
 * size_limit_bytes).  0 or -ENOMEM.
 */
int xp_perf_map_refused_warning(struct xp_warnings *ws, const char *path,
				const struct xp_perf_map_file *f,
				const struct xp_perf_map_owners *o, const char *tail);

#endif /* XP_PROCESS_PERF_MAP_FILE_H */
