/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inventory.c - the checks and the signal handling both inventory modes
 * run around their window (inventory.h).  One flag serves both: only one
 * inventory runs per process.
 */
#include <string.h>

#include "../../common/cancel.h"
#include "inventory.h"

volatile sig_atomic_t xp_inventory_stop;

static void on_signal(int sig)
{
	(void)sig;
	xp_inventory_stop = 1;
}

int xp_inventory_check(const char *mode, const struct xp_inventory_refusal *refused,
		       unsigned long given, uint64_t duration_ms, struct xp_error *err)
{
	const struct xp_inventory_refusal *r;

	for (r = refused; r->flags; r++) {
		if (!(given & r->flags))
			continue;
		xp_error_detail_str(err, "mode", mode + 2);
		xp_error_hint(err,
			      "inventories are live-only summaries: pass --pid and --duration-ms only");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "%s does not accept %s", mode, r->what);
	}
	if (!(given & XP_OPT_PID)) {
		xp_error_hint(err, "pass --pid PID");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "%s requires --pid", mode);
	}
	if (!duration_ms) {
		xp_error_hint(err, "pass a positive --duration-ms");
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "%s requires a positive --duration-ms", mode);
	}
	return 0;
}

int xp_inventory_bound(struct xp_error *err, const char *flag, uint64_t v, uint64_t min,
		       uint64_t max, const char *why)
{
	if (v >= min && v <= max)
		return 0;
	xp_error_detail_str(err, "flag", flag);
	xp_error_detail_u64(err, "value", v);
	xp_error_detail_u64(err, "min", min);
	xp_error_detail_u64(err, "max", max);
	xp_error_hint(err, "pass --%s between %llu and %llu (%s)", flag, (unsigned long long)min,
		      (unsigned long long)max, why);
	return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			    "--%s %llu is outside %llu..%llu", flag, (unsigned long long)v,
			    (unsigned long long)min, (unsigned long long)max);
}

int xp_inventory_verify_armed(void *target, struct xp_error *err)
{
	return xp_target_verify(target, err);
}

int xp_inventory_window_check(uint64_t duration_ms, uint64_t timeout_ms, struct xp_error *err)
{
	if (timeout_ms != 0 && duration_ms <= timeout_ms)
		return 0;
	xp_error_detail_u64(err, "duration_ms", duration_ms);
	xp_error_detail_u64(err, "timeout_ms", timeout_ms);
	xp_error_hint(err, "keep --duration-ms at or below --timeout-ms");
	return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
			    "inventory duration must not exceed timeout");
}

/* The handlers a window replaces. */
struct signals {
	struct sigaction old_int, old_term;
};

/* Clear xp_inventory_stop and catch SIGINT/SIGTERM without SA_RESTART (so
 * the window's sleep wakes); restore puts the previous handlers back. */
static void signals_catch(struct signals *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: the window's sleep wakes */
	sigemptyset(&sa.sa_mask);
	xp_inventory_stop = 0;
	sigaction(SIGINT, &sa, &s->old_int);
	sigaction(SIGTERM, &sa, &s->old_term);
	/* a stop request before the window (common/cancel.h) ends it at once */
	if (xpc_cancel_signo())
		xp_inventory_stop = 1;
}

static void signals_restore(const struct signals *s)
{
	sigaction(SIGINT, &s->old_int, NULL);
	sigaction(SIGTERM, &s->old_term, NULL);
}

int xp_inventory_target(uint64_t duration_ms, uint64_t timeout_ms, uint32_t pid,
			struct xp_target *t, struct xp_target_ns *ns, struct xp_error *err)
{
	int rc;

	memset(t, 0, sizeof(*t));
	rc = xp_inventory_window_check(duration_ms, timeout_ms, err);
	if (rc)
		return rc;
	rc = xp_target_identify(pid, t, err);
	if (rc)
		return rc;
	rc = xp_target_namespaces(t, ns, err);
	if (rc)
		xp_target_release(t);
	return rc;
}

int xp_inventory_window(int (*collect)(void *ctx, struct xp_error *err), void *ctx,
			struct xp_out_progress *line, struct xp_error *err)
{
	struct signals sig;
	int rc;

	signals_catch(&sig);
	rc = collect(ctx, err);
	signals_restore(&sig);
	if (line)
		xp_out_progress_end(line);
	return rc;
}

int xp_inventory_window_end(int rc, const struct xp_target *t, const char *mode, bool *collected,
			    struct xp_error *err)
{
	*collected = false;
	if (rc)
		return rc;
	*collected = true;
	rc = xp_target_verify(t, err);
	if (rc)
		xp_error_prefix(err, "during the %s window", mode);
	return rc;
}

bool xp_inventory_progress_init(struct xp_inventory_progress *p, const struct xp_output *o,
				const char *what, const char *unit, uint64_t duration_ms)
{
	memset(p, 0, sizeof(*p));
	xp_out_progress_init(&p->line, o);
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->unit = unit;
	p->duration_ns = duration_ms * 1000000ull;
	return p->line.on;
}

void xp_inventory_progress_cb(void *ctx, uint64_t elapsed_ns, uint64_t count)
{
	struct xp_inventory_progress *p = ctx;
	uint64_t left = p->duration_ns > elapsed_ns ? p->duration_ns - elapsed_ns : 0;
	char text[256];
	int n;

	n = snprintf(text, sizeof(text), "%s | %.1fs left of %.1fs", p->what, (double)left / 1e9,
		     (double)p->duration_ns / 1e9);
	if (p->unit && n > 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, " | %llu %s",
			 (unsigned long long)count, p->unit);
	xp_out_progress_draw(&p->line, text);
}
