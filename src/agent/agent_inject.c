/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_inject.c - online injection of the Agent into a running process
 * (sequence and API in agent_inject.h; the user-facing rules in docs/agent.md,
 * "Online injection").
 *
 * Why each step is what it is:
 *
 * One thread, not the process.  PTRACE_SEIZE + PTRACE_INTERRUPT stop the
 * one thread that makes the calls; the others run on.  The call runs
 * dlopen and the Agent's constructor on that thread, at whatever point it
 * was stopped, much as a signal handler would: if the thread held a lock
 * dlopen needs (the loader lock, its malloc arena), the call deadlocks
 * or corrupts.  So the thread is chosen by what it was doing
 * (/proc/<pid>/task/<tid>/syscall), best first:
 *   waiting   blocked in a restartable waiting syscall (read, poll,
 *             nanosleep, accept, wait4 ...): at a syscall boundary, in
 *             application code, holding no libc lock in all but odd cases;
 *   syscall   blocked in any other syscall but a futex wait;
 *   eintr     in a syscall Linux ends with EINTR after any stop, handler
 *             or not (epoll_wait, semop, sigtimedwait, io_getevents): the
 *             application sees an EINTR it must already tolerate (SIGSTOP
 *             or a debugger cause the same);
 *   futex     a futex wait: often inside a lock, possibly holding another;
 *   running   running user code: stopped, then refused and retried a few
 *             ms later while its rip is inside libc or ld.so (it may hold
 *             malloc's or the loader's lock) or inside an rseq critical
 *             section (a restored rip would skip the abort rseq promises);
 *   other     blocked outside a syscall (a page fault).
 * Within a kind, a thread that blocks a signal the process catches (it may
 * be inside that handler) comes after one that does not, then by tid.
 * Excluded: zombies, a thread whose stack has no room for the frame and
 * the calls, a thread with a user shadow stack (x86_Thread_features:
 * shstk; our calls return where its shadow stack says no call was
 * made, which faults).  What stays a risk: a thread blocked in
 * read() *inside* dlopen or malloc (a syscall made while holding the
 * loader or arena lock), a handler that interrupted malloc; both need the
 * thread to be caught in a few microseconds of its life.
 *
 * Safe if we vanish.  xprobe may be killed at any instant (SIGKILL, a
 * crash, the machine's OOM killer); the kernel then detaches the thread
 * and it runs on with whatever registers it holds.  So from the first
 * register we change, the thread holds a way back that needs no one: an
 * x86_64 rt_sigreturn frame on its own stack, below the red zone, with
 * its registers, vector state (the NT_X86_XSTATE image) and signal mask
 * (agent_inject_stub.h).  Every call we make returns into rt_sigreturn
 * on that frame, so the thread restores itself whether or not we are
 * still there to see it:
 *   1. mmap(page, 4096, PROT_READ|PROT_EXEC, MAP_FIXED_NOREPLACE) in
 *      libc, with a return address of libc's own sigreturn trampoline
 *      (__restore_rt, "mov $15, %rax; syscall", found by its bytes);
 *   2. the stub copied into that page (through /proc/<pid>/mem, which
 *      writes a read-only page for its tracer): __errno_location, dlopen,
 *      dlsym, xprobe_agent_start (dlerror after a failure; only the start
 *      when the Agent is mapped), errno put back, rt_sigreturn; each
 *      result lands in a call block beside the frame;
 *   3. munmap of the page, returning to __restore_rt again.
 * We follow each call under PTRACE_SYSCALL and take it back at the entry
 * stop of its rt_sigreturn (recognised by rip and rsp), read the block,
 * let the rt_sigreturn run and start the next call from its exit stop,
 * where the thread holds its own state again.  What a death between two
 * instructions of ours can leave: the stub's page mapped (4 KiB, never
 * run again), the Agent loaded and serving; the thread itself always
 * comes back.
 *
 * Syscall restart.  A thread stopped in a blocking syscall is stopped in
 * get_signal() with rax = -ERESTARTSYS / -ERESTARTNOHAND /
 * -ERESTARTNOINTR / -ERESTART_RESTARTBLOCK and orig_rax = the syscall.
 * Each call sets orig_rax = -1 so the kernel does not "restart" our
 * registers; the frame holds the syscall made ready to run again, as
 * the kernel restarts one after a stop without a handler (rax = the
 * syscall, rip back over the syscall instruction).  rt_sigreturn resets
 * the restart block, so a -ERESTART_RESTARTBLOCK syscall runs again from
 * its registers too: a relative nanosleep or poll timeout starts over.
 * A handler that ran during the call makes the syscall see EINTR where
 * SA_RESTART says so: the handler did run.
 *
 * Memory.  The frame, the call block and the path strings go on the
 * thread's stack below the red zone (rsp - 128 - 128 and down).  Their
 * old bytes are saved first and written back before the detach; if we
 * die first they stay, which is harmless: the ABI promises nothing below
 * the red zone (a signal frame may land there at any instant).  The
 * callees' own frames go further down and are not restored.
 * errno is saved and put back by the stub itself.  The alternate signal
 * stack, which ptrace cannot read, is left alone: the frame's stack_t is
 * one sigaltstack refuses and rt_sigreturn ignores the refusal.
 *
 * Faults, timeouts, the fallback.  A fault inside a call (a signal the
 * code raised, si_code > 0) is a stop we see first: its signal is
 * discarded.  A call that overruns its timeout is interrupted and
 * abandoned (a lock it took stays taken).  Either way the page's munmap
 * is then run from that stop, which ends in the same rt_sigreturn; only
 * when that cannot run are the registers and vector state put back
 * through ptrace (with orig_rax = -1 and the restart prepared as in the
 * frame, which is valid at any kind of stop).
 *
 * Signals to us.  SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and SIGTSTP
 * are blocked from the first stop until the last detach, and delivered
 * after: a second Ctrl-C cannot end us with a thread in hand (SIGKILL
 * can, and the thread then restores itself).
 *
 * Bounded waits and the tracer thread.  Every ptrace request runs on a
 * thread of our own created for one injection; every wait on the tracee
 * is a WNOHANG poll against a deadline.  A thread that never stops
 * (uninterruptible sleep) cannot be detached by PTRACE_DETACH; the
 * tracer thread then exits and the kernel detaches its tracees
 * (exit_ptrace): a thread we never changed runs on unchanged, one inside
 * a call finishes it and restores itself.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xprobe/agent.h>

#include "../../common/env_hooks.h"
#include "../../common/monotonic.h"
#include "../../common/parse.h"
#include "../model/names.h"
#include "../process/namespaces.h"
#include "../process/procfs.h"
#include "../resolve/target_files.h"
#include "../resolve/xelf.h"
#include "agent_inject.h"
#include "agent_inject_stub.h"

#define RED_ZONE 128u
#define STACK_SLACK 128u /* more than the red zone, as the peer leaves */
#define STACK_ROOM_MIN (64u * 1024u) /* what dlopen + the Agent's start may use */
#define MAX_THREADS 4096u
#define MAX_TRIES 8u /* threads stopped before giving up */
#define BUSY_RETRIES 25u /* a running thread caught inside libc: tries of it */
#define BUSY_RETRY_NS 2000000ull
#define XSTATE_MAX (64u * 1024u)
#define DLERROR_MAX 512u
#define PAGE_BYTES 4096ull
#define PARK_NS 1000000ull /* the stub's park: nanosleeps of 1 ms ... */
#define PARK_ROUNDS 250u /* ... 250 of them: what a dead injector costs the thread */
#define MAP_FIXED_NOREPLACE_ 0x100000 /* Linux 4.17; older kernels take it as a hint */
#define PAGE_LO 0x10000000ull /* where the stub's page may go: above the executable ... */
#define PAGE_HI 0x7ffffffff000ull /* ... below the 47-bit user limit */
#define START_SYMBOL "xprobe_agent_start"
#define LAST_ERROR_SYMBOL "xprobe_last_error"
#define RTLD_NOW_ 0x2
#define RTLD_NODELETE_ 0x1000
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
#define EFLAGS_TF 0x100ull
#define EFLAGS_DF 0x400ull
#define USER_CS_64 0x33ull
/* the kernel's restart codes a stopped syscall shows in rax */
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514
#define ERESTART_RESTARTBLOCK_ 516

static const char *const kind_names[XP_INJECT_THREAD__COUNT] = {
	[XP_INJECT_THREAD_WAITING] = "waiting", [XP_INJECT_THREAD_SYSCALL] = "syscall",
	[XP_INJECT_THREAD_EINTR] = "eintr",	[XP_INJECT_THREAD_FUTEX] = "futex",
	[XP_INJECT_THREAD_RUNNING] = "running", [XP_INJECT_THREAD_OTHER] = "other",
};

const char *xp_agent_inject_thread_kind_name(enum xp_agent_inject_thread_kind k)
{
	return XP_NAME_OF(kind_names, k, "unknown");
}

/* ---- pure parts ------------------------------------------------------------ */

int xp_agent_inject_parse_syscall(const char *text, int32_t *nr)
{
	int64_t v;
	char w[24];
	size_t n = 0;

	while (*text == ' ')
		text++;
	if (strncmp(text, "running", 7) == 0 && (text[7] == '\n' || text[7] == '\0')) {
		*nr = -2;
		return 0;
	}
	while (text[n] && text[n] != ' ' && text[n] != '\n' && n < sizeof(w) - 1) {
		w[n] = text[n];
		n++;
	}
	w[n] = '\0';
	if (n == 0 || (text[n] != ' ' && text[n] != '\n' && text[n] != '\0'))
		return -EINVAL;
	if (xpc_parse_i64(w, -1, INT32_MAX, &v))
		return -EINVAL;
	*nr = (int32_t)v;
	return 0;
}

enum xp_agent_inject_thread_kind xp_agent_inject_classify(int32_t nr)
{
	switch (nr) {
	case -2:
		return XP_INJECT_THREAD_RUNNING;
	case -1:
		return XP_INJECT_THREAD_OTHER;
	/* restartable after a stop without a handler: -ERESTART* codes */
	case 0: /* read */
	case 1: /* write (full pipe) */
	case 2: /* open (FIFO) */
	case 7: /* poll */
	case 17: /* pread64 */
	case 19: /* readv */
	case 20: /* writev */
	case 23: /* select */
	case 34: /* pause */
	case 35: /* nanosleep */
	case 42: /* connect */
	case 43: /* accept */
	case 44: /* sendto */
	case 45: /* recvfrom */
	case 46: /* sendmsg */
	case 47: /* recvmsg */
	case 61: /* wait4 */
	case 70: /* msgrcv */
	case 73: /* flock */
	case 130: /* rt_sigsuspend */
	case 230: /* clock_nanosleep */
	case 247: /* waitid */
	case 257: /* openat (FIFO) */
	case 270: /* pselect6 */
	case 271: /* ppoll */
	case 288: /* accept4 */
	case 295: /* preadv */
	case 327: /* preadv2 */
		return XP_INJECT_THREAD_WAITING;
	/* EINTR after any stop (signal(7): "interfaces never restarted") */
	case 65: /* semop */
	case 128: /* rt_sigtimedwait */
	case 208: /* io_getevents */
	case 220: /* semtimedop */
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
	case 333: /* io_pgetevents */
	case 441: /* epoll_pwait2 */
		return XP_INJECT_THREAD_EINTR;
	case 202: /* futex */
	case 449: /* futex_waitv */
	case 455: /* futex_wait */
		return XP_INJECT_THREAD_FUTEX;
	default:
		return nr < 0 ? XP_INJECT_THREAD_OTHER : XP_INJECT_THREAD_SYSCALL;
	}
}

