/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procfs.h - what xprobe reads of a live process under /proc/<pid>: the
 * memory map, the executable, the command line, the status fields it needs
 * (NSpid, Uid, CapEff), the thread list.
 *
 * Every reader is pure I/O plus a parser that takes text, so the parsers
 * are unit-tested on synthetic input and fuzzed.  Errors come back as
 * -errno from the readers; xp_proc_fail() turns one into the contract's
 * error after re-checking the target's identity (a read that failed
 * because the process went away is TARGET_EXITED, not INTERNAL).
 *
 * /proc/<pid>/maps paths.  The kernel prints the path after padding
 * spaces, verbatim except that a newline is written as "\012"; a file
 * unlinked since it was mapped ends in " (deleted)".  Paths may contain
 * spaces, so the path is the rest of the line after the fifth field, not
 * a whitespace-split field.
 */
#ifndef XP_PROCESS_PROCFS_H
#define XP_PROCESS_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../model/error_record.h"
#include "identity.h"

/* Read a whole /proc (or sysfs) file into a malloc'ed NUL-terminated
 * buffer, at most @max bytes (-EFBIG beyond), through xpc_read_file()
 * (common/readfile.h: regular files only, non-blocking open).  Return 0
 * or -errno; a process reaped while reading reads as -ENOENT. */
int xp_read_file(const char *path, size_t max, char **out, size_t *len);

/*
 * Turn a failed read of /proc/<pid>/@what into @err: first re-verify the
 * target (TARGET_EXITED / TARGET_REUSED win), then -ENOENT/-ESRCH ->
 * TARGET_EXITED, -EACCES/-EPERM -> PERMISSION_DENIED, -EINVAL ->
 * INTERNAL "malformed", anything else INTERNAL.  Returns the negative code.
 */
int xp_proc_fail(const struct xp_target *t, const char *what, int rc, struct xp_error *err);

struct xp_map_entry {
	uint64_t start; /* first address */
	uint64_t end; /* one past the last address */
	uint64_t offset; /* file offset of start */
	uint64_t inode; /* 0 for anonymous mappings */
	uint32_t dev_major;
	uint32_t dev_minor;
	char perms[5]; /* "r-xp" */
	bool deleted; /* the path ended in " (deleted)" (stripped) */
	const char *path; /* into the maps text; NULL when anonymous;
			       "[heap]", "[vdso]" ... kept as written */
};

struct xp_maps {
	struct xp_map_entry *v;
	size_t n;
	char *text; /* owned storage the paths point into */
};

/* True for a mapping of a file (the path starts with '/'). */
static inline bool xp_map_is_file(const struct xp_map_entry *m)
{
	return m->path && m->path[0] == '/';
}

static inline bool xp_map_is_exec(const struct xp_map_entry *m)
{
	return m->perms[2] == 'x';
}

/*
 * Parse maps text.  Takes ownership of @text (malloc'ed, NUL-terminated,
 * modified in place).  Return 0 or -EINVAL with *bad_line set (1-based).
 */
int xp_maps_parse(char *text, struct xp_maps *out, size_t *bad_line);
/*
 * The one /proc/<pid>/maps reader (resolution, validate's checks and the
 * CPU-sample symbolizer all read through it).  xp_maps_read_pid() returns
 * 0, the read's -errno, -EINVAL with *bad_line set (1-based; the kernel
 * wrote a line this parser does not know: strict, never skipped) or
 * -ENOMEM; xp_maps_read() turns those into the contract's errors through
 * xp_proc_fail (a target that went away is TARGET_EXITED / TARGET_REUSED).
 */
int xp_maps_read_pid(uint32_t pid, struct xp_maps *out, size_t *bad_line);
int xp_maps_read(const struct xp_target *t, struct xp_maps *out, struct xp_error *err);
void xp_maps_free(struct xp_maps *m);

/* Two mappings of one file: same device, inode and path. */
bool xp_map_same_file(const struct xp_map_entry *a, const struct xp_map_entry *b);

/* Some mapping of @f's file is executable. */
bool xp_maps_file_has_exec(const struct xp_maps *m, const struct xp_map_entry *f);

