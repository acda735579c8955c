/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda_candidates.c - NVML compute processes filtered to a process tree
 * (discover.h has the steps).  NVML reports PIDs of the initial PID
 * namespace; xprobe run inside a container sees its own, so discover
 * is meant to run where the GPU processes' PIDs are visible.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_candidates.h"
#include "nvml.h"

#define MAX_WALK 4096

int xp_proc_ppid(uint32_t pid, uint32_t *ppid, void *ctx)
{
	struct xp_proc_stat st;
	int rc = xp_proc_stat_read(pid, 0, &st);

	(void)ctx;
	if (rc == -ESRCH)
		rc = -ENOENT;
	if (rc)
		return rc;
	if (st.state == 'Z' || st.state == 'X')
		return -ENOENT;
	*ppid = st.ppid;
	return 0;
}

int xp_proctree_filter(uint32_t root, const uint32_t *cands, size_t n, xp_ppid_fn fn, void *ctx,
		       bool *keep, bool *gone)
{
	uint32_t *seen = malloc(MAX_WALK * sizeof(*seen));
	size_t i;

	if (!seen)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t p = cands[i];
		size_t steps = 0, k;

		keep[i] = false;
		gone[i] = false;
		while (steps < MAX_WALK) {
			uint32_t pp;
			bool cycle = false;

			if (p == root) {
				keep[i] = true;
				break;
			}
			if (p == 0)
				break;
			for (k = 0; k < steps && !cycle; k++)
				cycle = seen[k] == p;
			if (cycle)
				break;
			seen[steps++] = p;
			if (fn(p, &pp, ctx)) {
				gone[i] = steps == 1;
				break;
			}
			p = pp;
		}
	}
	free(seen);
	return 0;
}

struct group {
	uint32_t pid;
	char **uuids;
	size_t n;
};

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cand_cmp(const void *a, const void *b)
{
	const struct xp_candidate *x = a, *y = b;

	return x->target.pid < y->target.pid ? -1 : x->target.pid > y->target.pid;
}

/* Group NVML entries by PID, UUIDs sorted and unique. */
static int group_procs(const struct xp_gpu_proc *p, size_t np, struct group **out, size_t *ng)
{
	struct group *g = NULL;
	size_t n = 0, i, j;

	*out = NULL;
	*ng = 0;
	if (np)
		g = calloc(np, sizeof(*g));
	if (np && !g)
		return -ENOMEM;
	for (i = 0; i < np; i++) {
		for (j = 0; j < n && g[j].pid != p[i].pid; j++)
			;
		if (j == n) {
			g[n].pid = p[i].pid;
			g[n].uuids = calloc(np, sizeof(char *));
			if (!g[n].uuids)
				goto fail;
			n++;
		}
		g[j].uuids[g[j].n] = strdup(p[i].uuid);
		if (!g[j].uuids[g[j].n])
			goto fail;
		g[j].n++;
	}
	for (j = 0; j < n; j++) {
		size_t k = 0;

		qsort(g[j].uuids, g[j].n, sizeof(char *), str_cmp);
		for (i = 0; i < g[j].n; i++) {
			if (k && strcmp(g[j].uuids[k - 1], g[j].uuids[i]) == 0) {
				free(g[j].uuids[i]);
				continue;
			}
			g[j].uuids[k++] = g[j].uuids[i];
		}
		g[j].n = k;
	}
	*out = g;
	*ng = n;
	return 0;
fail:
	for (j = 0; j <= n && j < np; j++) {
		for (i = 0; i < g[j].n; i++)
			free(g[j].uuids[i]);
		free(g[j].uuids);
	}
	free(g);
	return -ENOMEM;
}

static void candidate_free(struct xp_candidate *c)
{
	size_t i;

	free(c->executable);
	xp_argv_free(&c->argv);
	for (i = 0; i < c->ngpu_uuids; i++)
		free(c->gpu_uuids[i]);
	free(c->gpu_uuids);
	xp_target_release(&c->target);
	memset(c, 0, sizeof(*c));
}

void xp_discovery_free(struct xp_discovery *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		candidate_free(&d->v[i]);
	free(d->v);
	xp_warnings_free(&d->warnings);
	xp_target_release(&d->root);
	memset(d, 0, sizeof(*d));
}

static void exited_warning(struct xp_discovery *d, uint32_t pid)
{
	char details[64], msg[128];

	snprintf(details, sizeof(details), "{\"pid\":%u}", pid);
	snprintf(msg, sizeof(msg), "CUDA process %u reported by NVML is no longer running", pid);
	xp_warnings_add(&d->warnings, "CANDIDATE_EXITED", msg, details);
}

