/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_table_key.h - what the Agent's two keyed tables share (the
 * aggregate groups, agent_group_table.c, and the histograms,
 * agent_hist_table.c): the hash of a group key and the memory the tables
 * live in.
 *
 * The hash wants spread, not strength: keys are the process's own names
 * and numbers.  The memory is anonymous and MAP_NORESERVE, mapped once at
 * ARM, its pages touched as groups appear; zero where nothing was written
 * (a key's name is padded by the fresh page).
 */
#ifndef XPL_AGENT_TABLE_KEY_H
#define XPL_AGENT_TABLE_KEY_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* A 64-bit mix of one word into @h. */
static inline uint64_t xpl_key_mix(uint64_t h, uint64_t w)
{
	h ^= w * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/* @n bytes of @p mixed into @h, 8 at a time (the tail zero-padded). */
static inline uint64_t xpl_key_hash_bytes(uint64_t h, const char *p, uint32_t n)
{
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = xpl_key_mix(h, w);
	}
	if (i < n) {
		uint64_t w = 0;

		memcpy(&w, p + i, n - i);
		h = xpl_key_mix(h, w);
	}
	return h;
}

/* @bytes of zeroed table memory, or NULL; freed with munmap. */
static inline void *xpl_table_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#endif /* XPL_AGENT_TABLE_KEY_H */