static bool ids_equal(uint32_t id, const uint32_t t[3])
{
	return id == t[0] && id == t[1] && id == t[2];
}

enum xp_agent_ptrace_verdict xp_agent_inject_ptrace_verdict(const struct xp_agent_ptrace_facts *f,
							    const char **reason, char *msg,
							    size_t size)
{
	bool cap = xp_cap_has(f->cap_eff, XP_CAP_SYS_PTRACE);

	*reason = "";
	msg[0] = '\0';
	if (f->tracer_pid) {
		*reason = "already_traced";
		snprintf(msg, size, "the target is already traced by pid %u (a debugger or tracer)",
			 f->tracer_pid);
		return XP_PTRACE_DENIED;
	}
	if (f->yama_scope >= 3) {
		*reason = "ptrace_scope";
		snprintf(msg, size,
			 "kernel.yama.ptrace_scope is %d: no process may use ptrace attach",
			 f->yama_scope);
		return XP_PTRACE_DENIED;
	}
	if ((!ids_equal(f->uid, f->tuid) || !ids_equal(f->gid, f->tgid)) && !cap) {
		*reason = "uid";
		snprintf(
			msg, size,
			"ptrace needs our uid %u and gid %u to equal the target's (uids %u/%u/%u, gids %u/%u/%u) or CAP_SYS_PTRACE, which we lack",
			f->uid, f->gid, f->tuid[0], f->tuid[1], f->tuid[2], f->tgid[0], f->tgid[1],
			f->tgid[2]);
		return XP_PTRACE_DENIED;
	}
	if (!f->target_dumpable && !cap) {
		*reason = "not_dumpable";
		snprintf(
			msg, size,
			"the target is not dumpable (setuid/setgid, file capabilities or prctl(PR_SET_DUMPABLE, 0)) and we lack CAP_SYS_PTRACE");
		return XP_PTRACE_DENIED;
	}
	if (f->yama_scope == 2 && !cap) {
		*reason = "capability";
		snprintf(
			msg, size,
			"kernel.yama.ptrace_scope is 2 (admin-only attach) and we lack CAP_SYS_PTRACE");
		return XP_PTRACE_DENIED;
	}
	if (f->yama_scope == 1 && !cap && !f->descendant) {
		*reason = "ptrace_scope";
		snprintf(
			msg, size,
			"kernel.yama.ptrace_scope is 1: only an ancestor of the target, a tracer it named with PR_SET_PTRACER, or CAP_SYS_PTRACE may attach");
		return XP_PTRACE_UNSURE;
	}
	return XP_PTRACE_ALLOWED;
}

/* ---- /proc readers ------------------------------------------------------- */

struct task_status {
	char state;
	uint32_t tracer_pid;
	uint32_t uid[3], gid[3];
	uint64_t sigblk, sigign, sigcgt;
	int seccomp; /* -1 unknown */
	bool shstk; /* x86_Thread_features has shstk: a user shadow stack is on */
	uint32_t groups[32]; /* supplementary groups (the first 32) */
	size_t ngroups;
	bool has_ids, has_sig;
};

static int words_u32(const char *s, uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char w[16];
		size_t k = 0;
		uint64_t x;

		while (*s == ' ' || *s == '\t')
			s++;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n' && k < sizeof(w) - 1)
			w[k++] = *s++;
		w[k] = '\0';
		if (xpc_parse_u64(w, 0, UINT32_MAX, &x))
			return -EINVAL;
		v[i] = (uint32_t)x;
	}
	return 0;
}

static int hex_field(const char *s, uint64_t *v)
{
	char w[24] = "0x";
	size_t k = 2;

	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && *s != '\n' && k < sizeof(w) - 1)
		w[k++] = *s++;
	w[k] = '\0';
	return xpc_parse_hex_u64(w, v) ? -EINVAL : 0;
}

static int parse_task_status(const char *text, struct task_status *st)
{
	const char *line = text;

	memset(st, 0, sizeof(*st));
	st->seccomp = -1;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		uint32_t v[3];

		if (strncmp(line, "State:", 6) == 0) {
			const char *p = line + 6;

			while (*p == ' ' || *p == '\t')
				p++;
			st->state = *p;
		} else if (strncmp(line, "TracerPid:", 10) == 0) {
			if (words_u32(line + 10, v, 1))
				return -EINVAL;
			st->tracer_pid = v[0];
		} else if (strncmp(line, "Uid:", 4) == 0) {
			if (words_u32(line + 4, st->uid, 3))
				return -EINVAL;
			st->has_ids = true;
		} else if (strncmp(line, "Gid:", 4) == 0) {
			if (words_u32(line + 4, st->gid, 3))
				return -EINVAL;
		} else if (strncmp(line, "SigBlk:", 7) == 0) {
			if (hex_field(line + 7, &st->sigblk))
				return -EINVAL;
			st->has_sig = true;
		} else if (strncmp(line, "SigIgn:", 7) == 0) {
			if (hex_field(line + 7, &st->sigign))
				return -EINVAL;
		} else if (strncmp(line, "SigCgt:", 7) == 0) {
			if (hex_field(line + 7, &st->sigcgt))
				return -EINVAL;
		} else if (strncmp(line, "x86_Thread_features:", 20) == 0) {
			const char *end = nl ? nl : line + strlen(line);
			const char *w = line + 20;

			for (; w < end; w++)
				if (strncmp(w, "shstk", 5) == 0 && (w[-1] == ' ' || w[-1] == '\t'))
					st->shstk = true;
		} else if (strncmp(line, "Groups:", 7) == 0) {
			const char *g = line + 7;

			while (st->ngroups < sizeof(st->groups) / sizeof(st->groups[0])) {
				char *end;
				unsigned long v;

				while (*g == ' ' || *g == '\t')
					g++;
				if (*g < '0' || *g > '9')
					break;
				v = strtoul(g, &end, 10);
				st->groups[st->ngroups++] = (uint32_t)v;
				g = end;
			}
		} else if (strncmp(line, "Seccomp:", 8) == 0) {
			if (words_u32(line + 8, v, 1))
				return -EINVAL;
			st->seccomp = (int)v[0];
		}
		line = nl ? nl + 1 : NULL;
	}
	return st->has_ids ? 0 : -EINVAL;
}

/* @tid 0: the process's status; @pid 0: ours. */
static int read_task_status(uint32_t pid, uint32_t tid, struct task_status *st)
{
	char path[80], *text;
	int rc;

	if (!pid)
		snprintf(path, sizeof(path), "/proc/self/status");
	else if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/status", pid);
	rc = xp_read_file(path, 1 << 16, &text, NULL);
	if (rc)
		return rc;
	rc = parse_task_status(text, st);
	free(text);
	return rc;
}

static int read_thread_syscall(uint32_t pid, uint32_t tid, int32_t *nr)
{
	char path[80], *text;
	int rc;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	rc = xp_read_file(path, 4096, &text, NULL);
	if (rc)
		return rc;
	rc = xp_agent_inject_parse_syscall(text, nr);
	free(text);
	return rc;
}

static int yama_scope(void)
{
	char *text;
	uint64_t v;
	size_t n;
	int rc = xp_read_file("/proc/sys/kernel/yama/ptrace_scope", 64, &text, &n);

	if (rc)
		return -1;
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	rc = xpc_parse_u64(text, 0, 3, &v);
	free(text);
	return rc ? 3 : (int)v; /* unreadable value: assume the strictest */
}

/* Whether @pid descends from us (Yama's relational scope). */
static bool descends_from_us(uint32_t pid)
{
	uint32_t self = (uint32_t)getpid();
	int depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		struct xp_proc_stat ps;

		if (xp_proc_stat_read(pid, 0, &ps))
			return false;
		if (ps.ppid == self)
			return true;
		pid = ps.ppid;
	}
	return false;
}

/* ---- the context ----------------------------------------------------------- */

struct cand {
	uint32_t tid;
	enum xp_agent_inject_thread_kind kind;
	int32_t nr;
	bool suspect; /* blocks a caught signal: may be inside its handler */
};

struct fns {
	uint64_t dlopen, dlsym, dlerror, errno_loc, start, last_error;
	uint64_t mmap, munmap;
	uint64_t sigreturn; /* libc's "mov $15, %rax; syscall" */
};

struct inj {
	/* set before the tracer thread starts, read-only there */
	const struct xp_target *t;
	pid_t pid;
	char path[PATH_MAX]; /* the Agent, canonical */
	bool mapped; /* an Agent is mapped: only call start */
	struct fns fn;
	struct xp_maps maps;
	uint64_t page; /* where the stub's page goes (a free gap) */
	uint64_t stop_ns, call_ns;
	struct cand *cands;
	size_t ncands;
	bool forced; /* opts.tid */
	/* the tracer thread's state for the thread in hand */
	pid_t tid;
	int memfd; /* /proc/<pid>/mem, for the stub's read-only page */
	bool seized;
	bool stopped; /* in a ptrace stop, registers readable */
	bool gone; /* the thread or process exited */
	bool stuck; /* would not stop: left for the kernel to detach */
	bool own_state; /* at the exit stop of our rt_sigreturn: its own registers */
	bool page_mapped; /* the stub's page is in the target */
	bool page_left; /* ... and stays: the thread left the park on its own */
	struct user_regs_struct saved;
	bool regs_saved;
	uint64_t sigmask;
	uint8_t *xstate;
	size_t xstate_len;
	bool has_xstate;
	struct user_fpregs_struct fpregs;
	bool has_fpregs;
	/* the scratch below the red zone, low to high: frame, vector image, block, strings */
	uint64_t frame_addr; /* the rt_sigframe (8 mod 16): rsp at each call's entry */
	uint64_t fp_addr;
	uint64_t block_addr;
	uint64_t str_path, str_sym, str_err;
	uint8_t *scratch_orig; /* the scratch's bytes before we wrote it */
	size_t scratch_len;
	bool scratch_dirty; /* written, not yet put back */
	struct xp_agent_inject_block block; /* as last read back */
	uint64_t t_interrupt;
	uint32_t signal_at; /* test builds: XPROBE_TEST_INJECT_SIGNAL_AT */
	int signal_sig, signal_count;
	/* results */
	struct xp_agent_inject_result *out;
	struct xp_error *err;
	int rc;
	char why[512]; /* a failure's words, for err (filled by the tracer thread) */
	int code; /* its contract code */
	const char *reason;
	char ptrace_reason[32]; /* check_ptrace's doubt, for a refused SEIZE */
	char ptrace_why[512];
};

