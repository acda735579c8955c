/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_inject.c - online injection (src/agent/agent_inject.h) against
 * the inject_target fixture with the stand-in Agent libinject_agent.so:
 * the target is left as it was (its own checks: threads progress, no
 * syscall sees EINTR where the kernel restarts it, sleeps last their
 * length, registers / SSE / YMM / MXCSR / errno of a running loop keep
 * their values), whichever thread ran the calls, on every failure path
 * too (dlopen refused, the call faults, the call hangs, start fails); the
 * refusals (another mount namespace, ptrace denied by uid / dumpable /
 * an existing tracer, seccomp, a stopped target, untrusted Agent files);
 * 200 cycles against one target.  Runs as root.
 *
 * Driver mode, for tests/live/test_inject.py and bench/bench_inject.sh:
 *   test_agent_inject --inject PID AGENT [--tid TID] [--call-timeout-ms MS]
 *                       [--cycles N]
 * prints one line "ok key=value ..." (exit 0) or "error CODE reason=...
 * message" (exit: the contract's exit code).  --cycles N (the real Agent):
 * N times inject, connect (src/agent/agent_client.h), HELLO must carry
 * XPROBE_AGENT_F_INJECTED, ARM an NVTX capture, CLOSE, and the socket
 * must be gone; then "cycles N failures F ..." with medians.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "agent/agent_client.h"
#include "agent/agent_inject.h"
#include "agent/agent_inject_stub.h"
#include "process/procfs.h"
#include "target_spawn.h"
#include "testlib.h"

#define NOBODY 65534u
#define THIRD_UID 65533u

/* ---- a fixture ------------------------------------------------------------ */

struct itgt {
	pid_t pid;
	int in;
	FILE *out;
	char err_path[64]; /* its stderr */
	size_t ntids;
	char roles[24][32];
	uint32_t tids[24];
	struct xp_target t;
};

struct spawn_opts {
	const char *prog; /* default: the build's inject_target */
	const char *ctl; /* XPI_AGENT_CTL */
	uid_t uid; /* 0: stay root */
	bool unshare_mnt;
	const char *flag; /* one extra flag */
};

static int tgt_start(struct itgt *g, const char *mode, const struct spawn_opts *o)
{
	int in[2], out[2], efd;
	char prog[PATH_MAX], line[256];
	struct xp_error err = { 0 };

	memset(g, 0, sizeof(*g));
	if (o && o->prog)
		snprintf(prog, sizeof(prog), "%s", o->prog);
	else
		fx_path(prog, sizeof(prog), "inject_target");
	snprintf(g->err_path, sizeof(g->err_path), "/tmp/xpi-err-XXXXXX");
	efd = mkstemp(g->err_path);
	if (efd < 0 || pipe(in) || pipe(out))
		return -errno;
	g->pid = fork();
	if (g->pid < 0)
		return -errno;
	if (g->pid == 0) {
		char *argv[4] = { prog, (char *)mode, o && o->flag ? (char *)o->flag : NULL, NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(efd, 2);
		close(in[1]);
		close(out[0]);
		if (o && o->ctl)
			setenv("XPI_AGENT_CTL", o->ctl, 1);
		if (o && o->unshare_mnt && unshare(CLONE_NEWNS))
			_exit(126);
		if (o && o->uid &&
		    (setgroups(0, NULL) || setresgid(o->uid, o->uid, o->uid) ||
		     setresuid(o->uid, o->uid, o->uid)))
			_exit(125);
		execv(prog, argv);
		_exit(127);
	}
	close(efd);
	close(in[0]);
	close(out[1]);
	g->in = in[1];
	g->out = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), g->out)) {
		char role[32];
		unsigned tid;

		if (strcmp(line, "ready\n") == 0)
			return xp_target_identify((uint32_t)g->pid, &g->t, &err) ? -ESRCH : 0;
		if (sscanf(line, "tid %31s %u", role, &tid) == 2 && g->ntids < 24) {
			snprintf(g->roles[g->ntids], sizeof(g->roles[0]), "%s", role);
			g->tids[g->ntids++] = tid;
		}
	}
	return -EIO;
}

static uint32_t tgt_tid(const struct itgt *g, const char *role)
{
	size_t i;

	for (i = 0; i < g->ntids; i++)
		if (strcmp(g->roles[i], role) == 0)
			return g->tids[i];
	fprintf(stderr, "no thread %s\n", role);
	return 0;
}

/* Send @cmd, read one line into @line. */
static int tgt_ask(struct itgt *g, const char *cmd, char *line, size_t size)
{
	line[0] = '\0';
	if (write(g->in, cmd, strlen(cmd)) != (ssize_t)strlen(cmd) || write(g->in, "\n", 1) != 1)
		return -EIO;
	if (!fgets(line, (int)size, g->out))
		return -EIO;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* "check" passes; the line printed when it does not. */
static bool tgt_ok(struct itgt *g, char *line, size_t size)
{
	if (tgt_ask(g, "check", line, size))
		return false;
	if (strncmp(line, "check ok", 8) != 0) {
		fprintf(stderr, "fixture: %s\n", line);
		return false;
	}
	return true;
}

static long fact(const char *line, const char *key)
{
	char k[64];
	const char *p;
	int64_t v;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(line, k);
	if (!p)
		return -1000;
	p += strlen(k);
	{
		char w[24];
		size_t n = strcspn(p, " ");

		if (n >= sizeof(w))
			return -1000;
		memcpy(w, p, n);
		w[n] = '\0';
		if (xpc_parse_i64(w, INT64_MIN, INT64_MAX, &v))
			return -1000;
	}
	return (long)v;
}

/* Its stderr stayed empty (nothing the Agent or injection made it write). */
static bool tgt_quiet(const struct itgt *g)
{
	struct stat st;

	if (stat(g->err_path, &st))
		return false;
	if (st.st_size) {
		char buf[512] = "";
		FILE *f = fopen(g->err_path, "r");

		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			buf[n] = '\0';
			fclose(f);
		}
		fprintf(stderr, "fixture stderr: %s\n", buf);
	}
	return st.st_size == 0;
}

