/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uprobe_link.c - the uprobe link kinds of the running kernel and the
 * uprobe_multi link itself (uprobe_link.h says why).
 *
 * Debian 12's libbpf (1.1) and its uapi headers predate the uprobe_multi
 * link, so this file carries the kernel's ABI itself: the attach type
 * numbers (enum bpf_attach_type: BPF_TRACE_UPROBE_MULTI = 48,
 * BPF_TRACE_UPROBE_SESSION = 57), the return flag
 * (BPF_F_UPROBE_MULTI_RETURN = 1) and the layout of union bpf_attr's
 * link_create member for this link (struct link_create_multi below: four
 * __u32 words, then the uprobe_multi member of the link_create union).
 * The kernel reads `size` bytes of the attribute and zero-fills the rest,
 * so a shorter struct than a newer kernel's union is what it expects.
 * These values are uapi: the kernel never renumbers or moves them.
 *
 * The probe, once per process: load a two-instruction kprobe program
 * with the kind's expected attach type (a kernel that does not know the
 * type refuses the load), then ask for a link on "/" -- a directory,
 * which a kernel that implements the link refuses with EBADF after it
 * has checked everything else.  For uprobe_multi one more question: a
 * negative pid is refused with EINVAL only by kernels whose pid filter
 * covers the whole process (the first uprobe_multi kernels filtered one
 * thread and would miss the target's other threads); those are taken as
 * lacking the link.  Nothing is attached anywhere by the probe.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "../../common/env_hooks.h"
#include "../process/procfs.h"
#include "uprobe_link.h"

#define XP_BPF_TRACE_UPROBE_MULTI 48
#define XP_BPF_TRACE_UPROBE_SESSION 57
#define XP_BPF_F_UPROBE_MULTI_RETURN 1u

/* union bpf_attr's BPF_LINK_CREATE part for a uprobe_multi link */
struct link_create_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	struct {
		__aligned_u64 path;
		__aligned_u64 offsets;
		__aligned_u64 ref_ctr_offsets;
		__aligned_u64 cookies;
		__u32 cnt;
		__u32 flags;
		__u32 pid;
	} uprobe_multi;
};

static int link_create(int prog_fd, int type, const char *path, const uint64_t *offsets,
		       const uint64_t *ref_ctr, const uint64_t *cookies, uint32_t cnt,
		       uint32_t flags, uint32_t pid)
{
	struct link_create_multi a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = (__u32)type;
	a.uprobe_multi.path = (__u64)(unsigned long)path;
	a.uprobe_multi.offsets = (__u64)(unsigned long)offsets;
	a.uprobe_multi.ref_ctr_offsets = (__u64)(unsigned long)ref_ctr;
	a.uprobe_multi.cookies = (__u64)(unsigned long)cookies;
	a.uprobe_multi.cnt = cnt;
	a.uprobe_multi.flags = flags;
	a.uprobe_multi.pid = pid;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

/* A kprobe program "return 0" loaded for links of @type, or -errno. */
static int probe_prog(int type)
{
	struct bpf_insn insns[2];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = (enum bpf_attach_type)type);

	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "xp_probe", "GPL", insns, 2, &o);
}

static bool kernel_has(int type)
{
	uint64_t offset = 0;
	bool ok = false;
	int prog, rc;

	prog = probe_prog(type);
	if (prog < 0)
		return false;
	rc = link_create(prog, type, "/", &offset, NULL, NULL, 1, 0, 0);
	if (rc >= 0)
		close(rc);
	else if (rc == -EBADF)
		ok = true;
	if (ok && type == XP_BPF_TRACE_UPROBE_MULTI) {
		rc = link_create(prog, type, "/", &offset, NULL, NULL, 1, 0, (uint32_t)-1);
		if (rc >= 0)
			close(rc);
		ok = rc == -EINVAL;
	}
	close(prog);
	return ok;
}

static enum xp_uprobe_kind kernel_kind;
static pthread_once_t kernel_kind_once = PTHREAD_ONCE_INIT;

static void kernel_kind_probe(void)
{
	if (!kernel_has(XP_BPF_TRACE_UPROBE_MULTI))
		kernel_kind = XP_UPROBE_PERF;
	else if (kernel_has(XP_BPF_TRACE_UPROBE_SESSION))
		kernel_kind = XP_UPROBE_SESSION;
	else
		kernel_kind = XP_UPROBE_MULTI;
}

enum xp_uprobe_kind xp_uprobe_kernel_kind(void)
{
	pthread_once(&kernel_kind_once, kernel_kind_probe);
	return kernel_kind;
}

/* The best kind the test hook allows (XP_UPROBE_SESSION: no limit). */
static enum xp_uprobe_kind forced_kind(void)
{
	const char *v = xpc_test_hook_env("XPROBE_TEST_UPROBE_LINK");

	if (v && !strcmp(v, "perf"))
		return XP_UPROBE_PERF;
	if (v && !strcmp(v, "multi"))
		return XP_UPROBE_MULTI;
	return XP_UPROBE_SESSION;
}

