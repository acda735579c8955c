/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_selector.c - the selector grammar (every form, every error), the
 * bounded name filter reduction, regex escaping, and matching each selector
 * kind against hand-built events, CPython GC included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "selector/selector.h"
#include "selector/syscall_table.h"
#include "test_selector_events.h"
#include "testlib.h"

/* Parse @text expecting success; returns the selector (caller frees). */
static int parse_ok(const char *text, struct xp_selector *sel)
{
	struct xp_error err = { 0 };
	int rc = xp_selector_parse(text, sel, &err);

	if (rc)
		fprintf(stderr, "unexpected failure for \"%s\": %s\n", text, err.message);
	CHECK(rc == 0);
	CHECK(err.code == 0);
	xp_error_clear(&err);
	return rc;
}

/* Parse @text expecting INVALID_EVENT_SELECTOR whose message holds @what. */
static void parse_bad(const char *text, const char *what)
{
	struct xp_selector sel;
	struct xp_error err = { 0 };
	int rc = xp_selector_parse(text, &sel, &err);
	const char *d;
	char want[4200];

	CHECK_EQ_U64(rc, -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK_EQ_U64(err.code, XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(err.recoverable);
	CHECK(strncmp(err.message, "invalid event selector: ", 24) == 0);
	if (!strstr(err.message, what))
		fprintf(stderr, "selector \"%s\": message \"%s\" lacks \"%s\"\n", text, err.message,
			what);
	CHECK(strstr(err.message, what) != NULL);
	d = xp_error_detail_get(&err, "selector");
	snprintf(want, sizeof(want), "\"%s\"", text ? text : "");
	if (strlen(text ? text : "") < 1000 && !strchr(text ? text : "", '\\'))
		CHECK_STR(d, want);
	else
		CHECK(d != NULL);
	xp_error_clear(&err);
	xp_selector_free(&sel);
}

static void test_uprobe_forms(void)
{
	struct xp_selector s;

	if (!parse_ok("uprobe:/usr/bin/app:main:entry", &s)) {
		CHECK(s.kind == XP_SEL_UPROBE);
		CHECK_STR(s.binary, "/usr/bin/app");
		CHECK_STR(s.symbol, "main");
		CHECK(s.uprobe_target == XP_UPROBE_SYMBOL);
		CHECK(!s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_HOST_FUNCTION_ENTRY);
		CHECK(xp_selector_is_host(&s) && xp_selector_uses_host_clock(&s));
		CHECK(!xp_selector_is_activity(&s) && !xp_selector_needs_callback(&s));
		CHECK_STR(s.text, "uprobe:/usr/bin/app:main:entry");
	}
	xp_selector_free(&s);
	if (!parse_ok("uprobe:/usr/bin/app:_ZN3foo3barEv:return", &s)) {
		CHECK(s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_HOST_FUNCTION_EXIT);
		CHECK_STR(s.symbol, "_ZN3foo3barEv");
	}
	xp_selector_free(&s);
	/* the signature form keeps every ':' after the first ":symbol=" */
	if (!parse_ok("uprobe:/lib/libx.so:symbol=ns::Foo::bar(int, char const*) const:entry",
		      &s)) {
		CHECK(s.uprobe_target == XP_UPROBE_SIGNATURE);
		CHECK_STR(s.binary, "/lib/libx.so");
		CHECK_STR(s.symbol, "ns::Foo::bar(int, char const*) const");
	}
	xp_selector_free(&s);
	if (!parse_ok("uprobe:/lib/a.so:symbol=std::vector<int>::push_back(int const&):return",
		      &s)) {
		CHECK_STR(s.symbol, "std::vector<int>::push_back(int const&)");
		CHECK(s.is_end);
	}
	xp_selector_free(&s);
	/* a ':' in the binary path: the symbol is after the last ':' */
	if (!parse_ok("uprobe:/opt/a:b/app:main:entry", &s)) {
		CHECK_STR(s.binary, "/opt/a:b/app");
		CHECK_STR(s.symbol, "main");
	}
	xp_selector_free(&s);
	if (!parse_ok("uprobe:/usr/bin/app:+0x1a2B:entry", &s)) {
		CHECK(s.uprobe_target == XP_UPROBE_OFFSET);
		CHECK_EQ_U64(s.offset, 0x1a2b);
		CHECK(s.symbol == NULL);
		CHECK_STR(s.binary, "/usr/bin/app");
	}
	xp_selector_free(&s);
	if (!parse_ok("uprobe:/usr/bin/app:+0xffffffffffffffff:return", &s))
		CHECK_EQ_U64(s.offset, UINT64_MAX);
	xp_selector_free(&s);
}

static void test_uprobe_errors(void)
{
	parse_bad("uprobe:", "needs a binary, a symbol and entry or return");
	parse_bad("uprobe:/bin/x", "needs a binary, a symbol and entry or return");
	parse_bad("uprobe:/bin/x:entry", "needs a binary, a symbol and entry or return");
	parse_bad("uprobe:/bin/x:main", "uprobe boundary \"main\" must be entry or return");
	parse_bad("uprobe:/bin/x:main:exit", "uprobe boundary \"exit\" must be entry or return");
	parse_bad("uprobe:/bin/x:main:", "uprobe boundary \"\" must be entry or return");
	parse_bad("uprobe::main:entry", "uprobe binary is empty");
	parse_bad("uprobe:/bin/x::entry", "uprobe symbol is empty");
	parse_bad("uprobe:/bin/x:symbol=:entry", "uprobe signature is empty");
	parse_bad("uprobe::symbol=f():entry", "uprobe binary is empty");
	parse_bad("uprobe:/bin/x:ns::f:entry", "use the symbol= form");
	parse_bad("uprobe:/bin/x:+1a:entry", "must be +0x<hex file offset>");
	parse_bad("uprobe:/bin/x:+0X1a:entry", "must be +0x<hex file offset>");
	parse_bad("uprobe:/bin/x:+:entry", "must be +0x<hex file offset>");
	parse_bad("uprobe:/bin/x:+0x:entry", "must be +0x<hex file offset>");
	parse_bad("uprobe:/bin/x:+0xfg:entry", "must be +0x<hex file offset>");
	parse_bad("uprobe:/bin/x:+0x10000000000000000:entry", "does not fit in 64 bits");
}

static void test_linux_forms(void)
{
	struct xp_selector s;

	if (!parse_ok("syscall:read:entry", &s)) {
		CHECK(s.kind == XP_SEL_SYSCALL);
		CHECK_STR(s.name, "read");
		CHECK_STR(s.category, "syscalls");
		CHECK_EQ_U64(s.syscall_nr, 0);
		CHECK(!s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_SYSCALL_ENTRY);
		CHECK(xp_selector_is_host(&s));
	}
	xp_selector_free(&s);
	if (!parse_ok("syscall:mmap:exit", &s)) {
		CHECK_EQ_U64(s.syscall_nr, 9);
		CHECK(s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_SYSCALL_EXIT);
	}
	xp_selector_free(&s);
	if (!parse_ok("syscall:openat:entry", &s))
		CHECK_EQ_U64(s.syscall_nr, 257);
	xp_selector_free(&s);
	if (!parse_ok("syscall:futex_waitv:exit", &s))
		CHECK_EQ_U64(s.syscall_nr, 449);
	xp_selector_free(&s);
	if (!parse_ok("tracepoint:sched:sched_switch", &s)) {
		CHECK(s.kind == XP_SEL_TRACEPOINT);
		CHECK_STR(s.category, "sched");
		CHECK_STR(s.name, "sched_switch");
		CHECK_EQ_U64(s.event_type, XP_EV_TRACEPOINT);
		CHECK(!s.is_end);
		CHECK_EQ_U64(s.syscall_nr, (uint64_t)-1);
	}
	xp_selector_free(&s);
	if (!parse_ok("python:gc_start", &s)) {
		CHECK(s.kind == XP_SEL_PYTHON_GC);
		CHECK(!s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_MARKER);
		CHECK_STR(s.name, "gc__start");
		CHECK_STR(s.category, "python");
		CHECK(xp_selector_is_host(&s));
	}
	xp_selector_free(&s);
	if (!parse_ok("python:gc_end", &s)) {
		CHECK(s.is_end);
		CHECK_STR(s.name, "gc__done");
	}
	xp_selector_free(&s);
}

static void test_linux_errors(void)
{
	struct xp_selector s;
	struct xp_error err = { 0 };

	parse_bad("syscall:read", "syscall selector must be syscall:<name>:entry|exit");
	parse_bad("syscall:read:entry:x", "syscall selector must be syscall:<name>:entry|exit");
	parse_bad("syscall:", "syscall selector must be");
	parse_bad("syscall::entry", "syscall name \"\" must be letters, digits or '_'");
	parse_bad("syscall:re-ad:entry", "syscall name \"re-ad\" must be letters, digits or '_'");
	parse_bad("syscall:read:return", "syscall boundary \"return\" must be entry or exit");
	parse_bad("syscall:nosuchcall:entry", "syscall \"nosuchcall\" is not supported on x86_64");
	/* a near miss gets a suggestion */
	CHECK(xp_selector_parse("syscall:opnat:entry", &s, &err) ==
	      -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK_STR(err.message,
		  "invalid event selector: syscall \"opnat\" is not supported on x86_64");
	CHECK(err.nhints == 1 && strstr(err.hints[0], "\"openat\"") != NULL);
	xp_error_clear(&err);
	xp_selector_free(&s);

	parse_bad("tracepoint:sched", "tracepoint selector must be tracepoint:<category>:<name>");
	parse_bad("tracepoint:a:b:c", "tracepoint selector must be tracepoint:<category>:<name>");
	parse_bad("tracepoint:sched:", "tracepoint name \"\" must be letters, digits or '_'");
	parse_bad("tracepoint::x", "tracepoint category \"\" must be letters, digits or '_'");
	parse_bad("tracepoint:sc-hed:x", "tracepoint category \"sc-hed\"");
	parse_bad("tracepoint:sched:sched switch", "tracepoint name \"sched switch\"");
	parse_bad("python:gc", "unsupported Python event \"gc\"");
	parse_bad("python:gc_start:x", "unsupported Python event \"gc_start:x\"");
	parse_bad("python:", "unsupported Python event \"\"");
	parse_bad("usdt:python:gc__start",
		  "expected uprobe:, syscall:, tracepoint:, python:, or cuda: prefix");
}

static void test_cuda_forms(void)
{
	struct xp_selector s;

	if (!parse_ok("cuda:runtime_api:cudaLaunchKernel:exit", &s)) {
		CHECK(s.kind == XP_SEL_CUDA_API);
		CHECK_STR(s.category, "runtime_api");
		CHECK_STR(s.name, "cudaLaunchKernel");
		CHECK(s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_CUDA_API_EXIT);
		CHECK(!xp_selector_is_host(&s) && xp_selector_uses_host_clock(&s));
		CHECK(xp_selector_needs_callback(&s));
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:driver_api:cuLaunchKernel:entry", &s)) {
		CHECK_STR(s.category, "driver_api");
		CHECK_EQ_U64(s.event_type, XP_EV_CUDA_API_ENTRY);
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:kernel_start", &s)) {
		CHECK(s.kind == XP_SEL_KERNEL);
		CHECK(s.regex == NULL && s.regex_code == NULL);
		CHECK(s.has_filter && s.name_filter.match == XP_NAME_ANY);
		CHECK_EQ_U64(s.event_type, XP_EV_GPU_KERNEL_START);
		CHECK(xp_selector_is_activity(&s) && !xp_selector_uses_host_clock(&s));
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:kernel_end:name~flash.*", &s)) {
		CHECK_STR(s.regex, "flash.*");
		CHECK(s.regex_code != NULL);
		CHECK(!s.has_filter); /* not one of the eight wrappers */
		CHECK(s.is_end);
		CHECK_EQ_U64(s.event_type, XP_EV_GPU_KERNEL_END);
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:kernel_start:name~^flash_fwd$", &s)) {
		CHECK(s.has_filter && s.name_filter.match == XP_NAME_EXACT);
		CHECK_STR(s.name_filter.literal, "flash_fwd");
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:kernel_start:name~void ns::k<int>(int):", &s)) {
		CHECK_STR(s.regex, "void ns::k<int>(int):");
		CHECK(!s.has_filter);
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:kernel_start:name~.*gemm.*", &s)) {
		CHECK(s.has_filter && s.name_filter.match == XP_NAME_CONTAINS);
		CHECK_STR(s.name_filter.literal, "gemm");
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:memcpy_start:kind=HtoD", &s)) {
		CHECK(s.kind == XP_SEL_MEMCPY);
		CHECK(s.has_memcpy_kind && s.memcpy_kind == XP_MEMCPY_HTOD);
		CHECK_EQ_U64(s.event_type, XP_EV_GPU_MEMCPY_START);
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:memcpy_end:kind=PtoP", &s))
		CHECK(s.memcpy_kind == XP_MEMCPY_PTOP && s.is_end);
	xp_selector_free(&s);
	if (!parse_ok("cuda:memcpy_end", &s))
		CHECK(!s.has_memcpy_kind && s.event_type == XP_EV_GPU_MEMCPY_END);
	xp_selector_free(&s);
	if (!parse_ok("cuda:memset_start", &s))
		CHECK(s.kind == XP_SEL_MEMSET && s.event_type == XP_EV_GPU_MEMSET_START);
	xp_selector_free(&s);
	if (!parse_ok("cuda:memset_end", &s))
		CHECK(s.is_end && s.event_type == XP_EV_GPU_MEMSET_END);
	xp_selector_free(&s);
	if (!parse_ok("cuda:nvtx_range_start:name~^forward$", &s)) {
		CHECK(s.kind == XP_SEL_NVTX);
		CHECK(s.has_filter && s.name_filter.match == XP_NAME_EXACT);
		CHECK_STR(s.name_filter.literal, "forward");
		CHECK_EQ_U64(s.event_type, XP_EV_NVTX_RANGE_START);
		CHECK(xp_selector_uses_host_clock(&s) && xp_selector_needs_callback(&s));
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:nvtx_range_end:name~.*step$", &s)) {
		CHECK(s.is_end && s.name_filter.match == XP_NAME_SUFFIX);
		CHECK_STR(s.name_filter.literal, "step");
	}
	xp_selector_free(&s);
	if (!parse_ok("cuda:nvtx_range_end:name~layer\\.1", &s)) {
		CHECK(s.name_filter.match == XP_NAME_CONTAINS);
		CHECK_STR(s.name_filter.literal, "layer.1");
	}
	xp_selector_free(&s);
}

static void test_cuda_errors(void)
{
	char big[300], sel[400];

	parse_bad("cuda:", "unsupported CUDA event \"\"");
	parse_bad("cuda:kernel", "unsupported CUDA event \"kernel\"");
	parse_bad("cuda:graph_start", "unsupported CUDA event \"graph_start\"");
	parse_bad("cuda:runtime_api",
		  "CUDA API selector must be cuda:runtime_api:<name>:entry|exit");
	parse_bad("cuda:runtime_api:cudaMalloc", "CUDA API selector must be");
	parse_bad("cuda:driver_api:cuInit:entry:x", "CUDA API selector must be cuda:driver_api");
	parse_bad("cuda:runtime_api::entry", "CUDA API name is empty");
	parse_bad("cuda:runtime_api:cuda-Malloc:entry", "CUDA API name \"cuda-Malloc\"");
	parse_bad("cuda:runtime_api:cudaMalloc:begin",
		  "CUDA API boundary \"begin\" must be entry or exit");
	parse_bad("cuda:kernel_start:", "cuda:kernel_start has an empty filter");
	parse_bad("cuda:kernel_start:flash",
		  "unsupported kernel filter \"flash\"; expected name~REGEX");
	parse_bad("cuda:kernel_end:name~", "kernel name regex is empty");
	parse_bad("cuda:kernel_start:name~(flash", "kernel name regex \"(flash\" does not compile");
	parse_bad("cuda:kernel_start:name~a[", "does not compile");
	parse_bad("cuda:memcpy_start:kind=XtoY", "unsupported memcpy kind \"XtoY\"");
	parse_bad("cuda:memcpy_start:kind=unknown", "unsupported memcpy kind \"unknown\"");
	parse_bad("cuda:memcpy_start:kind=htod", "unsupported memcpy kind \"htod\"");
	parse_bad("cuda:memcpy_end:bytes=4", "unsupported memcpy filter \"bytes=4\"");
	parse_bad("cuda:memset_start:kind=HtoD", "memset selectors take no filter");
	parse_bad("cuda:nvtx_range_start", "NVTX selectors require a name~REGEX filter");
	parse_bad("cuda:nvtx_range_end:", "has an empty filter");
	parse_bad("cuda:nvtx_range_start:forward", "unsupported NVTX filter");
	parse_bad("cuda:nvtx_range_start:name~(", "NVTX name regex \"(\" does not compile");
	parse_bad("cuda:nvtx_range_start:name~.*", "it matches every name");
	parse_bad("cuda:nvtx_range_start:name~^.*$", "it matches every name");
	parse_bad("cuda:nvtx_range_start:name~^a.*b$", "must reduce to one nonempty exact");
	parse_bad("cuda:nvtx_range_start:name~^$", "the literal is empty");
	parse_bad("cuda:nvtx_range_start:name~fwd|bwd", "unescaped metacharacter '|'");
	memset(big, 'a', 128);
	big[128] = '\0';
	snprintf(sel, sizeof(sel), "cuda:nvtx_range_start:name~^%s$", big);
	parse_bad(sel, "literal is 128 bytes; at most 127 are allowed");
}

static void test_generic_errors(void)
{
	char *huge;
	struct xp_selector s;
	struct xp_error err = { 0 };

	parse_bad("", "selector is empty");
	parse_bad("kernel_start",
		  "expected uprobe:, syscall:, tracepoint:, python:, or cuda: prefix");
	parse_bad("CUDA:kernel_start", "expected uprobe:");
	parse_bad(" syscall:read:entry", "expected uprobe:");
	huge = malloc(XP_SELECTOR_MAX + 2);
	memset(huge, 'x', XP_SELECTOR_MAX + 1);
	memcpy(huge, "cuda:kernel_start:name~", 23);
	huge[XP_SELECTOR_MAX + 1] = '\0';
	parse_bad(huge, "selector is 4097 bytes; at most 4096 are allowed");
	free(huge);
	/* NULL text is an empty selector, not a crash */
	CHECK(xp_selector_parse(NULL, &s, &err) == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(err.nhints == 1);
	xp_error_clear(&err);
	xp_selector_free(&s);
	/* free is idempotent and safe on a freed selector */
	xp_selector_free(&s);
	xp_selector_free(NULL);
}

/* --- name filters ------------------------------------------------------- */

static void reduce_ok(const char *re, enum xp_name_match m, const char *lit)
{
	struct xp_name_filter f;
	char why[128] = "";
	int rc = xp_name_filter_reduce(re, &f, why, sizeof(why));

	if (rc || f.match != m || strcmp(f.literal, lit) != 0)
		fprintf(stderr, "reduce(\"%s\"): rc %d match %s literal \"%s\" (%s)\n", re, rc,
			xp_name_match_name(f.match), f.literal, why);
	CHECK(rc == 0);
	CHECK(f.match == m);
	CHECK_STR(f.literal, lit);
	CHECK_EQ_U64(f.len, strlen(lit));
}

static void reduce_bad(const char *re, const char *why_part)
{
	struct xp_name_filter f;
	char why[128] = "";

	CHECK(xp_name_filter_reduce(re, &f, why, sizeof(why)) == -EINVAL);
	if (!strstr(why, why_part))
		fprintf(stderr, "reduce(\"%s\"): reason \"%s\" lacks \"%s\"\n", re, why, why_part);
	CHECK(strstr(why, why_part) != NULL);
	CHECK(f.match == XP_NAME_ANY && f.literal[0] == '\0');
}

static void test_name_filter_reduce(void)
{
	char re[600], lit[200];
	int i;

	reduce_ok("^abc$", XP_NAME_EXACT, "abc");
	reduce_ok("^abc.*", XP_NAME_PREFIX, "abc");
	reduce_ok(".*abc$", XP_NAME_SUFFIX, "abc");
	reduce_ok(".*abc.*", XP_NAME_CONTAINS, "abc");
	reduce_ok("^abc", XP_NAME_PREFIX, "abc");
	reduce_ok("abc$", XP_NAME_SUFFIX, "abc");
	reduce_ok(".*abc", XP_NAME_CONTAINS, "abc");
	reduce_ok("abc", XP_NAME_CONTAINS, "abc");
	reduce_ok(".*", XP_NAME_ANY, "");
	reduce_ok("^.*", XP_NAME_ANY, "");
	reduce_ok(".*$", XP_NAME_ANY, "");
	reduce_ok("^.*$", XP_NAME_ANY, "");
	/* escapes unescape; the wrapper is the first that leaves a literal */
	reduce_ok("^a\\.b$", XP_NAME_EXACT, "a.b");
	reduce_ok("^a\\\\b$", XP_NAME_EXACT, "a\\b");
	reduce_ok("^a\\$", XP_NAME_PREFIX, "a$"); /* "a\" dangles under ^..$ */
	reduce_ok("a\\$", XP_NAME_CONTAINS, "a$");
	reduce_ok("^a\\\\.*", XP_NAME_PREFIX, "a\\");
	reduce_ok("^\\(x\\)\\[\\]\\{\\}\\|\\?\\*\\+\\^\\$$", XP_NAME_EXACT, "(x)[]{}|?*+^$");
	reduce_ok("^a-b c/d,e:f$", XP_NAME_EXACT, "a-b c/d,e:f");
	reduce_ok("^\\-\\ \\/$", XP_NAME_EXACT, "- /");
	reduce_ok("^\xc3\xa9t\xc3\xa9$", XP_NAME_EXACT, "\xc3\xa9t\xc3\xa9"); /* bytes as is */
	reduce_bad("^a\\.*", "unescaped metacharacter '*' at offset 4");
	reduce_bad("\\d+", "\\d is not a literal escape");
	reduce_bad("^\\w$", "\\w is not a literal escape");
	reduce_bad("a|b", "unescaped metacharacter '|'");
	reduce_bad("^(ab)$", "unescaped metacharacter '(' at offset 1");
	reduce_bad("[ab]", "unescaped metacharacter '['");
	reduce_bad("a+", "unescaped metacharacter '+'");
	reduce_bad("a?", "unescaped metacharacter '?'");
	reduce_bad("a{2}", "unescaped metacharacter '{'");
	reduce_bad("^a.*b$", "unescaped metacharacter '.' at offset 2");
	reduce_bad("^$", "the literal is empty");
	reduce_bad("", "the literal is empty");
	reduce_bad("\\", "trailing backslash");
	reduce_bad("^\\\xc3\xa9$", "is not a literal escape");
	CHECK(xp_name_filter_reduce(NULL, &(struct xp_name_filter){ 0 }, NULL, 0) == -EINVAL);

	/* 127 literal bytes pass, 128 do not, counted after unescaping */
	for (i = 0; i < 127; i++)
		lit[i] = 'k';
	lit[127] = '\0';
	snprintf(re, sizeof(re), "^%s$", lit);
	reduce_ok(re, XP_NAME_EXACT, lit);
	snprintf(re, sizeof(re), ".*%sk", lit);
	reduce_bad(re, "literal is 128 bytes; at most 127 are allowed");
	re[0] = '^';
	for (i = 0; i < 127; i++) {
		re[1 + 2 * i] = '\\';
		re[2 + 2 * i] = '.';
		lit[i] = '.';
	}
	re[255] = '$';
	re[256] = '\0';
	reduce_ok(re, XP_NAME_EXACT, lit);
	re[255] = '\\';
	re[256] = '.';
	re[257] = '$';
	re[258] = '\0';
	reduce_bad(re, "literal is 128 bytes");
}

static void test_name_filter_match(void)
{
	struct xp_name_filter f;

	CHECK(xp_name_filter_reduce("^abc$", &f, NULL, 0) == 0);
	CHECK(xp_name_filter_match(&f, "abc", 3));
	CHECK(!xp_name_filter_match(&f, "abcd", 4));
	CHECK(!xp_name_filter_match(&f, "ab", 2));
	CHECK(xp_name_filter_reduce("^abc", &f, NULL, 0) == 0);
	CHECK(xp_name_filter_match(&f, "abcd", 4));
	CHECK(!xp_name_filter_match(&f, "xabc", 4));
	CHECK(!xp_name_filter_match(&f, "ab", 2));
	CHECK(xp_name_filter_reduce("abc$", &f, NULL, 0) == 0);
	CHECK(xp_name_filter_match(&f, "xabc", 4));
	CHECK(!xp_name_filter_match(&f, "abcx", 4));
	CHECK(!xp_name_filter_match(&f, "bc", 2));
	CHECK(xp_name_filter_reduce("abc", &f, NULL, 0) == 0);
	CHECK(xp_name_filter_match(&f, "xxabcxx", 7));
	CHECK(!xp_name_filter_match(&f, "xxabxcx", 7));
	CHECK(xp_name_filter_reduce(".*", &f, NULL, 0) == 0);
	CHECK(xp_name_filter_match(&f, "", 0));
	CHECK_STR(xp_name_match_name(XP_NAME_SUFFIX), "suffix");
	CHECK_STR(xp_name_match_name(XP_NAME_ANY), "any");
}

static void test_regex_escape(void)
{
	const char *raw = "void k<float>(a.b, c*) [x] {y} ^$|?+\\";
	struct xp_name_filter f;
	char re[256];
	char *esc = xp_regex_escape("a.b(c)");

	CHECK_STR(esc, "a\\.b\\(c\\)");
	free(esc);
	esc = xp_regex_escape("");
	CHECK_STR(esc, "");
	free(esc);
	/* escape then reduce round-trips any literal */
	esc = xp_regex_escape(raw);
	snprintf(re, sizeof(re), "^%s$", esc);
	CHECK(xp_name_filter_reduce(re, &f, NULL, 0) == 0);
	CHECK(f.match == XP_NAME_EXACT);
	CHECK_STR(f.literal, raw);
	free(esc);
}

/* --- matching ------------------------------------------------------------- */

static bool m(const char *text, struct xp_capture *c, const struct xp_event *e)
{
	struct xp_selector s;
	bool r = false;

	if (!parse_ok(text, &s))
		r = xp_selector_matches(&s, c, e);
	xp_selector_free(&s);
	return r;
}

static void test_match_host(void)
{
	struct xp_capture c;
	struct xp_event *e;
	size_t i;

	xp_capture_init(&c, 0);
	tev_uprobe(&c, 10, 1, "/usr/bin/app", "_ZN3foo3barEv", 0);
	c.events[0].host.symbol_demangled = xp_capture_intern(&c, "foo::bar()");
	tev_uprobe(&c, 11, 1, "/usr/bin/app", "_ZN3foo3barEv", 1);
	e = tev_uprobe(&c, 12, 1, "/usr/bin/app", NULL, 0);
	e->host.offset = 0x1a2b;
	e->host.flags |= XP_HOSTF_OFFSET;
	tev_syscall(&c, 13, 1, "read", 0);
	tev_syscall(&c, 14, 1, "read", 1);
	tev_tracepoint(&c, 15, 1, "sched", "sched_switch");
	tev_gc(&c, 16, 1, 0);
	tev_gc(&c, 17, 1, 1);

	/* uprobe by symbol, by demangled signature, by offset */
	CHECK(m("uprobe:/usr/bin/app:_ZN3foo3barEv:entry", &c, &c.events[0]));
	CHECK(m("uprobe:/usr/bin/app:symbol=foo::bar():entry", &c, &c.events[0]));
	CHECK(!m("uprobe:/usr/bin/app:_ZN3foo3barEv:return", &c, &c.events[0]));
	CHECK(m("uprobe:/usr/bin/app:_ZN3foo3barEv:return", &c, &c.events[1]));
	CHECK(!m("uprobe:/usr/bin/./app:_ZN3foo3barEv:entry", &c, &c.events[0])); /* textual */
	CHECK(!m("uprobe:/usr/bin/app:main:entry", &c, &c.events[0]));
	CHECK(m("uprobe:/usr/bin/app:+0x1a2b:entry", &c, &c.events[2]));
	CHECK(!m("uprobe:/usr/bin/app:+0x1a2c:entry", &c, &c.events[2]));
	CHECK(!m("uprobe:/usr/bin/app:+0x1a2b:entry", &c, &c.events[0])); /* no offset */
	/* syscalls */
	CHECK(m("syscall:read:entry", &c, &c.events[3]));
	CHECK(!m("syscall:read:exit", &c, &c.events[3]));
	CHECK(m("syscall:read:exit", &c, &c.events[4]));
	CHECK(!m("syscall:write:exit", &c, &c.events[4]));
	/* tracepoint: name and category */
	CHECK(m("tracepoint:sched:sched_switch", &c, &c.events[5]));
	CHECK(!m("tracepoint:other:sched_switch", &c, &c.events[5]));
	CHECK(!m("tracepoint:sched:sched_wakeup", &c, &c.events[5]));
	/* python GC: USDT event, marker name and provider attribute */
	CHECK(m("python:gc_start", &c, &c.events[6]));
	CHECK(!m("python:gc_end", &c, &c.events[6]));
	CHECK(m("python:gc_end", &c, &c.events[7]));
	CHECK(!m("python:gc_start", &c, &c.events[7]));
	/* nothing else matches a host event */
	for (i = 0; i < c.count; i++) {
		CHECK(!m("cuda:kernel_start", &c, &c.events[i]));
		CHECK(!m("cuda:runtime_api:cudaMalloc:entry", &c, &c.events[i]));
	}
	xp_capture_free(&c);

	/* a USDT event of another provider, or another probe kind, is not GC */
	xp_capture_init(&c, 0);
	e = tev_host(&c, XP_EV_MARKER, 1, 1, XP_PROBE_USDT, "/usr/bin/node", "gc__start");
	xp_event_add_attr_str(&c, e, "usdt_provider", "node");
	e = tev_host(&c, XP_EV_MARKER, 2, 1, XP_PROBE_UPROBE, "/usr/bin/python3", "gc__start");
	xp_event_add_attr_str(&c, e, "usdt_provider", "python");
	tev_host(&c, XP_EV_MARKER, 3, 1, XP_PROBE_USDT, "/usr/bin/python3", "gc__start");
	CHECK(!m("python:gc_start", &c, &c.events[0]));
	CHECK(!m("python:gc_start", &c, &c.events[1]));
	CHECK(!m("python:gc_start", &c, &c.events[2]));
	xp_capture_free(&c);
}

static void test_match_cuda(void)
{
	struct xp_capture c;
	struct xp_selector s;
	struct xp_event *e;

	xp_capture_init(&c, 0);
	tev_api(&c, 1, 7, "runtime_api", "cudaLaunchKernel", 0, 1, 5);
	tev_api(&c, 2, 7, "runtime_api", "cudaLaunchKernel", 1, 1, 5);
	tev_api(&c, 3, 7, "driver_api", "cuLaunchKernel", 1, 1, 6);
	tev_kernel(&c, 4, 0, "flash_fwd_kernel", 1, 5, 9, XP_CLOCK_CUPTI);
	tev_kernel(&c, 5, 1, "flash_fwd_kernel", 1, 5, 9, XP_CLOCK_CUPTI);
	tev_kernel(&c, 6, 0, "gemm_tn", 1, 6, 9, XP_CLOCK_CUPTI);
	tev_memcpy(&c, 7, 0, XP_MEMCPY_HTOD, 1, 7, 9, XP_CLOCK_CUPTI);
	tev_memcpy(&c, 8, 1, XP_MEMCPY_DTOH, 1, 8, 9, XP_CLOCK_CUPTI);
	tev_activity(&c, XP_EV_GPU_MEMSET_START, 9, XP_CLOCK_CUPTI, 1, 9, 0, 9);
	tev_nvtx(&c, 10, 7, "forward", 0, XP_NVTX_THREAD, 0);
	tev_nvtx(&c, 11, 7, "forward_pass", 1, XP_NVTX_THREAD, 0);
	e = tev_activity(&c, XP_EV_GPU_KERNEL_START, 12, XP_CLOCK_CUPTI, 1, 10, 0, 9);
	(void)e; /* a kernel without a name */

	CHECK(m("cuda:runtime_api:cudaLaunchKernel:entry", &c, &c.events[0]));
	CHECK(!m("cuda:runtime_api:cudaLaunchKernel:exit", &c, &c.events[0]));
	CHECK(m("cuda:runtime_api:cudaLaunchKernel:exit", &c, &c.events[1]));
	CHECK(!m("cuda:driver_api:cudaLaunchKernel:exit", &c, &c.events[1]));
	CHECK(!m("cuda:runtime_api:cudaMalloc:exit", &c, &c.events[1]));
	CHECK(m("cuda:driver_api:cuLaunchKernel:exit", &c, &c.events[2]));
	CHECK(m("cuda:kernel_start", &c, &c.events[3]));
	CHECK(m("cuda:kernel_start:name~flash", &c, &c.events[3]));
	CHECK(m("cuda:kernel_start:name~^flash_fwd_kernel$", &c, &c.events[3]));
	CHECK(!m("cuda:kernel_start:name~^flash$", &c, &c.events[3]));
	CHECK(!m("cuda:kernel_end:name~flash", &c, &c.events[3]));
	CHECK(m("cuda:kernel_end:name~fwd_k", &c, &c.events[4]));
	CHECK(!m("cuda:kernel_start:name~flash", &c, &c.events[5]));
	CHECK(m("cuda:kernel_start:name~gemm_(tn|nt)", &c, &c.events[5]));
	CHECK(m("cuda:kernel_start", &c, &c.events[11])); /* no regex: any */
	CHECK(!m("cuda:kernel_start:name~.*", &c, &c.events[11])); /* regex: needs a name */
	CHECK(m("cuda:memcpy_start", &c, &c.events[6]));
	CHECK(m("cuda:memcpy_start:kind=HtoD", &c, &c.events[6]));
	CHECK(!m("cuda:memcpy_start:kind=DtoH", &c, &c.events[6]));
	CHECK(m("cuda:memcpy_end:kind=DtoH", &c, &c.events[7]));
	CHECK(m("cuda:memset_start", &c, &c.events[8]));
	CHECK(!m("cuda:memset_end", &c, &c.events[8]));
	CHECK(m("cuda:nvtx_range_start:name~^forward$", &c, &c.events[9]));
	CHECK(!m("cuda:nvtx_range_end:name~^forward$", &c, &c.events[10]));
	CHECK(m("cuda:nvtx_range_end:name~^forward", &c, &c.events[10]));
	CHECK(!m("cuda:nvtx_range_start:name~^forward", &c, &c.events[10]));

	/* memo: one selector over many events, answers stay right */
	if (!parse_ok("cuda:kernel_start:name~^flash", &s)) {
		int k;

		for (k = 0; k < 3; k++) {
			CHECK(xp_selector_matches(&s, &c, &c.events[3]));
			CHECK(!xp_selector_matches(&s, &c, &c.events[5]));
			CHECK(!xp_selector_matches(&s, &c, &c.events[11]));
		}
		CHECK(s.regex_memo_n == c.strings.count);
		CHECK(s.regex_memo[c.events[3].cuda.kernel_name] == 2);
		CHECK(s.regex_memo[c.events[5].cuda.kernel_name] == 1);
		/* the capture grows: a new name is still judged */
		tev_kernel(&c, 13, 0, "flash_bwd", 1, 11, 9, XP_CLOCK_CUPTI);
		CHECK(xp_selector_matches(&s, &c, &c.events[12]));
		CHECK(s.regex_memo_n == c.strings.count);
	}
	xp_selector_free(&s);
	xp_capture_free(&c);
}

/* A selector bound before its strings existed rebinds when they arrive. */
static void test_match_rebind(void)
{
	struct xp_capture c, d;
	struct xp_selector s;

	xp_capture_init(&c, 0);
	xp_capture_init(&d, 0);
	tev_syscall(&c, 1, 1, "write", 0);
	if (!parse_ok("syscall:read:entry", &s)) {
		CHECK(!xp_selector_matches(&s, &c, &c.events[0]));
		CHECK(s.never);
		tev_syscall(&c, 2, 1, "read", 0);
		CHECK(xp_selector_matches(&s, &c, &c.events[1]));
		CHECK(!s.never);
		/* another capture with other ids */
		tev_syscall(&d, 1, 1, "openat", 0);
		tev_syscall(&d, 2, 1, "read", 0);
		CHECK(!xp_selector_matches(&s, &d, &d.events[0]));
		CHECK(xp_selector_matches(&s, &d, &d.events[1]));
		CHECK(xp_selector_bind(&s, &c) == 0);
		CHECK(xp_selector_matches(&s, &c, &c.events[1]));
	}
	xp_selector_free(&s);
	/* the live pipeline can match the canonical path validate resolved */
	if (!parse_ok("uprobe:/usr/bin/python3:main:entry", &s)) {
		tev_uprobe(&c, 3, 1, "/usr/bin/python3.11", "main", 0);
		CHECK(!xp_selector_matches(&s, &c, &c.events[2]));
		CHECK(xp_selector_set_match_binary(&s, "/usr/bin/python3.11") == 0);
		CHECK(xp_selector_matches(&s, &c, &c.events[2]));
	}
	xp_selector_free(&s);
	xp_capture_free(&c);
	xp_capture_free(&d);
}

static void test_syscall_table(void)
{
	CHECK(xp_syscall_count() >= 300);
	CHECK_EQ_U64(xp_syscall_number("read"), 0);
	CHECK_EQ_U64(xp_syscall_number("epoll_pwait2"), 441);
	CHECK(xp_syscall_number("nosuch") == -1);
	CHECK_STR(xp_syscall_name(257), "openat");
}

int main(void)
{
	test_uprobe_forms();
	test_uprobe_errors();
	test_linux_forms();
	test_linux_errors();
	test_cuda_forms();
	test_cuda_errors();
	test_generic_errors();
	test_name_filter_reduce();
	test_name_filter_match();
	test_regex_escape();
	test_match_host();
	test_match_cuda();
	test_match_rebind();
	test_syscall_table();
	TEST_MAIN_END();
}
