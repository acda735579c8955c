/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c - the Agent's control socket: where it lives and who may use
 * it, the one server thread that answers it, the five requests of agent.h,
 * xprobe_agent_start() / xprobe_agent_socket_path(), the library
 * constructor that starts it, and what exit and fork do to it.
 * docs/agent.md is the protocol as a client sees it.
 *
 * The directory.  XPROBE_AGENT_DIR_FMT with our effective uid, created
 * 0700 if missing; then lstat (not a link), opened O_NOFOLLOW|O_DIRECTORY,
 * fstat of the descriptor (same inode as the lstat, a directory, owned by
 * us, mode exactly 0700).  Anything else and nothing is served: the log
 * says why.  /tmp is sticky, so nobody else can rename or replace a
 * directory we own there; every later name is resolved through the
 * checked descriptor (/proc/self/fd/<dirfd>/<name> for bind and connect,
 * *at() calls for the rest).
 *
 * The socket.  SOCK_SEQPACKET bound to agent-<pid>-<start>.sock.tmp
 * (unlinked first), chmod 0600, listening, then renamed onto
 * agent-<pid>-<start>.sock: the final name only ever names a socket that
 * accepts.  Before serving, the directory's stale sockets are removed:
 * names of our pattern whose pid+start time is not a live process here
 * and whose socket refuses a connection (so the socket of a live process
 * in another PID namespace sharing /tmp is kept).
 *
 * The thread.  Detached, every signal blocked; first it registers the
 * process for membarrier (what disarming needs, slow in a multi-threaded
 * process), then it blocks in poll() on the listening socket and the open
 * connections: nothing wakes it while idle.
 * While a capture is armed it also prefaults the capture ahead of its
 * writers (a poll timeout of 0 or 10 ms until that is done).  A peer is
 * checked with SO_PEERCRED as soon as it is accepted: our euid or root,
 * else closed before a byte is read.  At most MAX_CONNS connections; one
 * request is one packet, answered before the next is read.  A connection
 * that closes (a killed CLI: poll reports the hang-up at once) takes its
 * capture with it: disarmed, freed.  Replies are sent blocking with a
 * send timeout (SEND_TIMEOUT_MS); a peer that stops reading is dropped.
 *
 * Never unloaded.  Before the first thread starts, the library pins
 * itself (RTLD_NODELETE): a dlclose() of it is then a no-op, so the thread
 * never runs in unmapped code.
 *
 * Injected or not.  The constructor starts the socket through
 * agent_serve(false).  xprobe_agent_start(), the exported entry point, is
 * what online injection calls after its remote dlopen (the constructor
 * already ran then) and what a program calls to ask for an Agent itself:
 * it marks the Agent XPROBE_AGENT_F_INJECTED ("started on request"), whose
 * CLOSE removes the socket and ends the thread; the library stays mapped
 * and a later xprobe_agent_start() serves again.  libxprobe never calls
 * its own exported function.
 *
 * Locks.  ag.lock guards ag (the served socket, its path, the owner pid)
 * and every descriptor of the server's (the listening socket, the
 * directory, the connections), so the fork child can close exactly those;
 * the captures and the connection table's other fields belong to the
 * server thread alone.
 *
 * Exit and fork.  At exit the socket is unlinked (only by the process
 * that created it).  A forked child serves nothing: it closes its copies
 * of the server's descriptors, forgets the parent's socket and capture
 * (never freeing what the parent's thread owned), and has an Agent again
 * only if it calls xprobe_agent_start().
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../device/cupti.h"
#include "../internal.h"
#include "../nvtx/nvtx_abi.h"
#include "../producers/agent_capture.h"
#include "capfile.h"
#include "parse.h"
#include "request.h"
#include "xprobe/agent.h"

#define MAX_CONNS 8
#define SEND_TIMEOUT_MS 2000
#define SNDBUF_BYTES (512 * 1024)
#define SWEEP_MAX 256 /* directory entries looked at per start */
/* poll timeout while the armed capture's prefault window is filled */
#define PREFAULT_POLL_MS 10
/* a pending connection that cannot be accepted for want of descriptors
 * (the program at its limit) leaves the socket readable: it is not polled
 * again for this long, instead of spinning */
#define ACCEPT_BACKOFF_MS 100

/*
 * Every descriptor of the server is checked (xpl_fd_same) before it is
 * accepted on, read from or closed: the program may close them (a daemon
 * closes every descriptor) and reuse the numbers, and must then find its
 * socket's data unread, its files open, and no thread spinning on a file
 * that always polls readable.
 */
struct conn {
	int fd; /* -1: free */
	struct xpl_fdid id;
	uint32_t uid;
	int32_t pid;
};

/*
 * The Agent's diagnostics go to the traced program's stderr, so a flood
 * of refused connections must not flood it: of each reason, the first is
 * said, then at most one a minute, with the count held back since.
 */
enum diag { DIAG_REFUSED_UID, DIAG_REFUSED_FULL, DIAG__COUNT };
#define DIAG_INTERVAL_NS (60ull * 1000000000ull)

struct diag_rate {
	uint64_t last_ns; /* when one was last said */
	uint64_t held; /* since then, not said */
	bool said;
};

struct srv {
	int lfd; /* listening socket (-1 once unpublished) */
	struct xpl_fdid lid, did; /* what lfd and dirfd are */
	int dirfd; /* the checked directory */
	char name[96]; /* the socket's name in it */
	struct conn conns[MAX_CONNS];
	struct xpl_agent_cap *cap; /* the one capture (armed, or stopped) */
	int owner; /* fd of the connection the capture belongs to, -1 none */
	bool quit; /* CLOSE of an injected Agent: end the thread */
	uint64_t accept_after_ns; /* CLOCK_MONOTONIC before which lfd is not polled */
	bool fd_limit_said; /* the descriptor limit was logged (once until it passes) */
	struct diag_rate diag[DIAG__COUNT];
	uint64_t start_time;
	uint8_t chunk[XPROBE_AGENT_CHUNK_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct srv *srv; /* the served socket, NULL when none */
	pid_t pid; /* the process that serves it */
	char path[160];
	_Atomic bool injected; /* started by xprobe_agent_start() */
} ag = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;
static struct srv *parent_srv; /* a fork child keeps its parent's reachable */

/* --- the directory and the socket ------------------------------------------------- */

/* The path by which bind() and connect() reach @name in the checked
 * directory without resolving its path again. */
static int at_path(struct sockaddr_un *a, int dirfd, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	return xpl_snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
}

/* A runtime directory we may serve in: a directory (not a link), ours,
 * mode exactly 0700. */
static int dir_ok(const char *dir, const struct stat *st, uid_t uid)
{
	if (S_ISLNK(st->st_mode))
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: %s is a symbolic link, not a directory: refusing to serve "
				"through it",
				dir);
	if (!S_ISDIR(st->st_mode))
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: %s exists and is not a directory", dir);
	if (st->st_uid != uid)
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: %s is owned by uid %u, not by this process's uid %u: "
				"refusing to serve in it (remove it)",
				dir, (unsigned)st->st_uid, (unsigned)uid);
	if ((st->st_mode & 07777) != 0700)
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: %s has mode 0%o, not 0700: refusing to serve in it", dir,
				(unsigned)(st->st_mode & 07777));
	return 0;
}

