/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_session_read.c - libFuzzer target of the session-directory reader
 * (xprobe_session_open, lib/xtf/session_read.c): a session directory may
 * come from anywhere (`measure --input`), so its file list, sizes, origins,
 * the ring file and every file in it are untrusted.  The reader must refuse
 * a bad directory with a reason, or hand out files that all walk; never
 * crash, read out of bounds, leak or hang.
 *
 * The input is a little archive of the directory, entries of
 *   [u8 name] [u16 little-endian length] [that many bytes]
 * where the name byte picks one of the names below (the files a session
 * holds, one under on_fail/, a stray .xtf, a temporary the reader must
 * skip).  .pb/.xtf files get their CRC32C fields recomputed (so mutations
 * reach the metadata: the file list, sizes, origins); host_rings.live is
 * laid out from its parts as fuzz_rings_recover does.  One directory per
 * process, emptied before each input.  Seeds:
 * tests/fuzz/corpus/fuzz_session_read/ (a stopped session, a killed one
 * with its ring file and a per-execution profile, an on-fail one).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xprobe/xprobe.h"
#include "xtf_fuzz_util.h"

static const char *const names[] = {
	"trace_info.pb",
	"ntrace.pb",
	"cpu_util.pb",
	"host_mem.pb",
	"profile_dev_0_session_1.xtf",
	"profile_dev_1_session_1.xtf",
	"net_exec_1.xtf",
	"on_fail/net_exec_2.xtf",
	"host_rings.live",
	"stray.xtf",
	"user.xtf",
	"ntrace.pb.tmp.1.abc",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static char dir[64];

static void remove_dir(void)
{
	char p[128];

	for (size_t i = 0; i < NNAMES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/on_fail", dir);
	rmdir(p);
	rmdir(dir);
}

static void put_file(const char *name, const uint8_t *data, size_t len)
{
	char p[128];
	uint8_t *copy;
	size_t nl = strlen(name);
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (!strcmp(name, "host_rings.live")) {
		fz_ringfile_write(fd, data, len);
	} else {
		copy = malloc(len ? len : 1);
		if (!copy)
			abort();
		memcpy(copy, data, len);
		if ((nl > 3 && !strcmp(name + nl - 3, ".pb")) ||
		    (nl > 4 && !strcmp(name + nl - 4, ".xtf")))
			fz_fix_checksums(copy, len);
		fz_pwrite_all(fd, copy, len, 0);
		free(copy);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xprobe_session *s = NULL;
	char err[512], p[128];
	size_t off = 0;
	int rc;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_session_read.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	for (size_t i = 0; i < NNAMES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/on_fail", dir);
	mkdir(p, 0700);
	while (size - off >= 3) {
		const char *name = names[data[off] % NNAMES];
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;

		off += 3;
		if (len > size - off)
			len = size - off;
		put_file(name, data + off, len);
		off += len;
	}

	err[0] = 'x';
	rc = xprobe_session_open(dir, &s, err, sizeof(err));
	if (rc) {
		if (s || (rc == -XPROBE_E_FORMAT && !err[0]))
			abort(); /* a refusal hands out nothing and says why */
		return 0;
	}
	if (!xprobe_session_file_count(s))
		abort();
	if (!xprobe_session_recovered(s)) {
		const char *n = NULL;

		/* a stopped session: trace_info.pb comes first and lists the rest */
		if (!xprobe_session_get_file(s, 0, &n) || strcmp(n, "trace_info.pb"))
			abort();
	}
	for (size_t i = 0; i < xprobe_session_file_count(s); i++) {
		const char *n = NULL;
		const struct xprobe_xtf *x = xprobe_session_get_file(s, i, &n);

		if (!x || !n || strstr(n, ".tmp."))
			abort();
		fz_walk(x);
	}
	if (xprobe_session_get_file(s, xprobe_session_file_count(s), NULL))
		abort();
	xprobe_session_close(s);
	return 0;
}
