/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_xtf.c - libFuzzer target of the strict .xtf reader
 * (xprobe_xtf_open_mem).  Whatever the bytes, the reader must either
 * refuse them with -XPROBE_E_FORMAT and a reason, or accept a file whose
 * every record can then be walked and whose every accessor answers; it
 * must never crash, read out of bounds, leak or accept a truncated prefix
 * of what it accepted.  Seeds: tests/fuzz/corpus/fuzz_xtf/ (a device
 * profile, ntrace.pb, trace_info.pb, cpu_util.pb, host_mem.pb of a small
 * sim session).
 *
 * Each input is tried twice: as is (checksum and framing checks), and with
 * its three CRC32C fields recomputed from the offsets it declares, so that
 * mutations get past the checksums into the protobuf metadata and the
 * record walk.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xprobe/xprobe.h"
#include "xtf_fuzz_util.h"

static int one(const uint8_t *data, size_t size, int check_prefix);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	one(data, size, 1);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fz_fix_checksums(copy, size);
	one(copy, size, 0);
	free(copy);
	return 0;
}

static int one(const uint8_t *data, size_t size, int check_prefix)
{
	struct xprobe_xtf *x = NULL;
	char err[256];
	int rc;

	rc = xprobe_xtf_open_mem(data, size, &x, err, sizeof(err));
	if (rc) {
		if (x || (rc == -XPROBE_E_FORMAT && !err[0]))
			abort(); /* a refusal leaves nothing and says why */
		return 0;
	}
	fz_walk(x);
	xprobe_xtf_close(x);
	/* an accepted file's strict prefix is never accepted */
	if (check_prefix && size > 0) {
		x = NULL;
		if (xprobe_xtf_open_mem(data, size - 1, &x, err, sizeof(err)) == 0)
			abort();
	}
	return 0;
}
