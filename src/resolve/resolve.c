/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolve.c - uprobe selectors against a live target: which mapped file,
 * which symbol (three lookup passes, xelf.h), which file offset, which
 * runtime address.  Read-only; identity is verified before and after.
 *
 * Steps (numbers repeated in the code):
 *   1. verify identity; read /proc/<pid>/maps;
 *   2. resolve the selector's binary inside the target's root and find
 *      its mappings by inode (BINARY_NOT_MAPPED lists what is mapped);
 *   3. open the ELF file through an access path; object kind;
 *   4. symbol lookup -> virtual address -> file offset through PT_LOAD,
 *      or a +0x offset checked against the executable PT_LOAD segments;
 *      4b. a +0x offset's instruction-boundary check (insn.h), recorded
 *      in the result for validate to judge;
 *   5. runtime address through the mapping holding the offset;
 *   6. build id; verify identity again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "../../common/json.h"
#include "target_files.h"
#include "../process/procfs.h"
#include "resolve.h"
#include "xelf.h"
#include "../model/names.h"

#define MAX_LISTED_OBJECTS 64
#define MAX_CLOSE_MATCHES 5
#define MAX_LISTED_CANDIDATES 16

const char *xp_object_kind_name(enum xp_object_kind k)
{
	static const char *const names[] = {
		[XP_OBJ_EXECUTABLE] = "executable",
		[XP_OBJ_PIE] = "position_independent_executable",
		[XP_OBJ_SHARED_LIBRARY] = "shared_library",
	};

	return XP_NAME_OF(names, k, "shared_library");
}

void xp_resolved_probe_free(struct xp_resolved_probe *p)
{
	free(p->selector);
	free(p->binary_path);
	free(p->access_path);
	free(p->build_id);
	free(p->symbol);
	free(p->symbol_demangled);
	xp_offset_info_free(&p->insn);
	memset(p, 0, sizeof(*p));
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Details and hints listing the target's mapped objects (sorted, unique,
 * bounded), plus a "did you mean" for objects sharing @binary's basename.
 */
static void list_mapped(const struct xp_maps *maps, const char *binary, struct xp_error *err)
{
	const char **names = NULL;
	size_t *idx = NULL, n = 0, k = 0, i, shown;
	ssize_t nf = xp_maps_files(maps, &idx);
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	if (nf > 0)
		names = calloc((size_t)nf, sizeof(*names));
	for (i = 0; names && i < (size_t)nf; i++)
		names[n++] = maps->v[idx[i]].path;
	if (n)
		qsort(names, n, sizeof(*names), str_cmp);
	for (i = 0; i < n; i++)
		if (k == 0 || strcmp(names[k - 1], names[i]) != 0)
			names[k++] = names[i];
	shown = k < MAX_LISTED_OBJECTS ? k : MAX_LISTED_OBJECTS;
	xpc_json_init_buf(&w, &b, 0);
	xpc_json_arr_begin(&w);
	for (i = 0; i < shown; i++)
		xpc_json_str(&w, names[i]);
	xpc_json_arr_end(&w);
	if (!xpc_json_finish(&w))
		xp_error_detail_raw(err, "mapped_objects", xpc_buf_str(&b));
	xp_error_detail_u64(err, "mapped_objects_total", k);
	xpc_buf_free(&b);
	for (i = 0; i < k; i++) {
		if (strcmp(xp_path_base(names[i]), xp_path_base(binary)) == 0) {
			xp_error_hint(err, "a mapped object has this name: %s", names[i]);
			break;
		}
	}
	xp_error_hint(
		err,
		"use the canonical path of a mapped object (details.mapped_objects lists %zu of %zu)",
		shown, k);
	free(names);
	free(idx);
}

