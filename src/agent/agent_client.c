/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_client.c - the CLI's side of the Agent's control socket
 * (agent_client.h has the rules and the error mapping; include/xprobe/
 * agent.h the protocol).
 *
 * Invariants:
 *   - no path component after the target's root is followed if it is a
 *     link: each is opened O_PATH|O_NOFOLLOW relative to the last, and
 *     the socket itself is opened by descriptor (O_PATH|O_NOFOLLOW),
 *     checked through that descriptor, and connect() goes through
 *     /proc/self/fd/<sockfd>, so what was checked is what is connected
 *     to, whoever renames what meanwhile; the peer check then catches a
 *     socket someone else serves;
 *   - no request is sent before SO_PEERCRED named the target;
 *   - no reply byte is used before xp_capture_agent_reply_check() and the
 *     pid/start-time check passed; record packets go only to the decoder,
 *     which checks them;
 *   - every wait is a poll() bounded by the connection's timeout, in
 *     slices that test the stop request (common/cancel.h);
 *   - after a timeout, a closed connection or a malformed message the
 *     socket is closed (fd -1): what is still in flight cannot be told
 *     from the next reply, and the Agent disarms when it sees the close.
 *     A refusal (reply status) or a bound crossed after every packet
 *     arrived leaves the connection usable.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../common/cancel.h"
#include "../../common/monotonic.h"
#include "../../common/parse.h"
#include "../capture/agent_sink.h"
#include "../capture/decode_agent.h"
#include "../capture/decode_agent_agg.h"
#include "../process/namespaces.h"
#include "../process/procfs.h"
#include "agent_client.h"

#define HINT_START                                                                            \
	"start the target with NVTX_INJECTION64_PATH set to the path of libxprobe.so before " \
	"its first NVTX call (NVTX endpoints), or let measure inject the Agent (CUDA "        \
	"endpoints)"

/* The target as the Agent names itself. */
struct target_view {
	uint32_t uid; /* effective uid as we see it (ownership checks) */
	uint32_t inner_uid; /* as the target sees it (the directory name) */
	uint32_t ns_pid;
	bool via_proc; /* another mount namespace or root: reach it through /proc/<pid>/root */
};

/* --- errors ------------------------------------------------------------ */

static void conn_details(struct xp_error *err, uint32_t pid, const char *path)
{
	xp_error_detail_u64(err, "pid", pid);
	if (path && *path)
		xp_error_detail_str(err, "socket_path", path);
}

static int not_loaded(struct xp_error *err, uint32_t pid, const char *path, const char *why)
{
	conn_details(err, pid, path);
	xp_error_hint(err, HINT_START);
	return xp_error_set(err, XPROBE_E_CUPTI_AGENT_NOT_LOADED, true,
			    "no xprobe Agent serves PID %" PRIu32 ": %s", pid, why);
}

static int __attribute__((format(printf, 4, 5)))
denied(struct xp_error *err, uint32_t pid, const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	conn_details(err, pid, path);
	xp_error_detail_str(err, "reason", why);
	return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
			    "cannot use the Agent socket of PID %" PRIu32 ": %s", pid, why);
}

static int vunavailable(struct xp_agent_conn *c, struct xp_error *err, const char *fmt, va_list ap)
{
	char why[512];

	vsnprintf(why, sizeof(why), fmt, ap);
	conn_details(err, c->pid, c->path);
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "the Agent of PID %" PRIu32 " %s", c->pid, why);
}

static int __attribute__((format(printf, 3, 4)))
unavailable(struct xp_agent_conn *c, struct xp_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vunavailable(c, err, fmt, ap);
	va_end(ap);
	return rc;
}

/* unavailable(), and the connection closed: what is still in flight
 * cannot be told from the next reply (header comment). */
static int __attribute__((format(printf, 3, 4)))
lost(struct xp_agent_conn *c, struct xp_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vunavailable(c, err, fmt, ap);
	va_end(ap);
	xp_agent_disconnect(c);
	return rc;
}

/* A protocol violation already in @err (TRACE_EXPORT_FAILED): add where. */
static int violation(struct xp_agent_conn *c, struct xp_error *err, int rc)
{
	if (!xp_error_detail_get(err, "pid"))
		xp_error_detail_u64(err, "pid", c->pid);
	if (c->path[0])
		xp_error_detail_str(err, "socket_path", c->path);
	xp_agent_disconnect(c);
	return rc;
}

/* A reply with a nonzero status: the contract's code (header comment). */
static int refused(struct xp_agent_conn *c, const struct xprobe_agent_reply *r,
		   struct xp_error *err)
{
	const char *op = xp_capture_agent_op_name(r->op), *msg = r->message;
	int st = -r->status;

