/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_bpf.c - the BPF object of a live capture (bpf/xp_live.bpf.c): open
 * it, write the filters, size the ring, load only the programs the plan
 * needs, attach one link per endpoint, arm, consume, count drops, and
 * release everything.
 *
 * Sequence (libbpf-tools' fixed order): open -> rodata filters -> autoload
 * only what is used -> the uprobe program's expected attach type (the link
 * kind, uprobe_link.h) -> resize the ring -> load -> attach every link
 * with armed == 0 -> (the caller verifies the target) -> arm.  Stopping is
 * disarm + the final read (the capture is final there); destroy detaches
 * the links, then frees the ring consumer and the object, and may come
 * after the result is written (xp_live_bpf_destroy's return says whether
 * a link refused to go).  Every step accepts a half-built object, so one
 * function serves every exit path.
 * Links and maps are file descriptors of this process and nothing is
 * pinned: if xprobe is killed outright, the kernel releases them all.
 *
 * Attachments:
 *   uprobe/uretprobe  where the kernel has uprobe_multi links: one link per
 *                     binary and direction, every offset of it with its
 *                     endpoint as cookie (xp_uprobe_multi_attach); their
 *                     teardown closes them all at once, one thread each,
 *                     so the kernel's grace periods overlap (measured on
 *                     6.18: two perf-event uprobes 200 ms, two multi
 *                     links one after the other 81 ms, at once 40 ms;
 *                     docs/live-measurement.md, "Attaching").  Elsewhere
 *                     bpf_program__attach_uprobe_opts(access_path,
 *                     file_offset, retprobe, bpf_cookie = endpoint)
 *   USDT              bpf_program__attach_usdt(access_path, provider,
 *                     name, usdt_cookie = endpoint); libbpf handles the
 *                     semaphore (the kernel's uprobe reference counter)
 *   tracepoint        perf_event_open(PERF_TYPE_TRACEPOINT, tracefs id)
 *                     + bpf_program__attach_perf_event_opts(bpf_cookie):
 *                     the id comes from xp_tracefs_check, so the tracefs
 *                     mount that resolution checked is the one attached
 *   syscalls          one raw tracepoint link per direction used
 * Uprobes and USDT are opened for the target PID, so the kernel installs
 * their breakpoints in the target's memory only.
 *
 * libbpf messages are captured, not printed (JSON mode keeps stderr
 * clean); the last warning goes into an error's details (libbpf_msg.h).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xp_live.h"
#include "xp_live.skel.h"
#include "libbpf_msg.h"
#include "live.h"
#include "uprobe_link.h"
#include "../process/procfs.h"
#include "../resolve/tracefs.h"

/* links: one per endpoint plus the two raw syscall tracepoints */
#define XP_LIVE_LINKS_MAX (XP_LIVE_MAX_ENDPOINTS + 2)

struct xp_live_obj {
	struct xp_live_bpf *skel;
	const struct xp_live_endpoint *ep; /* the plan (caller-owned) */
	size_t nep;
	struct bpf_link *links[XP_LIVE_LINKS_MAX];
	size_t nlinks;
	enum xp_uprobe_kind ukind; /* how uprobe endpoints attach */
	int mlinks[XP_LIVE_LINKS_MAX]; /* uprobe_multi link descriptors */
	size_t nmlinks;
	struct ring_buffer *rb;
	int ncpus;
	struct xp_live_drops *percpu; /* ncpus values of xp_drops */
};

/*
 * An errno from a load or attach turned into the contract's code.
 * @what names the step ("load", "attach").  Returns -code.
 */
static int bpf_fail(struct xp_error *err, int e, const struct xp_live_endpoint *ep,
		    const char *what)
{
	char objects[XP_ERR_MESSAGE_MAX];
	struct xp_live_libbpf_failure f = {
		.e = e,
		.what = what,
		.objects = objects,
		.ep = ep,
		.perm_hint = "run xprobe doctor to see which probe capabilities are restricted",
	};
	int rc;

	snprintf(objects, sizeof(objects), "eBPF probes%s%s", ep ? " for " : "",
		 ep ? ep->selector : "");
	rc = xp_live_libbpf_fail(err, &f);
	if (rc)
		return rc;
	e = f.e;
	if (ep && (e == ENOENT || e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP)) {
		switch (ep->kind) {
		case XP_LIVE_UPROBE: /* ENOENT: xp_live_libbpf_fail's BINARY_NOT_MAPPED */
			xp_error_hint(err, "run xprobe validate with the exact selector text");
			return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					    "the kernel refused the uprobe for %s: %s",
					    ep->selector, f.why);
		case XP_LIVE_USDT:
			xp_error_hint(err, "run xprobe validate to see which CPython markers the target maps");
			return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					    "cannot attach USDT marker %s:%s for %s: %s",
					    ep->usdt_provider, ep->usdt_name, ep->selector, f.why);
		case XP_LIVE_TRACEPOINT:
			xp_error_hint(err, "list available tracepoints under /sys/kernel/tracing/events");
			return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					    "tracepoint %s:%s is not available: %s", ep->tp_category,
					    ep->tp_name, f.why);
		case XP_LIVE_SYS_ENTER:
		case XP_LIVE_SYS_EXIT:
			break;
		}
	}
	return xp_live_libbpf_fail_internal(err, &f);
}

