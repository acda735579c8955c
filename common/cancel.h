/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cancel.h - SIGINT, SIGTERM and SIGHUP as a request to stop, which the
 * long phases of a command honour at their next check.
 *
 * main() installs the handler before anything else runs (a signal in the
 * first milliseconds used to kill xprobe by default action, leaving its
 * temporaries behind) and unblocks the three signals, in case the parent
 * started it with them blocked.  The handler only records the first
 * signal; the phases that can take long -- decoding inputs, correlating,
 * writing an artifact -- test xpc_cancel_signo() every few thousand
 * events and stop with -ECANCELED, and the command turns that into its
 * "cancelled" document (docs/inputs.md, docs/live-measurement.md).
 *
 * A second signal while the first is still being honoured ends the
 * process at once, as the signal's default action does, after unlinking
 * the temporary of any atomic write in flight (atomic_file.h): Ctrl-C
 * twice always works, and never leaves a ".NAME.xprobe-PID-N.tmp".
 *
 * Commands that never check (doctor, discover, validate: short, read-only)
 * call xpc_cancel_release(): the default actions come back, and a signal
 * that already arrived takes effect then.
 *
 * Live collection and the inventories install their own handlers for
 * their window (they wait in ppoll/nanosleep) and restore these after; a
 * signal recorded here before the window makes the window end at once.
 *
 * The JSON decoder plugin has its own copy of this file: json_api.c hands
 * it xpc_cancel_flag() (xpc_cancel_share), so both test one flag.
 */
#ifndef XPC_CANCEL_H
#define XPC_CANCEL_H

#include <signal.h>

/* Install the handlers and unblock SIGINT, SIGTERM, SIGHUP. */
void xpc_cancel_install(void);
/* Back to the default actions; re-raise a signal that already came. */
void xpc_cancel_release(void);
/* The flag the handler sets (this copy's own unless shared). */
extern volatile sig_atomic_t *xpc_cancel_ptr;

/* 0, or the first of the signals received. */
static inline int xpc_cancel_signo(void)
{
	return *xpc_cancel_ptr;
}

/* The flag itself, for xpc_cancel_share() in another copy of this code. */
volatile sig_atomic_t *xpc_cancel_flag(void);
/* Test @flag instead of this copy's own (NULL: its own again). */
void xpc_cancel_share(volatile sig_atomic_t *flag);

/* Checks every this many items of a loop (a power of two). */
#define XPC_CANCEL_EVERY 4096u

#endif /* XPC_CANCEL_H */
