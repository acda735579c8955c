/* SPDX-License-Identifier: Apache-2.0 */
/*
 * window.c - the opening of an in-kernel aggregator's window (window.h).
 */
#include "../../common/monotonic.h"
#include "window.h"

int xp_inv_window_open(uint32_t *armed, uint64_t t0, uint64_t *armed_at_ns, uint64_t *setup_ns,
		       int (*on_armed)(void *ctx, struct xp_error *err), void *on_armed_ctx,
		       struct xp_error *err)
{
	__atomic_store_n(armed, 1u, __ATOMIC_SEQ_CST);
	*armed_at_ns = xpc_mono_ns();
	*setup_ns = *armed_at_ns - t0;
	return on_armed ? on_armed(on_armed_ctx, err) : 0;
}
