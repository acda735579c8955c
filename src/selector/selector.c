/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.c - the selector grammar: parse a selector text into a struct
 * xp_selector, compile its name regex, reduce it where it can be reduced,
 * and say precisely what is wrong when the text is not a selector.
 *
 * Parsing is pure: no files, no processes.  Every failure is
 * INVALID_EVENT_SELECTOR, recoverable, with the message "invalid event
 * selector: <what is wrong>", details {"selector": <text>} and, where one
 * helps, a hint naming the accepted forms.  Field rules follow
 * the contract's grammar (docs/contract.md, "Selectors") plus our python:gc_*
 * selectors; docs/selectors.md is the user-facing description.
 *
 * Splitting rules worth knowing:
 *  - uprobe: the boundary is the text after the last ':'; the rest splits
 *    at the first ":symbol=" if present (C++ signatures contain "::"),
 *    otherwise at its last ':'.  A binary that then ends in ':' means the
 *    symbol held "::" without symbol=, which we refuse with that hint.
 *  - cuda: split into at most three fields, so a kernel or NVTX regex may
 *    contain ':'.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../../common/parse.h"
#include "../../common/suggest.h"
#include "selector.h"
#include "syscall_table.h"

#define SELECTOR_FORMS_HINT                                                                \
	"selectors are uprobe:<binary>:<symbol>:entry|return, syscall:<name>:entry|exit, " \
	"tracepoint:<category>:<name>, python:gc_start|gc_end, or cuda:<event>[:<filter>]"
#define BOUNDED_HINT "use ^literal$, ^literal.*, .*literal$, or .*literal.*"

static int bad(struct xp_error *err, const struct xp_selector *sel, const char *hint,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Record INVALID_EVENT_SELECTOR with the contract's message and details. */
static int bad(struct xp_error *err, const struct xp_selector *sel, const char *hint,
	       const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	xp_error_detail_str(err, "selector", sel->text ? sel->text : "");
	if (hint)
		xp_error_hint(err, "%s", hint);
	return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			    "invalid event selector: %s", what);
}

