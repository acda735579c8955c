/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_restart.bpf.h - when a syscall's exit is not its return to the
 * program, for the programs that pair syscalls (bpf/xp_live.bpf.c,
 * bpf/latency_hist.bpf.c, bpf/syscall_agg.bpf.c; docs/live-measurement.md,
 * "Syscall pairs").
 *
 * No syscall number is a sentinel: a negative number is never an
 * endpoint (it is rt_sigreturn's exit, whose orig_ax the kernel sets to
 * -1, or a syscall(-1)), and unused endpoint slots are left out by a
 * count, never by a value a syscall could carry.
 *
 * Restarts.  A blocking syscall a signal interrupts exits (sys_exit fires)
 * with one of the kernel's restart codes, before it has returned to the
 * program:
 *   -ERESTARTNOINTR (513)        runs again;
 *   -ERESTARTSYS (512)           runs again, unless a handler without
 *                                SA_RESTART runs: the program gets EINTR;
 *   -ERESTARTNOHAND (514)        runs again unless a handler runs (EINTR);
 *   -ERESTART_RESTARTBLOCK (516) goes on as restart_syscall (219) unless
 *                                a handler runs (EINTR).
 * Running again is the same syscall entering again on the same thread
 * (restart_syscall for 516) with no return to the program between.  A
 * handler that ran first returns through rt_sigreturn, whose exit returns
 * what the interrupted call returns: -EINTR when the program gets EINTR,
 * the syscall's own number when it runs again.  So the programs keep a
 * restart-code exit's call open, mark the thread, and then:
 *   - the thread's next entry of that syscall continues the same call;
 *   - restart_syscall's exit (after 516) is that call's return;
 *   - an rt_sigreturn exit returning -EINTR is its return, with EINTR.
 * The interval therefore runs from the program's call to the program's
 * return, handler included, as the program itself would time it.
 *
 * execve.  A successful execve in a multi-threaded process exits on the
 * thread group leader's id (de_thread), not the caller's: the programs
 * that pair by thread find its start through the process as well.
 */
#ifndef XP_SYSCALL_RESTART_BPF_H
#define XP_SYSCALL_RESTART_BPF_H

#define XP_ERESTARTSYS 512
#define XP_ERESTARTNOINTR 513
#define XP_ERESTARTNOHAND 514
#define XP_ERESTART_RESTARTBLOCK 516
#define XP_EINTR 4
#define XP_NR_RESTART_SYSCALL 219 /* x86_64 */
#define XP_NR_EXECVE 59
#define XP_NR_EXECVEAT 322

/* The exit's return says the syscall will run again (or end in EINTR). */
static __always_inline int xp_sys_restarting(long ret)
{
	return ret == -XP_ERESTARTSYS || ret == -XP_ERESTARTNOINTR ||
	       ret == -XP_ERESTARTNOHAND || ret == -XP_ERESTART_RESTARTBLOCK;
}

#endif /* XP_SYSCALL_RESTART_BPF_H */
