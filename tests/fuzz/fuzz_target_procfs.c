// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_target_procfs.c - the target module's text and binary parsers of
 * outside data: /proc/<pid>/maps, status, stat, cmdline, and the
 * ld.so.cache reader.  The first byte picks the parser, the rest is the
 * input; each parser must reject or accept without reading past it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "process/identity.h"
#include "checks/ldcache.h"
#include "process/procfs.h"

static int count(const char *name, const char *path, void *ctx)
{
	(*(size_t *)ctx) += strlen(name) + strlen(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	size_t n = 0;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 5) {
	case 0: {
		struct xp_maps m;
		size_t bad, *idx;

		if (xp_maps_parse(text, &m, &bad) == 0) { /* takes text */
			if (xp_maps_files(&m, &idx) > 0)
				free(idx);
			xp_maps_free(&m);
		}
		return 0;
	}
	case 1: {
		struct xp_proc_status st;

		xp_status_parse(text, &st);
		break;
	}
	case 2: {
		struct xp_proc_stat st;

		xp_proc_stat_parse(text, &st);
		break;
	}
	case 3: {
		struct xp_argv a;

		if (xp_cmdline_parse(text, size - 1, &a) == 0) { /* takes text */
			xp_argv_free(&a);
			return 0;
		}
		break;
	}
	case 4:
		xp_ldcache_parse(data + 1, size - 1, "", count, &n);
		xp_ldcache_parse(data + 1, size - 1, "libcupti.so.", count, &n);
		break;
	}
	free(text);
	return 0;
}
