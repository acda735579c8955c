// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_event_jsonl.cc - libFuzzer target for the Event stream decoder and
 * completed-input detection (src/capture/json/decode_json.cc, input.c).
 *
 * Each input is decoded three ways and the results are checked against
 * each other, so the fuzzer finds wrong answers, not only crashes:
 *   1. xp_decode_event_stream() from memory, bounded at 16 events, with
 *      the default chunking or (first byte) small chunks that exercise
 *      the carry-over and the two-thread split;
 *   2. on success, simdjson's own parse_many over the whole input must
 *      see exactly as many documents, every one of them valid;
 *   3. on success, the capture rendered back as JSONL must decode again
 *      to the identical rendering (decode . render is a fixed point);
 *   4. xp_input_load() on the same bytes through a memfd (detection,
 *      host captures, the fd path with its prefix) must not crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <simdjson.h>

extern "C" {
#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "model/event_json.h"
}

#include "../unit/capture_text.h"
#include "fuzz_json_builtin.h"

/* The capture as JSONL; a rendering that fails is a finding. */
static char *render_all(const struct xp_capture *c)
{
	char *all = xpt_render_all(c);

	if (!all)
		abort();
	return all;
}

static size_t simdjson_docs(const uint8_t *data, size_t size, bool *ok)
{
	simdjson::padded_string ps((const char *)data, size);
	simdjson::dom::parser p;
	simdjson::dom::document_stream s;
	size_t n = 0;

	*ok = true;
	if (size == 0) /* simdjson leaves truncated_bytes() undefined here */
		return 0;
	p.threaded = false;
	if (p.parse_many(ps, size < 32 ? 32 : size).get(s)) {
		*ok = false;
		return 0;
	}
	for (auto it = s.begin(); it != s.end(); ++it) {
		simdjson::dom::element e;
		simdjson::error_code ec = (*it).get(e);

		if (ec == simdjson::EMPTY) /* only whitespace */
			break;
		if (ec) {
			*ok = false;
			break;
		}
		/* a record of our own event extension is read past, not an Event */
		if (e.is_object() && e.get_object().value_unsafe().at_key("xprobe_extension").error() ==
					     simdjson::SUCCESS)
			continue;
		n++;
	}
	if (s.truncated_bytes())
		*ok = false;
	return n;
}

static void load_through_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	char path[64];
	struct xp_capture c;
	struct xp_error err = {};

	if (fd < 0)
		return;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	xp_capture_init(&c, 16);
	xp_input_load(path, &c, &err);
	xp_error_clear(&err);
	xp_capture_free(&c);
	close(fd);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_capture c;
	struct xp_error err = {};
	char *first = nullptr;
	int rc;

	xp_decode_test_chunk_bytes(size && (data[0] & 7) == 1 ? 64 + data[size - 1] : 0);
	xp_capture_init(&c, 16);
	rc = xp_decode_event_stream((const char *)data, size, "fuzz", &c, &err);
	xp_decode_test_chunk_bytes(0);
	if (rc == 0) {
		bool ok;
		size_t n = simdjson_docs(data, size, &ok);

		if (!ok || n != c.count) {
			fprintf(stderr, "decoder accepted %zu events, simdjson sees %zu (ok %d)\n",
				c.count, n, ok);
			abort();
		}
		first = render_all(&c);
	}
	if (err.code == XPROBE_E_EVENT_RATE_TOO_HIGH && c.count != 16)
		abort();
	xp_error_clear(&err);
	xp_capture_free(&c);

	if (first) {
		char *second;

		xp_capture_init(&c, 16);
		if (xp_decode_event_stream(first, strlen(first), "again", &c, &err)) {
			fprintf(stderr, "rendered capture does not decode: %s\n", err.message);
			abort();
		}
		second = render_all(&c);
		if (strcmp(first, second) != 0) {
			fprintf(stderr, "render/decode is not a fixed point:\n%s\n%s\n", first,
				second);
			abort();
		}
		free(second);
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(first);
	}
	load_through_memfd(data, size);
	return 0;
}
