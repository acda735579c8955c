/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_site.c - how the kernel handles the instruction under a uprobe
 * (probe_site.h states the rules and why they matter), and a nearby
 * instruction it emulates.
 *
 * The kernel analyses the probed instruction with its own decoder
 * (arch/x86/lib/insn.c) and decides in this order:
 *   1. uprobe_init_insn: a segment (26 2e 36 3e) or lock (f0) prefix, mov
 *      to %ss / pop %ss, or an OPCODE1 outside the good-instruction table
 *      (and, for two-byte opcodes, outside the two-byte table) is refused;
 *   2. can_optimize (6.18+, x86-64): 5 bytes, a 0x90 or 0f 1f /0 opcode,
 *      not crossing a page: rewritten to a call (still a nop to emulate);
 *   3. branch_setup_xol_ops: one of the kernel's nop encodings, any 0x90
 *      opcode, jmp rel8/rel32, call rel32, jcc rel8/rel32 -- emulated; a
 *      branch with a 0x66 prefix is refused;
 *   4. push_setup_xol_ops: push %reg (1 byte), or 41 push %r8-15 (2 bytes)
 *      -- emulated;
 *   5. everything else: single-stepped out of line.
 * OPCODE1 is the first byte after the legacy prefixes and REX (or after a
 * VEX/EVEX prefix, whose map is implied); for 0f-escaped opcodes it is
 * 0x0f, which the tables accept, so the two-byte table decides nothing on
 * today's tables -- it is mirrored anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "insn.h"
#include "probe_site.h"
#include "xelf.h"

const char *xp_uprobe_handling_name(enum xp_uprobe_handling h)
{
	switch (h) {
	case XP_UPROBE_EMULATED:
		return "emulated";
	case XP_UPROBE_OPTIMIZED:
		return "optimized";
	case XP_UPROBE_SINGLE_STEP:
		return "single_step";
	case XP_UPROBE_REFUSED:
		return "refused";
	case XP_UPROBE_UNKNOWN:
		break;
	}
	return "unknown";
}

/*
 * The kernel's good-instruction tables (arch/x86/kernel/uprobes.c), one
 * row of 16 opcodes per string, '1' = may be probed.
 */
static const char *const good64[16] = {
	"1111110011111101", "1111110011111100", "1111111011111110", "1111111011111110",
	"1111111111111111", "1111111111111111", "0001111111110000", "1111111111111111",
	"1101111111111111", "1111111111011111", "1111111111111111", "1111111111111111",
	"1111111111110000", "1111000111111111", "1111000011010000", "1011011111001111",
};
static const char *const good32[16] = {
	"1111111011111111", "1111111011111110", "1111111111111111", "1111111111111111",
	"1111111111111111", "1111111111111111", "1111111111110000", "1111111111111111",
	"1111111111111111", "1111111111111111", "1111111111111111", "1111111111111111",
	"1111111111110000", "1111111111111111", "1111000011110000", "1011011111001111",
};
static const char *const good2byte[16] = {
	"0011100000101111", "1111111111111111", "1111111111111111", "0111001011111111",
	"1111111111111111", "1111111111111111", "1111111111111111", "1111111100111111",
	"1111111111111111", "1111111111111111", "1111111111111101", "1111111111111111",
	"1111111111111111", "1111111111111111", "1111111111111111", "1111111111111111",
};

static bool good(const char *const *t, uint8_t op)
{
	return t[op >> 4][op & 15] == '1';
}

/* The kernel's nop encodings (asm/nops.h, x86-64), by length 1..8. */
static const uint8_t nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* The kernel decoder's view of one instruction. */
struct kview {
	bool p66, bad_prefix, other_prefix;
	uint8_t rex; /* 0 = none */
	uint8_t op1, op2; /* OPCODE1, OPCODE2 */
	unsigned nbytes; /* opcode bytes: 1, 2 or 3 */
	bool has_modrm;
	uint8_t modrm;
};

