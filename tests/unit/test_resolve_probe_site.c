/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_resolve_probe_site.c - how the kernel handles the instruction under
 * a uprobe (src/resolve/probe_site.h): one case per rule of
 * arch/x86/kernel/uprobes.c, on byte buffers (emulated pushes, nops,
 * branches; the 5-byte nop rewrite and its page-boundary exception;
 * single-stepped instructions as functions start -- endbr64 among them,
 * which tests/live/test_probe_cost.py measured on this kernel; refused
 * prefixes and opcodes), then the ELF side on this test's own executable:
 * the site of a function that starts single-stepped and the emulated
 * boundary suggested after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "resolve/probe_site.h"
#include "testlib.h"

struct kase {
	const char *what;
	uint8_t b[15];
	unsigned len;
	enum xp_uprobe_handling want;
};

#define E XP_UPROBE_EMULATED
#define O XP_UPROBE_OPTIMIZED
#define S XP_UPROBE_SINGLE_STEP
#define R XP_UPROBE_REFUSED

static const struct kase cases64[] = {
	{ "push %rbp", { 0x55 }, 1, E },
	{ "push %rbx", { 0x53 }, 1, E },
	{ "push %r12", { 0x41, 0x54 }, 2, E },
	{ "push %rbp with REX.W (not the kernel's 41 form)", { 0x48, 0x55 }, 2, S },
	{ "pushw %bp (66 prefix)", { 0x66, 0x55 }, 2, S },
	{ "nop", { 0x90 }, 1, E },
	{ "xchg %ax,%ax (66 90)", { 0x66, 0x90 }, 2, E },
	{ "pause (f3 90)", { 0xf3, 0x90 }, 2, E },
	{ "nopl (%rax)", { 0x0f, 0x1f, 0x00 }, 3, E },
	{ "nopw 0x0(%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, E },
	{ "nopl 0x0(%rax,%rax,1): 5 bytes", { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, O },
	{ "jmp rel8", { 0xeb, 0x10 }, 2, E },
	{ "jmp rel32", { 0xe9, 1, 2, 3, 4 }, 5, E },
	{ "call rel32", { 0xe8, 1, 2, 3, 4 }, 5, E },
	{ "je rel8", { 0x74, 0x17 }, 2, E },
	{ "jne rel32", { 0x0f, 0x85, 1, 2, 3, 4 }, 6, E },
	{ "callw (66 e8): refused", { 0x66, 0xe8, 1, 2 }, 4, R },
	{ "jmp *%rax: indirect", { 0xff, 0xe0 }, 2, S },
	{ "ret", { 0xc3 }, 1, S },
	{ "sub $0x18,%rsp", { 0x48, 0x83, 0xec, 0x18 }, 4, S },
	{ "mov %rsp,%rbp", { 0x48, 0x89, 0xe5 }, 3, S },
	{ "mov %fs:0x28,%rax", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, S },
	{ "cmpb $0x0,0x0(%rip)", { 0x80, 0x3d, 1, 2, 3, 4, 0 }, 7, S },
	{ "lea 0x1(%rdi),%rax", { 0x48, 0x8d, 0x47, 0x01 }, 4, S },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, S },
	{ "test %rdi,%rdi", { 0x48, 0x85, 0xff }, 3, S },
	{ "syscall", { 0x0f, 0x05 }, 2, S },
	{ "vmovdqu (%rsi),%ymm0: VEX, opcode 6f not in the table",
	  { 0xc5, 0xfe, 0x6f, 0x06 },
	  4,
	  R },
	{ "lock incl (%rax)", { 0xf0, 0xff, 0x00 }, 3, R },
	{ "cs nopw 0x0(%rax,%rax,1): CS prefix",
	  { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 },
	  10,
	  R },
	{ "notrack jmp *%rax (3e)", { 0x3e, 0xff, 0xe0 }, 3, R },
	{ "int3", { 0xcc }, 1, R },
	{ "hlt", { 0xf4 }, 1, R },
	{ "mov %eax,%ss", { 0x8e, 0xd0 }, 2, R },
};

static void test_rules(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases64) / sizeof(cases64[0]); i++) {
		const struct kase *k = &cases64[i];
		struct xp_uprobe_insn x;

		CHECK(xp_uprobe_insn_classify(k->b, k->len, true, 0x1000, &x) == 0);
		if (x.handling != k->want || x.len != k->len)
			fprintf(stderr, "%s: %s (%s), len %u: %s\n", k->what,
				xp_uprobe_handling_name(x.handling), x.rule, x.len, x.text);
		CHECK(x.handling == k->want);
		CHECK_EQ_U64(x.len, k->len);
		CHECK(x.rule != NULL && x.text[0] != '\0');
	}
}

