/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudalibs.c - CUDA libraries mapped by a target and installed here
 * (rules in cudalibs.h).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudalibs.h"
#include "ldcache.h"

int xp_lib_major(const char *base, const char *stem)
{
	size_t n = strlen(stem);
	int v = 0, digits = 0;
	const char *p;

	if (strncmp(base, stem, n) != 0 || strncmp(base + n, ".so.", 4) != 0)
		return -1;
	for (p = base + n + 4; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (++digits > 2)
			return -1; /* >= 100: a calendar version, not a major */
	}
	if (!digits || (*p != '\0' && *p != '.'))
		return -1;
	return v;
}

bool xp_cuda_major_supported(int major)
{
	return major == 12 || major == 13;
}

static void add_major(struct xp_cuda_mapped *m, int major)
{
	size_t i, j;

	for (i = 0; i < m->nmajors; i++)
		if (m->majors[i] == major)
			return;
	if (m->nmajors == XP_CUDA_MAX_MAJORS)
		return;
	for (i = 0; i < m->nmajors && m->majors[i] < major; i++)
		;
	for (j = m->nmajors; j > i; j--)
		m->majors[j] = m->majors[j - 1];
	m->majors[i] = major;
	m->nmajors++;
}

void xp_cuda_mapped_scan(const struct xp_maps *maps, struct xp_cuda_mapped *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < maps->n; i++) {
		const struct xp_map_entry *e = &maps->v[i];
		const char *base;
		int major;

		if (!xp_map_is_file(e))
			continue;
		base = strrchr(e->path, '/') + 1;
		if (strncmp(base, "libcuda.so", 10) == 0)
			out->libcuda = true;
		if (strncmp(base, "libcudart.so", 12) == 0) {
			out->libcudart = true;
			if ((major = xp_lib_major(base, "libcudart")) >= 0)
				add_major(out, major);
		}
		if (strncmp(base, "libcupti.so", 11) == 0) {
			out->libcupti = true;
			if ((major = xp_lib_major(base, "libcupti")) >= 0)
				add_major(out, major);
		}
		if (strncmp(base, "libxprobe", 9) == 0 && strstr(base, ".so") && !out->agent) {
			out->agent = true;
			snprintf(out->agent_path, sizeof(out->agent_path), "%s", e->path);
		}
	}
}

struct cupti_ctx {
	struct xp_cupti_install *out;
	size_t n;
};

static void add_install(struct cupti_ctx *c, int major, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->out[i].major == major)
			return;
	if (c->n == 2 || !realpath(path, real) || access(real, R_OK) != 0)
		return;
	c->out[c->n].major = major;
	snprintf(c->out[c->n].path, sizeof(c->out[c->n].path), "%s", real);
	c->n++;
}

static int cache_entry(const char *name, const char *path, void *ctx)
{
	int major = xp_lib_major(name, "libcupti");

	if (xp_cuda_major_supported(major) && strchr(name + 12, '.') == NULL)
		add_install(ctx, major, path);
	return 0;
}

size_t xp_cupti_installed(struct xp_cupti_install out[2])
{
	static const char *const subdirs[] = { "extras/CUPTI/lib64", "targets/x86_64-linux/lib",
					       "lib64", "lib" };
	struct cupti_ctx c = { out, 0 };
	int major;

	memset(out, 0, 2 * sizeof(*out));
	xp_ldcache_scan(XP_LDCACHE_PATH, "libcupti.so.", cache_entry, &c);
	for (major = 12; major <= 13; major++) {
		char pattern[64];
		glob_t g;
		size_t i, s;

		snprintf(pattern, sizeof(pattern), "/usr/local/cuda-%d*", major);
		memset(&g, 0, sizeof(g));
		glob("/usr/local/cuda", GLOB_NOSORT, NULL, &g);
		glob(pattern, GLOB_APPEND, NULL, &g);
		for (i = 0; i < g.gl_pathc; i++) {
			for (s = 0; s < sizeof(subdirs) / sizeof(subdirs[0]); s++) {
				char path[PATH_MAX];

				snprintf(path, sizeof(path), "%s/%s/libcupti.so.%d", g.gl_pathv[i],
					 subdirs[s], major);
				if (access(path, F_OK) == 0)
					add_install(&c, major, path);
			}
		}
		globfree(&g);
	}
	if (c.n == 2 && out[0].major > out[1].major) {
		struct xp_cupti_install t = out[0];

		out[0] = out[1];
		out[1] = t;
	}
	return c.n;
}
