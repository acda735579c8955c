/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session_read.c - open a whole session directory (xprobe_session_open).
 *
 * A stopped session is described by its trace_info.pb: the reader opens
 * exactly the files it lists (sizes must match, every file must validate
 * and name the same process, instance and session start) and ignores
 * anything else in the directory.  A session whose process died before
 * stop has no trace_info.pb: the reader then recovers the host rings from
 * host_rings.live and takes every complete file it finds (a file is only
 * visible once renamed from its temporary, so a visible file is whole;
 * temporaries "<name>.tmp.<pid>.<random>" are skipped).  Files are opened
 * through xpl_xtf_open_entry (regular files only, never a blocking open
 * of a FIFO, never through a symbolic link as the entry's own name; the
 * on_fail/ subdirectory itself is resolved as usual).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../internal.h"
#include "xtf_internal.h"

#define XPL_SESSION_MAX_FILES 65536

struct xpl_session_file {
	char *name;
	struct xprobe_xtf *x;
};

struct xprobe_session {
	struct xpl_session_file *files;
	size_t n, cap;
	bool recovered;
};

XPROBE_API void xprobe_session_close(struct xprobe_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].name);
		xpl_xtf_free(s->files[i].x);
	}
	free(s->files);
	free(s);
}

static int add_file(struct xprobe_session *s, const char *name, struct xprobe_xtf *x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		void *p = realloc(s->files, cap * sizeof(*s->files));

		if (!p)
			return -ENOMEM;
		s->files = p;
		s->cap = cap;
	}
	s->files[s->n].name = strdup(name);
	if (!s->files[s->n].name)
		return -ENOMEM;
	s->files[s->n].x = x;
	s->n++;
	return 0;
}

