// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_kallsyms.c - /proc/kallsyms as --explain reads it
 * (src/inventory/kallsyms.c): parse any text, then check the table's
 * contract -- sorted by address, every kept symbol a text symbol with a
 * non-zero address, and a lookup at a symbol's address finds a symbol at
 * exactly that address (offset 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "inventory/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_inv_kallsyms k;
	FILE *f = fmemopen((void *)data, size, "r");
	size_t i;

	if (!size || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	if (xp_inv_kallsyms_parse(&k, f) == 0) {
		for (i = 0; i < k.n; i++) {
			uint64_t off = ~0ull;
			const char *s;

			if (!k.v[i].addr || (i && k.v[i - 1].addr > k.v[i].addr))
				abort();
			s = xp_inv_kallsyms_find(&k, k.v[i].addr, &off);
			if (!s || off != 0)
				abort();
		}
		xp_inv_kallsyms_free(&k);
	}
	fclose(f);
	return 0;
}
