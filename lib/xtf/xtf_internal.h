/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtf_internal.h - the .xtf container inside libxprobe: header encoding,
 * the writer (lib/xtf/xtf_write.c), the strict reader's internals
 * (lib/xtf/xtf_read.c) and the host-ring file layout that recovery reads
 * (lib/xtf/rings_recover.c, written by lib/producers/sys_trace.c).
 *
 * Byte layout of the 128-byte header (little-endian; docs/xtf-format.md):
 *   0  magic "\x89XTF\r\n\x1a\n"     64  u32 meta_crc32c
 *   8  u16 version_major, minor        68  u32 blob_crc32c
 *  12  u32 header_size (128)           72  u32 record_format (1)
 *  16  u32 flags (XPROBE_XTF_F_*)      76  u32 record_header_size (40)
 *  20  u32 kind                        80  u64 created_realtime_ns
 *  24  u64 meta_offset (128)           88  36 reserved bytes, zero
 *  32  u64 meta_length                124  u32 header_crc32c of bytes 0..123
 *  40  u64 blob_offset (align8(meta end))
 *  48  u64 blob_length
 *  56  u64 file_length
 */
#ifndef XPL_XTF_INTERNAL_H
#define XPL_XTF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/record.h"
#include "xprobe/xtf.h"
#include "xtf.pb-c.h"

#define XPL_XTF_MAGIC "\x89XTF\r\n\x1a\n"
#define XPL_XTF_RECORD_FORMAT 1

struct xpl_xtf_header {
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_size;
	uint32_t flags;
	uint32_t kind;
	uint64_t meta_offset;
	uint64_t meta_length;
	uint64_t blob_offset;
	uint64_t blob_length;
	uint64_t file_length;
	uint32_t meta_crc;
	uint32_t blob_crc;
	uint32_t record_format;
	uint32_t record_header_size;
	uint64_t created_ns;
};

void xpl_xtf_header_encode(uint8_t out[XPROBE_XTF_HEADER_SIZE], const struct xpl_xtf_header *h);

/* One piece of a stream's bytes (a ring has two when it wrapped). */
struct xpl_seg {
	const void *p;
	size_t len; /* multiple of 8 */
};

/*
 * The bytes of meta->streams[i]: either segments written back to back, or
 * (read != NULL) exactly `len` bytes produced by repeated read() calls into
 * the bounce buffer (whole records each time; 0 at the end).
 */
struct xpl_stream_src {
	const struct xpl_seg *segs;
	size_t nsegs;
	size_t (*read)(void *ctx, uint8_t *buf, size_t cap);
	void *ctx;
	uint64_t len;
};

struct xpl_xtf_write_args {
	uint32_t kind; /* enum xprobe_xtf_kind */
	uint32_t flags; /* XPROBE_XTF_F_* */
	Xprobe__Xtf__Capture *meta; /* offsets/lengths of streams are filled in */
	const struct xpl_stream_src *src; /* meta->n_streams entries */
	/* Preallocated buffer for the packed metadata.  When set, the writer
	 * allocates nothing and is async-signal-safe; when NULL it mallocs. */
	uint8_t *scratch;
	size_t scratch_len;
	/* Bounce buffer for read() sources (>= XPROBE_RECORD_MAX_SIZE);
	 * preallocated on the signal path, else NULL (then malloc'ed). */
	uint8_t *bounce;
	size_t bounce_len;
};

/*
 * Write @a as the file @name in the directory @dirfd (AT_FDCWD: @name is a
 * path of the caller's): to "<name>.tmp.<pid>.<random>" (O_EXCL,
 * O_NOFOLLOW, 0600), then renamed onto @name, which may only be a regular
 * file or nothing.  *size receives the file size.  No fsync: the file is
 * safe against the process dying, not against power loss.
 * Return: 0, -errno (-ELOOP: @name is a symbolic link; -EEXIST: @name is
 * something else that is not a regular file), or -XPROBE_E_TRUNCATED
 * (metadata larger than scratch).
 */
int xpl_xtf_write_at(int dirfd, const char *name, const struct xpl_xtf_write_args *a,
		     uint64_t *size);

/* Byte order of header fields (x86-64 and arm64 are little-endian). */
static inline void xpl_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void xpl_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void xpl_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t xpl_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t xpl_get_u32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline uint64_t xpl_get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * An opened file (xtf.h).  Either parsed from bytes (meta set) or rebuilt
 * from a ring file (meta NULL, strings owned by `strings`).
 */
struct xprobe_xtf {
	uint8_t *buf; /* owned bytes: the file, or recovered records */
	size_t len;
	Xprobe__Xtf__Capture *meta; /* protobuf-c unpacked metadata, or NULL */
	struct xprobe_xtf_info info; /* resolved once at open */
	struct xprobe_xtf_stream *streams;
	size_t nstreams;
	char *strings[4]; /* recovered handles: owned strings of info */
};

/*
 * The readers' rejection (xtf_read.c, rings_recover.c, session_read.c):
 * lib's one error formatter (xpl_errf, internal.h) with -XPROBE_E_FORMAT,
 * so a rejection reads `return xpl_xtf_reject(err, errlen, "what was
 * wrong", ...)`.  xpl_xtf_err_append() adds context (" (ring 3)") after a
 * sentence.
 */