/* Step 2: the mappings of the file @binary names, by inode. */
static int find_binary(struct xp_target_fs *fs, const struct xp_maps *maps, const char *binary,
		       size_t *first, struct xp_error *err)
{
	const struct xp_target *t = fs->t;
	struct stat st;
	size_t i, hit = SIZE_MAX, ino_only = SIZE_MAX;
	bool ino_ambiguous = false;
	int rc;

	xp_error_detail_str(err, "binary", binary);
	if (binary[0] != '/') {
		list_mapped(maps, binary, err);
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "uprobe binary \"%s\" is not an absolute path", binary);
	}
	rc = xp_target_fs_stat(fs, binary, &st);
	if (rc == -EACCES || rc == -EPERM) {
		xp_target_detail(err, t);
		xp_error_hint(err, "run xprobe as root");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied resolving %s in the target's filesystem",
				    binary);
	}
	if (rc == 0) {
		for (i = 0; i < maps->n && hit == SIZE_MAX; i++) {
			const struct xp_map_entry *m = &maps->v[i];

			if (!xp_map_is_file(m) || m->inode != (uint64_t)st.st_ino)
				continue;
			if (m->dev_major == major(st.st_dev) && m->dev_minor == minor(st.st_dev))
				hit = i;
			else if (ino_only == SIZE_MAX)
				ino_only = i;
			else if (strcmp(maps->v[ino_only].path, m->path) != 0)
				ino_ambiguous = true;
		}
		/* overlayfs reports the lower file's device in maps */
		if (hit == SIZE_MAX && ino_only != SIZE_MAX && !ino_ambiguous)
			hit = ino_only;
	}
	if (hit == SIZE_MAX) {
		/* a file deleted or replaced since it was mapped keeps its old
		 * path in maps: match that text */
		for (i = 0; i < maps->n && hit == SIZE_MAX; i++)
			if (xp_map_is_file(&maps->v[i]) && maps->v[i].deleted &&
			    strcmp(maps->v[i].path, binary) == 0)
				hit = i;
	}
	if (hit == SIZE_MAX) {
		xp_target_detail(err, t);
		list_mapped(maps, binary, err);
		if (rc)
			return xp_error_set(
				err, XPROBE_E_BINARY_NOT_MAPPED, true,
				"%s does not exist in the target's filesystem and is not mapped by process %u",
				binary, t->pid);
		return xp_error_set(err, XPROBE_E_BINARY_NOT_MAPPED, true,
				    "%s is not mapped by process %u", binary, t->pid);
	}
	*first = hit;
	return 0;
}

static void candidates_detail(struct xp_elf *elf, const struct xp_sym_matches *ms,
			      struct xp_error *err)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	size_t i;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_arr_begin(&w);
	for (i = 0; i < ms->n && i < MAX_LISTED_CANDIDATES; i++) {
		const struct xp_sym_match *c = &ms->v[i];
		char *dm = xp_demangle(c->name);
		uint64_t off;
		bool has_off = xp_elf_va_to_offset(elf, c->value, &off) == 0;

		xpc_json_obj_begin(&w);
		xpc_json_kstr(&w, "symbol", c->name);
		xpc_json_kstr(&w, "symbol_demangled", dm);
		xpc_json_ku64(&w, "symbol_virtual_address", c->value);
		xpc_json_ku64(&w, "symbol_size", c->size);
		xpc_json_kopt_u64(&w, "file_offset", has_off, off);
		xpc_json_kstr(&w, "table", c->from_symtab ? ".symtab" : ".dynsym");
		xpc_json_obj_end(&w);
		free(dm);
	}
	xpc_json_arr_end(&w);
	if (!xpc_json_finish(&w))
		xp_error_detail_raw(err, "candidates", xpc_buf_str(&b));
	xp_error_detail_u64(err, "candidate_count", ms->n);
	xpc_buf_free(&b);
}

static int symbol_not_found(struct xp_elf *elf, const struct xp_selector *sel,
			    const char *binary_path, struct xp_error *err)
{
	char *close[MAX_CLOSE_MATCHES];
	size_t n = xp_elf_close_matches(elf, sel->symbol, close, MAX_CLOSE_MATCHES), i;
	bool stripped = !elf->symtab.data;

	xp_error_detail_str(err, "symbol", sel->symbol);
	xp_error_detail_strv(err, "close_matches", (const char *const *)close, n);
	xp_error_detail_bool(err, "has_symtab", !stripped);
	for (i = 0; i < n && i < 3; i++) {
		bool cxx = strpbrk(close[i], ":(<~ ") != NULL;

		xp_error_hint(err, "close match: uprobe:%s:%s%s:%s", binary_path,
			      cxx ? "symbol=" : "", close[i], sel->is_end ? "return" : "entry");
	}
	if (stripped)
		xp_error_hint(
			err,
			"%s has no .symtab (stripped); only exported .dynsym functions are visible",
			binary_path);
	if (!n)
		xp_error_hint(err, "list the functions with: readelf -Ws --demangle %s",
			      binary_path);
	for (i = 0; i < n; i++)
		free(close[i]);
	return xp_error_set(err, XPROBE_E_SYMBOL_NOT_FOUND, true, "function %s was not found in %s",
			    sel->symbol, binary_path);
}

