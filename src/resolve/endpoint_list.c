/* SPDX-License-Identifier: Apache-2.0 */
/*
 * endpoint_list.c - validate --list: the target's endpoints matching a
 * glob (rules in endpoint_list.h).
 *
 * Invariant: out->v holds at most out->limit entries, kept as a max-heap
 * by selector while scanning (the largest at v[0], replaced by a smaller
 * candidate), sorted ascending at the end.  A candidate's text is built in
 * a stack buffer and compared with the heap's largest before anything is
 * allocated, so a pattern that matches a million symbols costs a
 * comparison each, not an allocation.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../common/search.h"
#include "../process/procfs.h"
#include "../selector/syscall_table.h"
#include "endpoint_list.h"
#include "resolve.h"
#include "target_files.h"
#include "tracefs.h"
#include "xelf.h"

#define SEL_MAX (PATH_MAX + 8192)
#define AVAILABLE_EVENTS_MAX (16u << 20)

const char *xp_endpoint_kind_name(enum xp_endpoint_kind k)
{
	switch (k) {
	case XP_EP_UPROBE:
		return "uprobe";
	case XP_EP_PYTHON_GC:
		return "python_gc";
	case XP_EP_SYSCALL:
		return "syscall";
	case XP_EP_TRACEPOINT:
		return "tracepoint";
	}
	return "unknown";
}

/* ---- the bounded heap --------------------------------------------------------- */

static void ep_free(struct xp_endpoint *e)
{
	free(e->selector);
	free(e->binary_path);
	free(e->symbol);
	free(e->signature);
	free(e->symbol_selector);
	free(e->access_path);
	free(e->selector_binary);
	memset(e, 0, sizeof(*e));
}

static void sift_down(struct xp_endpoint *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && strcmp(v[l].selector, v[m].selector) > 0)
			m = l;
		if (r < n && strcmp(v[r].selector, v[m].selector) > 0)
			m = r;
		if (m == i)
			return;
		struct xp_endpoint t = v[i];

		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

static void sift_up(struct xp_endpoint *v, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (strcmp(v[p].selector, v[i].selector) >= 0)
			return;
		struct xp_endpoint t = v[i];

		v[i] = v[p];
		v[p] = t;
		i = p;
	}
}

/* Whether a candidate @sel would be kept (counts it either way). */
static bool wanted(struct xp_endpoint_list *l, const char *sel)
{
	l->total++;
	return l->n < l->limit || strcmp(sel, l->v[0].selector) < 0;
}

/* Keep @e (its strings move in): the heap's largest goes when full.
 * -ENOMEM (e freed) when the array cannot grow. */
static int keep(struct xp_endpoint_list *l, struct xp_endpoint *e)
{
	if (l->n < l->limit) {
		if (l->n == l->cap) {
			size_t cap = l->cap * 2 < l->limit ? l->cap * 2 : (size_t)l->limit;
			struct xp_endpoint *v = realloc(l->v, cap * sizeof(*v));

			if (!v) {
				ep_free(e);
				return -ENOMEM;
			}
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n] = *e;
		sift_up(l->v, l->n++);
	} else {
		ep_free(&l->v[0]);
		l->v[0] = *e;
		sift_down(l->v, l->n, 0);
	}
	memset(e, 0, sizeof(*e));
	return 0;
}

static int by_selector(const void *a, const void *b)
{
	return strcmp(((const struct xp_endpoint *)a)->selector,
		      ((const struct xp_endpoint *)b)->selector);
}

