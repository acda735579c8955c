// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_target_elf.c - ELF files as the resolver reads them (xelf.c): the
 * input is written to a memfd and opened by path like a mapped object,
 * then every question validate asks is asked: symbol lookups (raw,
 * demangled C++ signature), close matches, build id, segments, USDT notes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resolve/xelf.h"

static int note(const struct xp_usdt_note *n, void *ctx)
{
	(*(size_t *)ctx) += strlen(n->provider) + strlen(n->name) + strlen(n->args);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "main", "fx_add", "xp_fx::over(long)",
					     "_ZN5xp_fx4overEl", "ns::K::~K()" };
	struct xp_sym_matches m;
	struct xp_elf e;
	char path[64], *cm[5], *id;
	size_t i, n = 0, k;
	uint64_t v, s, off;
	int fd = memfd_create("fuzz-elf", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (xp_elf_open(path, &e) == 0) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (xp_elf_lookup(&e, names[i], &m) == 0) {
				if (m.n && xp_elf_va_to_offset(&e, m.v[0].value, &off) == 0)
					xp_elf_offset_executable(&e, off);
				xp_sym_matches_free(&m);
			}
			k = xp_elf_close_matches(&e, names[i], cm, 5);
			while (k)
				free(cm[--k]);
		}
		if (xp_elf_lookup_any(&e, "Py_Version", &v, &s) == 0 && s <= 8) {
			uint64_t buf;

			xp_elf_read_va(&e, v, &buf, (size_t)s);
		}
		id = xp_elf_build_id(&e);
		free(id);
		xp_elf_usdt_notes(&e, note, &n);
		xp_elf_close(&e);
	}
	close(fd);
	return 0;
}
