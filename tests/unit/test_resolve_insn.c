/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_resolve_insn.c - the instruction-boundary check of +0x uprobe
 * offsets (src/resolve/insn.h): the decoder on synthetic byte buffers
 * (every byte of a movabs immediate, instructions cut short, undecodable
 * bytes, 32- against 64-bit code), then the ELF side on this test's own
 * executable, which carries a function of fixed layout (the one of
 * tests/fixtures/live_movabs.c) and code no function symbol covers.
 */
#include <errno.h>
#include <stdlib.h>

#include "resolve/insn.h"
#include "resolve/xelf.h"
#include "testlib.h"

/* mov %rdi,%rcx | movabs $imm64,%rax | xor %rcx,%rax | ret */
static const uint8_t movabs_fn[] = {
	0x48, 0x89, 0xf9, /* +0 */
	0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* +3 */
	0x48, 0x31, 0xc8, /* +13 */
	0xc3, /* +16 */
};

#define BASE 0x401000ull

static void test_movabs_every_byte(void)
{
	struct xp_insn_result r;
	uint64_t t;

	for (t = BASE; t < BASE + sizeof(movabs_fn); t++) {
		CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, sizeof(movabs_fn), BASE, t, &r) ==
		      0);
		if (t == BASE || t == BASE + 3 || t == BASE + 13 || t == BASE + 16) {
			CHECK(r.verdict == XP_INSN_BOUNDARY);
			CHECK_EQ_U64(r.before, t);
		} else if (t < BASE + 3) {
			CHECK(r.verdict == XP_INSN_MIDDLE);
			CHECK_EQ_U64(r.before, BASE);
			CHECK_EQ_U64(r.after, BASE + 3);
		} else if (t < BASE + 13) {
			/* inside the movabs: its immediate is bytes +5..+12 */
			CHECK(r.verdict == XP_INSN_MIDDLE);
			CHECK_EQ_U64(r.before, BASE + 3);
			CHECK_EQ_U64(r.after, BASE + 13);
			CHECK_EQ_U64(r.decoded, 2);
		} else {
			CHECK(r.verdict == XP_INSN_MIDDLE);
			CHECK_EQ_U64(r.before, BASE + 13);
			CHECK_EQ_U64(r.after, BASE + 16);
		}
	}
	/* decoded counts at the boundaries */
	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, sizeof(movabs_fn), BASE, BASE, &r) == 0);
	CHECK_EQ_U64(r.decoded, 0);
	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, sizeof(movabs_fn), BASE, BASE + 16, &r) ==
	      0);
	CHECK_EQ_U64(r.decoded, 3);
}

static void test_outside_buffer(void)
{
	struct xp_insn_result r;

	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, sizeof(movabs_fn), BASE, BASE - 1, &r) ==
	      -EINVAL);
	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, sizeof(movabs_fn), BASE,
			       BASE + sizeof(movabs_fn), &r) == -EINVAL);
	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, 0, BASE, BASE, &r) == -EINVAL);
}

static void test_cut_short_and_undecodable(void)
{
	/* endbr64 | push %rbp | 0x06 (push %es: invalid in 64-bit mode) | nop */
	static const uint8_t bad[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x06, 0x90, 0x90 };
	struct xp_insn_result r;

	/* the buffer ends inside the movabs: never a guess */
	CHECK(xp_insn_boundary(XP_INSN_X86_64, movabs_fn, 8, BASE, BASE + 6, &r) == 0);
	CHECK(r.verdict == XP_INSN_UNDECODABLE);
	CHECK_EQ_U64(r.stop, BASE + 3);
	/* endbr64 (every CET-built function starts with it) decodes */
	CHECK(xp_insn_boundary(XP_INSN_X86_64, bad, sizeof(bad), BASE, BASE + 4, &r) == 0);
	CHECK(r.verdict == XP_INSN_BOUNDARY);
	CHECK(xp_insn_boundary(XP_INSN_X86_64, bad, sizeof(bad), BASE, BASE + 2, &r) == 0);
	CHECK(r.verdict == XP_INSN_MIDDLE);
	CHECK_EQ_U64(r.before, BASE);
	CHECK_EQ_U64(r.after, BASE + 4);
	/* past an undecodable byte nothing is known */
	CHECK(xp_insn_boundary(XP_INSN_X86_64, bad, sizeof(bad), BASE, BASE + 6, &r) == 0);
	CHECK(r.verdict == XP_INSN_UNDECODABLE);
	CHECK_EQ_U64(r.stop, BASE + 5);
	/* ... which is an instruction in 32-bit code */
	CHECK(xp_insn_boundary(XP_INSN_X86_32, bad + 5, 3, BASE, BASE + 1, &r) == 0);
	CHECK(r.verdict == XP_INSN_BOUNDARY);
}

