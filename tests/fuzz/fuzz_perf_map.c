// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_perf_map.c - /tmp/perf-<pid>.map as `measure --cpu-sample` reads it
 * (src/inventory/symbolize.c): the file is written by the target process, so
 * it is untrusted input.  Parse it, then look up addresses at and around
 * every entry and check the lookup's contract: a hit covers the address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_strtab st;
	struct xp_inv_perf_map m;
	size_t i;

	xp_strtab_init(&st);
	if (xp_inv_perf_map_parse((const char *)data, size, &st, NULL, 0, &m) == 0) {
		for (i = 0; i < m.n; i++) {
			uint64_t probes[3] = { m.v[i].start, m.v[i].start + m.v[i].size - 1,
					       m.v[i].start + m.v[i].size };
			int k;

			if (i && m.v[i - 1].start >= m.v[i].start)
				abort(); /* sorted, unique starts */
			if (!xp_strtab_get(&st, m.v[i].name))
				abort();
			for (k = 0; k < 3; k++) {
				const struct xp_inv_perf_map_entry *e =
					xp_inv_perf_map_lookup(&m, probes[k]);

				if (e && (probes[k] < e->start || probes[k] - e->start >= e->size))
					abort();
			}
		}
	}
	xp_inv_perf_map_free(&m);
	/* filtered: every kept entry covers one of the wanted addresses */
	{
		static const uint64_t want[] = { 0x1000, 0x2008, 0x7f0000001010 };
		size_t k;

		if (xp_inv_perf_map_parse((const char *)data, size, &st, want, 3, &m) == 0) {
			for (i = 0; i < m.n; i++) {
				int covers = 0;

				for (k = 0; k < 3; k++)
					covers |= want[k] - m.v[i].start < m.v[i].size;
				if (!covers)
					abort();
			}
		}
		xp_inv_perf_map_free(&m);
	}
	xp_strtab_free(&st);
	return 0;
}