/*
 * Create (0700) or check the runtime directory and open it; 0 and the
 * descriptor in *dirfd, or an error filled in saying what is wrong with it.
 */
static int dir_open(const char *dir, uid_t uid, int *dirfd)
{
	struct stat ls, fs;
	int fd, rc;

	*dirfd = -1;
	if (mkdir(dir, 0700) == 0) {
		/* our umask may have taken bits away; nobody else can replace a
		 * directory we own in sticky /tmp meanwhile */
		chmod(dir, 0700);
	} else if (errno != EEXIST) {
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot create %s: %s", dir,
				strerror(errno));
	}
	if (lstat(dir, &ls) != 0)
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot stat %s: %s", dir,
				strerror(errno));
	rc = dir_ok(dir, &ls, uid);
	if (rc)
		return rc;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot open %s: %s", dir,
				strerror(errno));
	/* the directory opened is the one checked, and still passes */
	if (fstat(fd, &fs) != 0 || fs.st_dev != ls.st_dev || fs.st_ino != ls.st_ino) {
		close(fd);
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: %s changed while it was being checked", dir);
	}
	rc = dir_ok(dir, &fs, uid);
	if (rc) {
		close(fd);
		return rc;
	}
	*dirfd = fd;
	return 0;
}

/* "agent-<pid>-<start>.sock" or the same with ".tmp": the pid and start. */
static bool parse_name(const char *name, uint64_t *pid, uint64_t *start)
{
	char num[32];
	const char *p = name, *dash, *dot;
	size_t n;

	if (strncmp(p, "agent-", 6) != 0)
		return false;
	p += 6;
	dash = strchr(p, '-');
	if (!dash || (n = (size_t)(dash - p)) == 0 || n >= sizeof(num))
		return false;
	memcpy(num, p, n);
	num[n] = '\0';
	if (xpc_parse_u64(num, 1, UINT32_MAX, pid) != 0)
		return false;
	p = dash + 1;
	dot = strchr(p, '.');
	if (!dot || (n = (size_t)(dot - p)) == 0 || n >= sizeof(num))
		return false;
	memcpy(num, p, n);
	num[n] = '\0';
	if (xpc_parse_u64(num, 0, UINT64_MAX, start) != 0)
		return false;
	return !strcmp(dot, ".sock") || !strcmp(dot, ".sock.tmp");
}