int xp_resolve_binary(const struct xp_target *t, const char *binary, char **binary_path,
		      char **access_path, struct xp_error *uerr)
{
	/* details are gathered on the way; they reach @uerr only on failure */
	struct xp_error le = { 0 }, *err = &le;
	struct xp_target_fs fs;
	struct xp_maps maps;
	size_t first;
	int rc;

	*binary_path = *access_path = NULL;
	rc = xp_maps_read(t, &maps, err);
	if (rc)
		return rc;
	rc = xp_target_fs_open(t, &fs, err);
	if (rc)
		goto out_maps;
	rc = find_binary(&fs, &maps, binary, &first, err);
	if (rc)
		goto out;
	rc = xp_target_fs_access(&fs, &maps.v[first], access_path);
	if (rc) {
		xp_error_detail_str(err, "binary_path", maps.v[first].path);
		rc = rc == -EACCES ? xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
						  "permission denied opening %s of process %u",
						  maps.v[first].path, t->pid) :
				     xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "cannot open %s as process %u maps it",
						  maps.v[first].path, t->pid);
		goto out;
	}
	*binary_path = strdup(maps.v[first].path);
	if (!*binary_path) {
		free(*access_path);
		*access_path = NULL;
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	}
out:
	xp_target_fs_close(&fs);
out_maps:
	xp_maps_free(&maps);
	if (rc)
		xp_error_move(uerr, &le);
	else
		xp_error_clear(&le);
	return rc;
}

