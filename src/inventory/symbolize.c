/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symbolize.c - native (libdw Dwfl over /proc/<pid>/maps) and perf-map
 * symbolization of a live process's addresses; see symbolize.h.
 *
 * Owns: the regions of /proc/<pid>/maps (read by src/process/procfs.h's
 * one maps reader) that name the "mapping" of a frame and recognize
 * CPython, the perf-map parser, and the Dwfl session.
 * Does not own: symbol lookup *by name* (src/resolve/resolve.h does that for
 * selectors), nor any decision about hints (cpu_sample_profile.c).
 *
 * Invariants: regions and perf-map entries are sorted by start address and
 * looked up by binary search; every string handed out lives in
 * s->strings.  The perf map is written by the target, so it is untrusted:
 * it is streamed through one fixed line buffer and only the entries that
 * cover an address being symbolized are kept, so memory follows the
 * number of sampled frames, not the size of the target's map.  Whether
 * the file may be read at all (its path is in a world-writable /tmp) is
 * process/perf_map_file.h's rule, which validate --cpu-sample applies too.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "../../common/search.h"
#include "../../common/readfile.h"
#include "../process/procfs.h"
#include "../resolve/debug_file.h"
#include "symbolize.h"

const char *xp_inv_frame_kind_name(enum xp_inv_frame_kind k)
{
	switch (k) {
	case XP_FRAME_UNRESOLVED:
		return "unresolved";
	case XP_FRAME_NATIVE:
		return "native";
	case XP_FRAME_JIT:
		return "jit";
	case XP_FRAME_PYTHON:
		return "python";
	}
	return "unresolved";
}

/* ---------------------------------------------------------------------- */
/* perf map                                                                */

static int parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	size_t n;
	int rc;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	rc = xpc_parse_hex_span(p, (size_t)(end - p), out, &n);
	if (rc)
		return rc;
	*pp = p + n;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct xp_inv_perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* One line "START SIZE name" (hex, optional 0x); 0 or -EINVAL. */
static int parse_line(const char *p, const char *le, uint64_t *start, uint64_t *size,
		      const char **name, size_t *nlen)
{
	const char *q = p;

	if (le > q && le[-1] == '\r')
		le--;
	if (parse_hex(&q, le, start) || q >= le || *q != ' ')
		return -EINVAL;
	while (q < le && *q == ' ')
		q++;
	if (parse_hex(&q, le, size) || q >= le || *q != ' ')
		return -EINVAL;
	while (q < le && *q == ' ')
		q++;
	*name = q;
	*nlen = (size_t)(le - q);
	if (!*nlen || *size == 0 || *start + *size < *start)
		return -EINVAL;
	return 0;
}

/* Does [start, start+size) hold one of the sorted @want addresses? */
struct addr_key {
	const void *v; /* the sorted table */
	uint64_t addr;
};

static bool want_below(const void *ctx, size_t i)
{
	const struct addr_key *k = ctx;

	return ((const uint64_t *)k->v)[i] < k->addr;
}

static bool covers_any(const uint64_t *want, size_t n, uint64_t start, uint64_t size)
{
	struct addr_key k = { want, start };
	size_t lo = xpc_partition_point(n, want_below, &k);

	return lo < n && want[lo] - start < size;
}

struct map_builder {
	struct xp_inv_perf_map *m;
	struct xp_strtab *st;
	const uint64_t *want;
	size_t nwant;
	size_t cap;
	uint32_t line;
};