/* Nobody listens on @name: connect() is refused (a live Agent accepts,
 * whatever PID namespace it is in). */
static bool refuses(int dirfd, const char *name)
{
	struct sockaddr_un a;
	bool dead = false;
	int fd;

	if (at_path(&a, dirfd, name) < 0)
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		dead = errno == ECONNREFUSED;
	close(fd);
	return dead;
}

/* Remove the sockets of processes that are gone (see the top comment). */
static void sweep(int dirfd, const char *own)
{
	struct dirent *e;
	unsigned seen = 0;
	DIR *d;
	int fd = dup(dirfd);

	if (fd < 0)
		return;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) && seen++ < SWEEP_MAX) {
		uint64_t pid, start;

		if (!strcmp(e->d_name, own) || !parse_name(e->d_name, &pid, &start))
			continue;
		if (xpl_process_start_time((int)pid) == start)
			continue; /* alive */
		if (refuses(dirfd, e->d_name)) {
			unlinkat(dirfd, e->d_name, 0);
			pr_debug("agent: removed the stale socket %s", e->d_name);
		}
	}
	closedir(d);
}

/* Make the directory and the listening socket: 0 and *out, or an error
 * filled in. */
static int srv_open(struct srv **out, char *path, size_t pathlen)
{
	char dir[64], tmp[112];
	struct sockaddr_un a;
	struct srv *s;
	uid_t uid = geteuid();
	uint32_t pid = (uint32_t)getpid();
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return xpl_fail(-ENOMEM, "agent: out of memory");
	s->lfd = -1;
	s->owner = -1;
	for (int i = 0; i < MAX_CONNS; i++)
		s->conns[i].fd = -1;
	s->start_time = xpl_process_start_time(0);
	snprintf(dir, sizeof(dir), XPROBE_AGENT_DIR_FMT, (unsigned)uid);
	rc = dir_open(dir, uid, &s->dirfd);
	if (rc)
		goto fail;
	snprintf(s->name, sizeof(s->name), XPROBE_AGENT_SOCK_FMT, pid,
		 (unsigned long long)s->start_time);
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->name);
	if (xpl_snprintf(path, pathlen, "%s/%s", dir, s->name) < 0) {
		rc = xpl_fail(-XPROBE_E_INTERNAL, "agent: socket path too long");
		goto fail;
	}
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		rc = xpl_fail(-XPROBE_E_INTERNAL, "agent: socket: %s", strerror(errno));
		goto fail;
	}
	if (unlinkat(s->dirfd, tmp, 0) != 0 && errno != ENOENT) {
		rc = xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot remove %s/%s: %s", dir,
			      tmp, strerror(errno));
		goto fail;
	}
	if (at_path(&a, s->dirfd, tmp) < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		rc = xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot bind %s/%s: %s", dir, tmp,
			      strerror(errno));
		goto fail;
	}
	if (fchmodat(s->dirfd, tmp, 0600, 0) != 0 || listen(s->lfd, 16) != 0 ||
	    renameat(s->dirfd, tmp, s->dirfd, s->name) != 0) {
		rc = xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: cannot publish %s: %s", path,
			      strerror(errno));
		unlinkat(s->dirfd, tmp, 0);
		goto fail;
	}
	sweep(s->dirfd, s->name);
	xpl_fdid_take(s->lfd, &s->lid);
	xpl_fdid_take(s->dirfd, &s->did);
	*out = s;
	return 0;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
	return rc;
}

/* Stop serving the socket (the thread goes on with its open connections
 * until it quits); @ours: the listening descriptor is still ours to close.
 * Caller does not hold ag.lock. */
static void srv_unpublish(struct srv *s, bool ours)
{
	pthread_mutex_lock(&ag.lock);
	if (ag.srv == s) {
		ag.srv = NULL;
		ag.path[0] = '\0';
		atomic_store(&ag.injected, false);
	}
	if (s->lfd >= 0) {
		if (xpl_fd_same(s->dirfd, &s->did))
			unlinkat(s->dirfd, s->name, 0);
		if (ours)
			xpl_close_same(s->lfd, &s->lid);
		s->lfd = -1;
	}
	pthread_mutex_unlock(&ag.lock);
}

/* --- connections ------------------------------------------------------------------- */