static void tgt_stop(struct itgt *g)
{
	int st;

	if (g->pid <= 0)
		return;
	if (write(g->in, "quit\n", 5) < 0) {
	}
	close(g->in);
	kill(g->pid, SIGKILL);
	waitpid(g->pid, &st, 0);
	fclose(g->out);
	unlink(g->err_path);
	xp_target_release(&g->t);
	g->pid = 0;
}

static char agent[PATH_MAX], badagent[PATH_MAX];

static int inject(struct itgt *g, uint32_t tid, struct xp_agent_inject_result *r,
		  struct xp_error *err)
{
	struct xp_agent_inject_opts o = { .tid = tid };

	xp_error_clear(err);
	return xp_agent_inject(&g->t, agent, &o, r, err);
}

static void show(const char *what, int rc, const struct xp_agent_inject_result *r,
		 const struct xp_error *err)
{
	if (rc)
		fprintf(stderr, "  %s: error %s: %s (reason %s)\n", what, xprobe_errname(rc),
			err->message,
			xp_error_detail_get(err, "reason") ? xp_error_detail_get(err, "reason") :
							     "-");
	else
		fprintf(stderr,
			"  %s: ok tid %u (%s, syscall %d) injected %d, %u calls, %u stops, stopped %.3f ms (calls %.3f), total %.3f ms\n",
			what, r->tid, xp_agent_inject_thread_kind_name(r->thread_kind),
			r->syscall_nr, r->injected, r->remote_calls, r->threads_tried,
			r->stopped_ns / 1e6, r->call_ns / 1e6, r->total_ns / 1e6);
}

static bool has_reason(const struct xp_error *err, const char *reason)
{
	const char *v = xp_error_detail_get(err, "reason");
	char want[64];

	snprintf(want, sizeof(want), "\"%s\"", reason);
	if (v && strcmp(v, want) == 0)
		return true;
	fprintf(stderr, "reason %s, wanted %s (%s)\n", v ? v : "(none)", want, err->message);
	return false;
}

/*
 * The bytes below a blocked thread's red zone (and the slack above it)
 * that injection may borrow: @size bytes up to its sp (/proc/.../syscall
 * gives sp).  The scratch (frame, vector image, call block, strings) lies
 * in [sp - 256 - r.scratch_bytes, sp - 256); what is further down is the
 * callees' free area.  Returns the byte count, 0 on failure.
 */
static size_t stack_window(pid_t pid, uint32_t tid, uint8_t *buf, size_t size)
{
	char path[96], text[512];
	uint64_t sp;
	size_t n;
	struct iovec l, r;
	char *last;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	last = strrchr(text, ' '); /* pc */
	if (!last)
		return 0;
	*last = '\0';
	last = strrchr(text, ' '); /* sp */
	if (!last || xpc_parse_hex_u64(last + 1, &sp))
		return 0;
	l = (struct iovec){ buf, size };
	r = (struct iovec){ (void *)(uintptr_t)(sp - size), size };
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)size ? size : 0;
}

/* Wait (at most 5 s) until @tid is blocked in syscall @nr: after answering
 * a command the fixture's main thread runs a little before its next
 * read(0), longer on a loaded machine, and /proc/TID/syscall says
 * "running" until then (a fresh-clone run failed stack_window on it). */