	conn_details(err, c->pid, c->path);
	xp_error_detail_str(err, "agent_status", xprobe_errname(st));
	xp_error_detail_str(err, "agent_message", msg);
	xp_error_detail_str(err, "op", op);
	xp_error_detail_str(err, "capture_state", xp_capture_agent_state_name(r->state));
	switch (st) {
	case XPROBE_E_BACKEND_UNAVAILABLE:
		xp_error_hint(err, "CUDA API, kernel, memcpy and memset endpoints need the "
				   "Agent's CUDA device backend (CUPTI)");
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "the Agent of PID %" PRIu32 " has no CUDA device backend: %s",
				    c->pid, msg);
	case XPROBE_E_UNSUPPORTED_CUDA_VERSION:
		/* conflicting majors mapped, a CUDA or CUPTI major outside 12-13,
		 * a CUPTI newer than the Agent's headers */
		xp_error_hint(err, "xprobe measures CUDA 12 and 13 with one CUDA/CUPTI major "
				   "per process");
		return xp_error_set(err, XPROBE_E_UNSUPPORTED_CUDA_VERSION, true,
				    "the Agent of PID %" PRIu32 " cannot measure this CUDA: %s",
				    c->pid, msg);
	case XPROBE_E_CUDA_CONTEXT_NOT_FOUND:
		xp_error_hint(err, "measure a process that has loaded the CUDA runtime or driver");
		return xp_error_set(err, XPROBE_E_CUDA_CONTEXT_NOT_FOUND, true,
				    "the Agent of PID %" PRIu32 " found no CUDA to observe: %s",
				    c->pid, msg);
	case XPROBE_E_INVALID_EVENT_SELECTOR:
		/* a CUDA API name no callback of the target's CUPTI has */
		xp_error_hint(err, "name the API function as CUDA declares it (cudaLaunchKernel, "
				   "cuLaunchKernel), without a _v<N> suffix");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "invalid event selector: the Agent of PID %" PRIu32
				    " refused the filter: %s",
				    c->pid, msg);
	case XPROBE_E_ALREADY_ACTIVE:
		xp_error_hint(err, "one measurement at a time per process: wait for the other "
				   "xprobe measure to finish (a killed one's capture is "
				   "disarmed within 100 ms)");
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "the Agent of PID %" PRIu32
				    " is already running a capture for another client: %s",
				    c->pid, msg);
	case XPROBE_E_PERMISSION_DENIED:
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "the Agent of PID %" PRIu32 " refused %s: %s", c->pid, op, msg);
	case XPROBE_E_INVALID_ARGUMENT:
		xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "the Agent of PID %" PRIu32 " refused the %s request as "
				    "malformed: %s",
				    c->pid, op, msg);
	case XPROBE_E_NOT_ACTIVE:
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "the Agent of PID %" PRIu32 " has no capture armed for %s: %s",
				    c->pid, op, msg);
	}
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "the Agent of PID %" PRIu32 " failed %s (%s): %s", c->pid, op,
			    xprobe_errname(st), msg);
}

/* --- the target's view -------------------------------------------------- */

/* @uid (as we see it) as the target's user namespace sees it. */
static uint32_t inner_uid(uint32_t pid, uint32_t uid)
{
	struct stat a, b;
	char path[64], *text = NULL, *line;
	uint32_t out = uid;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/ns/user", pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/user", &b) < 0 ||
	    (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return uid;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/uid_map", pid);
	if (xp_read_file(path, 64 * 1024, &text, &len))
		return uid;
	/* "inside outside count": outside is relative to our namespace */
	for (line = text; line && *line;) {
		char *nl = strchr(line, '\n'), *f[3], *save = line;
		uint64_t v[3];
		int n = 0;

		if (nl)
			*nl = '\0';
		while (n < 3) {
			while (*save == ' ' || *save == '\t')
				save++;
			if (!*save)
				break;
			f[n++] = save;
			save += strcspn(save, " \t");
			if (*save)
				*save++ = '\0';
		}
		if (n == 3 && !xpc_parse_u64(f[0], 0, UINT32_MAX, &v[0]) &&
		    !xpc_parse_u64(f[1], 0, UINT32_MAX, &v[1]) &&
		    !xpc_parse_u64(f[2], 0, UINT32_MAX, &v[2]) && uid >= v[1] &&
		    uid - v[1] < v[2]) {
			out = (uint32_t)(uid - v[1] + v[0]);
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return out;
}

static int target_view(const struct xp_target *t, struct target_view *v, struct xp_error *err)
{
	struct xp_proc_status st;
	struct xp_target_ns ns;
	int rc;

	memset(v, 0, sizeof(*v));
	rc = xp_target_namespaces(t, &ns, err);
	if (rc)
		return rc;
	rc = xp_proc_status_read(t->pid, &st);
	if (rc)
		return xp_proc_fail(t, "status", rc, err);
	if (!st.has_uid)
		return xp_proc_fail(t, "status", -EINVAL, err);
	v->uid = st.uid[1];
	v->inner_uid = inner_uid(t->pid, v->uid);
	v->ns_pid = ns.ns_pid;
	v->via_proc = !ns.same_mntns;
	if (!v->via_proc) {
		/* one mount namespace, but a chroot'ed target has its own /tmp */
		struct stat a, b;
		char path[48];

		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/root", t->pid);
		if (stat(path, &a) == 0 && stat("/", &b) == 0)
			v->via_proc = a.st_dev != b.st_dev || a.st_ino != b.st_ino;
	}
	return 0;
}

static void sock_names(const struct xp_target *t, const struct target_view *v, char *dir,
		       size_t dsz, char *name, size_t nsz)
{
	char full[64];

	snprintf(full, sizeof(full), XPROBE_AGENT_DIR_FMT, (unsigned)v->inner_uid);
	/* the format is absolute under /tmp: keep the last component */
	snprintf(dir, dsz, "%s", strrchr(full, '/') + 1);
	snprintf(name, nsz, XPROBE_AGENT_SOCK_FMT, (unsigned)v->ns_pid,
		 (unsigned long long)t->start_time);
}

static void display_path(const struct xp_target *t, const struct target_view *v, char *buf,
			 size_t size)
{
	char dir[64], name[96], full[64];

	sock_names(t, v, dir, sizeof(dir), name, sizeof(name));
	snprintf(full, sizeof(full), XPROBE_AGENT_DIR_FMT, (unsigned)v->inner_uid);
	if (!v->via_proc)
		snprintf(buf, size, "%s/%s", full, name);
	else
		snprintf(buf, size, "/proc/%" PRIu32 "/root%s/%s", t->pid, full, name);
}

int xp_agent_socket_path(const struct xp_target *t, char *buf, size_t size, struct xp_error *err)
{
	struct target_view v;
	int rc = target_view(t, &v, err);

	if (rc)
		return rc;
	display_path(t, &v, buf, size);
	return 0;
}

/* --- connecting ---------------------------------------------------------- */

/* CLOCK_MONOTONIC now, in ms (the connection's timeouts). */
static uint64_t now_ms(void)
{
	return xpc_mono_ns() / 1000000u;
}

/* A fresh, unconnected @c for @t, and the target's view into @v. */
static int conn_begin(struct xp_agent_conn *c, const struct xp_target *t, int timeout_ms,
		      struct target_view *v, struct xp_error *err)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->pid = t->pid;
	c->start_time = t->start_time;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : XP_AGENT_TIMEOUT_MS;
	rc = target_view(t, v, err);
	if (rc)
		return rc;
	c->ns_pid = v->ns_pid;
	c->uid = v->uid;
	return 0;
}

/* The type of @st, for messages. */
static const char *type_of(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISREG(st->st_mode))
		return "a regular file";
	return "a special file";
}

