/* SPDX-License-Identifier: Apache-2.0 */
/*
 * insn.h - is a `uprobe:<bin>:+0x<offset>` selector's offset the start of
 * an instruction?  A uprobe writes an int3 byte at the probed address; in
 * the middle of an instruction that byte replaces part of it (a `movabs`
 * immediate, a displacement) and the target silently computes wrong
 * results or crashes until the probe is removed.  The kernel cannot tell:
 * the bytes at any address may decode as some instruction.  So, like
 * bpftrace without --unsafe, xprobe decodes the containing function from
 * its start (Capstone, linear sweep) and refuses an offset that is not
 * an instruction boundary.
 *
 * Which function: the defined function symbol (.dynsym or .symtab) whose
 * [st_value, st_value + st_size) holds the offset's virtual address (the
 * file offset mapped through its executable PT_LOAD).  A function
 * symbol's own address is a boundary by definition.  What cannot be
 * checked -- no function symbol covers the offset (a stripped binary,
 * padding between functions), the offset lies more than
 * XP_INSN_MAX_DECODE bytes into its function, Capstone cannot decode an
 * instruction before it, or the machine has no decoder here -- is
 * "unverified": refused unless the caller opts in (--unsafe-offset), and
 * then reported with a warning.  A proven mid-instruction offset is
 * refused always; no flag makes a corrupting probe acceptable.
 *
 * Return probes: a uretprobe replaces the word at the stack pointer with
 * its trampoline, which is the return address only at a function's first
 * instruction.  A `+0x...:return` selector must therefore be the start of
 * a function symbol; inside a known function anywhere else it is refused
 * (XP_OFFSET_NOT_ENTRY), outside every function it is unverified.
 */
#ifndef XP_RESOLVE_INSN_H
#define XP_RESOLVE_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xp_elf;

/* Decode at most this many bytes of a function before the offset. */
#define XP_INSN_MAX_DECODE (1u << 20)
/* The longest x86 instruction. */
#define XP_INSN_MAX_LEN 15u

/* ---- the decoder, on a byte buffer (unit tests, fuzz_insn_boundary) ------- */

enum xp_insn_verdict {
	XP_INSN_BOUNDARY = 0, /* an instruction starts at the target */
	XP_INSN_MIDDLE, /* the target lies inside [before, after) */
	XP_INSN_UNDECODABLE, /* no instruction decodes at @stop (< target) */
};

enum xp_insn_arch {
	XP_INSN_X86_64 = 0,
	XP_INSN_X86_32,
};

struct xp_insn_result {
	enum xp_insn_verdict verdict;
	uint64_t before; /* MIDDLE: start of the instruction holding target;
			    BOUNDARY: target */
	uint64_t after; /* MIDDLE: start of the next instruction */
	uint64_t stop; /* UNDECODABLE: address of the bytes that failed */
	uint64_t decoded; /* instructions decoded */
};

/*
 * Decode @code (@len bytes, loaded at address @base) from its first byte
 * until an instruction starts at or extends past @target; @target must be
 * in [base, base + len).  An instruction that would run past @len is
 * undecodable (the caller passes the function's bytes, at least
 * XP_INSN_MAX_LEN past @target where the function has them).  Returns 0,
 * -EINVAL (@target outside the buffer), -ENOMEM or -ENOTSUP (Capstone
 * would not open).
 */
int xp_insn_boundary(enum xp_insn_arch arch, const uint8_t *code, size_t len, uint64_t base,
		     uint64_t target, struct xp_insn_result *r);

/* ---- the check of a +0x selector against its ELF file -------------------- */

enum xp_offset_check {
	XP_OFFSET_NOT_CHECKED = 0, /* symbol selectors: boundary by definition */
	XP_OFFSET_BOUNDARY, /* decoded: an instruction starts here */
	XP_OFFSET_FUNCTION_START, /* a function symbol starts here */
	XP_OFFSET_MID_INSN, /* inside an instruction: refused */
	XP_OFFSET_NOT_ENTRY, /* a return probe not at a function start: refused */
	XP_OFFSET_UNVERIFIED, /* cannot be checked: needs --unsafe-offset */
};

struct xp_offset_info {
	enum xp_offset_check check;
	char *function; /* the function holding the offset (owned), or NULL */
	uint64_t function_offset; /* file offset of its first byte */
	uint64_t before, after; /* MID_INSN: file offsets of the nearest boundaries */
	char reason[192]; /* UNVERIFIED: why, for messages */
};

/*
 * Check file offset @off (inside an executable PT_LOAD of @e) for a uprobe
 * (@is_return: a uretprobe).  Fills @out (free with xp_offset_info_free
 * whatever the return).  Returns 0 -- the verdict is in out->check -- or -ENOMEM, -EIO (the
 * file's bytes could not be read), -EINVAL (malformed symbol tables).
 */
int xp_insn_check_offset(struct xp_elf *e, uint64_t off, bool is_return,
			 struct xp_offset_info *out);
void xp_offset_info_free(struct xp_offset_info *i);

/* Refused whatever the flags say (MID_INSN, NOT_ENTRY). */
static inline bool xp_offset_refused(const struct xp_offset_info *i)
{
	return i->check == XP_OFFSET_MID_INSN || i->check == XP_OFFSET_NOT_ENTRY;
}

#endif /* XP_RESOLVE_INSN_H */
