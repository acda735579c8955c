/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_model_capture.c - the capture's event store (src/model/event.c):
 * the bound, the two ways it is kept (a heap block grown by realloc for
 * small or unbounded captures, one huge-page reservation of max_events
 * slots for large ones), and that both hold what was written.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "model/event.h"
#include "testlib.h"

/* Fill @n events, each with values derived from its index, then read
 * them all back; the @max_events+1-th add is refused. */
static void fill_and_check(size_t max_events, size_t n, bool expect_map)
{
	struct xp_capture c;
	struct xp_event *e;
	size_t i, bad = 0, dirty = 0;
	int err = 0;

	xp_capture_init(&c, max_events);
	for (i = 0; i < n; i++) {
		e = xp_capture_add(&c, &err);
		if (!e)
			break;
		dirty += e->timestamp_ns != 0 || e->tid != 0; /* each is zeroed */
		e->timestamp_ns = 1000 + i;
		e->tid = (uint32_t)(i * 7);
	}
	CHECK_EQ_U64(i, n); /* every add succeeded */
	CHECK_EQ_U64(dirty, 0);
	CHECK((c.events_map_len != 0) == expect_map);
	if (expect_map) {
		CHECK(((uintptr_t)c.events & ((2u << 20) - 1)) == 0);
		CHECK(c.events_map_len >= max_events * sizeof(struct xp_event));
	}
	for (i = 0; i < c.count; i++)
		bad += c.events[i].timestamp_ns != 1000 + i || c.events[i].tid != (uint32_t)(i * 7);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(c.count, n);
	if (max_events && n == max_events) {
		CHECK(xp_capture_add(&c, &err) == NULL);
		CHECK(err == -E2BIG);
		xp_capture_pop(&c);
		CHECK(xp_capture_add(&c, &err) != NULL); /* the slot is reused */
	}
	xp_capture_free(&c);
	CHECK(c.events == NULL && c.events_map_len == 0);
}

int main(void)
{
	fill_and_check(10, 10, false); /* small bound: the heap */
	fill_and_check(0, 5000, false); /* unbounded (tests): the heap */
	fill_and_check(100000, 100000, true); /* 22 MB: the reservation, full */
	fill_and_check(1000000, 3000, true); /* reserved, mostly untouched */
	TEST_MAIN_END();
}
