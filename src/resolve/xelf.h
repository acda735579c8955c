/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xelf.h - the ELF questions xprobe asks of a mapped file, through libelf:
 * file type, load segments, build id, function symbols by name (raw or
 * demangled), close matches for a name that is missing, and the
 * .note.stapsdt USDT notes.
 *
 * Speed.  A lookup must beat `readelf -Ws BIN | grep NAME` on binaries
 * with tens of thousands of symbols, so nothing builds a table of all
 * symbols: the file is mmapped (ELF_C_READ_MMAP), .dynsym is searched
 * through .gnu.hash when the file has one, .symtab is scanned once with
 * a byte compare, and C++ names are demangled only for candidates that
 * contain the queried identifier in its mangled <length><name> form
 * (falling back to demangling every _Z name only when that finds
 * nothing).  See docs/selectors-live.md for the numbers.
 *
 * A stripped object (no .symtab) whose separate debug file is installed
 * (found by build id or .gnu_debuglink, debug_file.h) takes that file's
 * .symtab as its own, so a function perf names from libc6-dbg resolves.
 *
 * Lookup rules (the contract's; docs/contract.md, "ELF symbol lookup").
 * Only defined function symbols count: STT_FUNC with a real section
 * index.  Three passes, the first with a match wins: (a) raw name in
 * .dynsym and .symtab, (b) demangled name in .dynsym, (c) demangled name
 * in .symtab.
 * Matches at one address merge (size = the largest); several addresses
 * are an ambiguity, except that versioned .dynsym duplicates
 * (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14) resolve to the default
 * version, which is what the name means to the linker.
 */
#ifndef XP_RESOLVE_XELF_H
#define XP_RESOLVE_XELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>
#include <libelf.h>

struct xp_elf_symtab {
	Elf_Data *data; /* symbols, memory order; NULL when absent */
	size_t count;
	const char *strs; /* string table, NUL-terminated at strsz-1 */
	size_t strsz;
	const uint16_t *versym; /* .gnu.version for .dynsym, or NULL */
	size_t nversym;
};

struct xp_elf {
	int fd;
	Elf *elf;
	size_t size; /* file size */
	int elf_class; /* ELFCLASS32 / ELFCLASS64 */
	uint16_t e_type; /* ET_EXEC, ET_DYN ... */
	uint16_t e_machine;
	GElf_Phdr *phdrs; /* all program headers (owned) */
	size_t phnum;
	struct xp_elf_symtab dynsym;
	struct xp_elf_symtab symtab;
	const uint32_t *gnu_hash; /* .gnu.hash words, or NULL */
	size_t gnu_hash_words;
	bool sections_read; /* the sections below were located */
	Elf_Scn *stapsdt; /* .note.stapsdt, or NULL */
	bool has_stapsdt_base; /* .stapsdt.base exists ... */
	uint64_t stapsdt_base; /* ... at this address */
	char *path; /* as opened (owned): where its debug file is looked for */
	/* a stripped object's .symtab, read from its separate debug file
	 * (debug_file.h): held open while symtab points into it */
	int debug_fd;
	Elf *debug_elf;
	char *debug_path; /* owned, NULL when the .symtab is the object's own */
};

/* Open @path read-only (mmap).  Return 0, -errno, or -ENOEXEC (not an ELF
 * file or one libelf cannot read). */
int xp_elf_open(const char *path, struct xp_elf *e);
void xp_elf_close(struct xp_elf *e);

/* Lowercase hex NT_GNU_BUILD_ID into a malloc'ed string; NULL when none. */
char *xp_elf_build_id(struct xp_elf *e);

/* Virtual address -> file offset through the first PT_LOAD whose file
 * image holds it.  Return 0 or -ERANGE. */
int xp_elf_va_to_offset(const struct xp_elf *e, uint64_t va, uint64_t *off);
/* The executable PT_LOAD whose file image holds @off, or NULL. */
const GElf_Phdr *xp_elf_exec_segment(const struct xp_elf *e, uint64_t off);
/* True when @off lies in the file image of an executable PT_LOAD. */
bool xp_elf_offset_executable(const struct xp_elf *e, uint64_t off);

/* One distinct address a lookup found. */
struct xp_sym_match {
	char *name; /* the ELF (mangled) name (owned) */
	uint64_t value; /* st_value */
	uint64_t size; /* largest st_size at this address */
	bool from_symtab;
};

struct xp_sym_matches {
	struct xp_sym_match *v;
	size_t n;
	int pass; /* 1 = raw, 2 = demangled .dynsym, 3 = .symtab */
};

/*
 * Look @name up by the three passes.  Return 0 (m->n may be 0: not
 * found) or -ENOMEM / -EINVAL (malformed symbol tables).
 */
int xp_elf_lookup(struct xp_elf *e, const char *name, struct xp_sym_matches *m);
void xp_sym_matches_free(struct xp_sym_matches *m);

/*
 * Any defined symbol (function or object) of raw name @name, .dynsym
 * first (through .gnu.hash), then .symtab.  Return 0, -ENOENT, -EINVAL.
 */
int xp_elf_lookup_any(struct xp_elf *e, const char *name, uint64_t *value, uint64_t *size);
/* Read @n bytes at virtual address @va from the file image. 0 or -errno. */
int xp_elf_read_va(const struct xp_elf *e, uint64_t va, void *buf, size_t n);

/*
 * The defined function (STT_FUNC or STT_GNU_IFUNC, either table) whose
 * [st_value, st_value + st_size) holds @va, the one starting nearest
 * below @va when several do; @starts_here tells whether any defined
 * function starts exactly at @va (a zero-size one included).  Return 0
 * (@out filled, out->name owned), -ENOENT (none holds @va; *starts_here
 * still set), -ENOMEM, -EINVAL (malformed tables).  For insn.c.
 */
int xp_elf_func_at(struct xp_elf *e, uint64_t va, struct xp_sym_match *out, bool *starts_here);

/*
 * Up to @max names close to @name (same name in another case, prefix or
 * substring, small edit distance; C++ overloads of the same identifier),
 * best first.  Each is the demangled form for C++ symbols.  Returns the
 * count; out[i] malloc'ed.
 */
size_t xp_elf_close_matches(struct xp_elf *e, const char *name, char **out, size_t max);

/* Demangle an Itanium C++ name (_Z...); NULL when @name is not one or
 * does not demangle.  demangle.cc wraps the C++ runtime's __cxa_demangle. */
char *xp_demangle(const char *name);

/* The identifier a demangled name is declared as: "f" for
 * "ns::K<int>::f(long) const", "K" for "ns::K::~K()".  Writes at most
 * @size bytes; returns the length, 0 when there is no plain identifier
 * (operators, lambdas). */
size_t xp_cxx_base_name(const char *demangled, char *out, size_t size);

/*
 * Every defined function symbol (STT_FUNC in a real section, the ones a
 * lookup counts), .dynsym first then .symtab: @fn(name, st_value, st_size,
 * from_symtab, hidden, ctx), where @hidden marks a .dynsym entry of a
 * non-default version (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14),
 * which a lookup drops when a default one exists.  @fn returns non-zero
 * to stop (that value is returned).  Returns 0, or -EINVAL for malformed
 * symbol tables.  For validate --list (endpoint_list.c).
 */
int xp_elf_each_func(struct xp_elf *e,
		     int (*fn)(const char *name, uint64_t value, uint64_t size, bool from_symtab,
			       bool hidden, void *ctx),
		     void *ctx);

/* ---- USDT ----------------------------------------------------------------- */

struct xp_usdt_note {
	const char *provider; /* into the note data */
	const char *name;
	const char *args;
	uint64_t pc; /* adjusted to the file's link-time layout */
	uint64_t semaphore; /* adjusted; 0 = none */
};

/*
 * Call @fn for every well-formed .note.stapsdt note, addresses adjusted
 * per the SDT convention (a note's base vs the .stapsdt.base section's
 * address, for prelinked files).  @fn returns non-zero to stop.  Returns
 * 0, 1 when the file has no .note.stapsdt section, -EINVAL for a
 * malformed note.
 */
int xp_elf_usdt_notes(struct xp_elf *e, int (*fn)(const struct xp_usdt_note *n, void *ctx),
		      void *ctx);

#endif /* XP_RESOLVE_XELF_H */
