/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_inject_stub.c - the stub a hijacked thread runs and the
 * rt_sigreturn frame it restores itself from (agent_inject_stub.h).
 *
 * The stub, in AT&T syntax below, is data here: xprobe never runs it.
 * agent_inject.c copies its bytes into a page it has the target map and
 * points the chosen thread at it.  It saves the thread's errno, calls
 * dlopen, dlsym and xprobe_agent_start (or dlerror after a failure, or
 * only the start when the Agent is mapped already; xprobe_last_error when
 * the start refuses), writes each result
 * into the call block as it goes, puts errno back, parks (park_rounds
 * raw nanosleeps of park_sec/park_nsec: a live injector takes the thread
 * there, a dead one costs that wait) and ends in rt_sigreturn on the
 * frame above its stack.  It uses only rbx (the
 * block, callee-saved, so each callee keeps it) and the stack below the
 * frame.
 */
#include <errno.h>
#include <string.h>

#include "agent_inject_stub.h"

#if defined(__x86_64__)
/* The offsets the stub uses are the block's. */
_Static_assert(offsetof(struct xp_agent_inject_block, errno_location) == 0, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, dlopen) == 8, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, dlsym) == 16, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, dlerror) == 24, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, start) == 32, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, path) == 40, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, symbol) == 48, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, flags) == 56, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, handle) == 64, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, dlerror_text) == 72, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, status) == 80, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, step) == 88, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, errno_addr) == 96, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, errno_value) == 104, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, park_sec) == 112, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, park_nsec) == 120, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, park_rounds) == 128, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, last_error) == 136, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, last_error_text) == 144, "stub offsets");
_Static_assert(offsetof(struct xp_agent_inject_block, last_error_symbol) == 152, "stub offsets");
_Static_assert(sizeof(struct xp_agent_inject_block) == 160, "stub offsets");

__asm__(".pushsection .rodata\n"
	".balign 16\n"
	".globl xp_agent_inject_stub_code\n"
	".hidden xp_agent_inject_stub_code\n"
	"xp_agent_inject_stub_code:\n"
	"	call *0(%rbx)\n" /* __errno_location() */
	"	mov %rax, 96(%rbx)\n"
	"	movslq (%rax), %rcx\n"
	"	mov %rcx, 104(%rbx)\n"
	"	movq $1, 88(%rbx)\n" /* XP_STUB_STEP_ERRNO */
	"	cmpq $0, 8(%rbx)\n"
	"	je 2f\n" /* the Agent is mapped: only its start */
	"	mov 40(%rbx), %rdi\n"
	"	mov 56(%rbx), %rsi\n"
	"	call *8(%rbx)\n" /* dlopen(path, flags) */
	"	mov %rax, 64(%rbx)\n"
	"	movq $2, 88(%rbx)\n" /* XP_STUB_STEP_DLOPEN */
	"	test %rax, %rax\n"
	"	jz 3f\n"
	"	mov %rax, %rdi\n"
	"	mov 48(%rbx), %rsi\n"
	"	call *16(%rbx)\n" /* dlsym(handle, symbol) */
	"	mov %rax, 32(%rbx)\n"
	"	movq $3, 88(%rbx)\n" /* XP_STUB_STEP_DLSYM */
	"	test %rax, %rax\n"
	"	jz 3f\n"
	"	mov 64(%rbx), %rdi\n"
	"	mov 152(%rbx), %rsi\n"
	"	call *16(%rbx)\n" /* dlsym(handle, "xprobe_last_error") */
	"	mov %rax, 136(%rbx)\n"
	"2:	call *32(%rbx)\n" /* xprobe_agent_start() */
	"	movslq %eax, %rax\n"
	"	mov %rax, 80(%rbx)\n"
	"	movq $4, 88(%rbx)\n" /* XP_STUB_STEP_START */
	"	test %rax, %rax\n"
	"	jz 4f\n"
	"	mov 136(%rbx), %rax\n" /* refused: why, in the Agent's words */
	"	test %rax, %rax\n"
	"	jz 4f\n"
	"	call *%rax\n" /* xprobe_last_error() */
	"	mov %rax, 144(%rbx)\n"
	"	jmp 4f\n"
	"3:	cmpq $0, 24(%rbx)\n"
	"	je 4f\n"
	"	call *24(%rbx)\n" /* dlerror() */
	"	mov %rax, 72(%rbx)\n"
	"	movq $5, 88(%rbx)\n" /* XP_STUB_STEP_DLERROR */
	"4:	mov 96(%rbx), %rax\n"
	"	mov 104(%rbx), %rcx\n"
	"	mov %ecx, (%rax)\n" /* errno as it was */
	"	movq $6, 88(%rbx)\n" /* XP_STUB_STEP_DONE */
	"	mov 128(%rbx), %r12\n" /* park: the injector takes the thread here */
	"	test %r12, %r12\n"
	"	jz 6f\n"
	"5:	mov $35, %eax\n" /* nanosleep(&block->park, NULL), raw: errno untouched */
	"	lea 112(%rbx), %rdi\n"
	"	xor %esi, %esi\n"
	"	syscall\n"
	"	dec %r12\n"
	"	jnz 5b\n"
	"6:\n"
	"xp_inject_stub_sigreturn_insn:\n"
	"	mov $15, %eax\n" /* rt_sigreturn: the frame at rsp - 8 */
	"	syscall\n"
	"xp_inject_stub_after_sigreturn:\n"
	"	ud2\n" /* rt_sigreturn does not return here */
	"xp_inject_stub_end:\n"
	".balign 8\n"
	".globl xp_agent_inject_stub_len\n"
	".hidden xp_agent_inject_stub_len\n"
	"xp_agent_inject_stub_len:\n"
	"	.quad xp_inject_stub_end - xp_agent_inject_stub_code\n"
	".globl xp_agent_inject_stub_park_end_off\n"
	".hidden xp_agent_inject_stub_park_end_off\n"
	"xp_agent_inject_stub_park_end_off:\n"
	"	.quad xp_inject_stub_sigreturn_insn - xp_agent_inject_stub_code\n"
	".globl xp_agent_inject_stub_sigreturn_off\n"
	".hidden xp_agent_inject_stub_sigreturn_off\n"
	"xp_agent_inject_stub_sigreturn_off:\n"
	"	.quad xp_inject_stub_after_sigreturn - xp_agent_inject_stub_code\n"
	".popsection\n");
