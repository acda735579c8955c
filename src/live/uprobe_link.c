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
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "../../common/env_hooks.h"
#include "uprobe_link.h"

/* links one release hands to its child at most (more: closed here) */
#define XP_LIVE_RELEASE_MAX 64
#include "../process/procfs.h"

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

enum xp_uprobe_kind xp_uprobe_kernel_kind(void)
{
	/* 0: not probed yet, else kind + 1 */
	static int cached;
	int k = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);

	if (k)
		return (enum xp_uprobe_kind)(k - 1);
	if (!kernel_has(XP_BPF_TRACE_UPROBE_MULTI))
		k = XP_UPROBE_PERF;
	else if (kernel_has(XP_BPF_TRACE_UPROBE_SESSION))
		k = XP_UPROBE_SESSION;
	else
		k = XP_UPROBE_MULTI;
	__atomic_store_n(&cached, k + 1, __ATOMIC_RELEASE);
	return (enum xp_uprobe_kind)k;
}

enum xp_uprobe_kind xp_uprobe_kind(void)
{
	enum xp_uprobe_kind k = xp_uprobe_kernel_kind();
	const char *v = xpc_test_hook_env("XPROBE_TEST_UPROBE_LINK");

	if (v && !strcmp(v, "perf"))
		return XP_UPROBE_PERF;
	if (v && !strcmp(v, "multi") && k > XP_UPROBE_MULTI)
		return XP_UPROBE_MULTI;
	return k;
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

static int fd_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The child: every inherited descriptor but the links closed, the
 * standard streams on /dev/null, then the links (only async-signal-safe
 * calls: the parent may have threads). */
static __attribute__((noreturn)) void release_child(int *fds, size_t n)
{
	int null = open("/dev/null", O_RDWR);
	unsigned int from = 3;

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	/* fds sorted: close the gaps [3, fds[0]), (fds[i], fds[i+1]), (last, ~0] */
	for (size_t i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)fds[i] : ~0u;

		if (to > from)
			syscall(SYS_close_range, from, to - 1, 0);
		from = to + 1;
		if (i == n)
			break;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	_exit(0);
}

int xp_uprobe_links_release(int *fds, size_t n)
{
	int sorted[XP_LIVE_RELEASE_MAX];
	pid_t pid;
	size_t i;

	if (!n)
		return 0;
	if (n > XP_LIVE_RELEASE_MAX)
		return xp_uprobe_links_close(fds, n);
	for (i = 0; i < n; i++)
		if (fds[i] < 3)
			return xp_uprobe_links_close(fds, n);
	memcpy(sorted, fds, n * sizeof(*fds));
	qsort(sorted, n, sizeof(*sorted), fd_cmp);
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0)
		return xp_uprobe_links_close(fds, n);
	if (pid == 0)
		release_child(sorted, n);
	for (i = 0; i < n; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	return 0;
}
