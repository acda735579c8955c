/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtf_fuzz_util.h - what the libFuzzer targets of libxprobe's readers
 * share (header-only): recomputing an .xtf file's three CRC32C fields from
 * the offsets it declares, so that mutations get past the checksums into
 * the metadata and the record walk; laying out a ring file from its parts;
 * and walking an accepted file's every record and accessor.
 */
#ifndef XPL_XTF_FUZZ_UTIL_H
#define XPL_XTF_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <string.h>
#include <unistd.h>

#include "xprobe/xprobe.h"
#include "xtf/crc32c.h"
#include "xtf/xtf_internal.h"

#define FZ_RINGFILE_MAX (64ull << 20)
#define FZ_RINGS 16

static inline uint64_t fz_get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void fz_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Make the header, metadata and blob CRCs of @b right for its content. */
static inline void fz_fix_checksums(uint8_t *b, size_t size)
{
	uint64_t mo, ml, bo, bl;

	if (size < 128)
		return;
	mo = fz_get64(b + 24);
	ml = fz_get64(b + 32);
	bo = fz_get64(b + 40);
	bl = fz_get64(b + 48);
	if (mo <= size && ml <= size - mo)
		fz_put32(b + 64, xpl_crc32c(0, b + mo, ml));
	if (bo <= size && bl <= size - bo)
		fz_put32(b + 68, xpl_crc32c(0, b + bo, bl));
	fz_put32(b + 124, xpl_crc32c(0, b, 124));
}

/* Walk every record, file entry and note of an accepted @x; abort on any
 * broken promise of the reader.  Returns the records walked. */
static inline uint64_t fz_walk(const struct xprobe_xtf *x)
{
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	uint64_t total = 0;

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
		total += n;
	}
	for (size_t i = 0; i < in.files; i++)
		if (xprobe_xtf_get_file(x, i, NULL, NULL, NULL))
			abort();
	for (size_t i = 0; i < in.notes; i++)
		if (!xprobe_xtf_get_note(x, i))
			abort();
	return total;
}

static inline void fz_pwrite_all(int fd, const void *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n <= 0)
			return;
		p = (const uint8_t *)p + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
}

/*
 * A ring file (host_rings.live) from its parts: the input is
 *   [struct xpl_ringfile_hdr] [64-byte controls of the used rings, at most
 *   FZ_RINGS] [ring 0's bytes from tail to head] [ring 1's ...] ...
 * laid out where the header puts them, in @fd grown to the size the header
 * declares when that is at most FZ_RINGFILE_MAX (a ring file is mostly
 * holes; otherwise @fd keeps what was written and the reader's size check
 * refuses it).
 */
static inline void fz_ringfile_write(int fd, const uint8_t *data, size_t size)
{
	struct xpl_ringfile_hdr h;
	uint64_t data_off, total, rings;
	size_t off = sizeof(h), nctl;

	memset(&h, 0, sizeof(h));
	memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
	fz_pwrite_all(fd, data, size < sizeof(h) ? size : sizeof(h), 0);
	if (size <= off || !h.ring_bytes || h.ring_bytes > FZ_RINGFILE_MAX || h.max_rings > 4096)
		return;
	data_off = (4096 + (uint64_t)h.max_rings * sizeof(struct xpl_ring_ctl) + 4095) & ~4095ull;
	total = data_off + (uint64_t)h.max_rings * h.ring_bytes;
	if (total > FZ_RINGFILE_MAX || ftruncate(fd, (off_t)total) != 0)
		return;
	rings = h.rings_used < h.max_rings ? h.rings_used : h.max_rings;
	if (rings > FZ_RINGS)
		rings = FZ_RINGS;
	nctl = rings * sizeof(struct xpl_ring_ctl);
	if (nctl > size - off)
		nctl = size - off;
	fz_pwrite_all(fd, data + off, nctl, 4096);
	off += nctl;
	/* ring i holds [tail, head): its bytes come next in the input, written
	 * from the tail and wrapping at the ring's end as the producer does */
	for (uint64_t i = 0; i < rings && off < size; i++) {
		struct xpl_ring_ctl c;
		uint64_t n, at, base = data_off + i * h.ring_bytes;

		if ((i + 1) * sizeof(c) > nctl)
			break;
		memcpy(&c, data + sizeof(h) + i * sizeof(c), sizeof(c));
		n = c.head > c.tail ? c.head - c.tail : 0;
		if (n > h.ring_bytes)
			n = h.ring_bytes;
		if (n > size - off)
			n = size - off;
		at = c.tail % h.ring_bytes;
		if (at + n <= h.ring_bytes) {
			fz_pwrite_all(fd, data + off, n, base + at);
		} else {
			fz_pwrite_all(fd, data + off, h.ring_bytes - at, base + at);
			fz_pwrite_all(fd, data + off + (h.ring_bytes - at), n - (h.ring_bytes - at),
				      base);
		}
		off += n;
	}
}

#endif /* XPL_XTF_FUZZ_UTIL_H */
