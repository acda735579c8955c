/* SPDX-License-Identifier: Apache-2.0 */
/*
 * monitor.h - the system monitor: a thread that samples the process's and
 * the machine's CPU time and memory from /proc every period, into two
 * preallocated arrays of sample records (cpu_util.pb, host_mem.pb).
 *
 * The arrays are allocated at start and never grow: the stop path (also
 * from a signal handler) writes them as they are.  When full, the oldest
 * samples are overwritten and counted as dropped.
 */
#ifndef XPL_MONITOR_H
#define XPL_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "xprobe/record.h"

struct xpl_rings;
struct xpl_monitor;

/* @rings: refreshed calibration point every period (NULL = none). */
int xpl_monitor_start(uint32_t period_ms, bool cpu, bool mem, struct xpl_rings *rings,
		      struct xpl_monitor **out);
/* Stop the thread (takes a last sample, joins).  Not signal-safe. */
void xpl_monitor_stop(struct xpl_monitor *m);
/* Ask the thread to stop without waiting (signal path). */
void xpl_monitor_stop_async(struct xpl_monitor *m);
/* Forget the rings (before they are destroyed). */
void xpl_monitor_forget_rings(struct xpl_monitor *m);
void xpl_monitor_free(struct xpl_monitor *m);

/* The samples, oldest first, as up to two contiguous pieces each. */
struct xpl_monitor_view {
	const void *p[2];
	size_t len[2]; /* bytes */
	uint64_t count; /* samples */
	uint64_t dropped; /* overwritten */
};
void xpl_monitor_view(const struct xpl_monitor *m, bool cpu, struct xpl_monitor_view *v);
uint32_t xpl_monitor_period(const struct xpl_monitor *m);

#endif /* XPL_MONITOR_H */