static void kernel_view(const uint8_t *b, unsigned len, bool x86_64, struct kview *k)
{
	unsigned i = 0;

	memset(k, 0, sizeof(*k));
	for (; i < len; i++) {
		uint8_t p = b[i];

		if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e || p == 0xf0)
			k->bad_prefix = true;
		else if (p == 0x66)
			k->p66 = true;
		else if (p == 0xf2 || p == 0xf3 || p == 0x64 || p == 0x65 || p == 0x67)
			k->other_prefix = true;
		else
			break;
	}
	if (x86_64 && i < len && (b[i] & 0xf0) == 0x40)
		k->rex = b[i++];
	/* VEX2 (c5), VEX3 (c4), EVEX (62): the opcode follows, its map implied */
	if (i < len && (b[i] == 0xc5 || b[i] == 0xc4 || b[i] == 0x62) &&
	    (x86_64 || (i + 1 < len && (b[i + 1] & 0xc0) == 0xc0))) {
		unsigned skip = b[i] == 0xc5 ? 2 : b[i] == 0xc4 ? 3 : 4;

		i += skip;
		k->op1 = i < len ? b[i] : 0;
		k->nbytes = 1;
		i++;
	} else if (i < len) {
		k->op1 = b[i++];
		k->nbytes = 1;
		if (k->op1 == 0x0f && i < len) {
			k->op2 = b[i++];
			k->nbytes = 2;
			if (k->op2 == 0x38 || k->op2 == 0x3a) {
				k->nbytes = 3;
				i++;
			}
		}
	}
	/* a ModRM byte follows for the opcodes the rules below look into */
	if (i < len && ((k->nbytes == 1 && (k->op1 == 0x8e || k->op1 == 0x8f)) ||
			(k->nbytes == 2 && k->op2 == 0x1f))) {
		k->has_modrm = true;
		k->modrm = b[i];
	}
}

static bool is_jcc(uint8_t op)
{
	return op >= 0x70 && op <= 0x7f;
}

/* The kernel's decision, steps 1-5 of the header comment. */
static void decide(const uint8_t *b, unsigned len, bool x86_64, uint64_t addr,
		   struct xp_uprobe_insn *out)
{
	struct kview k;
	uint8_t op;

	kernel_view(b, len, x86_64, &k);
	op = k.op1;
	/* 1. uprobe_init_insn */
	if (k.bad_prefix) {
		out->handling = XP_UPROBE_REFUSED;
		out->rule = "segment or lock prefix";
		return;
	}
	if ((k.nbytes == 1 && op == 0x17) ||
	    (k.nbytes == 1 && op == 0x8e && k.has_modrm && ((k.modrm >> 3) & 7) == 2)) {
		out->handling = XP_UPROBE_REFUSED;
		out->rule = "loads %ss (masks exceptions)";
		return;
	}
	if (!good(x86_64 ? good64 : good32, op) && !(k.nbytes == 2 && good(good2byte, k.op2))) {
		out->handling = XP_UPROBE_REFUSED;
		out->rule = "opcode the kernel does not probe";
		return;
	}
	/* 2. can_optimize */
	if (x86_64 && len == 5 &&
	    ((k.nbytes == 1 && op == 0x90) || (k.nbytes == 2 && op == 0x0f && k.op2 == 0x1f &&
					       k.has_modrm && ((k.modrm >> 3) & 7) == 0)) &&
	    4096 - (addr & 4095) >= 5) {
		out->handling = XP_UPROBE_OPTIMIZED;
		out->rule = "5-byte nop (rewritten into a call on 6.18+)";
		return;
	}
	/* 3. branch_setup_xol_ops */
	if (len <= 8 && memcmp(b, nops[len], len) == 0) {
		out->handling = XP_UPROBE_EMULATED;
		out->rule = "nop";
		return;
	}
	if (k.nbytes == 1 && op == 0x90) {
		out->handling = XP_UPROBE_EMULATED;
		out->rule = "nop (0x90 opcode)";
		return;
	}
	if ((k.nbytes == 1 && (op == 0xeb || op == 0xe9 || op == 0xe8 || is_jcc(op))) ||
	    (k.nbytes == 2 && op == 0x0f && is_jcc((uint8_t)(k.op2 - 0x10)))) {
		bool call = k.nbytes == 1 && op == 0xe8;
		bool jmp = k.nbytes == 1 && (op == 0xeb || op == 0xe9);

		if (k.p66) {
			out->handling = XP_UPROBE_REFUSED;
			out->rule = "branch with a 0x66 prefix";
			return;
		}
		out->handling = XP_UPROBE_EMULATED;
		out->rule = call ? "call rel32" : jmp ? "jmp rel" : "jcc rel";
		return;
	}
	/* 4. push_setup_xol_ops */
	if (k.nbytes == 1 && op >= 0x50 && op <= 0x57 &&
	    (len == 1 || (len == 2 && x86_64 && k.rex == 0x41))) {
		out->handling = XP_UPROBE_EMULATED;
		out->rule = "push reg";
		return;
	}
	/* 5. */
	out->handling = XP_UPROBE_SINGLE_STEP;
	out->rule = "single-stepped out of line";
}

