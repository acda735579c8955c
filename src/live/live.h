/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live.h - live host collection with eBPF: the endpoint plan, the target
 * filter, the bounded capture loop and its counters.
 *
 * Layers (each its own file):
 *   live_plan.c    selectors + resolution (src/resolve/resolve.h) -> the
 *                  endpoints to attach and what their events say
 *   live_bpf.c     the BPF object: open, filters, load, one link per
 *                  endpoint, arm, consume the ring, drops, destroy
 *   live_events.c  ring records -> struct xp_event (pure; unit-tested)
 *   live_ebpf.c    the above as a live source (live_source.h): what one
 *                  measurement's loop (live_run.c) prepares, arms, polls
 *                  and stops
 *
 * Bounds.  A capture holds at most max_events events (memory follows the
 * bound); the ring is sized from it (xp_live_ring_bytes); records that
 * arrive once the capture is full are counted, not kept.
 */
#ifndef XP_COLLECT_LIVE_H
#define XP_COLLECT_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "xp_live.h" /* XP_LIVE_MAX_ENDPOINTS, shared with the BPF side */
#include "../model/error_record.h"
#include "../model/event.h"
#include "../selector/selector.h"
#include "../process/identity.h"
#include "../process/namespaces.h"
#include "live_source.h"

#define XP_LIVE_RING_MIN (4096u)     /* one page */
#define XP_LIVE_RING_MAX (64u << 20) /* 64 MiB */
/*
 * Records a samples-bound ring is sized for, at least: the ring then holds
 * the capture's own events many times over plus what a fast target emits
 * in a few poll periods, and a loss after the capture's stopping point is
 * not a loss of the capture (xp_live_stats.first_drop_ts).
 */
#define XP_LIVE_RING_SAMPLES_RECORDS 4096u
#define XP_LIVE_RING_SAMPLES_FACTOR 8u

enum xp_live_kind {
	XP_LIVE_UPROBE = 0, /* uprobe or uretprobe by file offset */
	XP_LIVE_USDT,       /* USDT marker (libbpf USDT support) */
	XP_LIVE_TRACEPOINT, /* named tracepoint by tracefs id */
	XP_LIVE_SYS_ENTER,  /* raw tracepoint sys_enter, one syscall number */
	XP_LIVE_SYS_EXIT,   /* raw tracepoint sys_exit, one syscall number */
};

/*
 * One endpoint: how to attach it and what its events say.  Strings are
 * owned by the plan (live_plan.c) or by the caller that built it.
 */
struct xp_live_endpoint {
	enum xp_live_kind kind;
	const char *selector;        /* verbatim selector text (messages) */
	/* attachment */
	const char *access_path;     /* UPROBE/USDT: the file xprobe opens */
	uint64_t file_offset;        /* UPROBE */
	bool retprobe;               /* UPROBE: attach as a uretprobe */
	const char *usdt_provider;   /* USDT: "python" */
	const char *usdt_name;       /* USDT: "gc__start" */
	int syscall_nr;              /* SYS_*: x86_64 number */
	uint64_t tracepoint_id;      /* TRACEPOINT: tracefs event id */
	const char *tp_category;     /* TRACEPOINT: for messages */
	const char *tp_name;
	/* the events it produces (docs/contract.md, "Events"; plus usdt) */
	uint8_t event_type;          /* enum xp_event_type */
	uint8_t probe_kind;          /* enum xp_probe_kind */
	const char *binary_path;     /* canonical path or NULL (JSON null) */
	const char *symbol;          /* mangled name / syscall / tracepoint / marker */
	const char *symbol_demangled;
	bool has_offset;             /* +0x selectors: host.offset */
	uint64_t offset;
	const char *attr_key;        /* one string attribute, or NULL */
	const char *attr_value;
};

/*
 * How BPF recognizes the target.  When xprobe runs in the initial PID
 * namespace the kernel's tgid is the PID xprobe was given: filter on it
 * (one compare).  When the target lives in another PID namespace, events
 * carry its namespace-relative ids (bpf_get_ns_current_pid_tgid with that
 * namespace's dev/ino); when xprobe itself is not in the initial
 * namespace, that translation is also the filter.
 */
struct xp_live_filter {
	uint32_t global_tgid;  /* 0 = not filtered by the global tgid */
	bool use_pidns;        /* translate ids into the target's pidns */
	uint64_t pidns_dev;
	uint64_t pidns_ino;
	uint32_t ns_tgid;      /* the target's pid inside its namespace */
	uint32_t event_pid;    /* the pid its events carry */
};

/*
 * Fill the rodata filters of bpf/target_filter.bpf.h (every xprobe BPF
 * skeleton has them) from @f, between open and load.
 */
