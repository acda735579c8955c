/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_table.c - lookups in the generated x86_64 syscall table
 * (sorted by name: binary search; by number: linear, 370 entries, only on
 * inventory output paths).
 */
#include <stdlib.h>
#include <string.h>

#include "syscall_table.h"
#include "syscall_table_gen.h"

static int cmp_name(const void *key, const void *entry)
{
	return strcmp(key, ((const struct xp_syscall_entry *)entry)->name);
}

int xp_syscall_number(const char *name)
{
	const struct xp_syscall_entry *e;

	if (!name)
		return -1;
	e = bsearch(name, xp_syscall_entries, xp_syscall_entries_count,
		    sizeof(xp_syscall_entries[0]), cmp_name);
	return e ? e->nr : -1;
}

const char *xp_syscall_name(long nr)
{
	size_t i;

	for (i = 0; i < xp_syscall_entries_count; i++)
		if (xp_syscall_entries[i].nr == nr)
			return xp_syscall_entries[i].name;
	return NULL;
}

size_t xp_syscall_count(void)
{
	return xp_syscall_entries_count;
}
