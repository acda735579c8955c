/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ldcache.h - what the dynamic linker cache (/etc/ld.so.cache) says is
 * installed, read directly (no `ldconfig -p` child process): doctor uses
 * it for libcuda, libcupti.so.<major> and libnvidia-ml.
 *
 * Format (glibc's elf/cache.c): either the new format alone, a 48-byte
 * header "glibc-ld.so.cache1.1" + nlibs + len_strings + flags +
 * extension offset + 12 unused bytes, then nlibs 24-byte entries
 * {int32 flags; uint32 key, value; uint32 osversion; uint64 hwcap}, with
 * key and value offsets counted from the new header; or the old format
 * "ld.so-1.7.0" + nlibs + 12-byte entries, followed by the new format at
 * the next 8-byte boundary.  Every offset is bounds-checked.
 */
#ifndef XP_CHECKS_LDCACHE_H
#define XP_CHECKS_LDCACHE_H

#include <stddef.h>

#define XP_LDCACHE_PATH "/etc/ld.so.cache"

/*
 * Call @fn(name, path, ctx) for each entry of the cache text @buf whose
 * name starts with @prefix (all entries for ""); @fn returns non-zero to
 * stop.  Return 0 or -EINVAL (not a cache this parser knows).
 */
int xp_ldcache_parse(const unsigned char *buf, size_t len, const char *prefix,
		     int (*fn)(const char *name, const char *path, void *ctx), void *ctx);
/* The same over a file (XP_LDCACHE_PATH); -errno when unreadable. */
int xp_ldcache_scan(const char *file, const char *prefix,
		    int (*fn)(const char *name, const char *path, void *ctx), void *ctx);

#endif /* XP_CHECKS_LDCACHE_H */
