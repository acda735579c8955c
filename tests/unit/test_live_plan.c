/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_live_plan.c - the live collector below the CLI: ring sizing,
 * record decoding (layouts, malformed records, the capture bound), the
 * target filter, and one real capture of this test's own getppid calls
 * through raw sys_enter/sys_exit (as root): the eBPF source run by the
 * live loop (xp_live_run).  The stopping rules: test_live_rules.c.
 */
#include <errno.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../common/monotonic.h"
#include "live/live.h"
#include "testlib.h"
#include "xp_live.h"

static struct xp_live_endpoint ep_uprobe(void)
{
	struct xp_live_endpoint e = { 0 };

	e.kind = XP_LIVE_UPROBE;
	e.selector = "uprobe:/bin/x:f:entry";
	e.event_type = XP_EV_HOST_FUNCTION_ENTRY;
	e.probe_kind = XP_PROBE_UPROBE;
	e.binary_path = "/bin/x";
	e.symbol = "f";
	return e;
}

static struct xp_live_endpoint ep_sys(bool exit_, int nr)
{
	struct xp_live_endpoint e = { 0 };

	e.kind = exit_ ? XP_LIVE_SYS_EXIT : XP_LIVE_SYS_ENTER;
	e.selector = exit_ ? "syscall:getppid:exit" : "syscall:getppid:entry";
	e.syscall_nr = nr;
	e.event_type = exit_ ? XP_EV_SYSCALL_EXIT : XP_EV_SYSCALL_ENTRY;
	e.probe_kind = XP_PROBE_SYSCALL;
	e.symbol = "getppid";
	e.attr_key = "tracepoint_category";
	e.attr_value = "syscalls";
	return e;
}

static void test_ring_bytes(void)
{
	struct xp_live_endpoint u = ep_uprobe(), s[2] = { ep_sys(false, 9), ep_sys(true, 9) };

	uint64_t slot = 0;

	/* 32-byte uprobe slots, 80-byte syscall entry slots */
	CHECK_EQ_U64(xp_live_ring_bytes(1000, 0, &u, 1, &slot), 32768);
	CHECK_EQ_U64(slot, 32);
	CHECK_EQ_U64(xp_live_ring_bytes(1000, 0, s, 2, &slot), 128u << 10);
	CHECK_EQ_U64(slot, 80);
	CHECK_EQ_U64(xp_live_ring_bytes(8, 0, &u, 1, NULL), XP_LIVE_RING_MIN);
	CHECK_EQ_U64(xp_live_ring_bytes(128, 0, &u, 1, NULL), 4096);
	CHECK_EQ_U64(xp_live_ring_bytes(129, 0, &u, 1, NULL), 8192);
	/* duration captures: from max_events, bounded */
	CHECK_EQ_U64(xp_live_ring_bytes(100000, 0, &u, 1, NULL), 4u << 20);
	CHECK_EQ_U64(xp_live_ring_bytes(100000, 0, s, 2, NULL), 8u << 20);
	CHECK_EQ_U64(xp_live_ring_bytes(UINT64_MAX, 0, s, 2, NULL), XP_LIVE_RING_MAX);
	/* samples captures: 4096 records at least, 8 per sample per endpoint */
	CHECK_EQ_U64(xp_live_ring_bytes(100000, 100, &u, 1, NULL), 4096 * 32);
	CHECK_EQ_U64(xp_live_ring_bytes(100000, 100, s, 2, NULL), 512u << 10);
	CHECK_EQ_U64(xp_live_ring_bytes(100000, 1000, s, 2, NULL), 2u << 20);
	CHECK_EQ_U64(xp_live_ring_bytes(8, 100, &u, 1, NULL), XP_LIVE_RING_MIN);
	CHECK_EQ_U64(xp_live_ring_bytes(100000, UINT64_MAX, s, 2, NULL), 8u << 20);
}

