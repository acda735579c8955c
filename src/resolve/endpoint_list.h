/* SPDX-License-Identifier: Apache-2.0 */
/*
 * endpoint_list.h - `xprobe validate --pid PID --list PATTERN`: the host
 * endpoints a target offers, read-only, as selectors, like `bpftrace -l`.
 *
 * What is listed (each as the selector text validate takes, less the
 * boundary suffix the user adds):
 *   uprobe:<binary>:<symbol>   every defined function symbol (the ones a
 *                              lookup counts, xelf.h) of every mapped ELF
 *                              object with an executable mapping, <binary>
 *                              its mapped path or, for the target's
 *                              executable, a symlink beside it naming the
 *                              same file when only that name matches; a C++
 *                              symbol carries its demangled signature and,
 *                              when that signature names this one address
 *                              only, its uprobe:<binary>:symbol=<signature>
 *                              form; a name at several addresses (local
 *                              functions of several files) is listed once
 *                              per address as uprobe:<binary>:+0x<offset>,
 *                              since the name alone is ambiguous;
 *   python:gc_start|gc_end     when the target maps CPython's GC markers;
 *   syscall:<name>             the x86_64 syscall table;
 *   tracepoint:<cat>:<name>    tracefs's available_events (system-wide).
 * PATTERN is a glob (fnmatch, '*' crosses '/' and ':') over that text; a
 * C++ symbol also matches through its symbol= form.  The result holds the
 * @limit smallest selectors in byte order (a bounded heap while
 * scanning: memory follows the limit, not the symbol count), the total
 * that matched, and whether it was cut.  Selectors listed validate as
 * printed once :entry/:return (uprobes) or :entry/:exit (syscalls) is
 * added (tests/live/test_validate_list.py checks a sample of each kind).
 */
#ifndef XP_RESOLVE_ENDPOINT_LIST_H
#define XP_RESOLVE_ENDPOINT_LIST_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../process/identity.h"

#define XP_LIST_PATTERN_MAX 4096

enum xp_endpoint_kind {
	XP_EP_UPROBE = 0, /* "uprobe" */
	XP_EP_PYTHON_GC, /* "python_gc" (a USDT marker) */
	XP_EP_SYSCALL, /* "syscall" */
	XP_EP_TRACEPOINT, /* "tracepoint" */
};
const char *xp_endpoint_kind_name(enum xp_endpoint_kind k);

struct xp_endpoint {
	char *selector; /* what validate takes, without a boundary (owned) */
	enum xp_endpoint_kind kind;
	char *binary_path; /* uprobe, python_gc: the mapped file; else NULL */
	char *symbol; /* uprobe: the ELF name; python_gc: the marker
		       * (gc__start); syscall, tracepoint: the name */
	char *signature; /* uprobe: the demangled C++ signature, or NULL */
	char *symbol_selector; /* uprobe:<binary>:symbol=<signature> when it
				* names this address alone, else NULL */
	bool by_offset; /* the selector is +0x: the name is ambiguous */
	uint64_t address; /* uprobe: st_value; else 0 */
	char *access_path; /* uprobe: a path xprobe opens (owned; not output) */
	char *selector_binary; /* uprobe: the name the selector uses, the
				* canonical path or a symlink to it (owned) */
};

struct xp_endpoint_list {
	struct xp_target target;
	char *pattern; /* owned copy */
	uint64_t limit;
	uint64_t total; /* endpoints that matched */
	bool truncated; /* total > limit */
	struct xp_endpoint *v; /* sorted by selector, at most limit */
	size_t n;
	size_t cap; /* allocated entries of v (internal) */
	uint64_t objects; /* ELF objects read */
	struct xp_warnings warnings; /* TRACEPOINTS_NOT_LISTED, OBJECT_NOT_READ */
};

/*
 * List @t's endpoints matching @pattern (1..XP_LIST_PATTERN_MAX bytes;
 * the caller checks), at most @limit (>= 1).  Errors: TARGET_EXITED /
 * TARGET_REUSED / PERMISSION_DENIED (the maps), INTERNAL (out of memory).
 * A mapped file that cannot be read or is not ELF is skipped (an
 * unreadable one with a warning).  @out needs xp_endpoint_list_free
 * either way.
 */
int xp_endpoint_list(const struct xp_target *t, const char *pattern, uint64_t limit,
		     struct xp_endpoint_list *out, struct xp_error *err);
void xp_endpoint_list_free(struct xp_endpoint_list *l);

#endif /* XP_RESOLVE_ENDPOINT_LIST_H */