/* --- open / load ------------------------------------------------------- */

int xp_live_bpf_open(const struct xp_live_filter *f, const struct xp_live_endpoint *ep, size_t n,
		     uint64_t ring_bytes, int (*cb)(void *ctx, void *data, size_t size), void *ctx,
		     struct xp_live_obj **out, struct xp_error *err)
{
	struct xp_live_obj *b;
	bool need[5] = { false };
	int ne = 0, nx = 0, rc;
	size_t i;

	*out = NULL;
	if (!n || n > XP_LIVE_MAX_ENDPOINTS)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "a live capture takes 1 or 2 endpoints, not %zu", n);
	b = calloc(1, sizeof(*b));
	if (!b)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	b->ep = ep;
	b->nep = n;
	xp_live_libbpf_capture();
	b->skel = xp_live_bpf__open();
	if (!b->skel) {
		rc = bpf_fail(err, errno, NULL, "open");
		goto fail;
	}

	/* filters */
	XP_TARGET_FILTER_APPLY(b->skel->rodata, f);
	for (i = 0; i < n; i++) {
		need[ep[i].kind] = true;
		if (ep[i].kind == XP_LIVE_SYS_ENTER && ne < XP_LIVE_MAX_SYSCALLS) {
			b->skel->rodata->enter_nr[ne] = ep[i].syscall_nr;
			b->skel->rodata->enter_ep[ne++] = (__u32)i;
		} else if (ep[i].kind == XP_LIVE_SYS_EXIT && nx < XP_LIVE_MAX_SYSCALLS) {
			b->skel->rodata->exit_nr[nx] = ep[i].syscall_nr;
			b->skel->rodata->exit_ep[nx++] = (__u32)i;
		}
	}
	b->skel->rodata->enter_count = (__u32)ne;
	b->skel->rodata->exit_count = (__u32)nx;

	/* only the programs the plan uses are loaded (and verified) */
	bpf_program__set_autoload(b->skel->progs.xp_uprobe, need[XP_LIVE_UPROBE]);
	bpf_program__set_autoload(b->skel->progs.xp_usdt, need[XP_LIVE_USDT]);
	bpf_program__set_autoload(b->skel->progs.xp_tracepoint, need[XP_LIVE_TRACEPOINT]);
	bpf_program__set_autoload(b->skel->progs.xp_sys_enter, need[XP_LIVE_SYS_ENTER]);
	bpf_program__set_autoload(b->skel->progs.xp_sys_exit, need[XP_LIVE_SYS_EXIT]);
	b->ukind = XP_UPROBE_PERF;
	if (need[XP_LIVE_UPROBE]) {
		/* the session kind's entry/return kfuncs would make libbpf parse
		 * the kernel's BTF at load: the collector takes plain
		 * uprobe_multi links, which close at once as fast */
		b->ukind = xp_uprobe_kind_for(f->global_tgid);
		if (b->ukind == XP_UPROBE_SESSION)
			b->ukind = XP_UPROBE_MULTI;
		if (b->ukind != XP_UPROBE_PERF)
			bpf_program__set_expected_attach_type(
				b->skel->progs.xp_uprobe,
				(enum bpf_attach_type)xp_uprobe_attach_type(b->ukind));
	}

	/* ring from --max-events; libbpf's USDT tables at their minimum
	 * when no USDT endpoint exists (the IP table is unused on kernels
	 * with BPF cookies, which the uprobe links require anyway) */
	rc = bpf_map__set_max_entries(b->skel->maps.xp_ring, (__u32)ring_bytes);
	if (!rc)
		rc = bpf_map__set_max_entries(b->skel->maps.__bpf_usdt_ip_to_spec_id, 1);
	if (!rc && !need[XP_LIVE_USDT])
		rc = bpf_map__set_max_entries(b->skel->maps.__bpf_usdt_specs, 1);
	/* the syscall programs' per-thread state, only for them */
	if (!rc && !need[XP_LIVE_SYS_ENTER] && !need[XP_LIVE_SYS_EXIT])
		rc = bpf_map__set_max_entries(b->skel->maps.xp_restart, 1);
	if (!rc && !need[XP_LIVE_SYS_ENTER] && !need[XP_LIVE_SYS_EXIT])
		rc = bpf_map__set_max_entries(b->skel->maps.xp_exec, 1);
	if (rc) {
		rc = bpf_fail(err, rc, NULL, "size the maps of");
		goto fail;
	}
	rc = xp_live_bpf__load(b->skel);
	if (rc) {
		rc = bpf_fail(err, rc, NULL, "load");
		goto fail;
	}
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		rc = bpf_fail(err, b->ncpus, NULL, "count CPUs for");
		goto fail;
	}
	b->percpu = calloc((size_t)b->ncpus, sizeof(*b->percpu));
	if (!b->percpu) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto fail;
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.xp_ring), cb, ctx, NULL);
	if (!b->rb) {
		rc = bpf_fail(err, errno, NULL, "map the ring buffer of");
		goto fail;
	}
	*out = b;
	return 0;
