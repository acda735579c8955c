/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_cost.h - what a uprobe + uretprobe pair costs on this machine, for
 * the UPROBE_SINGLE_STEP warning of validate, exact measurements and
 * --histogram (src/resolve/probe_site.h says why single-stepping costs).
 *
 * Method.  xprobe carries two functions of its own whose first instruction
 * the kernel single-steps (sub $8,%rsp) or emulates (push %rbp).  A child
 * process forked from xprobe calls each XP_PROBE_COST_CALLS times,
 * untraced, then traced by the live collector's own BPF programs
 * (bpf/xp_live.bpf.c: an entry uprobe and a uretprobe on each function),
 * which it loads and attaches itself, on its own PID: xprobe never holds
 * them.  The figures: the median entry-to-return
 * latency those programs read on each function (nothing runs between the
 * two but the probes: what a measurement of such a function reads beyond
 * its own time), and the CPU time each call gained (traced minus untraced,
 * the cost to the target).  The target is never involved.
 *
 * Once per boot.  The figures are cached in <runtime dir>/probe-cost
 * (/run/xprobe, a tmpfs emptied at boot; the file also names the boot id
 * and the kernel release, and is ignored under another).  The directory
 * must be root's with mode 0700 (created so when absent; a directory
 * owned by another user, or open to group or others, or a symbolic link,
 * is never used: the figures are then measured on the spot and not
 * written); the file must be a regular file of root's, mode 0600, in the
 * exact format with its checksum line, else it is ignored, measured
 * again and replaced.  Only root reads or writes the cache; another user
 * cannot load the BPF programs and gets no figure (reason says so).
 * XPROBE_TEST_RUNTIME_DIR (test-hook builds, an absolute path) replaces
 * the directory.
 */
#ifndef XP_COLLECT_PROBE_COST_H
#define XP_COLLECT_PROBE_COST_H

#include "../resolve/probe_site.h"

#define XP_PROBE_COST_CALLS 1000
#define XP_PROBE_COST_DIR "/run/xprobe"
#define XP_PROBE_COST_FILE "probe-cost"

/*
 * The cost of a probe pair here: from the cache, or measured now (about
 * 0.1-0.3 s, once per boot) and cached.  Never fails: out->available is
 * false with out->reason when no figure could be had.  Returns 0.
 * What --histogram and the exact modes put next to their latencies
 * (validate_checks.h: pass it as xp_validate_opts.probe_cost and the
 * UPROBE_SINGLE_STEP warnings carry it).
 */
int xp_live_probe_cost(struct xp_probe_cost *out);

#endif /* XP_COLLECT_PROBE_COST_H */
