/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crash_handlers.c - what makes a session survive the death of its
 * process: the fatal-signal handlers, the alternate signal stack they run
 * on, the atexit stop, and the fork handlers that keep a child out of its
 * parent's session.
 *
 * Crash handlers are installed once per process at the first begin,
 * saving the previous actions; synchronous fatal signals (SEGV, BUS, FPE,
 * ILL, ABRT, TRAP, SYS) always, terminating asynchronous ones (TERM, INT,
 * HUP, QUIT, PIPE, XCPU, XFSZ) only where their action was the default
 * (an application that handles SIGTERM itself keeps its session running).
 * The handler runs the signal-path stop (session_lifecycle.c: no lock, no
 * allocation), then the signal hook when one is set (the Agent's
 * XPROBE_AGENT_OUTPUT capture, lib/agent/capfile.c, sets it while armed
 * and installs these handlers too: inspect/ never calls up into agent/),
 * then the previous action runs: a handler is called, a default action is
 * restored and the signal raised again.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../internal.h"
#include "../producers/sys_trace.h"
#include "controller.h"

static const int sync_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
static const int async_sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ };
static struct sigaction saved_act[65];
static bool handled[65];
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* Loaded in a signal handler: an atomic load must be a plain load there. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the signal hook needs lock-free pointers");
static void (*_Atomic signal_hook)(int sig);

void xpl_crash_set_signal_hook(void (*fn)(int sig))
{
	atomic_store_explicit(&signal_hook, fn, memory_order_release);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *old = &saved_act[sig];

	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction)
			old->sa_sigaction(sig, si, uc);
		return;
	}
	if (old->sa_handler == SIG_IGN)
		return;
	if (old->sa_handler == SIG_DFL) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sigaction(sig, &dfl, NULL);
		raise(sig); /* pending until we return: then the default action runs */
		return;
	}
	old->sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct xpl_session *s = atomic_load(&xpl_sess_sig);
	void (*hook)(int sig);

	if (s && s->pid == (uint32_t)getpid() && atomic_load(&s->state) != XPL_S_STOPPED) {
		char msg[96];

		xpl_rec_plain(XPROBE_EV_SIGNAL, (uint32_t)sig,
			      si ? (uint64_t)(uintptr_t)si->si_addr : 0, 0);
		xpl_sfmt(msg, sizeof(msg), "signal %d received: finishing the session's files",
			 sig);
		xpl_log_signal_safe(XPROBE_LOG_WARN, msg);
		xpl_session_stop(s, "signal", sig, true);
	}
	hook = atomic_load_explicit(&signal_hook, memory_order_acquire);
	if (hook)
		hook(sig); /* the XPROBE_AGENT_OUTPUT capture, if armed */
	chain(sig, si, uc);
	errno = saved_errno;
}

static void install_one(int sig, bool only_if_default)
{
	struct sigaction act, old;

	if (sigaction(sig, NULL, &old) != 0)
		return;
	if (only_if_default && !(!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL))
		return;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_signal;
	act.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &saved_act[sig]) == 0)
		handled[sig] = true;
}

static void on_exit_stop(void)
{
	struct xpl_session *s;

	pthread_mutex_lock(&xpl_ctl_lock);
	s = xpl_sess;
	if (s && s->pid == (uint32_t)getpid())
		xpl_session_stop(s, "atexit", 0, false);
	pthread_mutex_unlock(&xpl_ctl_lock);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&xpl_ctl_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&xpl_ctl_lock);
}

/*
 * The parent's objects in a forked child: never touched again (freeing them
 * would join a monitor thread that does not exist here, unlink the
 * parent's ring file), but kept reachable, so a leak checker sees them as
 * held rather than lost.
 */
static struct {
	struct xpl_session *sess;
	struct xpl_continuous *cont;
	struct xpl_exec_ent *execs;
} parent_objects;

static void fork_child(void)
{
	/* The child records nothing of the parent's session and never stops
	 * it (its files are the parent's). */
	xpl_trace_atfork_child();
	parent_objects.sess = xpl_sess;
	parent_objects.cont = xpl_cont;
	parent_objects.execs = xpl_execs;
	xpl_sess = NULL;
	atomic_store(&xpl_sess_sig, NULL);
	xpl_cont = NULL;
	xpl_execs = NULL;
	pthread_mutex_unlock(&xpl_ctl_lock);
}

/*
 * The crash handlers run on an alternate stack (SA_ONSTACK) where the
 * thread has one, so a stack overflow can still stop the session.  The
 * thread that installs them (the one that begins the first session, usually
 * main) gets one here when it has none: 256 KiB, enough for the signal-path
 * stop, above a guard page.  Other threads keep whatever their program gave
 * them; an overflow on a thread without one kills the process before any
 * handler runs (the host rings still survive in host_rings.live).
 */
#define ALTSTACK_BYTES ((size_t)256 << 10)

static void install_altstack(void)
{
	stack_t cur, ss;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p;

	if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
		return; /* the program has its own */
	p = mmap(NULL, ALTSTACK_BYTES + page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;
	mprotect(p, page, PROT_NONE); /* the guard: the stack grows down to it */
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = p + page;
	ss.ss_size = ALTSTACK_BYTES;
	if (sigaltstack(&ss, NULL) != 0)
		munmap(p, ALTSTACK_BYTES + page);
	/* else kept for the life of the process, as the handlers are */
}

static void install_handlers(void)
{
	install_altstack();
	for (size_t i = 0; i < XPL_ARRAY_SIZE(sync_sigs); i++)
		install_one(sync_sigs[i], false);
	for (size_t i = 0; i < XPL_ARRAY_SIZE(async_sigs); i++)
		install_one(async_sigs[i], true);
	atexit(on_exit_stop);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void xpl_crash_handlers_install(void)
{
	pthread_once(&handlers_once, install_handlers);
}
