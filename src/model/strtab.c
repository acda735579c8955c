/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strtab.c - string interning; see strtab.h.  Chunks of 64 KiB (or one
 * string's size when larger) so interning never moves stored strings.
 */
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

#define CHUNK_BYTES (64u * 1024u)

struct xp_strtab_chunk {
	struct xp_strtab_chunk *next;
	size_t used, size;
	char data[];
};

void xp_strtab_init(struct xp_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->count = 1;
}

void xp_strtab_free(struct xp_strtab *t)
{
	struct xp_strtab_chunk *c = t->chunks, *next;

	while (c) {
		next = c->next;
		free(c);
		c = next;
	}
	free(t->ptr);
	free(t->len);
	free(t->hash);
	free(t->slots);
	xp_strtab_init(t);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	/* FNV-1a over 8-byte words with a final avalanche (splitmix64). */
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static xp_str_t lookup(const struct xp_strtab *t, const char *s, size_t n, uint32_t h,
		       uint32_t *slot_out)
{
	uint32_t mask, i;

	if (!t->nslots) {
		*slot_out = UINT32_MAX;
		return 0;
	}
	mask = t->nslots - 1;
	for (i = h & mask;; i = (i + 1) & mask) {
		xp_str_t id = t->slots[i];

		if (!id) {
			*slot_out = i;
			return 0;
		}
		if (t->hash[id] == h && t->len[id] == n && memcmp(t->ptr[id], s, n) == 0) {
			*slot_out = i;
			return id;
		}
	}
}

xp_str_t xp_strtab_find(const struct xp_strtab *t, const char *s, size_t n)
{
	uint32_t slot;

	return lookup(t, s, n, (uint32_t)hash_bytes(s, n), &slot);
}

static int grow_slots(struct xp_strtab *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 1024, mask = nslots - 1, id;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (id = 1; id < t->count; id++) {
		uint32_t i = t->hash[id] & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static int grow_entries(struct xp_strtab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 256;
	const char **p;
	uint32_t *l, *h;

	p = realloc(t->ptr, cap * sizeof(*p));
	if (!p)
		return -1;
	t->ptr = p;
	l = realloc(t->len, cap * sizeof(*l));
	if (!l)
		return -1;
	t->len = l;
	h = realloc(t->hash, cap * sizeof(*h));
	if (!h)
		return -1;
	t->hash = h;
	t->cap = cap;
	return 0;
}

static char *store(struct xp_strtab *t, const char *s, size_t n)
{
	struct xp_strtab_chunk *c = t->chunks;
	char *dst;

	if (!c || c->size - c->used < n + 1) {
		size_t size = n + 1 > CHUNK_BYTES ? n + 1 : CHUNK_BYTES;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = t->chunks;
		t->chunks = c;
	}
	dst = c->data + c->used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	c->used += n + 1;
	return dst;
}

xp_str_t xp_strtab_intern(struct xp_strtab *t, const char *s, size_t n)
{
	uint32_t h, slot;
	xp_str_t id;
	char *dst;

	if (t->failed || n > UINT32_MAX - 1)
		return 0;
	h = (uint32_t)hash_bytes(s, n);
	id = lookup(t, s, n, h, &slot);
	if (id)
		return id;
	if ((t->count + 1) * 2 > t->nslots) {
		if (grow_slots(t))
			goto fail;
		lookup(t, s, n, h, &slot);
	}
	if (t->count >= t->cap && grow_entries(t))
		goto fail;
	dst = store(t, s, n);
	if (!dst)
		goto fail;
	id = t->count++;
	t->ptr[id] = dst;
	t->len[id] = (uint32_t)n;
	t->hash[id] = h;
	t->slots[slot] = id;
	return id;
fail:
	t->failed = true;
	return 0;
}