static int fail(struct inj *x, int code, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record a failure of the tracer thread (the caller turns it into err). */
static int fail(struct inj *x, int code, const char *reason, const char *fmt, ...)
{
	va_list ap;

	if (x->code) /* the first failure is the one reported */
		return -x->code;
	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	x->code = code;
	x->reason = reason;
	return -code;
}

/*
 * The steps of the tracer thread: every ptrace request (tptrace) and every
 * look at the running stub (watch_stub).  Test builds, with
 * XPROBE_TEST_INJECT_SIGNAL_AT=STEP:SIG[:COUNT], send SIG (COUNT times)
 * to xprobe itself just before step number STEP: the kill-storm tests
 * stop us at each instant of an injection (thread stopped, call running,
 * parked, restoring).
 */
static void step(struct inj *x)
{
	x->out->steps++;
	if (x->signal_at && x->out->steps == x->signal_at)
		for (int i = 0; i < x->signal_count; i++)
			kill(getpid(), x->signal_sig);
}

static long tptrace(struct inj *x, int req, pid_t tid, void *addr, void *data)
{
	step(x);
	x->out->requests++;
	return ptrace((enum __ptrace_request)req, tid, addr, data);
}

/* ---- target memory ----------------------------------------------------------- */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

static int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
	struct iovec l = { (void *)buf, n }, r = { (void *)(uintptr_t)addr, n };
	ssize_t put = process_vm_writev(pid, &l, 1, &r, 1, 0);

	if (put < 0)
		return -errno;
	return (size_t)put == n ? 0 : -EFAULT;
}

/* ---- stops ------------------------------------------------------------------ */

#define SYSCALL_STOP (SIGTRAP | 0x80) /* PTRACE_O_TRACESYSGOOD */

/*
 * waitpid(@tid) polled until @deadline, sleeping 10 us, then longer up to
 * 200 us between looks: a stop usually comes within tens of microseconds,
 * and a tracer that yields in a loop would compete for the CPU with the
 * very thread it waits for.  Returns 0 with *status, -ETIMEDOUT, -errno.
 */
static int wait_tid(pid_t tid, uint64_t deadline, int *status)
{
	long ns = 10000;

	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);

		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (xpc_mono_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (ns < 200000)
			ns += ns / 2;
	}
}

static bool exited(struct inj *x, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		x->gone = true;
		x->seized = false;
		x->stopped = false;
		return true;
	}
	return false;
}

/*
 * Whether the signal-delivery-stop of @sig is a fault of the code the
 * thread runs (kernel-generated SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP:
 * si_code > 0), not a signal someone sent (si_code <= 0) or SIGCHLD.
 */
static bool is_fault(struct inj *x, int sig)
{
	siginfo_t si;

	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGTRAP)
		return false;
	if (tptrace(x, PTRACE_GETSIGINFO, x->tid, 0, &si) < 0)
		return true;
	return si.si_code > 0;
}

/*
 * Bring the seized thread to an interrupt stop (PTRACE_EVENT_STOP): the
 * stop the first call starts from and the one a timeout returns to.
 * A signal-delivery-stop met on the way is handed on (PTRACE_CONT with
 * the signal, delivered as it would have been) and the interrupt
 * re-requested, since any stop consumes a pending interrupt; a syscall
 * stop (a call was running under PTRACE_SYSCALL) goes on under
 * PTRACE_CONT.  @in_call: the thread runs an abandoned call, whose faults
 * are stops too (delivering them would crash or enter a handler on our
 * frames).
 */
static int acquire_stop(struct inj *x, uint64_t timeout_ns, bool in_call)
{
	uint64_t deadline = xpc_mono_ns() + timeout_ns;
	int status, rc, sig;

	if (tptrace(x, PTRACE_INTERRUPT, x->tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		rc = wait_tid(x->tid, deadline, &status);
		if (rc)
			return rc;
		if (exited(x, status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		if ((status >> 16) == PTRACE_EVENT_STOP ||
		    (in_call && (status >> 16) == 0 && is_fault(x, sig))) {
			x->stopped = true; /* a fault of the abandoned call: discarded later */
			return 0;
		}
		if ((status >> 16) || sig == SYSCALL_STOP)
			sig = 0;
		if (tptrace(x, PTRACE_CONT, x->tid, 0, (void *)(uintptr_t)sig) < 0 ||
		    tptrace(x, PTRACE_INTERRUPT, x->tid, 0, 0) < 0)
			return -errno;
	}
}

/* ---- save and restore ------------------------------------------------------ */

static int save_state(struct inj *x)
{
	struct iovec iov;

	if (tptrace(x, PTRACE_GETREGS, x->tid, 0, &x->saved) < 0)
		return -errno;
	x->regs_saved = true;
	if (tptrace(x, PTRACE_GETSIGMASK, x->tid, (void *)sizeof(x->sigmask), &x->sigmask) < 0)
		return -errno;
	if (!x->xstate) {
		x->xstate = calloc(1, XSTATE_MAX);
		if (!x->xstate)
			return -ENOMEM;
	}
	iov.iov_base = x->xstate;
	iov.iov_len = XSTATE_MAX;
	if (tptrace(x, PTRACE_GETREGSET, x->tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		x->xstate_len = iov.iov_len;
		x->has_xstate = true;
		return 0;
	}
	if (tptrace(x, PTRACE_GETFPREGS, x->tid, 0, &x->fpregs) < 0)
		return -errno;
	x->has_fpregs = true;
	return 0;
}

/* The block as the stub left it (best effort: zeroes when unreadable). */
static void read_block(struct inj *x)
{
	if (!x->block_addr || mem_read(x->pid, x->block_addr, &x->block, sizeof(x->block)))
		memset(&x->block, 0, sizeof(x->block));
}

/* errno, when a call was abandoned between the stub's save and its write-back. */
static int put_errno_back(struct inj *x)
{
	int32_t v;

	read_block(x);
	if (x->block.step < XP_STUB_STEP_ERRNO || x->block.step >= XP_STUB_STEP_DONE ||
	    !x->block.errno_addr)
		return 0;
	v = (int32_t)x->block.errno_value;
	return mem_write(x->pid, x->block.errno_addr, &v, sizeof(v));
}

/*
 * The fallback: put the thread back through ptrace, in any stop: errno,
 * the vector state, the registers as the frame would have (the syscall
 * made ready to run again, orig_rax = -1 so no stop kind restarts it a
 * second time).  Every step is tried; the first error is returned.
 */
static int restore_state(struct inj *x)
{
	int rc = put_errno_back(x);

	if (x->has_xstate) {
		struct iovec iov = { x->xstate, x->xstate_len };

		if (tptrace(x, PTRACE_SETREGSET, x->tid, (void *)NT_X86_XSTATE, &iov) < 0 && !rc)
			rc = -errno;
	} else if (x->has_fpregs) {
		if (tptrace(x, PTRACE_SETFPREGS, x->tid, 0, &x->fpregs) < 0 && !rc)
			rc = -errno;
	}
	if (x->regs_saved) {
		struct user_regs_struct r;

		xp_agent_inject_restart_regs(&x->saved, &r);
		r.orig_rax = (unsigned long long)-1;
		if (tptrace(x, PTRACE_SETREGS, x->tid, 0, &r) < 0 && !rc)
			rc = -errno;
		if (tptrace(x, PTRACE_SETSIGMASK, x->tid, (void *)sizeof(x->sigmask), &x->sigmask) <
			    0 &&
		    !rc)
			rc = -errno;
	}
	return rc;
}

/* Restore (unless the thread restored itself) and detach; account the stop. */
static int release(struct inj *x)
{
	int rc = 0;

	if (x->seized && x->stopped && !x->gone) {
		if (!x->own_state)
			rc = restore_state(x);
		/* the bytes below the red zone: promised to no one, put back anyway */
		if (x->scratch_dirty) {
			int e = mem_write(x->pid, x->frame_addr, x->scratch_orig, x->scratch_len);

			rc = rc ? rc : e;
		}
		if (tptrace(x, PTRACE_DETACH, x->tid, 0, 0) < 0 && !rc)
			rc = -errno;
		x->seized = false;
		x->stopped = false;
	}
	if (x->t_interrupt) {
		x->out->stopped_ns += xpc_mono_ns() - x->t_interrupt;
		x->t_interrupt = 0;
	}
	x->scratch_dirty = false;
	x->regs_saved = false;
	x->has_xstate = false;
	x->has_fpregs = false;
	x->own_state = false;
	x->block_addr = 0;
	return rc;
}

/* ---- the calls --------------------------------------------------------------- */

/* The registers of a call of @fn(@a..): the saved ones, pointed at @fn, its
 * return address the one at frame_addr. */
static struct user_regs_struct call_regs(const struct inj *x, uint64_t fn, const uint64_t a[6])
{
	struct user_regs_struct r = x->saved;

	r.rip = fn;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.rcx = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* no syscall restart of these registers */
	r.rsp = x->frame_addr; /* holds the return address: 8 mod 16, as after a call */
	r.eflags &= ~(EFLAGS_DF | EFLAGS_TF);
	return r;
}

/*
 * Run one call: the thread, in a stop, gets @r and runs under
 * PTRACE_SYSCALL until the entry stop of the rt_sigreturn at @ret_rip
 * with rsp frame + 8: the call is over, its results are in memory, the
 * thread has not restored itself yet.  On the way, the call's own
 * syscall stops go on, a signal is delivered (its handler runs on top of
 * the call, as on top of any library call), a fault is a failure at its
 * stop; a timeout abandons the call at an interrupt stop; an exit sets
 * x->gone.
 */
static int abandon_call(struct inj *x, const char *what);

static int run_call(struct inj *x, const char *what, const struct user_regs_struct *r,
		    uint64_t ret_rip)
{
	uint64_t t0 = xpc_mono_ns(), deadline = t0 + x->call_ns;
	struct user_regs_struct now;
	int status, rc, sig;

	if (tptrace(x, PTRACE_SETREGS, x->tid, 0, (void *)r) < 0 ||
	    tptrace(x, PTRACE_SYSCALL, x->tid, 0, 0) < 0)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
			    "ptrace could not start the remote call of %s: %s", what,
			    strerror(errno));
	x->stopped = false;
	x->own_state = false;
	for (;;) {
		rc = wait_tid(x->tid, deadline, &status);
		if (rc == -ETIMEDOUT)
			break;
		if (rc)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
				    "waiting for the remote call of %s: %s", what, strerror(-rc));
		if (exited(x, status))
			return fail(x, XPROBE_E_TARGET_EXITED, "exited",
				    "the target exited during the remote call of %s", what);
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		if (sig == SYSCALL_STOP && tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) == 0 &&
		    now.orig_rax == SYS_rt_sigreturn && now.rip == ret_rip &&
		    now.rsp == x->frame_addr + 8) {
			x->stopped = true;
			x->out->call_ns += xpc_mono_ns() - t0;
			return 0;
		}
		if (!(status >> 16) && sig != SYSCALL_STOP && is_fault(x, sig)) {
			x->stopped = true;
			x->out->call_ns += xpc_mono_ns() - t0;
			if (tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) < 0)
				now.rip = 0;
			return fail(
				x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_fault",
				"the remote call of %s faulted at rip 0x%llx (%s, discarded); the thread was restored",
				what, (unsigned long long)now.rip, strsignal(sig));
		}
		/* a syscall of the call or an event: go on; a signal: deliver it now */
		if ((status >> 16) || sig == SYSCALL_STOP)
			sig = 0;
		if (tptrace(x, PTRACE_SYSCALL, x->tid, 0, (void *)(uintptr_t)sig) < 0)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
				    "tptrace(x, SYSCALL) during %s: %s", what, strerror(errno));
	}
	x->out->call_ns += xpc_mono_ns() - t0;
	return abandon_call(x, what);
}

