/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_run.c - one bounded live capture from one or more sources
 * (live_source.h): set up, arm, poll on a short timer, stop by rule, clean
 * up on every path, then sort, cut and decide losses.
 *
 * Steps (numbered as in the code):
 *   1. SIGINT/SIGTERM/SIGHUP blocked and handled by a handler that only
 *      records the signal; a pidfd on the target; a stop request that
 *      came earlier (common/cancel.h) ends here, nothing attached
 *   2. identity check, prepare every source (attach, connect), identity
 *      check again
 *   3. arm every source, back to back
 *   4. loop: ppoll(pidfd) for at most the poll period with the signals
 *      unblocked, poll every source, then test in this order: signal,
 *      samples rule, capture full, target exited, duration, deadline
 *   5. stop every prepared source (whatever happened above); restore the
 *      signal mask, then the handlers
 *   6. sort by timestamp and renumber; a target that exited after a
 *      samples capture's pairs were formed ended it as the samples rule
 *      would; a samples capture is cut at its stopping point and its
 *      losses decided (live_rules.c)
 *
 * Progress (o->progress): after a round that did not end the loop, at
 * most every XP_LIVE_PROGRESS_NS, the loop hands its counters to the
 * caller's callback, which renders them (this file never prints).
 *
 * Sources poll on the loop's period; one that wants a slower pace (the
 * Agent: a SNAPSHOT costs the target a wakeup) skips polls itself.  The
 * period shortens to XP_LIVE_POLL_US_BUSY after a round a source found
 * busy.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../common/cancel.h"
#include "../../common/monotonic.h"
#include "live_sched.h"
#include "live_source.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Set by the handler, read by the loop; nothing else happens in it. */
static volatile sig_atomic_t live_signal;

static void on_signal(int signo)
{
	live_signal = signo;
}

static const int live_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIG_LIVE (sizeof(live_signals) / sizeof(live_signals[0]))

const char *xp_live_stop_name(enum xp_live_stop s)
{
	switch (s) {
	case XP_LIVE_STOP_ENOUGH:
		return "samples";
	case XP_LIVE_STOP_DURATION:
		return "duration";
	case XP_LIVE_STOP_TIMEOUT:
		return "timeout";
	case XP_LIVE_STOP_FULL:
		return "max_events";
	case XP_LIVE_STOP_TARGET_EXITED:
		return "target_exited";
	case XP_LIVE_STOP_SIGNAL:
		return "signal";
	}
	return "unknown";
}

void xp_live_source_destroy(struct xp_live_source *s)
{
	if (s)
		s->ops->destroy(s);
}

/* How long to wait this round: the poll period, cut short by the
 * nearest of the duration end and the deadline. */
static void wait_for(uint64_t now, uint64_t period_ns, uint64_t duration_end, uint64_t deadline,
		     struct timespec *ts)
{
	uint64_t w = period_ns;

	if (duration_end && duration_end > now && duration_end - now < w)
		w = duration_end - now;
	if (deadline > now && deadline - now < w)
		w = deadline - now;
	if (deadline <= now || (duration_end && duration_end <= now))
		w = 0;
	ts->tv_sec = (time_t)(w / 1000000000ull);
	ts->tv_nsec = (long)(w % 1000000000ull);
}

