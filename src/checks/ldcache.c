/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ldcache.c - a bounds-checked reader of /etc/ld.so.cache (format in
 * ldcache.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldcache.h"
#include "../process/procfs.h"

#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define NEW_MAGIC_LEN 20
#define NEW_HEADER 48
#define NEW_ENTRY 24
#define OLD_MAGIC "ld.so-1.7.0"
#define OLD_MAGIC_LEN 11
#define OLD_ENTRY 12

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static const char *str_at(const unsigned char *base, size_t avail, uint32_t off)
{
	if (off >= avail || !memchr(base + off, '\0', avail - off))
		return NULL;
	return (const char *)base + off;
}

int xp_ldcache_parse(const unsigned char *buf, size_t len, const char *prefix,
		     int (*fn)(const char *name, const char *path, void *ctx), void *ctx)
{
	size_t start = 0, plen = strlen(prefix), i;
	const unsigned char *h;
	uint32_t nlibs;

	if (len >= OLD_MAGIC_LEN && memcmp(buf, OLD_MAGIC, OLD_MAGIC_LEN) == 0) {
		if (len < OLD_MAGIC_LEN + 1 + 4)
			return -EINVAL;
		/* struct cache_file: char magic[11] + pad to 4, uint32 nlibs */
		nlibs = rd32(buf + 12);
		if (nlibs > (len - 16) / OLD_ENTRY)
			return -EINVAL;
		start = 16 + (size_t)nlibs * OLD_ENTRY;
		start = (start + 7) & ~(size_t)7;
	}
	if (start > len || len - start < NEW_HEADER ||
	    memcmp(buf + start, NEW_MAGIC, NEW_MAGIC_LEN) != 0)
		return -EINVAL;
	h = buf + start;
	nlibs = rd32(h + 20);
	if (nlibs > (len - start - NEW_HEADER) / NEW_ENTRY)
		return -EINVAL;
	for (i = 0; i < nlibs; i++) {
		const unsigned char *e = h + NEW_HEADER + i * NEW_ENTRY;
		const char *name = str_at(h, len - start, rd32(e + 4));
		const char *path = str_at(h, len - start, rd32(e + 8));

		if (!name || !path)
			return -EINVAL;
		if (strncmp(name, prefix, plen) != 0)
			continue;
		if (fn(name, path, ctx))
			break;
	}
	return 0;
}

int xp_ldcache_scan(const char *file, const char *prefix,
		    int (*fn)(const char *name, const char *path, void *ctx), void *ctx)
{
	char *buf;
	size_t len;
	int rc = xp_read_file(file, (size_t)64 << 20, &buf, &len);

	if (rc)
		return rc;
	rc = xp_ldcache_parse((const unsigned char *)buf, len, prefix, fn, ctx);
	free(buf);
	return rc;
}
