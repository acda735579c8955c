/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_resolve_debug_file.c - finding a stripped object's separate debug
 * file (src/resolve/debug_file.h): the CRC32 .gnu_debuglink uses, the
 * debuglink's three places and its CRC check, the build-id path and its
 * build-id check, under a debug root given by XPROBE_TEST_DEBUG_ROOT.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resolve/debug_file.h"
#include "resolve/xelf.h"
#include "testlib.h"

static char dir[PATH_MAX];

static void put(const char *path, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0 && write(fd, bytes, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}

static uint32_t crc_of(const char *path)
{
	uint32_t crc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0 && xp_debug_file_crc(fd, &crc) == 0);
	if (fd >= 0)
		close(fd);
	return crc;
}

static void test_crc(void)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/check", dir);
	put(p, "123456789", 9);
	CHECK_EQ_U64(crc_of(p), 0xcbf43926u); /* the CRC-32 check value */
	put(p, "", 0);
	CHECK_EQ_U64(crc_of(p), 0);
}

static int found(const struct xp_debug_want *w, char *out)
{
	int fd = xp_debug_file_open(w, out, PATH_MAX * 2);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd;
}

static void test_debuglink(void)
{
	char obj[PATH_MAX + 16], dbg[PATH_MAX + 32], out[PATH_MAX * 2], root[PATH_MAX + 16];
	struct xp_debug_want w = { .object_path = obj, .debuglink = "obj.debug" };

	snprintf(obj, sizeof(obj), "%s/obj", dir);
	put(obj, "object", 6);
	snprintf(dbg, sizeof(dbg), "%s/.debug", dir);
	CHECK(mkdir(dbg, 0755) == 0);
	snprintf(dbg, sizeof(dbg), "%s/.debug/obj.debug", dir);
	put(dbg, "debug bytes", 11);
	w.crc = crc_of(dbg);
	/* .debug/ beside the object */
	CHECK(found(&w, out) == 0 && strcmp(out, dbg) == 0);
	/* the wrong CRC: not ours */
	w.crc ^= 1;
	CHECK(found(&w, out) == -ENOENT);
	w.crc ^= 1;
	/* beside the object comes first */
	snprintf(dbg, sizeof(dbg), "%s/obj.debug", dir);
	put(dbg, "debug bytes", 11);
	CHECK(found(&w, out) == 0 && strcmp(out, dbg) == 0);
	unlink(dbg);
	snprintf(dbg, sizeof(dbg), "%s/.debug/obj.debug", dir);
	unlink(dbg);
	/* under the root by the object's directory */
	snprintf(root, sizeof(root), "%s/root", dir);
	setenv("XPROBE_TEST_DEBUG_ROOT", root, 1);
	CHECK(strcmp(xp_debug_root(), root) == 0);
	snprintf(dbg, sizeof(dbg), "mkdir -p '%s%s'", root, dir);
	CHECK(system(dbg) == 0);
	snprintf(dbg, sizeof(dbg), "%s%s/obj.debug", root, dir);
	put(dbg, "debug bytes", 11);
	CHECK(found(&w, out) == 0 && strcmp(out, dbg) == 0);
	/* a name with a directory in it is never followed */
	w.debuglink = "../obj.debug";
	CHECK(found(&w, out) == -ENOENT);
	w.debuglink = NULL;
	CHECK(found(&w, out) == -ENOENT);
}

/* This test's own executable: its build id, its bytes as its "debug file". */
static void test_build_id(void)
{
	unsigned char id[64];
	char root[PATH_MAX + 16], path[PATH_MAX * 2], out[PATH_MAX * 2], self[PATH_MAX], *hex;
	struct xp_debug_want w = { .object_path = "/nonexistent/obj" };
	struct xp_elf e;
	size_t n, i;
	int rc;

	CHECK(realpath("/proc/self/exe", self) != NULL); /* a shell's /proc/self is its own */
	CHECK(xp_elf_open(self, &e) == 0);
	hex = xp_elf_build_id(&e);
	xp_elf_close(&e);
	CHECK(hex != NULL);
	if (!hex)
		return;
	n = strlen(hex) / 2;
	for (i = 0; i < n && i < sizeof(id); i++) {
		unsigned v = 0;

		CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1);
		id[i] = (unsigned char)v;
	}
	w.build_id = id;
	w.build_id_len = n;
	snprintf(root, sizeof(root), "%s/bid", dir);
	setenv("XPROBE_TEST_DEBUG_ROOT", root, 1);
	CHECK(found(&w, out) == -ENOENT);
	snprintf(path, sizeof(path), "mkdir -p '%s/.build-id/%.2s' && cp '%s' "
				     "'%s/.build-id/%.2s/%s.debug'",
		 root, hex, self, root, hex, hex + 2);
	CHECK(system(path) == 0);
	rc = found(&w, out);
	CHECK(rc == 0 && strstr(out, "/.build-id/") && strstr(out, hex + 2));
	/* another ELF at that path (another build id) is not ours */
	snprintf(path, sizeof(path), "cp /bin/true '%s/.build-id/%.2s/%s.debug'", root, hex,
		 hex + 2);
	CHECK(system(path) == 0);
	CHECK(found(&w, out) == -ENOENT);
	free(hex);
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "/tmp/xp-debug-file-%d", (int)getpid());
	CHECK(mkdir(dir, 0755) == 0);
	test_crc();
	test_debuglink();
	test_build_id();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	TEST_MAIN_END();
}