/* Account one line; 0 or -ENOMEM. */
static int map_line(struct map_builder *b, const char *p, const char *le)
{
	struct xp_inv_perf_map *m = b->m;
	uint64_t start, size;
	const char *name;
	size_t nlen;

	b->line++;
	if (le == p || (le - p == 1 && *p == '\r'))
		return 0; /* empty lines are not errors */
	if (parse_line(p, le, &start, &size, &name, &nlen)) {
		m->bad_lines++;
		return 0;
	}
	m->entries_seen++;
	if (b->want && !covers_any(b->want, b->nwant, start, size))
		return 0;
	if (m->n >= XP_PERF_MAP_MAX_ENTRIES) {
		m->truncated = true;
		return 0;
	}
	if (m->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 64;
		struct xp_inv_perf_map_entry *nv = realloc(m->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		b->cap = ncap;
	}
	m->v[m->n].start = start;
	m->v[m->n].size = size;
	m->v[m->n].line = b->line;
	if (nlen > XP_PERF_MAP_MAX_NAME)
		nlen = XP_PERF_MAP_MAX_NAME;
	m->v[m->n].name = xp_strtab_intern(b->st, name, nlen);
	if (!m->v[m->n].name)
		return -ENOMEM;
	m->n++;
	return 0;
}

/* Sort by start; of entries with the same start the last line wins (a JIT
 * that reuses memory appends the new owner). */
static void map_finish(struct xp_inv_perf_map *m)
{
	size_t i, w;

	if (m->n < 2)
		return; /* also keeps qsort from a NULL m->v (UBSan: nonnull) */
	qsort(m->v, m->n, sizeof(*m->v), entry_cmp);
	for (i = 0, w = 0; i < m->n; i++) {
		if (w && m->v[w - 1].start == m->v[i].start)
			m->v[w - 1] = m->v[i];
		else
			m->v[w++] = m->v[i];
	}
	m->n = w;
}

int xp_inv_perf_map_parse(const char *text, size_t len, struct xp_strtab *st, const uint64_t *want,
			  size_t nwant, struct xp_inv_perf_map *m)
{
	struct map_builder b = { m, st, want, nwant, 0, 0 };
	const char *p = text, *end = text + len;
	int rc;

	memset(m, 0, sizeof(*m));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;

		if ((rc = map_line(&b, p, le)))
			return rc;
		p = eol ? eol + 1 : end;
	}
	map_finish(m);
	return 0;
}

int xp_inv_perf_map_load(const char *path, const struct xp_perf_map_owners *owners,
			 struct xp_strtab *st, const uint64_t *want, size_t nwant,
			 struct xp_inv_perf_map *m)
{
	struct map_builder b = { m, st, want, nwant, 0, 0 };
	char *buf;
	size_t have = 0;
	uint64_t total = 0;
	bool skipping = false; /* inside a line longer than the buffer */
	int fd, rc = 0;