static char *dup_or(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* A candidate that is not a uprobe: counted, kept when among the smallest. */
static int add_simple(struct xp_endpoint_list *l, enum xp_endpoint_kind kind, const char *sel,
		      const char *binary, const char *symbol)
{
	struct xp_endpoint e = { 0 };
	bool oom = false;

	if (fnmatch(l->pattern, sel, 0) != 0 || !wanted(l, sel))
		return 0;
	e.kind = kind;
	e.selector = dup_or(sel, &oom);
	e.binary_path = dup_or(binary, &oom);
	e.symbol = dup_or(symbol, &oom);
	if (oom) {
		ep_free(&e);
		return -ENOMEM;
	}
	return keep(l, &e);
}

/* ---- uprobes ------------------------------------------------------------------- */

/* A function symbol that matched, pointing into the mapped ELF file. */
struct fsym {
	const char *name;
	uint64_t value;
	bool hidden;
	uint8_t path; /* the name of the file it matched under (obj_scan.paths) */
};

/*
 * The names one object is listed under: its canonical path first, then,
 * for the target's executable, the symlinks beside it that name the same
 * file (Debian's /usr/bin/redis-server -> redis-check-rdb, python3 ->
 * python3.11), so a pattern written with the name the program was started
 * by matches.  Each has its own buffer holding "uprobe:<path>:".
 */
#define MAX_NAMES 8

struct obj_scan {
	struct xp_endpoint_list *l;
	const char *paths[MAX_NAMES];
	char *bufs[MAX_NAMES]; /* SEL_MAX each: the prefix, then the symbol */
	size_t plens[MAX_NAMES];
	size_t npaths;
	struct fsym *v;
	size_t n, cap;
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* The text after path @i's prefix: @name, or "symbol=" @sig. */
static bool put_symbol(struct obj_scan *s, size_t i, const char *pre, const char *name)
{
	int n = snprintf(s->bufs[i] + s->plens[i], SEL_MAX - s->plens[i], "%s%s", pre, name);

	return n > 0 && (size_t)n < SEL_MAX - s->plens[i];
}

/* The first of the object's names under which @text (after the prefix) matches. */
static int match_under(struct obj_scan *s, const char *pre, const char *text)
{
	for (size_t i = 0; i < s->npaths; i++)
		if (put_symbol(s, i, pre, text) && fnmatch(s->l->pattern, s->bufs[i], 0) == 0)
			return (int)i;
	return -1;
}

static int scan_func(const char *name, uint64_t value, uint64_t size, bool from_symtab,
		     bool hidden, void *ctx)
{
	struct obj_scan *s = ctx;
	int path;

	(void)size;
	(void)from_symtab;
	/* versioned .symtab spellings (memcpy@@GLIBC_2.14) repeat a .dynsym
	 * name; a selector cannot hold ':' or a line break */
	if (strpbrk(name, "@: \t\n"))
		return 0;
	path = match_under(s, "", name);
	if (path < 0 && name[0] == '_' && name[1] == 'Z') {
		char *dm = xp_demangle(name);

		if (dm)
			path = match_under(s, "symbol=", dm);
		free(dm);
	}
	if (path < 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct fsym *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct fsym){ name, value, hidden, (uint8_t)path };
	return 0;
}

/* One endpoint: @f by name, or by its file offset. */
static int add_uprobe(struct obj_scan *s, struct xp_elf *elf, const char *access,
		      const struct fsym *f, bool by_offset)
{
	struct xp_endpoint_list *l = s->l;
	struct xp_endpoint e = { 0 };
	char *buf = s->bufs[f->path];
	size_t plen = s->plens[f->path];
	uint64_t off;
	bool oom = false;

	if (by_offset) {
		if (xp_elf_va_to_offset(elf, f->value, &off) != 0)
			return 0; /* not in the file image: no offset selector */
		snprintf(buf + plen, SEL_MAX - plen, "+0x%llx", (unsigned long long)off);
	} else if (!put_symbol(s, f->path, "", f->name)) {
		return 0;
	}
	if (!wanted(l, buf))
		return 0;
	e.kind = XP_EP_UPROBE;
	e.selector = dup_or(buf, &oom);
	e.binary_path = dup_or(s->paths[0], &oom);
	e.symbol = dup_or(f->name, &oom);
	e.access_path = dup_or(access, &oom);
	e.selector_binary = dup_or(s->paths[f->path], &oom);
	e.by_offset = by_offset;
	e.address = f->value;
	if (f->name[0] == '_' && f->name[1] == 'Z')
		e.signature = xp_demangle(f->name); /* NULL: not C++ after all */
	if (oom) {
		ep_free(&e);
		return -ENOMEM;
	}
	return keep(l, &e);
}

/*
 * The matched symbols of one object, grouped by name as a lookup groups
 * them: the addresses of the default-version entries when there are any,
 * else all; one address is one endpoint by name, several are one
 * endpoint per address by file offset.  s->v is sorted by (name, value).
 */
static int add_groups(struct obj_scan *s, struct xp_elf *elf, const char *access)
{
	size_t i = 0, j, k, naddr;
	int rc = 0;

	qsort(s->v, s->n, sizeof(*s->v), fsym_cmp);
	for (; i < s->n && !rc; i = j) {
		bool visible = false;
		const struct fsym *last = NULL;

		for (j = i; j < s->n && strcmp(s->v[j].name, s->v[i].name) == 0; j++)
			visible |= !s->v[j].hidden;
		naddr = 0;
		for (k = i; k < j; k++) {
			if (visible && s->v[k].hidden)
				continue;
			naddr += !last || s->v[k].value != last->value;
			last = &s->v[k];
		}
		last = NULL;
		for (k = i; k < j && !rc; k++) {
			if ((visible && s->v[k].hidden) || (last && s->v[k].value == last->value))
				continue;
			last = &s->v[k];
			rc = add_uprobe(s, elf, access, last, naddr > 1);
			if (naddr == 1)
				break;
		}
	}
	return rc;
}

/*
 * Symlinks in the directory of the target's executable @m that name the
 * same file, resolved inside the target's root; up to MAX_NAMES - 1,
 * malloc'ed into @out.  Returns the count.
 */
static size_t exe_aliases(struct xp_target_fs *fs, const struct xp_map_entry *m, char **out)
{
	const char *slash = strrchr(m->path, '/');
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	DIR *d;
	int dfd;

	if (!slash || slash == m->path || (size_t)(slash - m->path) >= sizeof(dir) - 1)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - m->path), m->path);
	if (fs->same_root)
		snprintf(path, sizeof(path), "%s", dir);
	else /* the directory as the target sees it */
		snprintf(path, sizeof(path), "%s/root%s", fs->base, dir);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (n < MAX_NAMES - 1 && (de = readdir(d))) {
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(de->d_name, slash + 1) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode))
			continue;
		if (xp_target_fs_stat(fs, path, &st) != 0 || (uint64_t)st.st_ino != m->inode ||
		    major(st.st_dev) != m->dev_major || minor(st.st_dev) != m->dev_minor)
			continue;
		out[n] = strdup(path);
		if (out[n])
			n++;
	}
	closedir(d);
	return n;
}