/*
 * A call that overran its timeout: take the thread back at a stop (it
 * still restores itself if we die now) and report where it was.
 */
static int abandon_call(struct inj *x, const char *what)
{
	struct user_regs_struct now;
	int rc;

	rc = acquire_stop(x, x->stop_ns, true);
	if (rc == -ESRCH)
		return fail(x, XPROBE_E_TARGET_EXITED, "exited",
			    "the target exited during the remote call of %s", what);
	if (rc) {
		x->stuck = true;
		return fail(
			x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "timeout",
			"the remote call of %s did not return within %llu ms and the thread did not stop again; it is left running the call, and restores itself when the call returns",
			what, (unsigned long long)(x->call_ns / 1000000));
	}
	if (tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) < 0)
		now.rip = 0;
	return fail(
		x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "timeout",
		"the remote call of %s did not return within %llu ms; it was abandoned at rip 0x%llx and the thread restored (a lock it took stays taken)",
		what, (unsigned long long)(x->call_ns / 1000000), (unsigned long long)now.rip);
}

/*
 * From the entry stop of our rt_sigreturn, let it run to its exit stop:
 * the thread then holds its own registers, vector state and mask again
 * (checked: rip and rsp as the frame says), and the next call can start.
 */
static int finish_sigreturn(struct inj *x, const char *what)
{
	uint64_t deadline = xpc_mono_ns() + x->stop_ns;
	struct user_regs_struct now, want;
	int status, rc;

	if (tptrace(x, PTRACE_SYSCALL, x->tid, 0, 0) < 0)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
			    "tptrace(x, SYSCALL) at the end of %s: %s", what, strerror(errno));
	x->stopped = false;
	for (;;) {
		rc = wait_tid(x->tid, deadline, &status);
		if (rc)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "restore",
				    "the thread did not come back from rt_sigreturn after %s: %s",
				    what, strerror(-rc));
		if (exited(x, status))
			return fail(x, XPROBE_E_TARGET_EXITED, "exited",
				    "the target exited after the remote call of %s", what);
		if (WIFSTOPPED(status))
			break;
	}
	x->stopped = true;
	xp_agent_inject_restart_regs(&x->saved, &want);
	if (WSTOPSIG(status) == SYSCALL_STOP && tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) == 0 &&
	    now.rip == want.rip && now.rsp == want.rsp) {
		x->own_state = true;
		return 0;
	}
	/* rt_sigreturn refused the frame (it then forces SIGSEGV): catch that */
	rc = acquire_stop(x, x->stop_ns, true);
	if (rc == -ESRCH)
		return fail(x, XPROBE_E_TARGET_EXITED, "exited",
			    "the target exited after the remote call of %s", what);
	return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "restore",
		    "rt_sigreturn after %s did not restore thread %d from its frame", what, x->tid);
}

/* dlerror()'s text in the target, read back; "" when it has nothing. */
static void remote_dlerror(struct inj *x, char *buf, size_t size);

/* A string at @p in the target, read back; "" when @p is 0 or unreadable. */
static void remote_string(struct inj *x, uint64_t p, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	if (!p)
		return;
	/* read in small steps: the string may end near the end of a mapping */
	for (i = 0; i + 1 < size; i += 64) {
		size_t n = size - 1 - i < 64 ? size - 1 - i : 64;

		if (mem_read(x->pid, p + i, buf + i, n)) {
			buf[i] = '\0';
			break;
		}
		buf[i + n] = '\0';
		if (memchr(buf + i, '\0', n))
			break;
	}
	buf[size - 1] = '\0';
}

static void remote_dlerror(struct inj *x, char *buf, size_t size)
{
	remote_string(x, x->block.step == XP_STUB_STEP_DONE ? x->block.dlerror_text : 0, buf,
		      size);
}

/* ---- one thread ------------------------------------------------------------- */

static const struct xp_map_entry *map_of(const struct xp_maps *m, uint64_t addr)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

/* libc, the dynamic loader and the old libpthread/libdl: code that holds the
 * locks dlopen takes. */
static bool libc_file(const char *path)
{
	const char *b = xp_path_base(path);

	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0 ||
	       strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-musl", 7) == 0 ||
	       strncmp(b, "libc.musl", 9) == 0 || strncmp(b, "libpthread", 10) == 0 ||
	       strncmp(b, "libdl", 5) == 0;
}

/* Whether @rip lies in a critical section the thread registered with rseq. */
static bool in_rseq_cs(struct inj *x, uint64_t rip)
{
	struct {
		uint64_t abi_pointer;
		uint32_t abi_size, signature, flags, pad;
	} conf;
	struct {
		uint32_t version, flags;
		uint64_t start_ip, post_commit_offset, abort_ip;
	} cs;
	uint64_t cs_ptr;

	if (tptrace(x, PTRACE_GET_RSEQ_CONFIGURATION, x->tid, (void *)sizeof(conf), &conf) <= 0 ||
	    !conf.abi_pointer)
		return false;
	if (mem_read(x->pid, conf.abi_pointer + 8, &cs_ptr, sizeof(cs_ptr)) || !cs_ptr)
		return false;
	if (mem_read(x->pid, cs_ptr, &cs, sizeof(cs)))
		return true; /* cannot tell: not this time */
	return rip >= cs.start_ip && rip - cs.start_ip < cs.post_commit_offset;
}

/* The vector image's length in the frame. */
static size_t fpstate_len(const struct inj *x)
{
	return x->has_xstate ? x->xstate_len + 4 : sizeof(x->fpregs);
}

/* Bytes of stack the scratch takes below the red zone and the slack. */
static size_t scratch_need(const struct inj *x)
{
	return strlen(x->path) + 1 + sizeof(START_SYMBOL) + sizeof(LAST_ERROR_SYMBOL) + 16 +
	       sizeof(struct xp_agent_inject_block) + 16 + fpstate_len(x) +
	       XP_SIGFRAME_FPSTATE_ALIGN + XP_SIGFRAME_SIZE + 32;
}

enum fit { FIT = 0, BUSY, UNFIT };

/*
 * Judge the stopped thread: 64-bit code, no shadow stack, the stack must
 * hold the scratch and the calls, a thread not in a syscall must not be
 * inside libc or an rseq section.
 */
static enum fit judge(struct inj *x, enum xp_agent_inject_thread_kind *kind, int32_t *nr)
{
	const struct user_regs_struct *r = &x->saved;
	const struct xp_map_entry *m;
	struct task_status st;
	int64_t ax = (int64_t)r->rax;
	uint64_t scratch = RED_ZONE + STACK_SLACK + scratch_need(x);

	if (r->cs != USER_CS_64) {
		fail(x, XPROBE_E_UNSUPPORTED_CUDA_VERSION, "architecture",
		     "thread %d runs 32-bit code (cs 0x%llx); online injection needs Linux x86_64 code",
		     x->tid, (unsigned long long)r->cs);
		return UNFIT;
	}
	if (read_task_status((uint32_t)x->pid, (uint32_t)x->tid, &st) == 0 && st.shstk)
		return UNFIT;
	/* where it stands: an interrupted syscall shows a restart code */
	if ((int64_t)r->orig_rax >= 0 &&
	    (ax == -ERESTARTSYS_ || ax == -ERESTARTNOINTR_ || ax == -ERESTARTNOHAND_ ||
	     ax == -ERESTART_RESTARTBLOCK_ || ax == -EINTR)) {
		*nr = (int32_t)r->orig_rax;
		*kind = xp_agent_inject_classify(*nr);
	} else {
		*nr = -1;
		*kind = XP_INJECT_THREAD_RUNNING;
		m = map_of(&x->maps, r->rip);
		if (m && xp_map_is_file(m) && libc_file(m->path))
			return BUSY;
		if (in_rseq_cs(x, r->rip))
			return BUSY;
	}
	m = map_of(&x->maps, r->rsp);
	if (!m || m->perms[0] != 'r' || m->perms[1] != 'w')
		return UNFIT;
	if (m->path && strcmp(m->path, "[stack]") == 0) {
		/* grows on demand; the scratch itself must lie in it */
		if (r->rsp - m->start < scratch + 64)
			return UNFIT;
	} else if ((m->path && strncmp(m->path, "[anon:", 6) != 0) ||
		   r->rsp - m->start < scratch + STACK_ROOM_MIN) {
		return UNFIT; /* a file, the heap (an alternate stack?), or too little room */
	}
	return FIT;
}

/*
 * Lay out and write the scratch below the red zone, low to high: the
 * rt_sigframe (its first word the return address of the calls into libc:
 * the sigreturn gadget), the vector image, the call block, the strings.
 */
static int write_scratch(struct inj *x)
{
	size_t plen = strlen(x->path) + 1, slen = sizeof(START_SYMBOL),
	       elen = sizeof(LAST_ERROR_SYMBOL), len;
	uint64_t top = x->saved.rsp - RED_ZONE - STACK_SLACK;
	struct xp_agent_sigframe_in in = { 0 };
	struct xp_agent_inject_block *b = &x->block;
	uint8_t *buf;
	int rc;

	x->str_path = (top - plen - slen - elen) & ~15ull;
	x->str_sym = x->str_path + plen;
	x->str_err = x->str_sym + slen;
	x->block_addr = (x->str_path - sizeof(*b)) & ~15ull;
	x->fp_addr = (x->block_addr - fpstate_len(x)) & ~(uint64_t)(XP_SIGFRAME_FPSTATE_ALIGN - 1);
	x->frame_addr = ((x->fp_addr - XP_SIGFRAME_SIZE) & ~15ull) - 8;
	len = (size_t)(top - x->frame_addr);
	free(x->scratch_orig);
	x->scratch_orig = malloc(len);
	buf = calloc(1, len);
	if (!buf || !x->scratch_orig) {
		free(buf);
		return -ENOMEM;
	}
	x->scratch_len = len;
	x->out->scratch_bytes = len;
	rc = mem_read(x->pid, x->frame_addr, x->scratch_orig, len);
	if (rc)
		goto out;
	in.regs = x->saved;
	in.xstate = x->has_xstate ? x->xstate : (const uint8_t *)&x->fpregs;
	in.xstate_len = x->has_xstate ? x->xstate_len : sizeof(x->fpregs);
	in.xsave = x->has_xstate;
	in.sigmask = x->sigmask;
	in.frame_addr = x->frame_addr;
	in.fpstate_addr = x->fp_addr;
	rc = xp_agent_inject_sigframe(&in, buf, buf + (x->fp_addr - x->frame_addr));
	if (rc)
		goto out;
	memcpy(buf, &x->fn.sigreturn, sizeof(x->fn.sigreturn)); /* pretcode */
	memset(b, 0, sizeof(*b));
	b->errno_location = x->fn.errno_loc;
	b->dlopen = x->mapped ? 0 : x->fn.dlopen;
	b->dlsym = x->fn.dlsym;
	b->dlerror = x->fn.dlerror;
	b->start = x->mapped ? x->fn.start : 0;
	b->path = x->str_path;
	b->symbol = x->str_sym;
	b->flags = RTLD_NOW_ | RTLD_NODELETE_;
	b->park_sec = 0;
	b->park_nsec = PARK_NS;
	b->park_rounds = PARK_ROUNDS;
	b->last_error = x->mapped ? x->fn.last_error : 0;
	b->last_error_symbol = x->str_err;
	memcpy(buf + (x->block_addr - x->frame_addr), b, sizeof(*b));
	memcpy(buf + (x->str_path - x->frame_addr), x->path, plen);
	memcpy(buf + (x->str_sym - x->frame_addr), START_SYMBOL, slen);
	memcpy(buf + (x->str_err - x->frame_addr), LAST_ERROR_SYMBOL, elen);
	x->scratch_dirty = true; /* a partial write is put back too */
	rc = mem_write(x->pid, x->frame_addr, buf, len);
out:
	free(buf);
	return rc;
}

