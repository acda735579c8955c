// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_insn_boundary.c - the instruction-boundary check of +0x uprobe
 * offsets (src/resolve/insn.h) on untrusted bytes: the code and the ELF
 * file are the target's.  The first input byte picks the mode:
 *
 *   even: the decoder on raw code.  Byte 1 bit 0 picks 32- or 64-bit
 *         code, bytes 2-3 (little endian) the target offset modulo the
 *         code length, the rest is the code.  The verdict's contract is
 *         checked: a boundary is the target, a middle brackets it with at
 *         most one longest instruction inside the buffer, an undecodable
 *         stop lies before it.
 *   odd:  the rest is an ELF file (written to a memfd, opened by path as
 *         the resolver does); offsets across every executable segment are
 *         checked as entry and return probes, and each verdict's fields
 *         are checked against the offset.
 *
 * Both modes also run the probe-site classifier (src/resolve/
 * probe_site.h): on raw code the kernel-rule classification of the first
 * instruction (a verdict in range, a length within the buffer and the
 * longest instruction, a NUL-terminated text); in ELF files the site check
 * with a suggestion, whose suggested offset must lie after the site and be
 * an emulated instruction.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resolve/insn.h"
#include "resolve/probe_site.h"
#include "resolve/xelf.h"

#define BASE 0x400000ull

static void classify(const uint8_t *code, size_t len, bool x86_64, uint64_t addr)
{
	struct xp_uprobe_insn in;

	memset(&in, 0xa5, sizeof(in));
	if (xp_uprobe_insn_classify(code, len, x86_64, addr, &in))
		return;
	if (in.handling > XP_UPROBE_UNKNOWN || !xp_uprobe_handling_name(in.handling))
		abort();
	if (in.handling != XP_UPROBE_UNKNOWN &&
	    (in.len == 0 || in.len > len || in.len > XP_INSN_MAX_LEN || !in.rule))
		abort();
	if (!memchr(in.text, 0, sizeof(in.text)))
		abort();
}

static void raw(const uint8_t *data, size_t size)
{
	struct xp_insn_result r;
	enum xp_insn_arch arch;
	uint64_t target;
	size_t len;

	if (size < 5)
		return;
	arch = (data[1] & 1) ? XP_INSN_X86_32 : XP_INSN_X86_64;
	len = size - 4;
	target = BASE + (((size_t)data[2] | (size_t)data[3] << 8) % len);
	if (xp_insn_boundary(arch, data + 4, len, BASE, target, &r))
		abort();
	switch (r.verdict) {
	case XP_INSN_BOUNDARY:
		if (r.before != target)
			abort();
		break;
	case XP_INSN_MIDDLE:
		if (!(r.before < target && target < r.after && r.after <= BASE + len &&
		      r.after - r.before <= XP_INSN_MAX_LEN && r.decoded >= 1))
			abort();
		break;
	case XP_INSN_UNDECODABLE:
		if (!(r.stop >= BASE && r.stop < target))
			abort();
		break;
	default:
		abort();
	}
	/* outside the buffer is refused, never read */
	if (xp_insn_boundary(arch, data + 4, len, BASE, BASE + len, &r) == 0)
		abort();
	classify(data + 4, len, arch == XP_INSN_X86_64, target);
}

static void check_offset(struct xp_elf *e, uint64_t off)
{
	struct xp_offset_info in;
	int ret;

	for (ret = 0; ret < 2; ret++) {
		if (xp_insn_check_offset(e, off, ret, &in) == 0) {
			switch (in.check) {
			case XP_OFFSET_MID_INSN:
				if (!(in.before < off && off < in.after &&
				      in.after - in.before <= XP_INSN_MAX_LEN && in.function &&
				      in.function_offset <= in.before))
					abort();
				break;
			case XP_OFFSET_NOT_ENTRY:
				if (!ret || !in.function || in.function_offset >= off)
					abort();
				break;
			case XP_OFFSET_BOUNDARY:
				if (ret || !in.function || in.function_offset >= off)
					abort();
				break;
			case XP_OFFSET_UNVERIFIED:
				if (!in.reason[0])
					abort();
				break;
			case XP_OFFSET_FUNCTION_START:
				break;
			default:
				abort();
			}
		}
		xp_offset_info_free(&in);
	}
}

static void check_site(const char *path, uint64_t off)
{
	struct xp_probe_site site;

	if (xp_probe_site_check(path, off, true, &site) == 0 && site.checked) {
		if (site.file_offset != off || site.insn.handling > XP_UPROBE_UNKNOWN)
			abort();
		if (site.has_suggestion &&
		    (site.suggested_offset <= off ||
		     (site.suggested.handling != XP_UPROBE_EMULATED &&
		      site.suggested.handling != XP_UPROBE_OPTIMIZED)))
			abort();
	}
	xp_probe_site_free(&site);
}

static void elf(const uint8_t *data, size_t size)
{
	struct xp_elf e;
	char path[64];
	size_t i;
	int fd = memfd_create("fuzz-insn", 0);

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (xp_elf_open(path, &e) == 0) {
		for (i = 0; i < e.phnum; i++) {
			const GElf_Phdr *p = &e.phdrs[i];
			uint64_t k, n, step;

			if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || !p->p_filesz)
				continue;
			/* every byte of a small segment, 64 spread over a large one
			 * (sizes and offsets are the input's: no k += step that wraps) */
			n = p->p_filesz <= 256 ? p->p_filesz : 64;
			step = p->p_filesz <= 256 ? 1 : p->p_filesz / 64;
			for (k = 0; k < n; k++)
				if (xp_elf_offset_executable(&e, p->p_offset + k * step)) {
					check_offset(&e, p->p_offset + k * step);
					check_site(path, p->p_offset + k * step);
				}
		}
		xp_elf_close(&e);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		elf(data + 1, size - 1);
	else
		raw(data, size);
	return 0;
}
