/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_peer.h - a real client of the Agent's control socket for
 * libxprobe's tests (tests/unit/test_lib_agent.c): connect, build requests
 * (include/xprobe/agent.h), send them, read a reply and the record packets
 * that follow it; and the driver of tests/lib/agent_fixture (start it
 * under NVTX_INJECTION64_PATH, one command per line, read its answer).
 * Written from agent.h alone, as any client would be: it shares no code
 * with lib/agent/.  Header-only.
 */
#ifndef XPL_AGENT_PEER_H
#define XPL_AGENT_PEER_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xprobe/agent.h"

/* --- the socket ----------------------------------------------------------------- */

/* Connect to @path; the descriptor (receive timeout 5 s) or -errno. */
static __attribute__((unused)) int ap_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { 5, 0 };
	int fd, e;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		e = -errno;
		close(fd);
		return e;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static __attribute__((unused)) void ap_req(struct xprobe_agent_req *q, uint32_t op)
{
	memset(q, 0, sizeof(*q));
	memcpy(q->magic, XPROBE_AGENT_REQ_MAGIC, sizeof(q->magic));
	q->version = XPROBE_AGENT_PROTO_VERSION;
	q->op = op;
	q->size = sizeof(*q);
}

/* An ARM of @capacity records with no filters yet. */
static __attribute__((unused)) void ap_arm(struct xprobe_agent_req *q, uint64_t capacity)
{
	ap_req(q, XPROBE_AGENT_OP_ARM);
	q->capacity = capacity;
}

/* Append filter (@kind, @match, @name) to the ARM @q. */
static __attribute__((unused)) void ap_filter(struct xprobe_agent_req *q, uint32_t kind,
					      uint32_t match, const char *name)
{
	struct xprobe_agent_filter *f = &q->filters[q->nfilters++];

	f->kind = kind;
	f->name_match = match;
	f->name_len = name ? (uint32_t)strlen(name) : 0;
	if (name)
		memcpy(f->name, name, f->name_len);
}

/* A reply and the records that came after it. */
struct ap_reply {
	struct xprobe_agent_reply h;
	uint8_t *recs; /* the record packets, concatenated (malloc'd) */
	size_t len;
	uint32_t packets; /* record packets read */
	bool chunks_ok; /* each packet <= XPROBE_AGENT_CHUNK_MAX, whole records */
};

static __attribute__((unused)) void ap_reply_free(struct ap_reply *r)
{
	free(r->recs);
	memset(r, 0, sizeof(*r));
}

/* Whole records exactly filling @len bytes. */
static __attribute__((unused)) bool ap_whole_records(const uint8_t *p, size_t len)
{
	size_t o = 0;

	while (o + XPROBE_RECORD_HDR_SIZE <= len) {
		uint16_t size;

		memcpy(&size, p + o, sizeof(size));
		if (size < XPROBE_RECORD_HDR_SIZE || size % 8 || o + size > len)
			return false;
		o += size;
	}
	return o == len;
}

/*
 * Read one reply and its record packets into @r (zeroed or used before:
 * its previous records are freed).  0; -EPROTO for a reply that is not
 * one (size, magic); -errno when the socket fails or times out;
 * -ECONNRESET when the Agent closed the connection instead.
 */
static __attribute__((unused)) int ap_read_reply(int fd, struct ap_reply *r)
{
	static uint8_t buf[XPROBE_AGENT_CHUNK_MAX + 64];
	ssize_t n;

	ap_reply_free(r);
	n = recv(fd, &r->h, sizeof(r->h) + 1, MSG_TRUNC);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(r->h) || memcmp(r->h.magic, XPROBE_AGENT_REPLY_MAGIC, 8) ||
	    r->h.size != sizeof(r->h) || r->h.version != XPROBE_AGENT_PROTO_VERSION)
		return -EPROTO;
	r->chunks_ok = true;
	for (uint32_t k = 0; k < r->h.nchunks; k++) {
		uint8_t *grown;

		n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		if ((size_t)n > XPROBE_AGENT_CHUNK_MAX || !ap_whole_records(buf, (size_t)n))
			r->chunks_ok = false;
		if ((size_t)n > sizeof(buf))
			n = sizeof(buf);
		grown = realloc(r->recs, r->len + (size_t)n);
		if (!grown)
			return -ENOMEM;
		r->recs = grown;
		memcpy(r->recs + r->len, buf, (size_t)n);
		r->len += (size_t)n;
		r->packets++;
	}
	return 0;
}