static int flush_all(struct xp_live_source **src, size_t n, struct xp_error *err)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (!src[i]->staged)
			continue;
		rc = src[i]->ops->flush(src[i], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Each source's events in the (cut) capture. */
static void count_retained(const struct xp_capture *c, struct xp_live_source **src, size_t n)
{
	uint64_t host = 0;
	size_t i;

	for (i = 0; i < c->count; i++)
		host += xp_event_is_host(&c->events[i]);
	for (i = 0; i < n; i++)
		src[i]->st.retained = src[i]->kind == XP_LIVE_SRC_EBPF ? host : c->count - host;
}

/* The counters of a round for the progress callback. */
static void report_progress(const struct xp_live_run_opts *o, struct xp_live_source **src, size_t n,
			    const struct xp_live_result *res, uint64_t now, uint64_t end_records,
			    uint64_t held)
{
	struct xp_live_progress p;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.elapsed_ns = now - res->t_armed_ns;
	p.duration_ns = o->duration_ns;
	p.timeout_left_ns = o->deadline_ns > now ? o->deadline_ns - now : 0;
	if (o->samples) {
		p.samples = o->samples->opts.samples;
		p.pairs_counted = o->samples->last_ns != 0;
		p.pairs = o->samples->matched;
	}
	p.end_records = end_records;
	for (i = 0; i < n; i++) {
		p.events += src[i]->st.observed;
		p.dropped += src[i]->st.dropped;
	}
	p.held = held;
	p.max_events = o->max_events;
	o->progress(o->progress_ctx, &p);
}

int xp_live_run(const struct xp_live_run_opts *o, struct xp_live_source **src, size_t n,
		struct xp_capture *c, struct xp_live_result *res, struct xp_error *err)
{
	const struct xp_live_source_stats *stv[XP_LIVE_MAX_SOURCES];
	struct sigaction sa, old_sa[NSIG_LIVE];
	sigset_t block, orig_mask;
	uint64_t period_ns, duration_end = 0, last_verify = 0, unknown = 0, last_progress = 0;
	size_t i, prepared = 0;
	int pidfd = -1, rc;
	bool busy = false, own_pidfd = true;

	memset(res, 0, sizeof(*res));
	res->t_start_ns = xpc_mono_ns();
	if (!n || n > XP_LIVE_MAX_SOURCES)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "live capture of %zu sources",
				    n);
	period_ns = (uint64_t)(o->poll_us ? o->poll_us : XP_LIVE_POLL_US_DEFAULT) * 1000ull;
	c->has_pid = true;
	c->pid = o->event_pid;
	c->has_start_time = true;
	c->process_start_time = o->target->start_time;

	/* 1. signals, pidfd, an earlier stop request */
	live_signal = 0;
	sigemptyset(&block);
	for (i = 0; i < NSIG_LIVE; i++)
		sigaddset(&block, live_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &orig_mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NSIG_LIVE; i++)
		sigaction(live_signals[i], &sa, &old_sa[i]);

	/*
	 * The pidfd identification took (identity.h) when there is one: a
	 * process that got the PID since then cannot pass for the target.
	 */
	if (o->target->has_pidfd) {
		pidfd = o->target->pidfd;
		own_pidfd = false;
	} else {
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)o->target->pid, 0);
	}
	if (pidfd < 0 && errno == ESRCH) {
		xp_target_detail(err, o->target);
		rc = xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				  "target process %u exited before collection started",
				  o->target->pid);
		goto out;
	}
	/* a stop request before this window: attach nothing, end as a
	 * signal during the window would */
	if (xpc_cancel_signo()) {
		res->stop = XP_LIVE_STOP_SIGNAL;
		res->signo = xpc_cancel_signo();
		res->collected = true;
		rc = 0;
		goto out;
	}

	/* 2. identity, prepare, identity */
	rc = xp_target_verify(o->target, err);
	if (rc)
		goto out;
	for (i = 0; i < n; i++) {
		prepared = i + 1;
		rc = src[i]->ops->prepare(src[i], c, err);
		if (rc)
			goto out;
	}
	rc = xp_target_verify(o->target, err);
	if (rc)
		goto out;

	/* 3. arm: the scheduler timeline first, so a pair's first instant
	 * already has its thread's history */
	if (o->sched)
		xp_live_sched_arm(o->sched);
	for (i = 0; i < n; i++) {
		rc = src[i]->ops->arm(src[i], err);
		if (rc)
			goto out;
	}
	res->t_armed_ns = xpc_mono_ns();
	if (o->duration_ns)
		duration_end = res->t_armed_ns + o->duration_ns;
	last_verify = res->t_armed_ns;
	if (o->first_read_delay_ms) {
		/* tests: let a small ring overflow before anything is read */
		struct timespec d = { o->first_read_delay_ms / 1000,
				      (long)(o->first_read_delay_ms % 1000) * 1000000L };

		nanosleep(&d, NULL);
	}

	/* 4. the loop */
	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		bool exited = false, full = false, added = false;
		uint64_t now = xpc_mono_ns(), held = c->count, end_records = 0;
		struct timespec ts;
		int got;

		wait_for(now, busy ? XP_LIVE_POLL_US_BUSY * 1000ull : period_ns, duration_end,
			 o->deadline_ns, &ts);
		got = ppoll(pidfd >= 0 ? &pfd : NULL, pidfd >= 0 ? 1 : 0, &ts, &orig_mask);
		if (got > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			exited = true;
		now = xpc_mono_ns();
		busy = false;
		for (i = 0; i < n; i++) {
			got = src[i]->ops->poll(src[i], now, err);
			if (got < 0) {
				rc = got;
				goto out;
			}
			added |= got > 0;
			busy |= src[i]->busy;
		}
		if (o->sched)
			xp_live_sched_poll(o->sched);
		held = c->count;
		for (i = 0; i < n; i++) {
			held += src[i]->staged;
			end_records += src[i]->st.end_records;
			full |= src[i]->st.full;
		}
		full |= o->max_events && held >= o->max_events;
		now = xpc_mono_ns();
		if (live_signal) {
			res->stop = XP_LIVE_STOP_SIGNAL;
			res->signo = live_signal;
			break;
		}
		if (o->samples && (full || (added && end_records >= o->samples->opts.samples))) {
			rc = flush_all(src, n, err);
			if (rc)
				goto out;
			rc = xp_live_samples_enough(o->samples, c, end_records, full, now, err);
			if (rc < 0)
				goto out;
			if (rc > 0) {
				res->stop = XP_LIVE_STOP_ENOUGH;
				break;
			}
		}
		if (full) {
			res->stop = XP_LIVE_STOP_FULL;
			break;
		}
		for (i = 0; i < n; i++) {
			if (src[i]->staged < XP_LIVE_FLUSH_RECORDS)
				continue;
			rc = src[i]->ops->flush(src[i], err);
			if (rc)
				goto out;
		}
		if (!exited && pidfd < 0 && now - last_verify >= 50000000ull) {
			struct xp_error verr = { 0 };

			last_verify = now;
			exited = xp_target_verify(o->target, &verr) != 0;
			xp_error_clear(&verr);
		}
		if (exited) {
			res->stop = XP_LIVE_STOP_TARGET_EXITED;
			break;
		}
		if (duration_end && now >= duration_end) {
			res->stop = XP_LIVE_STOP_DURATION;
			break;
		}
		if (now >= o->deadline_ns) {
			res->stop = XP_LIVE_STOP_TIMEOUT;
			break;
		}
		if (o->progress && (!last_progress || now - last_progress >= XP_LIVE_PROGRESS_NS)) {
			last_progress = now;
			report_progress(o, src, n, res, now, end_records, held);
		}
	}
	res->collected = true;
	rc = 0;