/* One decoder for a classification run (cs_open is not free). */
struct dec {
	csh h;
	cs_insn *insn;
	bool x86_64;
};

static int dec_open(struct dec *d, bool x86_64)
{
	memset(d, 0, sizeof(*d));
	d->x86_64 = x86_64;
	if (cs_open(CS_ARCH_X86, x86_64 ? CS_MODE_64 : CS_MODE_32, &d->h) != CS_ERR_OK)
		return -ENOTSUP;
	cs_option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(d->h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT); /* Intel when not built in */
	d->insn = cs_malloc(d->h);
	if (!d->insn) {
		cs_close(&d->h);
		return -ENOMEM;
	}
	return 0;
}

static void dec_close(struct dec *d)
{
	if (d->insn)
		cs_free(d->insn, 1);
	cs_close(&d->h);
}

/* Decode and classify the instruction at @p (@left bytes); 0 or -EINVAL. */
static int dec_one(struct dec *d, const uint8_t *p, size_t left, uint64_t addr,
		   struct xp_uprobe_insn *out)
{
	const uint8_t *q = p;
	uint64_t a = addr;
	size_t l = left;

	memset(out, 0, sizeof(*out));
	out->handling = XP_UPROBE_UNKNOWN;
	out->rule = "undecodable";
	if (!cs_disasm_iter(d->h, &q, &l, &a, d->insn) || d->insn->size == 0 ||
	    d->insn->size > sizeof(out->bytes))
		return -EINVAL;
	out->len = d->insn->size;
	memcpy(out->bytes, p, out->len);
	snprintf(out->text, sizeof(out->text), "%s%s%s", d->insn->mnemonic,
		 d->insn->op_str[0] ? " " : "", d->insn->op_str);
	out->branch = cs_insn_group(d->h, d->insn, CS_GRP_JUMP) ||
		      cs_insn_group(d->h, d->insn, CS_GRP_CALL) ||
		      cs_insn_group(d->h, d->insn, CS_GRP_RET) ||
		      cs_insn_group(d->h, d->insn, CS_GRP_INT) ||
		      cs_insn_group(d->h, d->insn, CS_GRP_IRET);
	decide(p, out->len, d->x86_64, addr, out);
	return 0;
}

int xp_uprobe_insn_classify(const uint8_t *code, size_t len, bool x86_64, uint64_t addr,
			    struct xp_uprobe_insn *out)
{
	struct dec d;
	int rc;

	memset(out, 0, sizeof(*out));
	out->handling = XP_UPROBE_UNKNOWN;
	out->rule = "undecodable";
	if (!code || !len)
		return -EINVAL;
	rc = dec_open(&d, x86_64);
	if (rc)
		return rc;
	dec_one(&d, code, len, addr, out); /* undecodable: UNKNOWN, still 0 */
	dec_close(&d);
	return 0;
}

void xp_probe_site_free(struct xp_probe_site *s)
{
	free(s->function);
	memset(s, 0, sizeof(*s));
}

static int unchecked(struct xp_probe_site *out, const char *why)
{
	out->checked = false;
	snprintf(out->reason, sizeof(out->reason), "%s", why);
	return 0;
}

/*
 * The suggestion: from the probed instruction (at @va, @buf holding the
 * bytes from there to at most the scan bound), the first later one in
 * straight-line code the kernel emulates; insn.h's sweep from the
 * function's start must agree that it is an instruction boundary.
 */
