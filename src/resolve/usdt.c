/* SPDX-License-Identifier: Apache-2.0 */
/*
 * usdt.c - CPython GC markers (python:gc__start, python:gc__done) in a
 * live target, by capability: every mapped executable ELF object is a
 * candidate, whatever the process or file is called.  The first object
 * (the executable, then libpython*, then the rest in maps order) whose
 * .note.stapsdt carries both markers of the "python" provider wins; the
 * two markers must come from the same object, since one attach plan
 * covers both ends.
 *
 * Addresses (SystemTap SDT v3 notes): pc and semaphore are link-time
 * virtual addresses, corrected by .stapsdt.base's address minus the
 * note's recorded base (xelf.c); file offsets come from the PT_LOAD
 * segments; runtime addresses from the mapping that holds the offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/json.h"
#include "target_files.h"
#include "../process/procfs.h"
#include "resolve.h"
#include "xelf.h"

#define MAX_SEARCHED 64

void xp_usdt_marker_free(struct xp_usdt_marker *m)
{
	free(m->binary_path);
	free(m->access_path);
	free(m->provider);
	free(m->name);
	free(m->arguments);
	free(m->build_id);
	memset(m, 0, sizeof(*m));
}

struct gc_scan {
	bool has[2];
	uint32_t count[2];
	struct xp_usdt_note first[2];
	char *args[2];
	int other_python; /* python provider markers of other names */
};

static const char *const gc_names[2] = { "gc__start", "gc__done" };

static int gc_note(const struct xp_usdt_note *n, void *ctx)
{
	struct gc_scan *s = ctx;
	int i;

	if (strcmp(n->provider, "python") != 0)
		return 0;
	for (i = 0; i < 2; i++) {
		if (strcmp(n->name, gc_names[i]) != 0)
			continue;
		if (!s->has[i]) {
			s->has[i] = true;
			s->first[i] = *n;
			s->args[i] = strdup(n->args);
		}
		s->count[i]++;
		return 0;
	}
	s->other_python++;
	return 0;
}

/* Fill @out for marker @i of the winning object. */
static int fill_marker(struct gc_scan *s, int i, struct xp_elf *elf, struct xp_target_fs *fs,
		       const struct xp_maps *maps, const struct xp_map_entry *f, const char *access,
		       struct xp_usdt_marker *out, struct xp_error *err)
{
	const struct xp_usdt_note *n = &s->first[i];
	const struct xp_map_entry *m;

	memset(out, 0, sizeof(*out));
	out->binary_path = strdup(f->path);
	out->access_path = strdup(access);
	out->provider = strdup("python");
	out->name = strdup(gc_names[i]);
	out->arguments = strdup(s->args[i] ? s->args[i] : "");
	out->build_id = xp_elf_build_id(elf);
	if (!out->binary_path || !out->access_path || !out->provider || !out->name ||
	    !out->arguments)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	out->pc = n->pc;
	out->locations = s->count[i];
	if (xp_target_fs_kind(fs, elf->fd, elf->e_type, &out->object_kind))
		out->object_kind = XP_OBJ_SHARED_LIBRARY;
	if (xp_elf_va_to_offset(elf, n->pc, &out->file_offset)) {
		xp_error_detail_str(err, "binary_path", f->path);
		return xp_error_set(
			err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			"USDT marker python:%s at 0x%llx is outside the loadable segments of %s",
			gc_names[i], (unsigned long long)n->pc, f->path);
	}
	m = xp_maps_find_offset(maps, f, out->file_offset);
	if (!m) {
		xp_error_detail_str(err, "binary_path", f->path);
		return xp_error_set(err, XPROBE_E_BINARY_NOT_MAPPED, true,
				    "the code of USDT marker python:%s in %s is not mapped",
				    gc_names[i], f->path);
	}
	out->mapping.start_address = m->start;
	out->mapping.end_address = m->end;
	out->mapping.file_offset = m->offset;
	out->runtime_address = m->start + (out->file_offset - m->offset);
	if (n->semaphore) {
		uint64_t bias = out->runtime_address - out->pc;

		out->semaphore_address = n->semaphore;
		if (xp_elf_va_to_offset(elf, n->semaphore, &out->semaphore_offset)) {
			xp_error_detail_str(err, "binary_path", f->path);
			return xp_error_set(
				err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				"the semaphore of USDT marker python:%s in %s is outside the file image",
				gc_names[i], f->path);
		}
		out->semaphore_runtime_address = n->semaphore + bias;
	}
	return 0;
}

static void scan_free(struct gc_scan *s)
{
	free(s->args[0]);
	free(s->args[1]);
	memset(s, 0, sizeof(*s));
}

