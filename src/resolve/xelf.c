/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xelf.c - ELF reading for target resolution: segments, build id, symbol
 * lookup (gnu hash + one symtab scan + demangling of candidates only),
 * close matches, USDT notes.  The rules are in xelf.h.
 *
 * Untrusted input.  A mapped file may be anything; every index read from
 * it (string offsets, hash chains, note sizes) is bounds-checked before
 * use, and a malformed table fails the lookup with -EINVAL instead of
 * reading out of bounds.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/suggest.h"
#include "../../common/search.h"
#include "debug_file.h"
#include "xelf.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#define NT_STAPSDT 3
#define VERSYM_HIDDEN 0x8000u

int xp_elf_open(const char *path, struct xp_elf *e)
{
	static bool version_set;
	GElf_Ehdr eh;
	struct stat st;
	size_t i;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->debug_fd = -1;
	if (!version_set) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return -ENOEXEC;
		version_set = true;
	}
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	if (fstat(e->fd, &st) < 0) {
		int rc = -errno;

		xp_elf_close(e);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		xp_elf_close(e);
		return -ENOEXEC;
	}
	e->size = (size_t)st.st_size;
	e->path = strdup(path);
	if (!e->path) {
		xp_elf_close(e);
		return -ENOMEM;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		xp_elf_close(e);
		return -ENOEXEC;
	}
	e->elf_class = gelf_getclass(e->elf);
	e->e_type = eh.e_type;
	e->e_machine = eh.e_machine;
	if (elf_getphdrnum(e->elf, &e->phnum) != 0) {
		xp_elf_close(e);
		return -ENOEXEC;
	}
	if (e->phnum) {
		e->phdrs = calloc(e->phnum, sizeof(*e->phdrs));
		if (!e->phdrs) {
			xp_elf_close(e);
			return -ENOMEM;
		}
		for (i = 0; i < e->phnum; i++) {
			if (!gelf_getphdr(e->elf, (int)i, &e->phdrs[i])) {
				xp_elf_close(e);
				return -ENOEXEC;
			}
		}
	}
	return 0;
}

void xp_elf_close(struct xp_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	if (e->debug_elf)
		elf_end(e->debug_elf);
	if (e->debug_fd >= 0)
		close(e->debug_fd);
	free(e->phdrs);
	free(e->path);
	free(e->debug_path);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->debug_fd = -1;
}

/* ---- sections --------------------------------------------------------------- */

static int load_strtab(Elf *elf, size_t link, struct xp_elf_symtab *t)
{
	Elf_Scn *s = elf_getscn(elf, link);
	Elf_Data *d = s ? elf_getdata(s, NULL) : NULL;

	if (!d || !d->d_buf || d->d_size == 0 || ((const char *)d->d_buf)[d->d_size - 1] != '\0')
		return -EINVAL;
	t->strs = d->d_buf;
	t->strsz = d->d_size;
	return 0;
}

static int load_symtab(const struct xp_elf *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       struct xp_elf_symtab *t)
{
	size_t entsize = e->elf_class == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	Elf_Data *d = elf_getdata(scn, NULL);

	if (!d || !d->d_buf || d->d_type != ELF_T_SYM)
		return -EINVAL;
	if (load_strtab(elf, sh->sh_link, t))
		return -EINVAL;
	t->data = d;
	t->count = d->d_size / entsize;
	return 0;
}

static int raw_build_id(struct xp_elf *e, unsigned char *id, size_t *len);

/*
 * A stripped object: the .symtab of its separate debug file, when one is
 * installed (debug_file.h), read as this object's.  @link: its
 * .gnu_debuglink section or NULL.  Nothing found leaves the symtab empty.
 */
