/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explain.c - the stacks of --explain's slowest pairs (latency_histogram.h:
 * xp_inv_ex_add_stack, xp_inv_ex_symbolize), for --histogram and the exact
 * modes alike: kernel frames named by /proc/kallsyms, the target's user
 * frames by its symbolizer (the one --cpu-sample uses: ELF symbols, debug
 * files, perf maps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "latency_histogram.h"
#include "symbolize.h"

static char *kernel_name(const struct xp_inv_kallsyms *k, uint64_t ip)
{
	uint64_t off = 0;
	const char *s = k->n ? xp_inv_kallsyms_find(k, ip, &off) : NULL;

	return strdup(s ? s : "[unknown]");
}

static char *user_name(struct xp_inv_symbolizer *sym, bool have, uint64_t ip)
{
	struct xp_inv_sym_frame f;

	if (!have)
		return strdup("[unknown]");
	memset(&f, 0, sizeof(f));
	xp_inv_symbolize(sym, ip, &f);
	if (f.symbol)
		return strdup(f.symbol);
	if (f.perf_map_symbol)
		return strdup(f.perf_map_symbol);
	return strdup("[unknown]");
}

/*
 * A kernel stack taken by a tracepoint program starts (innermost) with the
 * tracing itself: the BPF program's JIT image, bpf_trace_run<N>, and with
 * more than one program on the tracepoint (another tool's too) its
 * iterator, __traceiter_<name>, or the __bpf_trace_<name> stub.  Drop
 * those frames so the stack starts where the task was (schedule,
 * try_to_wake_up), as offcputime's do.
 */
static bool tracing_frame(const char *name)
{
	return name && (!strncmp(name, "bpf_trace_run", 13) || !strncmp(name, "__traceiter_", 12) ||
			!strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "bpf_prog_", 9));
}

static void trim_tracing(struct xp_inv_ex_stack *st)
{
	uint32_t i, cut = 0;

	for (i = 0; i < st->n && i < 6; i++)
		if (tracing_frame(st->names[i]))
			cut = i + 1;
	if (!cut)
		return;
	for (i = 0; i < cut; i++)
		free(st->names[i]);
	memmove(st->names, st->names + cut, (st->n - cut) * sizeof(st->names[0]));
	memmove(st->ip, st->ip + cut, (st->n - cut) * sizeof(st->ip[0]));
	st->n -= cut;
}

int xp_inv_ex_add_stack(struct xp_inv_ex_result *ex, int32_t id, bool kernel, uint32_t pid,
			const uint64_t *ip, uint32_t n)
{
	struct xp_inv_ex_stack *st, *ns;

	if (id < 0 || xp_inv_ex_stack_find(ex, id))
		return 0;
	ns = realloc(ex->stacks, (ex->nstacks + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ex->stacks = ns;
	st = &ex->stacks[ex->nstacks++];
	memset(st, 0, sizeof(*st));
	if (n > XP_EX_STACK_DEPTH)
		n = XP_EX_STACK_DEPTH;
	memcpy(st->ip, ip, n * sizeof(*ip));
	st->id = id;
	st->n = n;
	st->kernel = kernel;
	st->pid = pid;
	return 0;
}

void xp_inv_ex_result_free(struct xp_inv_ex_result *ex)
{
	size_t i;
	uint32_t j;

	free(ex->buckets);
	free(ex->blocked);
	free(ex->slow);
	for (i = 0; i < ex->nstacks; i++)
		for (j = 0; j < ex->stacks[i].n; j++)
			free(ex->stacks[i].names[j]);
	free(ex->stacks);
	memset(ex, 0, sizeof(*ex));
}

int xp_inv_ex_symbolize(struct xp_inv_ex_result *ex, uint32_t pid, uint32_t ns_pid)
{
	struct xp_inv_kallsyms ks;
	struct xp_inv_symbolizer sym;
	struct xp_error err = { 0 };
	bool have_sym = false, any_k = false, any_u = false;
	size_t i;
	uint32_t j;
	int rc = 0;

	memset(&ks, 0, sizeof(ks));
	for (i = 0; i < ex->nstacks; i++) {
		any_k |= ex->stacks[i].kernel;
		any_u |= !ex->stacks[i].kernel && ex->stacks[i].pid == pid;
	}
	if (any_k)
		xp_inv_kallsyms_load(&ks, NULL); /* unreadable: frames stay unknown */
	if (any_u && !xp_inv_symbolizer_open(pid, ns_pid, &sym, &err)) {
		have_sym = true;
	}
	xp_error_clear(&err);
	for (i = 0; i < ex->nstacks && !rc; i++) {
		struct xp_inv_ex_stack *st = &ex->stacks[i];

		for (j = 0; j < st->n; j++) {
			free(st->names[j]);
			st->names[j] =
				st->kernel ? kernel_name(&ks, st->ip[j]) :
					     user_name(&sym, have_sym && st->pid == pid, st->ip[j]);
			if (!st->names[j]) {
				rc = -ENOMEM;
				break;
			}
		}
		if (!rc && st->kernel)
			trim_tracing(st);
	}
	if (have_sym)
		xp_inv_symbolizer_close(&sym);
	xp_inv_kallsyms_free(&ks);
	return rc;
}
