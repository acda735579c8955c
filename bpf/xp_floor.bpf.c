/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * xp_floor.bpf.c - the benchmark floor (bench/bench_host.sh): programs
 * that do nothing, on the same attachments xp_live.bpf.c uses (uprobe and
 * uretprobe, raw sys_enter/sys_exit, USDT).  What an eBPF collector costs
 * beyond these is the collector's own; these are the kernel's price of the
 * attachment itself.  Not used by xprobe.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

SEC("uprobe")
int floor_uprobe(struct pt_regs *ctx)
{
	return 0;
}

SEC("raw_tp/sys_enter")
int floor_sys_enter(void *ctx)
{
	return 0;
}

SEC("raw_tp/sys_exit")
int floor_sys_exit(void *ctx)
{
	return 0;
}

SEC("usdt")
int floor_usdt(struct pt_regs *ctx)
{
	return 0;
}

/* Dual licensed; the kernel sees the GPL option. */
char LICENSE[] SEC("license") = "GPL";