/*
 * A call into libc (mmap, munmap) that returns to the sigreturn gadget,
 * then its rt_sigreturn: the thread ends it holding its own state.
 */
static int libc_call(struct inj *x, const char *what, uint64_t fn, const uint64_t a[6])
{
	struct user_regs_struct r = call_regs(x, fn, a);
	int rc;

	/* the pretcode slot: the stub's own calls write their return addresses there */
	rc = mem_write(x->pid, x->frame_addr, &x->fn.sigreturn, sizeof(x->fn.sigreturn));
	if (rc)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "target_memory",
			    "writing the return address of %s on thread %d's stack: %s", what,
			    x->tid, strerror(-rc));
	x->out->remote_calls++;
	rc = run_call(x, what, &r, x->fn.sigreturn + XP_SIGRETURN_GADGET_LEN);
	if (rc)
		return rc;
	return finish_sigreturn(x, what);
}

/* Whether the target maps exactly our page, r-x, anonymous. */
static bool page_is_ours(struct inj *x)
{
	struct xp_maps maps = { 0 };
	struct xp_error e = { 0 };
	const struct xp_map_entry *m;
	bool ok = false;

	if (xp_maps_read(x->t, &maps, &e)) {
		xp_error_clear(&e);
		return false;
	}
	m = map_of(&maps, x->page);
	if (m && m->start == x->page && m->end == x->page + PAGE_BYTES && !m->inode &&
	    strncmp(m->perms, "r-x", 3) == 0)
		ok = true;
	xp_maps_free(&maps);
	return ok;
}

/* Map the stub's page and copy the stub into it. */
static int map_stub(struct inj *x)
{
	const uint64_t a[6] = { x->page,
				PAGE_BYTES,
				PROT_READ | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE_,
				(uint64_t)-1,
				0 };
	int rc;

	rc = libc_call(x, "mmap", x->fn.mmap, a);
	if (rc)
		return rc;
	if (!page_is_ours(x))
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "target_memory",
			    "the target could not map a page for the call at 0x%llx",
			    (unsigned long long)x->page);
	x->page_mapped = true;
	if (pwrite(x->memfd, xp_agent_inject_stub_code, xp_agent_inject_stub_len, (off_t)x->page) !=
	    (ssize_t)xp_agent_inject_stub_len)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "target_memory",
			    "writing the call's code into the target (/proc/%d/mem): %s", x->pid,
			    strerror(errno));
	return 0;
}

/*
 * Watch the stub run under PTRACE_CONT (dlopen's own syscalls make no
 * stops) until its block says DONE: it then parks.  Signals on the way
 * are delivered, a fault fails the call, a timeout abandons it.
 */
static int watch_stub(struct inj *x, const char *what)
{
	uint64_t t0 = xpc_mono_ns(), deadline = t0 + x->call_ns;
	struct user_regs_struct now;
	long ns = 10000;
	int status, sig;

	for (;;) {
		pid_t w = waitpid(x->tid, &status, __WALL | WNOHANG);

		if (w == x->tid) {
			if (exited(x, status))
				return fail(x, XPROBE_E_TARGET_EXITED, "exited",
					    "the target exited during the remote call of %s", what);
			if (!WIFSTOPPED(status))
				continue;
			sig = WSTOPSIG(status);
			if (!(status >> 16) && is_fault(x, sig)) {
				x->stopped = true;
				x->out->call_ns += xpc_mono_ns() - t0;
				if (tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) < 0)
					now.rip = 0;
				return fail(
					x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_fault",
					"the remote call of %s faulted at rip 0x%llx (%s, discarded); the thread was restored",
					what, (unsigned long long)now.rip, strsignal(sig));
			}
			if (tptrace(x, PTRACE_CONT, x->tid, 0,
				    (void *)(uintptr_t)((status >> 16) ? 0 : sig)) < 0)
				return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
					    "ptrace(CONT) during %s: %s", what, strerror(errno));
			continue;
		}
		if (w < 0 && errno != EINTR)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
				    "waiting for the remote call of %s: %s", what, strerror(errno));
		step(x);
		read_block(x);
		if (x->block.step == XP_STUB_STEP_DONE)
			break;
		if (xpc_mono_ns() >= deadline) {
			x->out->call_ns += xpc_mono_ns() - t0;
			return abandon_call(x, what);
		}
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (ns < 200000)
			ns += ns / 2;
	}
	x->out->call_ns += xpc_mono_ns() - t0;
	return 0;
}

/*
 * Take the thread from the park: an interrupt stop, then (in the stub's
 * page) straight to its rt_sigreturn.  A handler running on top of the
 * park is let finish first.  1: the park ran out before we came (we were
 * held up for PARK_ROUNDS ms): the thread restored itself and runs on, so
 * its stack is its own again and the page stays.
 */
static int unpark(struct inj *x, const char *what)
{
	struct user_regs_struct now, r;
	int rc, tries;

	for (tries = 0;; tries++) {
		rc = acquire_stop(x, x->stop_ns, true);
		if (rc == -ESRCH)
			return fail(x, XPROBE_E_TARGET_EXITED, "exited",
				    "the target exited after the remote call of %s", what);
		if (rc) {
			x->stuck = true;
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "thread_stop",
				    "thread %d did not stop after the remote call of %s: %s",
				    x->tid, what, strerror(-rc));
		}
		if (tptrace(x, PTRACE_GETREGS, x->tid, 0, &now) < 0)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "registers",
				    "ptrace(GETREGS) after %s: %s", what, strerror(errno));
		if (now.rip >= x->page && now.rip < x->page + xp_agent_inject_stub_len)
			break;
		if (now.rsp >= x->frame_addr || tries >= 20) {
			x->own_state = true; /* restored: its registers and its stack */
			x->scratch_dirty = false;
			x->page_left = true;
			return 1;
		}
		/* a handler on top of the park: let it return first */
		if (tptrace(x, PTRACE_CONT, x->tid, 0, 0) < 0)
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
				    "ptrace(CONT) after %s: %s", what, strerror(errno));
		x->stopped = false;
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	r = now;
	r.rip = x->page + xp_agent_inject_stub_park_end_off;
	r.rbx = x->block_addr;
	r.rsp = x->frame_addr + 8;
	r.orig_rax = (unsigned long long)-1; /* a nanosleep of the park is not restarted */
	rc = run_call(x, what, &r, x->page + xp_agent_inject_stub_sigreturn_off);
	if (rc)
		return rc;
	return finish_sigreturn(x, what);
}

/* The stub: dlopen, dlsym, xprobe_agent_start (or only the start). */
static int run_stub(struct inj *x)
{
	const char *what = x->mapped ? START_SYMBOL : "dlopen";
	struct user_regs_struct r = x->saved;
	int rc;

	r.rip = x->page;
	r.rbx = x->block_addr;
	r.rsp = x->frame_addr + 8;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;
	r.eflags &= ~(EFLAGS_DF | EFLAGS_TF);
	if (tptrace(x, PTRACE_SETREGS, x->tid, 0, &r) < 0 ||
	    tptrace(x, PTRACE_CONT, x->tid, 0, 0) < 0)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
			    "ptrace could not start the remote call of %s: %s", what,
			    strerror(errno));
	x->stopped = false;
	x->own_state = false;
	x->out->remote_calls++;
	rc = watch_stub(x, what);
	read_block(x);
	if (rc)
		return rc;
	rc = unpark(x, what);
	return rc < 0 ? rc : 0;
}

/* What the stub's block says, as results or a failure. */
static int stub_results(struct inj *x)
{
	const struct xp_agent_inject_block *b = &x->block;
	char dlerr[DLERROR_MAX];

	if (b->step != XP_STUB_STEP_DONE)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "remote_call",
			    "the call in thread %d ended without finishing (step %llu)", x->tid,
			    (unsigned long long)b->step);
	if (!x->mapped) {
		if (!b->handle) {
			remote_dlerror(x, dlerr, sizeof(dlerr));
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "dlopen",
				    "dlopen(\"%s\") failed in the target: %s", x->path,
				    dlerr[0] ? dlerr : "no reason given");
		}
		x->out->handle = b->handle;
		x->out->injected = true;
		if (!b->start) {
			remote_dlerror(x, dlerr, sizeof(dlerr));
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "dlsym",
				    "%s was loaded but exports no " START_SYMBOL ": %s", x->path,
				    dlerr[0] ? dlerr : "no reason given");
		}
	}
	x->fn.start = b->start;
	x->out->start_address = b->start;
	x->out->start_status = (int32_t)b->status;
	if (b->status)
		remote_string(x, b->last_error_text, x->out->start_error,
			      sizeof(x->out->start_error));
	return 0;
}

/*
 * The last call: munmap of the stub's page, from whatever stop the thread
 * is in (after the stub, a fault or an abandoned call), ending in the
 * frame's rt_sigreturn like every call.
 */
static int unmap_stub(struct inj *x)
{
	const uint64_t a[6] = { x->page, PAGE_BYTES, 0, 0, 0, 0 };
	int rc;

	if (!x->page_mapped || x->page_left || !x->stopped || x->gone)
		return 0;
	put_errno_back(x); /* a call abandoned inside the stub */
	rc = libc_call(x, "munmap", x->fn.munmap, a);
	if (rc == 0)
		x->page_mapped = false;
	return rc;
}

/* The calls, on a fit stopped thread. */
static int run_calls(struct inj *x)
{
	int rc;

	rc = write_scratch(x);
	if (rc)
		return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "target_memory",
			    "writing the call's frame onto thread %d's stack: %s", x->tid,
			    strerror(-rc));
	rc = map_stub(x);
	if (rc)
		return rc;
	rc = run_stub(x);
	if (rc)
		return rc;
	return stub_results(x);
}

