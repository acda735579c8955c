/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.h - event selectors: the grammar of the contract, and matching a
 * parsed selector against a decoded event.
 *
 * Parsing is pure (no process, no files): it checks the grammar, compiles
 * the name~REGEX filters (PCRE2, unanchored search, no UTF mode) and reduces
 * name expressions to one bounded exact/prefix/suffix/contains filter where
 * possible (required for NVTX).  What needs a live target (symbol
 * resolution, USDT notes, tracefs) belongs to src/process/ and src/resolve/.  Forms (the
 * contract's "Selectors" section; docs/selectors.md has them in full):
 *
 *   uprobe:<binary>:<symbol>:entry|return
 *   uprobe:<binary>:symbol=<full demangled C++ signature>:entry|return
 *   uprobe:<binary>:+0x<file offset>:entry|return
 *   syscall:<name>:entry|exit              (x86_64 table, syscall_table.h)
 *   tracepoint:<category>:<name>
 *   python:gc_start | python:gc_end
 *   cuda:runtime_api|driver_api:<name>:entry|exit
 *   cuda:kernel_start|kernel_end[:name~REGEX]
 *   cuda:memcpy_start|memcpy_end[:kind=HtoD|DtoH|DtoD|HtoH|PtoP]
 *   cuda:memset_start|memset_end
 *   cuda:nvtx_range_start|nvtx_range_end:name~REGEX   (bounded, required)
 *
 * Matching (match.c) compares interned string ids, never strings: on first
 * use against a capture the selector's strings are looked up once in that
 * capture's string table (a string the table lacks can never match), and
 * regex results are memoized per kernel/NVTX name id.  A match is then a
 * type compare plus two or three integer compares per event.
 */
#ifndef XP_SELECTOR_H
#define XP_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../model/event.h"

enum xp_sel_kind {
	XP_SEL_UPROBE = 0,
	XP_SEL_SYSCALL,
	XP_SEL_TRACEPOINT,
	XP_SEL_PYTHON_GC,
	XP_SEL_CUDA_API,
	XP_SEL_KERNEL,
	XP_SEL_MEMCPY,
	XP_SEL_MEMSET,
	XP_SEL_NVTX,
};

/* A reduced name filter, the only kind the Agent's hot path can apply. */
enum xp_name_match {
	XP_NAME_ANY = 0,
	XP_NAME_EXACT,
	XP_NAME_PREFIX,
	XP_NAME_SUFFIX,
	XP_NAME_CONTAINS,
};

#define XP_NAME_FILTER_MAX 128 /* literal must be shorter than this, in bytes */
#define XP_SELECTOR_MAX 4096   /* longest selector text accepted, in bytes */

struct xp_name_filter {
	enum xp_name_match match;
	char literal[XP_NAME_FILTER_MAX]; /* unescaped, NUL-terminated; "" for ANY */
	uint8_t len;                      /* strlen(literal), < XP_NAME_FILTER_MAX */
};

/* Where the uprobe points: by symbol, by C++ signature, or by offset. */
enum xp_uprobe_target {
	XP_UPROBE_SYMBOL = 0,
	XP_UPROBE_SIGNATURE, /* symbol=<demangled signature> */
	XP_UPROBE_OFFSET,    /* +0x<file offset> */
};

struct xp_selector {
	char *text;            /* verbatim selector (owned) */
	enum xp_sel_kind kind;
	uint8_t event_type;    /* enum xp_event_type this selector selects */
	bool is_end;           /* exit/return/end/gc_end boundary; false for
				  tracepoints (no boundary) */

	/* XP_SEL_UPROBE */
	char *binary;          /* as written (owned) */
	enum xp_uprobe_target uprobe_target;
	char *symbol;          /* symbol or signature text (owned), NULL for offsets */
	uint64_t offset;       /* XP_UPROBE_OFFSET */
	char *match_binary;    /* canonical path events carry, set by the live
				  pipeline after resolution (owned); NULL = match
				  host.binary_path against `binary` verbatim */

	/* XP_SEL_SYSCALL / XP_SEL_TRACEPOINT / XP_SEL_CUDA_API / XP_SEL_PYTHON_GC */
	char *category;        /* tracepoint category; "syscalls" for syscalls;
				  "runtime_api"/"driver_api" for CUDA API;
				  "python" (USDT provider) for GC (owned) */
	char *name;            /* syscall / tracepoint / API name; USDT marker
				  name "gc__start"/"gc__done" for GC (owned) */
	int syscall_nr;        /* x86_64 number, -1 if not a syscall */

	/* XP_SEL_KERNEL / XP_SEL_NVTX */
	char *regex;           /* name~REGEX text (owned), NULL = any */
	void *regex_code;      /* pcre2_code_8 *, NULL when regex is NULL */
	void *regex_md;        /* pcre2_match_data_8 * for regex_code */
	bool has_filter;       /* name_filter is valid (reducible regex; always
				  true for NVTX, and for a kernel without regex
				  with match XP_NAME_ANY) */
	struct xp_name_filter name_filter;

	/* XP_SEL_MEMCPY */
	bool has_memcpy_kind;
	uint8_t memcpy_kind;   /* enum xp_memcpy_kind */

	/* match-time cache: ids bound to one capture's string table (match.c) */
	const struct xp_capture *bound;
	uint32_t bound_count;  /* bound->strings.count when the ids were looked up */
	bool never;            /* a required string is absent: nothing matches */
	xp_str_t id_binary, id_symbol, id_name, id_attr_key, id_attr_value;
	xp_str_t id_attr2_key, id_attr2_value;
	uint8_t *regex_memo;   /* per string id: 0 unknown, 1 no, 2 yes (owned) */
	uint32_t regex_memo_n;
};

/*
 * Parse @text into @sel.  On failure returns -XPROBE_E_INVALID_EVENT_SELECTOR
 * (recoverable) with @err's message naming what is wrong ("invalid event
 * selector: ..."), details {"selector": text} and a hint where one helps;
 * -ENOMEM on allocation failure (INTERNAL).  @sel needs xp_selector_free
 * either way.
 */
int xp_selector_parse(const char *text, struct xp_selector *sel, struct xp_error *err);
void xp_selector_free(struct xp_selector *sel);

/*
 * Match host.binary_path against @canonical instead of the selector's
 * binary text (the live pipeline sets what validate resolved).  0 or -ENOMEM.
 */
int xp_selector_set_match_binary(struct xp_selector *sel, const char *canonical);

/*
 * Bind @sel to @c: look its strings up in @c's string table and reset the
 * regex memo.  xp_selector_matches binds by itself when @c differs from the
 * bound capture or its table grew; call this explicitly when a capture may
 * have been freed and another allocated at the same address.
 * Returns 0 or -ENOMEM.
 */
int xp_selector_bind(struct xp_selector *sel, const struct xp_capture *c);

/*
 * True when @e (an event of @c) is an event @sel selects (the matchers of
 * docs/selectors.md).  Binds @sel to @c on first use; no allocation after
 * that except when @c's string table grew.
 */
bool xp_selector_matches(struct xp_selector *sel, const struct xp_capture *c,
			 const struct xp_event *e);

/* Source of the endpoint: host (eBPF: uprobe, syscall, tracepoint, GC). */
bool xp_selector_is_host(const struct xp_selector *sel);
/* Clock domain family: true for host-clock kinds (host, CUDA API, NVTX). */
bool xp_selector_uses_host_clock(const struct xp_selector *sel);
/* True for kernel/memcpy/memset activity endpoints. */
bool xp_selector_is_activity(const struct xp_selector *sel);
/* True for a CUDA endpoint that needs CUPTI callbacks (API, NVTX). */
bool xp_selector_needs_callback(const struct xp_selector *sel);
/* Two optional selector fields (binary, symbol, name, regex ...) are
 * both present and equal: how policy and validate compare endpoints. */
bool xp_str_same(const char *a, const char *b);

/*
 * Reduce a name regex to one literal filter.  Wrappers are tried in order
 * (^..$ exact, ^...* prefix, .*..$ suffix, .*...* contains, ^.. prefix,
 * ..$ suffix, .*.. contains, .. contains); the first whose inner text is a
 * pure literal (no unescaped . + * ? ( ) | [ ] { } ^ $; \x allowed for
 * non-alphanumeric ASCII x, which unescapes), nonempty and shorter than
 * XP_NAME_FILTER_MAX bytes wins.  ".*", "^.*", ".*$" and "^.*$" reduce to
 * XP_NAME_ANY.  Return 0 or -EINVAL (with a reason in @why when non-NULL).
 */
int xp_name_filter_reduce(const char *regex, struct xp_name_filter *out, char *why,
			  size_t why_size);
/* Apply a reduced filter to a name of @n bytes. */
bool xp_name_filter_match(const struct xp_name_filter *f, const char *name, size_t n);
/* "any", "exact", "prefix", "suffix", "contains". */
const char *xp_name_match_name(enum xp_name_match m);

/*
 * Escape regex metacharacters of a literal (for selector hints): each of
 * \ . ^ $ | ? * + ( ) [ ] { } gets a backslash.  Returns a malloc'ed
 * string or NULL on allocation failure.
 */
char *xp_regex_escape(const char *literal);

#endif /* XP_SELECTOR_H */