/* The type of what @name in @dfd is, for messages. */
static const char *type_at(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return "something that cannot be examined";
	return type_of(&st);
}

/*
 * Open the socket @name in the open directory @dfd by descriptor (O_PATH,
 * never through a link) and check what was opened: a socket owned by
 * @uid.  The connect then goes through that descriptor, so the file
 * checked is the file connected to: a name swapped meanwhile changes
 * nothing.  Owned by root too when @root_ok.  Returns the descriptor or
 * the error.
 */
static int open_socket(struct xp_agent_conn *c, int dfd, const char *name, uint32_t uid,
		       bool root_ok, struct xp_error *err)
{
	int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), e = errno;
	struct stat st;

	if (fd < 0) {
		if (e == ENOENT)
			return not_loaded(err, c->pid, c->path,
					  "its control socket does not exist");
		if (e == ELOOP)
			return denied(err, c->pid, c->path,
				      "the socket's path is a symbolic link, not a socket (links are never followed)");
		if (e == EACCES || e == EPERM)
			return denied(err, c->pid, c->path,
				      "the socket's directory cannot be searched (%s)", strerror(e));
		return denied(err, c->pid, c->path, "cannot open the socket: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return denied(err, c->pid, c->path, "cannot examine the socket: %s", strerror(e));
	}
	if (!S_ISSOCK(st.st_mode)) {
		close(fd);
		return denied(err, c->pid, c->path, "the socket's path is %s, not a socket",
			      type_of(&st));
	}
	if (st.st_uid != uid && !(root_ok && st.st_uid == 0)) {
		close(fd);
		return denied(err, c->pid, c->path,
			      "the socket is owned by uid %u, not by the target's uid %" PRIu32,
			      (unsigned)st.st_uid, uid);
	}
	return fd;
}

/*
 * connect() to the socket open as @sfd (O_PATH) through /proc/self/fd, a
 * nonblocking SOCK_SEQPACKET socket; then the peer check.  Fills c->fd.
 */
static int connect_at(struct xp_agent_conn *c, int sfd, uint32_t uid, struct xp_error *err)
{
	uint64_t deadline = now_ms() + (uint64_t)c->timeout_ms;
	struct sockaddr_un sa;
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	int fd, n;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sfd);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return denied(err, c->pid, c->path, "the socket's name is too long");
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "socket(AF_UNIX): %s",
				    strerror(errno));
	for (;;) {
		int e;

		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		e = errno;
		if (e == EINTR)
			continue;
		if (e == EAGAIN && now_ms() < deadline && !xpc_cancel_signo()) {
			/* the backlog is full: the server is busy accepting */
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		close(fd);
		if (e == EAGAIN && xpc_cancel_signo())
			return xp_error_cancelled(err, "connecting to the Agent");
		if (e == EAGAIN)
			return unavailable(c, err, "did not accept a connection within %d ms",
					   c->timeout_ms);
		if (e == ENOENT)
			return not_loaded(err, c->pid, c->path,
					  "its control socket was removed meanwhile");
		if (e == ECONNREFUSED)
			return not_loaded(err, c->pid, c->path,
					  "nobody listens on its control socket (a stale socket: "
					  "the Agent's server stopped)");
		if (e == EACCES || e == EPERM)
			return denied(err, c->pid, c->path, "connect: %s", strerror(e));
		return unavailable(c, err, "cannot be reached: connect: %s", strerror(e));
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || crl != sizeof(cr)) {
		int e = errno;

		close(fd);
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "SO_PEERCRED: %s", strerror(e));
	}
	if ((uint32_t)cr.pid != c->pid || (uint32_t)cr.uid != uid) {
		close(fd);
		xp_error_detail_i64(err, "peer_pid", cr.pid);
		xp_error_detail_u64(err, "peer_uid", (uint32_t)cr.uid);
		return denied(err, c->pid, c->path,
			      "the socket is served by PID %d (uid %u), not by the target (uid "
			      "%" PRIu32 ")",
			      (int)cr.pid, (unsigned)cr.uid, uid);
	}
	c->fd = fd;
	return 0;
}

