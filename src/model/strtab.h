/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strtab.h - string interning for a capture.
 *
 * Captures repeat a handful of strings (one binary path, two symbols, a
 * kernel name) across millions of events, so each distinct string is stored
 * once, NUL-terminated, in append-only chunks, and named by a 32-bit id.
 * Id 0 is reserved for "no string" (JSON null).  Lookup is an open-address
 * hash table of ids with linear probing, kept at most half full.
 * Pointers returned by xp_strtab_get stay valid until xp_strtab_free.
 */
#ifndef XP_MODEL_STRTAB_H
#define XP_MODEL_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t xp_str_t;

struct xp_strtab_chunk;

struct xp_strtab {
	const char **ptr;  /* ptr[id] -> string, id 1..count-1 */
	uint32_t *len;     /* len[id] */
	uint32_t *hash;    /* hash[id] (low 32 bits) */
	uint32_t count;    /* next id; starts at 1 */
	uint32_t cap;      /* entries allocated in ptr/len/hash */
	uint32_t *slots;   /* hash table of ids, 0 = empty */
	uint32_t nslots;   /* power of two */
	struct xp_strtab_chunk *chunks;
	bool failed;       /* an allocation failed: later interns return 0 */
};

void xp_strtab_init(struct xp_strtab *t);
void xp_strtab_free(struct xp_strtab *t);
/* Intern @n bytes of @s (may contain NUL bytes? no: truncated at none, the
 * bytes are copied as is).  Returns the id, 0 on allocation failure. */
xp_str_t xp_strtab_intern(struct xp_strtab *t, const char *s, size_t n);
/* Look up without inserting; 0 when absent. */
xp_str_t xp_strtab_find(const struct xp_strtab *t, const char *s, size_t n);

static inline const char *xp_strtab_get(const struct xp_strtab *t, xp_str_t id)
{
	return id && id < t->count ? t->ptr[id] : NULL;
}

static inline size_t xp_strtab_len(const struct xp_strtab *t, xp_str_t id)
{
	return id && id < t->count ? t->len[id] : 0;
}

#endif /* XP_MODEL_STRTAB_H */
