/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_sample_profile.c - from a sorted stack table to the inventory's
 * frame table, function table and hotspots (struct xp_inv_cpu_profile).
 *
 * Owns: "once per distinct address" symbolization (every address of every
 * retained stack is collected, sorted, deduplicated, and symbolized once),
 * the function identity of a frame, inclusive/exclusive counting, the
 * selector hints and their one check per distinct function, and the
 * deterministic hotspot order.
 *
 * Function identity: a native frame is (binary, ELF symbol); a JIT or
 * Python frame is its perf-map symbol; the unresolved frames of one
 * mapping are one function (as perf's "[unknown]" of a DSO: libc's
 * unnamed addresses are one row, not one per address; the hotspot's
 * address is the lowest, its address count says how many), and an
 * unresolved frame outside every mapping is its own address.
 * Strings come from the symbolizer's table, where equal strings are one
 * pointer, so identities compare by pointer inside this file and by
 * content (strcmp) only for ordering.
 *
 * Counting: exclusive = samples whose leaf is the function; inclusive =
 * samples whose stack holds the function at least once (a recursive
 * function counts once per sample, marked by a per-function stamp).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/search.h"
#include "cpu_sample.h"

const char *xp_inv_hint_status_name(enum xp_inv_hint_status s)
{
	switch (s) {
	case XP_HINT_NONE:
		return "none";
	case XP_HINT_VALIDATED:
		return "validated";
	case XP_HINT_REJECTED:
		return "rejected";
	case XP_HINT_UNCHECKED:
		return "unchecked";
	}
	return "none";
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int strcmp_null(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

/* Key of a frame's function, ordered for grouping. */
static int frame_fn_cmp(const struct xp_inv_sym_frame *x, const struct xp_inv_sym_frame *y)
{
	int c;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	switch (x->kind) {
	case XP_FRAME_NATIVE:
		if ((c = strcmp_null(x->binary, y->binary)))
			return c;
		return strcmp_null(x->symbol, y->symbol);
	case XP_FRAME_JIT:
	case XP_FRAME_PYTHON:
		return strcmp_null(x->perf_map_symbol, y->perf_map_symbol);
	case XP_FRAME_UNRESOLVED:
		if (x->mapping && y->mapping)
			return strcmp(x->mapping, y->mapping);
		if (x->mapping || y->mapping)
			return x->mapping ? 1 : -1;
		break;
	}
	return x->address < y->address ? -1 : x->address > y->address;
}

static const struct xp_inv_cpu_frame *sort_frames_base;

static int frame_idx_cmp(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = frame_fn_cmp(&sort_frames_base[i].sym, &sort_frames_base[j].sym);

	if (c)
		return c;
	return i < j ? -1 : i > j;
}

/* Hotspot order: exclusive desc, inclusive desc, then identity. */
static int function_cmp(const void *a, const void *b)
{
	const struct xp_inv_cpu_function *x = a, *y = b;
	int c;

	if (x->exclusive != y->exclusive)
		return x->exclusive > y->exclusive ? -1 : 1;
	if (x->inclusive != y->inclusive)
		return x->inclusive > y->inclusive ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if ((c = strcmp_null(x->name, y->name)))
		return c;
	if ((c = strcmp_null(x->binary, y->binary)))
		return c;
	return x->address < y->address ? -1 : x->address > y->address;
}

static const struct xp_inv_cpu_function *sort_functions_base;

static int function_idx_cmp(const void *a, const void *b)
{
	return function_cmp(&sort_functions_base[*(const uint32_t *)a],
			    &sort_functions_base[*(const uint32_t *)b]);
}

struct frame_key {
	const struct xp_inv_cpu_profile *p;
	uint64_t addr;
};

static bool frame_below(const void *ctx, size_t i)
{
	const struct frame_key *k = ctx;

	return k->p->frames[i].sym.address < k->addr;
}

static uint32_t frame_index(const struct xp_inv_cpu_profile *p, uint64_t addr)
{
	struct frame_key k = { p, addr };

	/* present by construction */
	return (uint32_t)xpc_partition_point(p->nframes, frame_below, &k);
}

static char *make_hint(const char *binary, const char *symbol)
{
	size_t n = strlen(binary) + strlen(symbol) + sizeof("uprobe:::entry");
	char *h = malloc(n);

	if (h)
		snprintf(h, n, "uprobe:%s:%s:entry", binary, symbol);
	return h;
}

int xp_inv_cpu_profile_build(struct xp_inv_cpu_sample_result *r, struct xp_inv_symbolizer *sym,
			     xp_hint_check_fn check, void *check_ctx, struct xp_inv_cpu_profile *p)
{
	const struct xp_inv_stack_table *t = &r->stacks;
	uint64_t *addrs = NULL, *stamp = NULL;
	uint32_t *order = NULL, *remap = NULL;
	size_t total = 0, n = 0, i, j, nf = 0;
	int rc = -ENOMEM;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < t->n; i++)
		total += t->groups[i].nframes;

	/* 1. distinct addresses, each symbolized once */
	addrs = malloc((total ? total : 1) * sizeof(*addrs));
	if (!addrs)
		goto out;
	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->groups[i].nframes; j++)
			addrs[n++] = t->groups[i].frames[j];
	qsort(addrs, n, sizeof(*addrs), u64_cmp);
	for (i = 0, j = 0; i < n; i++)
		if (!j || addrs[j - 1] != addrs[i])
			addrs[j++] = addrs[i];
	n = j;
	p->frames = calloc(n ? n : 1, sizeof(*p->frames));
	if (!p->frames || xp_inv_symbolizer_prepare(sym, addrs, n))
		goto out;
	p->nframes = n;
	for (i = 0; i < n; i++) {
		struct xp_inv_sym_frame *f = &p->frames[i].sym;

		xp_inv_symbolize(sym, addrs[i], f);
		switch (f->kind) {
		case XP_FRAME_NATIVE:
			p->native_frames++;
			break;
		case XP_FRAME_JIT:
			p->jit_frames++;
			break;
		case XP_FRAME_PYTHON:
			p->python_frames++;
			break;
		case XP_FRAME_UNRESOLVED:
			p->unresolved_frames++;
			break;
		}
		if (f->perf_map_symbol)
			p->perf_map_frames++;
	}

	/* 2. functions: group frames by identity */
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		goto out;
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_frames_base = p->frames;
	qsort(order, n, sizeof(*order), frame_idx_cmp);
	sort_frames_base = NULL;
	p->functions = calloc(n ? n : 1, sizeof(*p->functions));
	if (!p->functions)
		goto out;
	for (i = 0; i < n; i++) {
		struct xp_inv_cpu_frame *fr = &p->frames[order[i]];
		struct xp_inv_cpu_function *fn;

		if (nf && frame_fn_cmp(&p->frames[order[i - 1]].sym, &fr->sym) == 0) {
			fr->function = (uint32_t)(nf - 1);
			p->functions[nf - 1].naddresses++;
			continue;
		}
		fn = &p->functions[nf];
		fn->naddresses = 1;
		fn->kind = fr->sym.kind;
		fn->binary = fr->sym.binary;
		fn->symbol = fr->sym.symbol;
		fn->perf_map_symbol = fr->sym.perf_map_symbol;
		fn->mapping = fr->sym.mapping;
		switch (fr->sym.kind) {
		case XP_FRAME_NATIVE:
			fn->name = fr->sym.symbol;
			break;
		case XP_FRAME_JIT:
		case XP_FRAME_PYTHON:
			fn->name = fr->sym.perf_map_symbol;
			break;
		case XP_FRAME_UNRESOLVED:
			fn->name = NULL;
			fn->address = fr->sym.address;
			break;
		}
		fr->function = (uint32_t)nf++;
	}
	p->nfunctions = nf;

	/* 3. per-group frame indices and the counts */
	p->group_frames = calloc(t->n ? t->n : 1, sizeof(*p->group_frames));
	stamp = calloc(nf ? nf : 1, sizeof(*stamp));
	if (!p->group_frames || !stamp)
		goto out;
	for (i = 0; i < t->n; i++) {
		const struct xp_inv_stack_group *g = &t->groups[i];
		bool python = false, interp = false;
		uint32_t *gf = malloc(g->nframes * sizeof(*gf));

		if (!gf)
			goto out;
		p->group_frames[i] = gf;
		for (j = 0; j < g->nframes; j++) {
			struct xp_inv_cpu_frame *fr;
			struct xp_inv_cpu_function *fn;

			gf[j] = frame_index(p, g->frames[j]);
			fr = &p->frames[gf[j]];
			fn = &p->functions[fr->function];
			if (stamp[fr->function] != i + 1) {
				stamp[fr->function] = i + 1;
				fn->inclusive += g->count;
			}
			if (fr->sym.kind == XP_FRAME_PYTHON)
				python = true;
			if (fr->sym.interpreter)
				interp = true;
		}
		{
			struct xp_inv_cpu_frame *leaf = &p->frames[gf[0]];

			leaf->leaf_samples += g->count;
			p->functions[leaf->function].exclusive += g->count;
			if (leaf->sym.kind == XP_FRAME_UNRESOLVED)
				p->unresolved_leaf_samples += g->count;
		}
		if (python)
			p->python_samples += g->count;
		if (interp)
			p->interpreter_samples += g->count;
	}

	/* 4. hints, one check per native function */
	for (i = 0; i < nf; i++) {
		struct xp_inv_cpu_function *fn = &p->functions[i];
		int crc;

		if (fn->kind != XP_FRAME_NATIVE)
			continue;
		fn->selector_hint = make_hint(fn->binary, fn->symbol);
		if (!fn->selector_hint)
			goto out;
		if (!check) {
			fn->hint_status = XP_HINT_UNCHECKED;
			continue;
		}
		crc = check(check_ctx, fn->selector_hint);
		if (crc == 0) {
			fn->hint_status = XP_HINT_VALIDATED;
			p->hints_validated++;
			continue;
		}
		fn->hint_status = XP_HINT_REJECTED;
		fn->hint_error = strdup(xprobe_errname(crc));
		free(fn->selector_hint);
		fn->selector_hint = NULL;
		p->hints_rejected++;
		if (!fn->hint_error)
			goto out;
	}

	/* 5. hotspot order; the frames' function indices follow it */
	{
		struct xp_inv_cpu_function *sorted;

		remap = malloc((nf ? nf : 1) * sizeof(*remap));
		sorted = malloc((nf ? nf : 1) * sizeof(*sorted));
		if (!remap || !sorted) {
			free(sorted);
			goto out;
		}
		for (i = 0; i < nf; i++)
			order[i] = (uint32_t)i;
		sort_functions_base = p->functions;
		qsort(order, nf, sizeof(*order), function_idx_cmp);
		sort_functions_base = NULL;
		for (i = 0; i < nf; i++) {
			sorted[i] = p->functions[order[i]];
			remap[order[i]] = (uint32_t)i;
		}
		free(p->functions);
		p->functions = sorted;
		for (i = 0; i < n; i++)
			p->frames[i].function = remap[p->frames[i].function];
	}
	rc = 0;
out:
	free(addrs);
	free(order);
	free(remap);
	free(stamp);
	if (rc)
		xp_inv_cpu_profile_free(p, t->n);
	return rc;
}

void xp_inv_cpu_profile_free(struct xp_inv_cpu_profile *p, size_t ngroups)
{
	size_t i;

	for (i = 0; p->functions && i < p->nfunctions; i++) {
		free(p->functions[i].selector_hint);
		free(p->functions[i].hint_error);
	}
	for (i = 0; p->group_frames && i < ngroups; i++)
		free(p->group_frames[i]);
	free(p->group_frames);
	free(p->functions);
	free(p->frames);
	memset(p, 0, sizeof(*p));
}
