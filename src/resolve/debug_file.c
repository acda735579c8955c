/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug_file.c - separate debug files (rules in debug_file.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/env_hooks.h"
#include "debug_file.h"

const char *xp_debug_root(void)
{
	/* a test hook: honoured only in XPROBE_TEST_HOOKS builds */
	const char *r = xpc_test_hook_env("XPROBE_TEST_DEBUG_ROOT");

	return r && r[0] == '/' ? r : "/usr/lib/debug";
}

int xp_debug_file_crc(int fd, uint32_t *crc)
{
	static uint32_t table[256];
	unsigned char buf[65536];
	uint32_t c = 0xffffffffu;
	off_t off = 0;
	ssize_t n;

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
			table[i] = v;
		}
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			c = table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
		off += n;
	}
	if (n < 0)
		return -errno;
	*crc = c ^ 0xffffffffu;
	return 0;
}

/* The GNU build id note of @elf: 0 with the bytes, or -ENOENT. */
static int note_build_id(Elf *elf, unsigned char *id, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && off < d->d_size &&
		       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
			    nh.n_descsz <= 64 && memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0) {
				memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
				*len = nh.n_descsz;
				return 0;
			}
			off = next;
		}
	}
	return -ENOENT;
}

/* Whether the file open at @fd is @w's debug file. */
static bool is_ours(int fd, const struct xp_debug_want *w)
{
	unsigned char id[64];
	size_t len = 0;
	uint32_t crc;
	bool ok = false;
	Elf *elf;

	if (w->build_id_len) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf && elf_kind(elf) == ELF_K_ELF && note_build_id(elf, id, &len) == 0)
			ok = len == w->build_id_len && memcmp(id, w->build_id, len) == 0;
		if (elf)
			elf_end(elf);
		return ok;
	}
	return w->debuglink && xp_debug_file_crc(fd, &crc) == 0 && crc == w->crc;
}

static int try_path(const struct xp_debug_want *w, const char *path, char *out, size_t size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !is_ours(fd, w)) {
		close(fd);
		return -ENOENT;
	}
	snprintf(out, size, "%s", path);
	return fd;
}

int xp_debug_file_open(const struct xp_debug_want *w, char *out, size_t size)
{
	const char *root = xp_debug_root(), *slash;
	char path[PATH_MAX * 2], dir[PATH_MAX];
	int fd, n;

	if (w->build_id_len >= 2) {
		n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", root, w->build_id[0]);
		for (size_t i = 1; i < w->build_id_len && n > 0 && (size_t)n < sizeof(path) - 8; i++)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", w->build_id[i]);
		if (n > 0 && (size_t)n < sizeof(path) - 8) {
			snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
			if ((fd = try_path(w, path, out, size)) >= 0)
				return fd;
		}
	}
	if (!w->debuglink || !w->debuglink[0] || strchr(w->debuglink, '/') || !w->object_path ||
	    !(slash = strrchr(w->object_path, '/')) ||
	    (size_t)(slash - w->object_path) >= sizeof(dir))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - w->object_path), w->object_path);
	snprintf(path, sizeof(path), "%s/%s", dir, w->debuglink);
	if (strcmp(path, w->object_path) != 0 && (fd = try_path(w, path, out, size)) >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, w->debuglink);
	if ((fd = try_path(w, path, out, size)) >= 0)
		return fd;
	/* under the root by the directory the object has in its own file
	 * system (a target's file reached through /proc/<pid>/root/...) */
	slash = dir;
	if (strncmp(dir, "/proc/", 6) == 0 && (slash = strstr(dir, "/root/")))
		slash += 5;
	else
		slash = dir;
	snprintf(path, sizeof(path), "%s%s/%s", root, slash, w->debuglink);
	return try_path(w, path, out, size);
}
