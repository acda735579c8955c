/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inventory_explain.c - the pure parts of --explain's collector:
 * /proc/kallsyms as a sorted table (src/inventory/kallsyms.c: text symbols
 * only, zero addresses dropped, "the last symbol at or before"), the fold
 * of the kernel's explain sums (latency_histogram_summary.c), and the
 * lookup of a captured stack by id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory/kallsyms.h"
#include "inventory/latency_histogram.h"
#include "testlib.h"

static void test_kallsyms(void)
{
	char path[] = "/tmp/xp-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct xp_inv_kallsyms k;
	uint64_t off = 0;

	CHECK(f != NULL);
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81002000 t schedule\t\n"
	      "ffffffff81001000 T do_syscall_64\n"
	      "ffffffff82000000 D some_data\n"
	      "0000000000000000 T hidden_by_kptr_restrict\n"
	      "ffffffff81003000 t try_to_wake_up [kvm]\n"
	      "garbage line\n",
	      f);
	fclose(f);
	CHECK(xp_inv_kallsyms_load(&k, path) == 0);
	CHECK_EQ_U64(k.n, 4); /* no data symbol, no zero address */
	CHECK_STR(xp_inv_kallsyms_find(&k, 0xffffffff81002010ull, &off), "schedule");
	CHECK_EQ_U64(off, 0x10);
	CHECK_STR(xp_inv_kallsyms_find(&k, 0xffffffff81001fffull, &off), "do_syscall_64");
	CHECK_STR(xp_inv_kallsyms_find(&k, 0xffffffff81003000ull, &off), "try_to_wake_up");
	CHECK_EQ_U64(off, 0);
	CHECK(xp_inv_kallsyms_find(&k, 0xffffffff80000000ull, &off) == NULL);
	xp_inv_kallsyms_free(&k);
	CHECK(xp_inv_kallsyms_load(&k, "/nonexistent/kallsyms") < 0);
	CHECK_EQ_U64(k.n, 0);
	unlink(path);
}

static void test_fold(void)
{
	static struct xp_lh_hist h;
	static struct xp_inv_lh_dist d;

	memset(&h, 0, sizeof(h));
	memset(&d, 0, sizeof(d));
	h.buckets[40] = 3;
	h.sum_ns = 3000;
	h.max_ns = 1200;
	h.min_inv = ~(uint64_t)800;
	h.ex.comp[XP_EX_ON_CPU] = 1000;
	h.ex.comp[XP_EX_RUNQ] = 500;
	h.ex.comp[XP_EX_BLOCKED_S] = 1400;
	h.ex.comp[XP_EX_BLOCKED_D] = 100;
	h.ex.nvcsw = 2;
	h.ex.nivcsw = 1;
	h.ex.pairs = 3;
	xp_inv_lh_hist_fold(&d, &h);
	xp_inv_lh_hist_fold(&d, &h); /* a second CPU's copy */
	CHECK_EQ_U64(d.count, 6);
	CHECK_EQ_U64(d.ex.pairs, 6);
	CHECK_EQ_U64(d.ex.comp[XP_EX_ON_CPU] + d.ex.comp[XP_EX_RUNQ] + d.ex.comp[XP_EX_BLOCKED_S] +
			     d.ex.comp[XP_EX_BLOCKED_D],
		     d.sum_ns);
	CHECK_EQ_U64(d.ex.nvcsw, 4);
	CHECK_EQ_U64(d.ex.nivcsw, 2);
}

static void test_stack_find(void)
{
	struct xp_inv_ex_stack st[2];
	struct xp_inv_ex_result ex;

	memset(st, 0, sizeof(st));
	memset(&ex, 0, sizeof(ex));
	st[0].id = 7;
	st[1].id = 9;
	ex.stacks = st;
	ex.nstacks = 2;
	CHECK(xp_inv_ex_stack_find(&ex, 9) == &st[1]);
	CHECK(xp_inv_ex_stack_find(&ex, 8) == NULL);
	CHECK(xp_inv_ex_stack_find(&ex, -14) == NULL); /* bpf_get_stackid's -EFAULT */
}

int main(void)
{
	test_kallsyms();
	test_fold();
	test_stack_find();
	TEST_MAIN_END();
}
