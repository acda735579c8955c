/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_client.c - the Agent client (src/agent/agent_client.c)
 * against fake Agents: a forked child is the target, in a mount namespace
 * of its own with a private /tmp (so the client goes through
 * /proc/<pid>/root and the test may plant any directory, link or file
 * there), serving the control socket with a script that answers well or
 * breaks one thing: the runtime directory's owner, mode or type, the
 * socket's, a socket nobody listens on, a socket served by another
 * process, and every kind of malformed or refused reply, a silent Agent,
 * a closed connection, oversized and missing record packets.  Each case
 * checks the contract code and the field or reason the error names.  The
 * fake server checks the requests the client sends, and its exit status
 * says whether they were well-formed.
 *
 * Also: the ARM filters built from parsed selectors.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_wire.h"
#include "capture/decode_agent.h"
#include "capture_text.h"
#include "agent/agent_client.h"
#include "error_text.h"
#include "process/identity.h"
#include "selector/selector.h"
#include "testlib.h"

/* --- the fake Agent ---------------------------------------------------- */

enum setup {
	SET_GOOD = 0,
	SET_SAME_NS, /* no private /tmp: the real runtime directory */
	SET_CHROOT, /* our mount namespace, another root with its own /tmp */
	SET_PIDNS, /* PID 1 of a PID namespace of its own (and a private /tmp) */
	SET_USERNS, /* uid 1000 of a user namespace of its own, 0 outside */
	SET_NO_DIR,
	SET_NO_SOCKET,
	SET_DIR_MODE, /* 0755 */
	SET_DIR_OWNER, /* owned by nobody */
	SET_DIR_LINK, /* a link to a good directory */
	SET_SOCK_FILE, /* a regular file where the socket should be */
	SET_SOCK_LINK, /* a link to a socket elsewhere */
	SET_SOCK_OWNER, /* socket owned by nobody */
	SET_STALE, /* a socket nobody listens on */
	SET_OTHER_PEER, /* served by a child of the target */
	SET_SWAP, /* the socket's name swapped with a link to an impostor's, over and over */
};

struct srv {
	int fd; /* the connection */
	uint32_t pid;
	uint64_t start_time;
	uint64_t committed; /* records sent so far */
	int nreq;
	int bad_requests;
};

/* How the fake answers a request; the default is a good reply. */
typedef void (*script_fn)(struct srv *s, const struct xprobe_agent_req *q);

static enum setup g_setup;
static script_fn g_script;
static uint64_t g_cap = 64; /* the capacity asked and armed */
static bool g_multi; /* serve connection after connection */
static char g_chroot[64]; /* SET_CHROOT's root, made by the child */
static struct xpt_pkt g_pkt;

static void send_pkt(struct srv *s, const void *buf, size_t len)
{
	if (send(s->fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		_exit(5);
}

static void good_reply(struct srv *s, const struct xprobe_agent_req *q,
		       struct xprobe_agent_reply *r)
{
	xpt_reply(r, q->op, s->pid, s->start_time, g_cap);
	if (q->op == XPROBE_AGENT_OP_HELLO) {
		r->arm_ns = 0;
		r->capacity = 0;
	}
	r->retained = r->observed = s->committed;
	if (q->op == XPROBE_AGENT_OP_STOP || q->op == XPROBE_AGENT_OP_CLOSE) {
		r->state = XPROBE_AGENT_STOPPED;
		r->stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	}
	if (q->op == XPROBE_AGENT_OP_SNAPSHOT || q->op == XPROBE_AGENT_OP_STOP)
		r->offset = q->offset;
}

/* Records for SNAPSHOT: one push and its pop per call. */
static void good_records(struct srv *s, const struct xprobe_agent_req *q)
{
	struct xprobe_agent_reply r;

	memset(&g_pkt, 0, sizeof(g_pkt));
	if (q->op == XPROBE_AGENT_OP_SNAPSHOT) {
		xpt_push(&g_pkt, s->pid, 5000 + s->committed, 0, "step");
		xpt_pop(&g_pkt, s->pid, 5001 + s->committed, 0);
	}
	good_reply(s, q, &r);
	xpt_reply_records(&r, q->offset, &g_pkt, g_pkt.n ? 1 : 0);
	s->committed += g_pkt.n;
	r.retained = r.observed = s->committed;
	send_pkt(s, &r, sizeof(r));
	if (g_pkt.n)
		send_pkt(s, g_pkt.b, g_pkt.len);
}

static void script_good(struct srv *s, const struct xprobe_agent_req *q)
{
	struct xprobe_agent_reply r;

	if (q->op == XPROBE_AGENT_OP_SNAPSHOT || q->op == XPROBE_AGENT_OP_STOP) {
		good_records(s, q);
		return;
	}
	good_reply(s, q, &r);
	send_pkt(s, &r, sizeof(r));
}

/* The requests the client sends must be exactly what agent.h says. */
static void check_request(struct srv *s, const struct xprobe_agent_req *q, ssize_t n)
{
	bool ok = n == (ssize_t)sizeof(*q) && !memcmp(q->magic, XPROBE_AGENT_REQ_MAGIC, 8) &&
		  q->version == XPROBE_AGENT_PROTO_VERSION && q->size == sizeof(*q) &&
		  (q->by == 0 || q->mode == XPROBE_AGENT_MODE_HISTOGRAM) &&
		  q->op >= XPROBE_AGENT_OP_HELLO && q->op <= XPROBE_AGENT_OP_CLOSE;

	if (ok && q->op == XPROBE_AGENT_OP_ARM)
		ok = q->capacity >= 1 && q->nfilters >= 1 && q->nfilters <= 2 && q->offset == 0;
	if (ok && q->op != XPROBE_AGENT_OP_ARM)
		ok = q->capacity == 0 && q->nfilters == 0 && q->mode == 0;
	if (ok && (q->op == XPROBE_AGENT_OP_HELLO || q->op == XPROBE_AGENT_OP_CLOSE))
		ok = q->offset == 0;
	if (ok && (q->op == XPROBE_AGENT_OP_SNAPSHOT || q->op == XPROBE_AGENT_OP_STOP))
		ok = q->offset == s->committed;
	if (!ok)
		s->bad_requests++;
}

static void serve(struct srv *s, int lfd)
{
	struct xprobe_agent_req q;

again:
	s->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (s->fd < 0)
		_exit(6);
	for (;;) {
		ssize_t n = recv(s->fd, &q, sizeof(q), 0);

		if (n <= 0 && g_multi) {
			close(s->fd);
			goto again;
		}
		if (n <= 0)
			_exit(s->bad_requests ? 3 : 0);
		check_request(s, &q, n);
		s->nreq++;
		(g_script ? g_script : script_good)(s, &q);
	}
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4))
		_exit(7);
	return fd;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		_exit(14);
	close(fd);
}