static void debug_symtab(struct xp_elf *e, Elf_Scn *link)
{
	unsigned char id[64];
	char path[PATH_MAX * 2];
	struct xp_debug_want w = { .object_path = e->path };
	Elf_Scn *scn = NULL;
	size_t idlen = 0;
	Elf *elf;
	int fd;

	if (raw_build_id(e, id, &idlen) == 0) {
		w.build_id = id;
		w.build_id_len = idlen;
	}
	if (link) {
		Elf_Data *d = elf_getdata(link, NULL);
		const char *name = d && d->d_buf ? d->d_buf : NULL;
		size_t n = name ? strnlen(name, d->d_size) : 0;
		size_t at = (n + 4) & ~(size_t)3; /* the name, its NUL, padded to 4 */

		if (n && n < d->d_size && at + 4 <= d->d_size) {
			w.debuglink = name;
			memcpy(&w.crc, (const char *)d->d_buf + at, 4);
		}
	}
	if (!w.build_id_len && !w.debuglink)
		return;
	fd = xp_debug_file_open(&w, path, sizeof(path));
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && elf_kind(elf) == ELF_K_ELF && gelf_getclass(elf) == e->elf_class &&
	       (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		if (load_symtab(e, elf, scn, &sh, &e->symtab) == 0) {
			e->debug_elf = elf;
			e->debug_fd = fd;
			e->debug_path = strdup(path);
			return;
		}
		memset(&e->symtab, 0, sizeof(e->symtab));
		break;
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* Locate the symbol tables, hash, versions and USDT sections once. */
static int read_sections(struct xp_elf *e)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *sym = NULL, *ver = NULL, *gh = NULL, *link = NULL;
	GElf_Shdr dsh, ssh;
	size_t shstrndx;
	int rc = 0;

	if (e->sections_read)
		return 0;
	e->sections_read = true;
	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		switch (sh.sh_type) {
		case SHT_DYNSYM:
			dyn = scn;
			dsh = sh;
			break;
		case SHT_SYMTAB:
			sym = scn;
			ssh = sh;
			break;
		case SHT_GNU_HASH:
			gh = scn;
			break;
		case SHT_GNU_versym:
			ver = scn;
			break;
		case SHT_NOTE:
		case SHT_PROGBITS: {
			const char *name =
				shstrndx ? elf_strptr(e->elf, shstrndx, sh.sh_name) : NULL;

			if (!name)
				break;
			if (sh.sh_type == SHT_NOTE && strcmp(name, ".note.stapsdt") == 0)
				e->stapsdt = scn;
			else if (sh.sh_type == SHT_PROGBITS && strcmp(name, ".gnu_debuglink") == 0)
				link = scn;
			else if (sh.sh_type == SHT_PROGBITS && strcmp(name, ".stapsdt.base") == 0) {
				e->has_stapsdt_base = true;
				e->stapsdt_base = sh.sh_addr;
			}
			break;
		}
		default:
			break;
		}
	}
	if (dyn && (rc = load_symtab(e, e->elf, dyn, &dsh, &e->dynsym)))
		memset(&e->dynsym, 0, sizeof(e->dynsym));
	if (sym && load_symtab(e, e->elf, sym, &ssh, &e->symtab))
		memset(&e->symtab, 0, sizeof(e->symtab));
	if (!e->symtab.data)
		debug_symtab(e, link);
	if (e->dynsym.data && ver) {
		Elf_Data *d = elf_getdata(ver, NULL);

		if (d && d->d_buf && d->d_size / 2 >= e->dynsym.count) {
			e->dynsym.versym = d->d_buf;
			e->dynsym.nversym = d->d_size / 2;
		}
	}
	if (e->dynsym.data && gh) {
		Elf_Data *d = elf_getdata(gh, NULL);

		if (d && d->d_buf && d->d_size >= 16 && ((uintptr_t)d->d_buf & 3) == 0) {
			e->gnu_hash = d->d_buf;
			e->gnu_hash_words = d->d_size / 4;
		}
	}
	return 0;
}

/* ---- segments, build id --------------------------------------------------- */

int xp_elf_va_to_offset(const struct xp_elf *e, uint64_t va, uint64_t *off)
{
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		const GElf_Phdr *p = &e->phdrs[i];

		if (p->p_type == PT_LOAD && p->p_vaddr <= va && va - p->p_vaddr < p->p_filesz) {
			*off = p->p_offset + (va - p->p_vaddr);
			return 0;
		}
	}
	return -ERANGE;
}

const GElf_Phdr *xp_elf_exec_segment(const struct xp_elf *e, uint64_t off)
{
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		const GElf_Phdr *p = &e->phdrs[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && p->p_offset <= off &&
		    off - p->p_offset < p->p_filesz)
			return p;
	}
	return NULL;
}

bool xp_elf_offset_executable(const struct xp_elf *e, uint64_t off)
{
	return xp_elf_exec_segment(e, off) != NULL;
}

static char *hex_of(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(n * 2 + 1);
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < n; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	s[2 * n] = '\0';
	return s;
}