static void object_not_read(struct xp_endpoint_list *l, const char *path, int rc)
{
	char msg[PATH_MAX + 128];

	snprintf(msg, sizeof(msg), "the mapped file %s could not be read (%s): its symbols are not listed",
		 path, strerror(-rc));
	xp_warnings_add(&l->warnings, "OBJECT_NOT_READ", msg, NULL);
}

static bool is_exe(const struct xp_target_fs *fs, const struct xp_map_entry *m)
{
	return fs->has_exe && m->inode == (uint64_t)fs->exe_ino &&
	       makedev(m->dev_major, m->dev_minor) == fs->exe_dev;
}

static int scan_object(struct xp_endpoint_list *l, struct xp_target_fs *fs,
		       const struct xp_map_entry *m, char *const bufs[MAX_NAMES])
{
	struct obj_scan s = { .l = l };
	char *aliases[MAX_NAMES - 1];
	size_t na = 0, i;
	struct xp_elf elf;
	char *access = NULL;
	int rc, n;

	s.paths[0] = m->path;
	if (is_exe(fs, m))
		na = exe_aliases(fs, m, aliases);
	for (i = 0; i <= na; i++) {
		const char *p = i ? aliases[i - 1] : m->path;

		n = snprintf(bufs[s.npaths], SEL_MAX, "uprobe:%s:", p);
		if (n <= 0 || (size_t)n >= SEL_MAX / 2)
			continue;
		s.paths[s.npaths] = p;
		s.bufs[s.npaths] = bufs[s.npaths];
		s.plens[s.npaths++] = (size_t)n;
	}
	rc = s.npaths && s.paths[0] == m->path ? xp_target_fs_access(fs, m, &access) : -ENAMETOOLONG;
	if (rc) {
		object_not_read(l, m->path, rc);
		rc = 0;
		goto out;
	}
	rc = xp_elf_open(access, &elf);
	if (rc) {
		if (rc != -ENOEXEC)
			object_not_read(l, m->path, rc);
		rc = 0; /* not ELF (a font, a locale archive): nothing to list */
		goto out;
	}
	l->objects++;
	rc = xp_elf_each_func(&elf, scan_func, &s);
	if (rc == 0)
		rc = add_groups(&s, &elf, access);
	else if (rc == -EINVAL)
		rc = 0; /* malformed tables: what was read is all there is */
	xp_elf_close(&elf);
out:
	free(s.v);
	free(access);
	for (i = 0; i < na; i++)
		free(aliases[i]);
	return rc;
}

/* A uprobe can match @pat at all: its literal prefix agrees with "uprobe:". */
static bool family_possible(const char *pat, const char *family)
{
	size_t i;

	for (i = 0; pat[i] && family[i]; i++) {
		if (pat[i] == '*' || pat[i] == '?' || pat[i] == '[' || pat[i] == '\\')
			return true;
		if (pat[i] != family[i])
			return false;
	}
	return true;
}