static void test_decode(void)
{
	struct xp_live_endpoint ep[2] = { ep_sys(false, 110), ep_sys(true, 110) };
	struct xp_live_decoder d;
	struct xp_live_sys_enter en;
	struct xp_live_sys_exit ex;
	struct xp_capture c;
	const struct xp_event *e;
	int i;

	xp_capture_init(&c, 3);
	CHECK(xp_live_decoder_init(&d, &c, ep, 2, 4242) == 0);

	memset(&en, 0, sizeof(en));
	en.hdr.ts_ns = 1000;
	en.hdr.pid = 7;
	en.hdr.tid = 8;
	en.hdr.cpu = 1;
	en.hdr.kind = XP_REC_SYS_ENTER;
	en.hdr.endpoint = 0;
	for (i = 0; i < 6; i++)
		en.args[i] = (__u64)i * 10 + (i == 5 ? UINT64_MAX - 60 : 0);
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == 0);
	memset(&ex, 0, sizeof(ex));
	ex.hdr = en.hdr;
	ex.hdr.ts_ns = 2000;
	ex.hdr.kind = XP_REC_SYS_EXIT;
	ex.hdr.endpoint = 1;
	ex.ret = -14;
	CHECK(xp_live_decode(&d, &ex, sizeof(ex)) == 0);
	CHECK_EQ_U64(c.count, 2);

	e = &c.events[0];
	CHECK(e->source == XP_SRC_EBPF && e->event_type == XP_EV_SYSCALL_ENTRY);
	CHECK(e->clock_domain == XP_CLOCK_HOST_MONOTONIC);
	CHECK_EQ_U64(e->timestamp_ns, 1000);
	CHECK_EQ_U64(e->timestamp_raw, 1000);
	CHECK_EQ_U64(e->pid, 7);
	CHECK_EQ_U64(e->tid, 8);
	CHECK_EQ_U64(e->cpu, 1);
	CHECK(e->flags & XP_EVF_CPU);
	CHECK(e->flags & XP_EVF_START_TIME);
	CHECK_EQ_U64(e->process_start_time, 4242);
	CHECK(e->host.probe_kind == XP_PROBE_SYSCALL);
	CHECK_STR(xp_capture_str(&c, e->host.symbol), "getppid");
	CHECK(e->host.binary_path == 0);
	CHECK_EQ_U64(e->host.args_count, 6);
	for (i = 0; i < 6; i++) {
		const struct xp_arg *a = &c.args[e->host.args_first + i];
		char want[32];

		snprintf(want, sizeof(want), "%llu", (unsigned long long)en.args[i]);
		CHECK_EQ_U64(a->index, i);
		CHECK_STR(xp_capture_str(&c, a->abi_type), "u64");
		CHECK_STR(xp_capture_str(&c, a->value), want);
		CHECK(a->read_error == 0);
	}
	CHECK_EQ_U64(e->attrs_count, 1);
	CHECK_STR(xp_capture_str(&c, c.attrs[e->attrs_first].key), "tracepoint_category");
	CHECK_STR(xp_capture_str(&c, c.attrs[e->attrs_first].value), "\"syscalls\"");
	CHECK(!(e->host.flags & XP_HOSTF_RETURN_VALUE));

	e = &c.events[1];
	CHECK(e->event_type == XP_EV_SYSCALL_EXIT);
	CHECK(e->host.flags & XP_HOSTF_RETURN_VALUE);
	CHECK(e->host.return_value == -14);
	CHECK_EQ_U64(e->host.args_count, 0);
	/* events of one endpoint share one attribute entry */
	CHECK_EQ_U64(c.nattrs, 2);

	/* malformed: short, long, unknown kind, kind of another endpoint,
	 * endpoint outside the plan */
	CHECK(xp_live_decode(&d, &en, sizeof(en.hdr) - 1) == -EBADMSG);
	CHECK(xp_live_decode(&d, &en, sizeof(en) - 8) == -EBADMSG);
	en.hdr.kind = 99;
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == -EBADMSG);
	en.hdr.kind = XP_REC_SYS_ENTER;
	en.hdr.endpoint = 1;
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == -EBADMSG);
	en.hdr.endpoint = 2;
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == -EBADMSG);
	CHECK_EQ_U64(d.unknown, 5);
	CHECK_EQ_U64(c.count, 2);

	/* the bound: the third fits, the fourth is counted, not kept */
	en.hdr.endpoint = 0;
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == 0);
	CHECK(xp_live_decode(&d, &en, sizeof(en)) == -E2BIG);
	CHECK_EQ_U64(d.beyond, 1);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(d.per_endpoint[0], 3);
	CHECK_EQ_U64(d.per_endpoint[1], 1);
	xp_live_decoder_free(&d);
	xp_capture_free(&c);
}

