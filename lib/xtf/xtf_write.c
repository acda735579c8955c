/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtf_write.c - the .xtf writer: header, packed Capture metadata, record
 * blobs, checksums, and the temporary-then-rename dance.
 *
 * It is the one writer of every libxprobe file, and it runs on the
 * fatal-signal stop path, so with a caller scratch buffer it is
 * async-signal-safe: protobuf_c_message_get_packed_size/pack only walk
 * memory, CRC32C is table/instruction based, and the rest is getrandom(2),
 * openat(2), write(2), pwrite(2), renameat2(2), fstatat(2), close(2).
 *
 * Where it writes, nothing planted is followed or reused.  Files are
 * written relative to a directory descriptor (the session directory,
 * opened without following links).  The temporary is
 * "<name>.tmp.<pid>.<64 random bits in hex>", created with O_CREAT|O_EXCL|
 * O_NOFOLLOW, mode 0600: an existing file, FIFO, hard link or symbolic
 * link of that name is never opened, truncated or written through.  The
 * rename onto <name> replaces only a regular file (RENAME_NOREPLACE
 * first); a symbolic link there is refused with -ELOOP, anything else that
 * is not a regular file with -EEXIST, and the temporary is removed.  The blob section is written
 * straight from the producers' memory (ring segments, activity buffers):
 * nothing is copied.
 *
 * Order: offsets of every stream are assigned first (their lengths are
 * known), the metadata is packed and written at 128, zero padding to the
 * next multiple of 8, then the blobs while their CRC accumulates; the
 * header, which holds both CRCs, is written last at offset 0.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "crc32c.h"
#include "xtf_internal.h"

void xpl_xtf_header_encode(uint8_t out[XPROBE_XTF_HEADER_SIZE], const struct xpl_xtf_header *h)
{
	memset(out, 0, XPROBE_XTF_HEADER_SIZE);
	memcpy(out, XPL_XTF_MAGIC, 8);
	xpl_put_u16(out + 8, h->version_major);
	xpl_put_u16(out + 10, h->version_minor);
	xpl_put_u32(out + 12, h->header_size);
	xpl_put_u32(out + 16, h->flags);
	xpl_put_u32(out + 20, h->kind);
	xpl_put_u64(out + 24, h->meta_offset);
	xpl_put_u64(out + 32, h->meta_length);
	xpl_put_u64(out + 40, h->blob_offset);
	xpl_put_u64(out + 48, h->blob_length);
	xpl_put_u64(out + 56, h->file_length);
	xpl_put_u32(out + 64, h->meta_crc);
	xpl_put_u32(out + 68, h->blob_crc);
	xpl_put_u32(out + 72, h->record_format);
	xpl_put_u32(out + 76, h->record_header_size);
	xpl_put_u64(out + 80, h->created_ns);
	xpl_put_u32(out + 124, xpl_crc32c(0, out, 124));
}

/* 64 unpredictable bits: getrandom, else a mix of what differs between
 * calls (async-signal-safe either way). */
static uint64_t tmp_nonce(void)
{
	static _Atomic uint64_t seq;
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec << 32 ^
	    (uint64_t)(uintptr_t)&ts ^ (uint64_t)getpid() << 48 ^ atomic_fetch_add(&seq, 1);
	return v ^ (v >> 29);
}

