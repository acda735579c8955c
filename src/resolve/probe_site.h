/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_site.h - what a uprobe costs where it sits: does the kernel
 * emulate the probed instruction, or copy it to the XOL area and
 * single-step it out of line?
 *
 * A uprobe hit is an int3 trap; then the kernel must run the instruction
 * the int3 replaced.  arch/x86/kernel/uprobes.c (Linux 6.x) emulates a few
 * kinds in the trap handler -- push of a register (50-57, and 41 50-57),
 * the kernel's nop encodings and any 0x90 opcode, jmp rel8/rel32, call
 * rel32, jcc rel8/rel32 (a 0x66 prefix on a branch is refused) -- and
 * since 6.18 rewrites a 5-byte nop into a call to a trampoline that enters
 * the kernel by the uprobe syscall (no trap at all).  Every other
 * instruction is copied to a per-process XOL page and single-stepped: the
 * thread returns to user space with TF set, traps again (#DB), and the
 * kernel fixes the registers up.  On a VM that is the difference between
 * about 1 us and about 9 us per probe hit (docs/live-measurement.md,
 * "Probe cost"), and it falls inside every latency measured from such an
 * entry probe.  The kernel refuses outright what it cannot handle:
 * segment (es/cs/ss/ds) and lock prefixes, the opcodes its
 * good-instruction tables exclude, mov to %ss.
 *
 * The rules below are the kernel's, mirrored from its analysis
 * (uprobe_init_insn, can_optimize, branch_setup_xol_ops,
 * push_setup_xol_ops, in that order) on the kernel decoder's view of the
 * instruction: legacy prefixes, REX, VEX/EVEX, then OPCODE1 (the byte after
 * them; 0x0f for two-byte opcodes) and OPCODE2.  Capstone gives the
 * length, the validity and the text.  A return probe (uretprobe) is a
 * uprobe at the function's first instruction plus a return trampoline, so
 * its site is that first instruction too.
 *
 * Untrusted input: the bytes are the target's file; every read is bounded
 * by the segment's file image and the function symbol's size.
 */
#ifndef XP_RESOLVE_PROBE_SITE_H
#define XP_RESOLVE_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xp_uprobe_handling {
	XP_UPROBE_EMULATED = 0, /* emulated in the trap handler */
	XP_UPROBE_OPTIMIZED, /* a 5-byte nop: emulated, and on 6.18+ x86-64
				   rewritten into a call (no trap) */
	XP_UPROBE_SINGLE_STEP, /* copied out of line and single-stepped */
	XP_UPROBE_REFUSED, /* the kernel will not probe it */
	XP_UPROBE_UNKNOWN, /* undecodable, or no decoder */
};
/* "emulated", "optimized", "single_step", "refused", "unknown". */
const char *xp_uprobe_handling_name(enum xp_uprobe_handling h);

struct xp_uprobe_insn {
	enum xp_uprobe_handling handling;
	const char *rule; /* static: which kernel rule decided ("push reg", ...) */
	unsigned len;
	uint8_t bytes[15];
	char text[96]; /* AT&T syntax, "mov %fs:0x28, %rax" */
	bool branch; /* a control transfer (jmp, jcc, call, ret, int ...) */
};

/*
 * Classify the instruction at the start of @code (@len bytes available,
 * at file offset or address @addr: only its position within a 4 KiB page
 * matters, for the 5-byte nop rewrite).  @x86_64 picks the kernel's 64-bit
 * tables.  Returns 0 (out->handling says, XP_UPROBE_UNKNOWN when the bytes
 * do not decode), -ENOTSUP (no Capstone x86 decoder), -EINVAL.
 */
int xp_uprobe_insn_classify(const uint8_t *code, size_t len, bool x86_64, uint64_t addr,
			    struct xp_uprobe_insn *out);

/* Instructions after the probed one the suggestion looks at, and bytes. */
#define XP_PROBE_SITE_SCAN_INSNS 8
#define XP_PROBE_SITE_SCAN_BYTES 48

struct xp_probe_site {
	bool checked; /* false: see reason */
	char reason[160];
	uint64_t file_offset; /* the probed instruction */
	struct xp_uprobe_insn insn;
	char *function; /* the function holding it (owned), or NULL */
	uint64_t function_offset;
	/*
	 * Entry probes whose instruction is single-stepped: the first
	 * instruction after it, in straight-line code within the function's
	 * first XP_PROBE_SITE_SCAN_* instructions and bytes, that the kernel
	 * emulates -- verified an instruction boundary by insn.h's check
	 * (a linear sweep from the function's start).
	 */
	bool has_suggestion;
	uint64_t suggested_offset;
	struct xp_uprobe_insn suggested;
};

/*
 * Check the uprobe site at file offset @off of the ELF file @path (the
 * path xprobe can open).  @suggest: look for an emulated instruction after
 * it (entry probes).  Returns 0 -- out->checked false with a reason when
 * the site cannot be read or decoded -- or -ENOMEM.  Free with
 * xp_probe_site_free whatever the return.
 */
int xp_probe_site_check(const char *path, uint64_t off, bool suggest, struct xp_probe_site *out);
void xp_probe_site_free(struct xp_probe_site *s);

/*
 * What a probe pair costs on this machine (src/live/probe_cost.c
 * measures it; defined here so validate's checks can carry it without
 * depending on the collector).  All figures are nanoseconds.
 */
struct xp_probe_cost {
	bool available; /* the figures below were measured */
	char reason[192]; /* when not: why */
	uint64_t single_step_pair_ns; /* median latency a uprobe+uretprobe pair
					 reads on an empty function whose first
					 instruction is single-stepped */
	uint64_t emulated_pair_ns; /* the same, first instruction emulated */
	uint64_t single_step_added_ns; /* what such a pair adds to each call
					  (traced minus untraced time per call) */
	uint64_t emulated_added_ns;
	uint64_t calls; /* calls measured per function */
	uint64_t calibrated_at; /* CLOCK_REALTIME seconds */
	char source[16]; /* "measured" or "cache" */
	char cache[320]; /* the cache file and what happened to it */
	char method[320];
};

#endif /* XP_RESOLVE_PROBE_SITE_H */