static void test_decode_uprobe(void)
{
	struct xp_live_endpoint ep = ep_uprobe();
	struct xp_live_decoder d;
	struct xp_live_hdr h = { 0 };
	struct xp_capture c;

	ep.has_offset = true;
	ep.offset = 0x1234;
	xp_capture_init(&c, 10);
	CHECK(xp_live_decoder_init(&d, &c, &ep, 1, 1) == 0);
	h.ts_ns = 5;
	h.kind = XP_REC_UPROBE;
	CHECK(xp_live_decode(&d, &h, sizeof(h)) == 0);
	CHECK_STR(xp_capture_str(&c, c.events[0].host.binary_path), "/bin/x");
	CHECK(c.events[0].host.flags & XP_HOSTF_OFFSET);
	CHECK_EQ_U64(c.events[0].host.offset, 0x1234);
	CHECK_EQ_U64(c.events[0].attrs_count, 0);
	/* a uprobe endpoint refuses a syscall-sized record */
	{
		struct xp_live_sys_exit big;

		memset(&big, 0, sizeof(big));
		big.hdr = h;
		CHECK(xp_live_decode(&d, &big, sizeof(big)) == -EBADMSG);
	}
	xp_live_decoder_free(&d);
	xp_capture_free(&c);
}

static void test_stage_flush(void)
{
	struct xp_live_endpoint ep[2] = { ep_sys(false, 110), ep_sys(true, 110) };
	struct xp_live_decoder d;
	struct xp_live_sys_exit ex;
	struct xp_capture c;
	int i;

	xp_capture_init(&c, 5000);
	CHECK(xp_live_decoder_init(&d, &c, ep, 2, 1) == 0);
	memset(&ex, 0, sizeof(ex));
	ex.hdr.kind = XP_REC_SYS_EXIT;
	ex.hdr.endpoint = 1;
	for (i = 0; i < 5000; i++) {
		ex.hdr.ts_ns = (uint64_t)i;
		ex.ret = i;
		CHECK(xp_live_stage(&d, &ex, sizeof(ex)) == 0);
	}
	/* the bound counts staged records */
	CHECK(xp_live_stage(&d, &ex, sizeof(ex)) == -E2BIG);
	CHECK_EQ_U64(d.beyond, 1);
	CHECK(xp_live_stage(&d, &ex, 3) == -EBADMSG);
	CHECK_EQ_U64(c.count, 0);
	CHECK_EQ_U64(xp_live_held(&d), 5000);
	CHECK(xp_live_flush(&d) == 0);
	CHECK_EQ_U64(c.count, 5000);
	CHECK_EQ_U64(d.nstaged, 0);
	CHECK(c.events[4999].host.return_value == 4999);
	CHECK_EQ_U64(c.events[4999].timestamp_ns, 4999);
	CHECK_EQ_U64(d.per_endpoint[1], 5001);
	xp_live_decoder_free(&d);
	xp_capture_free(&c);
}

static void test_filter(void)
{
	struct xp_target t = { .pid = 1234, .start_time = 1 };
	struct xp_live_filter f;

	CHECK(xp_live_filter_init(&f, &t, true, 4, 5, 1234) == 0);
	CHECK_EQ_U64(f.global_tgid, 1234);
	CHECK(!f.use_pidns);
	CHECK_EQ_U64(f.event_pid, 1234);
	CHECK(xp_live_filter_init(&f, &t, false, 4, 5, 1) == 0);
	CHECK_EQ_U64(f.global_tgid, 1234);
	CHECK(f.use_pidns);
	CHECK_EQ_U64(f.pidns_dev, 4);
	CHECK_EQ_U64(f.pidns_ino, 5);
	CHECK_EQ_U64(f.ns_tgid, 1);
	CHECK_EQ_U64(f.event_pid, 1);
}

