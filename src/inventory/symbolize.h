/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symbolize.h - post-collection symbolization of a live process's user
 * addresses, from two independent sources:
 *
 *   native  the ELF objects mapped in /proc/<pid>/maps, through libdw's
 *           Dwfl (dwfl_linux_proc_report): .symtab, else .dynsym, of the
 *           mapped file itself -- debuginfo files are deliberately not
 *           consulted, so every symbol found is one `validate` (which reads
 *           the mapped file) can find too;
 *   perf map  /tmp/perf-<nspid>.map of the target (as the target sees its
 *           /tmp, through /proc/<pid>/root), the text format JITs and
 *           CPython 3.12+ (-X perf) write: "START SIZE name" in hex.
 *
 * Both lookups run for every address; neither stands in for the other.
 * An address both resolve is native (the ELF symbol is what a uprobe can
 * attach to) and still carries its perf-map name.  Perf-map names that
 * start with "py::" are CPython's Python-function trampolines: those, and
 * only those, are Python frames.  Native frames inside the CPython binary
 * or libpython are interpreter frames, never Python coverage.
 *
 * Cost: the caller symbolizes each distinct address once (the profile does
 * that); Dwfl loads a module's symbol table on first use.  Strings live in
 * the symbolizer's string table until xp_inv_symbolizer_close.  Not reentrant:
 * one symbolizer per thread (the Dwfl find_elf callback reads the pid of
 * the symbolizer being opened).
 */
#ifndef XP_COLLECT_SYMBOLIZE_H
#define XP_COLLECT_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../model/strtab.h"
#include "../process/perf_map_file.h" /* the refusal rules, the owners */

enum xp_inv_frame_kind {
	XP_FRAME_UNRESOLVED = 0, /* "unresolved" */
	XP_FRAME_NATIVE, /* "native": an ELF symbol */
	XP_FRAME_JIT, /* "jit": a perf-map symbol, not Python */
	XP_FRAME_PYTHON, /* "python": a perf-map "py::" symbol */
};
const char *xp_inv_frame_kind_name(enum xp_inv_frame_kind k);

struct xp_inv_sym_frame {
	uint64_t address;
	enum xp_inv_frame_kind kind;
	const char *mapping;         /* maps path or pseudo name ("[anon]" for none), NULL outside every mapping */
	const char *binary;          /* native: canonical path of the ELF, as the target sees it */
	const char *symbol;          /* native: ELF symbol name */
	uint64_t symbol_offset;      /* native: address - symbol value */
	const char *perf_map_symbol; /* the perf map's name for the address, or NULL */
	bool interpreter;            /* inside the CPython executable or libpython */
};

/* One perf-map line. */
struct xp_inv_perf_map_entry {
	uint64_t start;
	uint64_t size;
	xp_str_t name;
	uint32_t line;               /* 1-based, later lines win over earlier ones */
};

struct xp_inv_perf_map {
	struct xp_inv_perf_map_entry *v; /* kept entries, sorted by start, starts unique */
	size_t n;
	uint64_t entries_seen;       /* valid lines in the file (kept or not) */
	uint64_t bad_lines;          /* lines that did not parse (skipped) */
	bool truncated;              /* stopped at XP_PERF_MAP_MAX_BYTES / _ENTRIES */
	struct xp_perf_map_file file; /* xp_inv_perf_map_load() only: the open's verdict */
};

#define XP_PERF_MAP_MAX_ENTRIES (1u << 20) /* kept entries */
#define XP_PERF_MAP_LINE_MAX 65536         /* longer lines are skipped as bad */
#define XP_PERF_MAP_MAX_NAME 4096          /* names are cut to this many bytes */

/*
 * Parse the text of a perf map.  With @want (@nwant sorted addresses)
 * only the entries covering one of them are kept; NULL keeps all.
 * 0 or -ENOMEM.  Strings go to @st.
 */
int xp_inv_perf_map_parse(const char *text, size_t len, struct xp_strtab *st, const uint64_t *want,
			  size_t nwant, struct xp_inv_perf_map *m);