/* Our start time from /proc/self/stat (our PID may not be procfs's). */
static uint64_t self_start_time(void)
{
	struct xp_proc_stat st;
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		_exit(9);
	buf[n] = '\0';
	if (xp_proc_stat_parse(buf, &st))
		_exit(9);
	return st.start_time;
}

/*
 * The child: become the target, plant the setup, serve.  Readiness is one
 * byte on @ready: 'r' (the child is the target) or 'p' and the target's
 * PID as a u32 (SET_PIDNS: a grandchild in its own PID namespace).
 */
static void child(int ready)
{
	char dir[64], sock[256], tmp[256];
	struct srv s = { 0 };
	int lfd = -1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (g_setup == SET_PIDNS) {
		int inner[2], status = 0;
		char msg[5] = { 'p' };
		uint32_t gp32;
		pid_t gp;

		if (pipe(inner) || unshare(CLONE_NEWNS | CLONE_NEWPID) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777"))
			_exit(8);
		gp = fork();
		if (gp < 0)
			_exit(8);
		if (gp > 0) { /* tell the test whom to look at, then wait */
			if (read(inner[0], msg + 1, 1) != 1)
				_exit(8);
			gp32 = (uint32_t)gp;
			memcpy(msg + 1, &gp32, 4);
			if (write(ready, msg, 5) != 5)
				_exit(11);
			waitpid(gp, &status, 0);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 13);
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ready = inner[1];
	}
	s.pid = (uint32_t)getpid();
	s.start_time = self_start_time();
	if (g_setup == SET_CHROOT) {
		if (mkdir(g_chroot, 0755) && errno != EEXIST)
			_exit(8);
		snprintf(tmp, sizeof(tmp), "%s/tmp", g_chroot);
		if ((mkdir(tmp, 01777) && errno != EEXIST) || chroot(g_chroot) || chdir("/"))
			_exit(8);
	} else if (g_setup == SET_USERNS) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
			_exit(8);
		put("/proc/self/uid_map", "1000 0 1");
		put("/proc/self/setgroups", "deny");
		put("/proc/self/gid_map", "1000 0 1");
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") || geteuid() != 1000)
			_exit(8);
	} else if (g_setup != SET_SAME_NS && g_setup != SET_PIDNS) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777"))
			_exit(8);
	}
	snprintf(dir, sizeof(dir), XPROBE_AGENT_DIR_FMT, (unsigned)geteuid());
	snprintf(sock, sizeof(sock), "%s/" XPROBE_AGENT_SOCK_FMT, dir, (unsigned)s.pid,
		 (unsigned long long)s.start_time);
	if (g_setup == SET_DIR_LINK) {
		mkdir("/tmp/real", 0700);
		if (symlink("/tmp/real", dir))
			_exit(10);
	} else if (g_setup != SET_NO_DIR) {
		mkdir(dir, 0700);
		chmod(dir, g_setup == SET_DIR_MODE ? 0755 : 0700);
		if (g_setup == SET_DIR_OWNER && chown(dir, 65534, 65534))
			_exit(10);
	}
	switch (g_setup) {
	case SET_NO_DIR:
	case SET_NO_SOCKET:
		break;
	case SET_SOCK_FILE:
		close(open(sock, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		break;
	case SET_SOCK_LINK:
		snprintf(tmp, sizeof(tmp), "/tmp/elsewhere.sock");
		lfd = listen_at(tmp);
		if (symlink(tmp, sock))
			_exit(10);
		break;
	case SET_STALE:
		lfd = listen_at(sock);
		close(lfd); /* bound, then nobody listens */
		lfd = -1;
		break;
	case SET_OTHER_PEER: {
		pid_t p = fork();

		if (p == 0) { /* the impostor: same /tmp, another process */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			lfd = listen_at(sock);
			s.pid = (uint32_t)getppid();
			if (write(ready, "r", 1) != 1)
				_exit(11);
			serve(&s, lfd);
		}
		pause();
		_exit(0);
	}
	case SET_SWAP: {
		pid_t p;

		lfd = listen_at(sock);
		if (fork() == 0) { /* the impostor */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(lfd);
			lfd = listen_at("/tmp/elsewhere.sock");
			s.pid = (uint32_t)getppid();
			serve(&s, lfd);
		}
		p = fork();
		if (p == 0) { /* the directory's owner, swapping the name */
			char real[160], t1[160], t2[160];

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			snprintf(real, sizeof(real), "%s/real", dir);
			snprintf(t1, sizeof(t1), "%s/t1", dir);
			snprintf(t2, sizeof(t2), "%s/t2", dir);
			if (link(sock, real))
				_exit(10);
			for (;;) {
				unlink(t1);
				if (symlink("/tmp/elsewhere.sock", t1) == 0)
					rename(t1, sock);
				unlink(t2);
				if (link(real, t2) == 0)
					rename(t2, sock);
			}
		}
		break;
	}
	default:
		lfd = listen_at(sock);
		if (g_setup == SET_SOCK_OWNER && chown(sock, 65534, 65534))
			_exit(10);
		break;
	}
	if (write(ready, "r", 1) != 1)
		_exit(11);
	if (lfd < 0)
		pause();
	serve(&s, lfd);
}

struct fake {
	pid_t pid; /* the child to wait for */
	struct xp_target t; /* the target: the child or its grandchild */
};

static void fake_start(struct fake *f, enum setup setup, script_fn script)
{
	struct xp_error err = { 0 };
	uint32_t target;
	int p[2];
	char c = 0;

	g_setup = setup;
	g_script = script;
	if (pipe2(p, O_CLOEXEC))
		abort();
	f->pid = fork();
	if (f->pid == 0) {
		close(p[0]);
		child(p[1]);
		_exit(12);
	}
	close(p[1]);
	target = (uint32_t)f->pid;
	if (read(p[0], &c, 1) != 1)
		fprintf(stderr, "fake agent (setup %d) did not start\n", setup);
	if (c == 'p' && read(p[0], &target, 4) != 4)
		fprintf(stderr, "fake agent (setup %d) did not name its target\n", setup);
	close(p[0]);
	CHECK(xp_target_identify(target, &f->t, &err) == 0);
	xp_error_clear(&err);
}

/* Wait for the fake's exit (after the client closed): its verdict on the
 * requests, or -1 when it had to be killed. */
static int fake_stop(struct fake *f, bool kill_it)
{
	int status = 0;

	for (int i = 0; !kill_it && i < 200; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (waitpid(f->pid, &status, WNOHANG) == f->pid)
			goto done;
		nanosleep(&ts, NULL);
	}
	kill(f->pid, SIGKILL);
	waitpid(f->pid, &status, 0);
	xp_target_release(&f->t);
	return -1;
done:
	xp_target_release(&f->t);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The socket a SET_SAME_NS fake left in the real runtime directory. */
static void same_ns_cleanup(const struct fake *f)
{
	char path[256];

	snprintf(path, sizeof(path), XPROBE_AGENT_DIR_FMT "/" XPROBE_AGENT_SOCK_FMT,
		 (unsigned)geteuid(), (unsigned)f->pid, (unsigned long long)f->t.start_time);
	unlink(path);
}

/* --- cases ------------------------------------------------------------ */

static struct xp_selector sel_from, sel_to;

static void build_arm(struct xprobe_agent_req *req)
{
	const struct xp_selector *v[2] = { &sel_from, &sel_to };
	struct xp_error err = { 0 };

	CHECK(xp_agent_arm_build(v, 2, XPROBE_AGENT_MODE_EXACT, g_cap, req, &err) == 0);
	xp_error_clear(&err);
}

/* The whole good conversation, through /proc/<pid>/root or not. */
static void test_good(enum setup setup)
{
	struct xp_agent_conn conn;
	struct xp_capture_agent_dec dec;
	struct xp_capture cap;
	struct xprobe_agent_req req;
	struct xprobe_agent_reply rep;
	struct xp_error err = { 0 };
	char path[XP_AGENT_PATH_MAX];
	struct fake f;

	fake_start(&f, setup, NULL);
	CHECK(xp_agent_socket_path(&f.t, path, sizeof(path), &err) == 0);
	CHECK(xpt_contains(path, setup == SET_SAME_NS ? "/tmp/xprobe-agent-" : "/root/tmp/"));
	CHECK(setup == SET_SAME_NS || !strncmp(path, "/proc/", 6));
	CHECK(setup != SET_SAME_NS || !strncmp(path, "/tmp/", 5));
	CHECK(xp_agent_connect(&f.t, 1000, &conn, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK(conn.fd >= 0);
	CHECK_STR(conn.path, path);
	CHECK_EQ_U64(conn.pid, f.t.pid);
	CHECK_EQ_U64(conn.ns_pid, setup == SET_PIDNS ? 1 : f.t.pid);
	CHECK(conn.hello.features & XPROBE_AGENT_F_NVTX_ROUTED);
	CHECK(xp_agent_require_nvtx(&conn, "/x/libxprobe.so", &err) == 0);
	xp_capture_init(&cap, 100);
	CHECK(xp_capture_agent_dec_init(&dec, &cap, conn.ns_pid, f.t.start_time) == 0);
	build_arm(&req);
	CHECK(xp_agent_arm(&conn, &req, &rep, &err) == 0);
	CHECK(conn.armed);
	CHECK(xp_capture_agent_dec_reply(&dec, &rep, &err) == 0);
	CHECK(xp_agent_snapshot(&conn, &dec, &rep, &err) == 0);
	CHECK(xp_agent_snapshot(&conn, &dec, &rep, &err) == 0);
	CHECK(xp_agent_stop(&conn, &dec, &rep, &err) == 0);
	CHECK(!conn.armed);
	CHECK_STR(err.message, "");
	CHECK_EQ_U64(cap.count, 4);
	CHECK_EQ_U64(dec.st.records, 4);
	CHECK_EQ_U64(dec.st.state, XPROBE_AGENT_STOPPED);
	if (cap.count == 4) {
		CHECK_STR(xp_capture_str(&cap, cap.events[2].nvtx.name), "step");
		CHECK_EQ_U64(cap.events[3].event_type, XP_EV_NVTX_RANGE_END);
		CHECK_EQ_U64(cap.events[3].nvtx.range_id, ((uint64_t)conn.ns_pid << 32) | 2);
		CHECK_EQ_U64(cap.events[3].pid, conn.ns_pid);
	}
	CHECK(xp_agent_close(&conn, &rep, &err) == 0);
	xp_agent_disconnect(&conn);
	CHECK(conn.fd == -1);
	xp_agent_disconnect(&conn); /* twice is safe */
	if (setup == SET_SAME_NS)
		same_ns_cleanup(&f);
	CHECK_EQ_U64(fake_stop(&f, false), 0); /* every request well-formed */
	xp_capture_agent_dec_free(&dec);
	xp_capture_free(&cap);
	xp_error_clear(&err);
}

/* Connecting fails with @code, @reason somewhere in the message. */
static void expect_connect(enum setup setup, script_fn script, int code, const char *reason)
{
	struct xp_agent_conn conn;
	struct xp_error err = { 0 };
	struct fake f;
	int rc;

	fake_start(&f, setup, script);
	rc = xp_agent_connect(&f.t, 300, &conn, &err);
	if (rc != -code || !xpt_contains(err.message, reason))
		fprintf(stderr, "setup %d: rc %d, expected -%d \"%s\": %s\n", setup, rc, code,
			reason, err.message);
	CHECK_EQ_U64(rc, -code);
	CHECK_EQ_U64(err.code, code);
	CHECK(xpt_contains(err.message, reason));
	CHECK(conn.fd == -1);
	CHECK(xpt_detail_contains(&err, "pid", ""));
	if (code == XPROBE_E_CUPTI_AGENT_NOT_LOADED)
		CHECK(xpt_hint_contains(&err, "NVTX_INJECTION64_PATH"));
	if (code == XPROBE_E_PERMISSION_DENIED)
		CHECK(xp_error_detail_get(&err, "reason") != NULL);
	xp_error_clear(&err);
	fake_stop(&f, true);
}

static void test_socket_checks(void)
{
	expect_connect(SET_NO_DIR, NULL, XPROBE_E_CUPTI_AGENT_NOT_LOADED,
		       "runtime directory does not exist");
	expect_connect(SET_NO_SOCKET, NULL, XPROBE_E_CUPTI_AGENT_NOT_LOADED,
		       "control socket does not exist");
	expect_connect(SET_STALE, NULL, XPROBE_E_CUPTI_AGENT_NOT_LOADED, "nobody listens");
	expect_connect(SET_DIR_MODE, NULL, XPROBE_E_PERMISSION_DENIED, "mode 0755, not 0700");
	expect_connect(SET_DIR_OWNER, NULL, XPROBE_E_PERMISSION_DENIED, "owned by uid 65534");
	expect_connect(SET_DIR_LINK, NULL, XPROBE_E_PERMISSION_DENIED,
		       "is a symbolic link, not a directory");
	expect_connect(SET_SOCK_FILE, NULL, XPROBE_E_PERMISSION_DENIED,
		       "is a regular file, not a socket");
	expect_connect(SET_SOCK_LINK, NULL, XPROBE_E_PERMISSION_DENIED,
		       "is a symbolic link, not a socket");
	expect_connect(SET_SOCK_OWNER, NULL, XPROBE_E_PERMISSION_DENIED,
		       "socket is owned by uid 65534");
	expect_connect(SET_OTHER_PEER, NULL, XPROBE_E_PERMISSION_DENIED, "not by the target");
}

/*
 * The directory's owner swaps the socket's name with a link to an
 * impostor's socket between the check and the connect: whatever the
 * instant, the client connects to the socket it checked or says exactly
 * what it found.  Before, 31 of 200 connects read "the socket's path is
 * a socket, not a socket".
 */
static void test_socket_swapped(void)
{
	unsigned ok = 0, link_refused = 0, i;
	struct xp_agent_conn conn;
	struct xp_error err = { 0 };
	struct fake f;

	g_multi = true;
	fake_start(&f, SET_SWAP, NULL);
	g_multi = false;
	for (i = 0; i < 200; i++) {
		int rc = xp_agent_connect(&f.t, 300, &conn, &err);
		bool link = xpt_contains(err.message, "is a symbolic link, not a socket");

		if (rc == 0) {
			ok++;
			CHECK(conn.hello.pid == f.t.pid);
			xp_agent_disconnect(&conn);
		} else if (rc != -XPROBE_E_PERMISSION_DENIED || !link) {
			fprintf(stderr, "swapped socket, connect %u: %s\n", i, err.message);
			CHECK(!"a swapped socket's refusal says what was found");
			xp_error_clear(&err);
			break;
		} else {
			link_refused++;
		}
		xp_error_clear(&err);
	}
	fprintf(stderr, "swapped socket: %u connected to the checked socket, %u refused as a link\n",
		ok, link_refused);
	CHECK(ok > 0 && link_refused > 0);
	fake_stop(&f, true);
}

/* --- replies the client must refuse ------------------------------------ */

static uint32_t g_break_op; /* the op whose reply the scripts break */

#define BROKEN(name, ...)                                                 \
	static void name(struct srv *s, const struct xprobe_agent_req *q) \
	{                                                                 \
		struct xprobe_agent_reply r;                              \
		if (q->op != g_break_op) {                                \
			script_good(s, q);                                \
			return;                                           \
		}                                                         \
		good_reply(s, q, &r);                                     \
		__VA_ARGS__;                                              \
	}

BROKEN(b_magic, {
	r.magic[0] = 'Y';
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_short, send_pkt(s, &r, sizeof(r) - 8))
BROKEN(b_long, {
	uint8_t b[sizeof(r) + 16] = { 0 };
	memcpy(b, &r, sizeof(r));
	send_pkt(s, b, sizeof(b));
})
BROKEN(b_op, {
	r.op = q->op == XPROBE_AGENT_OP_CLOSE ? XPROBE_AGENT_OP_HELLO : XPROBE_AGENT_OP_CLOSE;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_version, {
	r.version = 9;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_features, {
	r.features = 0x100;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_state, {
	r.state = 9;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_message, {
	memset(r.message, 'm', sizeof(r.message));
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_pid, {
	r.pid++;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_start, {
	r.start_time++;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_records_on_hello, {
	r.nrecords = 1;
	r.bytes = 40;
	r.nchunks = 1;
	r.retained = r.observed = 1;
	r.capacity = 1;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_silent, (void)r)
BROKEN(b_close, {
	(void)r;
	close(s->fd);
	_exit(0);
})
BROKEN(b_fd, {
	/* a descriptor passed along with the reply */
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &r, sizeof(r) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	int fd = 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (sendmsg(s->fd, &mh, 0) != (ssize_t)sizeof(r))
		_exit(5);
})
BROKEN(b_status_busy, {
	r.status = -XPROBE_E_ALREADY_ACTIVE;
	snprintf(r.message, sizeof(r.message), "armed by pid 1");
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_status_backend, {
	r.status = -XPROBE_E_BACKEND_UNAVAILABLE;
	r.state = XPROBE_AGENT_FAILED;
	r.arm_ns = 0;
	snprintf(r.message, sizeof(r.message), "no CUPTI");
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_status_inval, {
	r.status = -XPROBE_E_INVALID_ARGUMENT;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_status_perm, {
	r.status = -XPROBE_E_PERMISSION_DENIED;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_status_notactive, {
	r.status = -XPROBE_E_NOT_ACTIVE;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_status_errno, {
	r.status = -ENOMEM;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_arm_idle, {
	r.state = XPROBE_AGENT_IDLE;
	r.arm_ns = 0;
	send_pkt(s, &r, sizeof(r));
})
BROKEN(b_arm_capacity, {
	r.capacity = 65;
	send_pkt(s, &r, sizeof(r));
})
/* record packets */
BROKEN(b_chunk_big, {
	memset(&g_pkt, 0, sizeof(g_pkt));
	while (g_pkt.len <= XPROBE_AGENT_CHUNK_MAX)
		xpt_pop(&g_pkt, s->pid, 9, 0);
	xpt_reply_records(&r, q->offset, &g_pkt, 2);
	send_pkt(s, &r, sizeof(r));
	send_pkt(s, g_pkt.b, g_pkt.len);
})
BROKEN(b_chunk_missing, {
	memset(&g_pkt, 0, sizeof(g_pkt));
	xpt_push(&g_pkt, s->pid, 9, 0, "a");
	xpt_pop(&g_pkt, s->pid, 10, 0);
	xpt_reply_records(&r, q->offset, &g_pkt, 2);
	send_pkt(s, &r, sizeof(r));
	send_pkt(s, g_pkt.b, 48); /* the second never comes */
})
BROKEN(b_chunk_bad_record, {
	memset(&g_pkt, 0, sizeof(g_pkt));
	xpt_push(&g_pkt, s->pid, 9, 0, "a");
	g_pkt.b[2] = XPROBE_EV_NVTX_MARK; /* no capture record */
	xpt_reply_records(&r, q->offset, &g_pkt, 1);
	send_pkt(s, &r, sizeof(r));
	send_pkt(s, g_pkt.b, g_pkt.len);
})
BROKEN(b_snapshot_offset, {
	r.offset = q->offset + 1;
	r.retained = r.observed = q->offset + 1;
	send_pkt(s, &r, sizeof(r));
})
#undef BROKEN

/*
 * Run a conversation up to @op, whose reply @script breaks; expect @code
 * with @what in the message or details; @closed: the client must have
 * dropped the connection.
 */
static void expect_reply(uint32_t op, script_fn script, int code, const char *what, bool closed)
{
	struct xp_agent_conn conn;
	struct xp_capture_agent_dec dec;
	struct xp_capture cap;
	struct xprobe_agent_req req;
	struct xprobe_agent_reply rep;
	struct xp_error err = { 0 };
	struct fake f;
	int rc;

	g_break_op = op;
	fake_start(&f, SET_GOOD, script);
	xp_capture_init(&cap, 10000);
	CHECK(xp_capture_agent_dec_init(&dec, &cap, (uint32_t)f.pid, f.t.start_time) == 0);
	rc = xp_agent_connect(&f.t, 300, &conn, &err);
	if (!rc) {
		build_arm(&req);
		rc = xp_agent_arm(&conn, &req, &rep, &err);
		if (!rc)
			rc = xp_capture_agent_dec_reply(&dec, &rep, &err);
	}
	if (!rc)
		rc = xp_agent_snapshot(&conn, &dec, &rep, &err);
	if (!rc)
		rc = xp_agent_stop(&conn, &dec, &rep, &err);
	if (!rc)
		rc = xp_agent_close(&conn, &rep, &err);
	{
		char *doc = xpt_render_error(&err);
		bool found = xpt_contains(doc, what);

		if (rc != -code || !found)
			fprintf(stderr, "op %u: rc %d, expected -%d with \"%s\": %s\n", op, rc,
				code, what, doc);
		CHECK(found);
		free(doc);
	}
	CHECK_EQ_U64(rc, -code);
	CHECK_EQ_U64(err.code, code);
	CHECK(xpt_detail_contains(&err, "pid", ""));
	CHECK(closed == (conn.fd < 0));
	if (code == XPROBE_E_TRACE_EXPORT_FAILED) {
		CHECK(!err.recoverable);
		CHECK(xpt_hint_contains(&err, "same release"));
	}
	xp_agent_disconnect(&conn);
	xp_capture_agent_dec_free(&dec);
	xp_capture_free(&cap);
	xp_error_clear(&err);
	fake_stop(&f, true);
}

static void test_bad_replies(void)
{
	const int TEF = XPROBE_E_TRACE_EXPORT_FAILED, NA = XPROBE_E_CUPTI_NOT_AVAILABLE;
	uint32_t ops[] = { XPROBE_AGENT_OP_HELLO, XPROBE_AGENT_OP_ARM, XPROBE_AGENT_OP_SNAPSHOT,
			   XPROBE_AGENT_OP_STOP, XPROBE_AGENT_OP_CLOSE };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint32_t op = ops[i];

		expect_reply(op, b_magic, TEF, "\"field\":\"magic\"", true);
		expect_reply(op, b_short, TEF, "\"field\":\"size\"", true);
		expect_reply(op, b_long, TEF, "\"field\":\"size\"", true);
		expect_reply(op, b_op, TEF, "\"field\":\"op\"", true);
		expect_reply(op, b_version, TEF, "\"field\":\"version\"", true);
		expect_reply(op, b_features, TEF, "\"field\":\"features\"", true);
		expect_reply(op, b_state, TEF, "\"field\":\"state\"", true);
		expect_reply(op, b_message, TEF, "\"field\":\"message\"", true);
		expect_reply(op, b_pid, TEF, "\"field\":\"pid\"", true);
		expect_reply(op, b_start, TEF, "\"field\":\"start_time\"", true);
		expect_reply(op, b_silent, NA, "\"timeout_ms\":300", true);
		expect_reply(op, b_close, NA, "closed the connection", true);
		expect_reply(op, b_fd, TEF, "ancillary", true);
	}
	expect_reply(XPROBE_AGENT_OP_HELLO, b_records_on_hello, TEF, "\"field\":\"nrecords\"",
		     true);
	/* refusals: mapped, the connection kept */
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_busy, NA, "already running a capture", false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_busy, NA, "one measurement at a time", false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_busy, NA, "\"agent_message\":\"armed by pid 1\"",
		     false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_backend, NA, "no CUDA device backend", false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_inval, XPROBE_E_INTERNAL, "as malformed", false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_status_perm, XPROBE_E_PERMISSION_DENIED,
		     "\"agent_status\":\"PERMISSION_DENIED\"", false);
	expect_reply(XPROBE_AGENT_OP_SNAPSHOT, b_status_notactive, NA, "no capture armed", false);
	expect_reply(XPROBE_AGENT_OP_STOP, b_status_errno, NA, "\"agent_status\":\"ERRNO\"", false);
	/* ARM replies that do not arm what was asked */
	expect_reply(XPROBE_AGENT_OP_ARM, b_arm_idle, NA, "\"capture_state\":\"idle\"", false);
	expect_reply(XPROBE_AGENT_OP_ARM, b_arm_capacity, TEF, "\"field\":\"capacity\"", true);
	/* record packets */
	g_cap = 4096;
	expect_reply(XPROBE_AGENT_OP_SNAPSHOT, b_chunk_big, TEF, "\"packet_bytes\":65560", true);
	g_cap = 64;
	expect_reply(XPROBE_AGENT_OP_SNAPSHOT, b_chunk_missing, NA, "\"timeout_ms\":300", true);
	expect_reply(XPROBE_AGENT_OP_STOP, b_chunk_bad_record, TEF, "\"field\":\"type\"", true);
	expect_reply(XPROBE_AGENT_OP_SNAPSHOT, b_snapshot_offset, TEF, "\"field\":\"offset\"",
		     true);
}

/* NVTX routing absent from HELLO: CUPTI_AGENT_NOT_LOADED with the hint. */
static void s_no_nvtx(struct srv *s, const struct xprobe_agent_req *q)
{
	struct xprobe_agent_reply r;

	good_reply(s, q, &r);
	r.features = XPROBE_AGENT_F_HOST_MONOTONIC | XPROBE_AGENT_F_INJECTED;
	send_pkt(s, &r, sizeof(r));
}

static void test_require_nvtx(void)
{
	struct xp_agent_conn conn;
	struct xp_error err = { 0 };
	struct fake f;

	fake_start(&f, SET_GOOD, s_no_nvtx);
	CHECK(xp_agent_connect(&f.t, 300, &conn, &err) == 0);
	CHECK(xp_agent_require_nvtx(&conn, "/opt/x/libxprobe.so", &err) ==
	      -XPROBE_E_CUPTI_NOT_AVAILABLE);
	CHECK(xpt_hint_contains(&err, "NVTX_INJECTION64_PATH=/opt/x/libxprobe.so"));
	CHECK(xpt_detail_contains(&err, "agent_activation", "startup_required"));
	xp_error_clear(&err);
	xp_agent_disconnect(&conn);
	fake_stop(&f, true);
}

/* --cupti-socket: a path the user gave. */
static void test_connect_path(void)
{
	struct xp_agent_conn conn;
	struct xp_error err = { 0 };
	char path[512];
	struct fake f;

	g_multi = true;
	fake_start(&f, SET_GOOD, NULL);
	g_multi = false;
	snprintf(path, sizeof(path), "/proc/%d/root" XPROBE_AGENT_DIR_FMT "/" XPROBE_AGENT_SOCK_FMT,
		 (int)f.pid, (unsigned)geteuid(), (unsigned)f.pid,
		 (unsigned long long)f.t.start_time);
	CHECK(xp_agent_connect_path(&f.t, path, 300, &conn, &err) == 0);
	CHECK_STR(err.message, "");
	xp_agent_disconnect(&conn);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/nothing.sock", (int)f.pid);
	CHECK(xp_agent_connect_path(&f.t, path, 300, &conn, &err) ==
	      -XPROBE_E_CUPTI_AGENT_NOT_LOADED);
	xp_error_clear(&err);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)f.pid);
	CHECK(xp_agent_connect_path(&f.t, path, 300, &conn, &err) == -XPROBE_E_PERMISSION_DENIED);
	CHECK(xpt_contains(err.message, "not a socket"));
	xp_error_clear(&err);
	fake_stop(&f, true);
}

/* Another uid cannot even look into the target's runtime directory. */
static void test_other_uid(void)
{
	struct fake f;
	pid_t p;
	int status = 0;

	fake_start(&f, SET_SAME_NS, NULL);
	p = fork();
	if (p == 0) {
		struct xp_agent_conn conn;
		struct xp_error err = { 0 };
		int rc;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		rc = xp_agent_connect(&f.t, 300, &conn, &err);
		if (rc != -XPROBE_E_PERMISSION_DENIED) {
			fprintf(stderr, "as nobody: rc %d: %s\n", rc, err.message);
			_exit(1);
		}
		_exit(0);
	}
	waitpid(p, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	same_ns_cleanup(&f);
	fake_stop(&f, true);
}

/* --- filters ----------------------------------------------------------- */

static int parse2(const char *a, const char *b)
{
	struct xp_error err = { 0 };
	int rc;

	xp_selector_free(&sel_from);
	xp_selector_free(&sel_to);
	memset(&sel_from, 0, sizeof(sel_from));
	memset(&sel_to, 0, sizeof(sel_to));
	rc = xp_selector_parse(a, &sel_from, &err);
	if (!rc)
		rc = xp_selector_parse(b, &sel_to, &err);
	if (rc)
		fprintf(stderr, "parse %s / %s: %s\n", a, b, err.message);
	xp_error_clear(&err);
	return rc;
}

static int arm_of(const char *a, const char *b, enum xprobe_agent_mode mode, uint64_t cap,
		  struct xprobe_agent_req *req, struct xp_error *err)
{
	const struct xp_selector *v[2] = { &sel_from, &sel_to };

	CHECK(parse2(a, b) == 0);
	return xp_agent_arm_build(v, 2, mode, cap, req, err);
}

static void test_filters(void)
{
	struct xprobe_agent_req q;
	struct xp_error err = { 0 };
	const enum xprobe_agent_mode EX = XPROBE_AGENT_MODE_EXACT;

	/* one NVTX filter for both ends of one name */
	CHECK(arm_of("cuda:nvtx_range_start:name~^step$", "cuda:nvtx_range_end:name~^step$", EX, 10,
		     &q, &err) == 0);
	CHECK_EQ_U64(q.nfilters, 1);
	CHECK_EQ_U64(q.capacity, 10);
	CHECK_EQ_U64(q.op, XPROBE_AGENT_OP_ARM);
	CHECK_EQ_U64(q.filters[0].kind, XPROBE_AGENT_KIND_NVTX_RANGE);
	CHECK_EQ_U64(q.filters[0].name_match, XPROBE_AGENT_NAME_EXACT);
	CHECK_EQ_U64(q.filters[0].name_len, 4);
	CHECK(!memcmp(q.filters[0].name, "step\0\0", 6));
	CHECK(!xp_agent_req_needs_backend(&q));
	/* two rules */
	CHECK(arm_of("cuda:nvtx_range_start:name~^fwd", "cuda:nvtx_range_end:name~bwd$", EX, 10, &q,
		     &err) == 0);
	CHECK_EQ_U64(q.nfilters, 2);
	CHECK_EQ_U64(q.filters[0].name_match, XPROBE_AGENT_NAME_PREFIX);
	CHECK_EQ_U64(q.filters[1].name_match, XPROBE_AGENT_NAME_SUFFIX);
	CHECK(arm_of("cuda:kernel_start:name~.*", "cuda:nvtx_range_end:name~mid", EX, 10, &q,
		     &err) == 0);
	CHECK_EQ_U64(q.filters[0].kind, XPROBE_AGENT_KIND_KERNEL);
	CHECK_EQ_U64(q.filters[0].name_match, XPROBE_AGENT_NAME_ANY);
	CHECK_EQ_U64(q.filters[0].name_len, 0);
	CHECK_EQ_U64(q.filters[1].name_match, XPROBE_AGENT_NAME_CONTAINS);
	/* a host endpoint is skipped */
	CHECK(arm_of("syscall:read:entry", "cuda:nvtx_range_end:name~^step$", EX, 10, &q, &err) ==
	      0);
	CHECK_EQ_U64(q.nfilters, 1);
	/* CUDA kinds */
	CHECK(arm_of("cuda:runtime_api:cudaLaunchKernel:entry", "cuda:kernel_end:name~^gemm", EX,
		     10, &q, &err) == 0);
	CHECK_EQ_U64(q.nfilters, 2);
	CHECK_EQ_U64(q.filters[0].kind, XPROBE_AGENT_KIND_CUDA_API);
	CHECK_EQ_U64(q.filters[0].api_domain, XPROBE_AGENT_API_RUNTIME);
	CHECK_EQ_U64(q.filters[0].name_match, XPROBE_AGENT_NAME_EXACT);
	CHECK_STR(q.filters[0].name, "cudaLaunchKernel");
	CHECK_EQ_U64(q.filters[1].kind, XPROBE_AGENT_KIND_KERNEL);
	CHECK_EQ_U64(q.filters[1].name_match, XPROBE_AGENT_NAME_PREFIX);
	CHECK(xp_agent_req_needs_backend(&q));
	CHECK(arm_of("cuda:driver_api:cuLaunchKernel:entry", "cuda:driver_api:cuLaunchKernel:exit",
		     EX, 10, &q, &err) == 0);
	CHECK_EQ_U64(q.nfilters, 1);
	CHECK_EQ_U64(q.filters[0].api_domain, XPROBE_AGENT_API_DRIVER);
	CHECK(arm_of("cuda:memcpy_start:kind=DtoH", "cuda:memset_end", EX, 10, &q, &err) == 0);
	CHECK_EQ_U64(q.filters[0].kind, XPROBE_AGENT_KIND_MEMCPY);
	CHECK_EQ_U64(q.filters[0].memcpy_kind, XPROBE_AGENT_MEMCPY_DTOH);
	CHECK_EQ_U64(q.filters[1].kind, XPROBE_AGENT_KIND_MEMSET);
	CHECK(arm_of("cuda:memcpy_start", "cuda:memcpy_end:kind=PtoP", EX, 10, &q, &err) == 0);
	CHECK_EQ_U64(q.filters[0].memcpy_kind, XPROBE_AGENT_MEMCPY_ANY);
	CHECK_EQ_U64(q.filters[1].memcpy_kind, XPROBE_AGENT_MEMCPY_PTOP);
	/* a kernel regex that does not reduce: any kernel (exact), refused (aggregate) */
	CHECK(arm_of("cuda:kernel_start:name~a.b", "cuda:kernel_end:name~a.b", EX, 10, &q, &err) ==
	      0);
	CHECK_EQ_U64(q.nfilters, 1);
	CHECK_EQ_U64(q.filters[0].name_match, XPROBE_AGENT_NAME_ANY);
	CHECK(arm_of("cuda:kernel_start:name~a.b", "cuda:kernel_end:name~a.b",
		     XPROBE_AGENT_MODE_AGGREGATE, 10, &q,
		     &err) == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK_EQ_U64(q.mode, XPROBE_AGENT_MODE_AGGREGATE);
	xp_error_clear(&err);
	/* bounds */
	CHECK(arm_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^a$", EX, 0, &q,
		     &err) == -XPROBE_E_SESSION_LIMIT_EXCEEDED);
	CHECK(xpt_contains(err.message, "--max-events 0"));
	xp_error_clear(&err);
	CHECK(arm_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^a$", EX,
		     XPROBE_AGENT_CAPACITY_MAX + 1ull, &q,
		     &err) == -XPROBE_E_SESSION_LIMIT_EXCEEDED);
	xp_error_clear(&err);
	CHECK(arm_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^a$", EX,
		     XPROBE_AGENT_CAPACITY_MAX, &q, &err) == 0);
	/* no Agent endpoint */
	CHECK(arm_of("syscall:read:entry", "syscall:read:exit", EX, 10, &q, &err) ==
	      -XPROBE_E_INTERNAL);
	xp_error_clear(&err);
	/* every request field but the filters stays zero */
	CHECK(arm_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^b$", EX, 7, &q,
		     &err) == 0);
	CHECK(!memcmp(q.magic, XPROBE_AGENT_REQ_MAGIC, 8));
	CHECK_EQ_U64(q.size, sizeof(q));
	CHECK_EQ_U64(q.offset, 0);
	CHECK_EQ_U64(q.by, 0);
	CHECK_EQ_U64(q.filters[1].reserved, 0);
}

/* --- the real Agent -------------------------------------------------- */

/*
 * tests/lib/agent_fixture under NVTX_INJECTION64_PATH=<build>/lib/
 * libxprobe.so: the Agent lib/agent/ serves, driven by the client, the
 * capture decoded; the fixture says what it did.
 */
struct real {
	pid_t pid;
	FILE *in, *out;
	char path[256]; /* the socket path the Agent reports */
	struct xp_target t;
};

static void build_path(char *out, size_t size, const char *rel)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/'); /* <build>/tests/test_agent_client */
	if (slash)
		*slash = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(out, size, "%s/%s", exe, rel);
}

static bool real_cmd(struct real *r, const char *cmd, char *ans, size_t size)
{
	fprintf(r->in, "%s\n", cmd);
	fflush(r->in);
	if (!fgets(ans, (int)size, r->out))
		return false;
	ans[strcspn(ans, "\n")] = '\0';
	return true;
}

static int real_start(struct real *r)
{
	char exe[600], lib[600], env[700], ans[512];
	struct xp_error err = { 0 };
	int in[2], out[2];
	long pid = 0;

	memset(r, 0, sizeof(*r));
	build_path(exe, sizeof(exe), "tests/lib/agent_fixture");
	build_path(lib, sizeof(lib), "lib/libxprobe.so");
	if (access(exe, X_OK) || access(lib, R_OK)) {
		fprintf(stderr, "%s or %s missing: build xpl_agent_fixture and libxprobe\n", exe,
			lib);
		return -1;
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	r->pid = fork();
	if (r->pid == 0) {
		char *argv[] = { exe, NULL };
		char *envp[] = { env, NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(env, sizeof(env), "NVTX_INJECTION64_PATH=%s", lib);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execve(exe, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	r->in = fdopen(in[1], "w");
	r->out = fdopen(out[0], "r");
	if (!real_cmd(r, "init", ans, sizeof(ans)) ||
	    sscanf(ans, "READY %ld %255s", &pid, r->path) != 2 || pid != r->pid) {
		fprintf(stderr, "agent_fixture: \"%s\"\n", ans);
		return -1;
	}
	if (xp_target_identify((uint32_t)r->pid, &r->t, &err)) {
		xp_error_clear(&err);
		return -1;
	}
	return 0;
}

static void real_stop(struct real *r)
{
	char ans[64];

	real_cmd(r, "quit", ans, sizeof(ans));
	fclose(r->in);
	fclose(r->out);
	waitpid(r->pid, NULL, 0);
	xp_target_release(&r->t);
}

/* One capture of the NVTX ranges named @name while @cmds run, with
 * snapshots after each command. */
static int real_capture(struct real *r, struct xp_agent_conn *conn, const char *name,
			uint64_t capacity, const char *const *cmds, size_t ncmds,
			struct xp_capture *cap, struct xp_capture_agent_dec *dec, char *last,
			size_t lsize)
{
	struct xprobe_agent_req req;
	struct xprobe_agent_reply rep;
	struct xp_error err = { 0 };
	char a[128], b[128];
	int rc;

	snprintf(a, sizeof(a), "cuda:nvtx_range_start:name~^%s$", name);
	snprintf(b, sizeof(b), "cuda:nvtx_range_end:name~^%s$", name);
	CHECK(parse2(a, b) == 0);
	{
		const struct xp_selector *v[2] = { &sel_from, &sel_to };

		CHECK(xp_agent_arm_build(v, 2, XPROBE_AGENT_MODE_EXACT, capacity, &req, &err) == 0);
	}
	xp_capture_init(cap, 100000);
	CHECK(xp_capture_agent_dec_init(dec, cap, conn->ns_pid, r->t.start_time) == 0);
	rc = xp_agent_arm(conn, &req, &rep, &err);
	if (!rc)
		rc = xp_capture_agent_dec_reply(dec, &rep, &err);
	for (size_t i = 0; !rc && i < ncmds; i++) {
		CHECK(real_cmd(r, cmds[i], last, lsize));
		rc = xp_agent_snapshot(conn, dec, &rep, &err);
	}
	if (!rc)
		rc = xp_agent_stop(conn, dec, &rep, &err);
	if (rc)
		fprintf(stderr, "real capture of %s: %s\n", name, err.message);
	xp_error_clear(&err);
	return rc;
}

/* Every end has its start before it (same range id, name, start thread). */
static size_t unpaired(const struct xp_capture *c, const char *name)
{
	size_t bad = 0;

	for (size_t i = 0; i < c->count; i++) {
		const struct xp_event *e = &c->events[i];
		bool found = e->event_type == XP_EV_NVTX_RANGE_START;

		if (strcmp(xp_capture_str(c, e->nvtx.name), name))
			bad++;
		for (size_t k = 0; !found && k < i; k++)
			found = c->events[k].event_type == XP_EV_NVTX_RANGE_START &&
				c->events[k].nvtx.range_id == e->nvtx.range_id &&
				c->events[k].tid == e->nvtx.start_tid;
		bad += !found;
	}
	return bad;
}

static void test_real_agent(void)
{
	static const char *const names[] = { "names 3", "burst 2" };
	static const char *const span[] = { "xthread 4" };
	static const char *const burst[] = { "burst 5" };
	struct xp_agent_conn conn, other;
	struct xp_error err = { 0 };
	struct xp_capture_agent_dec dec;
	struct xp_capture cap;
	struct xprobe_agent_req req;
	struct xprobe_agent_reply rep;
	char last[256];
	long tb = 0, tm = 0;
	struct real r;
	int rc;

	CHECK(real_start(&r) == 0);
	if (!r.pid)
		return;
	CHECK(xp_agent_connect(&r.t, 2000, &conn, &err) == 0);
	CHECK_STR(err.message, "");
	CHECK_STR(conn.path, r.path);
	CHECK(xp_agent_require_nvtx(&conn, NULL, &err) == 0);
	CHECK(!(conn.hello.features & XPROBE_AGENT_F_INJECTED));
	CHECK_EQ_U64(conn.hello.state, XPROBE_AGENT_IDLE);

	/* "step" exactly: stepper, prestep, other and the long name rejected
	 * in the hot path (observed counts only what passed) */
	CHECK(real_capture(&r, &conn, "step", 1000, names, 2, &cap, &dec, last, sizeof(last)) == 0);
	CHECK_EQ_U64(cap.count, 10);
	CHECK_EQ_U64(dec.st.records, 10);
	CHECK_EQ_U64(dec.st.observed, 10);
	CHECK_EQ_U64(dec.st.state, XPROBE_AGENT_STOPPED);
	CHECK_EQ_U64(dec.st.stop_reason, XPROBE_AGENT_STOP_REQUESTED);
	CHECK(dec.st.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK_EQ_U64(cap.dropped, 0);
	CHECK_EQ_U64(unpaired(&cap, "step"), 0);
	CHECK_EQ_U64(cap.events[0].pid, (uint32_t)r.pid);
	CHECK(cap.events[0].timestamp_ns >= dec.st.arm_ns);
	xp_capture_agent_dec_free(&dec);
	xp_capture_free(&cap);

	/* process ranges started on one thread, ended on another */
	CHECK(real_capture(&r, &conn, "span", 1000, span, 1, &cap, &dec, last, sizeof(last)) == 0);
	CHECK(sscanf(last, "DONE xthread %ld %ld", &tb, &tm) == 2);
	CHECK_EQ_U64(cap.count, 8);
	CHECK_EQ_U64(unpaired(&cap, "span"), 0);
	for (size_t i = 0; i < cap.count; i++) {
		const struct xp_event *e = &cap.events[i];

		CHECK_EQ_U64(e->nvtx.range_kind, XP_NVTX_PROCESS);
		CHECK_EQ_U64(e->tid, e->event_type == XP_EV_NVTX_RANGE_START ? tb : tm);
		CHECK_EQ_U64(e->nvtx.start_tid, tb);
	}
	xp_capture_agent_dec_free(&dec);
	xp_capture_free(&cap);

	/* a capture that fills: frozen at its capacity, the rest dropped */
	CHECK(real_capture(&r, &conn, "step", 3, burst, 1, &cap, &dec, last, sizeof(last)) == 0);
	CHECK_EQ_U64(cap.count, 3);
	CHECK(cap.record_limit_reached);
	CHECK_EQ_U64(dec.st.stop_reason, XPROBE_AGENT_STOP_RECORD_LIMIT);
	CHECK(cap.dropped > 0);
	CHECK_EQ_U64(dec.st.observed, dec.st.retained + dec.st.dropped);
	xp_capture_agent_dec_free(&dec);
	xp_capture_free(&cap);

	/* one capture at a time: a second client is refused while armed ... */
	req.op = 0;
	CHECK(parse2("cuda:nvtx_range_start:name~^step$", "cuda:nvtx_range_end:name~^step$") == 0);
	{
		const struct xp_selector *v[2] = { &sel_from, &sel_to };

		CHECK(xp_agent_arm_build(v, 2, XPROBE_AGENT_MODE_EXACT, 10, &req, &err) == 0);
	}
	CHECK(xp_agent_arm(&conn, &req, &rep, &err) == 0);
	CHECK(xp_agent_connect(&r.t, 2000, &other, &err) == 0);
	rc = xp_agent_arm(&other, &req, &rep, &err);
	CHECK_EQ_U64(rc, -XPROBE_E_CUPTI_NOT_AVAILABLE);
	CHECK(xpt_contains(err.message, "already running a capture"));
	CHECK(xpt_hint_contains(&err, "one measurement at a time"));
	CHECK(other.fd >= 0); /* a refusal keeps the connection */
	xp_error_clear(&err);
	/* ... until the first one goes away (a killed xprobe): disarmed */
	xp_agent_disconnect(&conn);
	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		xp_error_clear(&err);
		rc = xp_agent_arm(&other, &req, &rep, &err);
		if (rc != -XPROBE_E_CUPTI_NOT_AVAILABLE)
			break;
		nanosleep(&ts, NULL);
	}
	CHECK_EQ_U64(rc, 0);
	CHECK(xp_agent_close(&other, &rep, &err) == 0);
	xp_agent_disconnect(&other);
	xp_error_clear(&err);
	real_stop(&r);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_agent_client runs as root (mount namespaces)\n");
		return 1;
	}
	test_filters();
	CHECK(parse2("cuda:nvtx_range_start:name~^step$", "cuda:nvtx_range_end:name~^step$") == 0);
	test_good(SET_GOOD);
	test_good(SET_SAME_NS);
	snprintf(g_chroot, sizeof(g_chroot), "/tmp/agentcli-chroot-%d", (int)getpid());
	test_good(SET_CHROOT);
	test_good(SET_PIDNS);
	test_good(SET_USERNS);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", g_chroot);
		CHECK(system(cmd) == 0);
	}
	test_socket_checks();
	test_socket_swapped();
	test_require_nvtx();
	test_connect_path();
	test_other_uid();
	test_bad_replies();
	test_real_agent();
	xp_selector_free(&sel_from);
	xp_selector_free(&sel_to);
	TEST_MAIN_END();
}