/* Open @dir/@name, prefixing a rejection with the file name. */
static int open_one(const char *dir, const char *name, struct xprobe_xtf **x, char *err,
		    size_t errlen)
{
	char path[4352], why[512];
	int rc;

	if (xpl_snprintf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return xpl_xtf_reject(err, errlen, "%s/%s: path too long", dir, name);
	rc = xpl_xtf_open_entry(path, x, why, sizeof(why));
	if (rc)
		xpl_errf(err, errlen, rc, "%s: %s", name,
			 why[0] ? why : strerror(rc < 0 && rc > -4096 ? -rc : EIO));
	return rc;
}

static bool same_origin(const struct xprobe_xtf *a, const struct xprobe_xtf *b)
{
	return a->info.pid == b->info.pid && a->info.session_start_ns == b->info.session_start_ns &&
	       !strcmp(a->info.instance_id, b->info.instance_id);
}

static int open_listed(struct xprobe_session *s, const char *dir, struct xprobe_xtf *info,
		       char *err, size_t errlen)
{
	int rc = add_file(s, "trace_info.pb", info);

	if (rc) {
		xpl_xtf_free(info);
		return rc;
	}
	for (size_t i = 0; i < info->info.files; i++) {
		const char *name;
		uint32_t kind;
		uint64_t size;
		struct xprobe_xtf *x = NULL;

		xprobe_xtf_get_file(info, i, &name, &kind, &size);
		rc = open_one(dir, name, &x, err, errlen);
		if (rc == -ENOENT)
			return xpl_xtf_reject(err, errlen,
					      "%s: listed in trace_info.pb but missing", name);
		if (rc)
			return rc;
		if (x->len != size || x->info.kind != kind) {
			xpl_xtf_free(x);
			return xpl_xtf_reject(
				err, errlen,
				"%s: trace_info.pb lists %llu bytes of kind %u, the file differs",
				name, (unsigned long long)size, kind);
		}
		if (!same_origin(x, info)) {
			xpl_xtf_free(x);
			return xpl_xtf_reject(err, errlen,
					      "%s: belongs to another process or session", name);
		}
		rc = add_file(s, name, x);
		if (rc) {
			xpl_xtf_free(x);
			return rc;
		}
	}
	return 0;
}

static bool candidate(const char *n)
{
	size_t l = strlen(n);

	if (strstr(n, ".tmp."))
		return false;
	return (l > 4 && !strcmp(n + l - 4, ".xtf")) || (l > 3 && !strcmp(n + l - 3, ".pb"));
}

/* No trace_info.pb: recover rings, take every complete file. */
static int open_recovered(struct xprobe_session *s, const char *dir, char *err, size_t errlen)
{
	static const char *const subdirs[] = { "", "on_fail/" };
	char path[4352];
	struct stat st;
	int rc;

	s->recovered = true;
	if (xpl_snprintf(path, sizeof(path), "%s/host_rings.live", dir) < 0)
		return xpl_xtf_reject(err, errlen, "path too long");
	if (stat(path, &st) == 0) {
		struct xprobe_xtf *x = NULL;
		char why[512];

		rc = xprobe_rings_recover(path, &x, why, sizeof(why));
		if (rc)
			return xpl_xtf_reject(err, errlen, "host_rings.live: %s", why);
		rc = add_file(s, "host_rings.live", x);
		if (rc) {
			xpl_xtf_free(x);
			return rc;
		}
	}
	for (size_t d = 0; d < XPL_ARRAY_SIZE(subdirs); d++) {
		struct dirent **ents = NULL;
		int n;

		if (xpl_snprintf(path, sizeof(path), "%s/%s", dir, subdirs[d]) < 0)
			return xpl_xtf_reject(err, errlen, "path too long");
		n = scandir(path, &ents, NULL, alphasort);
		if (n < 0)
			continue;
		rc = 0;
		for (int i = 0; i < n; i++) {
			char name[300];
			struct xprobe_xtf *x = NULL;

			if (!rc && candidate(ents[i]->d_name) && s->n < XPL_SESSION_MAX_FILES &&
			    xpl_snprintf(name, sizeof(name), "%s%s", subdirs[d], ents[i]->d_name) >=
				    0) {
				rc = open_one(dir, name, &x, err, errlen);
				if (!rc && s->n && !same_origin(x, s->files[0].x))
					rc = xpl_xtf_reject(
						err, errlen,
						"%s: belongs to another process or session", name);
				if (!rc)
					rc = add_file(s, name, x);
				if (rc)
					xpl_xtf_free(x);
			}
			free(ents[i]);
		}
		free(ents);
		if (rc)
			return rc;
	}
	if (!s->n)
		return xpl_xtf_reject(
			err, errlen,
			"not a libxprobe session directory: no trace_info.pb, no host_rings.live "
			"and no .xtf file");
	return 0;
}

XPROBE_API int xprobe_session_open(const char *dir, struct xprobe_session **out, char *err,
				   size_t errlen)
{
	struct xprobe_session *s;
	struct xprobe_xtf *info = NULL;
	struct stat st;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!dir || !out)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "dir and out must not be NULL");
	*out = NULL;
	if (stat(dir, &st) != 0)
		return xpl_errf(err, errlen, -errno, "cannot open: %s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return xpl_xtf_reject(err, errlen, "not a directory");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rc = open_one(dir, "trace_info.pb", &info, err, errlen);
	if (rc == 0) {
		if (info->info.kind != XPROBE_XTF_TRACE_INFO) {
			xpl_xtf_free(info);
			rc = xpl_xtf_reject(err, errlen, "trace_info.pb is not of kind trace_info");
		} else {
			rc = open_listed(s, dir, info, err, errlen);
		}
	} else if (rc == -ENOENT) {
		rc = open_recovered(s, dir, err, errlen);
	}
	if (rc) {
		xprobe_session_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

XPROBE_API size_t xprobe_session_file_count(const struct xprobe_session *s)
{
	return s ? s->n : 0;
}

XPROBE_API const struct xprobe_xtf *xprobe_session_get_file(const struct xprobe_session *s,
							    size_t i, const char **name)
{
	if (!s || i >= s->n)
		return NULL;
	if (name)
		*name = s->files[i].name;
	return s->files[i].x;
}

XPROBE_API int xprobe_session_recovered(const struct xprobe_session *s)
{
	return s && s->recovered;
}