static char *build_id_in(Elf_Data *d)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
		    nh.n_descsz <= 64 && memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0)
			return hex_of((const unsigned char *)d->d_buf + desc_off, nh.n_descsz);
		off = next;
	}
	return NULL;
}

/* The build id's bytes: 0, or -ENOENT. */
static int raw_build_id(struct xp_elf *e, unsigned char *id, size_t *len)
{
	char *hex = xp_elf_build_id(e);
	size_t n, i;

	if (!hex)
		return -ENOENT;
	n = strlen(hex) / 2;
	for (i = 0; i < n && i < 64; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			break;
		id[i] = (unsigned char)v;
	}
	free(hex);
	*len = i;
	return i ? 0 : -ENOENT;
}

char *xp_elf_build_id(struct xp_elf *e)
{
	Elf_Scn *scn = NULL;
	char *id;
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		const GElf_Phdr *p = &e->phdrs[i];
		Elf_Data *d;

		if (p->p_type != PT_NOTE || p->p_filesz == 0 || p->p_offset >= e->size ||
		    p->p_filesz > e->size - p->p_offset)
			continue;
		d = elf_getdata_rawchunk(e->elf, (int64_t)p->p_offset, p->p_filesz, ELF_T_NHDR);
		if ((id = build_id_in(d)))
			return id;
	}
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if ((id = build_id_in(elf_getdata(scn, NULL))))
			return id;
	}
	return NULL;
}

/* ---- symbols ------------------------------------------------------------------ */

struct sym {
	const char *name;
	uint64_t value;
	uint64_t size;
	unsigned type;
	unsigned shndx;
};

static bool sym_at(const struct xp_elf *e, const struct xp_elf_symtab *t, size_t i, struct sym *s)
{
	uint32_t name;

	if (e->elf_class == ELFCLASS64) {
		const Elf64_Sym *p = (const Elf64_Sym *)t->data->d_buf + i;

		name = p->st_name;
		s->value = p->st_value;
		s->size = p->st_size;
		s->type = ELF64_ST_TYPE(p->st_info);
		s->shndx = p->st_shndx;
	} else {
		const Elf32_Sym *p = (const Elf32_Sym *)t->data->d_buf + i;

		name = p->st_name;
		s->value = p->st_value;
		s->size = p->st_size;
		s->type = ELF32_ST_TYPE(p->st_info);
		s->shndx = p->st_shndx;
	}
	if (name >= t->strsz)
		return false;
	s->name = t->strs + name;
	return true;
}

/* st_name of symbol @i without touching the string table. */
static uint32_t sym_name_off(const struct xp_elf *e, const struct xp_elf_symtab *t, size_t i)
{
	if (e->elf_class == ELFCLASS64)
		return ((const Elf64_Sym *)t->data->d_buf)[i].st_name;
	return ((const Elf32_Sym *)t->data->d_buf)[i].st_name;
}

/*
 * Which st_name values can name a string holding @needle: one SIMD pass
 * (memmem) over the whole string table instead of a strcmp/strstr per
 * symbol, which for 45,000 C++ names costs milliseconds of call overhead.
 * Each hit is a range [lo, hi] of string offsets: with @exact (needle
 * includes the NUL) only lo == hi == the hit; otherwise any offset from
 * the start of the string holding the hit up to the hit itself, since
 * linkers merge string tails and a symbol may name a suffix.
 */
struct hits {
	uint32_t (*r)[2];
	size_t n, cap;
};

static int hits_find(const struct xp_elf_symtab *t, const char *needle, size_t nlen, bool exact,
		     struct hits *h)
{
	const char *s = t->strs, *end = s + t->strsz, *p = s;

	memset(h, 0, sizeof(*h));
	while (p < end && (p = memmem(p, (size_t)(end - p), needle, nlen))) {
		uint32_t off = (uint32_t)(p - s), lo = off;

		if (!exact) {
			const char *q = p;

			while (q > s && q[-1])
				q--;
			lo = (uint32_t)(q - s);
		}
		if (h->n && h->r[h->n - 1][0] == lo) {
			h->r[h->n - 1][1] = off;
		} else {
			if (h->n == h->cap) {
				size_t ncap = h->cap ? h->cap * 2 : 16;
				void *nr = realloc(h->r, ncap * sizeof(*h->r));

				if (!nr) {
					free(h->r);
					return -ENOMEM;
				}
				h->r = nr;
				h->cap = ncap;
			}
			h->r[h->n][0] = lo;
			h->r[h->n][1] = off;
			h->n++;
		}
		p++;
	}
	return 0;
}