int xp_resolve_uprobe(const struct xp_target *t, const struct xp_selector *sel,
		      struct xp_resolved_probe *out, struct xp_error *uerr)
{
	/* details are gathered on the way; they reach @uerr only on failure */
	struct xp_error le = { 0 }, *err = &le;
	struct xp_sym_matches ms = { 0 };
	const struct xp_map_entry *file, *m;
	struct xp_target_fs fs;
	struct xp_maps maps;
	struct xp_elf elf;
	size_t first;
	uint64_t off;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&elf, 0, sizeof(elf));
	elf.fd = -1;
	memset(&maps, 0, sizeof(maps));
	memset(&fs, 0, sizeof(fs));
	fs.root_fd = -1;
	if (sel->kind != XP_SEL_UPROBE || !sel->binary) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "xp_resolve_uprobe called with a non-uprobe selector");
		goto out;
	}
	/* 1. */
	rc = xp_target_verify(t, err);
	if (rc)
		goto out;
	rc = xp_maps_read(t, &maps, err);
	if (rc)
		goto out;
	rc = xp_target_fs_open(t, &fs, err);
	if (rc)
		goto out;
	/* 2. */
	rc = find_binary(&fs, &maps, sel->binary, &first, err);
	if (rc)
		goto out;
	file = &maps.v[first];
	xp_error_detail_str(err, "binary_path", file->path);
	out->selector = strdup(sel->text ? sel->text : "");
	out->binary_path = strdup(file->path);
	out->is_return = sel->is_end;
	if (!out->selector || !out->binary_path) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	/* 3. */
	rc = xp_target_fs_access(&fs, file, &out->access_path);
	if (rc) {
		rc = rc == -EACCES ? xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
						  "permission denied opening %s of process %u",
						  file->path, t->pid) :
				     xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "cannot open %s as process %u maps it",
						  file->path, t->pid);
		goto out;
	}
	rc = xp_elf_open(out->access_path, &elf);
	if (rc == -EACCES || rc == -EPERM) {
		rc = xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				  "permission denied reading %s", file->path);
		goto out;
	}
	if (rc == -ENOEXEC) {
		rc = xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				  "%s is not an ELF object libelf can read", file->path);
		goto out;
	}
	if (rc) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "failed to open %s: %s",
				  file->path, strerror(-rc));
		goto out;
	}
	if (xp_target_fs_kind(&fs, elf.fd, elf.e_type, &out->object_kind)) {
		xp_error_detail_u64(err, "e_type", elf.e_type);
		rc = xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				  "%s is neither an executable nor a shared object", file->path);
		goto out;
	}
	/* 4. */
	if (sel->uprobe_target == XP_UPROBE_OFFSET) {
		off = sel->offset;
		if (!xp_elf_offset_executable(&elf, off)) {
			xp_error_detail_u64(err, "file_offset", off);
			xp_error_hint(
				err,
				"a +0x offset is a file offset inside an executable PT_LOAD segment (readelf -lW %s)",
				file->path);
			rc = xp_error_set(
				err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				"file offset 0x%llx is not inside an executable segment of %s",
				(unsigned long long)off, file->path);
			goto out;
		}
		/* 4b. an instruction boundary? (the verdict is validate's) */
		rc = xp_insn_check_offset(&elf, off, sel->is_end, &out->insn);
		if (rc) {
			xp_error_detail_u64(err, "file_offset", off);
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "cannot check file offset 0x%llx of %s for an instruction boundary: %s",
					  (unsigned long long)off, file->path, strerror(-rc));
			goto out;
		}
	} else {
		rc = xp_elf_lookup(&elf, sel->symbol, &ms);
		if (rc) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "malformed symbol tables in %s", file->path);
			goto out;
		}
		if (ms.n == 0) {
			rc = symbol_not_found(&elf, sel, file->path, err);
			goto out;
		}
		if (ms.n > 1) {
			xp_error_detail_str(err, "symbol", sel->symbol);
			candidates_detail(&elf, &ms, err);
			xp_error_hint(
				err,
				"select one address with uprobe:%s:+0x<file_offset>:%s (details.candidates)",
				file->path, sel->is_end ? "return" : "entry");
			rc = xp_error_set(err, XPROBE_E_AMBIGUOUS_TARGET, true,
					  "%s resolves to %zu distinct addresses in %s",
					  sel->symbol, ms.n, file->path);
			goto out;
		}
		out->symbol = strdup(ms.v[0].name);
		out->symbol_demangled = xp_demangle(ms.v[0].name);
		out->has_symbol = true;
		out->symbol_virtual_address = ms.v[0].value;
		out->symbol_size = ms.v[0].size;
		if (!out->symbol) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			goto out;
		}
		if (xp_elf_va_to_offset(&elf, ms.v[0].value, &off)) {
			xp_error_detail_u64(err, "symbol_virtual_address", ms.v[0].value);
			rc = xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					  "%s at 0x%llx is not in a loadable segment of %s",
					  sel->symbol, (unsigned long long)ms.v[0].value,
					  file->path);
			goto out;
		}
	}
	out->file_offset = off;
	/* 5. the mapping of the file holding @off, executable ones first */
	m = xp_maps_find_offset(&maps, file, off);
	if (!m) {
		xp_error_detail_u64(err, "file_offset", off);
		rc = xp_error_set(err, XPROBE_E_BINARY_NOT_MAPPED, true,
				  "file offset 0x%llx of %s is not mapped by process %u",
				  (unsigned long long)off, file->path, t->pid);
		goto out;
	}
	out->mapping.start_address = m->start;
	out->mapping.end_address = m->end;
	out->mapping.file_offset = m->offset;
	out->runtime_address = m->start + (off - m->offset);
	/* 6. */
	out->build_id = xp_elf_build_id(&elf);
	rc = xp_target_verify(t, err);
out:
	xp_sym_matches_free(&ms);
	if (elf.elf || elf.fd >= 0)
		xp_elf_close(&elf);
	xp_target_fs_close(&fs);
	xp_maps_free(&maps);
	if (rc) {
		xp_resolved_probe_free(out);
		xp_error_move(uerr, &le);
	} else {
		xp_error_clear(&le);
	}
	return rc;
}