static void test_edges(void)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t bad[] = { 0xe8, 0x01 }; /* a call cut short */
	struct xp_uprobe_insn x;

	/* a 5-byte nop that crosses a page is not rewritten: still emulated */
	CHECK(xp_uprobe_insn_classify(nop5, 5, true, 0x1ffd, &x) == 0);
	CHECK(x.handling == XP_UPROBE_EMULATED);
	CHECK(xp_uprobe_insn_classify(nop5, 5, true, 0x1ffb, &x) == 0);
	CHECK(x.handling == XP_UPROBE_OPTIMIZED);
	/* 32-bit code: no rewrite, the 32-bit table */
	CHECK(xp_uprobe_insn_classify(nop5, 5, false, 0x1000, &x) == 0);
	CHECK(x.handling == XP_UPROBE_EMULATED);
	/* undecodable bytes and a cut instruction: unknown, not an error */
	CHECK(xp_uprobe_insn_classify(bad, sizeof(bad), true, 0, &x) == 0);
	CHECK(x.handling == XP_UPROBE_UNKNOWN);
	CHECK(xp_uprobe_insn_classify(nop5, 3, true, 0, &x) == 0);
	CHECK(x.handling == XP_UPROBE_UNKNOWN || x.len <= 3);
	CHECK(xp_uprobe_insn_classify(NULL, 0, true, 0, &x) == -EINVAL);
	/* branches are marked (the suggestion stops at them) */
	CHECK(xp_uprobe_insn_classify((const uint8_t[]){ 0xc3 }, 1, true, 0, &x) == 0 && x.branch);
	CHECK(xp_uprobe_insn_classify((const uint8_t[]){ 0x55 }, 1, true, 0, &x) == 0 && !x.branch);
}

/* This executable's own functions, laid out like the live fixture's. */
__asm__(".text\n"
	".globl ut_site_fs\n.type ut_site_fs, @function\n.p2align 4\n"
	"ut_site_fs:\n"
	"	mov %fs:0x28, %rax\n"
	"	mov %rdi, %rax\n"
	".globl ut_site_fs_push\n"
	"ut_site_fs_push:\n"
	"	push %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size ut_site_fs, .-ut_site_fs\n"
	".globl ut_site_ret\n.type ut_site_ret, @function\n.p2align 4\n"
	"ut_site_ret:\n"
	"	lea 1(%rdi), %rax\n"
	"	ret\n"
	"	push %rbp\n" /* after the ret: never suggested */
	"	ret\n"
	".size ut_site_ret, .-ut_site_ret\n"
	".globl ut_site_push\n.type ut_site_push, @function\n.p2align 4\n"
	"ut_site_push:\n"
	"	push %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size ut_site_push, .-ut_site_push\n");
void ut_site_fs(void);
void ut_site_ret(void);
void ut_site_push(void);
extern const char ut_site_fs_push[];

/* File offset of a code address of this executable (its maps line). */
static uint64_t self_offset(const void *addr, char *exe, size_t size)
{
	unsigned long a = (unsigned long)addr, start, end, off;
	char line[4352], file[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t res = 0;
	ssize_t n = readlink("/proc/self/exe", exe, size - 1);

	exe[n > 0 ? n : 0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end, &off, file) < 3)
			continue;
		if (a >= start && a < end && !strcmp(file, exe)) {
			res = a - start + off;
			break;
		}
	}
	if (f)
		fclose(f);
	return res;
}

static void test_elf_sites(void)
{
	char exe[4096];
	uint64_t fs = self_offset((const void *)ut_site_fs, exe, sizeof(exe));
	uint64_t fs_push = self_offset(ut_site_fs_push, exe, sizeof(exe));
	uint64_t ret = self_offset((const void *)ut_site_ret, exe, sizeof(exe));
	uint64_t push = self_offset((const void *)ut_site_push, exe, sizeof(exe));
	struct xp_probe_site s;

	CHECK(fs && fs_push == fs + 12 && ret && push);
	CHECK(xp_probe_site_check(exe, fs, true, &s) == 0);
	CHECK(s.checked);
	CHECK(s.insn.handling == XP_UPROBE_SINGLE_STEP);
	CHECK_STR(s.function, "ut_site_fs");
	CHECK_EQ_U64(s.function_offset, fs);
	CHECK(s.has_suggestion);
	CHECK_EQ_U64(s.suggested_offset, fs_push);
	CHECK(s.suggested.handling == XP_UPROBE_EMULATED);
	xp_probe_site_free(&s);
	/* no suggestion asked for (a return probe's site) */
	CHECK(xp_probe_site_check(exe, fs, false, &s) == 0);
	CHECK(s.checked && !s.has_suggestion);
	xp_probe_site_free(&s);
	/* nothing emulated before the ret */
	CHECK(xp_probe_site_check(exe, ret, true, &s) == 0);
	CHECK(s.checked && s.insn.handling == XP_UPROBE_SINGLE_STEP && !s.has_suggestion);
	xp_probe_site_free(&s);
	CHECK(xp_probe_site_check(exe, push, true, &s) == 0);
	CHECK(s.checked && s.insn.handling == XP_UPROBE_EMULATED && !s.has_suggestion);
	xp_probe_site_free(&s);
	/* not ELF, not executable */
	CHECK(xp_probe_site_check("/proc/self/status", 0, true, &s) == 0);
	CHECK(!s.checked && s.reason[0]);
	xp_probe_site_free(&s);
	CHECK(xp_probe_site_check(exe, 0, true, &s) == 0);
	CHECK(!s.checked);
	xp_probe_site_free(&s);
}

int main(void)
{
	test_rules();
	test_edges();
	test_elf_sites();
	TEST_MAIN_END();
}