/* Seize, stop, judge, call, restore, detach: one thread. 0, 1 (try another), <0. */
static int try_thread(struct inj *x, const struct cand *c)
{
	enum xp_agent_inject_thread_kind kind = c->kind;
	int32_t nr = c->nr;
	unsigned busy;
	int rc, rrc;

	x->tid = (pid_t)c->tid;
	x->gone = false;
	for (busy = 0;; busy++) {
		if (tptrace(x, PTRACE_SEIZE, x->tid, 0, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) <
		    0) {
			if (errno == ESRCH)
				return 1; /* the thread ended */
			return fail(x, XPROBE_E_PERMISSION_DENIED,
				    x->ptrace_reason[0] ? x->ptrace_reason : "kernel",
				    "tptrace(x, PTRACE_SEIZE) of thread %d refused (%s): %s",
				    x->tid, strerror(errno),
				    x->ptrace_why[0] ? x->ptrace_why :
						       "by the kernel or a security module");
		}
		x->seized = true;
		x->t_interrupt = xpc_mono_ns();
		rc = acquire_stop(x, x->stop_ns, false);
		if (rc == -ESRCH) {
			release(x);
			return 1;
		}
		if (rc) {
			/* never stopped: leave it to the kernel (exit_ptrace) */
			x->stuck = true;
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "thread_stop",
				    "thread %d did not stop within %llu ms: %s", x->tid,
				    (unsigned long long)(x->stop_ns / 1000000), strerror(-rc));
		}
		x->out->threads_tried++;
		rc = save_state(x);
		if (rc) {
			release(x);
			return fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "registers",
				    "reading thread %d's state: %s", x->tid, strerror(-rc));
		}
		switch (judge(x, &kind, &nr)) {
		case FIT:
			goto fit;
		case UNFIT:
			release(x);
			return x->code ? -x->code : 1;
		case BUSY:
			release(x);
			if (busy + 1 >= BUSY_RETRIES)
				return 1;
			nanosleep(&(struct timespec){ 0, BUSY_RETRY_NS }, NULL);
			break;
		}
	}
fit:
	x->out->tid = (uint32_t)x->tid;
	x->out->thread_kind = kind;
	x->out->syscall_nr = nr;
	rc = run_calls(x);
	if (x->gone || x->stuck)
		return rc ? rc : -ESRCH;
	rrc = unmap_stub(x);
	if (x->gone || x->stuck)
		return rc ? rc : rrc;
	if (rrc && !rc)
		rc = rrc;
	rrc = release(x);
	if (rrc && !rc)
		rc = fail(x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "restore", "restoring thread %d: %s",
			  x->tid, strerror(-rrc));
	return rc;
}

static void *tracer_main(void *arg)
{
	struct inj *x = arg;
	char path[64];
	size_t i;
	int rc = 1;

	/* the waits sleep 10 us and up: not 50 us more of the default timer slack */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	snprintf(path, sizeof(path), "/proc/%d/mem", x->pid);
	x->memfd = open(path, O_RDWR | O_CLOEXEC);
	for (i = 0; i < x->ncands && i < MAX_TRIES && rc == 1; i++)
		rc = try_thread(x, &x->cands[i]);
	if (rc == 1)
		rc = fail(
			x, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "no_thread",
			"no thread of the target was fit to run the call (each had no stack room, a shadow stack, or stayed inside libc)");
	x->rc = rc;
	if (x->t_interrupt) /* left stuck */
		x->out->stopped_ns += xpc_mono_ns() - x->t_interrupt;
	if (x->memfd >= 0)
		close(x->memfd);
	free(x->xstate);
	x->xstate = NULL;
	free(x->scratch_orig);
	x->scratch_orig = NULL;
	/* a thread that never stopped is detached by the kernel as we exit */
	return NULL;
}

/* Blocked while a thread of the target is in our hands (see the top). */
static const int deferred_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };

/* ---- checks ---------------------------------------------------------------- */

static int denied(struct inj *x, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int denied(struct inj *x, const char *reason, const char *fmt, ...)
{
	char msg[XP_ERR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	xp_error_detail_str(x->err, "reason", reason);
	return xp_error_set(x->err, XPROBE_E_PERMISSION_DENIED, false, "%s", msg);
}

static bool owner_ok(uid_t o, const struct task_status *ts)
{
	return o == 0 || o == ts->uid[0] || o == ts->uid[1];
}

/*
 * Whether the target's user may do @bit (4 read, 1 search) on a file
 * of @st, by the mode's owner, group and other bits as the kernel judges
 * them for the target's effective ids and supplementary groups (root may
 * always; ACLs and LSMs are left to dlopen's own answer).
 */
static bool target_may(const struct stat *st, const struct task_status *ts, unsigned bit)
{
	uint32_t uid = ts->uid[1], gid = ts->gid[1];
	bool in_group = st->st_gid == gid;
	size_t i;

	if (uid == 0)
		return !(bit == 1 && !S_ISDIR(st->st_mode) && !(st->st_mode & 0111));
	for (i = 0; i < ts->ngroups && !in_group; i++)
		in_group = st->st_gid == ts->groups[i];
	if (st->st_uid == uid)
		return (st->st_mode >> 6) & bit;
	if (in_group)
		return (st->st_mode >> 3) & bit;
	return st->st_mode & bit;
}

static int agent_unreachable(struct inj *x, const struct task_status *ts, const char *path,
			     const char *what, const struct stat *st)
{
	xp_error_detail_str(x->err, "path", path);
	xp_error_hint(x->err,
		      "put the Agent where uid %u can read it (a 0755 directory, a 0644 or 0755 file), or name one with --agent",
		      (unsigned)ts->uid[1]);
	return denied(x, "agent_unreadable",
		      "the target's user (uid %u, gid %u) %s %s (uid %u, gid %u, mode %04o): its dlopen would fail",
		      (unsigned)ts->uid[1], (unsigned)ts->gid[1], what, path, (unsigned)st->st_uid,
		      (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
}

/*
 * The Agent file: canonical, regular, an x86_64 ELF shared object that
 * exports xprobe_agent_start, owned by root or the target's uid, not
 * writable by group or others, in directories that pass the same test
 * (a sticky directory may be writable by others, as /tmp is).
 */
static int check_agent(struct inj *x, const char *agent_path, const struct task_status *ts,
		       struct stat *st)
{
	char dir[PATH_MAX];
	struct xp_elf elf = { .fd = -1 };
	uint64_t v, sz;
	struct stat ds;
	size_t i;
	int rc;

	if (!agent_path || !agent_path[0]) {
		xp_error_hint(x->err,
			      "name the Agent with --agent PATH or XPROBE_CUPTI_AGENT_PATH");
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "no Agent library to inject");
	}
	if (!realpath(agent_path, x->path)) {
		rc = errno;
		xp_error_detail_str(x->err, "agent_path", agent_path);
		xp_error_hint(x->err, "build libxprobe.so or name it with --agent PATH");
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "the Agent %s cannot be used: %s", agent_path, strerror(rc));
	}
	xp_error_detail_str(x->err, "agent_path", x->path);
	if (lstat(x->path, st) < 0)
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "the Agent %s cannot be used: %s", x->path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return denied(x, "agent_untrusted", "the Agent %s is not a regular file", x->path);
	if (!owner_ok(st->st_uid, ts))
		return denied(
			x, "agent_untrusted",
			"refused to make the target execute %s: it is owned by uid %u, neither root nor the target's uid %u",
			x->path, (unsigned)st->st_uid, ts->uid[1]);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return denied(
			x, "agent_untrusted",
			"refused to make the target execute %s: it is writable by group or others (mode %04o)",
			x->path, (unsigned)(st->st_mode & 07777));
	for (i = strlen(x->path); i > 0; i--) {
		if (x->path[i - 1] != '/')
			continue;
		if (i == 1) {
			memcpy(dir, "/", 2);
		} else {
			memcpy(dir, x->path, i - 1);
			dir[i - 1] = '\0';
		}
		if (lstat(dir, &ds) < 0)
			return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
					    "the Agent's directory %s: %s", dir, strerror(errno));
		if (!owner_ok(ds.st_uid, ts) ||
		    ((ds.st_mode & (S_IWGRP | S_IWOTH)) && !(ds.st_mode & S_ISVTX)))
			return denied(
				x, "agent_untrusted",
				"refused to make the target execute %s: directory %s (uid %u, mode %04o) lets another user replace it",
				x->path, dir, (unsigned)ds.st_uid, (unsigned)(ds.st_mode & 07777));
		if (!target_may(&ds, ts, 1)) /* search */
			return agent_unreachable(x, ts, dir, "cannot search the directory", &ds);
	}
	if (!target_may(st, ts, 4)) /* read */
		return agent_unreachable(x, ts, x->path, "cannot read", st);
	{
		struct statvfs vfs;

		if (statvfs(x->path, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
			xp_error_hint(x->err, "put libxprobe.so on a filesystem mounted without noexec");
			return xp_error_set(
				x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				"the Agent %s lies on a filesystem mounted noexec: the target could not map it executable",
				x->path);
		}
	}
	rc = xp_elf_open(x->path, &elf);
	if (rc)
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "the Agent %s is not a readable ELF file: %s", x->path,
				    strerror(rc == -ENOEXEC ? ENOEXEC : -rc));
	if (elf.elf_class != ELFCLASS64 || elf.e_machine != EM_X86_64 || elf.e_type != ET_DYN) {
		xp_elf_close(&elf);
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "the Agent %s is not an x86_64 shared object", x->path);
	}
	rc = xp_elf_lookup_any(&elf, START_SYMBOL, &v, &sz);
	xp_elf_close(&elf);
	if (rc) {
		xp_error_hint(x->err,
			      "use the libxprobe.so of this build (build/lib/libxprobe.so)");
		return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
				    "%s exports no " START_SYMBOL ": it is not an xprobe Agent",
				    x->path);
	}
	return 0;
}

/*
 * The Agent's runtime directory in the target, judged as the Agent will
 * judge it (lib/agent/server.c): absent, or a directory (not a link) of
 * the target's effective uid with mode exactly 0700.  Refused here,
 * before anything stops: loaded, the Agent would only refuse to serve.
 */
static int check_runtime_dir(struct inj *x, const struct task_status *ts)
{
	char dir[64], why[160];
	struct xp_target_fs fs;
	struct stat st;
	int rc, e;

	snprintf(dir, sizeof(dir), XPROBE_AGENT_DIR_FMT, (unsigned)ts->uid[1]);
	rc = xp_target_fs_open(x->t, &fs, x->err);
	if (rc)
		return rc;
	e = fs.same_root ? lstat(dir, &st) : fstatat(fs.root_fd, dir + 1, &st, AT_SYMLINK_NOFOLLOW);
	e = e < 0 ? errno : 0;
	xp_target_fs_close(&fs);
	if (e) /* absent (the Agent creates it), or not ours to examine: it decides */
		return 0;
	why[0] = '\0';
	if (S_ISLNK(st.st_mode))
		snprintf(why, sizeof(why), "is a symbolic link, not a directory");
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, sizeof(why), "exists and is not a directory");
	else if (st.st_uid != ts->uid[1])
		snprintf(why, sizeof(why), "is owned by uid %u, not by the target's uid %u",
			 (unsigned)st.st_uid, (unsigned)ts->uid[1]);
	else if ((st.st_mode & 07777) != 0700)
		snprintf(why, sizeof(why), "has mode 0%o, not 0700", (unsigned)(st.st_mode & 07777));
	if (!why[0])
		return 0;
	xp_error_detail_str(x->err, "runtime_directory", dir);
	xp_error_hint(x->err,
		      "remove %s in the target's root; its Agent creates it, 0700, for its own uid",
		      dir);
	return denied(x, "runtime_directory",
		      "the Agent would refuse to serve in the target: its runtime directory %s %s",
		      dir, why);
}