/* Open @name under @dfd as a directory, O_PATH, never through a link. */
static int open_dir_at(struct xp_agent_conn *c, int dfd, const char *name, struct xp_error *err)
{
	int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;

	if (fd >= 0)
		return fd;
	if (e == ENOENT)
		return not_loaded(err, c->pid, c->path,
				  strcmp(name, "tmp") ? "its runtime directory does not exist" :
							"the target has no /tmp");
	if (e == ENOTDIR || e == ELOOP)
		return denied(err, c->pid, c->path, "%s is %s, not a directory", name,
			      type_at(dfd, name));
	if (e == EACCES || e == EPERM)
		return denied(err, c->pid, c->path, "cannot open %s: %s", name, strerror(e));
	return denied(err, c->pid, c->path, "cannot open %s: %s", name, strerror(e));
}

static int hello(struct xp_agent_conn *c, struct xprobe_agent_reply *rep, struct xp_error *err);

int xp_agent_connect(const struct xp_target *t, int timeout_ms, struct xp_agent_conn *conn,
		     struct xp_error *err)
{
	int rootfd = -1, tmpfd = -1, dfd = -1, sfd = -1, rc;
	char dname[64], sname[96], root[48];
	struct target_view v;
	struct stat st;

	rc = conn_begin(conn, t, timeout_ms, &v, err);
	if (rc)
		return rc;
	display_path(t, &v, conn->path, sizeof(conn->path));
	sock_names(t, &v, dname, sizeof(dname), sname, sizeof(sname));
	if (!v.via_proc)
		snprintf(root, sizeof(root), "/");
	else
		snprintf(root, sizeof(root), "/proc/%" PRIu32 "/root", t->pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		rc = errno == EACCES || errno == EPERM ?
			     denied(err, conn->pid, conn->path, "cannot open %s: %s", root,
				    strerror(errno)) :
			     xp_proc_fail(t, "root", -errno, err);
		goto out;
	}
	tmpfd = rc = open_dir_at(conn, rootfd, "tmp", err);
	if (rc < 0)
		goto out;
	dfd = rc = open_dir_at(conn, tmpfd, dname, err);
	if (rc < 0)
		goto out;
	if (fstat(dfd, &st) < 0) {
		rc = denied(err, conn->pid, conn->path, "cannot examine %s: %s", dname,
			    strerror(errno));
		goto out;
	}
	if (st.st_uid != v.uid) {
		rc = denied(err, conn->pid, conn->path,
			    "%s is owned by uid %u, not by the target's uid %" PRIu32, dname,
			    (unsigned)st.st_uid, v.uid);
		goto out;
	}
	if ((st.st_mode & 07777) != 0700) {
		rc = denied(err, conn->pid, conn->path, "%s has mode 0%o, not 0700", dname,
			    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	sfd = rc = open_socket(conn, dfd, sname, v.uid, false, err);
	if (rc < 0)
		goto out;
	rc = connect_at(conn, sfd, v.uid, err);
	if (rc)
		goto out;
	rc = hello(conn, &conn->hello, err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	if (tmpfd >= 0)
		close(tmpfd);
	if (rootfd >= 0)
		close(rootfd);
	if (rc)
		xp_agent_disconnect(conn);
	return rc;
}

int xp_agent_connect_path(const struct xp_target *t, const char *path, int timeout_ms,
			  struct xp_agent_conn *conn, struct xp_error *err)
{
	char *dir = NULL, *slash;
	const char *base;
	struct target_view v;
	int dfd = -1, sfd = -1, rc;

	rc = conn_begin(conn, t, timeout_ms, &v, err);
	if (rc)
		return rc;
	snprintf(conn->path, sizeof(conn->path), "%s", path);
	if (strlen(path) >= sizeof(conn->path))
		memcpy(conn->path + sizeof(conn->path) - 4, "...", 4);
	dir = strdup(path);
	if (!dir)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	slash = strrchr(dir, '/');
	if (slash) {
		base = path + (slash - dir) + 1;
		slash[slash == dir] = '\0'; /* "/x" keeps "/" */
	} else {
		base = path;
		dir[0] = '.';
		dir[1] = '\0';
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		rc = denied(err, conn->pid, conn->path, "the path names no socket");
		goto out;
	}
	/* the directories are the user's choice; the socket itself no link */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = errno == ENOENT ? not_loaded(err, conn->pid, conn->path,
						  "the socket's directory does not exist") :
				       denied(err, conn->pid, conn->path, "cannot open %s: %s", dir,
					      strerror(errno));
		goto out;
	}
	sfd = rc = open_socket(conn, dfd, base, v.uid, true, err);
	if (rc >= 0)
		rc = connect_at(conn, sfd, v.uid, err);
	if (!rc)
		rc = hello(conn, &conn->hello, err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	if (rc)
		xp_agent_disconnect(conn);
	return rc;
}

void xp_agent_disconnect(struct xp_agent_conn *conn)
{
	if (conn->fd > 0 || (conn->fd == 0 && conn->timeout_ms))
		close(conn->fd);
	conn->fd = -1;
	conn->armed = false;
}

/* --- packets ------------------------------------------------------------ */

/* Wait for @events on the socket, at most timeout_ms, testing the stop
 * request.  0, or the error (the connection closed). */
static int wait_fd(struct xp_agent_conn *c, short events, const char *what, struct xp_error *err)
{
	uint64_t deadline = now_ms() + (uint64_t)c->timeout_ms;

	for (;;) {
		struct pollfd p = { c->fd, events, 0 };
		uint64_t now = now_ms();
		int n, slice;

		if (xpc_cancel_signo()) {
			xp_agent_disconnect(c);
			return xp_error_cancelled(err, "waiting for the Agent");
		}
		if (now >= deadline) {
			xp_error_detail_u64(err, "timeout_ms", (uint64_t)c->timeout_ms);
			xp_error_detail_str(err, "op", what);
			return lost(c, err, "did not answer %s within %d ms", what, c->timeout_ms);
		}
		slice = deadline - now > 100 ? 100 : (int)(deadline - now);
		n = poll(&p, 1, slice);
		if (n < 0 && errno != EINTR) {
			int e = errno;

			return lost(c, err, "cannot be waited for: poll: %s", strerror(e));
		}
		if (n > 0)
			return 0; /* readable, writable, or hung up: the call says */
	}
}

static int send_req(struct xp_agent_conn *c, const struct xprobe_agent_req *req,
		    struct xp_error *err)
{
	const char *what = xp_capture_agent_op_name(req->op);

	if (c->fd < 0)
		return unavailable(c, err, "is not connected");
	for (;;) {
		ssize_t n = send(c->fd, req, sizeof(*req), MSG_NOSIGNAL);
		int rc;

		if (n == (ssize_t)sizeof(*req))
			return 0;
		if (n >= 0) { /* a SEQPACKET send is whole or nothing */
			return lost(c, err, "took a partial %s request", what);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			int e = errno;

			xp_error_detail_str(err, "op", what);
			return lost(c, err, "closed the connection before %s: %s", what,
				    strerror(e));
		}
		rc = wait_fd(c, POLLOUT, what, err);
		if (rc)
			return rc;
	}
}

/*
 * One packet into @buf (@cap bytes); *len its real length, which may be
 * larger than @cap (then only @cap bytes were kept).  0 or the error.
 */
static int recv_pkt(struct xp_agent_conn *c, void *buf, size_t cap, size_t *len, const char *what,
		    struct xp_error *err)
{
	for (;;) {
		struct iovec iov = { buf, cap };
		struct msghdr mh;
		ssize_t n;
		int rc;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		n = recvmsg(c->fd, &mh, MSG_TRUNC | MSG_CMSG_CLOEXEC);
		if (n > 0) {
			if (mh.msg_flags & MSG_CTRUNC) { /* descriptors were passed */
				xp_error_detail_str(err, "field", "ancillary");
				xp_error_hint(err, "rebuild xprobe and libxprobe from the same "
						   "release");
				xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
					     "the Agent sent ancillary data with its %s reply",
					     what);
				return violation(c, err, -XPROBE_E_TRACE_EXPORT_FAILED);
			}
			*len = (size_t)n;
			return 0;
		}
		if (n == 0) {
			xp_error_detail_str(err, "op", what);
			return lost(c, err, "closed the connection before answering %s", what);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			int e = errno;

			xp_error_detail_str(err, "op", what);
			return lost(c, err, "cannot be read from (%s): %s", what, strerror(e));
		}
		rc = wait_fd(c, POLLIN, what, err);
		if (rc)
			return rc;
	}
}

/*
 * Send @req, receive and check its reply into @rep.  A refusal (status)
 * is mapped here; 0 means a well-formed reply with status 0 from the
 * target.
 */
static int transact(struct xp_agent_conn *c, const struct xprobe_agent_req *req,
		    struct xprobe_agent_reply *rep, struct xp_error *err)
{
	union {
		struct xprobe_agent_reply r;
		uint8_t b[sizeof(struct xprobe_agent_reply) + 8];
	} u;
	const char *what = xp_capture_agent_op_name(req->op);
	size_t len = 0;
	int rc;

	rc = send_req(c, req, err);
	if (rc)
		return rc;
	rc = recv_pkt(c, u.b, sizeof(u.b), &len, what, err);
	if (rc)
		return rc;
	rc = xp_capture_agent_reply_check(u.b, len, req->op, err);
	if (rc)
		return violation(c, err, rc);
	if (u.r.pid != c->ns_pid || u.r.start_time != c->start_time) {
		xp_error_detail_str(err, "field", u.r.pid != c->ns_pid ? "pid" : "start_time");
		xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			     "the Agent's %s reply names PID %" PRIu32 " started at %" PRIu64
			     ", not the target (PID %" PRIu32 " started at %" PRIu64 ")",
			     what, u.r.pid, u.r.start_time, c->ns_pid, c->start_time);
		return violation(c, err, -XPROBE_E_TRACE_EXPORT_FAILED);
	}
	*rep = u.r;
	if (u.r.status)
		return refused(c, &u.r, err);
	return 0;
}

/* --- requests ----------------------------------------------------------- */

void xp_agent_req_init(struct xprobe_agent_req *req, enum xprobe_agent_op op)
{
	memset(req, 0, sizeof(*req));
	memcpy(req->magic, XPROBE_AGENT_REQ_MAGIC, sizeof(req->magic));
	req->version = XPROBE_AGENT_PROTO_VERSION;
	req->op = op;
	req->size = sizeof(*req);
}

static int hello(struct xp_agent_conn *c, struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xprobe_agent_req req;
	struct xprobe_agent_reply r;
	int rc;

	xp_agent_req_init(&req, XPROBE_AGENT_OP_HELLO);
	rc = transact(c, &req, &r, err);
	if (rc)
		return rc;
	if (rep)
		*rep = r;
	return 0;
}

int xp_agent_require_nvtx(const struct xp_agent_conn *conn, const char *agent_path,
			  struct xp_error *err)
{
	if (conn->hello.features & XPROBE_AGENT_F_NVTX_ROUTED)
		return 0;
	conn_details(err, conn->pid, conn->path);
	xp_error_detail_str(err, "agent_activation", "startup_required");
	xp_error_hint(err,
		      "restart the target with NVTX_INJECTION64_PATH=%s before its first NVTX "
		      "call; online injection cannot retrofit an initialized NVTX dispatch table",
		      agent_path ? agent_path : "<path of libxprobe.so>");
	/* the contract's code: the Agent is loaded, NVTX is what is missing */
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "the Agent of PID %" PRIu32 " does not receive NVTX calls: the "
			    "target's NVTX dispatch was fixed before the Agent loaded",
			    conn->pid);
}

