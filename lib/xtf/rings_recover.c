/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rings_recover.c - rebuild the host events of a session whose process was
 * killed (SIGKILL, OOM killer, power to the process but not the machine)
 * from its ring file, host_rings.live.
 *
 * Why this works: the rings are a MAP_SHARED mapping of that file, so every
 * store the process made lives in the page cache and outlives the process.
 * A producer publishes a record by a release store of its ring's head after
 * writing the record, so every record below a head that reached memory is
 * complete; the record being written at the moment of death is not counted.
 * What is not here: events the process never recorded, device profiles not
 * yet serialized (they live in process memory) and /proc samples.
 *
 * Timestamps are raw TSC in the file; they are converted with the begin
 * calibration and the latest point the session stored (the monitor thread,
 * every fetch and every thread attach refresh it; begin stores one ~1 ms
 * after the first), so conversion error grows with the time since the
 * latest point by the TSC/CLOCK_MONOTONIC drift, ~tens of ppm.
 *
 * The file is validated as strictly as an .xtf: header fields, sizes
 * against the real file size, every ring control, every record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../internal.h"
#include "xtf_internal.h"

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static bool str_ok(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	return n > 0 && n < cap;
}

XPROBE_API int xprobe_rings_recover(const char *path, struct xprobe_xtf **out, char *err,
				    size_t errlen)
{
	struct xpl_ringfile_hdr h;
	struct xpl_ring_ctl *ctl = NULL;
	struct xprobe_xtf *x = NULL;
	struct xpl_conv conv;
	struct xpl_calib latest;
	uint64_t ctl_off = 4096, data_off, total = 0, pos, fsize = 0;
	uint32_t used;
	int fd, rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "path and out must not be NULL");
	*out = NULL;
	rc = xpl_xtf_open_regular(path, 0, &fd, &fsize, err, errlen);
	if (rc)
		return rc;
	if (fsize < sizeof(h)) {
		rc = xpl_xtf_reject(err, errlen, "not a ring file: too short");
		goto out;
	}
	rc = pread_all(fd, &h, sizeof(h), 0);
	if (rc)
		goto out;
	if (memcmp(h.magic, XPL_RINGFILE_MAGIC, 8) || h.version != XPL_RINGFILE_VERSION ||
	    h.hdr_size != sizeof(h)) {
		rc = xpl_xtf_reject(err, errlen,
				    "not a libxprobe ring file (magic/version/header size)");
		goto out;
	}
	if (h.ring_bytes < 4096 || h.ring_bytes > (1ull << 32) ||
	    (h.ring_bytes & (h.ring_bytes - 1)) || h.max_rings == 0 || h.max_rings > 4096 ||
	    (h.clock_source != 1 && h.clock_source != 2) || h.pid == 0 ||
	    !str_ok(h.instance_id, sizeof(h.instance_id)) ||
	    !str_ok(h.backend, sizeof(h.backend)) || h.simulated > 1 ||
	    h.simulated != !strcmp(h.backend, "sim")) {
		rc = xpl_xtf_reject(err, errlen, "ring file header has out-of-range fields");
		goto out;
	}
	if (h.state == XPL_RING_STATE_HARVESTED) {
		rc = xpl_xtf_reject(
			err, errlen,
			"ring file was already harvested by stop: read ntrace.pb instead");
		goto out;
	}
	if (h.state != XPL_RING_STATE_LIVE) {
		rc = xpl_xtf_reject(err, errlen, "ring file state %u is unknown", h.state);
		goto out;
	}
	data_off = (ctl_off + (uint64_t)h.max_rings * sizeof(*ctl) + 4095) & ~4095ull;
	if (h.data_offset != data_off || fsize != data_off + (uint64_t)h.max_rings * h.ring_bytes) {
		rc = xpl_xtf_reject(
			err, errlen, "ring file is %llu bytes; its header needs %llu",
			(unsigned long long)fsize,
			(unsigned long long)(data_off + (uint64_t)h.max_rings * h.ring_bytes));
		goto out;
	}
	used = h.rings_used < h.max_rings ? h.rings_used : h.max_rings;
	ctl = calloc(used ? used : 1, sizeof(*ctl));
	if (!ctl) {
		rc = -ENOMEM;
		goto out;
	}
	rc = pread_all(fd, ctl, used * sizeof(*ctl), ctl_off);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < used; i++) {
		if (!ctl[i].in_use)
			continue;
		if (ctl[i].head < ctl[i].tail || ctl[i].head - ctl[i].tail > h.ring_bytes ||
		    ctl[i].head % 8 || ctl[i].tail % 8 || ctl[i].tid == 0) {
			rc = xpl_xtf_reject(err, errlen,
					    "ring %u control is inconsistent (head %llu tail %llu)",
					    i, (unsigned long long)ctl[i].head,
					    (unsigned long long)ctl[i].tail);
			goto out;
		}
		total += ctl[i].head - ctl[i].tail;
	}

	x = calloc(1, sizeof(*x));
	if (!x) {
		rc = -ENOMEM;
		goto out;
	}
	x->buf = malloc(total ? total : 8);
	x->streams = calloc(used ? used : 1, sizeof(*x->streams));
	x->strings[0] = strdup(h.instance_id);
	x->strings[1] = strdup(h.backend);
	if (!x->buf || !x->streams || !x->strings[0] || !x->strings[1]) {
		rc = -ENOMEM;
		goto out;
	}
	x->len = total;

	/* the latest calibration point, read like a seqlock reader would */
	latest = h.latest;
	if (h.latest_seq % 2 || latest.ns <= h.begin.ns)
		latest = h.begin; /* torn or missing: conversion below falls back */
	xpl_conv_init(&conv, &h.begin, &latest, h.clock_source == 1);

	pos = 0;
	for (uint32_t i = 0; i < used; i++) {
		uint64_t len, start, first, nrec = 0;
		uint8_t *dst = x->buf + pos;

		if (!ctl[i].in_use)
			continue;
		len = ctl[i].head - ctl[i].tail;
		start = ctl[i].tail & (h.ring_bytes - 1);
		first = len < h.ring_bytes - start ? len : h.ring_bytes - start;
		rc = pread_all(fd, dst, first, data_off + (uint64_t)i * h.ring_bytes + start);
		if (!rc && len > first)
			rc = pread_all(fd, dst + first, len - first,
				       data_off + (uint64_t)i * h.ring_bytes);
		if (rc)
			goto out;
		rc = xpl_xtf_check_stream(XPROBE_XTF_NTRACE, dst, len, &nrec, err, errlen);
		if (rc) {
			xpl_xtf_err_append(err, errlen, " (ring %u)", i);
			goto out;
		}
		for (uint64_t o = 0; o < len;) {
			struct xprobe_record *r = (struct xprobe_record *)(dst + o);

			if (r->type != XPROBE_EV_PAD)
				r->ts = xpl_conv_ns(&conv, r->ts);
			o += r->size;
		}
		x->streams[x->nstreams].tid = ctl[i].tid;
		x->streams[x->nstreams].device = -1;
		x->streams[x->nstreams].records = nrec;
		x->streams[x->nstreams].dropped = ctl[i].dropped;
		x->streams[x->nstreams].data = dst;
		x->streams[x->nstreams].len = len;
		x->info.records += nrec;
		x->info.dropped += ctl[i].dropped;
		x->nstreams++;
		pos += len;
	}
	x->info.sz = sizeof(x->info);
	x->info.kind = XPROBE_XTF_NTRACE;
	x->info.flags = XPROBE_XTF_F_RECOVERED | (h.simulated ? XPROBE_XTF_F_SIMULATED : 0);
	x->info.version_major = XPROBE_XTF_VERSION_MAJOR;
	x->info.version_minor = XPROBE_XTF_VERSION_MINOR;
	x->info.pid = h.pid;
	x->info.process_start_time = h.process_start_time;
	x->info.session_start_ns = h.session_start_ns;
	x->info.producer = "libxprobe (recovered from host_rings.live)";
	x->info.instance_id = x->strings[0];
	x->info.backend = x->strings[1];
	x->info.simulated = h.simulated;
	x->info.clock_source = h.clock_source == 1 ? "tsc" : "clock_gettime";
	x->info.streams = x->nstreams;
	x->info.dropped += h.unattached_drops;
	x->info.device = -1;
	*out = x;
	x = NULL;
out:
	close(fd);
	free(ctl);
	xpl_xtf_free(x);
	return rc;
}
