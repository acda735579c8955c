/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_inject_stub.h - what a hijacked thread runs during online
 * injection, and the signal frame it restores itself from
 * (agent_inject.c drives both; docs/agent.md, "Online injection").
 *
 * What this module owns: the stub's machine code (position-independent
 * x86_64, copied into a page the target maps for it), the layout of the
 * call block the stub reads its arguments from and writes its results
 * to, and the x86_64 rt_sigreturn frame that carries the thread's own
 * registers, vector state and signal mask.
 *
 * The invariant the whole design rests on: from the first register the
 * injector changes, the thread holds on its stack a frame that restores
 * it, and every path of the code it runs ends in rt_sigreturn on that
 * frame.  Whether or not the injector is still alive when the call
 * returns, the thread puts itself back.
 */
#ifndef XP_COLLECT_AGENT_INJECT_STUB_H
#define XP_COLLECT_AGENT_INJECT_STUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/*
 * The call block, at rbx when the stub starts: functions and arguments
 * filled by the injector, results written by the stub.  Offsets are
 * the stub's (agent_inject_stub.c); a static assertion keeps them equal.
 */
struct xp_agent_inject_block {
	uint64_t errno_location; /* __errno_location */
	uint64_t dlopen; /* 0: the Agent is mapped already, only start */
	uint64_t dlsym;
	uint64_t dlerror; /* 0: none (a failed dlopen then says nothing) */
	uint64_t start; /* xprobe_agent_start: dlsym's result, or given */
	uint64_t path; /* the Agent's path (a string in the scratch) */
	uint64_t symbol; /* "xprobe_agent_start" */
	uint64_t flags; /* dlopen's flags */
	/* written by the stub */
	uint64_t handle; /* dlopen's return */
	uint64_t dlerror_text; /* dlerror's return after a failure */
	int64_t status; /* xprobe_agent_start's return, sign-extended */
	uint64_t step; /* XP_STUB_STEP_*: how far it got */
	uint64_t errno_addr; /* the thread's errno ... */
	uint64_t errno_value; /* ... and its value before the calls */
	/* the park after the calls: park_rounds nanosleeps of this length */
	uint64_t park_sec;
	uint64_t park_nsec;
	uint64_t park_rounds; /* 0: straight to rt_sigreturn */
	/* a start that refuses says why through xprobe_last_error() */
	uint64_t last_error; /* the function: given (mapped) or dlsym'ed; 0 none */
	uint64_t last_error_text; /* its return (written by the stub) */
	uint64_t last_error_symbol; /* "xprobe_last_error" (a string in the scratch) */
};

/* block.step, in the order the stub reaches them */
enum {
	XP_STUB_STEP_NONE = 0,
	XP_STUB_STEP_ERRNO = 1, /* errno_addr and errno_value are valid */
	XP_STUB_STEP_DLOPEN = 2, /* handle is valid */
	XP_STUB_STEP_DLSYM = 3, /* start is valid */
	XP_STUB_STEP_START = 4, /* status is valid */
	XP_STUB_STEP_DLERROR = 5, /* dlerror_text is valid */
	XP_STUB_STEP_DONE = 6, /* errno written back, about to rt_sigreturn */
};

/*
 * The stub's bytes: [xp_agent_inject_stub_code, +xp_agent_inject_stub_len).  It is
 * entered with rbx = the block, rsp = the frame + 8 (16-byte aligned).
 * After the calls it writes step DONE and parks; the rt_sigreturn that
 * ends it starts at offset xp_agent_inject_stub_park_end_off (rbx and rsp as
 * at entry, so an injector may send the thread there from the park) and
 * rip at that syscall's entry stop is code + xp_agent_inject_stub_sigreturn_off.
 */
extern const uint8_t xp_agent_inject_stub_code[];
extern const size_t xp_agent_inject_stub_len;
extern const size_t xp_agent_inject_stub_park_end_off;
extern const size_t xp_agent_inject_stub_sigreturn_off;

/* The sigreturn gadget the first and last calls return to: libc's
 * __restore_rt, "mov $15, %rax; syscall" (glibc and musl alike). */
#define XP_SIGRETURN_GADGET "\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05"
#define XP_SIGRETURN_GADGET_LEN 9u

/* ---- the signal frame ------------------------------------------------------- */

/* x86_64's struct rt_sigframe: pretcode, ucontext, siginfo (the kernel's
 * uapi layout, written out so no kernel header clashes with libc's). */
#define XP_SIGFRAME_SIZE 440u
#define XP_SIGFRAME_FPSTATE_ALIGN 64u

/*
 * What the frame must restore.  @regs and the vector state are the
 * thread's as saved at its stop; @xstate is the NT_X86_XSTATE image
 * (standard format) of @xstate_len bytes, or, when @xsave is false, a
 * 512-byte FXSAVE image.
 */
struct xp_agent_sigframe_in {
	struct user_regs_struct regs;
	const uint8_t *xstate;
	size_t xstate_len;
	bool xsave;
	uint64_t sigmask; /* blocked signals (PTRACE_GETSIGMASK) */
	uint64_t frame_addr; /* where the frame lies in the target (8 mod 16) */
	uint64_t fpstate_addr; /* where the vector image lies (64-aligned) */
};

/*
 * The registers the frame restores: @r with a syscall interrupted by the
 * stop made to run again as the kernel restarts one after a stop without
 * a handler (rax = the syscall, rip back over the 2-byte syscall
 * instruction) for -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND and
 * -ERESTART_RESTARTBLOCK (the last re-runs from its registers:
 * rt_sigreturn resets the restart block, so restart_syscall would answer
 * EINTR).  Anything else is kept as it is.
 */
void xp_agent_inject_restart_regs(const struct user_regs_struct *r, struct user_regs_struct *out);

/*
 * Fill @frame (XP_SIGFRAME_SIZE bytes) and @fp (fpstate_len(@in) bytes)
 * for @in.  The frame's stack_t carries ss_flags that sigaltstack
 * refuses as invalid (rt_sigreturn ignores that refusal), so the
 * thread's alternate signal stack, which ptrace cannot read, is left as
 * it is.  Returns 0 or -EINVAL (misaligned addresses, a vector image too
 * small).
 */
int xp_agent_inject_sigframe(const struct xp_agent_sigframe_in *in, uint8_t *frame, uint8_t *fp);
/* Bytes the vector image takes in the frame (the image and MAGIC2). */
size_t xp_agent_inject_fpstate_len(const struct xp_agent_sigframe_in *in);

#endif /* XP_COLLECT_AGENT_INJECT_STUB_H */
