/* SPDX-License-Identifier: Apache-2.0 */
/*
 * insn.c - the instruction-boundary check of +0x uprobe offsets (insn.h):
 * a linear sweep with Capstone from the containing function's first byte
 * up to the offset, and the ELF side around it (which function, which
 * bytes).  The rules and why they exist are in insn.h.
 *
 * Untrusted input.  The file's bytes and symbol sizes are the target's:
 * the bytes read are bounded by the function's end, the segment's file
 * image and XP_INSN_MAX_DECODE + XP_INSN_MAX_LEN, and the decoder never
 * reads past the buffer it is given (cs_disasm_iter consumes from a
 * length it is told and fails on an instruction that runs past it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "insn.h"
#include "xelf.h"

#ifdef XP_CAPSTONE_X86_ONLY
/*
 * Only Capstone's x86 back end, when it is linked statically (CMake
 * defines XP_CAPSTONE_X86_ONLY with XPROBE_STATIC_DEPS).  Capstone's core
 * (cs.o) names every architecture's <Arch>_global_init and <Arch>_option
 * in its dispatch tables, so a static link pulls all eleven back ends in:
 * 1.4 MiB of pointer tables that the dynamic loader relocates at every
 * start of xprobe, about 350 page faults, doubling `xprobe --version`
 * (1.2 -> 2.2 ms, perf stat -r 300).  Defining the other back ends' two
 * entry points here, in the object that calls cs_open and so is linked
 * before the archive's cs.o is, keeps their objects out (x86 alone adds
 * 28 KiB of tables, about 10 page faults).  The stubs are never called:
 * cs_open only initialises the architecture it is asked for, here only
 * CS_ARCH_X86.  Should a Capstone release pull one of those objects in
 * for another reason, the link fails with a duplicate symbol, loudly.
 */
#define XP_CS_STUB(arch)                                                          \
	int arch##_global_init(void *ud);                                         \
	int arch##_option(void *ud, int type, size_t value);                      \
	int arch##_global_init(void *ud)                                          \
	{                                                                         \
		(void)ud;                                                         \
		return CS_ERR_ARCH;                                               \
	}                                                                         \
	int arch##_option(void *ud, int type, size_t value)                       \
	{                                                                         \
		(void)ud;                                                         \
		(void)type;                                                       \
		(void)value;                                                      \
		return CS_ERR_ARCH;                                               \
	}
XP_CS_STUB(ARM)
XP_CS_STUB(AArch64)
XP_CS_STUB(Mips)
XP_CS_STUB(PPC)
XP_CS_STUB(Sparc)
XP_CS_STUB(SystemZ)
XP_CS_STUB(XCore)
XP_CS_STUB(M68K)
XP_CS_STUB(TMS320C64x)
XP_CS_STUB(M680X)
XP_CS_STUB(EVM)
#undef XP_CS_STUB
#endif

int xp_insn_boundary(enum xp_insn_arch arch, const uint8_t *code, size_t len, uint64_t base,
		     uint64_t target, struct xp_insn_result *r)
{
	const uint8_t *p = code;
	uint64_t addr = base;
	cs_insn *insn = NULL;
	size_t left = len;
	int rc = 0;
	csh h;

	memset(r, 0, sizeof(*r));
	if (target < base || target - base >= len)
		return -EINVAL;
	if (cs_open(CS_ARCH_X86, arch == XP_INSN_X86_32 ? CS_MODE_32 : CS_MODE_64, &h) != CS_ERR_OK)
		return -ENOTSUP;
	insn = cs_malloc(h);
	if (!insn) {
		rc = -ENOMEM;
		goto out;
	}
	/* invariant: addr is the address of p, an instruction boundary */
	while (addr < target) {
		uint64_t at = addr;

		if (!cs_disasm_iter(h, &p, &left, &addr, insn)) {
			r->verdict = XP_INSN_UNDECODABLE;
			r->stop = at;
			goto out;
		}
		r->decoded++;
		if (addr > target) {
			r->verdict = XP_INSN_MIDDLE;
			r->before = at;
			r->after = addr;
			goto out;
		}
	}
	r->verdict = XP_INSN_BOUNDARY;
	r->before = target;
out:
	if (insn)
		cs_free(insn, 1);
	cs_close(&h);
	return rc;
}