static bool wait_in_syscall(pid_t pid, uint32_t tid, int nr)
{
	char path[96], text[64], want[16];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/syscall", pid, tid);
	snprintf(want, sizeof(want), "%d ", nr);
	for (i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		size_t n;

		if (!f)
			return false;
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		if (strncmp(text, want, strlen(want)) == 0)
			return true;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return false;
}

/* ---- pure parts ------------------------------------------------------------ */

static void test_parse(void)
{
	int32_t nr = 99;

	CHECK(xp_agent_inject_parse_syscall("running\n", &nr) == 0 && nr == -2);
	CHECK(xp_agent_inject_parse_syscall("-1 0x7ffd1234 0x7f00aa\n", &nr) == 0 && nr == -1);
	CHECK(xp_agent_inject_parse_syscall("0 0x3 0x7ffc 0x1 0x0 0x0 0x0 0x7ffd 0x7f11\n", &nr) ==
		      0 &&
	      nr == 0);
	CHECK(xp_agent_inject_parse_syscall("202 0x5 0x80 0x0 0x0 0x0 0x0 0x1 0x2\n", &nr) == 0 &&
	      nr == 202);
	CHECK(xp_agent_inject_parse_syscall("", &nr) == -EINVAL);
	CHECK(xp_agent_inject_parse_syscall("runningx\n", &nr) == -EINVAL);
	CHECK(xp_agent_inject_parse_syscall("12a 0x1\n", &nr) == -EINVAL);
	CHECK(xp_agent_inject_parse_syscall("99999999999 0x1\n", &nr) == -EINVAL);

	CHECK(xp_agent_inject_classify(0) == XP_INJECT_THREAD_WAITING); /* read */
	CHECK(xp_agent_inject_classify(7) == XP_INJECT_THREAD_WAITING); /* poll */
	CHECK(xp_agent_inject_classify(35) == XP_INJECT_THREAD_WAITING); /* nanosleep */
	CHECK(xp_agent_inject_classify(230) == XP_INJECT_THREAD_WAITING); /* clock_nanosleep */
	CHECK(xp_agent_inject_classify(232) == XP_INJECT_THREAD_EINTR); /* epoll_wait */
	CHECK(xp_agent_inject_classify(202) == XP_INJECT_THREAD_FUTEX);
	CHECK(xp_agent_inject_classify(9) == XP_INJECT_THREAD_SYSCALL); /* mmap */
	CHECK(xp_agent_inject_classify(-2) == XP_INJECT_THREAD_RUNNING);
	CHECK(xp_agent_inject_classify(-1) == XP_INJECT_THREAD_OTHER);
	/* the order the choice follows */
	CHECK(XP_INJECT_THREAD_WAITING < XP_INJECT_THREAD_SYSCALL &&
	      XP_INJECT_THREAD_SYSCALL < XP_INJECT_THREAD_EINTR &&
	      XP_INJECT_THREAD_EINTR < XP_INJECT_THREAD_FUTEX &&
	      XP_INJECT_THREAD_FUTEX < XP_INJECT_THREAD_RUNNING);
	CHECK_STR(xp_agent_inject_thread_kind_name(XP_INJECT_THREAD_FUTEX), "futex");
	CHECK_STR(xp_agent_inject_thread_kind_name((enum xp_agent_inject_thread_kind)77),
		  "unknown");
}

static void test_verdict(void)
{
	struct xp_agent_ptrace_facts same = { .uid = 1000,
					      .gid = 1000,
					      .tuid = { 1000, 1000, 1000 },
					      .tgid = { 1000, 1000, 1000 },
					      .target_dumpable = true,
					      .yama_scope = -1 };
	struct xp_agent_ptrace_facts f;
	const char *reason;
	char msg[512];
	const uint64_t cap = 1ull << XP_CAP_SYS_PTRACE;

	CHECK(xp_agent_inject_ptrace_verdict(&same, &reason, msg, sizeof(msg)) ==
	      XP_PTRACE_ALLOWED);
	CHECK_STR(reason, "");
	f = same; /* a saved uid that differs (a setuid program that dropped) */
	f.tuid[2] = 0;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "uid");
	CHECK(strstr(msg, "CAP_SYS_PTRACE") != NULL);
	f.cap_eff = cap;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_ALLOWED);
	f = same;
	f.tgid[1] = 5;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "uid");
	f = same;
	f.target_dumpable = false;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "not_dumpable");
	f.cap_eff = cap;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_ALLOWED);
	f = same;
	f.yama_scope = 1;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_UNSURE);
	CHECK_STR(reason, "ptrace_scope");
	CHECK(strstr(msg, "PR_SET_PTRACER") != NULL);
	f.descendant = true;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_ALLOWED);
	f = same;
	f.yama_scope = 2;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "capability");
	f.cap_eff = cap;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_ALLOWED);
	f.yama_scope = 3; /* even root */
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "ptrace_scope");
	f = same;
	f.cap_eff = cap;
	f.tracer_pid = 77;
	CHECK(xp_agent_inject_ptrace_verdict(&f, &reason, msg, sizeof(msg)) == XP_PTRACE_DENIED);
	CHECK_STR(reason, "already_traced");
	CHECK(strstr(msg, "77") != NULL);
}

/* ---- injection into the three fixtures ------------------------------------- */

static void test_blocked(void)
{
	static const char *const roles[] = { "reader", "sleeper", "absleeper", "poller",
					     "futex",  "feeder",  "main" };
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	char line[1024];
	size_t i;
	int rc;

	fprintf(stderr, "blocked:\n");
	CHECK(tgt_start(&g, "blocked", NULL) == 0);
	/* let every thread reach its blocking call */
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	rc = inject(&g, 0, &r, &err);
	show("chosen", rc, &r, &err);
	CHECK(rc == 0);
	CHECK(r.injected && r.handle != 0 && r.start_status == 0 && r.start_address != 0);
	CHECK(r.thread_kind == XP_INJECT_THREAD_WAITING);
	CHECK(r.tid != tgt_tid(&g, "futex"));
	CHECK(r.remote_calls == 3); /* mmap, the stub (dlopen, dlsym, start), munmap */
	CHECK(r.scratch_bytes > 440 + 512 && r.scratch_bytes < 96 * 1024);
	CHECK(r.stopped_ns > 0 && r.stopped_ns <= r.total_ns && r.call_ns <= r.stopped_ns);
	CHECK(strstr(r.agent_path, "libinject_agent.so") != NULL);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_maps") == 1);
	CHECK(fact(line, "agent_loads") == 1);
	CHECK(fact(line, "agent_starts") == 1);
	/* each thread in turn, in whatever call it is blocked: start only */
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		bool is_main = strcmp(roles[i], "main") == 0;
		static uint8_t before[96 * 1024], after[96 * 1024];
		size_t nb = 0, na = 0;

		/* main stays in read(0) until the next command: the stack bytes
		 * the call borrowed read the same afterwards */
		if (is_main) {
			CHECK(wait_in_syscall(g.pid, tgt_tid(&g, "main"), 0));
			nb = stack_window(g.pid, tgt_tid(&g, "main"), before, sizeof(before));
		}
		rc = inject(&g, tgt_tid(&g, roles[i]), &r, &err);
		show(roles[i], rc, &r, &err);
		if (is_main) {
			CHECK(wait_in_syscall(g.pid, tgt_tid(&g, "main"), 0));
			na = stack_window(g.pid, tgt_tid(&g, "main"), after, sizeof(after));
			/* the scratch and the 256 bytes above it read as before */
			CHECK(nb > 0 && na == nb && r.scratch_bytes + 256 <= nb);
			CHECK(memcmp(before + nb - 256 - r.scratch_bytes,
				     after + nb - 256 - r.scratch_bytes,
				     r.scratch_bytes + 256) == 0);
		}
		CHECK(rc == 0 && !r.injected && r.start_status == 0 && r.remote_calls == 3);
		CHECK(r.tid == tgt_tid(&g, roles[i]));
		CHECK(tgt_ok(&g, line, sizeof(line)));
		CHECK(fact(line, "agent_maps") == 1 && fact(line, "agent_loads") == 1);
		CHECK(fact(line, "agent_starts") == (long)i + 2);
	}
	CHECK(tgt_quiet(&g));
	tgt_stop(&g);
	xp_error_clear(&err);
}