static void suggest(struct xp_elf *e, struct dec *d, const GElf_Phdr *seg, const uint8_t *buf,
		    size_t n, uint64_t va, struct xp_probe_site *out)
{
	size_t at = out->insn.len;
	unsigned k;

	if (out->insn.branch)
		return; /* what follows a branch is not reached on every call */
	for (k = 0; k < XP_PROBE_SITE_SCAN_INSNS && at < n; k++) {
		struct xp_uprobe_insn x;
		uint64_t off = seg->p_offset + (va + at - seg->p_vaddr);

		if (dec_one(d, buf + at, n - at, off, &x))
			return;
		if (x.handling == XP_UPROBE_EMULATED || x.handling == XP_UPROBE_OPTIMIZED) {
			struct xp_offset_info oi;

			if (xp_insn_check_offset(e, off, false, &oi) == 0 &&
			    (oi.check == XP_OFFSET_BOUNDARY ||
			     oi.check == XP_OFFSET_FUNCTION_START)) {
				out->has_suggestion = true;
				out->suggested_offset = off;
				out->suggested = x;
			}
			xp_offset_info_free(&oi);
			return;
		}
		if (x.branch || x.handling == XP_UPROBE_REFUSED)
			return;
		at += x.len;
	}
}

int xp_probe_site_check(const char *path, uint64_t off, bool want_suggestion,
			struct xp_probe_site *out)
{
	uint8_t buf[XP_PROBE_SITE_SCAN_BYTES + XP_INSN_MAX_LEN];
	const GElf_Phdr *seg;
	struct xp_sym_match fn;
	struct xp_elf e;
	struct dec d;
	uint64_t va, avail;
	bool starts = false, x86_64;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->file_offset = off;
	rc = xp_elf_open(path, &e);
	if (rc)
		return unchecked(out, "the file cannot be read as ELF");
	if (e.e_machine == EM_X86_64 && e.elf_class == ELFCLASS64) {
		x86_64 = true;
	} else if (e.e_machine == EM_386) {
		x86_64 = false;
	} else {
		xp_elf_close(&e);
		return unchecked(out, "this build decodes x86 code only");
	}
	seg = xp_elf_exec_segment(&e, off);
	if (!seg) {
		xp_elf_close(&e);
		return unchecked(out, "the offset is not inside an executable segment");
	}
	va = seg->p_vaddr + (off - seg->p_offset);
	avail = seg->p_filesz - (off - seg->p_offset);
	memset(&fn, 0, sizeof(fn));
	rc = xp_elf_func_at(&e, va, &fn, &starts);
	if (rc == 0) {
		out->function = fn.name; /* owned by @out now */
		out->function_offset = seg->p_offset + (fn.value - seg->p_vaddr);
		/* never read past the function's end */
		if (fn.value + fn.size > va && fn.value + fn.size - va < avail)
			avail = fn.value + fn.size - va;
	} else if (rc != -ENOENT) {
		xp_elf_close(&e);
		return rc == -ENOMEM ? -ENOMEM : unchecked(out, "malformed symbol tables");
	}
	n = avail < sizeof(buf) ? (size_t)avail : sizeof(buf);
	if (n == 0 || xp_elf_read_va(&e, va, buf, n)) {
		xp_elf_close(&e);
		return unchecked(out, "the instruction's bytes cannot be read");
	}
	rc = dec_open(&d, x86_64);
	if (rc) {
		xp_elf_close(&e);
		return rc == -ENOMEM ? -ENOMEM :
				       unchecked(out, "the Capstone x86 decoder is unavailable");
	}
	if (dec_one(&d, buf, n, off, &out->insn)) {
		unchecked(out, "Capstone cannot decode the probed instruction");
		goto done;
	}
	out->checked = true;
	/* a suggestion needs the function: what lies beyond an unknown
	 * function's end may be another function */
	if (want_suggestion && out->insn.handling == XP_UPROBE_SINGLE_STEP && out->function)
		suggest(&e, &d, seg, buf, n, va, out);
done:
	dec_close(&d);
	xp_elf_close(&e);
	return 0;
}
