/* SPDX-License-Identifier: Apache-2.0 */
/*
 * window.h - the opening of an in-kernel aggregator's window, which both
 * aggregators of this module share (latency_histogram.c,
 * syscall_aggregate.c): once every link is attached, the programs start
 * counting and the window's clock starts.
 */
#ifndef XP_INVENTORY_WINDOW_H
#define XP_INVENTORY_WINDOW_H

#include <stdint.h>

#include "../model/error_record.h"

/*
 * Every link attached: set the programs' @armed flag (they count from
 * here on), stamp *armed_at_ns and *setup_ns (from @t0, the collection's
 * start), then call @on_armed (the command's identity check; NULL: none)
 * and return what it returns.
 */
int xp_inv_window_open(uint32_t *armed, uint64_t t0, uint64_t *armed_at_ns, uint64_t *setup_ns,
		       int (*on_armed)(void *ctx, struct xp_error *err), void *on_armed_ctx,
		       struct xp_error *err);

#endif /* XP_INVENTORY_WINDOW_H */