static void test_spin(void)
{
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	char line[1024];
	int rc, k;

	fprintf(stderr, "spin:\n");
	CHECK(tgt_start(&g, "spin", NULL) == 0);
	rc = inject(&g, 0, &r, &err);
	show("chosen", rc, &r, &err);
	CHECK(rc == 0 && r.injected && r.thread_kind == XP_INJECT_THREAD_RUNNING);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	/* the loops that keep values in registers, several times each */
	for (k = 0; k < 3; k++) {
		rc = inject(&g, tgt_tid(&g, "spin"), &r, &err);
		show("spin", rc, &r, &err);
		CHECK(rc == 0 && r.thread_kind == XP_INJECT_THREAD_RUNNING);
		rc = inject(&g, tgt_tid(&g, "spin_ymm"), &r, &err);
		show("spin_ymm", rc, &r, &err);
		CHECK(rc == 0 && r.thread_kind == XP_INJECT_THREAD_RUNNING);
	}
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_maps") == 1 && fact(line, "agent_starts") == 7);
	CHECK(tgt_quiet(&g));
	tgt_stop(&g);
	xp_error_clear(&err);
}

static void test_signal(void)
{
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	char line[1024];
	long hs = 0;
	int rc, k;

	fprintf(stderr, "signal:\n");
	CHECK(tgt_start(&g, "signal", NULL) == 0);
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	rc = inject(&g, 0, &r, &err);
	show("chosen", rc, &r, &err);
	CHECK(rc == 0 && r.injected);
	/* the thread that spends 25 of every 40 ms in its SIGALRM handler:
	 * until a start ran inside the handler (and a few more).  The pauses
	 * between tries vary (0-22 ms): back to back, the cycle could lock to
	 * the timer's phase, every alarm then landing during our own call
	 * (the handler runs on top of it) and no stop inside the handler */
	for (k = 0; k < 40 && hs < 3; k++) {
		nanosleep(&(struct timespec){ 0, (long)((k * 7) % 23) * 1000000 }, NULL);
		rc = inject(&g, tgt_tid(&g, "handled"), &r, &err);
		show("handled", rc, &r, &err);
		CHECK(rc == 0 && r.tid == tgt_tid(&g, "handled"));
		CHECK(tgt_ok(&g, line, sizeof(line)));
		hs = fact(line, "handler_starts");
	}
	CHECK(hs >= 3);
	CHECK(tgt_quiet(&g));
	tgt_stop(&g);
	xp_error_clear(&err);
}

/* ---- the frame (pure) ------------------------------------------------------- */

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/*
 * The frame's layout is the kernel's (rt_sigreturn reads it with no one to
 * check it for us): the fields at their uapi offsets, the restart prepared,
 * the XSAVE software bytes and both magic words, an sigaltstack mode the
 * kernel refuses.  The live kill storms prove it restores real threads.
 */