/* A function's runtime address in the target, from a mapped file. */
static int runtime_addr(struct xp_elf *elf, const struct xp_maps *maps,
			const struct xp_map_entry *file, const char *name, uint64_t *addr)
{
	struct xp_sym_matches ms = { 0 };
	const struct xp_map_entry *m;
	uint64_t off;
	int rc;

	*addr = 0;
	rc = xp_elf_lookup(elf, name, &ms);
	if (rc || ms.n != 1 || xp_elf_va_to_offset(elf, ms.v[0].value, &off)) {
		xp_sym_matches_free(&ms);
		return rc ? rc : -ENOENT;
	}
	xp_sym_matches_free(&ms);
	m = xp_maps_find_offset(maps, file, off);
	if (!m || !xp_map_is_exec(m))
		return -ENOENT;
	*addr = m->start + (off - m->offset);
	return 0;
}

static bool agent_file(const struct xp_map_entry *m, const struct stat *st, const char *path)
{
	const char *b;

	if (!xp_map_is_file(m))
		return false;
	if (m->inode == (uint64_t)st->st_ino && m->dev_major == major(st->st_dev) &&
	    m->dev_minor == minor(st->st_dev))
		return true;
	if (strcmp(m->path, path) == 0)
		return true;
	b = xp_path_base(m->path);
	return strncmp(b, "libxprobe", 9) == 0 && strstr(b, ".so");
}

/*
 * libc's sigreturn trampoline (__restore_rt: "mov $15, %rax; syscall"),
 * found by its bytes in the file's executable segments and checked in
 * the target's memory (the file on disk may have been replaced).
 */
static void find_sigreturn(struct inj *x, struct xp_elf *elf, const struct xp_map_entry *f)
{
	size_t size = 0, i;
	const char *raw = elf_rawfile(elf->elf, &size);

	if (!raw)
		return;
	for (i = 0; i < elf->phnum; i++) {
		const GElf_Phdr *p = &elf->phdrs[i];
		const char *seg, *hit;
		const struct xp_map_entry *m;
		uint8_t mem[XP_SIGRETURN_GADGET_LEN];
		uint64_t off, addr;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || p->p_offset > size ||
		    p->p_filesz > size - p->p_offset)
			continue;
		seg = raw + p->p_offset;
		hit = memmem(seg, p->p_filesz, XP_SIGRETURN_GADGET, XP_SIGRETURN_GADGET_LEN);
		if (!hit)
			continue;
		off = p->p_offset + (uint64_t)(hit - seg);
		m = xp_maps_find_offset(&x->maps, f, off);
		if (!m || !xp_map_is_exec(m))
			continue;
		addr = m->start + (off - m->offset);
		if (mem_read(x->pid, addr, mem, sizeof(mem)) == 0 &&
		    memcmp(mem, XP_SIGRETURN_GADGET, sizeof(mem)) == 0) {
			x->fn.sigreturn = addr;
			return;
		}
	}
}

/*
 * A page-aligned address in the middle of the largest free gap between
 * PAGE_LO and PAGE_HI: far from the heap's growth, the stack's and the
 * mappings the kernel places next.  0 when there is none.
 */
static uint64_t free_page(const struct xp_maps *m)
{
	uint64_t prev = PAGE_LO, best = 0, best_len = 0;
	size_t i;

	for (i = 0; i <= m->n; i++) {
		uint64_t start = i < m->n ? m->v[i].start : PAGE_HI;
		uint64_t end = i < m->n ? m->v[i].end : PAGE_HI;

		if (start > PAGE_HI)
			start = PAGE_HI;
		if (start > prev && start - prev > best_len) {
			best_len = start - prev;
			best = prev;
		}
		if (end > prev)
			prev = end;
		if (prev >= PAGE_HI)
			break;
	}
	if (best_len < 2 * PAGE_BYTES)
		return 0;
	return (best + best_len / 2) & ~(PAGE_BYTES - 1);
}

/*
 * The functions: dlopen/dlsym/dlerror/__errno_location from the first
 * mapped C library (or libdl) that has them, or __libc_dlopen_mode where
 * dlopen is not in libc (glibc < 2.34 without libdl mapped); an Agent
 * already mapped gives xprobe_agent_start.
 */
static int resolve_fns(struct inj *x, const struct stat *agent)
{
	struct xp_target_fs fs;
	size_t *idx = NULL, i;
	ssize_t nf;
	int rc;

	rc = xp_target_fs_open(x->t, &fs, x->err);
	if (rc)
		return rc;
	nf = xp_maps_files(&x->maps, &idx);
	if (nf < 0) {
		xp_target_fs_close(&fs);
		return xp_error_set(x->err, XPROBE_E_INTERNAL, false, "out of memory");
	}
	for (i = 0; i < (size_t)nf; i++) {
		const struct xp_map_entry *f = &x->maps.v[idx[i]];
		bool is_libc = libc_file(f->path), is_agent = agent_file(f, agent, x->path);
		struct xp_elf elf = { .fd = -1 };
		char *access = NULL;
		uint64_t a;

		if (!is_libc && !is_agent)
			continue;
		if (is_agent && x->mapped)
			continue;
		if (xp_target_fs_access(&fs, f, &access) || xp_elf_open(access, &elf)) {
			free(access);
			continue;
		}
		free(access);
		if (is_agent) {
			if (runtime_addr(&elf, &x->maps, f, START_SYMBOL, &a) == 0) {
				x->mapped = true;
				x->fn.start = a;
				runtime_addr(&elf, &x->maps, f, LAST_ERROR_SYMBOL, &x->fn.last_error);
				snprintf(x->path, sizeof(x->path), "%s", f->path);
				x->out->agent_ino = f->inode;
				x->out->agent_dev = makedev(f->dev_major, f->dev_minor);
			} else {
				xp_error_detail_str(x->err, "mapped_agent", f->path);
				xp_elf_close(&elf);
				free(idx);
				xp_target_fs_close(&fs);
				return xp_error_set(
					x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, false,
					"the target maps %s, which exports no " START_SYMBOL
					" (a libxprobe without the Agent); loading a second copy is refused",
					f->path);
			}
		}
		if (is_libc) {
			if (!x->fn.dlopen && runtime_addr(&elf, &x->maps, f, "dlopen", &a) == 0) {
				x->fn.dlopen = a;
				runtime_addr(&elf, &x->maps, f, "dlsym", &x->fn.dlsym);
				runtime_addr(&elf, &x->maps, f, "dlerror", &x->fn.dlerror);
			}
			if (!x->fn.errno_loc)
				runtime_addr(&elf, &x->maps, f, "__errno_location",
					     &x->fn.errno_loc);
			if (!x->fn.mmap && runtime_addr(&elf, &x->maps, f, "mmap", &a) == 0 &&
			    runtime_addr(&elf, &x->maps, f, "munmap", &x->fn.munmap) == 0)
				x->fn.mmap = a;
			if (!x->fn.sigreturn)
				find_sigreturn(x, &elf, f);
		}
		xp_elf_close(&elf);
	}
	free(idx);
	xp_target_fs_close(&fs);
	if (!x->fn.errno_loc || !x->fn.mmap || !x->fn.munmap || !x->fn.sigreturn ||
	    (!x->mapped && (!x->fn.dlopen || !x->fn.dlsym))) {
		xp_error_hint(x->err, "start the target with LD_PRELOAD=<libxprobe.so> instead");
		return xp_error_set(
			x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, false,
			"the target maps no C library with dlopen, dlsym, __errno_location, mmap, munmap and a sigreturn trampoline (statically linked?); it cannot load the Agent");
	}
	return 0;
}

static int check_ptrace(struct inj *x, const struct task_status *ts)
{
	struct xp_agent_ptrace_facts f = { 0 };
	struct stat ps;
	char path[64], msg[512];
	const char *reason;

	f.uid = (uint32_t)getuid();
	f.gid = (uint32_t)getgid();
	{
		struct xp_proc_status ours;

		if (xp_proc_status_read(0, &ours) == 0 && ours.has_cap_eff)
			f.cap_eff = ours.cap_eff;
	}
	memcpy(f.tuid, ts->uid, sizeof(f.tuid));
	memcpy(f.tgid, ts->gid, sizeof(f.tgid));
	snprintf(path, sizeof(path), "/proc/%u/stat", x->t->pid);
	/* procfs shows a non-dumpable process's files (not its directory) as root's */
	f.target_dumpable = !(stat(path, &ps) == 0 && ps.st_uid == 0 && ts->uid[1] != 0);
	f.yama_scope = yama_scope();
	f.descendant = descends_from_us(x->t->pid);
	f.tracer_pid = ts->tracer_pid;
	if (xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED) {
		if (f.yama_scope >= 0)
			xp_error_detail_i64(x->err, "ptrace_scope", f.yama_scope);
		xp_error_hint(
			x->err,
			"run xprobe as the target's user or as root (CAP_SYS_PTRACE), or restart the target with LD_PRELOAD=<libxprobe.so>");
		return denied(x, reason, "cannot ptrace the target: %s", msg);
	}
	if (f.yama_scope >= 0) {
		/* kept for the kernel's refusal, if it comes */
		xp_error_detail_i64(x->err, "ptrace_scope", f.yama_scope);
	}
	if (reason[0]) {
		snprintf(x->ptrace_reason, sizeof(x->ptrace_reason), "%s", reason);
		snprintf(x->ptrace_why, sizeof(x->ptrace_why), "%s", msg);
	}
	return 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->suspect != y->suspect)
		return x->suspect ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads, best first (the rules at the top of this file). */
