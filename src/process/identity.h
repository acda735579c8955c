/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.h - a target process is its PID plus its start time.
 *
 * The start time is field 22 of /proc/<pid>/stat (clock ticks since boot),
 * read after the last ')' so a comm holding spaces or parentheses cannot
 * shift the fields.  Every metadata pass and every attach is bracketed by
 * xp_target_verify(): a PID whose start time changed is TARGET_REUSED, one
 * that vanished (or became a zombie) is TARGET_EXITED.
 */
#ifndef XP_PROCESS_IDENTITY_H
#define XP_PROCESS_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"

struct xp_target {
	uint32_t pid;
	uint64_t start_time; /* /proc/<pid>/stat field 22 */
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
 * First look at a PID: TARGET_NOT_FOUND (exit 3) if absent or a zombie,
 * PERMISSION_DENIED (exit 4), INTERNAL for a malformed stat file.
 */
int xp_target_identify(uint32_t pid, struct xp_target *out, struct xp_error *err);
/*
 * Check @t still names the same process: TARGET_EXITED, TARGET_REUSED,
 * PERMISSION_DENIED, INTERNAL.
 */
int xp_target_verify(const struct xp_target *t, struct xp_error *err);
/* Details {"pid", "process_start_time"} on an error. */
void xp_target_detail(struct xp_error *err, const struct xp_target *t);

#endif /* XP_PROCESS_IDENTITY_H */
