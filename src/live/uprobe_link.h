/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uprobe_link.h - how the CLI's BPF objects attach their uprobes: which
 * link kind the running kernel offers (probed once, cached), and the
 * kernel's uprobe_multi link created through bpf(BPF_LINK_CREATE), for
 * every libbpf user that attaches uprobes (live_bpf.c, src/inventory's
 * latency_histogram.c).
 *
 * Why not one perf-event link per probe: since Linux 6.13 the kernel
 * waits an RCU tasks-trace grace period when it unregisters a perf-event
 * uprobe, one probe after the other, so a pair of them kept `measure
 * --samples 1` about 220 ms in teardown.  A uprobe_multi link (6.6+)
 * registers any number of offsets of one binary and waits once when it
 * goes; a session link (BPF_TRACE_UPROBE_SESSION, 6.13+) is a
 * uprobe_multi link whose one program runs at the entry and at the
 * return of each offset, so an entry and a return of one binary are one
 * link (docs/live-measurement.md, "Attaching").
 *
 * The kinds, best first:
 *   XP_UPROBE_SESSION  one link per binary (entry and return together)
 *   XP_UPROBE_MULTI    one link per binary and direction
 *   XP_UPROBE_PERF     one perf-event link per probe (libbpf's attach)
 * A program must be loaded with the expected attach type of the link it
 * will get (xp_uprobe_attach_type), so the kind is chosen before load.
 *
 * Test-hook builds read XPROBE_TEST_UPROBE_LINK ("perf", "multi"): the
 * kind chosen is never better than it names, so the fallbacks run on a
 * kernel that has everything (docs/environment.md).
 */
#ifndef XP_LIVE_UPROBE_LINK_H
#define XP_LIVE_UPROBE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xp_uprobe_kind {
	XP_UPROBE_PERF = 0,
	XP_UPROBE_MULTI = 1,
	XP_UPROBE_SESSION = 2,
};

/* What the kernel offers (probed on first use, then cached): the best kind
 * it accepts, whatever the test hook says. */
enum xp_uprobe_kind xp_uprobe_kernel_kind(void);

/* The kind to use: the kernel's, lowered by XPROBE_TEST_UPROBE_LINK. */
enum xp_uprobe_kind xp_uprobe_kind(void);

/*
 * The kind for target @pid (0: any): xp_uprobe_kind(), but perf-event
 * links when the target's thread-group leader is a zombie -- a
 * uprobe_multi link's pid must be a live process's, while a perf-event
 * uprobe takes one of its live threads (xp_proc_attach_pid).
 */
enum xp_uprobe_kind xp_uprobe_kind_for(uint32_t pid);

/* "perf_event", "uprobe_multi", "uprobe_session" */
const char *xp_uprobe_kind_name(enum xp_uprobe_kind k);

/* The expected attach type a program needs for links of @k (0 for perf). */
int xp_uprobe_attach_type(enum xp_uprobe_kind k);

/* One link: @cnt offsets of the file @path (its absolute access path). */
struct xp_uprobe_multi {
	const char *path;
	const uint64_t *offsets;	 /* file offsets */
	const uint64_t *ref_ctr_offsets; /* NULL, or a semaphore per offset (0: none) */
	const uint64_t *cookies;	 /* NULL, or bpf_get_attach_cookie per offset */
	uint32_t cnt;
	bool retprobe;	  /* XP_UPROBE_MULTI only: the returns */
	bool session;	  /* a session link (the program runs at entry and return) */
	uint32_t pid;	  /* the process whose memory gets the breakpoints */
};

/* Create the link for @prog_fd.  Returns its file descriptor, or -errno. */
int xp_uprobe_multi_attach(int prog_fd, const struct xp_uprobe_multi *m);

/*
 * Close @n uprobe_multi links at once: each waits a grace period in the
 * kernel, so each gets its own thread (up to XP_UPROBE_CLOSE_MAX) and the
 * waits overlap (measured on 6.18: two links 81 ms one after the other,
 * 40 ms at once).  Every fds[i] becomes -1.  Returns 0 or the first
 * -errno of a close.
 */
#define XP_UPROBE_CLOSE_MAX 8
int xp_uprobe_links_close(int *fds, size_t n);

/*
 * Start, on a thread of its own, what makes the first uprobe of a
 * measurement slow: the kernel's first uprobe registration after a quiet
 * spell waits an RCU grace period (the writer side of its mmap-duplication
 * lock; 5-19 ms measured on 6.18), and registrations within a grace
 * period of another do not.  The thread registers one uprobe_multi probe
 * in this process's own executable, on a function nothing calls
 * (xp_uprobe_warm_target), while the caller validates and loads; the
 * measurement's own links then register at once.  The warm link stays
 * open to the end and goes with the others (link_release.h).  Nothing
 * happens where the kind in use is
 * perf-event links.  Call once, early; idempotent.
 */
void xp_uprobe_warm_start(void);
/* Wait for the warm-up thread (before a fork).  Its link stays open with
 * this process's others (link_release.h). */
void xp_uprobe_warm_join(void);

#endif /* XP_LIVE_UPROBE_LINK_H */
