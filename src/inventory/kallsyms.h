/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kallsyms.h - kernel addresses to names, from /proc/kallsyms: the text
 * symbols (t, T, w, W), sorted by address, looked up as "the last symbol
 * at or before the address" (the kernel stacks of --explain).  Readable
 * addresses need root (kptr_restrict): read as another user, every
 * address is 0 and the table is empty, which the caller reports as
 * unsymbolized frames.
 */
#ifndef XP_INVENTORY_KALLSYMS_H
#define XP_INVENTORY_KALLSYMS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct xp_inv_ksym {
	uint64_t addr;
	uint32_t name; /* offset into names */
};

struct xp_inv_kallsyms {
	struct xp_inv_ksym *v;
	size_t n;
	char *names;
	size_t nbytes, cap;
};

/* Read @path (NULL: /proc/kallsyms).  0, or -errno (the table empty). */
int xp_inv_kallsyms_load(struct xp_inv_kallsyms *k, const char *path);
/* The same from an open stream (the fuzz target's entry).  0 or -ENOMEM. */
int xp_inv_kallsyms_parse(struct xp_inv_kallsyms *k, FILE *f);

/* The symbol holding @addr and *@off within it, or NULL. */
const char *xp_inv_kallsyms_find(const struct xp_inv_kallsyms *k, uint64_t addr, uint64_t *off);

void xp_inv_kallsyms_free(struct xp_inv_kallsyms *k);

#endif /* XP_INVENTORY_KALLSYMS_H */
