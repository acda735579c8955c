/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.h - a target process is its PID plus its start time, and, where
 * the kernel has them (Linux 5.3+), a pidfd held from identification on.
 *
 * The start time is field 22 of /proc/<pid>/stat (clock ticks since boot),
 * read after the last ')' so a comm holding spaces or parentheses cannot
 * shift the fields.  Every metadata pass and every attach is bracketed by
 * xp_target_verify(): a PID whose start time changed is TARGET_REUSED, one
 * that vanished (or became a zombie) is TARGET_EXITED.
 *
 * The start time alone cannot tell a process from one that got its PID
 * within the same clock tick (10 ms at USER_HZ 100).  A pidfd can: it
 * refers to one process, not to a number, and polls readable once that
 * process has exited, whatever now holds the PID.  xp_target_identify()
 * opens it before reading the stat file and checks it afterwards, so the
 * start time read belongs to the pidfd's process; xp_target_verify() asks
 * the pidfd first.  The live collector polls the same pidfd.  statx() of
 * /proc/<pid> offers no birth time (procfs sets no STATX_BTIME; its
 * ctime is when the inode was instantiated, not the process's start), so
 * it is not used.  What stays undetectable: docs/live-measurement.md,
 * "Target identity".
 */
#ifndef XP_PROCESS_IDENTITY_H
#define XP_PROCESS_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"

struct xp_target {
	uint32_t pid;
	uint64_t start_time; /* /proc/<pid>/stat field 22 */
	bool has_pidfd;      /* pidfd is open and names the identified process */
	int pidfd;           /* owned by the struct xp_target_identify() filled;
				copies borrow it; xp_target_release() closes it */
};

/* Parsed fields of one /proc/<pid>/stat line. */
struct xp_proc_stat {
	char comm[64];       /* between the first '(' and the last ')' */
	char state;          /* field 3 */
	uint32_t ppid;       /* field 4 */
	uint64_t utime;      /* field 14, ticks */
	uint64_t stime;      /* field 15, ticks */
	uint64_t num_threads; /* field 20 */
	uint64_t start_time; /* field 22, ticks since boot */
	uint64_t rss_pages;  /* field 24 */
};

/* Parse the text of a stat file.  Return 0 or -EINVAL (malformed). */
int xp_proc_stat_parse(const char *text, struct xp_proc_stat *out);
/* Read /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat when tid != 0).
 * Return 0, -ENOENT, -EACCES/-EPERM, -EINVAL. */
int xp_proc_stat_read(uint32_t pid, uint32_t tid, struct xp_proc_stat *out);

/*
 * First look at a PID: TARGET_NOT_FOUND (exit 3) if absent, a zombie, or
 * a thread id of another process (details.thread_group_pid names the
 * process), PERMISSION_DENIED (exit 4), INTERNAL for a malformed stat
 * file.  Holds a pidfd on the process when the kernel gives one (not
 * before Linux 5.3: then has_pidfd is false and only the start time
 * identifies it).  Release with xp_target_release().
 */
int xp_target_identify(uint32_t pid, struct xp_target *out, struct xp_error *err);
/*
 * Check @t still names the same process: TARGET_EXITED, TARGET_REUSED,
 * PERMISSION_DENIED, INTERNAL.  With a pidfd, a process that exited is
 * noticed even when another one got its PID within the same clock tick
 * (TARGET_REUSED when a live process now holds the PID, TARGET_EXITED
 * otherwise).
 */
int xp_target_verify(const struct xp_target *t, struct xp_error *err);
/* 1 when @t's pidfd says its process exited, 0 when it runs, -1 without
 * a pidfd. */
int xp_target_pidfd_exited(const struct xp_target *t);
/* Close the pidfd (safe on a zeroed struct and twice). */
void xp_target_release(struct xp_target *t);
/* Details {"pid", "process_start_time"} on an error. */
void xp_target_detail(struct xp_error *err, const struct xp_target *t);

#endif /* XP_PROCESS_IDENTITY_H */
