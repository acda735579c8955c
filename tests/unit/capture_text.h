/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture_text.h - the text helpers the capture tests share: the unit
 * tests of the decoders and the spec parser (test_capture_decode.c,
 * test_capture_fastpath.c, test_capture_spec.c) and the libFuzzer targets
 * that compare decoders (tests/fuzz/fuzz_event_*.cc) each had a copy.
 *
 *   xpt_contains      needle in a possibly NULL haystack
 *   xpt_subst         one substitution, a new string (the mutation tests)
 *   xpt_render_event  an event of a capture as its JSON document
 *   xpt_render_all    a capture as JSONL: the form two decodes compare in
 *   xpt_render_error  an error's contract fields as one JSON object
 *   xpt_write_file    a file under a test's scratch directory
 *
 * Header-only and static, C and C++ (the fuzz targets are C++).  The
 * renderers return NULL when the JSON writer fails, so a comparison of two
 * renderings can never pass on two failures.  Strings are malloc'ed.
 */
#ifndef XP_TESTS_CAPTURE_TEXT_H
#define XP_TESTS_CAPTURE_TEXT_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "../../common/buf.h"
#include "../../common/json.h"
#include "../../src/capture/capture_io.h"
#include "../../src/model/event_json.h"
#ifdef __cplusplus
}
#endif

static inline bool xpt_contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

/* @s with the first @from replaced by @to; exits 2 when @from is absent
 * (a test written against text that changed). */
static inline char *xpt_subst(const char *s, const char *from, const char *to)
{
	struct xpc_buf b = XPC_BUF_INIT;
	const char *p = strstr(s, from);

	if (!p) {
		fprintf(stderr, "subst: \"%s\" not found\n", from);
		exit(2);
	}
	xpc_buf_append(&b, s, (size_t)(p - s));
	xpc_buf_puts(&b, to);
	xpc_buf_puts(&b, p + strlen(from));
	return xpc_buf_steal(&b);
}

/* Event @i of @c as its JSON document (session "S"). */
static inline char *xpt_render_event(const struct xp_capture *c, size_t i)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	xpc_json_init_buf(&w, &b, 0);
	xp_event_render(&w, c, &c->events[i], "S");
	if (xpc_json_finish(&w)) {
		xpc_buf_free(&b);
		return NULL;
	}
	return xpc_buf_steal(&b);
}

/* The capture as JSONL ("" when empty). */
static inline char *xpt_render_all(const struct xp_capture *c)
{
	struct xpc_buf all = XPC_BUF_INIT;
	size_t i;

	for (i = 0; i < c->count; i++) {
		char *line = xpt_render_event(c, i);

		if (!line) {
			xpc_buf_free(&all);
			return NULL;
		}
		xpc_buf_puts(&all, line);
		xpc_buf_putc(&all, '\n');
		free(line);
	}
	if (!all.data)
		return strdup("");
	return xpc_buf_steal(&all);
}

/* The error's contract fields ("{}" for no error). */
static inline char *xpt_render_error(const struct xp_error *e)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	if (e->code)
		xp_error_render_fields(e, &w);
	xpc_json_obj_end(&w);
	if (xpc_json_finish(&w)) {
		xpc_buf_free(&b);
		return NULL;
	}
	return xpc_buf_steal(&b);
}

/* Write @len bytes to @dir/@name (0600); its path, valid until the 8th
 * call after; exits 2 when it cannot. */
static inline const char *xpt_write_file(const char *dir, const char *name, const char *data,
					 size_t len)
{
	static char paths[8][512];
	static unsigned next;
	char *path = paths[next++ % 8];
	int fd;

	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
	close(fd);
	return path;
}

#endif /* XP_TESTS_CAPTURE_TEXT_H */