/* Send @len bytes of @p as one request packet and read the reply. */
static __attribute__((unused)) int ap_rpc_raw(int fd, const void *p, size_t len, struct ap_reply *r)
{
	if (send(fd, p, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -errno;
	return ap_read_reply(fd, r);
}

static __attribute__((unused)) int ap_rpc(int fd, const struct xprobe_agent_req *q,
					  struct ap_reply *r)
{
	return ap_rpc_raw(fd, q, sizeof(*q), r);
}

/* A request of @op with nothing else: the reply's status (or a negative
 * transport error below -100000). */
static __attribute__((unused)) int ap_simple(int fd, uint32_t op, uint64_t offset,
					     struct ap_reply *r)
{
	struct xprobe_agent_req q;
	int rc;

	ap_req(&q, op);
	q.offset = offset;
	rc = ap_rpc(fd, &q, r);
	return rc ? rc - 100000 : r->h.status;
}

/* Walk the records of @r (stops at a record whose size is impossible). */
#define AP_FOR_EACH(r, rec)                                                                \
	for (size_t ap_o_ = 0; ap_o_ + XPROBE_RECORD_HDR_SIZE <= (r)->len &&               \
			       ((rec) = (const struct xprobe_record *)((r)->recs + ap_o_), \
			       (rec)->size >= XPROBE_RECORD_HDR_SIZE);                     \
	     ap_o_ += (rec)->size)

static __attribute__((unused)) const char *ap_name(const struct xprobe_record *rec, char *buf,
						   size_t size)
{
	size_t n = rec->name_len < size - 1 ? rec->name_len : size - 1;

	memcpy(buf, (const char *)rec + XPROBE_RECORD_HDR_SIZE, n);
	buf[n] = '\0';
	return buf;
}

static __attribute__((unused)) uint64_t ap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Does /proc/@pid/maps name a file containing @needle? (-1: unreadable) */
static __attribute__((unused)) int ap_maps_has(pid_t pid, const char *needle)
{
	char path[64], line[4096];
	FILE *f;
	int hit = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (!hit && fgets(line, sizeof(line), f))
		hit = strstr(line, needle) != NULL;
	fclose(f);
	return hit;
}

/* --- the fixture ---------------------------------------------------------------------------- */

struct ap_fixture {
	pid_t pid;
	int in; /* its stdin */
	FILE *out; /* its stdout */
};

/* Start @exe with @env added (NULL-terminated); stderr inherited. */
static __attribute__((unused)) int ap_fixture_start(struct ap_fixture *fx, const char *exe,
						    const char *const env[])
{
	int to[2], from[2];

	memset(fx, 0, sizeof(*fx));
	if (pipe(to) || pipe(from))
		return -1;
	fx->pid = fork();
	if (fx->pid < 0)
		return -1;
	if (fx->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	fx->in = to[1];
	fx->out = fdopen(from[0], "r");
	return fx->out ? 0 : -1;
}

/* Send one command line and read the answer line into @line (no newline).
 * 0, or -1 when the fixture said nothing (it died). */
static __attribute__((unused)) int ap_cmd(struct ap_fixture *fx, const char *cmd, char *line,
					  size_t size)
{
	char buf[256];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s\n", cmd);

	if (write(fx->in, buf, n) != (ssize_t)n)
		return -1;
	if (!fgets(line, (int)size, fx->out))
		return -1;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* "quit" and wait: the exit status (-1 when it did not exit by itself
 * within 10 s: killed). */
static __attribute__((unused)) int ap_fixture_stop(struct ap_fixture *fx)
{
	int st = -1;

	if (fx->pid <= 0)
		return -1;
	if (write(fx->in, "quit\n", 5) != 5) {
		/* already gone */
	}
	for (int i = 0; i < 1000; i++) {
		if (waitpid(fx->pid, &st, WNOHANG) == fx->pid)
			goto out;
		usleep(10000);
	}
	kill(fx->pid, SIGKILL);
	waitpid(fx->pid, &st, 0);
	st = -1;
out:
	close(fx->in);
	fclose(fx->out);
	fx->pid = 0;
	return st;
}

#endif /* XPL_AGENT_PEER_H */