/* --- a real capture of our own getppid calls ---------------------------- */

#define CALLS 40

static volatile long worker_tid;

static void *worker(void *arg)
{
	struct timespec ts = { 0, 300 * 1000000L };
	int i;

	(void)arg;
	worker_tid = (long)syscall(SYS_gettid);
	nanosleep(&ts, NULL); /* the capture arms within a few ms */
	for (i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	return NULL;
}

static void test_live_capture(void)
{
	struct xp_live_endpoint ep[2] = { ep_sys(false, SYS_getppid), ep_sys(true, SYS_getppid) };
	struct xp_error err = { 0 };
	struct xp_live_source *src = NULL;
	struct xp_live_result res;
	struct xp_live_ebpf_opts eo;
	struct xp_live_run_opts o;
	struct xp_target self;
	struct xp_capture c;
	pthread_t th;
	size_t i, n_enter = 0, n_exit = 0;
	int rc;

	if (geteuid() != 0) {
		fprintf(stderr, "test_live_plan: live capture needs root\n");
		CHECK(geteuid() == 0);
		return;
	}
	CHECK(xp_target_identify((uint32_t)getpid(), &self, &err) == 0);
	memset(&eo, 0, sizeof(eo));
	memset(&o, 0, sizeof(o));
	eo.target = &self;
	CHECK(xp_live_filter_init(&eo.filter, &self, true, 0, 0, self.pid) == 0);
	eo.endpoints = ep;
	eo.nendpoints = 2;
	eo.end_ep = 1;
	eo.max_events = 1000;
	CHECK(xp_live_ebpf_source_new(&eo, &src, &err) == 0);
	o.target = &self;
	o.event_pid = eo.filter.event_pid;
	o.max_events = 1000;
	o.duration_ns = 900 * 1000000ull;
	o.deadline_ns = xpc_mono_ns() + 10ull * 1000000000ull;
	xp_capture_init(&c, o.max_events);
	pthread_create(&th, NULL, worker, NULL);
	rc = xp_live_run(&o, &src, 1, &c, &res, &err);
	pthread_join(th, NULL);
	if (rc)
		fprintf(stderr, "capture failed: %s\n", err.message);
	CHECK(rc == 0);
	CHECK(res.collected);
	CHECK(res.stop == XP_LIVE_STOP_DURATION);
	CHECK(res.t_armed_ns > res.t_start_ns);
	CHECK(res.t_armed_ns - res.t_start_ns < 300 * 1000000ull);
	CHECK_EQ_U64(src->st.dropped, 0);
	CHECK_EQ_U64(src->st.unknown, 0);
	CHECK_EQ_U64(xp_live_ebpf_ring_bytes(src), 128u << 10);
	for (i = 0; i < c.count; i++) {
		const struct xp_event *e = &c.events[i];

		CHECK_EQ_U64(e->sequence, i);
		CHECK(i == 0 || c.events[i - 1].timestamp_ns <= e->timestamp_ns);
		if (e->tid != (uint32_t)worker_tid)
			continue;
		CHECK_EQ_U64(e->pid, getpid());
		if (e->event_type == XP_EV_SYSCALL_ENTRY)
			n_enter++;
		else if (e->event_type == XP_EV_SYSCALL_EXIT && e->host.return_value == getppid())
			n_exit++;
	}
	CHECK_EQ_U64(n_enter, CALLS);
	CHECK_EQ_U64(n_exit, CALLS);
	CHECK_EQ_U64(src->st.observed, c.count);
	CHECK_EQ_U64(src->st.retained, c.count);
	CHECK_EQ_U64(src->st.end_records, xp_live_ebpf_endpoint_records(src, 1));
	CHECK_EQ_U64(src->st.end_records + xp_live_ebpf_endpoint_records(src, 0), c.count);
	xp_live_source_destroy(src);
	xp_error_clear(&err);
	xp_capture_free(&c);
}

int main(void)
{
	test_ring_bytes();
	test_decode();
	test_decode_uprobe();
	test_stage_flush();
	test_filter();
	test_live_capture();
	TEST_MAIN_END();
}