#else
const uint8_t xp_agent_inject_stub_code[1];
const size_t xp_agent_inject_stub_len;
const size_t xp_agent_inject_stub_sigreturn_off;
const size_t xp_agent_inject_stub_park_end_off;
#endif

/* ---- the frame ----------------------------------------------------------------- */

/* The kernel's uapi layouts for x86_64 (asm/sigcontext.h, asm/ucontext.h). */
struct sigctx64 {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate; /* the vector image; 0 would reset it */
	uint64_t reserved1[8];
};

struct uctx64 {
	uint64_t uc_flags;
	uint64_t uc_link;
	uint64_t ss_sp; /* stack_t */
	int32_t ss_flags;
	int32_t ss_pad;
	uint64_t ss_size;
	struct sigctx64 mc;
	uint64_t sigmask;
};

struct rt_frame64 {
	uint64_t pretcode; /* the return address the handler's ret took */
	struct uctx64 uc;
	uint8_t info[128]; /* siginfo: unread by rt_sigreturn */
};

_Static_assert(sizeof(struct sigctx64) == 256, "sigcontext layout");
_Static_assert(sizeof(struct uctx64) == 304, "ucontext layout");
_Static_assert(sizeof(struct rt_frame64) == XP_SIGFRAME_SIZE, "rt_sigframe layout");

#define UC_FP_XSTATE_ 0x1u
#define UC_SIGCONTEXT_SS_ 0x2u
#define UC_STRICT_RESTORE_SS_ 0x4u
#define FP_XSTATE_MAGIC1_ 0x46505853u
#define FP_XSTATE_MAGIC2_ 0x46505845u
#define FXSAVE_SIZE 512u
#define XSAVE_HDR_SIZE 64u
#define FX_SW_OFFSET 464u /* the FXSAVE area's software-reserved bytes */
/* SS_ONSTACK | SS_DISABLE: a mode sigaltstack refuses (EINVAL), an error
 * rt_sigreturn's restore_altstack ignores; the alternate stack stays */