#define XP_TARGET_FILTER_APPLY(rodata, f)                 \
	do {                                              \
		(rodata)->targ_tgid = (f)->global_tgid;   \
		(rodata)->use_pidns = (f)->use_pidns;     \
		(rodata)->ns_tgid = (f)->ns_tgid;         \
		(rodata)->pidns_dev = (f)->pidns_dev;     \
		(rodata)->pidns_ino = (f)->pidns_ino;     \
	} while (0)

/*
 * Build the filter for @t: @pidns_dev/@pidns_ino/@ns_pid describe the
 * target's PID namespace (xp_target_namespaces), @same_pidns whether
 * xprobe shares it.  Reads /proc/self/status to learn whether xprobe is in
 * the initial PID namespace.  Returns 0 or -errno.
 */
int xp_live_filter_init(struct xp_live_filter *f, const struct xp_target *t, bool same_pidns,
			uint64_t pidns_dev, uint64_t pidns_ino, uint32_t ns_pid);

/* xp_live_filter_init from @ns (xp_target_namespaces of @t), for the
 * commands: 0, or INTERNAL in @err when xprobe's own PID namespace
 * cannot be read. */
int xp_live_filter_for(struct xp_live_filter *f, const struct xp_target *t,
		       const struct xp_target_ns *ns, struct xp_error *err);

/*
 * Ring size in bytes: records * the slot of the largest record kind among
 * @ep, rounded up to a power of two and clamped to [XP_LIVE_RING_MIN,
 * XP_LIVE_RING_MAX].  Records: @max_events, or for a samples-bound
 * capture (@samples > 0) min(max_events, max(XP_LIVE_RING_SAMPLES_RECORDS,
 * XP_LIVE_RING_SAMPLES_FACTOR * samples * n)).  Why it matters: libbpf
 * maps the ring's data twice and the kernel maps every page up front, so
 * the ring counts twice in xprobe's RSS.  The slot size (bytes one record
 * takes in the ring, header included) goes to @slot if not NULL.
 */
uint64_t xp_live_ring_bytes(uint64_t max_events, uint64_t samples,
			    const struct xp_live_endpoint *ep, size_t n, uint64_t *slot);

/* --- events (live_events.c) ----------------------------------------- */

/* Per endpoint, what every event of it shares, interned in one capture. */
struct xp_live_tmpl {
	struct xp_event ev;   /* template: everything but time and ids */
	uint8_t rec_kind;     /* XP_REC_* the endpoint's records carry */
};

/* Room for one ring record of any kind (bpf/xp_live.h), 8-byte aligned. */
struct xp_live_raw {
	uint64_t w[9];
};

/*
 * Records become events in two steps: the ring consumer only checks and
 * copies each record into a staging array (xp_live_stage: tens of ns, so
 * it keeps up with any producer and stays off the target's CPU), and
 * staged records are turned into events in batches (xp_live_flush: a
 * template copy, plus six interned arguments for a syscall entry) when the
 * samples rule needs them, when many are staged, and at stop.
 */
struct xp_live_decoder {
	struct xp_capture *capture;
	struct xp_live_tmpl tmpl[XP_LIVE_MAX_ENDPOINTS];
	size_t ntmpl;
	xp_str_t abi_u64;     /* "u64" */
	uint64_t per_endpoint[XP_LIVE_MAX_ENDPOINTS]; /* well-formed records seen */
	uint64_t unknown;     /* malformed records (size, kind, endpoint) */
	uint64_t beyond;      /* well-formed records the full capture refused */
	struct xp_live_raw *staged; /* records not yet events (owned) */
	size_t nstaged, staged_cap;
};

/* Intern @n endpoints' strings into @c.  Returns 0 or -ENOMEM.  Free
 * with xp_live_decoder_free. */
int xp_live_decoder_init(struct xp_live_decoder *d, struct xp_capture *c,
			 const struct xp_live_endpoint *ep, size_t n, uint64_t process_start_time);
void xp_live_decoder_free(struct xp_live_decoder *d);
/*
 * Turn one ring record into an event of the capture now.  Returns 0
 * (added), -E2BIG (capture full: counted in beyond), -EBADMSG (malformed:
 * counted in unknown), -ENOMEM.
 */
int xp_live_decode(struct xp_live_decoder *d, const void *data, size_t size);
/* Check and stage one record (same returns; the capture's bound counts
 * staged records). */
int xp_live_stage(struct xp_live_decoder *d, const void *data, size_t size);
/* Turn every staged record into an event.  Returns 0 or -ENOMEM. */
int xp_live_flush(struct xp_live_decoder *d);
/* Events plus staged records. */
static inline size_t xp_live_held(const struct xp_live_decoder *d)
{
	return d->capture->count + d->nstaged;
}

/* --- the BPF object (live_bpf.c) ------------------------------------ */

struct xp_live_obj;

/*
 * Open and load the object for @ep with @f; the ring holds @ring_bytes and
 * every record consumed goes to @cb(@ctx, data, size) (return 0 to go on).
 * Nothing is attached yet.  Errors: PERMISSION_DENIED, INTERNAL.
 */
