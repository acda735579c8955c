/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procfs.c - readers and parsers of /proc/<pid>/{maps,exe,cmdline,status,
 * task,ns}.  See procfs.h for the format rules they enforce.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "../../common/readfile.h"
#include "procfs.h"

int xp_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int rc = xpc_read_file(path, 0, max, out, len, NULL);

	/* a process reaped between open and read reads as ESRCH */
	return rc == -ESRCH ? -ENOENT : rc;
}

int xp_proc_fail(const struct xp_target *t, const char *what, int rc, struct xp_error *err)
{
	int vrc = xp_target_verify(t, err);

	if (vrc)
		return vrc;
	xp_target_detail(err, t);
	if (rc == -ENOENT || rc == -ESRCH)
		return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				    "target process %u exited while reading /proc/%u/%s", t->pid,
				    t->pid, what);
	if (rc == -EACCES || rc == -EPERM) {
		xp_error_detail_str(err, "path", what);
		xp_error_hint(err,
			      "run xprobe as root, or with CAP_SYS_PTRACE and the target's uid");
		xp_error_hint(err, "check kernel.yama.ptrace_scope (xprobe doctor shows it)");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied reading /proc/%u/%s", t->pid, what);
	}
	if (rc == -EINVAL)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "malformed /proc/%u/%s", t->pid,
				    what);
	xp_error_detail_str(err, "errno", strerror(-rc));
	return xp_error_set(err, XPROBE_E_INTERNAL, false, "failed to read /proc/%u/%s: %s", t->pid,
			    what, strerror(-rc));
}

/* ---- maps ---------------------------------------------------------------- */

/* Hex digits up to @stop, which is consumed. */
static int hex_field(const char **p, char stop, uint64_t *v)
{
	size_t n;

	if (xpc_parse_hex_span(*p, SIZE_MAX, v, &n) || (*p)[n] != stop)
		return -EINVAL;
	*p += n + 1;
	return 0;
}

static int dec_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	size_t n = 0;

	while (*s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*s - '0');
		s++;
		n++;
	}
	if (n == 0)
		return -EINVAL;
	*v = x;
	*p = s;
	return 0;
}

/* "\012" is how seq_path writes a newline; undo it in place. */
static void unescape_path(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == '0' && s[2] == '1' && s[3] == '2') {
			*w++ = '\n';
			s += 3;
			continue;
		}
		*w++ = *s;
	}
	*w = '\0';
}