enum xp_uprobe_kind xp_uprobe_kind(void)
{
	enum xp_uprobe_kind k = xp_uprobe_kernel_kind(), f = forced_kind();

	return k < f ? k : f;
}

enum xp_uprobe_kind xp_uprobe_kind_for(uint32_t pid)
{
	if (pid && xp_proc_attach_pid(pid) != pid)
		return XP_UPROBE_PERF;
	return xp_uprobe_kind();
}

const char *xp_uprobe_kind_name(enum xp_uprobe_kind k)
{
	switch (k) {
	case XP_UPROBE_PERF:
		return "perf_event";
	case XP_UPROBE_MULTI:
		return "uprobe_multi";
	case XP_UPROBE_SESSION:
		return "uprobe_session";
	}
	return "unknown";
}

int xp_uprobe_attach_type(enum xp_uprobe_kind k)
{
	switch (k) {
	case XP_UPROBE_PERF:
		return 0;
	case XP_UPROBE_MULTI:
		return XP_BPF_TRACE_UPROBE_MULTI;
	case XP_UPROBE_SESSION:
		return XP_BPF_TRACE_UPROBE_SESSION;
	}
	return 0;
}

int xp_uprobe_multi_attach(int prog_fd, const struct xp_uprobe_multi *m)
{
	if (!m->cnt || !m->path)
		return -EINVAL;
	return link_create(prog_fd,
			   m->session ? XP_BPF_TRACE_UPROBE_SESSION : XP_BPF_TRACE_UPROBE_MULTI,
			   m->path, m->offsets, m->ref_ctr_offsets, m->cookies, m->cnt,
			   !m->session && m->retprobe ? XP_BPF_F_UPROBE_MULTI_RETURN : 0, m->pid);
}

static void *close_link(void *arg)
{
	int *fd = arg;

	*fd = close(*fd) ? -errno : 0;
	return NULL;
}

int xp_uprobe_links_close(int *fds, size_t n)
{
	pthread_t th[XP_UPROBE_CLOSE_MAX];
	bool started[XP_UPROBE_CLOSE_MAX] = { false };
	int rc = 0;
	size_t i;

	/* the first on this thread, the others one thread each (up to the
	 * bound; a thread that cannot start leaves its link to this one) */
	for (i = 1; i < n && i < XP_UPROBE_CLOSE_MAX; i++)
		started[i] = !pthread_create(&th[i], NULL, close_link, &fds[i]);
	for (i = 0; i < n; i++)
		if (i >= XP_UPROBE_CLOSE_MAX || !started[i])
			close_link(&fds[i]);
	for (i = 0; i < n; i++) {
		if (i < XP_UPROBE_CLOSE_MAX && started[i])
			pthread_join(th[i], NULL);
		if (!rc && fds[i] < 0)
			rc = fds[i];
		fds[i] = -1;
	}
	return rc;
}

/* --- the warm-up ----------------------------------------------------------- */

static pthread_t warm_thread;
static bool warm_started;

/* The warm-up probe's site: never called (a breakpoint here costs nothing). */
__attribute__((noinline, used)) void xp_uprobe_warm_target(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The file offset of @addr in this process's executable, or 0 (the one
 * maps reader, procfs.h). */
static uint64_t self_file_offset(uintptr_t addr)
{
	struct xp_maps m;
	uint64_t found = 0;
	size_t bad;

	if (xp_maps_read_pid((uint32_t)getpid(), &m, &bad))
		return 0;
	for (size_t i = 0; i < m.n; i++) {
		const struct xp_map_entry *e = &m.v[i];

		if (addr >= e->start && addr < e->end && xp_map_is_exec(e)) {
			found = addr - e->start + e->offset;
			break;
		}
	}
	xp_maps_free(&m);
	return found;
}

static void *warm_run(void *arg)
{
	uint64_t offset;
	int prog;

	(void)arg;
	/* no kind probe first (it costs about a millisecond): a kernel
	 * without uprobe_multi refuses the program or the link, and nothing
	 * is left behind */
	if (forced_kind() == XP_UPROBE_PERF)
		return NULL;
	offset = self_file_offset((uintptr_t)xp_uprobe_warm_target);
	if (!offset)
		return NULL;
	prog = probe_prog(XP_BPF_TRACE_UPROBE_MULTI);
	if (prog < 0)
		return NULL;
	/* kept open to the end: the release child closes it with the rest
	 * (link_release.h), or this process's exit does */
	(void)link_create(prog, XP_BPF_TRACE_UPROBE_MULTI, "/proc/self/exe", &offset, NULL, NULL, 1,
			  0, (uint32_t)getpid());
	close(prog); /* the link holds the program */
	return NULL;
}

void xp_uprobe_warm_start(void)
{
	if (warm_started)
		return;
	warm_started = !pthread_create(&warm_thread, NULL, warm_run, NULL);
}

void xp_uprobe_warm_join(void)
{
	if (!warm_started)
		return;
	pthread_join(warm_thread, NULL);
	warm_started = false;
}