#define xpl_xtf_reject(err, errlen, ...) xpl_errf((err), (errlen), -XPROBE_E_FORMAT, __VA_ARGS__)
void xpl_xtf_err_append(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Open @path for reading, regular files only: O_NONBLOCK, so a FIFO (or a
 * device) placed where a file is expected is refused at once instead of
 * blocking the reader; then fstat.  @oflags adds to open's flags
 * (O_NOFOLLOW: a link is refused as -XPROBE_E_FORMAT "not a regular
 * file: a symbolic link, not followed").  *fd and *size on success.
 * Return: 0, -errno (cannot open) or -XPROBE_E_FORMAT, with @err filled.
 */
int xpl_xtf_open_regular(const char *path, int oflags, int *fd, uint64_t *size, char *err,
			 size_t errlen);
/* xprobe_xtf_open_file for a file inside a session directory: its last
 * component is never followed through a symbolic link (O_NOFOLLOW; the
 * rejection says so), so a link planted in a directory others can write
 * cannot make the reader take another file. */
int xpl_xtf_open_entry(const char *path, struct xprobe_xtf **out, char *err, size_t errlen);

/* Free what a handle owns (used by the reader and by recovery). */
void xpl_xtf_free(struct xprobe_xtf *x);

/*
 * Validate one record stream of a file of @kind: every record's size,
 * type, flags, name length and timestamp.  Counts records into *records.
 * Return: 0 or -XPROBE_E_FORMAT with @err filled.
 */
int xpl_xtf_check_stream(uint32_t kind, const uint8_t *data, size_t len, uint64_t *records,
			 char *err, size_t errlen);
/* XPROBE_EV_CUDA_KERNEL / _MEMCPY / _MEMSET. */
bool xpl_cuda_activity_type(uint32_t type);
/* Check one CUDA activity record of @size bytes (its whole layout, record.h).
 * 0 or -XPROBE_E_FORMAT with @err saying what. */
int xpl_check_cuda_activity(const uint8_t *p, size_t size, char *err, size_t errlen);

/* --- host_rings.live: the ring file (lib/producers/sys_trace.c) -----------------
 *
 * Page 0: struct xpl_ringfile_hdr.  Then max_rings ring controls of 64
 * bytes each (struct xpl_ring_ctl), rounded up to a page.  Then max_rings
 * rings of ring_bytes each.  A ring holds records between ctl.tail and
 * ctl.head (byte positions that only grow; position & (ring_bytes-1) is the
 * offset), timestamps raw TSC when clock_source is 1.
 */
#define XPL_RINGFILE_NAME "host_rings.live"
#define XPL_RINGFILE_MAGIC "XPRRING1"
#define XPL_RINGFILE_VERSION 1
#define XPL_RING_STATE_LIVE 1 /* the session is recording */
#define XPL_RING_STATE_HARVESTED 2 /* stop serialized it: ntrace.pb is authoritative */

struct xpl_calib {
	uint64_t tsc; /* TSC at the calibration point (0 when clock_gettime) */
	uint64_t ns; /* CLOCK_MONOTONIC at the same instant */
};

struct xpl_ringfile_hdr {
	char magic[8]; /* XPL_RINGFILE_MAGIC */
	uint32_t version; /* XPL_RINGFILE_VERSION */
	uint32_t hdr_size; /* sizeof(struct xpl_ringfile_hdr) */
	uint64_t ring_bytes; /* power of two */
	uint32_t max_rings;
	uint32_t clock_source; /* 1 tsc, 2 clock_gettime */
	uint64_t data_offset; /* byte offset of ring 0 */
	uint32_t pid;
	uint32_t state; /* XPL_RING_STATE_* (atomic) */
	uint64_t process_start_time;
	uint64_t session_start_ns;
	struct xpl_calib begin; /* at begin */
	struct xpl_calib latest; /* updated by the monitor, fetch and thread attach
				       (seqlock: latest_seq odd while writing) */
	uint32_t latest_seq;
	uint32_t rings_used; /* rings handed out (atomic) */
	uint64_t unattached_drops; /* events of threads that found no ring (atomic) */
	char instance_id[64];
	char backend[16]; /* "none", "sim", "cupti" */
	uint32_t simulated;
	uint32_t unreserved_rings; /* rings left unused: no space in the file
				      system when their thread attached (atomic) */
};

struct xpl_ring_ctl {
	uint64_t head; /* producer position (release) */
	uint64_t tail; /* consumer position (fetch, harvest) */
	uint64_t dropped; /* records lost to a full ring (producer only) */
	uint32_t tid; /* owning thread */
	uint32_t in_use; /* 1 once attached */
	uint64_t reserved0; /* zero */
	uint8_t pad[24];
};

_Static_assert(sizeof(struct xpl_ring_ctl) == 64, "ring control is one cache line");

/* Linear TSC -> ns conversion between two calibration points. */
struct xpl_conv {
	uint64_t tsc0, ns0;
	uint64_t mult; /* ns per tsc << 32 */
	bool identity; /* clock_gettime timestamps: nothing to convert */
};
void xpl_conv_init(struct xpl_conv *c, const struct xpl_calib *a, const struct xpl_calib *b,
		   bool tsc);
static inline uint64_t xpl_conv_ns(const struct xpl_conv *c, uint64_t ts)
{
	__int128 d;

	if (c->identity)
		return ts;
	d = (__int128)(int64_t)(ts - c->tsc0) * (__int128)c->mult;
	return (uint64_t)((__int128)c->ns0 + (d >> 32));
}

#endif /* XPL_XTF_INTERNAL_H */