int xpl_xtf_write_at(int dirfd, const char *name, const struct xpl_xtf_write_args *a,
		     uint64_t *size)
{
	static const uint8_t zeros[8];
	uint8_t hdr_bytes[XPROBE_XTF_HEADER_SIZE];
	struct xpl_xtf_header h = { 0 };
	char tmp[4200];
	uint8_t *meta = NULL;
	size_t meta_len, pad;
	uint64_t off = 0;
	uint32_t blob_crc = 0;
	uint8_t *bounce = a->bounce;
	bool own_meta = false, own_bounce = false;
	int fd = -1, err = 0;

	tmp[0] = '\0';
	/* 1. stream offsets and lengths */
	for (size_t i = 0; i < a->meta->n_streams; i++) {
		uint64_t len = 0;

		if (a->src[i].read) {
			len = a->src[i].len;
			if (!bounce) {
				bounce = malloc(1u << 18);
				if (!bounce)
					return -ENOMEM;
				own_bounce = true;
			}
		}
		for (size_t k = 0; k < a->src[i].nsegs; k++)
			len += a->src[i].segs[k].len;
		a->meta->streams[i]->offset = off;
		a->meta->streams[i]->length = len;
		off += len;
	}

	/* 2. metadata */
	meta_len = protobuf_c_message_get_packed_size(&a->meta->base);
	if (a->scratch) {
		if (meta_len > a->scratch_len) {
			err = -XPROBE_E_TRUNCATED;
			goto out;
		}
		meta = a->scratch;
	} else {
		meta = malloc(meta_len ? meta_len : 1);
		if (!meta) {
			err = -ENOMEM;
			goto out;
		}
		own_meta = true;
	}
	if (protobuf_c_message_pack(&a->meta->base, meta) != meta_len) {
		err = -EIO;
		goto out;
	}
	pad = XPL_ALIGN8(XPROBE_XTF_HEADER_SIZE + meta_len) - (XPROBE_XTF_HEADER_SIZE + meta_len);

	/* 3. the temporary beside the target: a new file, a name nobody can
	 *    guess (see the top of this file) */
	{
		uint64_t nonce = tmp_nonce();

		if (xpl_sfmt(tmp, sizeof(tmp), "%s.tmp.%u.%x%x", name, (unsigned)getpid(),
			     (unsigned)(nonce >> 32), (unsigned)nonce) >= sizeof(tmp) - 1) {
			err = -ENAMETOOLONG;
			goto out;
		}
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		tmp[0] = '\0'; /* not ours: never unlinked */
		err = -errno;
		goto out;
	}
	if (lseek(fd, XPROBE_XTF_HEADER_SIZE, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	err = xpl_write_all(fd, meta, meta_len);
	if (!err && pad)
		err = xpl_write_all(fd, zeros, pad);
	for (size_t i = 0; !err && i < a->meta->n_streams; i++) {
		if (a->src[i].read) {
			size_t cap = own_bounce ? (1u << 18) : a->bounce_len;
			uint64_t done = 0;
			size_t n;

			while (!err && (n = a->src[i].read(a->src[i].ctx, bounce, cap)) > 0) {
				blob_crc = xpl_crc32c(blob_crc, bounce, n);
				err = xpl_write_all(fd, bounce, n);
				done += n;
			}
			if (!err && done != a->src[i].len)
				err = -EIO; /* the source changed under us */
			continue;
		}
		for (size_t k = 0; !err && k < a->src[i].nsegs; k++) {
			const struct xpl_seg *s = &a->src[i].segs[k];

			if (!s->len)
				continue;
			blob_crc = xpl_crc32c(blob_crc, s->p, s->len);
			err = xpl_write_all(fd, s->p, s->len);
		}
	}
	if (err)
		goto out;

	/* 4. the header, last */
	h.version_major = XPROBE_XTF_VERSION_MAJOR;
	h.version_minor = XPROBE_XTF_VERSION_MINOR;
	h.header_size = XPROBE_XTF_HEADER_SIZE;
	h.flags = a->flags;
	h.kind = a->kind;
	h.meta_offset = XPROBE_XTF_HEADER_SIZE;
	h.meta_length = meta_len;
	h.blob_offset = XPROBE_XTF_HEADER_SIZE + meta_len + pad;
	h.blob_length = off;
	h.file_length = h.blob_offset + off;
	h.meta_crc = xpl_crc32c(0, meta, meta_len);
	h.blob_crc = blob_crc;
	h.record_format = XPL_XTF_RECORD_FORMAT;
	h.record_header_size = XPROBE_RECORD_HDR_SIZE;
	h.created_ns = xpl_now_real_ns();
	xpl_xtf_header_encode(hdr_bytes, &h);
	while (pwrite(fd, hdr_bytes, sizeof(hdr_bytes), 0) != (ssize_t)sizeof(hdr_bytes)) {
		if (errno != EINTR) {
			err = errno ? -errno : -EIO;
			goto out;
		}
	}
	if (close(fd) != 0) {
		fd = -1;
		err = -errno;
		goto out;
	}
	fd = -1;
	err = xpl_rename_regular(dirfd, tmp, name);
	if (err)
		goto out;
	if (size)
		*size = h.file_length;
out:
	if (fd >= 0)
		close(fd);
	if (err && tmp[0])
		unlinkat(dirfd, tmp, 0);
	if (own_meta)
		free(meta);
	if (own_bounce)
		free(bounce);
	return err;
}