static int parse_line(char *line, struct xp_map_entry *e)
{
	const char *p = line;
	uint64_t v, maj, min;
	char *path;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (hex_field(&p, '-', &e->start) || hex_field(&p, ' ', &e->end) || e->end < e->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return -EINVAL;
	memcpy(e->perms, p, 4);
	e->perms[4] = '\0';
	p += 5;
	if (hex_field(&p, ' ', &e->offset))
		return -EINVAL;
	if (hex_field(&p, ':', &maj) || hex_field(&p, ' ', &min) || maj > UINT32_MAX ||
	    min > UINT32_MAX)
		return -EINVAL;
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	if (dec_field(&p, &v))
		return -EINVAL;
	e->inode = v;
	if (*p == '\0')
		return 0; /* anonymous */
	if (*p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (*p == '\0')
		return 0;
	path = (char *)p;
	n = strlen(path);
	if (n > 10 && strcmp(path + n - 10, " (deleted)") == 0) {
		path[n - 10] = '\0';
		e->deleted = true;
	}
	unescape_path(path);
	e->path = path;
	return 0;
}

int xp_maps_parse(char *text, struct xp_maps *out, size_t *bad_line)
{
	size_t cap = 0, lineno = 0;
	char *p = text;

	memset(out, 0, sizeof(*out));
	out->text = text;
	if (bad_line)
		*bad_line = 0;
	while (*p) {
		char *nl = strchr(p, '\n');
		struct xp_map_entry e;

		lineno++;
		if (nl)
			*nl = '\0';
		if (*p) {
			if (parse_line(p, &e)) {
				if (bad_line)
					*bad_line = lineno;
				xp_maps_free(out);
				return -EINVAL;
			}
			if (out->n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct xp_map_entry *v = realloc(out->v, ncap * sizeof(*v));

				if (!v) {
					xp_maps_free(out);
					return -ENOMEM;
				}
				out->v = v;
				cap = ncap;
			}
			out->v[out->n++] = e;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

/* ---- a zombie leader ------------------------------------------------------ */

uint32_t xp_proc_live_thread(uint32_t pid)
{
	uint32_t *tids = NULL, found = 0;
	size_t n = 0, total = 0, i;

	if (xp_proc_threads(pid, 4096, &tids, &n, &total))
		return 0;
	for (i = 0; i < n && !found; i++) {
		struct xp_proc_stat st;

		if (tids[i] != pid && xp_proc_stat_read(pid, tids[i], &st) == 0 &&
		    st.state != 'Z' && st.state != 'X')
			found = tids[i];
	}
	free(tids);
	return found;
}

int xp_proc_base(uint32_t pid, char *buf, size_t size)
{
	struct xp_proc_stat st;
	uint32_t tid;

	if (xp_proc_stat_read(pid, 0, &st) == 0 && (st.state == 'Z' || st.state == 'X') &&
	    (tid = xp_proc_live_thread(pid)))
		return snprintf(buf, size, "/proc/%u/task/%u", pid, tid) < (int)size ? 1 : 0;
	snprintf(buf, size, "/proc/%u", pid);
	return 0;
}

uint32_t xp_proc_attach_pid(uint32_t pid)
{
	struct xp_proc_stat st;
	uint32_t tid;

	if (xp_proc_stat_read(pid, 0, &st) == 0 && (st.state == 'Z' || st.state == 'X') &&
	    (tid = xp_proc_live_thread(pid)))
		return tid;
	return pid;
}

/* @name under xp_proc_base(@pid): 1 when that is a live thread's, else 0. */
static int via_live_thread(uint32_t pid, const char *name, char *path, size_t size)
{
	char base[64];

	if (!xp_proc_base(pid, base, sizeof(base)))
		return 0;
	snprintf(path, size, "%s/%s", base, name);
	return 1;
}

int xp_maps_read_pid(uint32_t pid, struct xp_maps *out, size_t *bad_line)
{
	char path[96], *text;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (bad_line)
		*bad_line = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	rc = xp_read_file(path, (size_t)256 << 20, &text, &len);
	if (rc)
		return rc;
	/* empty: no address space, or a zombie leader whose threads run on */
	if (!len && via_live_thread(pid, "maps", path, sizeof(path))) {
		free(text);
		rc = xp_read_file(path, (size_t)256 << 20, &text, NULL);
		if (rc)
			return rc;
	}
	return xp_maps_parse(text, out, bad_line);
}

int xp_maps_read(const struct xp_target *t, struct xp_maps *out, struct xp_error *err)
{
	size_t bad = 0;
	int rc;

	rc = xp_maps_read_pid(t->pid, out, &bad);
	if (rc == -EINVAL && bad) {
		xp_target_detail(err, t);
		xp_error_detail_u64(err, "line", bad);
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "malformed /proc/%u/maps at line %zu", t->pid, bad);
	}
	if (rc == -ENOMEM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory reading maps");
	if (rc)
		return xp_proc_fail(t, "maps", rc, err);
	return 0;
}

void xp_maps_free(struct xp_maps *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

bool xp_map_same_file(const struct xp_map_entry *a, const struct xp_map_entry *b)
{
	return xp_map_is_file(a) && xp_map_is_file(b) && a->inode == b->inode &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       strcmp(a->path, b->path) == 0;
}

bool xp_maps_file_has_exec(const struct xp_maps *m, const struct xp_map_entry *f)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (xp_map_is_exec(&m->v[i]) && xp_map_same_file(&m->v[i], f))
			return true;
	return false;
}

const struct xp_map_entry *xp_maps_find_offset(const struct xp_maps *m,
					       const struct xp_map_entry *f, uint64_t off)
{
	const struct xp_map_entry *any = NULL;
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct xp_map_entry *e = &m->v[i];

		if (!xp_map_same_file(e, f) || off < e->offset || off - e->offset >= e->end - e->start)
			continue;
		if (xp_map_is_exec(e))
			return e;
		if (!any)
			any = e;
	}
	return any;
}

const char *xp_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

ssize_t xp_maps_files(const struct xp_maps *m, size_t **idx)
{
	size_t *v = NULL, n = 0, cap = 0, i, j;

	*idx = NULL;
	for (i = 0; i < m->n; i++) {
		const struct xp_map_entry *e = &m->v[i];
		bool seen = false;

		if (!xp_map_is_file(e))
			continue;
		for (j = 0; j < n && !seen; j++)
			seen = xp_map_same_file(&m->v[v[j]], e);
		if (seen)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			size_t *nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = i;
	}
	*idx = v;
	return (ssize_t)n;
}

/* ---- exe, cmdline -------------------------------------------------------- */

int xp_proc_exe(uint32_t pid, char **out)
{
	char path[96], buf[4096 + 16];
	ssize_t n;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0 && errno == ENOENT && via_live_thread(pid, "exe", path, sizeof(path)))
		n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	buf[n] = '\0';
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n - 10] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

int xp_cmdline_parse(char *buf, size_t len, struct xp_argv *out)
{
	size_t i, start = 0, n = 0;

	memset(out, 0, sizeof(*out));
	out->buf = buf;
	for (i = 0; i < len; i++)
		if (buf[i] == '\0')
			n++;
	out->v = calloc(n + 2, sizeof(char *));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i <= len; i++) {
		if (i < len && buf[i] != '\0')
			continue;
		if (i > start)
			out->v[out->n++] = buf + start;
		start = i + 1;
	}
	return 0;
}

int xp_proc_cmdline(uint32_t pid, struct xp_argv *out)
{
	char path[96], *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	rc = xp_read_file(path, (size_t)4 << 20, &buf, &len);
	if (rc)
		return rc;
	if (!len && via_live_thread(pid, "cmdline", path, sizeof(path))) {
		free(buf);
		rc = xp_read_file(path, (size_t)4 << 20, &buf, &len);
		if (rc)
			return rc;
	}
	rc = xp_cmdline_parse(buf, len, out);
	if (rc)
		free(buf);
	return rc;
}

void xp_argv_free(struct xp_argv *a)
{
	free(a->v);
	free(a->buf);
	memset(a, 0, sizeof(*a));
}

/* ---- status ---------------------------------------------------------------- */

/* Split the value of a status line into whitespace-separated words. */
static size_t words(const char *s, char w[][24], size_t max)
{
	size_t n = 0;

	while (*s && *s != '\n') {
		size_t len;

		while (*s == ' ' || *s == '\t')
			s++;
		len = strcspn(s, " \t\n");
		if (len == 0)
			break;
		if (n < max) {
			if (len >= 24)
				len = 23;
			memcpy(w[n], s, len);
			w[n][len] = '\0';
		}
		n++;
		s += strcspn(s, " \t\n");
	}
	return n;
}

int xp_status_parse(const char *text, struct xp_proc_status *out)
{
	const char *line = text;
	char w[XP_NSPID_MAX][24];

	memset(out, 0, sizeof(*out));
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t i, n;
		uint64_t v;

		if (strncmp(line, "Uid:", 4) == 0) {
			n = words(line + 4, w, 4);
			if (n != 4)
				return -EINVAL;
			for (i = 0; i < 4; i++) {
				if (xpc_parse_u64(w[i], 0, UINT32_MAX, &v))
					return -EINVAL;
				out->uid[i] = (uint32_t)v;
			}
			out->has_uid = true;
		} else if (strncmp(line, "CapEff:", 7) == 0) {
			char hex[24 + 2] = "0x";

			if (words(line + 7, w, 1) != 1)
				return -EINVAL;
			memcpy(hex + 2, w[0], sizeof(w[0]));
			if (xpc_parse_hex_u64(hex, &out->cap_eff))
				return -EINVAL;
			out->has_cap_eff = true;
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			n = words(line + 6, w, XP_NSPID_MAX);
			if (n == 0 || n > XP_NSPID_MAX)
				return -EINVAL;
			for (i = 0; i < n; i++) {
				if (xpc_parse_u64(w[i], 0, UINT32_MAX, &v))
					return -EINVAL;
				out->nspid[i] = (uint32_t)v;
			}
			out->n_nspid = n;
		} else if (strncmp(line, "Tgid:", 5) == 0) {
			if (words(line + 5, w, 1) != 1 || xpc_parse_u64(w[0], 0, UINT32_MAX, &v))
				return -EINVAL;
			out->tgid = (uint32_t)v;
			out->has_tgid = true;
		} else if (strncmp(line, "Threads:", 8) == 0) {
			if (words(line + 8, w, 1) != 1 ||
			    xpc_parse_u64(w[0], 0, UINT64_MAX, &out->threads))
				return -EINVAL;
			out->has_threads = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int xp_proc_status_read(uint32_t pid, struct xp_proc_status *out)
{
	char path[64], *text;
	int rc;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	rc = xp_read_file(path, 1 << 20, &text, NULL);
	if (rc)
		return rc;
	rc = xp_status_parse(text, out);
	free(text);
	return rc;
}

/* ---- threads, namespaces -------------------------------------------------- */

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int xp_proc_threads(uint32_t pid, size_t max, uint32_t **tids, size_t *n, size_t *total)
{
	char path[64];
	struct dirent *d;
	uint32_t *v = NULL;
	size_t cap = 0;
	DIR *dir;

	*tids = NULL;
	*n = 0;
	*total = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ESRCH ? -ENOENT : -errno;
	while ((errno = 0, d = readdir(dir))) {
		uint64_t tid;

		if (xpc_parse_u64(d->d_name, 1, UINT32_MAX, &tid))
			continue;
		(*total)++;
		if (*n == max)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			uint32_t *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				closedir(dir);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[(*n)++] = (uint32_t)tid;
	}
	if (errno) {
		int rc = errno == ESRCH ? -ENOENT : -errno;

		closedir(dir);
		free(v);
		*n = 0;
		return rc;
	}
	closedir(dir);
	if (*total == 0) {
		free(v);
		*n = 0;
		return -ENOENT; /* a process always has a thread; it is gone */
	}
	qsort(v, *n, sizeof(*v), u32_cmp);
	*tids = v;
	return 0;
}

int xp_proc_ns_link(uint32_t pid, const char *name, char *buf, size_t size)
{
	char path[96], rel[32];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/ns/%s", pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	n = readlink(path, buf, size - 1);
	snprintf(rel, sizeof(rel), "ns/%s", name);
	if (n < 0 && errno == ENOENT && pid && via_live_thread(pid, rel, path, sizeof(path)))
		n = readlink(path, buf, size - 1);
	if (n < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	buf[n] = '\0';
	return 0;
}