/*
 * Stream @path through one line buffer, keeping entries as above.  The
 * file is untrusted (written by the target, at a path in a world-writable
 * /tmp): it is opened with O_NONBLOCK|O_NOFOLLOW (common/readfile.h), and
 * refused unless it is a regular file, not a symlink, owned by root or one
 * of @owners (NULL: any owner, for tests and fuzzing), and at most
 * XP_PERF_MAP_MAX_BYTES by fstat; a file that grows past that while read
 * is cut there (truncated).
 * Return: 0, -ENOENT (absent), -EPERM (refused: m->refusal and m->file_*
 * say why), -errno, -ENOMEM.
 */
int xp_inv_perf_map_load(const char *path, const struct xp_perf_map_owners *owners,
			 struct xp_strtab *st, const uint64_t *want, size_t nwant,
			 struct xp_inv_perf_map *m);
/* The entry covering @addr (the closest start <= addr, addr < start+size). */
const struct xp_inv_perf_map_entry *xp_inv_perf_map_lookup(const struct xp_inv_perf_map *m,
							   uint64_t addr);
void xp_inv_perf_map_free(struct xp_inv_perf_map *m);

/* One line of /proc/<pid>/maps. */
struct xp_inv_map_region {
	uint64_t start, end;
	xp_str_t path;               /* path or pseudo name; 0 for anonymous */
	bool exec;
	bool interpreter;            /* path is a CPython executable or libpython */
};

/* CPython recognition from a mapped path's basename: "python3.11",
 * "libpython3.12.so.1.0" ...  Writes "3.11" into @version. */
bool xp_inv_python_path_version(const char *path, char *version, size_t size);

struct Dwfl;

struct xp_inv_symbolizer {
	uint32_t pid;                /* the target as xprobe sees it */
	uint32_t ns_pid;             /* the target in its own PID namespace (perf map name) */
	struct xp_strtab strings;
	struct xp_inv_map_region *regions; /* /proc/<pid>/maps at open, sorted */
	size_t nregions;
	struct Dwfl *dwfl;           /* NULL when no module could be reported */
	int dwfl_error;              /* why dwfl is NULL (negative errno-like), or 0 */
	char perf_map_path[128];     /* as the target sees it: /tmp/perf-<nspid>.map */
	struct xp_perf_map_owners perf_map_owners; /* the target's uids (from /proc/<pid>/status) */
	bool perf_map_present; /* set by xp_inv_symbolizer_prepare */
	int perf_map_error;          /* load error other than -ENOENT and a refusal, or 0 */
	bool perf_map_refused;       /* the map exists and was not used: perf_map.refusal says why */
	struct xp_inv_perf_map perf_map; /* the entries covering the prepared addresses */
	bool cpython;                /* a CPython executable or libpython is mapped */
	char python_version[16];     /* "3.11" or "" */
	uint64_t lookups;            /* addresses symbolized (tests: once per distinct address) */
};

/*
 * Open a symbolizer on a live process: read its maps, report its ELF
 * modules to Dwfl.  @ns_pid names the perf map (the PID the target sees
 * itself as; pass @pid when both share a namespace).
 * Errors: TARGET_EXITED (maps gone), PERMISSION_DENIED, INTERNAL (Dwfl
 * allocation).  A process without ELF modules or perf map is not an
 * error: its addresses come back unresolved.
 */
int xp_inv_symbolizer_open(uint32_t pid, uint32_t ns_pid, struct xp_inv_symbolizer *s,
			   struct xp_error *err);
/*
 * Read the target's perf map, keeping the entries that cover one of the
 * @n sorted @addrs (the addresses about to be symbolized).  0 or -ENOMEM;
 * an absent map is perf_map_present false, an unreadable one
 * perf_map_error, a refused one (xp_inv_perf_map_load) perf_map_refused with
 * perf_map.refusal and perf_map.file_* kept for the warning.  Without
 * this call no address resolves from the map.
 */
int xp_inv_symbolizer_prepare(struct xp_inv_symbolizer *s, const uint64_t *addrs, size_t n);
/* Symbolize one address (both sources). */
void xp_inv_symbolize(struct xp_inv_symbolizer *s, uint64_t addr, struct xp_inv_sym_frame *out);
void xp_inv_symbolizer_close(struct xp_inv_symbolizer *s);

#endif /* XP_COLLECT_SYMBOLIZE_H */
