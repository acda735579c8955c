/* SPDX-License-Identifier: Apache-2.0 */
/*
 * children.c - a target's child processes and the ones mapping a file
 * (children.h says why and how they are found).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/parse.h"
#include "children.h"
#include "identity.h"
#include "procfs.h"

/* The target's mapping of @path: its device and inode. */
static bool file_id(uint32_t pid, const char *path, struct xp_map_entry *out)
{
	struct xp_maps m;
	size_t bad = 0, i;
	bool found = false;

	if (xp_maps_read_pid(pid, &m, &bad))
		return false;
	for (i = 0; i < m.n && !found; i++) {
		if (!xp_map_is_file(&m.v[i]) || strcmp(m.v[i].path, path) != 0)
			continue;
		*out = m.v[i];
		out->path = NULL; /* points into m's text */
		found = true;
	}
	xp_maps_free(&m);
	return found;
}

static bool maps_file(uint32_t pid, const struct xp_map_entry *f)
{
	struct xp_maps m;
	size_t bad = 0, i;
	bool yes = false;

	if (xp_maps_read_pid(pid, &m, &bad))
		return false;
	for (i = 0; i < m.n && !yes; i++)
		yes = m.v[i].inode == f->inode && m.v[i].dev_major == f->dev_major &&
		      m.v[i].dev_minor == f->dev_minor;
	xp_maps_free(&m);
	return yes;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int xp_proc_children(uint32_t pid, const char *path, struct xp_children *out)
{
	struct xp_map_entry f;
	bool have_file;
	struct dirent *d;
	DIR *dir;

	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	have_file = path && file_id(pid, path, &f);
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		struct xp_proc_stat st;
		uint64_t v;

		/* /proc lists processes only (thread ids are not listed) */
		if (xpc_parse_u64(d->d_name, 1, UINT32_MAX, &v) || v == pid)
			continue;
		if (xp_proc_stat_read((uint32_t)v, 0, &st) || st.ppid != pid || st.state == 'Z' ||
		    st.state == 'X')
			continue;
		out->total++;
		if (path) {
			if (!have_file || !maps_file((uint32_t)v, &f))
				continue;
			out->mapping++;
		}
		if (out->n < XP_CHILDREN_MAX)
			out->pid[out->n++] = (uint32_t)v;
	}
	closedir(dir);
	qsort(out->pid, out->n, sizeof(out->pid[0]), u32_cmp);
	return 0;
}
