/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keymap.h - an open-addressing hash map from a three-word key to a dense
 * group number (0, 1, 2, ... in first-insertion order), sized once for the
 * most keys a pairing pass can insert, so the pass never allocates per
 * event.  Internal to src/correlate.
 */
#ifndef XP_CORRELATE_KEYMAP_H
#define XP_CORRELATE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct xp_key {
	uint64_t a, b, c;
};

struct xp_keymap {
	struct xp_key *keys; /* keys[group] */
	uint32_t *slots;     /* group + 1, 0 = empty */
	uint32_t mask;       /* nslots - 1 */
	uint32_t count;      /* groups so far */
	uint32_t max;        /* groups the map was sized for */
};

#define XP_KEYMAP_NONE UINT32_MAX

/* Size for at most @max keys.  0 or -ENOMEM. */
int xp_keymap_init(struct xp_keymap *m, size_t max);
void xp_keymap_free(struct xp_keymap *m);
/* Group of @k, inserting it when new (XP_KEYMAP_NONE when full). */
uint32_t xp_keymap_put(struct xp_keymap *m, const struct xp_key *k);
/* Room for twice as many keys, groups kept (a map that grows with a
 * stream: pair_count.c).  0 or -ENOMEM (the map unchanged). */
int xp_keymap_grow(struct xp_keymap *m);
/* Group of @k, or XP_KEYMAP_NONE. */
uint32_t xp_keymap_get(const struct xp_keymap *m, const struct xp_key *k);

#endif /* XP_CORRELATE_KEYMAP_H */
