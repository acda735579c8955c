/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs.h - named tracepoints as tracefs lists them: whether tracefs is
 * mounted, where, and whether <category>:<name> exists (its id).  validate
 * resolves `tracepoint:` selectors with it; doctor reports the mount; the
 * live collector attaches by category and name.
 */
#ifndef XP_RESOLVE_TRACEFS_H
#define XP_RESOLVE_TRACEFS_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"

/*
 * Check a named tracepoint exists in tracefs.  Errors:
 * INVALID_EVENT_SELECTOR "tracefs is not mounted" (hint: the mount
 * command) or "tracepoint <c>:<n> does not exist"; PERMISSION_DENIED.
 * On success *id is the tracepoint id.
 */
int xp_tracefs_check(const char *category, const char *name, uint64_t *id, struct xp_error *err);
/*
 * The tracefs root xprobe uses: $XPROBE_TRACEFS_ROOT when set (tests
 * only: it lets a test point at an unmounted directory or a private
 * tracefs mount without touching the system's), else /sys/kernel/tracing.
 */
const char *xp_tracefs_root(void);
/* True when <root>/events exists (tracefs is mounted there). */
bool xp_tracefs_mounted(const char *root);
/*
 * What tracefs at @root is to this user: READABLE (its events directory
 * can be read), UNREADABLE (mounted, but this user may not search it:
 * /sys/kernel/tracing is root's, mode 0700), ABSENT (not mounted).
 */
enum xp_tracefs_state { XP_TRACEFS_READABLE, XP_TRACEFS_UNREADABLE, XP_TRACEFS_ABSENT };
enum xp_tracefs_state xp_tracefs_state(const char *root);
#define XP_TRACEFS_MOUNT_HINT "mount -t tracefs none /sys/kernel/tracing"

#endif /* XP_RESOLVE_TRACEFS_H */