out:
	/* 5. stop every prepared source, whatever happened above */
	res->t_stop_ns = xpc_mono_ns();
	for (i = 0; i < prepared; i++) {
		struct xp_error serr = { 0 };
		int src_rc = src[i]->ops->stop(src[i], res->collected, rc ? &serr : err);

		if (!rc)
			rc = src_rc;
		xp_error_clear(&serr);
	}
	if (o->sched)
		xp_live_sched_stop(o->sched);
	if (pidfd >= 0 && own_pidfd)
		close(pidfd);
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
	for (i = 0; i < NSIG_LIVE; i++)
		sigaction(live_signals[i], &old_sa[i], NULL);

	/* 6. order, cut, losses */
	for (i = 0; i < n; i++) {
		stv[i] = &src[i]->st;
		unknown += src[i]->st.unknown;
	}
	c->unknown_records = unknown;
	xp_live_losses(c, stv, n);
	if (!rc)
		xp_capture_sort_and_sequence(c);
	/* a target that exited once its samples were formed ended a
	 * measurement, not the capture early: a result (the samples rule may
	 * have been throttled before the exit, or its records came with it) */
	if (!rc && res->stop == XP_LIVE_STOP_TARGET_EXITED && o->samples && !unknown) {
		int formed = xp_live_samples_formed(o->samples, c, err);

		if (formed < 0)
			rc = formed;
		else if (formed)
			res->stop = XP_LIVE_STOP_ENOUGH;
	}
	/* (a capture with records nobody can read is refused whole) */
	if (!rc && res->stop == XP_LIVE_STOP_ENOUGH && !unknown) {
		int cut = xp_live_cut_at_stop(o->samples, c, stv, n);

		if (cut)
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "cutting the capture at its stopping point failed (%d)",
					  cut);
	}
	xp_live_samples_rule_free(o->samples);
	count_retained(c, src, n);
	return rc;
}
