/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory.h - what the two inventory modes (`measure --cpu-sample`,
 * `measure --syscall-aggregate`) share before and around their window:
 * the check of the flags they refuse with a document, the bound checks of
 * their flags, the duration/timeout rule, the target and its namespace,
 * the SIGINT/SIGTERM handling that ends a window early
 * ("cancelled"), the identity check after it, and the window's progress
 * line (which `measure --aggregate` draws too).
 */
#ifndef XP_CMD_INVENTORY_H
#define XP_CMD_INVENTORY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "../model/error_record.h"
#include "../process/identity.h"
#include "../process/namespaces.h"

/* Set by SIGINT/SIGTERM while a window (xp_inventory_window) runs; the
 * collectors poll it (their `stop` option). */
extern volatile sig_atomic_t xp_inventory_stop;

/*
 * A flag an inventory refuses with its document (the syntax errors are
 * its mode_rules.h table's), and what the message calls it.
 */
struct xp_inventory_refusal {
	unsigned long flags; /* XP_OPT_*, any of them */
	const char *what;
};

/*
 * What every inventory checks before anything else: of @refused (ended
 * by a 0 entry), the first given (@given, XP_OPT_*) is INVALID_EVENT_SELECTOR
 * "<mode> does not accept <what>"; then --pid and a positive --duration-ms
 * (@duration_ms) are required.  @mode: "--cpu-sample" ...
 */
int xp_inventory_check(const char *mode, const struct xp_inventory_refusal *refused,
		       unsigned long given, uint64_t duration_ms, struct xp_error *err);

/* @v within @min..@max, or SESSION_LIMIT_EXCEEDED naming --@flag, the
 * range and @why in the hint. */
int xp_inventory_bound(struct xp_error *err, const char *flag, uint64_t v, uint64_t min,
		       uint64_t max, const char *why);

/* The collectors' on_armed check: @target (a struct xp_target) is still
 * the process identified (xp_target_verify). */
int xp_inventory_verify_armed(void *target, struct xp_error *err);

/* The window must fit in the timeout (and the timeout must not be 0). */
int xp_inventory_window_check(uint64_t duration_ms, uint64_t timeout_ms, struct xp_error *err);

/*
 * Before the window: its bounds (xp_inventory_window_check), then the
 * target @pid and its PID namespace.  On error nothing is held.
 */
int xp_inventory_target(uint64_t duration_ms, uint64_t timeout_ms, uint32_t pid,
			struct xp_target *t, struct xp_target_ns *ns, struct xp_error *err);

/*
 * The window, the one sequence of every inventory, histogram and Agent
 * aggregate: SIGINT/SIGTERM caught (xp_inventory_stop ends the window
 * early, a result "cancelled"), @collect(@ctx) run once, the previous
 * handlers back, then the progress line @line (NULL: none) erased before
 * anything is printed.  Returns what @collect returned.
 */
int xp_inventory_window(int (*collect)(void *ctx, struct xp_error *err), void *ctx,
			struct xp_out_progress *line, struct xp_error *err);

/*
 * After the window, with its return code @rc: when the collector
 * succeeded sets *collected (its result is the caller's to free whatever
 * follows) and verifies @t again, an error saying "during the @mode
 * window".
 */
int xp_inventory_window_end(int rc, const struct xp_target *t, const char *mode, bool *collected,
			    struct xp_error *err);

/*
 * The window's progress line (src/report/output.h's rules: a terminal, no
 * --non-interactive): "<what> | 1.2s left of 5.0s[ | N <unit>]", the
 * collectors' progress callback (@ctx a struct xp_inventory_progress;
 * @count shown when @unit is set).
 */
struct xp_inventory_progress {
	struct xp_out_progress line;
	char what[96]; /* "syscall aggregate armed on pid 4242" */
	const char *unit; /* "samples", or NULL: no count */
	uint64_t duration_ns;
};

/* Set up @p; returns whether a line will be drawn (then pass
 * xp_inventory_progress_cb and @p to the collector). */
bool xp_inventory_progress_init(struct xp_inventory_progress *p, const struct xp_output *o,
				const char *what, const char *unit, uint64_t duration_ms);
void xp_inventory_progress_cb(void *ctx, uint64_t elapsed_ns, uint64_t count);

#endif /* XP_CMD_INVENTORY_H */