int xp_resolve_python_gc(const struct xp_target *t, struct xp_usdt_marker *start,
			 struct xp_usdt_marker *end, struct xp_error *uerr)
{
	struct xp_error le = { 0 }, *err = &le;
	struct xpc_buf searched = XPC_BUF_INIT, partial = XPC_BUF_INIT;
	struct xpc_json ws, wp;
	struct xp_target_fs fs;
	struct xp_maps maps;
	size_t *files = NULL, nsearched = 0, i;
	ssize_t nf;
	int rc, r, npartial = 0;
	bool found = false;

	memset(start, 0, sizeof(*start));
	memset(end, 0, sizeof(*end));
	memset(&fs, 0, sizeof(fs));
	fs.root_fd = -1;
	xpc_json_init_buf(&ws, &searched, 0);
	xpc_json_init_buf(&wp, &partial, 0);
	xpc_json_arr_begin(&ws);
	xpc_json_arr_begin(&wp);
	rc = xp_target_verify(t, err);
	if (rc)
		goto out_nomaps;
	rc = xp_maps_read(t, &maps, err);
	if (rc)
		goto out_nomaps;
	rc = xp_target_fs_open(t, &fs, err);
	if (rc)
		goto out;
	nf = xp_maps_files(&maps, &files);
	if (nf < 0) {
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		goto out;
	}
	for (r = 0; r < 3 && !found && !rc; r++) {
		for (i = 0; i < (size_t)nf && !found; i++) {
			const struct xp_map_entry *f = &maps.v[files[i]];
			struct gc_scan s = { 0 };
			struct xp_elf elf;
			char *access = NULL;
			int erc;

			/* executable, libpython*, the rest (maps order) */
			if (xp_target_fs_python_rank(&fs, f) != r ||
			    !xp_maps_file_has_exec(&maps, f))
				continue;
			erc = xp_target_fs_access(&fs, f, &access);
			if (erc == -EACCES) {
				xp_error_detail_str(err, "binary_path", f->path);
				rc = xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
						  "permission denied reading %s of process %u",
						  f->path, t->pid);
				break;
			}
			if (erc)
				continue; /* gone from disk and map_files: not readable */
			if (nsearched++ < MAX_SEARCHED)
				xpc_json_str(&ws, f->path);
			if (xp_elf_open(access, &elf)) {
				free(access);
				continue; /* not ELF (fonts, caches): carries no notes */
			}
			erc = xp_elf_usdt_notes(&elf, gc_note, &s);
			if (erc < 0) {
				xp_error_detail_str(err, "binary_path", f->path);
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "malformed .note.stapsdt in %s", f->path);
			} else if (s.has[0] && s.has[1]) {
				rc = fill_marker(&s, 0, &elf, &fs, &maps, f, access, start, err);
				if (!rc)
					rc = fill_marker(&s, 1, &elf, &fs, &maps, f, access, end,
							 err);
				found = !rc;
			} else if (s.has[0] || s.has[1]) {
				npartial++;
				xpc_json_obj_begin(&wp);
				xpc_json_kstr(&wp, "binary_path", f->path);
				xpc_json_kstr(&wp, "missing", s.has[0] ? "gc__done" : "gc__start");
				xpc_json_obj_end(&wp);
			}
			scan_free(&s);
			xp_elf_close(&elf);
			free(access);
			if (rc)
				break;
		}
	}
	if (!rc && !found) {
		xpc_json_arr_end(&ws);
		xpc_json_arr_end(&wp);
		xp_target_detail(err, t);
		if (!xpc_json_finish(&ws))
			xp_error_detail_raw(err, "searched_objects", xpc_buf_str(&searched));
		xp_error_detail_u64(err, "searched_objects_total", nsearched);
		if (!xpc_json_finish(&wp))
			xp_error_detail_raw(err, "partial_markers", xpc_buf_str(&partial));
		xp_error_hint(
			err,
			"python:gc_start/gc_end need a CPython built with --with-dtrace (Debian's /usr/bin/python3.11 is)");
		xp_error_hint(
			err,
			"check the markers with: readelf -n <python executable or libpython> | grep -A2 gc__");
		rc = xp_error_set(
			err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			npartial ?
				"process %u maps an object with only one of the USDT markers python:gc__start and python:gc__done" :
				"no mapped object of process %u carries the USDT markers python:gc__start and python:gc__done",
			t->pid);
		goto out;
	}
	if (!rc)
		rc = xp_target_verify(t, err);
out:
	free(files);
	xp_target_fs_close(&fs);
	xp_maps_free(&maps);
out_nomaps:
	xpc_json_finish(&ws);
	xpc_json_finish(&wp);
	xpc_buf_free(&searched);
	xpc_buf_free(&partial);
	if (rc) {
		xp_usdt_marker_free(start);
		xp_usdt_marker_free(end);
		xp_error_move(uerr, &le);
	} else {
		xp_error_clear(&le);
	}
	return rc;
}