static void test_32_bit_differs(void)
{
	/* 48 b8 imm32: in 32-bit code "dec %eax; mov $imm32,%eax" */
	struct xp_insn_result r;

	CHECK(xp_insn_boundary(XP_INSN_X86_32, movabs_fn + 3, 10, BASE, BASE + 1, &r) == 0);
	CHECK(r.verdict == XP_INSN_BOUNDARY);
	CHECK(xp_insn_boundary(XP_INSN_X86_32, movabs_fn + 3, 10, BASE, BASE + 6, &r) == 0);
	CHECK(r.verdict == XP_INSN_BOUNDARY);
	CHECK(xp_insn_boundary(XP_INSN_X86_32, movabs_fn + 3, 10, BASE, BASE + 3, &r) == 0);
	CHECK(r.verdict == XP_INSN_MIDDLE);
	CHECK_EQ_U64(r.before, BASE + 1);
	CHECK_EQ_U64(r.after, BASE + 6);
}

/* ---- the ELF side, on this executable ----------------------------------- */

__asm__(".text\n"
	".globl xp_ut_movabs\n"
	".type xp_ut_movabs, @function\n"
	".p2align 4\n"
	"xp_ut_movabs:\n"
	"	mov %rdi, %rcx\n"
	"	movabs $0x1122334455667788, %rax\n"
	"	xor %rcx, %rax\n"
	"	ret\n"
	".size xp_ut_movabs, .-xp_ut_movabs\n"
	"	.fill 16, 1, 0xcc\n"
	".globl xp_ut_sizeless\n"
	".type xp_ut_sizeless, @function\n"
	"xp_ut_sizeless:\n"
	"	ret\n"
	"	.fill 15, 1, 0xcc\n");

unsigned long long xp_ut_movabs(unsigned long long x);

static uint64_t func_offset(struct xp_elf *e, const char *name)
{
	struct xp_sym_matches m = { 0 };
	uint64_t off = 0;

	CHECK(xp_elf_lookup(e, name, &m) == 0);
	CHECK_EQ_U64(m.n, 1);
	if (m.n == 1)
		CHECK(xp_elf_va_to_offset(e, m.v[0].value, &off) == 0);
	xp_sym_matches_free(&m);
	return off;
}

static void check_at(struct xp_elf *e, uint64_t off, bool ret, enum xp_offset_check want,
		     struct xp_offset_info *out)
{
	CHECK(xp_insn_check_offset(e, off, ret, out) == 0);
	if (out->check != want)
		fprintf(stderr, "offset 0x%llx: check %d, want %d (%s)\n", (unsigned long long)off,
			out->check, want, out->reason);
	CHECK(out->check == want);
}

static void test_elf_self(void)
{
	struct xp_offset_info in;
	struct xp_elf e;
	uint64_t fn, sizeless;

	CHECK(xp_ut_movabs(0) == 0x1122334455667788ull);
	if (xp_elf_open("/proc/self/exe", &e) != 0) {
		CHECK(!"xp_elf_open(/proc/self/exe)");
		return;
	}
	fn = func_offset(&e, "xp_ut_movabs");
	sizeless = func_offset(&e, "xp_ut_sizeless");

	check_at(&e, fn, false, XP_OFFSET_FUNCTION_START, &in);
	CHECK_STR(in.function, "xp_ut_movabs");
	CHECK_EQ_U64(in.function_offset, fn);
	xp_offset_info_free(&in);
	check_at(&e, fn + 3, false, XP_OFFSET_BOUNDARY, &in);
	CHECK_STR(in.function, "xp_ut_movabs");
	xp_offset_info_free(&in);
	check_at(&e, fn + 13, false, XP_OFFSET_BOUNDARY, &in);
	xp_offset_info_free(&in);
	for (uint64_t k = 4; k < 13; k++) {
		check_at(&e, fn + k, false, XP_OFFSET_MID_INSN, &in);
		CHECK_EQ_U64(in.before, fn + 3);
		CHECK_EQ_U64(in.after, fn + 13);
		CHECK_STR(in.function, "xp_ut_movabs");
		CHECK(xp_offset_refused(&in));
		xp_offset_info_free(&in);
	}
	/* return probes: only at a function's entry */
	check_at(&e, fn, true, XP_OFFSET_FUNCTION_START, &in);
	xp_offset_info_free(&in);
	check_at(&e, fn + 3, true, XP_OFFSET_NOT_ENTRY, &in);
	CHECK_EQ_U64(in.function_offset, fn);
	CHECK(xp_offset_refused(&in));
	xp_offset_info_free(&in);
	/* the padding after .size: no function covers it */
	check_at(&e, fn + 17, false, XP_OFFSET_UNVERIFIED, &in);
	CHECK(strstr(in.reason, "outside every function symbol") != NULL);
	CHECK(in.function == NULL);
	CHECK(!xp_offset_refused(&in));
	xp_offset_info_free(&in);
	check_at(&e, fn + 17, true, XP_OFFSET_UNVERIFIED, &in);
	xp_offset_info_free(&in);
	/* a function symbol without a size: its address is a boundary by
	 * definition, the byte after it is covered by nothing */
	check_at(&e, sizeless, false, XP_OFFSET_FUNCTION_START, &in);
	xp_offset_info_free(&in);
	check_at(&e, sizeless + 1, false, XP_OFFSET_UNVERIFIED, &in);
	xp_offset_info_free(&in);
	xp_elf_close(&e);
}

int main(void)
{
	test_movabs_every_byte();
	test_outside_buffer();
	test_cut_short_and_undecodable();
	test_32_bit_differs();
	test_elf_self();
	TEST_MAIN_END();
}