static struct conn *conn_of(struct srv *s, int fd)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].fd == fd)
			return &s->conns[i];
	return NULL;
}

/* Close a connection; its capture goes with it. */
static void conn_drop(struct srv *s, struct conn *cn)
{
	if (s->owner == cn->fd) {
		xpl_capture_free(s->cap);
		s->cap = NULL;
		s->owner = -1;
	}
	pthread_mutex_lock(&ag.lock);
	xpl_close_same(cn->fd, &cn->id);
	cn->fd = -1;
	pthread_mutex_unlock(&ag.lock);
}

/* Whether to say one of @d now; *held: how many were held back before it. */
static bool diag_say(struct srv *s, enum diag d, uint64_t *held)
{
	struct diag_rate *r = &s->diag[d];
	uint64_t now = xpl_mono_ns();

	if (r->said && now - r->last_ns < DIAG_INTERVAL_NS) {
		r->held++;
		return false;
	}
	*held = r->held;
	r->held = 0;
	r->said = true;
	r->last_ns = now;
	return true;
}

/* Accept every pending connection; false: the listening descriptor is
 * no longer ours (the program closed it and reused its number). */
static bool accept_all(struct srv *s)
{
	for (;;) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		uint64_t held;
		struct timeval tv = { SEND_TIMEOUT_MS / 1000, (SEND_TIMEOUT_MS % 1000) * 1000 };
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC), sndbuf = SNDBUF_BYTES;
		struct conn *cn;

		if (fd < 0 &&
		    (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
			/* no descriptor for it now: try again later, never spin */
			if (!s->fd_limit_said)
				pr_warn("agent: cannot accept a connection: %s; retrying every "
					"%d ms",
					strerror(errno), ACCEPT_BACKOFF_MS);
			s->fd_limit_said = true;
			s->accept_after_ns = xpl_mono_ns() + ACCEPT_BACKOFF_MS * 1000000ull;
			return true;
		}
		if (fd < 0) /* EAGAIN: none left (or a connection that went away) */
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
			       errno == ECONNABORTED || xpl_fd_same(s->lfd, &s->lid);
		s->fd_limit_said = false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
		    (cr.uid != geteuid() && cr.uid != 0)) {
			if (diag_say(s, DIAG_REFUSED_UID, &held))
				pr_warn("agent: refused a connection from uid %u (pid %d): only uid "
					"%u or root may drive this process's Agent (%llu more "
					"refused since the last such line; at most one a minute)",
					len == sizeof(cr) ? (unsigned)cr.uid : ~0u,
					len == sizeof(cr) ? (int)cr.pid : -1, (unsigned)geteuid(),
					(unsigned long long)held);
			close(fd);
			continue;
		}
		cn = conn_of(s, -1);
		if (!cn) {
			if (diag_say(s, DIAG_REFUSED_FULL, &held))
				pr_warn("agent: refused a connection from pid %d: %d connections are "
					"open (%llu more refused since the last such line; at most "
					"one a minute)",
					(int)cr.pid, MAX_CONNS, (unsigned long long)held);
			close(fd);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		pthread_mutex_lock(&ag.lock);
		cn->fd = fd;
		xpl_fdid_take(fd, &cn->id);
		cn->uid = cr.uid;
		cn->pid = cr.pid;
		pthread_mutex_unlock(&ag.lock);
	}
}