int xp_live_bpf_open(const struct xp_live_filter *f, const struct xp_live_endpoint *ep, size_t n,
		     uint64_t ring_bytes, int (*cb)(void *ctx, void *data, size_t size), void *ctx,
		     struct xp_live_obj **out, struct xp_error *err);
/* Attach every endpoint (one link each; one raw tracepoint link per
 * syscall direction).  @pid is the target as xprobe sees it.  Errors name
 * the endpoint's selector: SYMBOL_NOT_FOUND, INVALID_EVENT_SELECTOR,
 * PERMISSION_DENIED, TARGET_EXITED, INTERNAL. */
int xp_live_bpf_attach(struct xp_live_obj *b, uint32_t pid, struct xp_error *err);
/* Flip the armed flag. */
void xp_live_bpf_arm(struct xp_live_obj *b, bool armed);
/* Consume every committed record.  Returns records consumed or -errno. */
int xp_live_bpf_consume(struct xp_live_obj *b);
/* Records lost (sum of the per-CPU counters) and the earliest loss's
 * timestamp (0 when none). */
int xp_live_bpf_dropped(struct xp_live_obj *b, uint64_t *count, uint64_t *first_ts);
/* Disarm and detach every link (the ring and maps stay readable).
 * Returns 0, or the first -errno of a link that refused to go. */
int xp_live_bpf_detach(struct xp_live_obj *b);
/* Detach and free everything; NULL is fine.  Returns what detach did. */
int xp_live_bpf_destroy(struct xp_live_obj *b);
/* How the uprobe endpoints were attached: xp_uprobe_kind_name's words. */
const char *xp_live_bpf_link_kind(const struct xp_live_obj *b);

/* --- the eBPF source (live_ebpf.c) ---------------------------------- */

struct xp_live_ebpf_opts {
	const struct xp_target *target;
	struct xp_live_filter filter;
	const struct xp_live_endpoint *endpoints; /* owned by the caller, outlive the source */
	size_t nendpoints;
	int end_ep;               /* the end selector's endpoint (samples rule), -1 none */
	uint64_t max_events;      /* capture bound (ring sizing; the capacity reported) */
	uint64_t samples;         /* the samples bound (ring sizing), 0 = none */
	uint64_t ring_bytes;      /* 0 = xp_live_ring_bytes(); tests shrink it */
};

/*
 * A live source (live_source.h) of the host endpoints @o names.  Its
 * events carry source ebpf; its losses are dated (the BPF side records
 * the earliest loss's timestamp).  Returns 0 or INTERNAL.
 */
int xp_live_ebpf_source_new(const struct xp_live_ebpf_opts *o, struct xp_live_source **out,
			    struct xp_error *err);
/* The BPF object of a stopped source, for the caller to destroy
 * (xp_live_bpf_destroy) once the result is written; NULL when none.  The
 * source forgets it. */
struct xp_live_obj *xp_live_ebpf_take_obj(struct xp_live_source *s);
/* The ring's size in bytes. */
uint64_t xp_live_ebpf_ring_bytes(const struct xp_live_source *s);
/* Well-formed records endpoint @i produced (final once stopped). */
uint64_t xp_live_ebpf_endpoint_records(const struct xp_live_source *s, size_t i);

/* --- planning from selectors (live_plan.c) --------------------------- */

struct xp_live_plan {
	struct xp_live_endpoint ep[XP_LIVE_MAX_ENDPOINTS];
	size_t n;
	int from_ep;              /* index of the start selector's endpoint, -1: not host */
	int to_ep;                /* index of the end selector's endpoint, -1: not host */
	char *owned[24];          /* strings the plan owns */
	size_t nowned;
};

/*
 * What resolution found for one selector, as validation kept it
 * (src/checks' endpoint check; the command passes it through): the plan
 * copies it, so nothing is resolved twice between validate and attach.
 * @probe for a uprobe selector, @usdt for a CPython GC selector,
 * @tracepoint_id for a named tracepoint; syscalls need none.
 */
struct xp_resolved_probe;
struct xp_usdt_marker;

struct xp_live_resolved {
	const struct xp_selector *sel;
	const struct xp_resolved_probe *probe;
	const struct xp_usdt_marker *usdt;
	bool has_tracepoint_id;
	uint64_t tracepoint_id;
};

/*
 * The endpoints of the host selectors among @from and @to (cuda: ones are
 * the Agent's and get -1), from what validation resolved.  Identical
 * selector texts share one endpoint.  Errors: INVALID_EVENT_SELECTOR (a
 * syscall without a number), INTERNAL (a host selector passed without
 * its resolution: a caller's defect; out of memory).
 */
int xp_live_plan_build(const struct xp_live_resolved *from, const struct xp_live_resolved *to,
		       struct xp_live_plan *plan, struct xp_error *err);
void xp_live_plan_free(struct xp_live_plan *plan);

#endif /* XP_COLLECT_LIVE_H */