static int oom(struct xp_error *err)
{
	xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory while parsing a selector");
	return -ENOMEM;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static bool is_word(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* --- uprobe ------------------------------------------------------------- */

static int parse_uprobe(struct xp_selector *sel, const char *rest, struct xp_error *err)
{
	static const char usage[] = "use uprobe:<binary>:<symbol>:entry|return, "
				    "uprobe:<binary>:symbol=<demangled signature>:entry|return, or "
				    "uprobe:<binary>:+0x<file offset>:entry|return";
	const char *last = strrchr(rest, ':'), *sig, *cut, *target;
	size_t body_len;
	char *body;
	int rc = 0;

	if (!last)
		return bad(err, sel, usage,
			   "uprobe selector needs a binary, a symbol and entry or return");
	if (strcmp(last + 1, "entry") == 0) {
		sel->is_end = false;
	} else if (strcmp(last + 1, "return") == 0) {
		sel->is_end = true;
	} else {
		return bad(err, sel, usage, "uprobe boundary \"%s\" must be entry or return",
			   last + 1);
	}
	sel->event_type = sel->is_end ? XP_EV_HOST_FUNCTION_EXIT : XP_EV_HOST_FUNCTION_ENTRY;
	body_len = (size_t)(last - rest);
	body = dup_n(rest, body_len);
	if (!body)
		return oom(err);

	sig = strstr(body, ":symbol=");
	if (sig) {
		cut = sig;
		target = sig + strlen(":symbol=");
		sel->uprobe_target = XP_UPROBE_SIGNATURE;
	} else {
		cut = strrchr(body, ':');
		if (!cut) {
			rc = bad(err, sel, usage,
				 "uprobe selector needs a binary, a symbol and entry or return");
			goto out;
		}
		target = cut + 1;
		sel->uprobe_target = target[0] == '+' ? XP_UPROBE_OFFSET : XP_UPROBE_SYMBOL;
	}
	if (cut == body) {
		rc = bad(err, sel, usage, "uprobe binary is empty");
		goto out;
	}
	if (cut[-1] == ':') {
		rc = bad(
			err, sel,
			"write C++ names as uprobe:<binary>:symbol=<full demangled signature>:entry|return",
			"uprobe symbol contains \"::\"; use the symbol= form for C++ names");
		goto out;
	}
	sel->binary = dup_n(body, (size_t)(cut - body));
	if (!sel->binary) {
		rc = oom(err);
		goto out;
	}
	if (sel->uprobe_target == XP_UPROBE_OFFSET) {
		if (target[1] != '0' || target[2] != 'x') {
			rc = bad(err, sel, usage,
				 "uprobe offset \"%s\" must be +0x<hex file offset>", target);
			goto out;
		}
		switch (xpc_parse_hex_u64(target + 1, &sel->offset)) {
		case 0:
			break;
		case -ERANGE:
			rc = bad(err, sel, NULL, "uprobe offset \"%s\" does not fit in 64 bits",
				 target);
			goto out;
		default:
			rc = bad(err, sel, usage,
				 "uprobe offset \"%s\" must be +0x<hex file offset>", target);
			goto out;
		}
		goto out;
	}
	if (!target[0]) {
		rc = bad(err, sel, usage,
			 sel->uprobe_target == XP_UPROBE_SIGNATURE ? "uprobe signature is empty" :
								     "uprobe symbol is empty");
		goto out;
	}
	sel->symbol = strdup(target);
	if (!sel->symbol)
		rc = oom(err);
out:
	free(body);
	return rc;
}

/* --- syscall / tracepoint / python ----------------------------------------- */

/* Closest table name to @name within distance 2, or NULL. */
static const char *closest_syscall(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3, d;
	long nr;

	for (nr = 0; nr < 1024; nr++) {
		const char *cand = xp_syscall_name(nr);

		if (!cand)
			continue;
		d = xpc_edit_distance(name, cand, 2);
		if (d < best_d) {
			best_d = d;
			best = cand;
		}
	}
	return best;
}

static int parse_syscall(struct xp_selector *sel, const char *rest, struct xp_error *err)
{
	static const char usage[] = "use syscall:<name>:entry or syscall:<name>:exit";
	const char *colon = strchr(rest, ':');
	const char *boundary;
	size_t n;

	if (!colon || strchr(colon + 1, ':'))
		return bad(err, sel, usage, "syscall selector must be syscall:<name>:entry|exit");
	n = (size_t)(colon - rest);
	boundary = colon + 1;
	if (!is_word(rest, n))
		return bad(err, sel, usage, "syscall name \"%.*s\" must be letters, digits or '_'",
			   (int)n, rest);
	if (strcmp(boundary, "entry") == 0)
		sel->is_end = false;
	else if (strcmp(boundary, "exit") == 0)
		sel->is_end = true;
	else
		return bad(err, sel, usage, "syscall boundary \"%s\" must be entry or exit",
			   boundary);
	sel->name = dup_n(rest, n);
	sel->category = strdup("syscalls");
	if (!sel->name || !sel->category)
		return oom(err);
	sel->syscall_nr = xp_syscall_number(sel->name);
	if (sel->syscall_nr < 0) {
		const char *near = closest_syscall(sel->name);
		char hint[160];

		if (near)
			snprintf(hint, sizeof(hint),
				 "did you mean \"%s\"? names come from the x86_64 syscall table",
				 near);
		else
			snprintf(hint, sizeof(hint), "names come from the x86_64 syscall table");
		return bad(err, sel, hint, "syscall \"%s\" is not supported on x86_64", sel->name);
	}
	sel->event_type = sel->is_end ? XP_EV_SYSCALL_EXIT : XP_EV_SYSCALL_ENTRY;
	return 0;
}

static int parse_tracepoint(struct xp_selector *sel, const char *rest, struct xp_error *err)
{
	static const char usage[] =
		"use tracepoint:<category>:<name>, e.g. tracepoint:sched:sched_switch";
	const char *colon = strchr(rest, ':');
	size_t n;

	if (!colon || strchr(colon + 1, ':'))
		return bad(err, sel, usage,
			   "tracepoint selector must be tracepoint:<category>:<name>");
	n = (size_t)(colon - rest);
	if (!is_word(rest, n))
		return bad(err, sel, usage,
			   "tracepoint category \"%.*s\" must be letters, digits or '_'", (int)n,
			   rest);
	if (!is_word(colon + 1, strlen(colon + 1)))
		return bad(err, sel, usage, "tracepoint name \"%s\" must be letters, digits or '_'",
			   colon + 1);
	sel->category = dup_n(rest, n);
	sel->name = strdup(colon + 1);
	if (!sel->category || !sel->name)
		return oom(err);
	sel->event_type = XP_EV_TRACEPOINT;
	return 0;
}

static int parse_python(struct xp_selector *sel, const char *rest, struct xp_error *err)
{
	if (strcmp(rest, "gc_start") == 0) {
		sel->is_end = false;
		sel->name = strdup("gc__start");
	} else if (strcmp(rest, "gc_end") == 0) {
		sel->is_end = true;
		sel->name = strdup("gc__done");
	} else {
		return bad(err, sel, "use python:gc_start or python:gc_end",
			   "unsupported Python event \"%s\"", rest);
	}
	sel->category = strdup("python");
	if (!sel->name || !sel->category)
		return oom(err);
	sel->event_type = XP_EV_MARKER; /* probe_kind usdt: see event.h */
	return 0;
}

/* --- cuda ----------------------------------------------------------------- */

static int compile_regex(struct xp_selector *sel, const char *what, struct xp_error *err)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re;

	if (!sel->regex[0])
		return bad(err, sel, "write name~REGEX with a nonempty regex",
			   "%s name regex is empty", what);
	re = pcre2_compile((PCRE2_SPTR)sel->regex, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];

		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		return bad(err, sel,
			   "escape regex metacharacters with '\\' to match them literally",
			   "%s name regex \"%s\" does not compile: %s at offset %zu", what,
			   sel->regex, (const char *)msg, (size_t)off);
	}
	sel->regex_code = re;
	sel->regex_md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!sel->regex_md)
		return oom(err);
	return 0;
}

