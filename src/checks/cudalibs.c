/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudalibs.c - CUDA libraries mapped by a target and installed here
 * (rules in cudalibs.h).
 */
#include <glob.h>
#include <stdint.h>
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
			if (!out->libcudart)
				snprintf(out->cudart_path, sizeof(out->cudart_path), "%s", e->path);
			out->libcudart = true;
			if ((major = xp_lib_major(base, "libcudart")) >= 0)
				add_major(out, major);
		}
		if (strncmp(base, "libcupti.so", 11) == 0) {
			if (!out->libcupti)
				snprintf(out->cupti_path, sizeof(out->cupti_path), "%s", e->path);
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

/* --- the target's view -------------------------------------------------------------- */

struct target_search {
	char root[64]; /* "/proc/<pid>/root", or "/proc/<pid>/task/<tid>/root" */
	int major; /* the wanted major */
	const char *name; /* "libcupti.so.<major>" */
	struct xp_cupti_install *out;
	bool found;
};

/* @path (as the target sees it) exists in the target's file system. */
static bool target_has(struct target_search *s, const char *path)
{
	char full[PATH_MAX + 64];

	if (path[0] != '/' || (size_t)snprintf(full, sizeof(full), "%s%s", s->root, path) >=
				      sizeof(full))
		return false;
	if (access(full, R_OK) != 0)
		return false;
	s->out->major = s->major;
	snprintf(s->out->path, sizeof(s->out->path), "%s", path);
	s->found = true;
	return true;
}

static bool target_in_dir(struct target_search *s, const char *dir, size_t dlen)
{
	char path[PATH_MAX];

	if (!dlen || dlen >= sizeof(path) - 32)
		return false;
	snprintf(path, sizeof(path), "%.*s/%s", (int)dlen, dir, s->name);
	return target_has(s, path);
}

static int target_cache_entry(const char *name, const char *path, void *ctx)
{
	struct target_search *s = ctx;

	return strcmp(name, s->name) == 0 && target_has(s, path);
}

/* LD_LIBRARY_PATH of the target's environment, "" when unset or unreadable. */
static void target_ld_path(uint32_t pid, char *buf, size_t size)
{
	char path[96], base[64], *env = NULL;
	size_t len = 0, i = 0;

	buf[0] = '\0';
	if (xp_proc_base(pid, base, sizeof(base)) < 0)
		return;
	snprintf(path, sizeof(path), "%s/environ", base);
	if (xp_read_file(path, 1 << 20, &env, &len))
		return;
	while (i < len) {
		const char *v = env + i;
		size_t n = strnlen(v, len - i);

		if (n > 16 && strncmp(v, "LD_LIBRARY_PATH=", 16) == 0 && n - 16 < size) {
			memcpy(buf, v + 16, n - 16);
			buf[n - 16] = '\0';
			break;
		}
		i += n + 1;
	}
	free(env);
}

static bool target_search_major(struct target_search *s, const struct xp_cuda_mapped *m,
				const char *ld_path)
{
	static const char *const defaults[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
						"/lib64", "/usr/lib64", "/lib", "/usr/lib" };
	char name[32], cache[96];
	const char *p, *slash;
	size_t i;

	snprintf(name, sizeof(name), "libcupti.so.%d", s->major);
	s->name = name;
	slash = strrchr(m->cudart_path, '/');
	if (m->libcudart && slash) {
		char dir[PATH_MAX];
		size_t n = (size_t)(slash - m->cudart_path);

		if (target_in_dir(s, m->cudart_path, n))
			return true;
		if (n < sizeof(dir) - 32) {
			snprintf(dir, sizeof(dir), "%.*s/../extras/CUPTI/lib64", (int)n,
				 m->cudart_path);
			if (target_in_dir(s, dir, strlen(dir)))
				return true;
		}
	}
	for (p = ld_path; *p;) {
		size_t n = strcspn(p, ":;");

		if (target_in_dir(s, p, n))
			return true;
		p += n + (p[n] != '\0');
	}
	snprintf(cache, sizeof(cache), "%s%s", s->root, XP_LDCACHE_PATH);
	xp_ldcache_scan(cache, name, target_cache_entry, s);
	if (s->found)
		return true;
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (target_in_dir(s, defaults[i], strlen(defaults[i])))
			return true;
	return false;
}

bool xp_cupti_for_target(uint32_t pid, const struct xp_cuda_mapped *m,
			 struct xp_cupti_install *out, char *why, size_t whylen)
{
	struct target_search s = { .out = out };
	char base[64], ld_path[4096];
	int majors[2] = { 13, 12 }, n = 2, i;

	memset(out, 0, sizeof(*out));
	if (m->libcupti && m->nmajors == 1 && xp_cuda_major_supported(m->majors[0]) &&
	    m->cupti_path[0]) {
		out->major = m->majors[0];
		snprintf(out->path, sizeof(out->path), "%s", m->cupti_path);
		return true;
	}
	if (m->libcudart && m->nmajors == 1) {
		majors[0] = m->majors[0];
		n = 1;
	}
	if (xp_proc_base(pid, base, sizeof(base)) < 0)
		snprintf(base, sizeof(base), "/proc/%u", pid);
	snprintf(s.root, sizeof(s.root), "%s/root", base);
	target_ld_path(pid, ld_path, sizeof(ld_path));
	for (i = 0; i < n; i++) {
		s.major = majors[i];
		if (xp_cuda_major_supported(s.major) && target_search_major(&s, m, ld_path))
			return true;
	}
	if (n == 1 && !xp_cuda_major_supported(majors[0]))
		snprintf(why, whylen, "the target uses CUDA %d; xprobe supports CUDA 12 and 13",
			 majors[0]);
	else if (n == 1)
		snprintf(why, whylen,
			 "no libcupti.so.%d for the target's CUDA %d: none beside its %s or in "
			 "../extras/CUPTI/lib64 there, in its LD_LIBRARY_PATH, its dynamic linker "
			 "cache or the default library directories",
			 majors[0], majors[0], m->cudart_path);
	else
		snprintf(why, whylen,
			 "no libcupti.so.13 or libcupti.so.12 where the target's dynamic linker "
			 "looks: its LD_LIBRARY_PATH, its dynamic linker cache, the default library "
			 "directories");
	return false;
}

bool xp_nvidia_driver_loaded(void)
{
	return access("/proc/driver/nvidia", F_OK) == 0;
}