int xp_agent_arm(struct xp_agent_conn *conn, const struct xprobe_agent_req *req,
		 struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xprobe_agent_reply r;
	int rc;

	if (req->op != XPROBE_AGENT_OP_ARM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "xp_agent_arm: op %" PRIu32,
				    req->op);
	rc = transact(conn, req, &r, err);
	if (rc)
		return rc;
	if (rep)
		*rep = r;
	if (r.state != XPROBE_AGENT_ACTIVE && r.state != XPROBE_AGENT_LIMIT_REACHED) {
		xp_error_detail_str(err, "capture_state", xp_capture_agent_state_name(r.state));
		return unavailable(conn, err, "did not arm the capture (state %s): %s",
				   xp_capture_agent_state_name(r.state), r.message);
	}
	/* a histogram capture counts its total among the histograms it holds */
	if (r.capacity != req->capacity + (req->mode == XPROBE_AGENT_MODE_HISTOGRAM) || r.offset ||
	    r.retained > r.capacity) {
		xp_error_detail_str(err, "field", "capacity");
		xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			     "the Agent armed a capture of %" PRIu64 " records, %" PRIu64
			     " were asked for",
			     r.capacity, req->capacity);
		return violation(conn, err, -XPROBE_E_TRACE_EXPORT_FAILED);
	}
	conn->armed = true;
	return 0;
}