/* "name~REGEX" -> sel->regex; @filter is what follows "cuda:<event>:". */
static int take_name_regex(struct xp_selector *sel, const char *filter, const char *what,
			   struct xp_error *err)
{
	if (!starts_with(filter, "name~"))
		return bad(err, sel, "write the filter as name~REGEX",
			   "unsupported %s filter \"%s\"; expected name~REGEX", what, filter);
	sel->regex = strdup(filter + strlen("name~"));
	if (!sel->regex)
		return oom(err);
	return compile_regex(sel, what, err);
}

static int parse_cuda_api(struct xp_selector *sel, const char *domain, const char *rest,
			  struct xp_error *err)
{
	char usage[128];
	const char *colon = rest ? strchr(rest, ':') : NULL;
	size_t n;

	snprintf(usage, sizeof(usage), "use cuda:%s:<function name>:entry|exit", domain);
	if (!colon || strchr(colon + 1, ':'))
		return bad(err, sel, usage, "CUDA API selector must be cuda:%s:<name>:entry|exit",
			   domain);
	n = (size_t)(colon - rest);
	if (n == 0)
		return bad(err, sel, usage, "CUDA API name is empty");
	if (!is_word(rest, n))
		return bad(err, sel, usage, "CUDA API name \"%.*s\" must be letters, digits or '_'",
			   (int)n, rest);
	if (strcmp(colon + 1, "entry") == 0)
		sel->is_end = false;
	else if (strcmp(colon + 1, "exit") == 0)
		sel->is_end = true;
	else
		return bad(err, sel, usage, "CUDA API boundary \"%s\" must be entry or exit",
			   colon + 1);
	sel->category = strdup(domain);
	sel->name = dup_n(rest, n);
	if (!sel->category || !sel->name)
		return oom(err);
	sel->event_type = sel->is_end ? XP_EV_CUDA_API_EXIT : XP_EV_CUDA_API_ENTRY;
	return 0;
}

static const char *const cuda_events[] = {
	"runtime_api", "driver_api",   "kernel_start", "kernel_end",	   "memcpy_start",
	"memcpy_end",  "memset_start", "memset_end",   "nvtx_range_start", "nvtx_range_end",
};