static void test_frame(void)
{
	static uint8_t xs[1088], fp[1088 + 4], frame[XP_SIGFRAME_SIZE];
	struct xp_agent_sigframe_in in = { 0 };
	struct user_regs_struct r = { 0 }, o;
	uint64_t xcr0 = 0x7;

	fprintf(stderr, "frame:\n");
	/* restart: each code re-runs the syscall from its registers */
	r.orig_rax = 0;
	r.rip = 0x401002;
	for (int code = 512; code <= 516; code++) {
		r.rax = (unsigned long long)-code;
		xp_agent_inject_restart_regs(&r, &o);
		if (code == 515) { /* not a restart code */
			CHECK(o.rax == r.rax && o.rip == r.rip);
			continue;
		}
		CHECK(o.rax == 0 && o.rip == 0x401000);
	}
	r.rax = (unsigned long long)-EINTR; /* epoll_wait after a stop: EINTR stays */
	xp_agent_inject_restart_regs(&r, &o);
	CHECK(o.rax == r.rax && o.rip == r.rip);
	r.orig_rax = (unsigned long long)-1; /* not in a syscall: as it is */
	r.rax = (unsigned long long)-512;
	xp_agent_inject_restart_regs(&r, &o);
	CHECK(o.rax == r.rax && o.rip == r.rip);

	/* the frame */
	memcpy(xs + 464, &xcr0, sizeof(xcr0)); /* ptrace's first software word: XCR0 */
	r.orig_rax = 7; /* poll */
	r.rax = (unsigned long long)-516;
	r.rip = 0x7f0000001234;
	r.rsp = 0x7ffc00001000;
	r.rbx = 0x1111;
	r.r15 = 0x1515;
	r.eflags = 0x246;
	r.cs = 0x33;
	r.ss = 0x2b;
	in.regs = r;
	in.xstate = xs;
	in.xstate_len = sizeof(xs);
	in.xsave = true;
	in.sigmask = 0x4002;
	in.frame_addr = 0x7ffc00000008;
	in.fpstate_addr = 0x7ffc00000200;
	CHECK(xp_agent_inject_fpstate_len(&in) == sizeof(xs) + 4);
	CHECK(xp_agent_inject_sigframe(&in, frame, fp) == 0);
	CHECK(u64_at(frame, 8) ==
	      0x7); /* uc_flags: FP_XSTATE | SIGCONTEXT_SS | STRICT_RESTORE_SS */
	CHECK(u32_at(frame, 32) == 3); /* ss_flags: ONSTACK|DISABLE, refused */
	CHECK(u64_at(frame, 48 + 7 * 8) == 0x1515); /* r15 */
	CHECK(u64_at(frame, 48 + 11 * 8) == 0x1111); /* rbx */
	CHECK(u64_at(frame, 48 + 13 * 8) == 7); /* rax: the syscall again */
	CHECK(u64_at(frame, 48 + 15 * 8) == 0x7ffc00001000); /* rsp */
	CHECK(u64_at(frame, 48 + 16 * 8) == 0x7f0000001232); /* rip over the syscall */
	CHECK(u64_at(frame, 48 + 17 * 8) == 0x246);
	CHECK((u64_at(frame, 48 + 18 * 8) & 0xffff) == 0x33); /* cs */
	CHECK((u64_at(frame, 48 + 18 * 8) >> 48) == 0x2b); /* ss */
	CHECK(u64_at(frame, 48 + 23 * 8) == 0x7ffc00000200); /* fpstate */
	CHECK(u64_at(frame, 48 + 256) == 0x4002); /* uc_sigmask */
	CHECK(u32_at(fp, 464) == 0x46505853u); /* FP_XSTATE_MAGIC1 */
	CHECK(u32_at(fp, 468) == sizeof(xs) + 4); /* extended_size */
	CHECK(u64_at(fp, 472) == 0x7); /* xfeatures */
	CHECK(u32_at(fp, 480) == sizeof(xs)); /* xstate_size */
	CHECK(u32_at(fp, sizeof(xs)) == 0x46505845u); /* FP_XSTATE_MAGIC2 */
	/* misaligned: refused */
	in.frame_addr += 8;
	CHECK(xp_agent_inject_sigframe(&in, frame, fp) == -EINVAL);
	in.frame_addr -= 8;
	in.fpstate_addr += 16;
	CHECK(xp_agent_inject_sigframe(&in, frame, fp) == -EINVAL);
	/* the stub's code ends in rt_sigreturn where the header says */
	CHECK(xp_agent_inject_stub_len > xp_agent_inject_stub_sigreturn_off);
	CHECK(xp_agent_inject_stub_code[xp_agent_inject_stub_sigreturn_off - 2] == 0x0f &&
	      xp_agent_inject_stub_code[xp_agent_inject_stub_sigreturn_off - 1] == 0x05);
	CHECK(xp_agent_inject_stub_park_end_off + 7 == xp_agent_inject_stub_sigreturn_off);
}

/* ---- failures restore the target ------------------------------------------ */

static void ctl_file(const char *dir, const char *name, bool on)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (on) {
		int fd = open(p, O_CREAT | O_WRONLY, 0600);

		if (fd >= 0)
			close(fd);
	} else {
		unlink(p);
	}
}

static void test_failures(void)
{
	struct xp_agent_inject_opts o = { 0 };
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	char ctl[] = "/tmp/xpi-ctl-XXXXXX", line[1024];
	struct spawn_opts so = { .ctl = ctl };
	struct itgt g;
	uint64_t t0;
	int rc;

	fprintf(stderr, "failures:\n");
	CHECK(mkdtemp(ctl) != NULL);
	CHECK(tgt_start(&g, "blocked", &so) == 0);
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);

	/* dlopen refuses the library: dlerror's words, target untouched */
	o.tid = tgt_tid(&g, "sleeper");
	rc = xp_agent_inject(&g.t, badagent, &o, &r, &err);
	show("bad agent", rc, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && has_reason(&err, "dlopen"));
	CHECK(strstr(err.message, "xpi_no_such_function") != NULL);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_maps") == 0);

	/* the start faults: discarded, thread restored */
	ctl_file(ctl, "crash", true);
	rc = inject(&g, tgt_tid(&g, "reader"), &r, &err);
	show("crash", rc, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && has_reason(&err, "remote_fault"));
	CHECK(strstr(err.message, "Segmentation fault") != NULL);
	ctl_file(ctl, "crash", false);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_maps") == 1 && fact(line, "agent_starts") == 1);

	/* the start hangs: abandoned after the timeout, thread restored; the
	 * sleeper's nanosleep must not resume the Agent's 10 s sleep */
	ctl_file(ctl, "hang", true);
	o.tid = tgt_tid(&g, "sleeper");
	o.call_timeout_ms = 300;
	t0 = (uint64_t)time(NULL);
	xp_error_clear(&err);
	rc = xp_agent_inject(&g.t, agent, &o, &r, &err);
	show("hang", rc, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && has_reason(&err, "timeout"));
	CHECK(strstr(err.message, "abandoned") != NULL);
	CHECK((uint64_t)time(NULL) - t0 < 3);
	CHECK(tgt_ok(&g, line, sizeof(line)));

	/* the target is killed while the call hangs: TARGET_EXITED at once */
	{
		struct itgt k;
		pid_t killer;

		CHECK(tgt_start(&k, "blocked", &so) == 0);
		o.tid = tgt_tid(&k, "reader");
		o.call_timeout_ms = 5000;
		killer = fork();
		if (killer == 0) {
			nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
			kill(k.pid, SIGKILL);
			_exit(0);
		}
		t0 = (uint64_t)time(NULL);
		xp_error_clear(&err);
		rc = xp_agent_inject(&k.t, agent, &o, &r, &err);
		show("killed", rc, &r, &err);
		CHECK(rc == -XPROBE_E_TARGET_EXITED);
		CHECK((uint64_t)time(NULL) - t0 < 4);
		waitpid(killer, NULL, 0);
		tgt_stop(&k);
	}
	ctl_file(ctl, "hang", false);

	/* start says no */
	ctl_file(ctl, "fail", true);
	rc = inject(&g, 0, &r, &err);
	show("fail", rc, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && r.start_status == -XPROBE_E_INTERNAL);
	CHECK(xp_error_detail_get(&err, "start_status") != NULL);
	ctl_file(ctl, "fail", false);
	ctl_file(ctl, "refuse", true);
	rc = inject(&g, 0, &r, &err);
	show("refuse", rc, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "agent_refused"));
	ctl_file(ctl, "refuse", false);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(tgt_quiet(&g));

	/* a stopped target is refused, and fine once continued */
	kill(g.pid, SIGSTOP);
	nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	rc = inject(&g, 0, &r, &err);
	show("stopped", rc, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && strstr(err.message, "stopped"));
	kill(g.pid, SIGCONT);
	CHECK(tgt_ok(&g, line, sizeof(line)));

	/* already traced by someone else (this thread) */
	CHECK(ptrace(PTRACE_SEIZE, g.pid, 0, 0) == 0);
	rc = inject(&g, 0, &r, &err);
	show("traced", rc, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "already_traced"));
	{
		int st;

		ptrace(PTRACE_INTERRUPT, g.pid, 0, 0);
		waitpid(g.pid, &st, __WALL);
		CHECK(ptrace(PTRACE_DETACH, g.pid, 0, 0) == 0);
	}
	CHECK(tgt_ok(&g, line, sizeof(line)));
	tgt_stop(&g);

	/* not into ourselves; not into a process that is gone */
	{
		struct xp_target self;

		CHECK(xp_target_identify((uint32_t)getpid(), &self, &err) == 0);
		xp_error_clear(&err);
		rc = xp_agent_inject(&self, agent, NULL, &r, &err);
		CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "self"));
		xp_target_release(&self);
	}
	xp_error_clear(&err);
	rc = xp_agent_inject(&g.t, agent, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_TARGET_EXITED || rc == -XPROBE_E_TARGET_NOT_FOUND);
	rmdir(ctl);
	xp_error_clear(&err);
}

