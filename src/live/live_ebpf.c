/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_ebpf.c - the eBPF collectors as a live source (live_source.h): the
 * host endpoints of a measurement, their BPF object and ring, and the
 * ring records turned into events of the measurement's capture.
 *
 *   prepare  decoder templates interned into the capture; open and load
 *            the object (ring sized by xp_live_ring_bytes), attach one
 *            link per endpoint -- an attach failure of a target that went
 *            away is TARGET_EXITED, the better explanation
 *   arm      one store into the object's .bss
 *   poll     consume the ring: each record checked and staged (live.h);
 *            the drop counters read at most every XP_LIVE_PROGRESS_NS, so
 *            a progress line shows losses as they happen (stop reads
 *            them again: the final count and earliest timestamp)
 *   flush    staged records -> events
 *   stop     disarm (the capture is final there), then, when the records
 *            are wanted, consume what is left and read the drop counters
 *            (count and earliest timestamp); staged records become events
 *            even after a failure, so the artifact gets what was captured.
 *            The links stay: detaching waits for the kernel (a grace
 *            period per link), so it comes after the result is written --
 *            the caller takes the object (xp_live_ebpf_take_obj) and
 *            destroys it then, or the source's destroy does.  A program
 *            that passed the armed test just before the flip may commit
 *            its record after the final read: it fired at the stop, and
 *            no capture has it
 *
 * Why a timer and not epoll on the ring: records are submitted with
 * BPF_RB_NO_WAKEUP, which never signals the ring's epoll
 * (docs/live-measurement.md, "Arming, consuming, stopping"); a wakeup per
 * record would cost the target microseconds.  The loop's period (2 ms)
 * bounds the ring occupancy to what a target emits in 2 ms, and a poll
 * that finds the ring a quarter full marks the source busy so the loop
 * polls again after 250 us until the burst passes.
 *
 * Links and maps are file descriptors of this process, so even SIGKILL
 * cannot leave a probe behind.  The target is never stopped, traced or
 * written to: uprobe breakpoints are the kernel's, removed with their
 * link.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"

struct ebpf_source {
	struct xp_live_source s; /* first: the generic part */
	struct xp_live_ebpf_opts o;
	struct xp_live_decoder dec;
	bool dec_ready;
	struct xp_live_obj *b;
	uint64_t ring_bytes;
	uint64_t busy_records;
	bool nomem;
	uint64_t drops_read_ns; /* when poll last read the drop counters */
	uint64_t per_endpoint[XP_LIVE_MAX_ENDPOINTS];
};

static struct ebpf_source *of(struct xp_live_source *s)
{
	return (struct ebpf_source *)s;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct ebpf_source *e = ctx;

	if (xp_live_stage(&e->dec, data, size) == -ENOMEM)
		e->nomem = true;
	return 0;
}

static uint64_t decoded_total(const struct xp_live_decoder *d)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < d->ntmpl; i++)
		n += d->per_endpoint[i];
	return n;
}

/* The counters the loop reads after every call. */
static void sync_stats(struct ebpf_source *e)
{
	struct xp_live_source_stats *st = &e->s.st;

	e->s.staged = e->dec.nstaged;
	st->end_records = e->o.end_ep >= 0 ? e->dec.per_endpoint[e->o.end_ep] : 0;
	st->beyond = e->dec.beyond;
	st->unknown = e->dec.unknown;
	st->observed = decoded_total(&e->dec) + st->unknown + st->dropped;
}

static int nomem(struct xp_error *err)
{
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "out of memory while decoding the capture");
}

static int ebpf_prepare(struct xp_live_source *s, struct xp_capture *c, struct xp_error *err)
{
	struct ebpf_source *e = of(s);
	int rc;

	rc = xp_live_decoder_init(&e->dec, c, e->o.endpoints, e->o.nendpoints,
				  e->o.target->start_time);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot prepare the capture's event templates (%d)", rc);
	e->dec_ready = true;
	rc = xp_live_bpf_open(&e->o.filter, e->o.endpoints, e->o.nendpoints, e->ring_bytes,
			      on_record, e, &e->b, err);
	if (rc)
		return rc;
	rc = xp_live_bpf_attach(e->b, e->o.target->pid, err);
	if (rc) {
		struct xp_error verr = { 0 };

		/* a target that went away explains the failure better */
		if (xp_target_verify(e->o.target, &verr)) {
			xp_error_move(err, &verr);
			rc = -err->code;
		}
		xp_error_clear(&verr);
	}
	return rc;
}

static int ebpf_arm(struct xp_live_source *s, struct xp_error *err)
{
	(void)err;
	xp_live_bpf_arm(of(s)->b, true);
	return 0;
}