struct hits_key {
	const struct hits *h;
	uint32_t off;
};

static bool hit_starts_at_or_before(const void *ctx, size_t i)
{
	const struct hits_key *k = ctx;

	return k->h->r[i][0] <= k->off;
}

static bool hits_has(const struct hits *h, uint32_t off)
{
	struct hits_key k = { h, off };
	/* one past the last range starting at or before off */
	size_t lo = xpc_partition_point(h->n, hit_starts_at_or_before, &k);

	return lo > 0 && off <= h->r[lo - 1][1];
}

/* A defined function: STT_FUNC in a real section (not UNDEF, ABS, COMMON). */
static bool defined_func(const struct sym *s)
{
	return s->type == STT_FUNC && s->shndx != SHN_UNDEF &&
	       (s->shndx < SHN_LORESERVE || s->shndx == SHN_XINDEX) && s->name[0];
}

static bool hidden_version(const struct xp_elf_symtab *t, size_t i)
{
	return t->versym && i < t->nversym && (t->versym[i] & VERSYM_HIDDEN);
}

struct collect {
	struct xp_sym_matches *m;
	size_t cap;
	bool *hidden; /* per match: only hidden-version .dynsym entries */
};

static int add_match(struct collect *c, const struct sym *s, bool from_symtab, bool hidden)
{
	struct xp_sym_matches *m = c->m;
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (m->v[i].value == s->value) {
			if (s->size > m->v[i].size)
				m->v[i].size = s->size;
			if (!hidden)
				c->hidden[i] = false;
			return 0;
		}
	}
	if (m->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 4;
		struct xp_sym_match *v = realloc(m->v, ncap * sizeof(*v));
		bool *h;

		if (!v)
			return -ENOMEM;
		m->v = v;
		h = realloc(c->hidden, ncap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		c->hidden = h;
		c->cap = ncap;
	}
	m->v[m->n].name = strdup(s->name);
	if (!m->v[m->n].name)
		return -ENOMEM;
	m->v[m->n].value = s->value;
	m->v[m->n].size = s->size;
	m->v[m->n].from_symtab = from_symtab;
	c->hidden[m->n] = hidden;
	m->n++;
	return 0;
}

