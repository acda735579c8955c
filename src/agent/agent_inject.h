/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_inject.h - online injection: load the Agent (libxprobe.so) into a
 * running process and start its control socket, through ptrace, leaving
 * the target as it was (docs/agent.md, "Online injection").
 *
 * What this module owns: the checks that come first (Linux x86_64, the
 * target shares our mount namespace and root so the library path names
 * the same file, ptrace permission with the reason when it is refused,
 * an Agent file the target may safely execute), the choice of the one
 * thread that does the work, the calls it is sent into, and the promise
 * that it comes back whatever happens to us.  Nothing here prints; the
 * caller (measure) writes the warning that the target is modified.
 *
 * Sequence (agent_inject.c has the details and the invariants):
 *   1. checks, read-only, before any ptrace request: architecture,
 *      mount namespace and root (the Agent's dev/ino seen through
 *      /proc/<pid>/root), ptrace permission (uid/gid, capabilities,
 *      dumpable, Yama ptrace_scope, an existing tracer), the Agent file
 *      (absolute after realpath, a regular ELF x86_64 shared object
 *      exporting xprobe_agent_start, owned by root or the target's uid,
 *      not writable by group or others, nor is any directory above it
 *      unless sticky), the target's dlopen/dlsym/dlerror,
 *      __errno_location, mmap, munmap and sigreturn trampoline in its
 *      mapped C library;
 *   2. PTRACE_SEIZE of one thread (chosen by its state: blocked in a
 *      restartable waiting syscall first, futex waits and running threads
 *      last), PTRACE_INTERRUPT, a bounded wait for the stop, registers,
 *      vector state (NT_X86_XSTATE) and signal mask saved, and written
 *      below its red zone as an rt_sigreturn frame (agent_inject_stub.h);
 *   3. three calls, each ending in rt_sigreturn on that frame, so the
 *      thread restores itself even if we die: mmap of a page for the
 *      stub, the stub (dlopen, dlsym, xprobe_agent_start; only the start
 *      when the Agent is mapped), munmap of the page;
 *   4. the stack bytes written back, PTRACE_DETACH.
 * A failure after step 2 still ends in the frame's rt_sigreturn (or, when
 * that cannot run, a restore through ptrace).  The Agent is never
 * dlclose'd.  Only the chosen thread stops; the others run on.
 */
#ifndef XP_COLLECT_AGENT_INJECT_H
#define XP_COLLECT_AGENT_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "../process/identity.h"

/* Defaults of struct xp_agent_inject_opts. */
#define XP_INJECT_STOP_TIMEOUT_MS 1000u /* each wait for the thread to stop */
#define XP_INJECT_CALL_TIMEOUT_MS 5000u /* each remote call */

/* What a caller may choose; a NULL opts or zero fields mean the defaults. */
struct xp_agent_inject_opts {
	uint32_t tid; /* the thread to use (a thread of the target); 0: choose */
	uint32_t stop_timeout_ms;
	uint32_t call_timeout_ms;
	/*
	 * Called once every check has passed, just before the first thread
	 * is stopped (never on a refusal): the caller says there that the
	 * target is about to be modified.
	 */
	void (*before_stop)(void *ctx);
	void *ctx;
};

/* What the thread chosen was doing when it was stopped. */
enum xp_agent_inject_thread_kind {
	XP_INJECT_THREAD_WAITING = 0, /* blocked in a restartable waiting syscall */
	XP_INJECT_THREAD_SYSCALL, /* blocked in another syscall */
	XP_INJECT_THREAD_EINTR, /* in a syscall that reports EINTR after any stop */
	XP_INJECT_THREAD_FUTEX, /* in a futex wait (it may hold a lock) */
	XP_INJECT_THREAD_RUNNING, /* running user code (not inside libc or ld.so) */
	XP_INJECT_THREAD_OTHER, /* blocked outside a syscall (page fault, ...) */
	XP_INJECT_THREAD__COUNT
};
const char *xp_agent_inject_thread_kind_name(enum xp_agent_inject_thread_kind k);