fail:
	xp_live_bpf_destroy(b);
	return rc;
}

/* --- attach -------------------------------------------------------------- */

static int perf_tracepoint_open(uint64_t id)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	/* BPF on a tracepoint runs for every hit, whatever the event's
	 * CPU; libbpf opens it the same way (pid -1, cpu 0) */
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static struct bpf_link *attach_one(struct xp_live_obj *b, size_t i, uint32_t pid, int *e)
{
	const struct xp_live_endpoint *ep = &b->ep[i];
	struct bpf_link *l = NULL;

	errno = 0;
	switch (ep->kind) {
	case XP_LIVE_UPROBE: {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ep->retprobe, .bpf_cookie = i);

		l = bpf_program__attach_uprobe_opts(b->skel->progs.xp_uprobe, (pid_t)pid,
						    ep->access_path, (size_t)ep->file_offset, &o);
		break;
	}
	case XP_LIVE_USDT: {
		LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = i);

		l = bpf_program__attach_usdt(b->skel->progs.xp_usdt, (pid_t)pid, ep->access_path,
					     ep->usdt_provider, ep->usdt_name, &o);
		break;
	}
	case XP_LIVE_TRACEPOINT: {
		LIBBPF_OPTS(bpf_perf_event_opts, o, .bpf_cookie = i);
		int pfd = perf_tracepoint_open(ep->tracepoint_id);

		if (pfd < 0) {
			*e = pfd;
			return NULL;
		}
		l = bpf_program__attach_perf_event_opts(b->skel->progs.xp_tracepoint, pfd, &o);
		if (!l) {
			*e = -errno;
			close(pfd);
			return NULL;
		}
		break;
	}
	case XP_LIVE_SYS_ENTER:
	case XP_LIVE_SYS_EXIT:
		/* attached once per direction by the caller */
		*e = -EINVAL;
		return NULL;
	}
	if (!l)
		*e = errno ? -errno : -EINVAL;
	return l;
}

/*
 * The uprobe endpoints as uprobe_multi links: one per binary (access path)
 * and direction, each offset with its endpoint as cookie.  Endpoint @i's
 * link is made when it is the first of its group.
 */