static int ebpf_poll(struct xp_live_source *s, uint64_t now, struct xp_error *err)
{
	struct ebpf_source *e = of(s);
	int got;

	got = xp_live_bpf_consume(e->b);
	if (got < 0 && got != -EINTR)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "reading the BPF ring buffer failed (%d)", got);
	if (e->nomem)
		return nomem(err);
	if (got < 0)
		got = 0;
	if (now - e->drops_read_ns >= XP_LIVE_PROGRESS_NS) {
		uint64_t dropped, first_ts;

		e->drops_read_ns = now;
		if (!xp_live_bpf_dropped(e->b, &dropped, &first_ts)) {
			s->st.dropped = dropped;
			s->st.first_drop_ts = first_ts;
		}
	}
	s->busy = got > 0 && (uint64_t)got >= e->busy_records;
	sync_stats(e);
	return got;
}

static int ebpf_flush(struct xp_live_source *s, struct xp_error *err)
{
	struct ebpf_source *e = of(s);

	if (xp_live_flush(&e->dec)) {
		e->nomem = true;
		return nomem(err);
	}
	sync_stats(e);
	return 0;
}

static int ebpf_stop(struct xp_live_source *s, bool collected, struct xp_error *err)
{
	struct ebpf_source *e = of(s);
	struct xp_error scratch = { 0 };
	int rc = 0;
	size_t i;

	if (e->b) {
		uint64_t dropped = 0, first_ts = 0;

		xp_live_bpf_arm(e->b, false);
		if (collected) {
			if (xp_live_bpf_consume(e->b) < 0)
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "reading the BPF ring buffer failed at stop");
			if (xp_live_bpf_dropped(e->b, &dropped, &first_ts) && !rc)
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "reading the drop counters failed");
			s->st.dropped = dropped;
			s->st.first_drop_ts = first_ts;
		}
	}
	if (!e->dec_ready)
		return rc;
	if (e->dec.nstaged) {
		/* also after a failure: the artifact gets what was captured */
		int frc = ebpf_flush(s, rc ? &scratch : err);

		if (!rc)
			rc = frc;
	}
	if (e->nomem && !rc)
		rc = nomem(err);
	sync_stats(e);
	for (i = 0; i < e->dec.ntmpl && i < XP_LIVE_MAX_ENDPOINTS; i++)
		e->per_endpoint[i] = e->dec.per_endpoint[i];
	xp_live_decoder_free(&e->dec);
	e->dec_ready = false;
	xp_error_clear(&scratch);
	return rc;
}

static void ebpf_destroy(struct xp_live_source *s)
{
	struct ebpf_source *e = of(s);

	xp_live_bpf_destroy(e->b);
	if (e->dec_ready)
		xp_live_decoder_free(&e->dec);
	free(e);
}

static const struct xp_live_source_ops ebpf_ops = {
	.prepare = ebpf_prepare,
	.arm = ebpf_arm,
	.poll = ebpf_poll,
	.flush = ebpf_flush,
	.stop = ebpf_stop,
	.destroy = ebpf_destroy,
};

int xp_live_ebpf_source_new(const struct xp_live_ebpf_opts *o, struct xp_live_source **out,
			    struct xp_error *err)
{
	struct ebpf_source *e;
	uint64_t slot = 0;

	*out = NULL;
	if (!o->nendpoints || o->nendpoints > XP_LIVE_MAX_ENDPOINTS ||
	    o->end_ep >= (int)o->nendpoints)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "eBPF source: %zu endpoints, end %d", o->nendpoints, o->end_ep);
	e = calloc(1, sizeof(*e));
	if (!e)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	e->s.ops = &ebpf_ops;
	e->s.kind = XP_LIVE_SRC_EBPF;
	e->s.name = "ebpf";
	e->o = *o;
	e->ring_bytes =
		xp_live_ring_bytes(o->max_events, o->samples, o->endpoints, o->nendpoints, &slot);
	if (o->ring_bytes)
		e->ring_bytes = o->ring_bytes;
	e->busy_records = e->ring_bytes / slot / 4;
	e->s.st.capacity = o->max_events;
	*out = &e->s;
	return 0;
}

struct xp_live_obj *xp_live_ebpf_take_obj(struct xp_live_source *s)
{
	struct ebpf_source *e = of(s);
	struct xp_live_obj *b = e->b;

	e->b = NULL;
	return b;
}

uint64_t xp_live_ebpf_ring_bytes(const struct xp_live_source *s)
{
	return ((const struct ebpf_source *)s)->ring_bytes;
}

uint64_t xp_live_ebpf_endpoint_records(const struct xp_live_source *s, size_t i)
{
	const struct ebpf_source *e = (const struct ebpf_source *)s;

	return i < XP_LIVE_MAX_ENDPOINTS ? e->per_endpoint[i] : 0;
}