	memset(m, 0, sizeof(*m));
	fd = xp_perf_map_open(path, owners, &m->file);
	if (fd < 0)
		return fd;
	buf = malloc(XP_PERF_MAP_LINE_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = xpc_read_full(fd, buf + have, XP_PERF_MAP_LINE_MAX - have);
		char *p = buf, *end, *eol;

		if (r < 0) {
			rc = (int)r;
			break;
		}
		if (r == 0) {
			if (have && !skipping)
				rc = map_line(&b, buf, buf + have); /* last line, no newline */
			break;
		}
		total += (uint64_t)r;
		end = buf + have + r;
		while ((eol = memchr(p, '\n', (size_t)(end - p)))) {
			if (skipping)
				skipping = false;
			else if ((rc = map_line(&b, p, eol)))
				goto out;
			p = eol + 1;
		}
		have = (size_t)(end - p);
		if (have == XP_PERF_MAP_LINE_MAX) {
			/* a line longer than any sane symbol: skip it */
			if (!skipping)
				m->bad_lines++;
			skipping = true;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
		if (total >= XP_PERF_MAP_MAX_BYTES) {
			/* grew past the bound after fstat: cut here */
			m->truncated = true;
			break;
		}
	}
out:
	free(buf);
	close(fd);
	if (!rc)
		map_finish(m);
	return rc;
}

static bool entry_at_or_before(const void *ctx, size_t i)
{
	const struct addr_key *k = ctx;

	return ((const struct xp_inv_perf_map_entry *)k->v)[i].start <= k->addr;
}

const struct xp_inv_perf_map_entry *xp_inv_perf_map_lookup(const struct xp_inv_perf_map *m,
							   uint64_t addr)
{
	struct addr_key k = { m->v, addr };
	/* one past the last entry with start <= addr */
	size_t lo = xpc_partition_point(m->n, entry_at_or_before, &k);

	if (!lo)
		return NULL;
	if (addr - m->v[lo - 1].start < m->v[lo - 1].size)
		return &m->v[lo - 1];
	return NULL;
}

void xp_inv_perf_map_free(struct xp_inv_perf_map *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------------- */
/* /proc/<pid>/maps and CPython                                            */

bool xp_inv_python_path_version(const char *path, char *version, size_t size)
{
	const char *base = strrchr(path, '/'), *p, *v;
	size_t n;

	base = base ? base + 1 : path;
	if (strncmp(base, "libpython", 9) == 0)
		p = base + 9;
	else if (strncmp(base, "python", 6) == 0)
		p = base + 6;
	else
		return false;
	/* MAJOR.MINOR, then the end, ".so...", or one ABI flag letter ("3.11d") */
	v = p;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p++ != '.' || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	n = (size_t)(p - v);
	if (isalpha((unsigned char)*p))
		p++;
	if (*p && *p != '.')
		return false;
	if (n >= size)
		return false;
	memcpy(version, v, n);
	version[n] = '\0';
	return true;
}

static int region_cmp(const void *a, const void *b)
{
	const struct xp_inv_map_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * s->regions from /proc/<pid>/maps, read by the one maps reader
 * (src/process/procfs.h).  A frame's mapping is named as the kernel names
 * it: a file replaced since it was mapped keeps its " (deleted)".
 */
static int load_regions(struct xp_inv_symbolizer *s, const struct xp_maps *maps)
{
	char name[PATH_MAX + 16];
	size_t i;

	s->regions = maps->n ? calloc(maps->n, sizeof(*s->regions)) : NULL;
	if (maps->n && !s->regions)
		return -ENOMEM;
	for (i = 0; i < maps->n; i++) {
		const struct xp_map_entry *e = &maps->v[i];
		struct xp_inv_map_region *r = &s->regions[s->nregions++];
		char ver[16];
		int n;

		r->start = e->start;
		r->end = e->end;
		r->exec = xp_map_is_exec(e);
		if (!e->path)
			continue;
		n = snprintf(name, sizeof(name), "%s%s", e->path, e->deleted ? " (deleted)" : "");
		if (n < 0)
			return -ENOMEM;
		r->path = xp_strtab_intern(&s->strings, name,
					   (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1);
		if (!r->path)
			return -ENOMEM;
		if (xp_map_is_file(e) && !e->deleted &&
		    xp_inv_python_path_version(e->path, ver, sizeof(ver))) {
			r->interpreter = true;
			if (!s->cpython) {
				s->cpython = true;
				snprintf(s->python_version, sizeof(s->python_version), "%s", ver);
			}
		}
	}
	/* the kernel lists mappings in address order; sorting keeps the
	 * binary search's invariant true whatever it printed */
	if (s->nregions)
		qsort(s->regions, s->nregions, sizeof(*s->regions), region_cmp);
	return 0;
}

static bool region_at_or_before(const void *ctx, size_t i)
{
	const struct addr_key *k = ctx;

	return ((const struct xp_inv_map_region *)k->v)[i].start <= k->addr;
}

static const struct xp_inv_map_region *find_region(const struct xp_inv_symbolizer *s, uint64_t addr)
{
	struct addr_key k = { s->regions, addr };
	size_t lo = xpc_partition_point(s->nregions, region_at_or_before, &k);

	if (lo && addr < s->regions[lo - 1].end)
		return &s->regions[lo - 1];
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Dwfl                                                                    */

/* The pid of the symbolizer being opened (see the header: not reentrant). */
static uint32_t find_elf_pid;

/*
 * Open a module's file as the target sees it (/proc/<pid>/root/...), so a
 * target in another mount namespace resolves; anything else (vdso, deleted
 * files) goes to libdw's own proc callback.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, n;

	if (name[0] == '/' && find_elf_pid) {
		n = snprintf(path, sizeof(path), "/proc/%u/root%s", find_elf_pid, name);
		if (n > 0 && (size_t)n < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				*file_name = strdup(path);
				if (!*file_name) {
					close(fd);
					return -1;
				}
				return fd;
			}
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

/*
 * A stripped object's separate debug file, found by the rules validate's
 * ELF lookups use (src/resolve/debug_file.h), so a function named from it
 * is one validate resolves.  libdw reads its .symtab when the object has
 * none.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct xp_debug_want w = { .object_path = file_name,
				   .debuglink = debuglink_file,
				   .crc = debuglink_crc };
	const unsigned char *id = NULL;
	char path[PATH_MAX * 2];
	GElf_Addr vaddr;
	int n, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n > 0) {
		w.build_id = id;
		w.build_id_len = (size_t)n;
	}
	fd = xp_debug_file_open(&w, path, sizeof(path));
	if (fd < 0)
		return -1;
	*debuginfo_file_name = strdup(path);
	if (!*debuginfo_file_name) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

int xp_inv_symbolizer_open(uint32_t pid, uint32_t ns_pid, struct xp_inv_symbolizer *s,
			   struct xp_error *err)
{
	struct xp_maps maps;
	size_t bad = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->ns_pid = ns_pid ? ns_pid : pid;
	xp_strtab_init(&s->strings);

	rc = xp_maps_read_pid(pid, &maps, &bad);
	if (rc && rc != -ENOMEM) {
		xp_error_detail_u64(err, "pid", pid);
		if (rc == -ENOENT || rc == -ESRCH)
			return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
					    "target process %u exited before symbolization", pid);
		if (rc == -EACCES || rc == -EPERM)
			return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
					    "cannot read /proc/%u/maps", pid);
		if (rc == -EINVAL && bad) {
			xp_error_detail_u64(err, "line", bad);
			return xp_error_set(err, XPROBE_E_INTERNAL, false,
					    "malformed /proc/%u/maps at line %zu", pid, bad);
		}
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "cannot read /proc/%u/maps: %s",
				    pid, strerror(-rc));
	}
	if (!rc)
		rc = load_regions(s, &maps);
	xp_maps_free(&maps);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "out of memory reading the target's mappings");

	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "libdw: %s", dwfl_errmsg(-1));
	find_elf_pid = pid;
	dwfl_report_begin(s->dwfl);
	rc = dwfl_linux_proc_report(s->dwfl, (pid_t)pid);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (rc) {
		/* rc > 0 is an errno reading maps; < 0 a libdw error.  The
		 * frames stay unresolved natively; the perf map still works. */
		s->dwfl_error = rc > 0 ? -rc : -EIO;
		dwfl_end(s->dwfl);
		s->dwfl = NULL;
	}

	snprintf(s->perf_map_path, sizeof(s->perf_map_path), "/tmp/perf-%u.map", s->ns_pid);
	xp_perf_map_owners_of(pid, &s->perf_map_owners);
	return 0;
}

int xp_inv_symbolizer_prepare(struct xp_inv_symbolizer *s, const uint64_t *addrs, size_t n)
{
	char mpath[192], base[64];
	int rc;

	xp_inv_perf_map_free(&s->perf_map);
	s->perf_map_present = false;
	s->perf_map_refused = false;
	s->perf_map_error = 0;
	xp_proc_base(s->pid, base, sizeof(base)); /* a zombie leader: a live thread's root */
	snprintf(mpath, sizeof(mpath), "%s/root%s", base, s->perf_map_path);
	rc = xp_inv_perf_map_load(mpath, &s->perf_map_owners, &s->strings, addrs, n, &s->perf_map);
	if (rc == 0)
		s->perf_map_present = true;
	else if (rc == -ENOMEM)
		return rc;
	else if (rc == -EPERM && s->perf_map.file.refusal)
		s->perf_map_refused = true;
	else if (rc != -ENOENT)
		s->perf_map_error = rc;
	return 0;
}

static void symbolize_native(struct xp_inv_symbolizer *s, uint64_t addr, struct xp_inv_sym_frame *f)
{
	Dwfl_Module *mod;
	const char *modname, *name;
	GElf_Off off = 0;
	GElf_Sym sym;
	int type;

	if (!s->dwfl)
		return;
	mod = dwfl_addrmodule(s->dwfl, addr);
	if (!mod)
		return;
	modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!modname || modname[0] != '/')
		return; /* [vdso] and friends: no file a uprobe could name */
	memset(&sym, 0, sizeof(sym));
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!name || !name[0])
		return;
	type = GELF_ST_TYPE(sym.st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return;
	if (sym.st_size && off >= sym.st_size)
		return;
	f->kind = XP_FRAME_NATIVE;
	f->binary =
		xp_strtab_get(&s->strings, xp_strtab_intern(&s->strings, modname, strlen(modname)));
	f->symbol = xp_strtab_get(&s->strings, xp_strtab_intern(&s->strings, name, strlen(name)));
	f->symbol_offset = off;
	if (!f->binary || !f->symbol) { /* allocation failure: say unresolved */
		f->kind = XP_FRAME_UNRESOLVED;
		f->binary = f->symbol = NULL;
		f->symbol_offset = 0;
	}
}

void xp_inv_symbolize(struct xp_inv_symbolizer *s, uint64_t addr, struct xp_inv_sym_frame *out)
{
	const struct xp_inv_map_region *r;
	const struct xp_inv_perf_map_entry *e;

	memset(out, 0, sizeof(*out));
	out->address = addr;
	s->lookups++;
	r = find_region(s, addr);
	if (r) {
		out->mapping = r->path ? xp_strtab_get(&s->strings, r->path) : "[anon]";
		out->interpreter = r->interpreter;
	}
	symbolize_native(s, addr, out);
	e = s->perf_map_present ? xp_inv_perf_map_lookup(&s->perf_map, addr) : NULL;
	if (e) {
		out->perf_map_symbol = xp_strtab_get(&s->strings, e->name);
		if (out->kind == XP_FRAME_UNRESOLVED)
			out->kind = strncmp(out->perf_map_symbol, "py::", 4) == 0 ?
					    XP_FRAME_PYTHON :
					    XP_FRAME_JIT;
	}
}

void xp_inv_symbolizer_close(struct xp_inv_symbolizer *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	xp_inv_perf_map_free(&s->perf_map);
	free(s->regions);
	s->regions = NULL;
	s->nregions = 0;
	xp_strtab_free(&s->strings);
}