static int attach_multi(struct xp_live_obj *b, size_t i, uint32_t pid, struct xp_error *err)
{
	const struct xp_live_endpoint *ep = &b->ep[i];
	uint64_t offsets[XP_LIVE_MAX_ENDPOINTS], cookies[XP_LIVE_MAX_ENDPOINTS];
	struct xp_uprobe_multi m = {
		.path = ep->access_path,
		.offsets = offsets,
		.cookies = cookies,
		.retprobe = ep->retprobe,
		.pid = pid,
	};
	size_t j;
	int fd;

	for (j = 0; j < b->nep; j++) {
		const struct xp_live_endpoint *o = &b->ep[j];

		if (o->kind != XP_LIVE_UPROBE || o->retprobe != ep->retprobe ||
		    strcmp(o->access_path, ep->access_path))
			continue;
		if (j < i)
			return 0; /* attached with the group's first */
		offsets[m.cnt] = o->file_offset;
		cookies[m.cnt++] = j;
	}
	fd = xp_uprobe_multi_attach(bpf_program__fd(b->skel->progs.xp_uprobe), &m);
	if (fd < 0)
		return bpf_fail(err, fd, ep, "attach");
	b->mlinks[b->nmlinks++] = fd;
	return 0;
}

int xp_live_bpf_attach(struct xp_live_obj *b, uint32_t pid, struct xp_error *err)
{
	bool enter = false, exit_ = false;
	size_t i;
	int e = 0;

	pid = xp_proc_attach_pid(pid);

	for (i = 0; i < b->nep; i++) {
		struct bpf_link *l;

		if (b->ep[i].kind == XP_LIVE_UPROBE && b->ukind != XP_UPROBE_PERF) {
			int rc = attach_multi(b, i, pid, err);

			if (rc)
				return rc;
			continue;
		}
		if (b->ep[i].kind == XP_LIVE_SYS_ENTER) {
			enter = true;
			continue;
		}
		if (b->ep[i].kind == XP_LIVE_SYS_EXIT) {
			exit_ = true;
			continue;
		}
		l = attach_one(b, i, pid, &e);
		if (!l)
			return bpf_fail(err, e, &b->ep[i], "attach");
		b->links[b->nlinks++] = l;
	}
	if (enter) {
		struct bpf_link *l =
			bpf_program__attach_raw_tracepoint(b->skel->progs.xp_sys_enter, "sys_enter");

		if (!l)
			return bpf_fail(err, errno, NULL, "attach the sys_enter raw tracepoint of");
		b->links[b->nlinks++] = l;
	}
	if (exit_) {
		struct bpf_link *l =
			bpf_program__attach_raw_tracepoint(b->skel->progs.xp_sys_exit, "sys_exit");

		if (!l)
			return bpf_fail(err, errno, NULL, "attach the sys_exit raw tracepoint of");
		b->links[b->nlinks++] = l;
	}
	return 0;
}

void xp_live_bpf_arm(struct xp_live_obj *b, bool armed)
{
	__atomic_store_n(&b->skel->bss->armed, armed ? 1u : 0u, __ATOMIC_SEQ_CST);
}

int xp_live_bpf_consume(struct xp_live_obj *b)
{
	return ring_buffer__consume(b->rb);
}

int xp_live_bpf_dropped(struct xp_live_obj *b, uint64_t *count, uint64_t *first_ts)
{
	__u32 zero = 0;
	int i, rc;

	*count = 0;
	*first_ts = 0;
	rc = bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.xp_drops), &zero, b->percpu);
	if (rc)
		return -errno;
	for (i = 0; i < b->ncpus; i++) {
		*count += b->percpu[i].count;
		if (b->percpu[i].count &&
		    (!*first_ts || b->percpu[i].first_ts < *first_ts))
			*first_ts = b->percpu[i].first_ts;
	}
	return 0;
}

int xp_live_bpf_detach(struct xp_live_obj *b)
{
	int rc = 0, e;

	if (!b)
		return 0;
	if (b->skel && b->skel->bss)
		xp_live_bpf_arm(b, false);
	if (b->nmlinks)
		rc = xp_uprobe_links_close(b->mlinks, b->nmlinks);
	b->nmlinks = 0;
	while (b->nlinks) {
		e = bpf_link__destroy(b->links[--b->nlinks]);
		if (e && !rc)
			rc = e < 0 ? e : -e;
	}
	return rc;
}

int xp_live_bpf_destroy(struct xp_live_obj *b)
{
	int rc;

	if (!b)
		return 0;
	rc = xp_live_bpf_detach(b);
	ring_buffer__free(b->rb);
	xp_live_bpf__destroy(b->skel);
	free(b->percpu);
	free(b);
	return rc;
}

const char *xp_live_bpf_link_kind(const struct xp_live_obj *b)
{
	return xp_uprobe_kind_name(b->ukind);
}
