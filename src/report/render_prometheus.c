/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_prometheus.c - `measure --histogram --metrics-out PATH.prom`: the
 * capture's latency distribution in the Prometheus text exposition format
 * (version 0.0.4), as node_exporter's textfile collector reads a file
 * (docs/fleet.md).
 *
 * One histogram family per measurement, xprobe_latency_seconds, its
 * series labelled with the target (pid, start_time, comm, exe), the
 * selectors (from, to) and --name (measurement), and with --by a second
 * family, xprobe_latency_by_group_seconds, one series per group (the
 * label group; the same labels besides).  Both are cumulative since the
 * capture armed, as Prometheus counters are.  Buckets: our log-linear
 * buckets merged at powers of two, 2^0 .. 2^42 ns (43 bounds and +Inf,
 * under the 64 a scrape should carry), every bound written every time so
 * that the series never change; le in seconds.  A bucket's values lie in
 * [lo, hi) with hi a power of two at most le, so a value of exactly 2^k ns
 * counts from the bound above (1 ns: below any latency this measures).
 * Beside them, gauges of the window (xprobe_capture_window_seconds) and
 * counters of the pairs the kernel could not form
 * (xprobe_unpaired_total{kind}).
 */
#include <inttypes.h>
#include <string.h>

#include "../../common/buf.h"
#include "render_histogram.h"

#define PROM_POW2_MAX 42

/* A label value, escaped (\\, \", \n) and quoted. */
static void label(struct xpc_buf *b, const char *key, const char *v, bool first)
{
	const char *p;

	xpc_buf_printf(b, "%s%s=\"", first ? "" : ",", key);
	for (p = v ? v : ""; *p; p++) {
		if (*p == '\\' || *p == '"')
			xpc_buf_putc(b, '\\');
		if (*p == '\n') {
			xpc_buf_puts(b, "\\n");
			continue;
		}
		xpc_buf_putc(b, *p);
	}
	xpc_buf_putc(b, '"');
}

static void labels(struct xpc_buf *b, const struct xp_prom_view *v)
{
	char n[32];

	snprintf(n, sizeof(n), "%u", v->pid);
	label(b, "pid", n, true);
	snprintf(n, sizeof(n), "%" PRIu64, v->process_start_time);
	label(b, "start_time", n, false);
	label(b, "comm", v->comm, false);
	label(b, "exe", v->exe, false);
	label(b, "from", v->start_selector, false);
	label(b, "to", v->end_selector, false);
	label(b, "measurement", v->name, false);
}

/* One histogram's series: buckets, sum, count. */
static void series(struct xpc_buf *b, const char *family, const struct xp_prom_view *v,
		   const char *group, const struct xp_inv_lh_dist *h)
{
	uint64_t cum = 0, lo, hi;
	uint32_t i = 0;
	int k;

	for (k = 0; k <= PROM_POW2_MAX; k++) {
		uint64_t bound = 1ull << k;

		for (; i < XP_LH_BUCKETS; i++) {
			xp_inv_lh_bucket_bounds(i, &lo, &hi);
			if (hi > bound)
				break;
			cum += h->buckets[i];
		}
		xpc_buf_printf(b, "%s_bucket{", family);
		labels(b, v);
		if (group)
			label(b, "group", group, false);
		xpc_buf_printf(b, ",le=\"%.9g\"} %" PRIu64 "\n", (double)bound * 1e-9, cum);
	}
	xpc_buf_printf(b, "%s_bucket{", family);
	labels(b, v);
	if (group)
		label(b, "group", group, false);
	xpc_buf_printf(b, ",le=\"+Inf\"} %" PRIu64 "\n", h->count);
	xpc_buf_printf(b, "%s_sum{", family);
	labels(b, v);
	if (group)
		label(b, "group", group, false);
	xpc_buf_printf(b, "} %.9f\n", (double)h->sum_ns * 1e-9);
	xpc_buf_printf(b, "%s_count{", family);
	labels(b, v);
	if (group)
		label(b, "group", group, false);
	xpc_buf_printf(b, "} %" PRIu64 "\n", h->count);
}

static void counter(struct xpc_buf *b, const struct xp_prom_view *v, const char *kind,
		    uint64_t n)
{
	xpc_buf_puts(b, "xprobe_unpaired_total{");
	labels(b, v);
	label(b, "kind", kind, false);
	xpc_buf_printf(b, "} %" PRIu64 "\n", n);
}

void xp_render_prometheus(struct xpc_buf *b, const struct xp_prom_view *v)
{
	const struct xp_inv_lh_result *r = v->result;
	char group[160];
	size_t i;

	xpc_buf_puts(b, "# HELP xprobe_latency_seconds Latency of the pairs xprobe measure "
			"--histogram formed in the kernel (from -> to), since the capture armed.\n"
			"# TYPE xprobe_latency_seconds histogram\n");
	series(b, "xprobe_latency_seconds", v, NULL, &r->total);
	if (r->ngroups) {
		xpc_buf_printf(b, "# HELP xprobe_latency_by_group_seconds The same pairs by --by %s "
				  "(the group label).\n"
				  "# TYPE xprobe_latency_by_group_seconds histogram\n",
			       xp_inv_lh_by_name(r->group_by));
		for (i = 0; i < r->ngroups; i++) {
			xp_render_histogram_group_label(group, sizeof(group), r->group_by, v->start,
							&r->groups[i]);
			series(b, "xprobe_latency_by_group_seconds", v, group, &r->groups[i].h);
		}
	}
	xpc_buf_puts(b, "# HELP xprobe_capture_window_seconds How long the capture has been armed.\n"
			"# TYPE xprobe_capture_window_seconds gauge\n"
			"xprobe_capture_window_seconds{");
	labels(b, v);
	xpc_buf_printf(b, "} %.3f\n", (double)v->window_ns * 1e-9);
	xpc_buf_puts(b, "# HELP xprobe_unpaired_total Starts and ends the kernel could not pair, "
			"by kind.\n# TYPE xprobe_unpaired_total counter\n");
	counter(b, v, "superseded_start", r->c.superseded);
	counter(b, v, "unpaired_end", r->c.unpaired_ends);
	counter(b, v, "inflight_overflow", r->c.inflight_overflow);
	counter(b, v, "depth_overflow", r->c.depth_overflow);
	counter(b, v, "thread_exit_open", r->c.thread_exit_open);
}
