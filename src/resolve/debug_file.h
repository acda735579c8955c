/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug_file.h - where a stripped ELF object's separate debug file lives,
 * the way gdb and perf look for it: by build id under the debug root
 * (<root>/.build-id/<first byte>/<rest>.debug), then by its
 * .gnu_debuglink name in the object's directory, in its .debug/
 * subdirectory and under <root>/<the object's directory>.  A candidate
 * counts only when it is the object's: the same build id when the object
 * has one, else the CRC32 the debuglink records.
 *
 * The debug root is /usr/lib/debug (Debian's -dbg and -dbgsym packages);
 * test builds take XPROBE_TEST_DEBUG_ROOT instead.  One rule for both
 * readers: the ELF lookups of validate (xelf.c, a .symtab missing from
 * the object is read from its debug file) and the CPU-sample symbolizer
 * (src/inventory/symbolize.c, libdw's find_debuginfo), so a hotspot named
 * from a debug file is a function validate resolves.
 */
#ifndef XP_RESOLVE_DEBUG_FILE_H
#define XP_RESOLVE_DEBUG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

const char *xp_debug_root(void);

struct xp_debug_want {
	const unsigned char *build_id; /* the object's, or NULL */
	size_t build_id_len;
	const char *object_path; /* the object as xprobe opens it (its directory) */
	const char *debuglink; /* .gnu_debuglink's file name, or NULL */
	uint32_t crc; /* .gnu_debuglink's CRC32 */
};

/*
 * Find the debug file of @w: its path in @out (@size bytes).  Returns an
 * open read-only descriptor (the caller closes it), or -ENOENT.
 */
int xp_debug_file_open(const struct xp_debug_want *w, char *out, size_t size);

/* CRC32 (the IEEE polynomial, as .gnu_debuglink computes it) of an open
 * file, from its start.  Returns 0 with *crc, or -errno. */
int xp_debug_file_crc(int fd, uint32_t *crc);

#endif /* XP_RESOLVE_DEBUG_FILE_H */
