/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.c - PID + start-time identity from /proc/<pid>/stat, and the
 * pidfd that pins it to one process (identity.h says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../common/parse.h"
#include "identity.h"
#include "procfs.h"

int xp_proc_stat_parse(const char *text, struct xp_proc_stat *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *p;
	char field[32];
	uint64_t v;
	int idx;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = '\0';
	p = close + 2;
	/* p points at field 3 (state) */
	for (idx = 3; idx <= 24 && *p; idx++) {
		size_t len = strcspn(p, " \n");

		if (len == 0 || len >= sizeof(field))
			return -EINVAL;
		memcpy(field, p, len);
		field[len] = '\0';
		p += len;
		while (*p == ' ')
			p++;
		if (idx == 3) {
			if (len != 1)
				return -EINVAL;
			out->state = field[0];
			continue;
		}
		if (idx != 4 && idx != 14 && idx != 15 && idx != 20 && idx != 22 && idx != 24)
			continue;
		if (xpc_parse_u64(field, 0, UINT64_MAX, &v))
			return -EINVAL;
		switch (idx) {
		case 4:
			if (v > UINT32_MAX)
				return -EINVAL;
			out->ppid = (uint32_t)v;
			break;
		case 14: out->utime = v; break;
		case 15: out->stime = v; break;
		case 20: out->num_threads = v; break;
		case 22: out->start_time = v; break;
		case 24: out->rss_pages = v; break;
		}
	}
	return idx > 24 ? 0 : -EINVAL;
}

int xp_proc_stat_read(uint32_t pid, uint32_t tid, struct xp_proc_stat *out)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		/* a process reaped between open and read reads as ESRCH */
		return e == -ESRCH ? -ENOENT : e;
	}
	close(fd);
	if (n == 0)
		return -ENOENT;
	buf[n] = '\0';
	return xp_proc_stat_parse(buf, out);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Exit race: a process whose pidfd polls readable turns into a zombie
 * microseconds later; a live process with its start time after this many
 * looks is another process (REUSE_LOOKS x REUSE_WAIT_NS at most). */
#define REUSE_LOOKS 5
#define REUSE_WAIT_NS 1000000L

int xp_target_pidfd_exited(const struct xp_target *t)
{
	struct pollfd p;
	int n;

	if (!t->has_pidfd)
		return -1;
	p.fd = t->pidfd;
	p.events = POLLIN;
	p.revents = 0;
	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (p.revents & POLLNVAL))
		return -1;
	return n > 0 ? 1 : 0;
}

void xp_target_release(struct xp_target *t)
{
	if (t->has_pidfd)
		close(t->pidfd);
	t->has_pidfd = false;
	t->pidfd = -1;
}

void xp_target_detail(struct xp_error *err, const struct xp_target *t)
{
	xp_error_detail_u64(err, "pid", t->pid);
	xp_error_detail_u64(err, "process_start_time", t->start_time);
}

int xp_target_identify(uint32_t pid, struct xp_target *out, struct xp_error *err)
{
	struct xp_proc_status ps;
	struct xp_proc_stat st;
	int pidfd, rc;

	memset(out, 0, sizeof(*out));
	out->pidfd = -1;
	if (pid == 0) {
		xp_error_detail_u64(err, "pid", pid);
		return xp_error_set(err, XPROBE_E_TARGET_NOT_FOUND, true,
				    "PID 0 is not a process");
	}
	/*
	 * The pidfd first, the stat file second, the pidfd again: when its
	 * process still runs after the read, the start time read is its own
	 * (a PID is not reused while its process lives).  No pidfd (EINVAL
	 * for a thread id, ENOSYS before 5.3, EMFILE): the start time alone.
	 */
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	rc = pidfd < 0 && errno == ESRCH ? -ENOENT : xp_proc_stat_read(pid, 0, &st);
	/* a zombie leader whose other threads run is a live process (its
	 * pidfd polls readable only once the last thread is gone) */
	if (!rc && (st.state == 'Z' || st.state == 'X') && st.num_threads > 1 &&
	    xp_proc_live_thread(pid))
		st.state = 'S';
	if (pidfd >= 0) {
		out->has_pidfd = true;
		out->pidfd = pidfd;
		if (!rc && xp_target_pidfd_exited(out) == 1 && st.state != 'Z' && st.state != 'X')
			rc = -ENOENT; /* it exited while we read: whose stat was it? */
		if (rc || st.state == 'Z' || st.state == 'X')
			xp_target_release(out);
	}
	if (rc == -ENOENT || rc == -ESRCH) {
		xp_error_detail_u64(err, "pid", pid);
		xp_error_hint(err, "check the PID: no process %u is running", pid);
		return xp_error_set(err, XPROBE_E_TARGET_NOT_FOUND, true,
				    "target process %u was not found", pid);
	}
	if (rc == -EACCES || rc == -EPERM) {
		xp_error_detail_u64(err, "pid", pid);
		xp_error_hint(err, "run xprobe as root or with CAP_SYS_PTRACE");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied reading /proc/%u/stat", pid);
	}
	if (rc) {
		xp_error_detail_u64(err, "pid", pid);
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "malformed /proc/%u/stat", pid);
	}
	if (st.state == 'Z' || st.state == 'X') {
		xp_error_detail_u64(err, "pid", pid);
		xp_error_detail_str(err, "state", st.state == 'Z' ? "zombie" : "dead");
		return xp_error_set(err, XPROBE_E_TARGET_NOT_FOUND, true,
				    "target process %u has exited (it is a zombie)", pid);
	}
	/*
	 * A thread id is not a process: /proc/<tid> exists (unlisted) and
	 * reads like a process, but probes and filters work on the thread
	 * group, and a measurement of it would time out with nothing.  A
	 * group leader has a pidfd; only without one is the Tgid read.
	 */
	if (!out->has_pidfd && xp_proc_status_read(pid, &ps) == 0 && ps.has_tgid && ps.tgid != pid) {
		xp_error_detail_u64(err, "pid", pid);
		xp_error_detail_u64(err, "thread_group_pid", ps.tgid);
		xp_error_hint(err, "pass --pid %u: thread %u belongs to that process", ps.tgid, pid);
		return xp_error_set(err, XPROBE_E_TARGET_NOT_FOUND, true,
				    "PID %u is a thread of process %u, not a process; pass --pid %u",
				    pid, ps.tgid, ps.tgid);
	}
	out->pid = pid;
	out->start_time = st.start_time;
	return 0;
}

