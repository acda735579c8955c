/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_rings_recover.c - libFuzzer target of ring-file recovery
 * (xprobe_rings_recover, lib/xtf/rings_recover.c): host_rings.live is what
 * a killed process left behind, so every byte of it is untrusted.  The
 * reader must refuse a bad file with a reason (-XPROBE_E_FORMAT and @err,
 * nothing handed out), or hand out a file whose every record can be walked
 * and counted; never crash, read out of bounds, leak, or hang.
 *
 * A ring file is mostly holes (max_rings rings of ring_bytes each), so the
 * input is not the file itself but its parts, laid out where the header
 * puts them:
 *
 *   [struct xpl_ringfile_hdr] [64-byte ring controls of the used rings]
 *   [ring 0's bytes from tail to head] [ring 1's ...] ...
 *
 * in a memfd grown to the size the header declares (when that is at most
 * 64 MiB; otherwise the file keeps the input's size and the size check
 * refuses it).  The input is also tried as a whole file, byte for byte.
 * Seeds: tests/fuzz/corpus/fuzz_rings_recover/ (the parts of files left by
 * killed sessions: one ring, several rings, a wrapped ring, TSC and
 * clock_gettime timestamps).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xprobe/xprobe.h"
#include "xtf_fuzz_util.h"

static void check(const char *path)
{
	struct xprobe_xtf *x = NULL;
	struct xprobe_xtf_info in;
	char err[256];
	int rc;

	err[0] = 'x';
	rc = xprobe_rings_recover(path, &x, err, sizeof(err));
	if (rc) {
		if (x || (rc == -XPROBE_E_FORMAT && !err[0]))
			abort(); /* a refusal hands out nothing and says why */
		return;
	}
	memset(&in, 0, sizeof(in));
	in.sz = sizeof(in);
	if (xprobe_xtf_get_info(x, &in) || in.kind != XPROBE_XTF_NTRACE ||
	    !(in.flags & XPROBE_XTF_F_RECOVERED))
		abort();
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream s;

		if (xprobe_xtf_get_stream(x, i, &s) || s.tid == 0)
			abort();
	}
	fz_walk(x);
	xprobe_xtf_close(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	for (int pass = 0; pass < 2; pass++) {
		fd = memfd_create("host_rings.live", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		if (pass == 0)
			fz_ringfile_write(fd, data, size);
		else
			fz_pwrite_all(fd, data, size, 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		check(path);
		close(fd);
	}
	return 0;
}