static int list_uprobes(const struct xp_target *t, struct xp_endpoint_list *l,
			struct xp_error *err)
{
	struct xp_target_fs fs;
	struct xp_maps maps = { 0 };
	char *bufs[MAX_NAMES] = { 0 };
	size_t *files = NULL;
	ssize_t nf;
	int rc;

	rc = xp_target_fs_open(t, &fs, err);
	if (rc)
		return rc;
	rc = xp_maps_read(t, &maps, err);
	if (rc)
		goto out;
	nf = xp_maps_files(&maps, &files);
	for (size_t i = 0; i < MAX_NAMES; i++)
		if (!(bufs[i] = malloc(SEL_MAX)))
			nf = -1;
	if (nf < 0) {
		rc = -ENOMEM;
		goto out;
	}
	for (ssize_t i = 0; i < nf && !rc; i++) {
		const struct xp_map_entry *m = &maps.v[files[i]];

		if (xp_map_is_file(m) && xp_maps_file_has_exec(&maps, m))
			rc = scan_object(l, &fs, m, bufs);
	}
out:
	for (size_t i = 0; i < MAX_NAMES; i++)
		free(bufs[i]);
	free(files);
	xp_maps_free(&maps);
	xp_target_fs_close(&fs);
	if (rc == -ENOMEM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	return rc;
}

/*
 * The symbol= form of each kept C++ symbol, offered only when the
 * signature resolves to this one address (C1/C2 constructors and other
 * clones demangle alike), by the rules of a lookup (xelf.h): the
 * demangled .dynsym matches, the default-version ones when there are
 * any, else the .symtab ones, merged by address.  One pass over each
 * object that holds a kept C++ symbol, demangling its C++ names once,
 * however many signatures it checks.
 */
struct addrset {
	uint64_t first;
	bool any, multi;
};

struct sigcheck {
	const char *sig;
	struct xp_endpoint *e;
	struct addrset dyn, dyn_hidden, sym;
};

struct sigscan {
	struct sigcheck *v;
	size_t n;
};

struct sig_key {
	const struct sigscan *ss;
	const char *sig;
};

static bool sig_below(const void *ctx, size_t i)
{
	const struct sig_key *k = ctx;

	return strcmp(k->ss->v[i].sig, k->sig) < 0;
}

static void addr_add(struct addrset *a, uint64_t v)
{
	if (!a->any) {
		a->first = v;
		a->any = true;
	} else if (v != a->first) {
		a->multi = true;
	}
}

static int sigcheck_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sigcheck *)a)->sig, ((const struct sigcheck *)b)->sig);
}

static int sig_func(const char *name, uint64_t value, uint64_t size, bool from_symtab,
		    bool hidden, void *ctx)
{
	struct sigscan *ss = ctx;
	size_t lo;
	char *dm;

	(void)size;
	if (name[0] != '_' || name[1] != 'Z' || !(dm = xp_demangle(name)))
		return 0;
	/* the first check whose signature is >= dm */
	struct sig_key key = { ss, dm };

	lo = xpc_partition_point(ss->n, sig_below, &key);
	for (; lo < ss->n && strcmp(ss->v[lo].sig, dm) == 0; lo++)
		addr_add(from_symtab ? &ss->v[lo].sym : hidden ? &ss->v[lo].dyn_hidden :
							   &ss->v[lo].dyn,
			 value);
	free(dm);
	return 0;
}

static void sig_selector(struct sigcheck *c)
{
	const struct addrset *a = c->dyn.any ? &c->dyn : c->dyn_hidden.any ? &c->dyn_hidden : &c->sym;
	struct xp_endpoint *e = c->e;
	size_t len;

	if (!a->any || a->multi || a->first != e->address)
		return;
	len = strlen(e->selector_binary) + strlen(e->signature) + 16;
	e->symbol_selector = malloc(len);
	if (e->symbol_selector)
		snprintf(e->symbol_selector, len, "uprobe:%s:symbol=%s", e->selector_binary,
			 e->signature);
}

static void signature_selectors(struct xp_endpoint_list *l)
{
	struct sigscan ss = { calloc(l->n ? l->n : 1, sizeof(struct sigcheck)), 0 };
	bool *done = calloc(l->n ? l->n : 1, sizeof(bool));

	for (size_t i = 0; ss.v && done && i < l->n; i++) {
		struct xp_elf elf;

		if (done[i] || l->v[i].kind != XP_EP_UPROBE || !l->v[i].signature)
			continue;
		/* every kept C++ symbol of this object, checked in one pass */
		ss.n = 0;
		for (size_t j = i; j < l->n; j++) {
			struct xp_endpoint *e = &l->v[j];

			if (done[j] || e->kind != XP_EP_UPROBE || !e->signature ||
			    strcmp(e->access_path, l->v[i].access_path))
				continue;
			done[j] = true;
			ss.v[ss.n++] = (struct sigcheck){ .sig = e->signature, .e = e };
		}
		if (xp_elf_open(l->v[i].access_path, &elf))
			continue;
		qsort(ss.v, ss.n, sizeof(*ss.v), sigcheck_cmp);
		if (xp_elf_each_func(&elf, sig_func, &ss) == 0)
			for (size_t k = 0; k < ss.n; k++)
				sig_selector(&ss.v[k]);
		xp_elf_close(&elf);
	}
	free(ss.v);
	free(done);
}