static int parse_cuda(struct xp_selector *sel, const char *rest, struct xp_error *err)
{
	static const char cuda_usage[] =
		"CUDA events are runtime_api, driver_api, kernel_start, kernel_end, memcpy_start, "
		"memcpy_end, memset_start, memset_end, nvtx_range_start and nvtx_range_end";
	const char *colon = strchr(rest, ':'), *filter = colon ? colon + 1 : NULL;
	size_t n = colon ? (size_t)(colon - rest) : strlen(rest);
	char event[32];
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(cuda_events) / sizeof(cuda_events[0]); i++)
		if (strlen(cuda_events[i]) == n && memcmp(cuda_events[i], rest, n) == 0)
			break;
	if (i == sizeof(cuda_events) / sizeof(cuda_events[0]))
		return bad(err, sel, cuda_usage, "unsupported CUDA event \"%.*s\"",
			   (int)(n > 64 ? 64 : n), rest);
	snprintf(event, sizeof(event), "%s", cuda_events[i]);

	if (strcmp(event, "runtime_api") == 0 || strcmp(event, "driver_api") == 0) {
		sel->kind = XP_SEL_CUDA_API;
		return parse_cuda_api(sel, event, filter, err);
	}
	sel->is_end = strstr(event, "_end") != NULL;
	if (filter && !filter[0])
		return bad(err, sel, "drop the trailing ':' or add a filter",
			   "cuda:%s has an empty filter", event);

	if (starts_with(event, "kernel_")) {
		sel->kind = XP_SEL_KERNEL;
		sel->event_type = sel->is_end ? XP_EV_GPU_KERNEL_END : XP_EV_GPU_KERNEL_START;
		if (!filter) {
			sel->has_filter = true; /* every kernel: XP_NAME_ANY */
			return 0;
		}
		rc = take_name_regex(sel, filter, "kernel", err);
		if (rc)
			return rc;
		sel->has_filter =
			xp_name_filter_reduce(sel->regex, &sel->name_filter, NULL, 0) == 0;
		return 0;
	}
	if (starts_with(event, "memcpy_")) {
		int k;

		sel->kind = XP_SEL_MEMCPY;
		sel->event_type = sel->is_end ? XP_EV_GPU_MEMCPY_END : XP_EV_GPU_MEMCPY_START;
		if (!filter)
			return 0;
		if (!starts_with(filter, "kind="))
			return bad(err, sel, "write the filter as kind=HtoD|DtoH|DtoD|HtoH|PtoP",
				   "unsupported memcpy filter \"%s\"; expected kind=<kind>",
				   filter);
		k = xp_memcpy_kind_parse(filter + 5, strlen(filter + 5));
		if (k < 0 || k == XP_MEMCPY_UNKNOWN)
			return bad(err, sel, "memcpy kinds are HtoD, DtoH, DtoD, HtoH and PtoP",
				   "unsupported memcpy kind \"%s\"", filter + 5);
		sel->has_memcpy_kind = true;
		sel->memcpy_kind = (uint8_t)k;
		return 0;
	}
	if (starts_with(event, "memset_")) {
		sel->kind = XP_SEL_MEMSET;
		sel->event_type = sel->is_end ? XP_EV_GPU_MEMSET_END : XP_EV_GPU_MEMSET_START;
		if (filter)
			return bad(err, sel, "use cuda:memset_start or cuda:memset_end",
				   "memset selectors take no filter (got \"%s\")", filter);
		return 0;
	}
	/* nvtx_range_start / nvtx_range_end */
	sel->kind = XP_SEL_NVTX;
	sel->event_type = sel->is_end ? XP_EV_NVTX_RANGE_END : XP_EV_NVTX_RANGE_START;
	if (!filter)
		return bad(err, sel,
			   "add a bounded name filter, e.g. cuda:nvtx_range_start:name~^forward$",
			   "NVTX selectors require a name~REGEX filter");
	rc = take_name_regex(sel, filter, "NVTX", err);
	if (rc)
		return rc;
	{
		char why[128] = "";

		if (xp_name_filter_reduce(sel->regex, &sel->name_filter, why, sizeof(why)) ||
		    sel->name_filter.match == XP_NAME_ANY) {
			if (sel->name_filter.match == XP_NAME_ANY && !why[0])
				snprintf(why, sizeof(why), "it matches every name");
			memset(&sel->name_filter, 0, sizeof(sel->name_filter));
			return bad(
				err, sel, BOUNDED_HINT,
				"NVTX name regex \"%s\" must reduce to one nonempty exact, prefix, suffix, or contains filter shorter than %d bytes: %s",
				sel->regex, XP_NAME_FILTER_MAX, why);
		}
	}
	sel->has_filter = true;
	return 0;
}

