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
#include "xtf/crc32c.h"

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_checksums(uint8_t *b, size_t size)
{
	uint64_t mo, ml, bo, bl;

	if (size < 128)
		return;
	mo = get64(b + 24);
	ml = get64(b + 32);
	bo = get64(b + 40);
	bl = get64(b + 48);
	if (mo <= size && ml <= size - mo)
		put32(b + 64, xpl_crc32c(0, b + mo, ml));
	if (bo <= size && bl <= size - bo)
		put32(b + 68, xpl_crc32c(0, b + bo, bl));
	put32(b + 124, xpl_crc32c(0, b, 124));
}

static int one(const uint8_t *data, size_t size, int check_prefix);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	one(data, size, 1);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_checksums(copy, size);
	one(copy, size, 0);
	free(copy);
	return 0;
}

static int one(const uint8_t *data, size_t size, int check_prefix)
{
	struct xprobe_xtf *x = NULL;
	struct xprobe_xtf_info in;
	char err[256];
	int rc;

	rc = xprobe_xtf_open_mem(data, size, &x, err, sizeof(err));
	if (rc) {
		if (x || (rc == -XPROBE_E_FORMAT && !err[0]))
			abort(); /* a refusal leaves nothing and says why */
		return 0;
	}
	memset(&in, 0, sizeof(in));
	in.sz = sizeof(in);
	if (xprobe_xtf_get_info(x, &in))
		abort();
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream s;
		const struct xprobe_record *r;
		size_t cur = 0;
		uint64_t n = 0;

		if (xprobe_xtf_get_stream(x, i, &s))
			abort();
		while ((r = xprobe_xtf_next_record(&s, &cur))) {
			if (r->size < XPROBE_RECORD_HDR_SIZE || !xprobe_event_type_name(r->type))
				abort();
			n++;
		}
		if (n != s.records)
			abort();
	}
	for (size_t i = 0; i < in.files; i++)
		if (xprobe_xtf_get_file(x, i, NULL, NULL, NULL))
			abort();
	for (size_t i = 0; i < in.notes; i++)
		if (!xprobe_xtf_get_note(x, i))
			abort();
	xprobe_xtf_close(x);
	/* an accepted file's strict prefix is never accepted */
	if (check_prefix && size > 0) {
		x = NULL;
		if (xprobe_xtf_open_mem(data, size - 1, &x, err, sizeof(err)) == 0)
			abort();
	}
	return 0;
}