/*
 * Close the reply once every packet arrived.  A bound the records crossed
 * (EVENT_RATE_TOO_HIGH) leaves the connection usable, so only a violation
 * closes it; any error of the groups' end closes it.
 */
static int sink_end(struct xp_agent_conn *c, const struct xp_capture_agent_sink *s,
		    struct xp_error *err)
{
	int rc = xp_capture_agent_sink_end(s, err);

	if (rc == -XPROBE_E_TRACE_EXPORT_FAILED || (rc && !s->rec))
		return violation(c, err, rc);
	return rc;
}

/*
 * SNAPSHOT or STOP: the reply, then every packet into the sink.  Records
 * are asked from the offset already decoded; groups always from 0 (their
 * totals as of this reply).
 */
static int read_packets(struct xp_agent_conn *c, uint32_t op, const struct xp_capture_agent_sink *s,
			struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xprobe_agent_req req;
	struct xprobe_agent_reply r;
	const char *what = xp_capture_agent_op_name(op);
	bool *in_reply = xp_capture_agent_sink_in_reply(s);
	uint8_t *buf = NULL;
	int rc;

	xp_agent_req_init(&req, op);
	if (s->rec)
		req.offset = s->rec->st.records;
	rc = transact(c, &req, &r, err);
	if (rc)
		return rc;
	if (rep)
		*rep = r;
	rc = xp_capture_agent_sink_reply(s, &r, err);
	if (rc)
		return violation(c, err, rc);
	if (r.nchunks) {
		buf = malloc(XPROBE_AGENT_CHUNK_MAX);
		if (!buf) {
			xp_agent_disconnect(c);
			return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
		}
	}
	for (uint32_t i = 0; i < r.nchunks; i++) {
		size_t len = 0;

		rc = recv_pkt(c, buf, XPROBE_AGENT_CHUNK_MAX, &len, what, err);
		if (rc)
			goto out;
		if (len > XPROBE_AGENT_CHUNK_MAX) {
			xp_error_detail_str(err, "field", "bytes");
			xp_error_detail_u64(err, "packet_bytes", len);
			xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
			xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				     "the Agent sent a %s packet of %zu bytes (at most %u)",
				     s->rec  ? "record" :
				     s->hist ? "histogram" :
					       "group",
				     len, XPROBE_AGENT_CHUNK_MAX);
			rc = violation(c, err, -XPROBE_E_TRACE_EXPORT_FAILED);
			goto out;
		}
		rc = xp_capture_agent_sink_chunk(s, buf, len, err);
		if (rc) {
			rc = violation(c, err, rc);
			goto out;
		}
	}
	rc = sink_end(c, s, err);
