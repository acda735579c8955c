/* SPDX-License-Identifier: Apache-2.0 */
/*
 * children.h - the child processes of a target, and which of them map a
 * given file: what a measurement that captured nothing points at when the
 * process it was given only supervises the ones doing the work (an nginx
 * master and its workers, a gunicorn arbiter, a shell).
 *
 * Children are found by their parent PID (field 4 of /proc/<pid>/stat of
 * every process; /proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN
 * and lists only children of that one thread), threads of the target
 * excluded.  A child "maps the file" when one of its mappings has the same
 * device and inode as the target's mapping of that path, so a path that
 * reads differently in the child (another mount namespace) still matches.
 * Read-only and best effort: a child that exits or cannot be read is
 * skipped, never an error.
 */
#ifndef XP_PROCESS_CHILDREN_H
#define XP_PROCESS_CHILDREN_H

#include <stddef.h>
#include <stdint.h>

/* At most this many children are reported. */
#define XP_CHILDREN_MAX 16

struct xp_children {
	uint32_t pid[XP_CHILDREN_MAX]; /* ascending */
	size_t n; /* reported */
	size_t total; /* children seen, reported or not */
	size_t mapping; /* of those: the ones mapping the file */
};

/*
 * The children of @pid.  With @path (a file the target maps, as the
 * target's /proc/<pid>/maps names it), only those mapping the same file
 * are reported (out->total still counts all); a @path the target does not
 * map reports none.  Returns 0 or -errno when /proc cannot be listed.
 */
int xp_proc_children(uint32_t pid, const char *path, struct xp_children *out);

#endif /* XP_PROCESS_CHILDREN_H */