struct xp_agent_inject_result {
	bool injected; /* this call dlopen'ed the Agent; false: it was mapped, only started */
	int32_t start_status; /* xprobe_agent_start's return in the target (0 = served) */
	char start_error[512]; /* its xprobe_last_error() when it failed, else "" */
	char agent_path[PATH_MAX]; /* the file the target maps (canonical path) */
	uint64_t agent_dev; /* its st_dev, st_ino */
	uint64_t agent_ino;
	uint64_t handle; /* dlopen's handle in the target; 0 when not dlopen'ed */
	uint64_t start_address; /* xprobe_agent_start in the target */
	uint32_t tid; /* the thread that ran the calls */
	enum xp_agent_inject_thread_kind thread_kind;
	int32_t syscall_nr; /* the syscall it was stopped in, -1 none */
	uint32_t threads_tried; /* threads stopped before one was fit (>= 1) */
	uint32_t remote_calls; /* times the thread was sent into a call (mmap, the stub, munmap) */
	uint32_t requests; /* ptrace requests made */
	uint32_t steps; /* those and the looks at the running stub (tests) */
	uint64_t scratch_bytes; /* stack borrowed below the red zone and its slack */
	uint64_t total_ns; /* xp_agent_inject from entry to return */
	uint64_t stopped_ns; /* PTRACE_INTERRUPT to PTRACE_DETACH of the thread used
				(summed over threads tried): how long it stood still */
	uint64_t call_ns; /* of which inside remote calls */
};

/*
 * Load the Agent at @agent_path into @t (or, when an Agent is mapped
 * already, only call its xprobe_agent_start) and start its socket.
 * @opts may be NULL.  Returns 0 with @out filled, or a negative code with
 * @err set and the target restored:
 *   PERMISSION_DENIED (exit 4): another mount namespace or root; ptrace
 *     refused (details.reason: uid, ptrace_scope, capability,
 *     not_dumpable, already_traced, kernel); an Agent file that is not
 *     trusted (agent_untrusted); the Agent refused to serve (AT_SECURE);
 *   UNSUPPORTED_CUDA_VERSION: not a Linux x86_64 (64-bit) target;
 *   TARGET_EXITED / TARGET_REUSED / TARGET_NOT_FOUND;
 *   CUPTI_AGENT_NOT_LOADED: no Agent file, not an Agent, no dynamic C
 *     library in the target, no fit thread, dlopen failed (dlerror's
 *     words), the remote call faulted or timed out, xprobe_agent_start
 *     returned an error (details.start_status).
 * @out->stopped_ns is filled on failure too.
 */
int xp_agent_inject(const struct xp_target *t, const char *agent_path,
		    const struct xp_agent_inject_opts *opts, struct xp_agent_inject_result *out,
		    struct xp_error *err);

/* ---- pure parts, exposed for tests ---------------------------------------- */

/*
 * /proc/<pid>/task/<tid>/syscall: "running", "-1 <sp> <pc>" (blocked, not
 * in a syscall) or "<nr> <6 args> <sp> <pc>".  Returns 0 with *nr (-1 for
 * blocked outside a syscall, -2 for running), -EINVAL when malformed.
 */
int xp_agent_inject_parse_syscall(const char *text, int32_t *nr);
/* The kind of a thread in syscall @nr (-2 running, -1 not in a syscall). */
enum xp_agent_inject_thread_kind xp_agent_inject_classify(int32_t nr);

/* What decides whether we may ptrace the target. */
struct xp_agent_ptrace_facts {
	uint32_t uid, gid; /* ours (real: ptrace attach checks real ids) */
	uint64_t cap_eff; /* ours */
	uint32_t tuid[3], tgid[3]; /* the target's real, effective, saved */
	bool target_dumpable;
	int yama_scope; /* -1: no Yama */
	bool descendant; /* the target descends from us */
	uint32_t tracer_pid; /* the target thread's TracerPid, 0 none */
};

enum xp_agent_ptrace_verdict {
	XP_PTRACE_ALLOWED = 0,
	XP_PTRACE_DENIED, /* certain (short of an LSM saying yes) */
	XP_PTRACE_UNSURE, /* may be refused (Yama 1: PR_SET_PTRACER exceptions) */
};

/*
 * Judge @f; *reason gets a stable word (uid, ptrace_scope, capability,
 * not_dumpable, already_traced; "" when allowed) and @msg a sentence.
 */
enum xp_agent_ptrace_verdict xp_agent_inject_ptrace_verdict(const struct xp_agent_ptrace_facts *f,
							    const char **reason, char *msg,
							    size_t size);

#endif /* XP_COLLECT_AGENT_INJECT_H */