out:
	free(buf);
	if (rc && *in_reply) {
		*in_reply = false; /* this reply is lost with the connection */
		if (c->fd >= 0)
			xp_agent_disconnect(c);
	}
	return rc;
}

int xp_agent_snapshot(struct xp_agent_conn *conn, struct xp_capture_agent_dec *dec,
		      struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .rec = dec };

	return read_packets(conn, XPROBE_AGENT_OP_SNAPSHOT, &s, rep, err);
}

int xp_agent_stop(struct xp_agent_conn *conn, struct xp_capture_agent_dec *dec,
		  struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .rec = dec };
	int rc = read_packets(conn, XPROBE_AGENT_OP_STOP, &s, rep, err);

	if (!rc || rc == -XPROBE_E_EVENT_RATE_TOO_HIGH)
		conn->armed = false;
	return rc;
}

int xp_agent_stop_groups(struct xp_agent_conn *conn, struct xp_capture_agg_dec *dec,
			 struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .agg = dec };
	int rc = read_packets(conn, XPROBE_AGENT_OP_STOP, &s, rep, err);

	if (!rc)
		conn->armed = false;
	return rc;
}

int xp_agent_read_hist(struct xp_agent_conn *conn, enum xprobe_agent_op op,
		       struct xp_capture_hist_dec *dec, struct xprobe_agent_reply *rep,
		       struct xp_error *err)
{
	struct xp_capture_agent_sink s = { .hist = dec };
	int rc;

	if (op != XPROBE_AGENT_OP_SNAPSHOT && op != XPROBE_AGENT_OP_STOP)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "xp_agent_read_hist: op %d",
				    (int)op);
	rc = read_packets(conn, op, &s, rep, err);
	if (!rc && op == XPROBE_AGENT_OP_STOP)
		conn->armed = false;
	return rc;
}

int xp_agent_close(struct xp_agent_conn *conn, struct xprobe_agent_reply *rep, struct xp_error *err)
{
	struct xprobe_agent_req req;
	struct xprobe_agent_reply r;
	int rc;

	xp_agent_req_init(&req, XPROBE_AGENT_OP_CLOSE);
	rc = transact(conn, &req, &r, err);
	if (rc)
		return rc;
	if (rep)
		*rep = r;
	conn->armed = false;
	return 0;
}

/* --- filters ------------------------------------------------------------ */

static uint32_t name_match_of(enum xp_name_match m)
{
	switch (m) {
	case XP_NAME_EXACT:
		return XPROBE_AGENT_NAME_EXACT;
	case XP_NAME_PREFIX:
		return XPROBE_AGENT_NAME_PREFIX;
	case XP_NAME_SUFFIX:
		return XPROBE_AGENT_NAME_SUFFIX;
	case XP_NAME_CONTAINS:
		return XPROBE_AGENT_NAME_CONTAINS;
	case XP_NAME_ANY:
		break;
	}
	return XPROBE_AGENT_NAME_ANY;
}

static int set_name(struct xprobe_agent_filter *f, uint32_t match, const char *name, size_t n,
		    const struct xp_selector *sel, struct xp_error *err)
{
	if (match == XPROBE_AGENT_NAME_ANY)
		return 0;
	if (n == 0 || n > XPROBE_NAME_MAX) {
		xp_error_detail_str(err, "selector", sel->text);
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "invalid event selector: the Agent filters names of 1 to %d "
				    "bytes, this one has %zu",
				    XPROBE_NAME_MAX, n);
	}
	f->name_match = match;
	f->name_len = (uint32_t)n;
	memcpy(f->name, name, n);
	return 0;
}

static uint32_t memcpy_kind_of(uint8_t k)
{
	switch (k) {
	case XP_MEMCPY_HTOD:
		return XPROBE_AGENT_MEMCPY_HTOD;
	case XP_MEMCPY_DTOH:
		return XPROBE_AGENT_MEMCPY_DTOH;
	case XP_MEMCPY_DTOD:
		return XPROBE_AGENT_MEMCPY_DTOD;
	case XP_MEMCPY_HTOH:
		return XPROBE_AGENT_MEMCPY_HTOH;
	case XP_MEMCPY_PTOP:
		return XPROBE_AGENT_MEMCPY_PTOP;
	}
	return XPROBE_AGENT_MEMCPY_ANY;
}