/* ---- refusals ---------------------------------------------------------------- */

/* Copy @src to @dst with @mode. */
static int copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(dst, O_CREAT | O_TRUNC | O_WRONLY, mode);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return chmod(dst, mode) ? -errno : 0;
}

static void test_untrusted(void)
{
	char dir[] = "/tmp/xpi-trust-XXXXXX", p[PATH_MAX], sub[PATH_MAX], line[1024];
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	int rc;

	fprintf(stderr, "untrusted agent files:\n");
	CHECK(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0);
	CHECK(tgt_start(&g, "blocked", NULL) == 0);

	snprintf(p, sizeof(p), "%s/libinject_agent_gw.so", dir);
	CHECK(copy_file(agent, p, 0664) == 0);
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "agent_untrusted"));
	CHECK(strstr(err.message, "writable by group or others") != NULL);
	unlink(p);
	xp_error_clear(&err);

	snprintf(p, sizeof(p), "%s/libinject_agent_owner.so", dir);
	CHECK(copy_file(agent, p, 0755) == 0 && chown(p, 4321, 4321) == 0);
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "agent_untrusted"));
	CHECK(strstr(err.message, "owned by uid 4321") != NULL);
	unlink(p);
	xp_error_clear(&err);

	/* a file that is fine in a directory anyone may write into */
	snprintf(sub, sizeof(sub), "%s/open", dir);
	CHECK(mkdir(sub, 0777) == 0 && chmod(sub, 0777) == 0);
	snprintf(p, sizeof(p), "%s/libinject_agent_dir.so", sub);
	CHECK(copy_file(agent, p, 0755) == 0);
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "agent_untrusted"));
	CHECK(strstr(err.message, "directory") != NULL);
	/* ... which the sticky bit makes safe (as /tmp) */
	CHECK(chmod(sub, 01777) == 0);
	xp_error_clear(&err);
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	show("sticky dir", rc, &r, &err);
	CHECK(rc == 0 && r.injected);
	unlink(p);
	rmdir(sub);
	xp_error_clear(&err);

	/* missing, a directory, not an Agent */
	snprintf(p, sizeof(p), "%s/nothing.so", dir);
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && strstr(err.message, "No such file"));
	xp_error_clear(&err);
	rc = xp_agent_inject(&g.t, dir, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "agent_untrusted"));
	xp_error_clear(&err);
	fx_path(p, sizeof(p), "libtarget_shlib.so");
	rc = xp_agent_inject(&g.t, p, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED && strstr(err.message, "not an xprobe Agent"));
	xp_error_clear(&err);
	rc = xp_agent_inject(&g.t, NULL, NULL, &r, &err);
	CHECK(rc == -XPROBE_E_CUPTI_AGENT_NOT_LOADED);
	xp_error_clear(&err);

	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_maps") == 1); /* the sticky-directory copy */
	tgt_stop(&g);
	rmdir(dir);
	xp_error_clear(&err);
}

static void test_mount_ns(void)
{
	struct spawn_opts so = { .unshare_mnt = true };
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	char line[1024];
	int rc;

	fprintf(stderr, "mount namespace:\n");
	CHECK(tgt_start(&g, "blocked", &so) == 0);
	rc = inject(&g, 0, &r, &err);
	show("unshared", rc, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "mount_namespace"));
	CHECK(xp_exit_code(XPROBE_E_PERMISSION_DENIED) == 4);
	CHECK(r.stopped_ns == 0);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	tgt_stop(&g);
	xp_error_clear(&err);
}

