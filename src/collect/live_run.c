/* SPDX-License-Identifier: Apache-2.0 */
/*
 * live_run.c - one bounded live capture: set up, arm, consume on a short
 * timer, stop by rule, clean up on every path.
 *
 * Steps (numbered as in the code):
 *   1. decoder templates; SIGINT/SIGTERM/SIGHUP blocked and handled by a
 *      handler that only records the signal; a pidfd on the target
 *   2. identity check, load, attach every link, identity check again
 *   3. arm (one store into the object's .bss)
 *   4. loop: ppoll(pidfd) for at most poll_us with the signals unblocked,
 *      consume the ring, then test in this order: signal, samples rule
 *      (enough), capture full, target exited, duration, deadline
 *   5. stop: disarm, detach every link (the kernel waits out programs in
 *      flight), consume what is left, read the drop counters, free the
 *      object; restore the signal mask, then the handlers
 *   6. sort by timestamp and renumber
 *
 * Why a timer and not epoll on the ring: records are submitted with
 * BPF_RB_NO_WAKEUP, which never signals the ring's epoll
 * (docs/live-measurement.md, "Arming, consuming, stopping");
 * a wakeup per record would cost the target microseconds.  The default
 * period (2 ms) bounds the ring occupancy to what a target emits in 2 ms
 * and a round that finds the ring a quarter full polls again after 250
 * us until the burst passes.  Consuming in batches rather than as fast as
 * records come keeps the consumer off the cache lines the producing CPU
 * writes.
 *
 * Cleanup: every path after step 2 goes through step 5; links and maps
 * are file descriptors of this process, so even SIGKILL cannot leave a
 * probe behind (the kernel closes them).  The target is never stopped,
 * traced or written to: uprobe breakpoints are the kernel's, removed when
 * their link goes.
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
#include "live.h"

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

uint64_t xp_live_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

struct run {
	struct xp_live_decoder dec;
	bool nomem;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct run *r = ctx;

	if (xp_live_stage(&r->dec, data, size) == -ENOMEM)
		r->nomem = true;
	return 0;
}

static int flush(struct run *r, struct xp_error *err)
{
	if (xp_live_flush(&r->dec)) {
		r->nomem = true;
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "out of memory while decoding the capture");
	}
	return 0;
}

static uint64_t decoded_total(const struct xp_live_decoder *d)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < d->ntmpl; i++)
		n += d->per_endpoint[i];
	return n;
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

int xp_live_capture(const struct xp_live_opts *o, struct xp_capture *c, struct xp_live_stats *st,
		    struct xp_error *err)
{
	struct sigaction sa, old_sa[NSIG_LIVE];
	struct xp_live_obj *b = NULL;
	sigset_t block, orig_mask;
	uint64_t period_ns, duration_end = 0, last_total = 0, last_verify = 0, slot = 0;
	uint64_t busy_records;
	struct run *r;
	int pidfd = -1, rc;
	bool stopped = false, busy = false, own_pidfd = true;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->t_start_ns = xp_live_now_ns();
	st->capacity = o->max_events;
	st->ring_bytes = xp_live_ring_bytes(o->max_events, o->samples, o->endpoints, o->nendpoints,
					    &slot);
	if (o->ring_bytes)
		st->ring_bytes = o->ring_bytes;
	busy_records = st->ring_bytes / slot / 4;
	period_ns = (uint64_t)(o->poll_us ? o->poll_us : XP_LIVE_POLL_US_DEFAULT) * 1000ull;

	/* 1. templates, signals, pidfd */
	r = calloc(1, sizeof(*r));
	if (!r)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	rc = xp_live_decoder_init(&r->dec, c, o->endpoints, o->nendpoints,
				  o->target->start_time);
	if (rc) {
		free(r);
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "cannot prepare the capture's event templates (%d)", rc);
	}
	c->has_pid = true;
	c->pid = o->filter.event_pid;
	c->has_start_time = true;
	c->process_start_time = o->target->start_time;

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

	/*
	 * A stop request that came before this window (common/cancel.h: the
	 * handlers above take over from here on): attach nothing, end as a
	 * signal during the window would.
	 */
	if (xpc_cancel_signo()) {
		st->stop = XP_LIVE_STOP_SIGNAL;
		st->signo = xpc_cancel_signo();
		rc = 0;
		goto out;
	}

	/* 2. identity, load, attach, identity */
	rc = xp_target_verify(o->target, err);
	if (rc)
		goto out;
	rc = xp_live_bpf_open(&o->filter, o->endpoints, o->nendpoints, st->ring_bytes, on_record,
			      r, &b, err);
	if (rc)
		goto out;
	rc = xp_live_bpf_attach(b, o->target->pid, err);
	if (rc) {
		struct xp_error verr = { 0 };

		/* a target that went away explains the failure better */
		if (xp_target_verify(o->target, &verr)) {
			xp_error_move(err, &verr);
			rc = -err->code;
		}
		xp_error_clear(&verr);
		goto out;
	}
	rc = xp_target_verify(o->target, err);
	if (rc)
		goto out;

	/* 3. arm */
	xp_live_bpf_arm(b, true);
	st->t_armed_ns = xp_live_now_ns();
	if (o->duration_ns)
		duration_end = st->t_armed_ns + o->duration_ns;
	last_verify = st->t_armed_ns;
	if (o->first_read_delay_ms) {
		/* tests: let a small ring overflow before anything is read */
		struct timespec d = { o->first_read_delay_ms / 1000,
				      (long)(o->first_read_delay_ms % 1000) * 1000000L };

		nanosleep(&d, NULL);
	}

	/* 4. the loop */
	for (;;) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		bool exited = false, full;
		struct timespec ts;
		uint64_t now = xp_live_now_ns(), total;
		int n, got;

		wait_for(now, busy ? XP_LIVE_POLL_US_BUSY * 1000ull : period_ns, duration_end,
			 o->deadline_ns, &ts);
		n = ppoll(pidfd >= 0 ? &pfd : NULL, pidfd >= 0 ? 1 : 0, &ts, &orig_mask);
		if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			exited = true;
		got = xp_live_bpf_consume(b);
		if (got < 0 && got != -EINTR) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "reading the BPF ring buffer failed (%d)", got);
			goto out;
		}
		if (r->nomem) {
			rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
					  "out of memory while decoding the capture");
			goto out;
		}
		now = xp_live_now_ns();
		if (live_signal) {
			st->stop = XP_LIVE_STOP_SIGNAL;
			st->signo = live_signal;
			break;
		}
		total = decoded_total(&r->dec);
		full = o->max_events && xp_live_held(&r->dec) >= o->max_events;
		if (o->enough && o->samples &&
		    (full || (total != last_total &&
			      r->dec.per_endpoint[o->enough_endpoint] >= o->samples))) {
			last_total = total;
			rc = flush(r, err);
			if (rc)
				goto out;
			rc = o->enough(o->enough_ctx, c, r->dec.per_endpoint, err);
			if (rc < 0)
				goto out;
			if (rc > 0) {
				st->stop = XP_LIVE_STOP_ENOUGH;
				break;
			}
		}
		if (full) {
			st->stop = XP_LIVE_STOP_FULL;
			break;
		}
		if (!o->samples && r->dec.nstaged >= XP_LIVE_FLUSH_RECORDS) {
			rc = flush(r, err);
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
			st->stop = XP_LIVE_STOP_TARGET_EXITED;
			break;
		}
		if (duration_end && now >= duration_end) {
			st->stop = XP_LIVE_STOP_DURATION;
			break;
		}
		if (now >= o->deadline_ns) {
			st->stop = XP_LIVE_STOP_TIMEOUT;
			break;
		}
		busy = got > 0 && (uint64_t)got >= busy_records;
	}
	stopped = true;
	rc = 0;