static int list_candidates(struct inj *x, uint32_t forced, const struct task_status *proc)
{
	uint32_t *tids = NULL;
	size_t n, total, i;
	int rc;

	if (forced) {
		tids = malloc(sizeof(*tids));
		if (!tids)
			return xp_error_set(x->err, XPROBE_E_INTERNAL, false, "out of memory");
		tids[0] = forced;
		n = 1;
	} else {
		rc = xp_proc_threads(x->t->pid, MAX_THREADS, &tids, &n, &total);
		if (rc)
			return xp_proc_fail(x->t, "task", rc, x->err);
	}
	x->cands = calloc(n ? n : 1, sizeof(*x->cands));
	if (!x->cands) {
		free(tids);
		return xp_error_set(x->err, XPROBE_E_INTERNAL, false, "out of memory");
	}
	for (i = 0; i < n; i++) {
		struct task_status st;
		struct cand *c = &x->cands[x->ncands];

		rc = read_task_status(x->t->pid, tids[i], &st);
		if (rc) {
			if (forced) {
				free(tids);
				xp_error_detail_u64(x->err, "tid", forced);
				return xp_error_set(x->err, XPROBE_E_TARGET_NOT_FOUND, false,
						    "thread %u is not a thread of process %u",
						    forced, x->t->pid);
			}
			continue;
		}
		if (st.state == 'Z' || st.state == 'X')
			continue;
		if (st.tracer_pid) {
			uint32_t tid = tids[i];

			free(tids);
			xp_error_detail_u64(x->err, "tid", tid);
			xp_error_detail_u64(x->err, "tracer_pid", st.tracer_pid);
			return denied(
				x, "already_traced",
				"cannot ptrace the target: thread %u is already traced by pid %u (a debugger or tracer)",
				tid, st.tracer_pid);
		}
		if (st.shstk) {
			if (forced) {
				free(tids);
				xp_error_detail_u64(x->err, "tid", forced);
				return xp_error_set(
					x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
					"thread %u runs with a user shadow stack, which the remote call's return would break",
					forced);
			}
			continue;
		}
		c->tid = tids[i];
		if (read_thread_syscall(x->t->pid, tids[i], &c->nr))
			c->nr = -1;
		c->kind = xp_agent_inject_classify(c->nr);
		c->suspect = (st.sigblk & proc->sigcgt) != 0;
		x->ncands++;
	}
	free(tids);
	qsort(x->cands, x->ncands, sizeof(*x->cands), cand_cmp);
	if (!x->ncands)
		return xp_error_set(
			x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
			"no thread of the target can run the remote call (each is exiting or runs with a user shadow stack)");
	return 0;
}

/* The target's executable must be x86_64 ELF64. */
static int check_arch(struct inj *x)
{
#if !defined(__x86_64__)
	return xp_error_set(x->err, XPROBE_E_UNSUPPORTED_CUDA_VERSION, false,
			    "online injection is supported on Linux x86_64 only");
#else
	unsigned char h[20];
	char base[64], path[96];
	ssize_t n;
	int fd;

	xp_proc_base(x->t->pid, base, sizeof(base)); /* a zombie leader: a live thread's */
	snprintf(path, sizeof(path), "%s/exe", base);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xp_proc_fail(x->t, "exe", -errno, x->err);
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0 ||
	    h[EI_CLASS] != ELFCLASS64 || (h[18] | h[19] << 8) != EM_X86_64)
		return xp_error_set(
			x->err, XPROBE_E_UNSUPPORTED_CUDA_VERSION, false,
			"online injection needs a Linux x86_64 (64-bit ELF) target; %s is not one",
			path);
	return 0;
#endif
}

/* After the detach: the file the target maps is the one checked. */
static int verify_mapping(struct inj *x, const struct stat *st)
{
	struct xp_maps maps = { 0 };
	bool same = false, other = false;
	size_t i;
	int rc;

	rc = xp_maps_read(x->t, &maps, x->err);
	if (rc)
		return rc;
	for (i = 0; i < maps.n; i++) {
		const struct xp_map_entry *m = &maps.v[i];

		if (!xp_map_is_file(m))
			continue;
		if (m->inode == (uint64_t)st->st_ino && m->dev_major == major(st->st_dev) &&
		    m->dev_minor == minor(st->st_dev))
			same = true;
		else if (strcmp(m->path, x->path) == 0)
			other = true;
	}
	xp_maps_free(&maps);
	if (same)
		return 0;
	if (other)
		return denied(
			x, "agent_replaced",
			"the target mapped %s, but not the file checked before (replaced meanwhile)",
			x->path);
	return xp_error_set(x->err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, false,
			    "dlopen succeeded but the target maps no %s", x->path);
}

/* Test builds: XPROBE_TEST_INJECT_SIGNAL_AT=STEP:SIG[:COUNT] (see tptrace). */
static void signal_hook(struct inj *x)
{
	const char *v = xpc_test_hook_env("XPROBE_TEST_INJECT_SIGNAL_AT");
	char w[3][16];
	uint64_t n[3] = { 0, 0, 1 };
	size_t i = 0, k = 0;

	if (!v)
		return;
	for (; *v && i < 3; v++) {
		if (*v == ':') {
			w[i++][k] = '\0';
			k = 0;
		} else if (k + 1 < sizeof(w[0])) {
			w[i][k++] = *v;
		} else {
			return;
		}
	}
	if (i < 3)
		w[i++][k] = '\0';
	if (i < 2 || xpc_parse_u64(w[0], 1, UINT32_MAX, &n[0]) ||
	    xpc_parse_u64(w[1], 1, 64, &n[1]) || (i == 3 && xpc_parse_u64(w[2], 1, 8, &n[2])))
		return;
	x->signal_at = (uint32_t)n[0];
	x->signal_sig = (int)n[1];
	x->signal_count = (int)n[2];
}

int xp_agent_inject(const struct xp_target *t, const char *agent_path,
		    const struct xp_agent_inject_opts *opts, struct xp_agent_inject_result *out,
		    struct xp_error *errp)
{
	struct xp_error err_local = { 0 }, *err = &err_local; /* errp gets it on failure only */
	uint64_t t0 = xpc_mono_ns();
	struct inj *x;
	struct task_status ts;
	struct xp_target_ns ns;
	struct stat st, rst;
	struct xp_target_fs fs;
	sigset_t defer, old_mask;
	pthread_t th;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->syscall_nr = -1;
	x = calloc(1, sizeof(*x));
	if (!x)
		return xp_error_set(errp, XPROBE_E_INTERNAL, false, "out of memory");
	x->t = t;
	x->pid = (pid_t)t->pid;
	x->out = out;
	x->err = err;
	x->stop_ns = 1000000ull * (opts && opts->stop_timeout_ms ? opts->stop_timeout_ms :
								   XP_INJECT_STOP_TIMEOUT_MS);
	x->call_ns = 1000000ull * (opts && opts->call_timeout_ms ? opts->call_timeout_ms :
								   XP_INJECT_CALL_TIMEOUT_MS);
	x->forced = opts && opts->tid;
	x->memfd = -1;
	signal_hook(x);

	rc = xp_target_verify(t, err);
	if (rc)
		goto out;
	if (t->pid == (uint32_t)getpid()) {
		rc = denied(x, "self", "xprobe cannot inject the Agent into itself");
		goto out;
	}
	rc = read_task_status(t->pid, 0, &ts);
	if (rc) {
		rc = xp_proc_fail(t, "status", rc, err);
		goto out;
	}
	if (ts.state == 'T' || ts.state == 't') {
		xp_error_detail_str(err, "state", "stopped");
		rc = xp_error_set(
			err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
			"the target is stopped (SIGSTOP or a debugger); continue it first");
		goto out;
	}
	if (ts.seccomp > 0) {
		xp_error_detail_i64(err, "seccomp", ts.seccomp);
		rc = denied(
			x, "seccomp",
			"the target runs under a seccomp filter (mode %d), which may kill it for a syscall dlopen or the Agent makes",
			ts.seccomp);
		goto out;
	}
	rc = check_ptrace(x, &ts);
	if (rc)
		goto out;
	rc = check_arch(x);
	if (rc)
		goto out;
	/* the mount namespace and root: the path must name the same file */
	rc = xp_target_namespaces(t, &ns, err);
	if (rc)
		goto out;
	if (!ns.same_mntns) {
		xp_error_hint(
			err,
			"start the target with LD_PRELOAD=<libxprobe.so> inside its namespace");
		rc = denied(
			x, "mount_namespace",
			"the target runs in another mount namespace; the Agent's path would not name the same file there");
		goto out;
	}
	rc = check_agent(x, agent_path, &ts, &st);
	if (rc)
		goto out;
	rc = check_runtime_dir(x, &ts);
	if (rc)
		goto out;
	rc = xp_target_fs_open(t, &fs, err);
	if (rc)
		goto out;
	rc = xp_target_fs_stat(&fs, x->path, &rst);
	xp_target_fs_close(&fs);
	if (rc || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino) {
		xp_error_hint(err, "start the target with LD_PRELOAD=<libxprobe.so> instead");
		rc = denied(
			x, "root_directory",
			"%s names another file (or none) under the target's root directory (/proc/%u/root)",
			x->path, t->pid);
		goto out;
	}
	out->agent_dev = st.st_dev;
	out->agent_ino = st.st_ino;
	rc = xp_maps_read(t, &x->maps, err);
	if (rc)
		goto out;
	x->page = free_page(&x->maps);
	if (!x->page) {
		rc = xp_error_set(
			err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, false,
			"the target's address space has no free page for the call's code");
		goto out;
	}
	rc = resolve_fns(x, &st);
	if (rc)
		goto out;
	rc = list_candidates(x, opts ? opts->tid : 0, &ts);
	if (rc)
		goto out;

	if (opts && opts->before_stop)
		opts->before_stop(opts->ctx);
	/* the signals that would end us with a thread in hand wait until it is back */
	sigemptyset(&defer);
	for (i = 0; i < sizeof(deferred_signals) / sizeof(deferred_signals[0]); i++)
		sigaddset(&defer, deferred_signals[i]);
	pthread_sigmask(SIG_BLOCK, &defer, &old_mask);
	rc = pthread_create(&th, NULL, tracer_main, x);
	if (rc) {
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
		rc = xp_error_set(err, XPROBE_E_INTERNAL, false, "pthread_create: %s",
				  strerror(rc));
		goto out;
	}
	pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	rc = x->rc;
	if (rc < 0 && x->code) {
		xp_error_detail_str(err, "reason", x->reason ? x->reason : "");
		if (x->tid)
			xp_error_detail_u64(err, "tid", (uint64_t)x->tid);
		if (x->code == XPROBE_E_PERMISSION_DENIED)
			xp_error_hint(
				err,
				"run xprobe as the target's user or as root (CAP_SYS_PTRACE), or restart the target with LD_PRELOAD=<libxprobe.so>");
		rc = xp_error_set(err, x->code, x->code == XPROBE_E_CUPTI_AGENT_NOT_LOADED, "%s",
				  x->why);
		goto out;
	}
	if (out->start_status) {
		xp_error_detail_i64(err, "start_status", out->start_status);
		if (out->start_error[0])
			xp_error_detail_str(err, "agent_error", out->start_error);
		if (out->start_status == -XPROBE_E_PERMISSION_DENIED)
			rc = denied(x, "agent_refused", "the Agent refused to serve in the target: %s",
				    out->start_error[0] ? out->start_error :
							  "it gave no reason");
		else
			rc = xp_error_set(err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
					  "the Agent's " START_SYMBOL
					  " returned %d (%s) in the target%s%s",
					  out->start_status, xprobe_errname(out->start_status),
					  out->start_error[0] ? ": " : "", out->start_error);
		goto out;
	}
	if (out->injected) {
		rc = verify_mapping(x, &st);
		if (rc)
			goto out;
	}
	rc = xp_target_verify(t, err);
out:
	snprintf(out->agent_path, sizeof(out->agent_path), "%s", x->path);
	if (rc) {
		if (err->code)
			xp_target_detail(err, t);
		if (errp)
			xp_error_move(errp, err);
		else
			xp_error_clear(err);
	} else {
		xp_error_clear(err);
	}
	xp_maps_free(&x->maps);
	free(x->cands);
	free(x);
	out->total_ns = xpc_mono_ns() - t0;
	return rc;
}