void xp_offset_info_free(struct xp_offset_info *i)
{
	free(i->function);
	memset(i, 0, sizeof(*i));
}

static int unverified(struct xp_offset_info *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int unverified(struct xp_offset_info *out, const char *fmt, ...)
{
	va_list ap;

	out->check = XP_OFFSET_UNVERIFIED;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	return 0;
}

int xp_insn_check_offset(struct xp_elf *e, uint64_t off, bool is_return,
			 struct xp_offset_info *out)
{
	const GElf_Phdr *seg = xp_elf_exec_segment(e, off);
	struct xp_sym_match fn;
	struct xp_insn_result r;
	enum xp_insn_arch arch;
	uint64_t va, tail, at;
	size_t len;
	uint8_t *buf = NULL;
	bool starts;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!seg)
		return unverified(out, "it is not inside an executable segment");
	va = seg->p_vaddr + (off - seg->p_offset);
	rc = xp_elf_func_at(e, va, &fn, &starts);
	if (rc == -ENOENT) {
		if (starts) {
			out->check = XP_OFFSET_FUNCTION_START;
			return 0;
		}
		return unverified(out, e->symtab.data ?
					       "it lies outside every function symbol" :
					       "no function symbol covers it, and the file has no .symtab");
	}
	if (rc)
		return rc;
	out->function = fn.name; /* owned by @out now */
	out->function_offset = seg->p_offset + (fn.value - seg->p_vaddr);
	if (fn.value < seg->p_vaddr)
		return unverified(out, "its function %s starts outside the segment holding it",
				  fn.name);
	/* xp_elf_read_va reads through the first PT_LOAD holding an address:
	 * it must be this segment (overlapping segments: a malformed file) */
	if (xp_elf_va_to_offset(e, fn.value, &at) || at != out->function_offset)
		return unverified(out, "segments overlap at its function %s", fn.name);
	if (starts) {
		out->check = XP_OFFSET_FUNCTION_START;
		return 0;
	}
	if (is_return) {
		out->check = XP_OFFSET_NOT_ENTRY;
		return 0;
	}
	if (e->e_machine == EM_X86_64 && e->elf_class == ELFCLASS64)
		arch = XP_INSN_X86_64;
	else if (e->e_machine == EM_386)
		arch = XP_INSN_X86_32;
	else
		return unverified(out, "this build decodes x86 code only (ELF machine %u)",
				  e->e_machine);
	if (va - fn.value > XP_INSN_MAX_DECODE)
		return unverified(out, "it lies 0x%llx bytes into %s, beyond the %u MiB decode bound",
				  (unsigned long long)(va - fn.value), fn.name,
				  XP_INSN_MAX_DECODE >> 20);
	/* the function's bytes up to one longest instruction past @va, in
	 * differences only (sizes and addresses are the file's: no sum may
	 * wrap); both tails are >= 1: the symbol and the segment hold @va */
	tail = fn.size - (va - fn.value);
	if (tail > XP_INSN_MAX_LEN)
		tail = XP_INSN_MAX_LEN;
	if (tail > seg->p_filesz - (va - seg->p_vaddr))
		tail = seg->p_filesz - (va - seg->p_vaddr);
	len = (size_t)(va - fn.value + tail);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	rc = xp_elf_read_va(e, fn.value, buf, len);
	if (rc) {
		rc = -EIO;
		goto out;
	}
	rc = xp_insn_boundary(arch, buf, len, fn.value, va, &r);
	if (rc == -ENOTSUP) {
		rc = unverified(out, "the Capstone x86 decoder is unavailable");
		goto out;
	}
	if (rc)
		goto out;
	switch (r.verdict) {
	case XP_INSN_BOUNDARY:
		out->check = XP_OFFSET_BOUNDARY;
		break;
	case XP_INSN_MIDDLE:
		out->check = XP_OFFSET_MID_INSN;
		out->before = seg->p_offset + (r.before - seg->p_vaddr);
		out->after = seg->p_offset + (r.after - seg->p_vaddr);
		break;
	case XP_INSN_UNDECODABLE:
		unverified(out, "Capstone cannot decode the instruction at file offset 0x%llx of %s",
			   (unsigned long long)(seg->p_offset + (r.stop - seg->p_vaddr)), fn.name);
		break;
	}
out:
	free(buf);
	return rc;
}