#define SS_FLAGS_INVALID 3
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513
#define ERESTARTNOHAND_ 514
#define ERESTART_RESTARTBLOCK_ 516

void xp_agent_inject_restart_regs(const struct user_regs_struct *r, struct user_regs_struct *out)
{
	int64_t ax = (int64_t)r->rax;

	*out = *r;
	if ((int64_t)r->orig_rax < 0)
		return;
	if (ax == -ERESTARTSYS_ || ax == -ERESTARTNOINTR_ || ax == -ERESTARTNOHAND_ ||
	    ax == -ERESTART_RESTARTBLOCK_) {
		out->rax = r->orig_rax;
		out->rip = r->rip - 2;
	}
}

size_t xp_agent_inject_fpstate_len(const struct xp_agent_sigframe_in *in)
{
	return in->xsave ? in->xstate_len + 4 : FXSAVE_SIZE;
}

/* The software bytes that tell rt_sigreturn the image is a full XSAVE one. */
static void fx_sw_bytes(uint8_t *fp, size_t xlen)
{
	uint32_t magic1 = FP_XSTATE_MAGIC1_, ext = (uint32_t)xlen + 4, size = (uint32_t)xlen;
	uint32_t magic2 = FP_XSTATE_MAGIC2_;
	uint64_t features;

	/* the ptrace image's first software word is XCR0 (the features it holds) */
	memcpy(&features, fp + FX_SW_OFFSET, sizeof(features));
	if ((features & 3) != 3)
		features |= 3; /* x87 and SSE are always there */
	memset(fp + FX_SW_OFFSET, 0, FXSAVE_SIZE - FX_SW_OFFSET);
	memcpy(fp + FX_SW_OFFSET, &magic1, 4);
	memcpy(fp + FX_SW_OFFSET + 4, &ext, 4);
	memcpy(fp + FX_SW_OFFSET + 8, &features, 8);
	memcpy(fp + FX_SW_OFFSET + 16, &size, 4);
	memcpy(fp + xlen, &magic2, 4);
}

int xp_agent_inject_sigframe(const struct xp_agent_sigframe_in *in, uint8_t *frame, uint8_t *fp)
{
	struct user_regs_struct r;
	struct rt_frame64 f;
	struct sigctx64 *c = &f.uc.mc;

	if ((in->frame_addr & 15) != 8 || (in->fpstate_addr & (XP_SIGFRAME_FPSTATE_ALIGN - 1)))
		return -EINVAL;
	if (in->xsave ? in->xstate_len < FXSAVE_SIZE + XSAVE_HDR_SIZE :
			in->xstate_len < FXSAVE_SIZE)
		return -EINVAL;
	xp_agent_inject_restart_regs(&in->regs, &r);
	memset(&f, 0, sizeof(f));
	f.uc.uc_flags = UC_SIGCONTEXT_SS_ | UC_STRICT_RESTORE_SS_ | (in->xsave ? UC_FP_XSTATE_ : 0);
	f.uc.ss_flags = SS_FLAGS_INVALID;
	f.uc.sigmask = in->sigmask;
	c->r8 = r.r8, c->r9 = r.r9, c->r10 = r.r10, c->r11 = r.r11;
	c->r12 = r.r12, c->r13 = r.r13, c->r14 = r.r14, c->r15 = r.r15;
	c->rdi = r.rdi, c->rsi = r.rsi, c->rbp = r.rbp, c->rbx = r.rbx;
	c->rdx = r.rdx, c->rax = r.rax, c->rcx = r.rcx, c->rsp = r.rsp;
	c->rip = r.rip, c->eflags = r.eflags;
	c->cs = (uint16_t)r.cs, c->gs = (uint16_t)r.gs, c->fs = (uint16_t)r.fs;
	c->ss = (uint16_t)r.ss;
	c->fpstate = in->fpstate_addr;
	memcpy(frame, &f, sizeof(f));
	if (in->xsave) {
		memcpy(fp, in->xstate, in->xstate_len);
		fx_sw_bytes(fp, in->xstate_len);
	} else {
		memcpy(fp, in->xstate, FXSAVE_SIZE);
		memset(fp + FX_SW_OFFSET, 0, FXSAVE_SIZE - FX_SW_OFFSET);
	}
	return 0;
}