out:
	/* 5. stop and clean up, whatever happened above */
	st->t_stop_ns = xp_live_now_ns();
	if (b) {
		uint64_t dropped = 0, first_ts = 0;

		xp_live_bpf_detach(b);
		if (stopped) {
			if (xp_live_bpf_consume(b) < 0 && !rc)
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "reading the BPF ring buffer failed at stop");
			if (xp_live_bpf_dropped(b, &dropped, &first_ts) && !rc)
				rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
						  "reading the drop counters failed");
			st->dropped = dropped;
			st->first_drop_ts = first_ts;
		}
		xp_live_bpf_destroy(b);
	}
	if (pidfd >= 0 && own_pidfd)
		close(pidfd);
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
	for (i = 0; i < NSIG_LIVE; i++)
		sigaction(live_signals[i], &old_sa[i], NULL);
	if (r->dec.nstaged) {
		/* also after a failure: the artifact gets what was captured */
		struct xp_error ferr = { 0 };
		int frc = flush(r, rc ? &ferr : err);

		xp_error_clear(&ferr);
		if (!rc)
			rc = frc;
	}
	if (r->nomem && !rc)
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false,
				  "out of memory while decoding the capture");
	xp_live_decoder_free(&r->dec);

	/* 6. order */
	for (i = 0; i < r->dec.ntmpl && i < XP_LIVE_MAX_ENDPOINTS; i++)
		st->per_endpoint[i] = r->dec.per_endpoint[i];
	st->beyond = r->dec.beyond;
	st->unknown = r->dec.unknown;
	st->observed = decoded_total(&r->dec) + st->unknown + st->dropped;
	c->dropped = st->dropped;
	c->unknown_records = st->unknown;
	if (!rc)
		xp_capture_sort_and_sequence(c);
	st->retained = c->count;
	free(r);
	return rc;
}

long xp_live_trim(struct xp_capture *c, size_t lo, int (*ok)(void *ctx, struct xp_capture *c),
		  void *ctx)
{
	size_t full = c->count, hi = full, a = lo < full ? lo : full;

	/* invariant: ok(hi) holds; the answer lies in [a, hi] */
	while (a < hi) {
		size_t mid = a + (hi - a) / 2;
		int rc;

		c->count = mid;
		rc = ok(ctx, c);
		if (rc < 0) {
			c->count = full;
			return rc;
		}
		if (rc)
			hi = mid;
		else
			a = mid + 1;
	}
	c->count = hi;
	return (long)hi;
}