static void test_seccomp(void)
{
	struct spawn_opts so = { .flag = "--seccomp" };
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	int rc;

	fprintf(stderr, "seccomp:\n");
	CHECK(tgt_start(&g, "blocked", &so) == 0);
	rc = inject(&g, 0, &r, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && has_reason(&err, "seccomp"));
	tgt_stop(&g);
	xp_error_clear(&err);
}

/*
 * Inject as @uid (a forked child that dropped root) into @g; the child
 * reports the code and the reason through a pipe.
 */
static int inject_as(uid_t uid, struct itgt *g, const char *agent_path, char *reason, size_t size)
{
	int p[2], st, rc = 0;
	pid_t c;

	reason[0] = '\0';
	if (pipe(p))
		return -errno;
	c = fork();
	if (c == 0) {
		struct xp_agent_inject_result r;
		struct xp_error err = { 0 };
		char msg[256];
		const char *why;

		close(p[0]);
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(2);
		rc = xp_agent_inject(&g->t, agent_path, NULL, &r, &err);
		why = xp_error_detail_get(&err, "reason");
		snprintf(msg, sizeof(msg), "%d %s %s", rc, why ? why : "-", err.message);
		if (write(p[1], msg, strlen(msg)) < 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	{
		ssize_t n = read(p[0], reason, size - 1);
		int64_t v;
		char num[16];
		size_t k;

		reason[n > 0 ? n : 0] = '\0';
		k = strcspn(reason, " ");
		if (k < sizeof(num)) {
			memcpy(num, reason, k);
			num[k] = '\0';
			if (xpc_parse_i64(num, INT32_MIN, INT32_MAX, &v) == 0)
				rc = (int)v;
		}
	}
	close(p[0]);
	waitpid(c, &st, 0);
	return rc;
}

static void test_ptrace_denied(void)
{
	char dir[] = "/tmp/xpi-uid-XXXXXX", prog[PATH_MAX], lib[PATH_MAX], src[PATH_MAX];
	char why[512], line[1024];
	struct spawn_opts so = { .uid = NOBODY, .prog = prog };
	struct itgt g;
	int rc;

	fprintf(stderr, "ptrace denied:\n");
	/* copies in a world-readable directory: the build tree may not be */
	CHECK(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0);
	snprintf(prog, sizeof(prog), "%s/inject_target", dir);
	snprintf(lib, sizeof(lib), "%s/libinject_agent.so", dir);
	fx_path(src, sizeof(src), "inject_target");
	CHECK(copy_file(src, prog, 0755) == 0 && copy_file(agent, lib, 0755) == 0);

	/* target nobody, injector a third uid */
	CHECK(tgt_start(&g, "blocked", &so) == 0);
	rc = inject_as(THIRD_UID, &g, lib, why, sizeof(why));
	fprintf(stderr, "  uid %u -> nobody: %d %s\n", THIRD_UID, rc, why);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && strstr(why, " \"uid\" ") != NULL);
	CHECK(strstr(why, "CAP_SYS_PTRACE") != NULL);
	/* the same uid may */
	rc = inject_as(NOBODY, &g, lib, why, sizeof(why));
	fprintf(stderr, "  nobody -> nobody: %d %s\n", rc, why);
	CHECK(rc == 0);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	CHECK(fact(line, "agent_starts") == 1);
	tgt_stop(&g);

	/* a target that made itself non-dumpable: refused to its own uid */
	so.flag = "--nondumpable";
	CHECK(tgt_start(&g, "blocked", &so) == 0);
	rc = inject_as(NOBODY, &g, lib, why, sizeof(why));
	fprintf(stderr, "  nobody -> nobody, not dumpable: %d %s\n", rc, why);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED && strstr(why, " \"not_dumpable\" ") != NULL);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	tgt_stop(&g);

	unlink(prog);
	unlink(lib);
	rmdir(dir);
}

/* ---- 200 cycles --------------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_cycles(void)
{
	static uint64_t stopped[200];
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct itgt g;
	char line[1024];
	long fds0;
	int i, failures = 0;

	fprintf(stderr, "200 cycles:\n");
	CHECK(tgt_start(&g, "blocked", NULL) == 0);
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	CHECK(tgt_ok(&g, line, sizeof(line)));
	fds0 = fact(line, "fds");
	for (i = 0; i < 200; i++) {
		int rc = inject(&g, 0, &r, &err);

		if (rc || r.start_status || r.injected != (i == 0)) {
			failures++;
			show("cycle", rc, &r, &err);
		}
		stopped[i] = r.stopped_ns;
		if (i % 50 == 49) {
			CHECK(tgt_ok(&g, line, sizeof(line)));
			CHECK(fact(line, "agent_maps") == 1 && fact(line, "agent_loads") == 1);
			CHECK(fact(line, "agent_starts") == i + 1);
			CHECK(fact(line, "fds") == fds0);
		}
	}
	CHECK(failures == 0);
	qsort(stopped + 1, 199, sizeof(stopped[0]), u64_cmp);
	fprintf(stderr,
		"  first (dlopen) stopped %.3f ms; start-only median %.3f ms, max %.3f ms\n",
		stopped[0] / 1e6, stopped[100] / 1e6, stopped[199] / 1e6);
	CHECK(stopped[100] < 5000000ull); /* the goal: at most 5 ms */
	CHECK(tgt_quiet(&g));
	tgt_stop(&g);
	xp_error_clear(&err);
}

/* ---- driver ------------------------------------------------------------------ */

/* One inject / HELLO / ARM / CLOSE against the real Agent. */
static int cycle(struct xp_target *t, const char *agent_path, const struct xp_agent_inject_opts *o,
		 struct xp_agent_inject_result *r, uint32_t *features, struct xp_error *err)
{
	struct xp_agent_conn conn = { .fd = -1 };
	struct xprobe_agent_req req;
	struct xprobe_agent_reply rep;
	char path[XP_AGENT_PATH_MAX];
	struct stat st;
	int rc, i;

