/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cancel.c - the process-wide stop request (cancel.h).
 *
 * Invariant: the handler does only async-signal-safe things: it stores
 * the signal number, or -- on a second signal -- unlinks the registered
 * temporaries (unlink), restores the default action (sigaction) and
 * raises the signal again (raise).
 */
#include <string.h>

#include "atomic_file.h"
#include "cancel.h"

static volatile sig_atomic_t own_flag;
volatile sig_atomic_t *xpc_cancel_ptr = &own_flag;

static const int cancel_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIG_CANCEL (sizeof(cancel_signals) / sizeof(cancel_signals[0]))

static void default_action(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void on_signal(int sig)
{
	if (*xpc_cancel_ptr) {
		/* the second: stop now, as the default action would */
		xpc_atomic_unlink_inflight();
		default_action(sig);
		raise(sig); /* delivered when this handler returns */
		return;
	}
	*xpc_cancel_ptr = sig;
}

void xpc_cancel_install(void)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* restart interrupted calls: stdio and the read loops need not care */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (i = 0; i < NSIG_CANCEL; i++) {
		sigaction(cancel_signals[i], &sa, NULL);
		sigaddset(&set, cancel_signals[i]);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void xpc_cancel_release(void)
{
	size_t i;
	int sig;

	for (i = 0; i < NSIG_CANCEL; i++)
		default_action(cancel_signals[i]);
	sig = *xpc_cancel_ptr;
	if (sig)
		raise(sig);
}

volatile sig_atomic_t *xpc_cancel_flag(void)
{
	return xpc_cancel_ptr;
}

void xpc_cancel_share(volatile sig_atomic_t *flag)
{
	xpc_cancel_ptr = flag ? flag : &own_flag;
}
