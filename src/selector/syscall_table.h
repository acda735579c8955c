/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_table.h - x86_64 syscall names <-> numbers.  The table itself
 * (syscall_table.gen.c) is generated at build time from the installed
 * kernel headers (asm/unistd_64.h) by scripts/gen_syscall_table.sh.
 */
#ifndef XP_SYSCALL_TABLE_H
#define XP_SYSCALL_TABLE_H

#include <stddef.h>

/* Number of @name, or -1 when it is not an x86_64 syscall. */
int xp_syscall_number(const char *name);
/* Name of @nr, or NULL when unknown. */
const char *xp_syscall_name(long nr);
/* Number of entries in the table (for tests). */
size_t xp_syscall_count(void);

#endif /* XP_SYSCALL_TABLE_H */
