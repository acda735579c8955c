/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_events.c - ring records (bpf/xp_live.h) -> struct xp_event.
 *
 * Every event of one endpoint shares everything but its time and ids, so
 * each endpoint's event is built once as a template, its strings interned
 * once in the capture, and decoding a record is a struct copy plus four
 * fields (and the six arguments of a syscall entry).  Events follow the
 * contract's producers (docs/contract.md, "Events"): source ebpf, clock
 * host_monotonic, cpu set, process_start_time the target's, a host part;
 * syscall events carry attributes {"tracepoint_category": "syscalls"},
 * entries exactly six u64 arguments (rdi, rsi, rdx, r10, r8, r9), exits
 * return_value; named tracepoints {"tracepoint_category": <category>}; USDT
 * markers (ours) {"usdt_provider": "python"}.  An endpoint's attribute is one
 * shared entry of the capture's attribute table that all its events point to.
 *
 * Records are checked before they are read: a size that does not match
 * the kind, an unknown kind, an endpoint index outside the plan or a kind
 * that is not the endpoint's is counted in `unknown` and skipped.  The
 * record is copied to an aligned local (or staging slot) first.
 *
 * Two steps (live.h): the ring consumer stages raw records (check + copy,
 * so it drains the ring faster than any producer fills it), and staged
 * records become events in batches.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_live.h"
#include "live.h"

static uint8_t rec_kind_of(enum xp_live_kind k)
{
	switch (k) {
	case XP_LIVE_UPROBE:
		return XP_REC_UPROBE;
	case XP_LIVE_USDT:
		return XP_REC_USDT;
	case XP_LIVE_TRACEPOINT:
		return XP_REC_TRACEPOINT;
	case XP_LIVE_SYS_ENTER:
		return XP_REC_SYS_ENTER;
	case XP_LIVE_SYS_EXIT:
		return XP_REC_SYS_EXIT;
	}
	return 0;
}

static size_t rec_size_of(uint8_t kind)
{
	switch (kind) {
	case XP_REC_UPROBE:
	case XP_REC_USDT:
	case XP_REC_TRACEPOINT:
		return sizeof(struct xp_live_hdr);
	case XP_REC_SYS_ENTER:
		return sizeof(struct xp_live_sys_enter);
	case XP_REC_SYS_EXIT:
		return sizeof(struct xp_live_sys_exit);
	}
	return 0;
}

uint64_t xp_live_ring_bytes(uint64_t max_events, uint64_t samples,
			    const struct xp_live_endpoint *ep, size_t n, uint64_t *slot_out)
{
	uint64_t slot = 0, want, bytes = XP_LIVE_RING_MIN, records = max_events;
	size_t i;

	for (i = 0; i < n; i++) {
		/* ring records carry an 8-byte header and are 8-byte aligned */
		uint64_t s = ((rec_size_of(rec_kind_of(ep[i].kind)) + 8 + 7) / 8) * 8;

		if (s > slot)
			slot = s;
	}
	if (!slot)
		slot = XP_LIVE_RING_SLOT_MAX;
	if (slot_out)
		*slot_out = slot;
	if (samples) {
		uint64_t r = XP_LIVE_RING_SAMPLES_RECORDS;

		if (samples <= UINT64_MAX / XP_LIVE_RING_SAMPLES_FACTOR / (n ? n : 1) &&
		    samples * XP_LIVE_RING_SAMPLES_FACTOR * (n ? n : 1) > r)
			r = samples * XP_LIVE_RING_SAMPLES_FACTOR * (n ? n : 1);
		else if (samples > UINT64_MAX / XP_LIVE_RING_SAMPLES_FACTOR / (n ? n : 1))
			r = UINT64_MAX;
		if (r < records)
			records = r;
	}
	if (records > XP_LIVE_RING_MAX / slot)
		return XP_LIVE_RING_MAX;
	want = records * slot;
	while (bytes < want)
		bytes <<= 1;
	return bytes;
}

int xp_live_decoder_init(struct xp_live_decoder *d, struct xp_capture *c,
			 const struct xp_live_endpoint *ep, size_t n, uint64_t process_start_time)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	if (n > XP_LIVE_MAX_ENDPOINTS)
		return -EINVAL;
	d->capture = c;
	d->ntmpl = n;
	d->abi_u64 = xp_capture_intern(c, "u64");
	for (i = 0; i < n; i++) {
		struct xp_event *e = &d->tmpl[i].ev;

		d->tmpl[i].rec_kind = rec_kind_of(ep[i].kind);
		e->source = XP_SRC_EBPF;
		e->event_type = ep[i].event_type;
		e->clock_domain = XP_CLOCK_HOST_MONOTONIC;
		e->flags = XP_EVF_CPU | XP_EVF_HOST | XP_EVF_START_TIME;
		e->process_start_time = process_start_time;
		e->host.probe_kind = ep[i].probe_kind;
		e->host.binary_path = xp_capture_intern(c, ep[i].binary_path);
		e->host.symbol = xp_capture_intern(c, ep[i].symbol);
		e->host.symbol_demangled = xp_capture_intern(c, ep[i].symbol_demangled);
		if (ep[i].has_offset) {
			e->host.flags |= XP_HOSTF_OFFSET;
			e->host.offset = ep[i].offset;
		}
		if (ep[i].attr_key) {
			char json[256];
			xp_str_t key, val;
			long idx;
			int len;

			/* the value is JSON text: a quoted string without
			 * characters that need escaping (names from the
			 * selector grammar and tracefs) */
			len = snprintf(json, sizeof(json), "\"%s\"", ep[i].attr_value);
			if (len < 0 || (size_t)len >= sizeof(json) ||
			    strpbrk(ep[i].attr_value, "\"\\"))
				return -EINVAL;
			key = xp_capture_intern(c, ep[i].attr_key);
			val = xp_capture_intern(c, json);
			idx = xp_capture_add_attr(c, key, val);
			if (idx < 0)
				return (int)idx;
			e->attrs_first = (uint32_t)idx;
			e->attrs_count = 1;
		}
	}
	if (c->strings.failed)
		return -ENOMEM;
	return 0;
}