/*
 * The pidfd says the identified process exited.  A zombie or no process is
 * TARGET_EXITED; a live process holds the PID now: TARGET_REUSED, even
 * with the same start time (the reuse within one tick that the stat file
 * cannot show), once the exit race is ruled out.
 */
static int verify_exited(const struct xp_target *t, struct xp_error *err)
{
	struct timespec wait = { 0, REUSE_WAIT_NS };
	struct xp_proc_stat st;
	int look, rc = 0;

	for (look = 0; look < REUSE_LOOKS; look++) {
		if (look)
			nanosleep(&wait, NULL);
		rc = xp_proc_stat_read(t->pid, 0, &st);
		if (rc || st.state == 'Z' || st.state == 'X' || st.start_time != t->start_time)
			break;
	}
	xp_target_detail(err, t);
	if (rc || st.state == 'Z' || st.state == 'X')
		return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				    "target process %u exited", t->pid);
	xp_error_detail_u64(err, "observed_process_start_time", st.start_time);
	xp_error_hint(err, "the PID now names another process; find the target again");
	if (st.start_time != t->start_time)
		return xp_error_set(err, XPROBE_E_TARGET_REUSED, true,
				    "PID %u was reused: process start time changed from %llu to %llu",
				    t->pid, (unsigned long long)t->start_time,
				    (unsigned long long)st.start_time);
	return xp_error_set(err, XPROBE_E_TARGET_REUSED, true,
			    "PID %u was reused within one clock tick: the identified process exited (its pidfd says so) and another process with the same start time %llu holds the PID",
			    t->pid, (unsigned long long)st.start_time);
}

int xp_target_verify(const struct xp_target *t, struct xp_error *err)
{
	struct xp_proc_stat st;
	int rc;

	if (xp_target_pidfd_exited(t) == 1)
		return verify_exited(t, err);
	rc = xp_proc_stat_read(t->pid, 0, &st);
	if (!rc && (st.state == 'Z' || st.state == 'X') && xp_proc_live_thread(t->pid))
		st.state = 'S'; /* a zombie leader: its other threads run on */
	if (rc == -ENOENT || rc == -ESRCH || (!rc && (st.state == 'Z' || st.state == 'X'))) {
		xp_target_detail(err, t);
		return xp_error_set(err, XPROBE_E_TARGET_EXITED, true,
				    "target process %u exited", t->pid);
	}
	if (rc == -EACCES || rc == -EPERM) {
		xp_target_detail(err, t);
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied reading /proc/%u/stat", t->pid);
	}
	if (rc) {
		xp_target_detail(err, t);
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "malformed /proc/%u/stat",
				    t->pid);
	}
	if (st.start_time != t->start_time) {
		xp_target_detail(err, t);
		xp_error_detail_u64(err, "observed_process_start_time", st.start_time);
		xp_error_hint(err, "the PID now names another process; find the target again");
		return xp_error_set(err, XPROBE_E_TARGET_REUSED, true,
				    "PID %u was reused: process start time changed from %llu to %llu",
				    t->pid, (unsigned long long)t->start_time,
				    (unsigned long long)st.start_time);
	}
	return 0;
}