/* Step 5 for one PID: 0, 1 (gone: skip), or a negative error. */
static int fill_candidate(uint32_t pid, struct group *g, struct xp_candidate *c,
			  struct xp_error *err)
{
	struct xp_error e2 = { 0 };
	struct xp_proc_stat st;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = xp_target_identify(pid, &c->target, &e2);
	if (rc == -XPROBE_E_TARGET_NOT_FOUND) {
		xp_error_clear(&e2);
		return 1;
	}
	if (rc) {
		xp_error_move(err, &e2);
		return rc;
	}
	rc = xp_proc_stat_read(pid, 0, &st);
	if (!rc) {
		c->parent_pid = st.ppid;
		rc = xp_proc_exe(pid, &c->executable);
	}
	if (!rc)
		rc = xp_proc_cmdline(pid, &c->argv);
	if (!rc)
		rc = xp_target_verify(&c->target, &e2) ? -ENOENT : 0;
	xp_error_clear(&e2);
	/* the candidate's identity is settled: one pidfd at a time, however
	 * many candidates */
	xp_target_release(&c->target);
	if (rc == -ENOENT || rc == -ESRCH) {
		candidate_free(c);
		return 1;
	}
	if (rc) {
		struct xp_target t = c->target;

		c->target.has_pidfd = false; /* t owns the pidfd now */
		candidate_free(c);
		rc = xp_proc_fail(&t, "exe", rc, err);
		xp_target_release(&t);
		return rc;
	}
	/* take the UUIDs over from the group */
	c->gpu_uuids = g->uuids;
	c->ngpu_uuids = g->n;
	g->uuids = NULL;
	g->n = 0;
	return 0;
}

int xp_discover(uint32_t root_pid, uint64_t limit, struct xp_discovery *d, struct xp_error *err)
{
	struct xp_gpu_proc *procs = NULL;
	struct group *groups = NULL;
	struct xp_nvml *nvml = NULL;
	uint32_t *pids = NULL;
	bool *keep = NULL, *gone = NULL;
	size_t np = 0, ng = 0, i;
	int rc;

	memset(d, 0, sizeof(*d));
	d->limit = limit;
	/* 1. */
	rc = xp_target_identify(root_pid, &d->root, err);
	if (rc)
		return rc;
	/* 2. */
	if (limit == 0) {
		xp_error_detail_u64(err, "limit", 0);
		xp_error_hint(err, "pass --limit N with N >= 1 (default 200)");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "discover limit must be greater than zero");
	}
	rc = xp_target_verify(&d->root, err);
	if (rc)
		return rc;
	/* 3. */
	rc = xp_nvml_open(&nvml, err);
	if (rc)
		return rc;
	rc = xp_nvml_compute_procs(nvml, &procs, &np, err);
	xp_nvml_close(nvml);
	if (rc)
		return rc;
	rc = group_procs(procs, np, &groups, &ng);
	free(procs);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	/* 4. */
	pids = calloc(ng + 1, sizeof(*pids));
	keep = calloc(ng + 1, sizeof(*keep));
	gone = calloc(ng + 1, sizeof(*gone));
	d->v = calloc(ng + 1, sizeof(*d->v));
	if (!pids || !keep || !gone || !d->v) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	for (i = 0; i < ng; i++)
		pids[i] = groups[i].pid;
	if (xp_proctree_filter(d->root.pid, pids, ng, xp_proc_ppid, NULL, keep, gone)) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	/* 5. */
	for (i = 0; i < ng; i++) {
		if (gone[i])
			exited_warning(d, pids[i]);
		if (!keep[i])
			continue;
		rc = fill_candidate(pids[i], &groups[i], &d->v[d->n], err);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			exited_warning(d, pids[i]);
			rc = 0;
			continue;
		}
		d->n++;
	}
	/* 6. */
	qsort(d->v, d->n, sizeof(*d->v), cand_cmp);
	d->total_candidates = d->n;
	while (d->n > limit)
		candidate_free(&d->v[--d->n]);
	d->truncated = d->total_candidates > d->n;
	rc = xp_target_verify(&d->root, err);
out:
	for (i = 0; i < ng; i++) {
		size_t k;

		for (k = 0; k < groups[i].n; k++)
			free(groups[i].uuids[k]);
		free(groups[i].uuids);
	}
	free(groups);
	free(pids);
	free(keep);
	free(gone);
	return rc;
}