	rc = xp_agent_inject(t, agent_path, o, r, err);
	if (rc)
		return rc;
	rc = xp_agent_connect(t, 0, &conn, err);
	if (rc)
		return rc;
	*features = conn.hello.features;
	if (!(conn.hello.features & XPROBE_AGENT_F_INJECTED)) {
		xp_agent_disconnect(&conn);
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "HELLO features 0x%x lack XPROBE_AGENT_F_INJECTED",
				    conn.hello.features);
	}
	xp_agent_req_init(&req, XPROBE_AGENT_OP_ARM);
	req.mode = XPROBE_AGENT_MODE_EXACT;
	req.capacity = 64;
	req.nfilters = 1;
	req.filters[0].kind = XPROBE_AGENT_KIND_NVTX_RANGE;
	req.filters[0].name_match = XPROBE_AGENT_NAME_ANY;
	rc = xp_agent_arm(&conn, &req, &rep, err);
	if (!rc)
		rc = xp_agent_close(&conn, &rep, err);
	xp_agent_disconnect(&conn);
	if (rc)
		return rc;
	/* an injected Agent's CLOSE removes its socket before replying */
	rc = xp_agent_socket_path(t, path, sizeof(path), err);
	if (rc)
		return rc;
	for (i = 0; i < 100 && stat(path, &st) == 0; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (i == 100)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "%s is still there after CLOSE",
				    path);
	return 0;
}

static int cycles(struct xp_target *t, const char *agent_path, const struct xp_agent_inject_opts *o,
		  unsigned n)
{
	uint64_t *stopped = calloc(n, sizeof(*stopped)), *total = calloc(n, sizeof(*total));
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	unsigned i, failures = 0, injected = 0;
	uint32_t features = 0;

	if (!stopped || !total)
		return 1;
	for (i = 0; i < n; i++) {
		int rc;

		xp_error_clear(&err);
		rc = cycle(t, agent_path, o, &r, &features, &err);
		if (rc) {
			failures++;
			fprintf(stderr, "cycle %u: %s: %s\n", i, xprobe_errname(rc), err.message);
		}
		injected += r.injected;
		stopped[i] = r.stopped_ns;
		total[i] = r.total_ns;
	}
	qsort(stopped, n, sizeof(*stopped), u64_cmp);
	qsort(total, n, sizeof(*total), u64_cmp);
	printf("cycles %u failures %u injected %u features=0x%x stopped_median_ns=%llu stopped_max_ns=%llu total_median_ns=%llu\n",
	       n, failures, injected, features, (unsigned long long)stopped[n / 2],
	       (unsigned long long)stopped[n - 1], (unsigned long long)total[n / 2]);
	free(stopped);
	free(total);
	xp_error_clear(&err);
	return failures ? 1 : 0;
}

static int driver(int argc, char **argv)
{
	struct xp_agent_inject_opts o = { 0 };
	struct xp_agent_inject_result r;
	struct xp_error err = { 0 };
	struct xp_target t;
	uint64_t v, ncycles = 0;
	int i, rc;

	if (argc < 4 || xpc_parse_u64(argv[2], 1, UINT32_MAX, &v)) {
		fprintf(stderr, "usage: %s --inject PID AGENT [--tid TID] [--call-timeout-ms MS]\n",
			argv[0]);
		return 2;
	}
	for (i = 4; i + 1 < argc; i += 2) {
		uint64_t n;

		if (xpc_parse_u64(argv[i + 1], 1, UINT32_MAX, &n))
			return 2;
		if (strcmp(argv[i], "--tid") == 0)
			o.tid = (uint32_t)n;
		else if (strcmp(argv[i], "--call-timeout-ms") == 0)
			o.call_timeout_ms = (uint32_t)n;
		else if (strcmp(argv[i], "--cycles") == 0)
			ncycles = n;
		else
			return 2;
	}
	rc = xp_target_identify((uint32_t)v, &t, &err);
	if (!rc && ncycles) {
		rc = cycles(&t, argv[3], &o, (unsigned)ncycles);
		xp_target_release(&t);
		return rc;
	}
	if (!rc)
		rc = xp_agent_inject(&t, argv[3], &o, &r, &err);
	if (rc) {
		const char *why = xp_error_detail_get(&err, "reason");

		printf("error %s reason=%s %s\n", xprobe_errname(rc), why ? why : "-", err.message);
		xp_error_clear(&err);
		return xp_exit_code(-rc);
	}
	xp_error_clear(&err); /* the target's details, added before success */
	printf("ok injected=%d start_status=%d tid=%u kind=%s syscall=%d threads_tried=%u remote_calls=%u requests=%u steps=%u total_ns=%llu stopped_ns=%llu call_ns=%llu agent=%s\n",
	       r.injected, r.start_status, r.tid, xp_agent_inject_thread_kind_name(r.thread_kind),
	       r.syscall_nr, r.threads_tried, r.remote_calls, r.requests, r.steps,
	       (unsigned long long)r.total_ns, (unsigned long long)r.stopped_ns,
	       (unsigned long long)r.call_ns, r.agent_path);
	xp_target_release(&t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--inject") == 0)
		return driver(argc, argv);
	fx_path(agent, sizeof(agent), "libinject_agent.so");
	fx_path(badagent, sizeof(badagent), "libinject_badagent.so");
	signal(SIGPIPE, SIG_IGN);
	test_parse();
	test_verdict();
	test_frame();
	test_blocked();
	test_spin();
	test_signal();
	test_failures();
	test_untrusted();
	test_mount_ns();
	test_seccomp();
	test_ptrace_denied();
	test_cycles();
	TEST_MAIN_END();
}
