/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_table_gen.h - layout of the generated syscall table
 * (build/gen/syscall_table.gen.c): sorted by name, strcmp order.
 */
#ifndef XP_SYSCALL_TABLE_GEN_H
#define XP_SYSCALL_TABLE_GEN_H

#include <stddef.h>

struct xp_syscall_entry {
	const char *name;
	int nr;
};

extern const struct xp_syscall_entry xp_syscall_entries[];
extern const size_t xp_syscall_entries_count;

#endif /* XP_SYSCALL_TABLE_GEN_H */