static int add_args(struct xp_live_decoder *d, struct xp_event *e, const __u64 *args)
{
	struct xp_capture *c = d->capture;
	long first = -1, idx;
	int i;

	for (i = 0; i < XP_LIVE_SYSCALL_ARGS; i++) {
		struct xp_arg a = { 0 };
		char num[24];
		int len = snprintf(num, sizeof(num), "%" PRIu64, (uint64_t)args[i]);

		a.abi_type = d->abi_u64;
		a.value = xp_capture_intern_n(c, num, (size_t)len);
		a.read_error = 0;
		a.index = (uint16_t)i;
		if (!a.value)
			return -ENOMEM;
		idx = xp_capture_add_arg(c, &a);
		if (idx < 0)
			return (int)idx;
		if (first < 0)
			first = idx;
	}
	e->host.args_first = (uint32_t)first;
	e->host.args_count = XP_LIVE_SYSCALL_ARGS;
	return 0;
}

union live_rec {
	struct xp_live_hdr hdr;
	struct xp_live_sys_enter enter;
	struct xp_live_sys_exit exit;
};

_Static_assert(sizeof(union live_rec) <= sizeof(struct xp_live_raw), "staging slot");

/* Check a record's size, kind and endpoint; copy it to @r.  Counts. */
static int check(struct xp_live_decoder *d, const void *data, size_t size, union live_rec *r)
{
	if (size < sizeof(r->hdr) || size > sizeof(*r)) {
		d->unknown++;
		return -EBADMSG;
	}
	memcpy(r, data, size);
	if (r->hdr.endpoint >= d->ntmpl || rec_size_of(r->hdr.kind) != size ||
	    d->tmpl[r->hdr.endpoint].rec_kind != r->hdr.kind) {
		d->unknown++;
		return -EBADMSG;
	}
	d->per_endpoint[r->hdr.endpoint]++;
	return 0;
}

/* A checked record -> one event of the capture. */
static int convert(struct xp_live_decoder *d, const union live_rec *r)
{
	const struct xp_live_tmpl *t = &d->tmpl[r->hdr.endpoint];
	struct xp_event *e;
	int err = 0;

	e = xp_capture_add(d->capture, &err);
	if (!e) {
		if (err == -E2BIG)
			d->beyond++;
		return err;
	}
	*e = t->ev;
	e->timestamp_ns = r->hdr.ts_ns;
	e->timestamp_raw = r->hdr.ts_ns;
	e->pid = r->hdr.pid;
	e->tid = r->hdr.tid;
	e->cpu = r->hdr.cpu;
	if (r->hdr.kind == XP_REC_SYS_ENTER) {
		err = add_args(d, e, r->enter.args);
		if (err) {
			xp_capture_pop(d->capture);
			return err;
		}
	} else if (r->hdr.kind == XP_REC_SYS_EXIT) {
		e->host.flags |= XP_HOSTF_RETURN_VALUE;
		e->host.return_value = r->exit.ret;
	}
	return 0;
}

int xp_live_decode(struct xp_live_decoder *d, const void *data, size_t size)
{
	union live_rec r;
	int err = check(d, data, size, &r);

	return err ? err : convert(d, &r);
}

int xp_live_stage(struct xp_live_decoder *d, const void *data, size_t size)
{
	union live_rec r;
	int err = check(d, data, size, &r);

	if (err)
		return err;
	if (d->capture->max_events && xp_live_held(d) >= d->capture->max_events) {
		d->beyond++;
		return -E2BIG;
	}
	if (d->nstaged == d->staged_cap) {
		size_t cap = d->staged_cap ? d->staged_cap * 2 : 1024;
		struct xp_live_raw *n;

		if (d->capture->max_events && cap > d->capture->max_events)
			cap = d->capture->max_events;
		n = realloc(d->staged, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->staged = n;
		d->staged_cap = cap;
	}
	memcpy(&d->staged[d->nstaged++], &r, sizeof(r));
	return 0;
}

int xp_live_flush(struct xp_live_decoder *d)
{
	size_t i;
	int err;

	for (i = 0; i < d->nstaged; i++) {
		union live_rec r;

		memcpy(&r, &d->staged[i], sizeof(r));
		err = convert(d, &r);
		if (err == -ENOMEM) {
			/* keep what is left staged */
			memmove(d->staged, d->staged + i, (d->nstaged - i) * sizeof(*d->staged));
			d->nstaged -= i;
			return err;
		}
	}
	d->nstaged = 0;
	return 0;
}

void xp_live_decoder_free(struct xp_live_decoder *d)
{
	free(d->staged);
	d->staged = NULL;
	d->nstaged = d->staged_cap = 0;
}