/* --- entry points ------------------------------------------------------------ */

int xp_selector_parse(const char *text, struct xp_selector *sel, struct xp_error *err)
{
	size_t n;

	memset(sel, 0, sizeof(*sel));
	sel->syscall_nr = -1;
	sel->text = strdup(text ? text : "");
	if (!sel->text)
		return oom(err);
	n = strlen(sel->text);
	if (n == 0)
		return bad(err, sel, SELECTOR_FORMS_HINT, "selector is empty");
	if (n > XP_SELECTOR_MAX)
		return bad(err, sel, NULL, "selector is %zu bytes; at most %d are allowed", n,
			   XP_SELECTOR_MAX);
	if (starts_with(text, "uprobe:")) {
		sel->kind = XP_SEL_UPROBE;
		return parse_uprobe(sel, text + strlen("uprobe:"), err);
	}
	if (starts_with(text, "syscall:")) {
		sel->kind = XP_SEL_SYSCALL;
		return parse_syscall(sel, text + strlen("syscall:"), err);
	}
	if (starts_with(text, "tracepoint:")) {
		sel->kind = XP_SEL_TRACEPOINT;
		return parse_tracepoint(sel, text + strlen("tracepoint:"), err);
	}
	if (starts_with(text, "python:")) {
		sel->kind = XP_SEL_PYTHON_GC;
		return parse_python(sel, text + strlen("python:"), err);
	}
	if (starts_with(text, "cuda:"))
		return parse_cuda(sel, text + strlen("cuda:"), err);
	return bad(err, sel, SELECTOR_FORMS_HINT,
		   "expected uprobe:, syscall:, tracepoint:, python:, or cuda: prefix");
}

void xp_selector_free(struct xp_selector *sel)
{
	if (!sel)
		return;
	free(sel->text);
	free(sel->binary);
	free(sel->symbol);
	free(sel->match_binary);
	free(sel->category);
	free(sel->name);
	free(sel->regex);
	if (sel->regex_md)
		pcre2_match_data_free(sel->regex_md);
	if (sel->regex_code)
		pcre2_code_free(sel->regex_code);
	free(sel->regex_memo);
	memset(sel, 0, sizeof(*sel));
	sel->syscall_nr = -1;
}

int xp_selector_set_match_binary(struct xp_selector *sel, const char *canonical)
{
	char *d = canonical ? strdup(canonical) : NULL;

	if (canonical && !d)
		return -ENOMEM;
	free(sel->match_binary);
	sel->match_binary = d;
	sel->bound = NULL; /* rebind: the id to compare changed */
	return 0;
}

bool xp_selector_is_host(const struct xp_selector *sel)
{
	switch (sel->kind) {
	case XP_SEL_UPROBE:
	case XP_SEL_SYSCALL:
	case XP_SEL_TRACEPOINT:
	case XP_SEL_PYTHON_GC:
		return true;
	default:
		return false;
	}
}

bool xp_selector_is_activity(const struct xp_selector *sel)
{
	return sel->kind == XP_SEL_KERNEL || sel->kind == XP_SEL_MEMCPY ||
	       sel->kind == XP_SEL_MEMSET;
}

bool xp_selector_uses_host_clock(const struct xp_selector *sel)
{
	return !xp_selector_is_activity(sel);
}

bool xp_str_same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

bool xp_selector_needs_callback(const struct xp_selector *sel)
{
	return sel->kind == XP_SEL_CUDA_API || sel->kind == XP_SEL_NVTX;
}