int xp_agent_filter_from_selector(const struct xp_selector *sel, enum xprobe_agent_mode mode,
				  struct xprobe_agent_filter *out, struct xp_error *err)
{
	const struct xp_name_filter *nf = &sel->name_filter;
	int rc;

	memset(out, 0, sizeof(*out));
	switch (sel->kind) {
	case XP_SEL_NVTX:
		out->kind = XPROBE_AGENT_KIND_NVTX_RANGE;
		if (!sel->has_filter) {
			xp_error_detail_str(err, "selector", sel->text);
			return xp_error_set(
				err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				"invalid event selector: the NVTX name regex does not "
				"reduce to an exact, prefix, suffix or contains filter");
		}
		rc = set_name(out, name_match_of(nf->match), nf->literal, nf->len, sel, err);
		return rc ? rc : 1;
	case XP_SEL_KERNEL:
		out->kind = XPROBE_AGENT_KIND_KERNEL;
		if (!sel->has_filter) {
			if (mode == XPROBE_AGENT_MODE_EXACT)
				return 1; /* any kernel; the correlator applies the regex */
			xp_error_detail_str(err, "selector", sel->text);
			xp_error_hint(err, "use ^literal$, ^literal.*, .*literal$, or .*literal.*");
			return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					    "aggregate kernel regex must be an exact, prefix, "
					    "suffix, or contains pattern that the CUPTI Agent can "
					    "apply");
		}
		rc = set_name(out, name_match_of(nf->match), nf->literal, nf->len, sel, err);
		return rc ? rc : 1;
	case XP_SEL_CUDA_API:
		out->kind = XPROBE_AGENT_KIND_CUDA_API;
		if (sel->category && !strcmp(sel->category, "runtime_api"))
			out->api_domain = XPROBE_AGENT_API_RUNTIME;
		else if (sel->category && !strcmp(sel->category, "driver_api"))
			out->api_domain = XPROBE_AGENT_API_DRIVER;
		rc = set_name(out, XPROBE_AGENT_NAME_EXACT, sel->name ? sel->name : "",
			      sel->name ? strlen(sel->name) : 0, sel, err);
		return rc ? rc : 1;
	case XP_SEL_MEMCPY:
		out->kind = XPROBE_AGENT_KIND_MEMCPY;
		if (sel->has_memcpy_kind)
			out->memcpy_kind = memcpy_kind_of(sel->memcpy_kind);
		return 1;
	case XP_SEL_MEMSET:
		out->kind = XPROBE_AGENT_KIND_MEMSET;
		return 1;
	default:
		return 0;
	}
}

int xp_agent_arm_build(const struct xp_selector *const *sels, size_t n, enum xprobe_agent_mode mode,
		       uint64_t capacity, struct xprobe_agent_req *req, struct xp_error *err)
{
	xp_agent_req_init(req, XPROBE_AGENT_OP_ARM);
	req->mode = mode;
	if (mode != XPROBE_AGENT_MODE_EXACT && mode != XPROBE_AGENT_MODE_AGGREGATE &&
	    mode != XPROBE_AGENT_MODE_HISTOGRAM)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "Agent mode %d", (int)mode);
	if (capacity == 0 || capacity > XPROBE_AGENT_CAPACITY_MAX) {
		const char *flag = mode == XPROBE_AGENT_MODE_EXACT ? "max-events" : "max-groups";

		xp_error_detail_u64(err,
				    mode == XPROBE_AGENT_MODE_EXACT ? "max_events" : "max_groups",
				    capacity);
		xp_error_detail_u64(err, "agent_capacity_max", XPROBE_AGENT_CAPACITY_MAX);
		xp_error_hint(err, "set --%s between 1 and %u for a measurement through the Agent",
			      flag, XPROBE_AGENT_CAPACITY_MAX);
		return xp_error_set(err, XPROBE_E_SESSION_LIMIT_EXCEEDED, true,
				    "--%s %" PRIu64 " is outside the Agent's capture bound of 1 "
				    "to %u",
				    flag, capacity, XPROBE_AGENT_CAPACITY_MAX);
	}
	req->capacity = capacity;
	for (size_t i = 0; i < n; i++) {
		struct xprobe_agent_filter f;
		bool dup = false;
		int rc = xp_agent_filter_from_selector(sels[i], mode, &f, err);

		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		for (uint32_t k = 0; k < req->nfilters; k++)
			dup |= !memcmp(&req->filters[k], &f, sizeof(f));
		if (dup)
			continue;
		if (req->nfilters == XPROBE_AGENT_MAX_FILTERS)
			return xp_error_set(err, XPROBE_E_INTERNAL, false,
					    "more than %d Agent endpoints in one measurement",
					    XPROBE_AGENT_MAX_FILTERS);
		req->filters[req->nfilters++] = f;
	}
	if (!req->nfilters)
		return xp_error_set(err, XPROBE_E_INTERNAL, false,
				    "an ARM request without an Agent endpoint");
	return 0;
}

bool xp_agent_req_needs_backend(const struct xprobe_agent_req *req)
{
	for (uint32_t i = 0; i < req->nfilters && i < XPROBE_AGENT_MAX_FILTERS; i++)
		if (req->filters[i].kind != XPROBE_AGENT_KIND_NVTX_RANGE &&
		    req->filters[i].kind != XPROBE_AGENT_KIND_NONE)
			return true;
	return false;
}
