/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolve.h - resolve host selectors against a live target, read-only:
 * uprobes (symbol, symbol=<C++ signature>, +0x offset) to a file offset and
 * runtime address; CPython GC USDT markers; named tracepoints in tracefs;
 * the target's PID/mount namespaces.  Consumers: `validate` (reports what
 * it found), `measure --pid` (attaches exactly what validate resolved).
 *
 * Paths.  binary_path is the canonical path as the target sees it (what
 * events and selectors carry); access_path is a path xprobe itself can
 * open for the same file (the same string when both share a mount
 * namespace, otherwise /proc/<pid>/root/... or /proc/<pid>/map_files/...).
 * Attach with access_path; report binary_path.
 */
#ifndef XP_RESOLVE_RESOLVE_H
#define XP_RESOLVE_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../selector/selector.h"
#include "../process/identity.h"
#include "insn.h"

enum xp_object_kind {
	XP_OBJ_EXECUTABLE = 0, /* "executable" (ET_EXEC) */
	XP_OBJ_PIE, /* "position_independent_executable" */
	XP_OBJ_SHARED_LIBRARY, /* "shared_library" */
};
const char *xp_object_kind_name(enum xp_object_kind k);

struct xp_mapping {
	uint64_t start_address;
	uint64_t end_address;
	uint64_t file_offset;
};

/* A resolved uprobe/uretprobe endpoint (the reference ResolvedProbe). */
struct xp_resolved_probe {
	char *selector; /* verbatim (owned) */
	char *binary_path; /* canonical, as the target sees it (owned) */
	char *access_path; /* openable by xprobe (owned) */
	char *build_id; /* lowercase hex of NT_GNU_BUILD_ID or NULL */
	enum xp_object_kind object_kind;
	bool is_return; /* uretprobe */
	char *symbol; /* mangled ELF name; NULL for +0x selectors */
	char *symbol_demangled; /* NULL when not a C++ name */
	bool has_symbol; /* symbol_virtual_address/size valid */
	uint64_t symbol_virtual_address;
	uint64_t symbol_size;
	uint64_t file_offset;
	uint64_t runtime_address;
	struct xp_mapping mapping;
	/* +0x selectors: the instruction-boundary check (insn.h); refused
	 * and unverified offsets resolve, validate turns them into issues */
	struct xp_offset_info insn;
};

/*
 * Resolve an XP_SEL_UPROBE selector.  Errors: BINARY_NOT_MAPPED,
 * SYMBOL_NOT_FOUND (close matches as hints), AMBIGUOUS_TARGET (candidates
 * in details), INVALID_EVENT_SELECTOR (offset outside an executable
 * segment), TARGET_EXITED/REUSED, PERMISSION_DENIED, INTERNAL (bad ELF).
 */
int xp_resolve_uprobe(const struct xp_target *t, const struct xp_selector *sel,
		      struct xp_resolved_probe *out, struct xp_error *err);
void xp_resolved_probe_free(struct xp_resolved_probe *p);

/*
 * Where the uprobe binary of a selector lives in the target, without ELF
 * work: the mapped file (by inode, resolved inside the target's root with
 * symlinks scoped to it) and a path xprobe can open.  Errors as above.
 * Used by xp_resolve_uprobe; exposed for collectors that attach by path.
 */
int xp_resolve_binary(const struct xp_target *t, const char *binary, char **binary_path,
		      char **access_path, struct xp_error *err);

/* One USDT marker (from a .note.stapsdt note). */
struct xp_usdt_marker {
	char *binary_path; /* canonical (owned) */
	char *access_path; /* openable by xprobe (owned) */
	char *provider; /* "python" (owned) */
	char *name; /* "gc__start" (owned) */
	uint64_t pc; /* note's probe address (virtual) */
	uint64_t file_offset; /* pc turned into a file offset */
	uint64_t semaphore_address; /* virtual address, 0 = none */
	uint64_t semaphore_offset; /* file offset of the semaphore, 0 = none */
	char *arguments; /* the note's argument spec (owned) */
	/* added by the resolver for reports and attach checks: */
	char *build_id; /* lowercase hex or NULL (owned) */
	enum xp_object_kind object_kind;
	uint64_t runtime_address; /* pc in the target's address space */
	uint64_t semaphore_runtime_address; /* 0 = no semaphore */
	struct xp_mapping mapping; /* the mapping holding file_offset */
	uint32_t locations; /* notes for this marker in the object
				       (inlined call sites); pc is the first */
};

/*
 * Find python:gc__start and python:gc__done in the target's mapped CPython
 * executable or libpython (capability-based: any mapped ELF carrying both
 * markers).  Errors: INVALID_EVENT_SELECTOR (no mapped object carries both
 * markers; details list what was searched), TARGET_*, PERMISSION_DENIED.
 */
int xp_resolve_python_gc(const struct xp_target *t, struct xp_usdt_marker *start,
			 struct xp_usdt_marker *end, struct xp_error *err);
void xp_usdt_marker_free(struct xp_usdt_marker *m);

#endif /* XP_RESOLVE_RESOLVE_H */
