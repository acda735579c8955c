// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_event_fastpath.cc - differential libFuzzer target for the
 * canonical-line fast path of the Event stream decoder
 * (src/capture/json/decode_fast.c in front of decode_json.cc's simdjson path).
 *
 * Two properties, checked on every input:
 *   1. per line: the fast path alone (xp_decode_test_fast_line) either
 *      declines the line or yields the event simdjson's path yields for
 *      the same line -- simdjson must accept it, the rendering must be
 *      identical, and so must the struct, its argument and attribute
 *      runs (same string ids: both intern in the same order);
 *   2. per stream: xp_decode_event_stream() with the fast path on and off
 *      gives the same result: return code, error (message, details,
 *      hints), event count, drop counters and the rendered events.  A
 *      first byte with (b & 7) == 1 ('\t') picks small chunks (64 + the
 *      last byte: chunk ends and the two-thread split), a '\r' as first
 *      or second byte a bound of 3 events (count-only mode).
 * Seeds (corpus/fuzz_event_fastpath/) are canonical lines of every event
 * kind and near misses of them, so most mutations stay close to the shape
 * the fast path accepts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "model/event_json.h"
}

#include "../unit/capture_text.h"
#include "fuzz_json_builtin.h"

/* A rendering that fails is a finding (the renderers return NULL). */
static char *must(char *rendered)
{
	if (!rendered)
		abort();
	return rendered;
}

[[noreturn]] static void differ(const char *what, const char *a, const char *b,
				const uint8_t *line, size_t n)
{
	fprintf(stderr, "fast path and simdjson differ: %s\n  fast: %s\n  slow: %s\n  input: %.*s\n",
		what, a, b, (int)(n > 2000 ? 2000 : n), (const char *)line);
	abort();
}

/* Property 1 for one line (no '\n' inside). */
static void check_line(const uint8_t *line, size_t n)
{
	struct xp_capture cf, cs;
	struct xp_error err = {};
	int rc;

	xp_capture_init(&cf, 0);
	rc = xp_decode_test_fast_line((const char *)line, n, &cf);
	if (rc < 0) /* a fresh capture has no target to mix, memory is there */
		differ("the fast path failed on its own", "-1", "", line, n);
	if (rc == 0) {
		xp_capture_free(&cf);
		return;
	}
	xp_capture_init(&cs, 0);
	xp_decode_test_fastpath(0);
	rc = xp_decode_event_stream((const char *)line, n, "line", &cs, &err);
	xp_decode_test_fastpath(-1);
	if (rc != 0 || cs.count != 1)
		differ("accepted a line simdjson's path rejects", "accepted", err.message, line, n);
	{
		char *a = must(xpt_render_event(&cf, 0)), *b = must(xpt_render_event(&cs, 0));

		if (strcmp(a, b) != 0)
			differ("rendered event", a, b, line, n);
		free(a);
		free(b);
	}
	if (memcmp(&cf.events[0], &cs.events[0], sizeof(cf.events[0])) != 0)
		differ("struct xp_event", "", "", line, n);
	if (cf.nargs != cs.nargs || cf.nattrs != cs.nattrs ||
	    (cf.nargs && memcmp(cf.args, cs.args, cf.nargs * sizeof(*cf.args)) != 0) ||
	    (cf.nattrs && memcmp(cf.attrs, cs.attrs, cf.nattrs * sizeof(*cf.attrs)) != 0) ||
	    cf.strings.count != cs.strings.count)
		differ("argument/attribute tables", "", "", line, n);
	for (uint32_t id = 1; id < cf.strings.count; id++)
		if (xp_strtab_len(&cf.strings, id) != xp_strtab_len(&cs.strings, id) ||
		    memcmp(xp_strtab_get(&cf.strings, id), xp_strtab_get(&cs.strings, id),
			   xp_strtab_len(&cf.strings, id)) != 0)
			differ("string table", xp_strtab_get(&cf.strings, id),
			       xp_strtab_get(&cs.strings, id), line, n);
	xp_error_clear(&err);
	xp_capture_free(&cf);
	xp_capture_free(&cs);
}

struct outcome {
	int rc;
	size_t count;
	uint64_t dropped;
	char *error;
	char *events;
};

static outcome decode_stream(const uint8_t *data, size_t size, size_t max_events, int fast)
{
	struct xp_capture c;
	struct xp_error err = {};
	outcome o;

	xp_decode_test_fastpath(fast);
	xp_capture_init(&c, max_events);
	o.rc = xp_decode_event_stream((const char *)data, size, "fuzz", &c, &err);
	xp_decode_test_fastpath(-1);
	o.count = c.count;
	o.dropped = c.dropped;
	o.error = must(xpt_render_error(&err));
	o.events = o.rc == 0 ? must(xpt_render_all(&c)) : strdup("");
	xp_error_clear(&err);
	xp_capture_free(&c);
	return o;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max_events = 0;
	unsigned lines = 0;

	/* 1. line by line */
	for (size_t a = 0; a < size && lines < 256; lines++) {
		const uint8_t *nl = (const uint8_t *)memchr(data + a, '\n', size - a);
		size_t b = nl ? (size_t)(nl - data) : size;

		check_line(data + a, b - a);
		a = b + 1;
	}

	/* 2. the stream, fast path on and off */
	if (size && (data[0] & 7) == 1)
		xp_decode_test_chunk_bytes(64 + data[size - 1]);
	if ((size && data[0] == '\r') || (size > 1 && data[1] == '\r'))
		max_events = 3;
	outcome f = decode_stream(data, size, max_events, 1);
	outcome s = decode_stream(data, size, max_events, 0);
	xp_decode_test_chunk_bytes(0);
	if (f.rc != s.rc) {
		char a[32], b[32];

		snprintf(a, sizeof(a), "rc %d", f.rc);
		snprintf(b, sizeof(b), "rc %d", s.rc);
		differ("return code", a, b, data, size);
	}
	if (strcmp(f.error, s.error) != 0)
		differ("error", f.error, s.error, data, size);
	if (f.count != s.count || f.dropped != s.dropped)
		differ("event count", "", "", data, size);
	if (strcmp(f.events, s.events) != 0)
		differ("events", f.events, s.events, data, size);
	free(f.error);
	free(f.events);
	free(s.error);
	free(s.events);
	return 0;
}