/* ---- the others ------------------------------------------------------------- */

static int list_python(const struct xp_target *t, struct xp_endpoint_list *l)
{
	struct xp_usdt_marker m[2];
	struct xp_error lerr = { 0 };
	int rc = 0;

	if (fnmatch(l->pattern, "python:gc_start", 0) && fnmatch(l->pattern, "python:gc_end", 0))
		return 0;
	memset(m, 0, sizeof(m));
	if (xp_resolve_python_gc(t, &m[0], &m[1], &lerr) == 0) {
		rc = add_simple(l, XP_EP_PYTHON_GC, "python:gc_start", m[0].binary_path, m[0].name);
		if (!rc)
			rc = add_simple(l, XP_EP_PYTHON_GC, "python:gc_end", m[1].binary_path,
					m[1].name);
	}
	xp_usdt_marker_free(&m[0]);
	xp_usdt_marker_free(&m[1]);
	xp_error_clear(&lerr);
	return rc;
}

static int list_syscalls(struct xp_endpoint_list *l)
{
	char sel[96];
	int rc = 0;

	for (long nr = 0; nr < 1024 && !rc; nr++) {
		const char *name = xp_syscall_name(nr);

		if (!name)
			continue;
		snprintf(sel, sizeof(sel), "syscall:%s", name);
		rc = add_simple(l, XP_EP_SYSCALL, sel, NULL, name);
	}
	return rc;
}

static bool plain(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static int list_tracepoints(struct xp_endpoint_list *l)
{
	const char *root = xp_tracefs_root();
	char path[4200], sel[600], msg[4400];
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/available_events", root);
	rc = xp_read_file(path, AVAILABLE_EVENTS_MAX, &text, &len);
	if (rc) {
		snprintf(msg, sizeof(msg),
			 "tracepoints are not listed: %s cannot be read (%s); mount tracefs: "
			 "%s",
			 path, strerror(-rc), XP_TRACEFS_MOUNT_HINT);
		return xp_warnings_add(&l->warnings, "TRACEPOINTS_NOT_LISTED", msg, NULL);
	}
	for (line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		char name[256];

		if (!colon || !plain(line, (size_t)(colon - line)) ||
		    !plain(colon + 1, strlen(colon + 1)) || strlen(line) > 500)
			continue;
		snprintf(sel, sizeof(sel), "tracepoint:%s", line);
		snprintf(name, sizeof(name), "%s", line);
		rc = add_simple(l, XP_EP_TRACEPOINT, sel, NULL, name);
	}
	free(text);
	return rc;
}

int xp_endpoint_list(const struct xp_target *t, const char *pattern, uint64_t limit,
		     struct xp_endpoint_list *out, struct xp_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->target = *t;
	out->limit = limit ? limit : 1;
	out->pattern = strdup(pattern);
	/* the array grows as entries arrive: a huge --limit costs nothing */
	out->cap = out->limit < 256 ? (size_t)out->limit : 256;
	out->v = calloc(out->cap, sizeof(*out->v));
	if (!out->pattern || !out->v)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	rc = xp_target_verify(t, err);
	if (rc)
		return rc;
	if (family_possible(pattern, "uprobe:")) {
		rc = list_uprobes(t, out, err);
		if (rc)
			return rc;
	}
	rc = family_possible(pattern, "python:") ? list_python(t, out) : 0;
	if (!rc && family_possible(pattern, "syscall:"))
		rc = list_syscalls(out);
	if (!rc && family_possible(pattern, "tracepoint:"))
		rc = list_tracepoints(out);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	qsort(out->v, out->n, sizeof(*out->v), by_selector);
	signature_selectors(out);
	out->truncated = out->total > out->n;
	return xp_target_verify(t, err);
}

void xp_endpoint_list_free(struct xp_endpoint_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		ep_free(&l->v[i]);
	free(l->v);
	free(l->pattern);
	xp_warnings_free(&l->warnings);
	memset(l, 0, sizeof(*l));
}