static uint32_t gnu_hash_of(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/*
 * Raw-name lookup in .dynsym through .gnu.hash.  Returns 1 when the hash
 * table was usable (matches added), 0 to fall back to a scan, <0 error.
 */
static int dynsym_hash_lookup(struct xp_elf *e, const char *name, struct collect *c)
{
	const uint32_t *h = e->gnu_hash;
	size_t words = e->gnu_hash_words, wsz = e->elf_class == ELFCLASS64 ? 2 : 1;
	uint32_t nbuckets, symoffset, bloom_size, shift, hash,
		bit = e->elf_class == ELFCLASS64 ? 64 : 32;
	const uint32_t *buckets, *chain;
	uint64_t word, mask;
	size_t idx;

	if (!h)
		return 0;
	nbuckets = h[0];
	symoffset = h[1];
	bloom_size = h[2];
	shift = h[3];
	/* hash is 32 bits: a bloom shift of 32 or more is malformed (glibc's
	 * ld.so shifts the same 32-bit hash), so scan instead. */
	if (nbuckets == 0 || bloom_size == 0 || shift >= 32 ||
	    4 + (size_t)bloom_size * wsz + nbuckets > words)
		return 0;
	hash = gnu_hash_of(name);
	idx = (hash / bit) % bloom_size;
	if (wsz == 2)
		memcpy(&word, h + 4 + idx * 2, 8);
	else
		word = h[4 + idx];
	mask = ((uint64_t)1 << (hash % bit)) | ((uint64_t)1 << ((hash >> shift) % bit));
	if ((word & mask) != mask)
		return 1; /* definitely absent */
	buckets = h + 4 + (size_t)bloom_size * wsz;
	chain = buckets + nbuckets;
	idx = buckets[hash % nbuckets];
	if (idx == 0)
		return 1;
	if (idx < symoffset)
		return 0; /* malformed: scan instead */
	for (;; idx++) {
		size_t ci = idx - symoffset;
		uint32_t h2;
		struct sym s;
		int rc;

		if (idx >= e->dynsym.count || (size_t)(chain - h) + ci >= words)
			return 0;
		h2 = chain[ci];
		if ((h2 | 1) == (hash | 1) && sym_at(e, &e->dynsym, idx, &s) && defined_func(&s) &&
		    strcmp(s.name, name) == 0) {
			rc = add_match(c, &s, false, hidden_version(&e->dynsym, idx));
			if (rc)
				return rc;
		}
		if (h2 & 1)
			break;
	}
	return 1;
}

static int scan_raw(struct xp_elf *e, const struct xp_elf_symtab *t, bool is_symtab,
		    const char *name, struct collect *c)
{
	struct hits h;
	size_t i;
	int rc = 0;

	if (!t->data)
		return 0;
	rc = hits_find(t, name, strlen(name) + 1, true, &h);
	if (rc || h.n == 0)
		return rc;
	for (i = 0; i < t->count && !rc; i++) {
		struct sym s;

		if (!hits_has(&h, sym_name_off(e, t, i)) || !sym_at(e, t, i, &s) ||
		    !defined_func(&s) || strcmp(s.name, name) != 0)
			continue;
		rc = add_match(c, &s, is_symtab, !is_symtab && hidden_version(t, i));
	}
	free(h.r);
	return rc;
}

int xp_elf_each_func(struct xp_elf *e,
		     int (*fn)(const char *name, uint64_t value, uint64_t size, bool from_symtab,
			       bool hidden, void *ctx),
		     void *ctx)
{
	const struct xp_elf_symtab *tabs[2];
	int rc = read_sections(e);

	if (rc)
		return rc;
	tabs[0] = &e->dynsym;
	tabs[1] = &e->symtab;
	for (int k = 0; k < 2; k++) {
		const struct xp_elf_symtab *t = tabs[k];

		for (size_t i = 0; t->data && i < t->count; i++) {
			struct sym s;

			if (!sym_at(e, t, i, &s) || !defined_func(&s))
				continue;
			rc = fn(s.name, s.value, s.size, k == 1, k == 0 && hidden_version(t, i),
				ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}

size_t xp_cxx_base_name(const char *dm, char *out, size_t size)
{
	const char *p = dm, *end = NULL, *start;
	size_t n;
	int depth = 0;

	if (size)
		out[0] = '\0';
	if (strstr(dm, "operator") || strchr(dm, '{'))
		return 0;
	/* end of the name: the first '(' outside template arguments,
	 * skipping "(anonymous namespace)" components */
	for (; *p; p++) {
		if (*p == '(' && strncmp(p, "(anonymous namespace)", 21) == 0) {
			p += 20;
			continue;
		}
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (*p == '(' && depth == 0) {
			end = p;
			break;
		}
	}
	if (!end)
		end = dm + strlen(dm);
	/* drop trailing template arguments: f<int> -> f */
	while (end > dm && end[-1] == '>') {
		int d = 0;
		const char *q = end - 1;

		for (; q >= dm; q--) {
			if (*q == '>')
				d++;
			else if (*q == '<' && --d == 0)
				break;
		}
		if (q < dm)
			return 0;
		end = q;
	}
	start = end;
	while (start > dm && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
		start--;
	n = (size_t)(end - start);
	if (n == 0 || n + 1 > size || isdigit((unsigned char)*start))
		return 0;
	memcpy(out, start, n);
	out[n] = '\0';
	return n;
}

/* Demangled-name pass over one table; @needle filters candidates (NULL:
 * demangle every _Z name). */
static int scan_demangled(struct xp_elf *e, const struct xp_elf_symtab *t, bool is_symtab,
			  const char *name, const char *needle, struct collect *c)
{
	struct hits h = { 0 };
	size_t i;
	int rc = 0;

	if (!t->data)
		return 0;
	if (needle) {
		rc = hits_find(t, needle, strlen(needle), false, &h);
		if (rc || h.n == 0)
			return rc;
	}
	for (i = 0; i < t->count && !rc; i++) {
		struct sym s;
		char *dm;

		if (needle && !hits_has(&h, sym_name_off(e, t, i)))
			continue;
		if (!sym_at(e, t, i, &s) || s.name[0] != '_' || s.name[1] != 'Z' ||
		    !defined_func(&s))
			continue;
		dm = xp_demangle(s.name);
		if (dm && strcmp(dm, name) == 0)
			rc = add_match(c, &s, is_symtab, !is_symtab && hidden_version(t, i));
		free(dm);
	}
	free(h.r);
	return rc;
}

/* Keep only default-version matches when some exist (see xelf.h). */
static void drop_hidden(struct collect *c)
{
	struct xp_sym_matches *m = c->m;
	size_t i, k = 0;
	bool any_visible = false;

	for (i = 0; i < m->n; i++)
		any_visible |= !c->hidden[i];
	if (!any_visible)
		return;
	for (i = 0; i < m->n; i++) {
		if (c->hidden[i]) {
			free(m->v[i].name);
			continue;
		}
		m->v[k++] = m->v[i];
	}
	m->n = k;
}

static bool looks_cxx(const char *name)
{
	return strpbrk(name, ":(<~ ") != NULL;
}

int xp_elf_lookup(struct xp_elf *e, const char *name, struct xp_sym_matches *m)
{
	struct collect c = { m, 0, NULL };
	char base[256], needle[300];
	const char *filter = NULL;
	size_t blen;
	int rc, pass;

	memset(m, 0, sizeof(*m));
	if (!name[0])
		return 0;
	rc = read_sections(e);
	if (rc)
		return rc;

	/* (a) raw name, .dynsym (hash or scan) and .symtab */
	rc = dynsym_hash_lookup(e, name, &c);
	if (rc == 0)
		rc = scan_raw(e, &e->dynsym, false, name, &c);
	if (rc >= 0)
		rc = scan_raw(e, &e->symtab, true, name, &c);
	if (rc < 0)
		goto fail;
	if (m->n) {
		m->pass = 1;
		goto done;
	}

	/* (b) demangled .dynsym, (c) demangled .symtab */
	blen = xp_cxx_base_name(name, base, sizeof(base));
	if (blen) {
		snprintf(needle, sizeof(needle), "%zu%s", blen, base);
		filter = needle;
	}
	for (pass = 0; pass < 2; pass++) {
		rc = scan_demangled(e, &e->dynsym, false, name, filter, &c);
		if (rc)
			goto fail;
		if (m->n) {
			m->pass = 2;
			goto done;
		}
		rc = scan_demangled(e, &e->symtab, true, name, filter, &c);
		if (rc)
			goto fail;
		if (m->n) {
			m->pass = 3;
			goto done;
		}
		/* the filter is a necessary condition except for names the
		 * mangler abbreviates (std::allocator -> Sa): retry without it
		 * for names that look like C++ signatures */
		if (!filter || !looks_cxx(name))
			break;
		filter = NULL;
	}
done:
	drop_hidden(&c);
	free(c.hidden);
	return 0;
fail:
	free(c.hidden);
	xp_sym_matches_free(m);
	return rc;
}

void xp_sym_matches_free(struct xp_sym_matches *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static bool defined_any(const struct sym *s)
{
	return (s->type == STT_FUNC || s->type == STT_OBJECT) && s->shndx != SHN_UNDEF &&
	       (s->shndx < SHN_LORESERVE || s->shndx == SHN_XINDEX) && s->name[0];
}

int xp_elf_lookup_any(struct xp_elf *e, const char *name, uint64_t *value, uint64_t *size)
{
	const struct xp_elf_symtab *tabs[2] = { &e->dynsym, &e->symtab };
	size_t t, i;
	int rc = read_sections(e);

	if (rc)
		return rc;
	if (e->gnu_hash && e->dynsym.data) {
		const uint32_t *h = e->gnu_hash;
		size_t wsz = e->elf_class == ELFCLASS64 ? 2 : 1;
		uint32_t nb = h[0], symoff = h[1], bsz = h[2], hash = gnu_hash_of(name);

		if (nb && 4 + (size_t)bsz * wsz + nb <= e->gnu_hash_words) {
			const uint32_t *buckets = h + 4 + (size_t)bsz * wsz, *chain = buckets + nb;
			size_t idx = buckets[hash % nb];

			for (; idx >= symoff && idx && idx < e->dynsym.count &&
			       (size_t)(chain - h) + (idx - symoff) < e->gnu_hash_words;
			     idx++) {
				uint32_t h2 = chain[idx - symoff];
				struct sym s;

				if ((h2 | 1) == (hash | 1) && sym_at(e, &e->dynsym, idx, &s) &&
				    defined_any(&s) && strcmp(s.name, name) == 0) {
					*value = s.value;
					*size = s.size;
					return 0;
				}
				if (h2 & 1)
					break;
			}
		}
	}
	for (t = 0; t < 2; t++) {
		for (i = 0; tabs[t]->data && i < tabs[t]->count; i++) {
			struct sym s;

			if (sym_at(e, tabs[t], i, &s) && s.name[0] == name[0] && defined_any(&s) &&
			    strcmp(s.name, name) == 0) {
				*value = s.value;
				*size = s.size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int xp_elf_read_va(const struct xp_elf *e, uint64_t va, void *buf, size_t n)
{
	uint64_t off;
	ssize_t r;

	if (xp_elf_va_to_offset(e, va, &off) || off + n > e->size)
		return -ERANGE;
	r = pread(e->fd, buf, n, (off_t)off);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

/* ---- the function around an address (insn.c) ------------------------------ */

/* Code a function symbol names: functions and GNU indirect-function
 * resolvers, defined in a real section. */
static bool defined_code(const struct sym *s)
{
	return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->shndx != SHN_UNDEF &&
	       (s->shndx < SHN_LORESERVE || s->shndx == SHN_XINDEX);
}

int xp_elf_func_at(struct xp_elf *e, uint64_t va, struct xp_sym_match *out, bool *starts_here)
{
	const struct xp_elf_symtab *tabs[2] = { &e->dynsym, &e->symtab };
	struct sym best = { 0 };
	bool found = false, best_symtab = false;
	size_t t, i;
	int rc = read_sections(e);

	memset(out, 0, sizeof(*out));
	*starts_here = false;
	if (rc)
		return rc;
	for (t = 0; t < 2; t++) {
		for (i = 0; tabs[t]->data && i < tabs[t]->count; i++) {
			struct sym s;

			if (!sym_at(e, tabs[t], i, &s) || !defined_code(&s) || s.value > va)
				continue;
			if (s.value == va)
				*starts_here = true;
			if (va - s.value >= s.size)
				continue;
			/* nearest start; at one start the larger size, a name */
			if (found && (s.value < best.value ||
				      (s.value == best.value &&
				       (s.size < best.size || (s.size == best.size && best.name[0])))))
				continue;
			best = s;
			best_symtab = t == 1;
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	out->name = strdup(best.name[0] ? best.name : "?");
	if (!out->name)
		return -ENOMEM;
	out->value = best.value;
	out->size = best.size;
	out->from_symtab = best_symtab;
	return 0;
}

/* ---- close matches ------------------------------------------------------------- */


struct cand {
	char *name;
	size_t score;
};

static bool ci_contains(const char *hay, const char *needle)
{
	return strcasestr(hay, needle) != NULL;
}

/* Lower is closer; SIZE_MAX = not close. */
static size_t closeness(const char *cand, const char *query)
{
	size_t lq = strlen(query), lc = strlen(cand), limit, d;

	if (strcasecmp(cand, query) == 0)
		return 0;
	if (lq >= 3 && (ci_contains(cand, query) || (lc >= 3 && ci_contains(query, cand))))
		return 1000 + (lc > lq ? lc - lq : lq - lc);
	limit = lq / 3 > 2 ? lq / 3 : 2;
	d = xpc_edit_distance(cand, query, limit);
	return d <= limit ? 2000 + d : SIZE_MAX;
}

static void keep_best(struct cand *best, size_t *n, size_t max, const char *name, size_t score)
{
	size_t i, pos;

	for (i = 0; i < *n; i++)
		if (strcmp(best[i].name, name) == 0)
			return;
	for (pos = 0; pos < *n; pos++)
		if (score < best[pos].score ||
		    (score == best[pos].score && strcmp(name, best[pos].name) < 0))
			break;
	if (pos >= max)
		return;
	if (*n == max) {
		free(best[max - 1].name);
		(*n)--;
	}
	memmove(&best[pos + 1], &best[pos], (*n - pos) * sizeof(*best));
	best[pos].name = strdup(name);
	best[pos].score = score;
	if (best[pos].name)
		(*n)++;
	else
		memmove(&best[pos], &best[pos + 1], (*n - pos) * sizeof(*best));
}

size_t xp_elf_close_matches(struct xp_elf *e, const char *name, char **out, size_t max)
{
	const struct xp_elf_symtab *tabs[2] = { &e->dynsym, &e->symtab };
	struct cand best[16];
	char base[256];
	size_t n = 0, t, i, blen;
	bool cxx = looks_cxx(name);

	if (max > 16)
		max = 16;
	if (max == 0 || read_sections(e))
		return 0;
	blen = xp_cxx_base_name(name, base, sizeof(base));
	for (t = 0; t < 2; t++) {
		const struct xp_elf_symtab *tab = tabs[t];

		for (i = 0; tab->data && i < tab->count; i++) {
			struct sym s;
			size_t score;

			if (!sym_at(e, tab, i, &s) || !defined_func(&s))
				continue;
			if (s.name[0] == '_' && s.name[1] == 'Z') {
				char *dm;

				/* C++: overloads and relatives of the same identifier */
				if (!blen || !ci_contains(s.name, base))
					continue;
				dm = xp_demangle(s.name);
				if (!dm)
					continue;
				score = cxx ? closeness(dm, name) : SIZE_MAX;
				if (score == SIZE_MAX) {
					char b2[256];

					if (xp_cxx_base_name(dm, b2, sizeof(b2)) &&
					    strcmp(b2, base) == 0)
						score = 3000;
				}
				if (score != SIZE_MAX)
					keep_best(best, &n, max, dm, score);
				free(dm);
				continue;
			}
			score = closeness(s.name, cxx && blen ? base : name);
			if (score != SIZE_MAX)
				keep_best(best, &n, max, s.name, score);
		}
	}
	for (i = 0; i < n; i++)
		out[i] = best[i].name;
	return n;
}

/* ---- USDT --------------------------------------------------------------------- */

static uint64_t read_addr(const unsigned char *p, bool is64, bool big_endian)
{
	uint64_t v = 0;
	size_t i, n = is64 ? 8 : 4;

	for (i = 0; i < n; i++) {
		unsigned char b = big_endian ? p[i] : p[n - 1 - i];

		v = (v << 8) | b;
	}
	return v;
}

int xp_elf_usdt_notes(struct xp_elf *e, int (*fn)(const struct xp_usdt_note *n, void *ctx),
		      void *ctx)
{
	bool is64 = e->elf_class == ELFCLASS64;
	size_t asz = is64 ? 8 : 4, off = 0, next, name_off, desc_off;
	const char *ident = elf_getident(e->elf, NULL);
	bool be = ident && ident[EI_DATA] == ELFDATA2MSB;
	GElf_Nhdr nh;
	Elf_Data *d;
	int rc;

	rc = read_sections(e);
	if (rc)
		return rc;
	if (!e->stapsdt)
		return 1;
	d = elf_getdata(e->stapsdt, NULL);
	if (!d || !d->d_buf)
		return -EINVAL;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;
		struct xp_usdt_note n;
		uint64_t base;
		const char *s, *end;

		off = next;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    memcmp((const char *)d->d_buf + name_off, "stapsdt", 8) != 0)
			continue;
		if (nh.n_descsz < 3 * asz + 2 || desc_off + nh.n_descsz > d->d_size)
			return -EINVAL;
		n.pc = read_addr(desc, is64, be);
		base = read_addr(desc + asz, is64, be);
		n.semaphore = read_addr(desc + 2 * asz, is64, be);
		s = (const char *)desc + 3 * asz;
		end = (const char *)desc + nh.n_descsz;
		n.provider = s;
		s = memchr(s, '\0', (size_t)(end - s));
		if (!s || ++s >= end)
			return -EINVAL;
		n.name = s;
		s = memchr(s, '\0', (size_t)(end - s));
		if (!s)
			return -EINVAL;
		s++;
		if (s < end && memchr(s, '\0', (size_t)(end - s)))
			n.args = s;
		else
			n.args = "";
		if (!n.provider[0] || !n.name[0])
			return -EINVAL;
		/* SDT: a prelinked or relocated file moved .stapsdt.base; the
		 * note recorded where it was at link time */
		if (e->has_stapsdt_base && base) {
			n.pc += e->stapsdt_base - base;
			if (n.semaphore)
				n.semaphore += e->stapsdt_base - base;
		}
		rc = fn(&n, ctx);
		if (rc)
			return 0;
	}
	return 0;
}
