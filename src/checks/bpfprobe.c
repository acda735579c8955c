/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpfprobe.c - eBPF feasibility probes through raw bpf(2) (bpfprobe.h).
 * The instructions are written out by hand: the uapi header has the
 * struct but not the kernel's BPF_* instruction macros.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfprobe.h"

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void step_fail(struct xp_bpf_step *s, int err, const char *what)
{
	s->tried = true;
	s->err = err;
	snprintf(s->detail, sizeof(s->detail), "%s failed: %s", what, strerror(err));
}

static void step_ok(struct xp_bpf_step *s, const char *what)
{
	s->tried = true;
	s->err = 0;
	snprintf(s->detail, sizeof(s->detail), "%s", what);
}

static int map_create(uint32_t type, uint32_t ksz, uint32_t vsz, uint32_t n, struct xp_bpf_step *s)
{
	union bpf_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ksz;
	a.value_size = vsz;
	a.max_entries = n;
	fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		step_fail(s, errno, "BPF_MAP_CREATE");
		return -1;
	}
	step_ok(s,
		type == BPF_MAP_TYPE_HASH ? "created a BPF hash map" : "created a BPF array map");
	return (int)fd;
}

static int prog_load(const struct bpf_insn *insns, size_t n, struct xp_bpf_step *s)
{
	static const char license[] = "GPL";
	char log[4096];
	union bpf_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)license;
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0) {
		step_ok(s, "loaded a raw tracepoint program");
		return (int)fd;
	}
	step_fail(s, errno, "BPF_PROG_LOAD");
	if (errno == EACCES || errno == EINVAL) {
		/* ask the verifier why */
		log[0] = '\0';
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = sizeof(log);
		a.log_level = 1;
		if (sys_bpf(BPF_PROG_LOAD, &a) < 0 && log[0]) {
			char *nl = strchr(log, '\n');

			if (nl)
				*nl = '\0';
			snprintf(s->detail, sizeof(s->detail), "BPF_PROG_LOAD failed: %s: %.180s",
				 strerror(s->err), log);
		}
	}
	return -1;
}

#define INSN(c, d, sr, o, i)                                                         \
	{                                                                            \
		.code = (c), .dst_reg = (d), .src_reg = (sr), .off = (o), .imm = (i) \
	}

bool xp_bpf_probe_basic(struct xp_bpf_probe *out)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int mfd, pfd;

	memset(out, 0, sizeof(*out));
	mfd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, &out->map_create);
	pfd = prog_load(insns, sizeof(insns) / sizeof(insns[0]), &out->prog_load);
	if (mfd >= 0)
		close(mfd);
	if (pfd >= 0)
		close(pfd);
	return mfd >= 0 && pfd >= 0;
}

bool xp_bpf_probe_aggregate(unsigned max_entries, struct xp_bpf_probe *out)
{
	union bpf_attr a;
	int mfd, pfd;
	long lfd;

	memset(out, 0, sizeof(*out));
	mfd = map_create(BPF_MAP_TYPE_HASH, 4, 8, max_entries ? max_entries : 1, &out->map_create);
	if (mfd < 0)
		return false;
	{
		const struct bpf_insn insns[] = {
			/* *(u32 *)(r10 - 4) = 0 */
			INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
			/* r2 = r10 - 4 */
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
			/* r1 = map (ld_imm64, two slots) */
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, mfd),
			INSN(0, 0, 0, 0, 0),
			/* bpf_map_lookup_elem(r1, r2) */
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		pfd = prog_load(insns, sizeof(insns) / sizeof(insns[0]), &out->prog_load);
	}
	if (pfd < 0) {
		close(mfd);
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uint64_t)(uintptr_t) "sys_enter";
	a.raw_tracepoint.prog_fd = (uint32_t)pfd;
	lfd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	if (lfd < 0) {
		step_fail(&out->attach, errno, "BPF_RAW_TRACEPOINT_OPEN sys_enter");
	} else {
		step_ok(&out->attach,
			"attached and detached a raw tracepoint program on sys_enter");
		close((int)lfd);
	}
	close(pfd);
	close(mfd);
	return lfd >= 0;
}