static int send_all(int fd, const void *p, size_t len)
{
	ssize_t n;

	do
		n = send(fd, p, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

/* --- replies ------------------------------------------------------------------------------ */

/* What the Agent can do now; HOST_MONOTONIC unless the capture's device
 * records failed the backend's clock check (cupti.c). */
static uint32_t features(const struct srv *s, uint32_t *cuda_major, uint32_t *cupti_major)
{
	uint32_t f = XPROBE_AGENT_F_HOST_MONOTONIC;

	if (s->cap && s->cap->device && atomic_load(&s->cap->clock_bad))
		f &= ~XPROBE_AGENT_F_HOST_MONOTONIC;
	if (xpl_nvtx_routed())
		f |= XPROBE_AGENT_F_NVTX_ROUTED;
	if (atomic_load(&ag.injected))
		f |= XPROBE_AGENT_F_INJECTED;
	if (xpl_cupti_loaded(cuda_major, cupti_major))
		f |= XPROBE_AGENT_F_DEVICE_BACKEND;
	return f;
}

static void reply_init(struct srv *s, struct xprobe_agent_reply *r, uint32_t op)
{
	struct xpl_capture_stats st;

	memset(r, 0, sizeof(*r));
	memcpy(r->magic, XPROBE_AGENT_REPLY_MAGIC, sizeof(r->magic));
	r->version = XPROBE_AGENT_PROTO_VERSION;
	r->op = op;
	r->size = sizeof(*r);
	r->features = features(s, &r->cuda_major, &r->cupti_major);
	r->pid = (uint32_t)getpid();
	r->start_time = s->start_time;
	xpl_capture_stats(s->cap, &st);
	r->state = st.state;
	r->stop_reason = st.stop_reason;
	r->capacity = st.capacity;
	r->observed = st.observed;
	r->retained = st.retained;
	r->dropped = st.dropped;
	r->unknown = st.unknown;
	r->arm_ns = s->cap ? s->cap->arm_ns : 0;
	r->mode = s->cap ? s->cap->mode : 0;
}

static void reply_err(struct xprobe_agent_reply *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_err(struct xprobe_agent_reply *r, int status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	pr_debug("agent: refused op %u: %s", r->op, r->message);
}

/* Send @r and, from @rd, its record chunks.  0, or -1 when the peer is
 * gone or stopped reading (the caller drops it). */
static int send_reply(struct srv *s, int fd, struct xprobe_agent_reply *r,
		      struct xpl_capture_read *rd)
{
	if (rd) {
		r->offset = rd->idx;
		r->nrecords = rd->nrecords;
		r->bytes = rd->bytes;
		r->nchunks = rd->nchunks;
	}
	if (send_all(fd, r, sizeof(*r)))
		return -1;
	for (uint32_t k = 0; rd && k < rd->nchunks; k++) {
		size_t n = xpl_capture_read_chunk(rd, s->chunk, sizeof(s->chunk));

		if (NEVER(!n) || send_all(fd, s->chunk, n))
			return -1;
	}
	return 0;
}

/* --- the requests ----------------------------------------------------------------------------- */

static bool device_kinds(const struct xprobe_agent_req *q)
{
	for (uint32_t i = 0; i < q->nfilters; i++)
		if (q->filters[i].kind != XPROBE_AGENT_KIND_NVTX_RANGE)
			return true;
	return false;
}

static void do_arm(struct srv *s, struct conn *cn, const struct xprobe_agent_req *q,
		   struct xprobe_agent_reply *r)
{
	struct xpl_agent_cap *c;
	const char *out;

	if (xpl_capfile_busy(&out)) {
		/* the hot path has one published capture (capfile.c) */
		reply_err(r, -XPROBE_E_ALREADY_ACTIVE,
			  "this process records every NVTX range into XPROBE_AGENT_OUTPUT=%s until "
			  "it exits or calls xprobe_agent_output_flush(); one capture at a time",
			  out);
		return;
	}
	if (s->cap && s->cap->armed) {
		struct conn *o = conn_of(s, s->owner);

		reply_err(r, -XPROBE_E_ALREADY_ACTIVE,
			  "a capture is already armed in this process (driven by pid %d); one "
			  "measurement at a time",
			  o ? (int)o->pid : -1);
		return;
	}
	if (xpl_capture_new(q, &c) != 0) {
		if (q->mode == XPROBE_AGENT_MODE_HISTOGRAM)
			reply_err(r, -XPROBE_E_INTERNAL,
				  "cannot allocate histograms for %llu groups (%llu bytes) and "
				  "%llu in-flight slots",
				  (unsigned long long)q->capacity,
				  (unsigned long long)q->capacity *
					  sizeof(struct xprobe_agent_hist),
				  (unsigned long long)q->offset);
		else
			reply_err(r, -XPROBE_E_INTERNAL,
				  "cannot allocate a capture of %llu records (%llu bytes)",
				  (unsigned long long)q->capacity,
				  (unsigned long long)q->capacity * XPROBE_RECORD_MAX_SIZE);
		r->state = XPROBE_AGENT_FAILED;
		return;
	}
	if (device_kinds(q)) {
		/* the CUPTI backend: loaded on the first such ARM (cupti.c) */
		char why[sizeof(r->message)];
		int rc = xpl_cupti_agent_prepare(c, q, why, sizeof(why));

		if (rc) {
			xpl_capture_free(c);
			reply_init(s, r, q->op);
			reply_err(r, rc, "%s", why);
			r->state = XPROBE_AGENT_FAILED;
			return;
		}
		/* the disarm's last flush (lib/producers/agent_capture.h) */
		c->device_stop = xpl_cupti_agent_stop;
	}
	xpl_capture_free(s->cap); /* a stopped one */
	s->cap = c;
	s->owner = cn->fd;
	xpl_capture_arm(c);
	if (c->device) {
		char why[sizeof(r->message)];
		int rc = xpl_cupti_agent_start(c, why, sizeof(why));

		if (rc) {
			xpl_capture_free(c);
			s->cap = NULL;
			s->owner = -1;
			reply_init(s, r, q->op);
			reply_err(r, rc, "%s", why);
			r->state = XPROBE_AGENT_FAILED;
			return;
		}
	}
	reply_init(s, r, q->op);
	pr_info("agent: armed by pid %d: %llu %s, %u NVTX rule(s)%s", (int)cn->pid,
		(unsigned long long)c->capacity,
		c->mode == XPROBE_AGENT_MODE_EXACT ? "records" : "groups", c->nrules,
		c->device ? ", CUDA filters" : "");
}

/* SNAPSHOT and STOP: @rd is filled when records follow. */
static int do_read(struct srv *s, struct conn *cn, const struct xprobe_agent_req *q,
		   struct xprobe_agent_reply *r, struct xpl_capture_read *rd)
{
	if (!s->cap || s->owner != cn->fd) {
		reply_err(r, -XPROBE_E_NOT_ACTIVE,
			  "this connection has no capture: %s needs an ARM on the same connection",
			  q->op == XPROBE_AGENT_OP_STOP ? "STOP" : "SNAPSHOT");
		return -1;
	}
	/* CUPTI's completed buffers first, so the read sees them */
	if (s->cap->armed && s->cap->device && q->op == XPROBE_AGENT_OP_SNAPSHOT)
		xpl_cupti_agent_flush(s->cap);
	/* check the offset before a STOP disarms anything */
	if (xpl_capture_read_begin(s->cap, q->offset, XPROBE_AGENT_CHUNK_MAX, rd) != 0) {
		reply_err(r, -XPROBE_E_INVALID_ARGUMENT,
			  "offset %llu is past the records committed so far",
			  (unsigned long long)q->offset);
		return -1;
	}
	if (q->op == XPROBE_AGENT_OP_STOP && s->cap->armed) {
		xpl_capture_disarm(s->cap);
		/* records that were being written at the disarm are committed now */
		xpl_capture_read_begin(s->cap, q->offset, XPROBE_AGENT_CHUNK_MAX, rd);
	}
	reply_init(s, r, q->op);
	return 0;
}

static void do_close(struct srv *s, struct conn *cn, struct xprobe_agent_reply *r)
{
	if (s->cap && s->cap->armed && s->owner != cn->fd) {
		reply_err(r, -XPROBE_E_ALREADY_ACTIVE,
			  "another connection's capture is armed: CLOSE it from that connection");
		return;
	}
	if (s->cap && s->owner == cn->fd)
		xpl_capture_disarm(s->cap);
	reply_init(s, r, XPROBE_AGENT_OP_CLOSE);
	if (s->cap && s->owner == cn->fd) {
		xpl_capture_free(s->cap);
		s->cap = NULL;
		s->owner = -1;
	}
	if (atomic_load(&ag.injected)) {
		/* before the reply: once the client reads it, the socket is gone
		 * and a new xprobe_agent_start() serves a new one */
		srv_unpublish(s, true);
		s->quit = true;
		pr_info("agent: closed; the socket of this injected Agent is removed");
	}
}

/* One request of @cn.  false: drop the connection. */
static bool handle(struct srv *s, struct conn *cn)
{
	uint8_t buf[sizeof(struct xprobe_agent_req) + 64];
	struct xpl_capture_read rd, *rdp = NULL;
	struct xprobe_agent_req q;
	struct xprobe_agent_reply r;
	char why[sizeof(r.message)];
	ssize_t n;

	n = recv(cn->fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false; /* the peer closed (or sent an empty packet: the same) */
	if (xpl_agent_req_decode(buf, (size_t)n, &q, why, sizeof(why)) != 0) {
		reply_init(
			s, &r,
			xpl_agent_req_op(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf)));
		reply_err(&r, -XPROBE_E_INVALID_ARGUMENT, "malformed request: %s", why);
		return send_reply(s, cn->fd, &r, NULL) == 0;
	}
	reply_init(s, &r, q.op);
	switch (q.op) {
	case XPROBE_AGENT_OP_HELLO:
		break;
	case XPROBE_AGENT_OP_ARM:
		do_arm(s, cn, &q, &r);
		break;
	case XPROBE_AGENT_OP_SNAPSHOT:
	case XPROBE_AGENT_OP_STOP:
		if (do_read(s, cn, &q, &r, &rd) == 0)
			rdp = &rd;
		break;
	case XPROBE_AGENT_OP_CLOSE:
		do_close(s, cn, &r);
		if (send_reply(s, cn->fd, &r, NULL) == 0 && r.status)
			return true; /* refused: the connection stays */
		return false; /* CLOSE ends the conversation */
	}
	return send_reply(s, cn->fd, &r, rdp) == 0;
}

/* --- the thread ------------------------------------------------------------------------------ */

static void srv_free(struct srv *s)
{
	xpl_capture_free(s->cap);
	s->cap = NULL;
	pthread_mutex_lock(&ag.lock);
	for (int i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].fd >= 0) {
			xpl_close_same(s->conns[i].fd, &s->conns[i].id);
			s->conns[i].fd = -1;
		}
	if (s->dirfd >= 0)
		xpl_close_same(s->dirfd, &s->did);
	s->dirfd = -1;
	pthread_mutex_unlock(&ag.lock);
	free(s);
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	struct pollfd pfd[1 + MAX_CONNS];

	pthread_setname_np(pthread_self(), "xprobe-agent");
	/* the membarrier registration takes a synchronize_rcu() in a
	 * multi-threaded process (6 to 20 ms here): paid now, on this thread,
	 * not by the first ARM (nor by the application's threads) */
	xpl_trace_fences();
	while (!s->quit) {
		int n = 0, timeout = -1, pending = xpl_capture_prefault_pending(s->cap), rc;
		uint64_t now = s->accept_after_ns ? xpl_mono_ns() : 0;

		if (s->lfd >= 0 && now >= s->accept_after_ns) {
			s->accept_after_ns = 0;
			pfd[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		} else if (s->lfd >= 0) {
			/* backing off: wake when the listening socket is due */
			timeout = (int)((s->accept_after_ns - now) / 1000000ull) + 1;
		}
		for (int i = 0; i < MAX_CONNS; i++)
			if (s->conns[i].fd >= 0)
				pfd[n++] = (struct pollfd){ .fd = s->conns[i].fd,
							    .events = POLLIN | POLLRDHUP };
		if (pending && (timeout < 0 || timeout > (pending == 1 ? 0 : PREFAULT_POLL_MS)))
			timeout = pending == 1 ? 0 : PREFAULT_POLL_MS;
		rc = poll(pfd, (nfds_t)n, timeout);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			pr_warn("agent: poll failed: %s; the control socket is no longer served",
				strerror(errno));
			break;
		}
		if (rc == 0) {
			if (pending)
				xpl_capture_prefault_step(s->cap);
			continue;
		}
		for (int k = 0; k < n && !s->quit; k++) {
			struct conn *cn;

			if (!pfd[k].revents)
				continue;
			if (pfd[k].fd == s->lfd) {
				if ((pfd[k].revents & POLLNVAL) || !xpl_fd_same(s->lfd, &s->lid) ||
				    !accept_all(s)) {
					/* the program closed our descriptor under us (and
					 * may have reused its number: never touched again) */
					pr_warn("agent: the listening socket was closed by the "
						"program; the control socket is no longer served");
					srv_unpublish(s, false);
					s->quit = true;
					break;
				}
				continue;
			}
			cn = conn_of(s, pfd[k].fd);
			if (!cn)
				continue;
			if ((pfd[k].revents & POLLNVAL) || !xpl_fd_same(cn->fd, &cn->id)) {
				/* closed by the program, or its number reused: before
				 * a byte is read from what may be the program's socket */
				pthread_mutex_lock(&ag.lock);
				cn->fd = -1; /* not ours any more: never close it */
				pthread_mutex_unlock(&ag.lock);
				if (s->owner == pfd[k].fd) {
					xpl_capture_free(s->cap);
					s->cap = NULL;
					s->owner = -1;
				}
				continue;
			}
			if (pfd[k].revents & POLLIN) {
				if (!handle(s, cn))
					conn_drop(s, cn);
			} else {
				conn_drop(s, cn); /* hang-up or error */
			}
		}
	}
	if (!s->quit)
		srv_unpublish(s, true);
	srv_free(s);
	return NULL;
}

/* --- start, exit, fork -------------------------------------------------------------------------- */

static void agent_atexit(void)
{
	pthread_mutex_lock(&ag.lock);
	if (ag.srv && ag.pid == getpid() && ag.srv->lfd >= 0)
		unlinkat(ag.srv->dirfd, ag.srv->name, 0);
	pthread_mutex_unlock(&ag.lock);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&ag.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&ag.lock);
}

static void fork_child(void)
{
	struct srv *s = ag.srv;

	/* the child has no server thread: it must not keep the parent's socket
	 * listening, nor record into the parent's capture */
	atomic_store(&xpl_agent_hot.cap, NULL);
	atomic_fetch_add(&xpl_agent_hot.gen, 1);
	if (s) {
		if (s->lfd >= 0)
			xpl_close_same(s->lfd, &s->lid);
		if (s->dirfd >= 0)
			xpl_close_same(s->dirfd, &s->did);
		for (int i = 0; i < MAX_CONNS; i++)
			if (s->conns[i].fd >= 0)
				xpl_close_same(s->conns[i].fd, &s->conns[i].id);
		parent_srv = s;
	}
	ag.srv = NULL;
	ag.path[0] = '\0';
	atomic_store(&ag.injected, false);
	pthread_mutex_unlock(&ag.lock);
}

/*
 * Pin libxprobe in memory: once the server thread runs code in it, a
 * dlclose() must not unmap it (the NVTX loader dlcloses an injection whose
 * InitializeInjectionNvtx2 returns 0; a program may dlclose what it
 * dlopened).  RTLD_NODELETE on our own file makes every dlclose a no-op.
 * In a static link the address is the executable's: nothing to pin.
 */
static void pin_library(void)
{
	Dl_info di;

	if (dladdr((void *)pin_library, &di) && di.dli_fname && di.dli_fname[0])
		(void)dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static void install_hooks(void)
{
	pin_library();
	atexit(agent_atexit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* XPROBE_AGENT: 1 when the Agent may start, 0 when it is switched off
 * (0/false/no/off), -1 for a value that says neither (not started). */
static int env_allows(void)
{
	const char *v = secure_getenv("XPROBE_AGENT");

	if (!v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
		return 1;
	if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))
		return 0;
	return -1;
}

static int agent_serve(bool on_request)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	struct srv *s;
	char path[sizeof(ag.path)];
	int rc;

	if (getauxval(AT_SECURE))
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED,
				"agent: this process runs with AT_SECURE (setuid, setgid or "
				"capabilities): no control socket is served in it");
	rc = env_allows();
	if (rc <= 0)
		return xpl_fail(-XPROBE_E_PERMISSION_DENIED, "agent: XPROBE_AGENT=%s: %s",
				secure_getenv("XPROBE_AGENT"),
				rc == 0 ? "the control socket is switched off" :
					  "expected 0 or 1; the control socket is not served");
	pthread_once(&hooks_once, install_hooks);
	pthread_mutex_lock(&ag.lock);
	if (ag.srv && ag.pid == getpid()) {
		if (on_request)
			atomic_store(&ag.injected, true);
		pthread_mutex_unlock(&ag.lock);
		return 0;
	}
	rc = srv_open(&s, path, sizeof(path));
	if (rc) {
		pthread_mutex_unlock(&ag.lock);
		return rc;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&th, &attr, srv_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		unlinkat(s->dirfd, s->name, 0);
		close(s->lfd);
		close(s->dirfd);
		free(s);
		pthread_mutex_unlock(&ag.lock);
		return xpl_fail(-XPROBE_E_INTERNAL, "agent: cannot start the server thread: %s",
				strerror(rc));
	}
	ag.srv = s;
	ag.pid = getpid();
	memcpy(ag.path, path, sizeof(ag.path));
	atomic_store(&ag.injected, on_request);
	pthread_mutex_unlock(&ag.lock);
	pr_info("agent: serving %s", path);
	return 0;
}

XPROBE_API int xprobe_agent_start(void)
{
	xpl_clear_error();
	return agent_serve(true);
}

XPROBE_API int xprobe_agent_socket_path(char *buf, size_t size)
{
	int rc;

	if (!buf || !size)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "buf must not be NULL nor size 0");
	pthread_mutex_lock(&ag.lock);
	if (!ag.srv || ag.pid != getpid()) {
		pthread_mutex_unlock(&ag.lock);
		buf[0] = '\0';
		return xpl_fail(-XPROBE_E_NOT_ACTIVE,
				"no control socket is served by this process");
	}
	rc = xpl_snprintf(buf, size, "%s", ag.path);
	if (rc < 0)
		rc = xpl_fail(-XPROBE_E_TRUNCATED,
			      "the socket path needs %zu bytes, buffer has %zu",
			      strlen(ag.path) + 1, size);
	else
		rc = 0;
	pthread_mutex_unlock(&ag.lock);
	return rc;
}

/*
 * The socket is served from the moment the library is loaded: after the
 * log level (101) and the environment's inspect session (102).  Quietly
 * nothing in an AT_SECURE process or with XPROBE_AGENT=0; any other
 * failure is a warning saying why.
 */
__attribute__((constructor(103))) static void agent_from_load(void)
{
	int rc;

	if (getauxval(AT_SECURE) || env_allows() == 0)
		return;
	rc = agent_serve(false);
	if (rc)
		pr_warn("%s", xprobe_last_error());
}
