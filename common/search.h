/* SPDX-License-Identifier: Apache-2.0 */
/*
 * search.h - the one binary search of the CLI: the partition point of a
 * range ordered by a predicate.  Every lookup in a sorted table (the
 * symbolizer's regions and perf map, a profile's frames, the correlator's
 * window and end buckets, the ELF reader's ranges, the endpoint listing's
 * signatures) asks "the first element that is not below the key" and
 * derives its answer (lower bound, upper bound, the last entry at or
 * before an address) from that one index.
 *
 * static inline, so that with a static predicate the compiler inlines the
 * call and the loop costs what the hand-written one did.
 */
#ifndef XPC_SEARCH_H
#define XPC_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The first index i in [0, @n) for which @below(@ctx, i) is false, or @n.
 * @below must hold for a prefix of the range and for nothing after it
 * (the range is sorted by it).  lower bound: below(i) = v[i] < key; upper
 * bound: below(i) = v[i] <= key (its index - 1 is the last v[i] <= key).
 */
static inline size_t xpc_partition_point(size_t n, bool (*below)(const void *ctx, size_t i),
					 const void *ctx)
{
	size_t lo = 0, hi = n;

	/* invariant: below(i) for every i < lo, !below(i) for every i >= hi */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (below(ctx, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif /* XPC_SEARCH_H */