/*
 * The mapping of @f's file that holds file offset @off, an executable one
 * before any other; NULL when the offset is not mapped.
 */
const struct xp_map_entry *xp_maps_find_offset(const struct xp_maps *m,
					       const struct xp_map_entry *f, uint64_t off);

/*
 * A zombie leader: a process whose main thread exited (pthread_exit, or
 * SYS_exit) while others run on.  Its /proc/<pid> files of the address
 * space, root, exe, cmdline and namespaces read empty or fail; they are
 * read through a live thread instead.  xp_proc_live_thread: a thread of
 * @pid other than the leader that is neither zombie nor dead, 0 if none.
 * xp_proc_base: "/proc/<pid>", or "/proc/<pid>/task/<tid>" of such a
 * thread when the leader is a zombie (then returns 1, else 0).
 * xp_maps_read_pid, xp_proc_exe, xp_proc_cmdline and xp_proc_ns_link
 * fall back to it by themselves.
 */
uint32_t xp_proc_live_thread(uint32_t pid);
int xp_proc_base(uint32_t pid, char *buf, size_t size);
/*
 * The id to open a uprobe or USDT probe of process @pid with: @pid, or a
 * live thread of a zombie leader (the kernel's uprobe filter compares
 * the probed task's address space, which a zombie leader no longer has,
 * and libbpf reads <id>/maps for USDT).
 */
uint32_t xp_proc_attach_pid(uint32_t pid);

/* The last component of @path (after its last '/'). */
const char *xp_path_base(const char *path);

/*
 * The distinct mapped files (by device and inode) in first-seen order,
 * as indexes of their first mapping.  Returns the count; *idx is malloc'ed
 * (NULL when zero).  -ENOMEM on failure.
 */
ssize_t xp_maps_files(const struct xp_maps *m, size_t **idx);

/* readlink /proc/<pid>/exe, " (deleted)" stripped. malloc'ed into *out. */
int xp_proc_exe(uint32_t pid, char **out);

/* /proc/<pid>/cmdline split at NULs, empty arguments dropped. */
struct xp_argv {
	char **v; /* point into buf */
	size_t n;
	char *buf;
};
int xp_cmdline_parse(char *buf, size_t len, struct xp_argv *out); /* takes buf */
int xp_proc_cmdline(uint32_t pid, struct xp_argv *out);
void xp_argv_free(struct xp_argv *a);

#define XP_NSPID_MAX 32

/* The /proc/<pid>/status fields xprobe uses. */
struct xp_proc_status {
	uint32_t uid[4]; /* real, effective, saved, filesystem */
	bool has_uid;
	uint64_t cap_eff; /* CapEff, hex */
	bool has_cap_eff;
	uint32_t nspid[XP_NSPID_MAX]; /* NSpid: outermost first */
	size_t n_nspid;
	uint64_t threads; /* Threads: */
	bool has_threads;
	uint32_t tgid; /* Tgid: the thread group (process) a thread id belongs to */
	bool has_tgid;
};
int xp_status_parse(const char *text, struct xp_proc_status *out);
/* @pid 0 reads /proc/self/status. */
int xp_proc_status_read(uint32_t pid, struct xp_proc_status *out);

/*
 * The thread ids of a process (/proc/<pid>/task), ascending, at most
 * @max of them; *total is the count seen.  *tids malloc'ed.
 */
int xp_proc_threads(uint32_t pid, size_t max, uint32_t **tids, size_t *n, size_t *total);

/* Linux capability bits xprobe cares about. */
#define XP_CAP_SYS_PTRACE 19
#define XP_CAP_SYS_ADMIN 21
#define XP_CAP_PERFMON 38
#define XP_CAP_BPF 39

static inline bool xp_cap_has(uint64_t caps, unsigned bit)
{
	return bit < 64 && (caps >> bit) & 1u;
}

/* readlink of /proc/<pid>/ns/<name> ("pid:[4026531836]"); @pid 0 = self. */
int xp_proc_ns_link(uint32_t pid, const char *name, char *buf, size_t size);

#endif /* XP_PROCESS_PROCFS_H */
