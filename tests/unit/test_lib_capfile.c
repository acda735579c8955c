// SPDX-License-Identifier: Apache-2.0
/*
 * test_lib_capfile.c - the Agent's saved capture (lib/agent/capfile.c):
 * tests/lib/agent_fixture, an NVTX program that has libxprobe only through
 * NVTX_INJECTION64_PATH, run with XPROBE_AGENT_OUTPUT=<path>; the file it
 * leaves is read here from include/xprobe/agent.h alone (struct
 * xprobe_agent_capfile, then the records) and compared with what the
 * fixture did.
 *
 *   plain      every NVTX range recorded (no name rule), the header is the
 *              final STOP reply of the whole capture, mode 0600, no
 *              temporary left, the log says how many records
 *   limit      XPROBE_AGENT_MAX_RECORDS=10: 10 kept, the ranges begun after
 *              dropped, RECORD_LIMIT
 *   env        unusable values (capacity 0, too large, not a number, empty;
 *              an empty path, a directory, a missing directory) arm
 *              nothing, say why, and the control socket still ARMs
 *   socket     an ARM over the socket while it records: ALREADY_ACTIVE
 *              naming the path; xprobe_agent_output_flush() writes it
 *              now, the socket ARMs again, a second flush is NOT_ACTIVE,
 *              exit rewrites nothing
 *   links      a symbolic link (dangling or not), a FIFO, a directory at
 *              the path: refused at load or at write, nothing followed or
 *              opened, no temporary left, the process exits 0; the
 *              directory swapped for another between load and exit:
 *              nothing written into either
 *   relative   a relative path is the working directory's at load
 *   signal     SIGTERM and SIGSEGV: written on the signal's path
 *              (F_SIGNAL, the signal), the process still dies of it
 *   fork       a child that exits normally writes nothing (the file is
 *              its parent's) and its ranges are not in the parent's file
 *   disk       a full tmpfs: the write fails, is logged with the reason,
 *              leaves no temporary, the process exits 0
 *   secure     secure_target (it dlopens libxprobe) setuid to another
 *              user and run by a third: AT_SECURE, no file; the same
 *              copy without the bit writes one
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../lib/agent_peer.h"
#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

#define OWNER_UID 65534 /* nobody: owns the setuid copy */
#define RUNNER_UID 65533 /* another unprivileged user runs it */

static char scratch[PATH_MAX], libso[PATH_MAX], fixture_exe[PATH_MAX];

/* --- the fixture --------------------------------------------------------------------- */

struct fx {
	struct ap_fixture ap;
	char sock[256]; /* its control socket */
	char err[PATH_MAX]; /* its stderr */
};

/*
 * Start the fixture under NVTX injection with XPROBE_AGENT_OUTPUT=@out
 * (unset when NULL) and XPROBE_AGENT_MAX_RECORDS=@max (unset when NULL),
 * stderr into @tag.err in the scratch directory; "init".  0 or -1.
 */
static int fx_start(struct fx *f, const char *tag, const char *out, const char *max)
{
	static char e_inject[PATH_MAX + 32], e_out[PATH_MAX + 32], e_max[96];
	const char *env[8];
	char line[512];
	long pid = 0;
	int n = 0, saved, fd, rc;

	snprintf(e_inject, sizeof(e_inject), "NVTX_INJECTION64_PATH=%s", libso);
	env[n++] = e_inject;
	/* ASan would report a SIGSEGV and exit 1 rather than die of it */
	env[n++] = "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:handle_segv=0";
	env[n++] = "XPROBE_LOG_LEVEL=info";
	if (out) {
		snprintf(e_out, sizeof(e_out), "XPROBE_AGENT_OUTPUT=%s", out);
		env[n++] = e_out;
	}
	if (max) {
		snprintf(e_max, sizeof(e_max), "XPROBE_AGENT_MAX_RECORDS=%s", max);
		env[n++] = e_max;
	}
	env[n] = NULL;
	snprintf(f->err, sizeof(f->err), "%s/%s.err", scratch, tag);
	fd = open(f->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
	rc = ap_fixture_start(&f->ap, fixture_exe, env);
	dup2(saved, 2);
	close(saved);
	if (rc || ap_cmd(&f->ap, "init", line, sizeof(line)))
		return -1;
	if (sscanf(line, "READY %ld %255s", &pid, f->sock) != 2 || pid != f->ap.pid) {
		fprintf(stderr, "fixture said: %s\n", line);
		return -1;
	}
	return 0;
}

static bool fx_do(struct fx *f, const char *cmd)
{
	char line[256], want[64];

	snprintf(want, sizeof(want), "DONE %s", cmd);
	want[strcspn(want + 5, " ") + 5] = '\0';
	return ap_cmd(&f->ap, cmd, line, sizeof(line)) == 0 && !strncmp(line, want, strlen(want));
}

/* "quit": true when it exited 0 by itself. */
static bool fx_quit(struct fx *f)
{
	int st = ap_fixture_stop(&f->ap);

	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* @sig to the fixture: true when it died of it. */
static bool fx_kill(struct fx *f, int sig)
{
	int st = 0;

	kill(f->ap.pid, sig);
	if (waitpid(f->ap.pid, &st, 0) != f->ap.pid)
		return false;
	close(f->ap.in);
	fclose(f->ap.out);
	f->ap.pid = -1;
	return WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static bool err_has(const struct fx *f, const char *text)
{
	static char buf[65536];

	lt_read_file(f->err, buf, sizeof(buf));
	if (strstr(buf, text))
		return true;
	fprintf(stderr, "  (stderr of the fixture lacks \"%s\":)\n%s", text, buf);
	return false;
}

/* --- the file ------------------------------------------------------------------------- */

struct capfile {
	struct xprobe_agent_capfile h;
	uint8_t *recs;
	size_t len; /* bytes of records */
	uint64_t pushes, pops, names[6]; /* step stepper prestep other long(127) ? */
	bool ts_ordered; /* each thread's records in its time order, none before ARM */
};

/* Each thread's last timestamp seen (the fixtures record from a few). */
struct last_ts {
	uint32_t tid[16];
	uint64_t ts[16];
	int n;
};

/* Record @ts of @tid; false when it goes back in that thread's time.
 * Threads are not ordered among themselves: a producer reserves its slot,
 * then reads the clock, so two recording threads may land in the buffer
 * in the other order (the reader sorts the capture). */
static bool thread_in_order(struct last_ts *l, uint32_t tid, uint64_t ts)
{
	int i;

	for (i = 0; i < l->n; i++) {
		if (l->tid[i] != tid)
			continue;
		if (ts < l->ts[i])
			return false;
		l->ts[i] = ts;
		return true;
	}
	if (l->n < 16) {
		l->tid[l->n] = tid;
		l->ts[l->n++] = ts;
	}
	return true;
}

static const char *const fixture_names[] = { "step", "stepper", "prestep", "other" };

/* Read and walk @path; 0 or -1 (missing, short, inconsistent). */
static int cap_read(const char *path, struct capfile *cf)
{
	struct last_ts last = { .n = 0 };
	struct stat st;
	size_t off = 0;
	int fd;

	memset(cf, 0, sizeof(*cf));
	cf->ts_ordered = true;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(cf->h)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	cf->len = (size_t)st.st_size - sizeof(cf->h);
	cf->recs = malloc(cf->len + 1);
	if (!cf->recs || read(fd, &cf->h, sizeof(cf->h)) != (ssize_t)sizeof(cf->h) ||
	    read(fd, cf->recs, cf->len) != (ssize_t)cf->len) {
		close(fd);
		return -1;
	}
	close(fd);
	while (off + XPROBE_RECORD_HDR_SIZE <= cf->len) {
		struct xprobe_record r;
		char name[XPROBE_NAME_MAX + 1] = "";

		memcpy(&r, cf->recs + off, sizeof(r));
		if (r.size < XPROBE_RECORD_HDR_SIZE || off + r.size > cf->len)
			return -1;
		if (!thread_in_order(&last, r.tid, r.ts) || r.ts < cf->h.reply.arm_ns)
			cf->ts_ordered = false;
		if (r.type == XPROBE_EV_NVTX_PUSH) {
			cf->pushes++;
			memcpy(name, cf->recs + off + XPROBE_RECORD_HDR_SIZE, r.name_len);
			name[r.name_len] = '\0';
			for (int i = 0; i < 4; i++)
				if (!strcmp(name, fixture_names[i]))
					cf->names[i]++;
			if (r.name_len == XPROBE_NAME_MAX && !(r.flags & XPROBE_RECF_NAME_COMPLETE))
				cf->names[4]++;
		} else if (r.type == XPROBE_EV_NVTX_POP) {
			cf->pops++;
		} else {
			cf->names[5]++; /* anything else */
		}
		off += r.size;
	}
	return off == cf->len ? 0 : -1;
}

static void cap_free(struct capfile *cf)
{
	free(cf->recs);
	cf->recs = NULL;
}

/* What every saved capture's header says, whatever it holds. */
static void check_header(const struct capfile *cf, pid_t pid, uint64_t nrecords)
{
	const struct xprobe_agent_reply *r = &cf->h.reply;

	CHECK(!memcmp(cf->h.magic, XPROBE_AGENT_CAPFILE_MAGIC, 8));
	CHECK_EQ_U64(cf->h.version, XPROBE_AGENT_CAPFILE_VERSION);
	CHECK_EQ_U64(cf->h.header_size, sizeof(cf->h));
	CHECK_EQ_U64(cf->h.file_size, sizeof(cf->h) + cf->len);
	CHECK(!memcmp(r->magic, XPROBE_AGENT_REPLY_MAGIC, 8));
	CHECK_EQ_U64(r->version, XPROBE_AGENT_PROTO_VERSION);
	CHECK_EQ_U64(r->op, XPROBE_AGENT_OP_STOP);
	CHECK_EQ_U64(r->size, sizeof(*r));
	CHECK(r->status == 0);
	CHECK_EQ_U64(r->state, XPROBE_AGENT_STOPPED);
	CHECK_EQ_U64(r->pid, (uint64_t)pid);
	CHECK(r->start_time != 0);
	CHECK(r->arm_ns != 0);
	CHECK_EQ_U64(r->features & XPROBE_AGENT_F_NVTX_ROUTED, XPROBE_AGENT_F_NVTX_ROUTED);
	CHECK_EQ_U64(r->offset, 0);
	CHECK_EQ_U64(r->nrecords, nrecords);
	CHECK_EQ_U64(r->retained, nrecords);
	CHECK_EQ_U64(r->observed, r->retained + r->dropped);
	CHECK_EQ_U64(r->bytes, cf->len);
	/* every capture here is smaller than one packet */
	CHECK(cf->len <= XPROBE_AGENT_CHUNK_MAX);
	CHECK_EQ_U64(r->nchunks, cf->len ? 1 : 0);
	CHECK(cf->ts_ordered);
}

static void path_in(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static void mkdir_in(char *out, size_t size, const char *name)
{
	path_in(out, size, scratch, name);
	mkdir(out, 0700);
}

static bool is_type(const char *path, mode_t type)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* --- scenarios -------------------------------------------------------------------------- */

static void test_plain(void)
{
	char dir[PATH_MAX], out[PATH_MAX + 16];
	struct capfile cf;
	struct stat st;
	struct fx f;
	pid_t pid;

	mkdir_in(dir, sizeof(dir), "plain");
	path_in(out, sizeof(out), dir, "cap.xpagent");
	if (fx_start(&f, "plain", out, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	pid = f.ap.pid;
	CHECK(fx_do(&f, "names 3"));
	CHECK(fx_do(&f, "nest 2")); /* two threads, three levels */
	CHECK(!lt_exists(dir, "cap.xpagent")); /* written at exit */
	CHECK(fx_quit(&f));
	CHECK(stat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600);
	CHECK(cap_read(out, &cf) == 0);
	/* names: 3 x 5 names; nest: 2 threads x 2 x 3 levels */
	check_header(&cf, pid, 2 * (15 + 12));
	CHECK_EQ_U64(cf.h.flags, 0);
	CHECK_EQ_U64(cf.h.signal, 0);
	CHECK_EQ_U64(cf.h.reply.stop_reason, XPROBE_AGENT_STOP_REQUESTED);
	CHECK_EQ_U64(cf.h.reply.capacity, 100000);
	CHECK_EQ_U64(cf.h.reply.dropped, 0);
	CHECK_EQ_U64(cf.pushes, 27);
	CHECK_EQ_U64(cf.pops, 27);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(cf.names[i], 3); /* every name, the 200-byte one cut */
	CHECK_EQ_U64(cf.names[5], 0);
	CHECK(lt_count_names(dir, ".tmp.") == 0);
	CHECK(err_has(&f, "54 records written to"));
	cap_free(&cf);
}

static void test_limit(void)
{
	char dir[PATH_MAX], out[PATH_MAX + 16];
	struct capfile cf;
	struct fx f;
	pid_t pid;

	mkdir_in(dir, sizeof(dir), "limit");
	path_in(out, sizeof(out), dir, "cap");
	if (fx_start(&f, "limit", out, "10")) {
		CHECK(!"fixture started");
		return;
	}
	pid = f.ap.pid;
	CHECK(fx_do(&f, "names 3"));
	CHECK(fx_quit(&f));
	CHECK(cap_read(out, &cf) == 0);
	check_header(&cf, pid, 10);
	CHECK_EQ_U64(cf.h.reply.capacity, 10);
	CHECK_EQ_U64(cf.h.reply.stop_reason, XPROBE_AGENT_STOP_RECORD_LIMIT);
	/* 5 push/pop pairs kept; 10 pushes dropped, whose pops are never
	 * admitted (their push was not recorded) */
	CHECK_EQ_U64(cf.h.reply.dropped, 10);
	CHECK_EQ_U64(cf.h.reply.observed, 20);
	cap_free(&cf);
}

/* ARM of every NVTX range over the socket: the reply's status. */
static int socket_arm(const char *sock, char *msg, size_t size)
{
	struct xprobe_agent_req q;
	struct ap_reply r;
	int fd = ap_connect(sock), st;

	if (fd < 0)
		return fd - 100000;
	ap_arm(&q, 16);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_ANY, "");
	memset(&r, 0, sizeof(r));
	st = ap_rpc(fd, &q, &r);
	if (!st)
		st = r.h.status;
	if (msg)
		snprintf(msg, size, "%s", r.h.message);
	ap_reply_free(&r);
	close(fd);
	return st;
}

static void test_env(void)
{
	static const char *const bad_max[] = { "0", "16777217", "12x", "-1", " 5", "", "0x10" };
	char dir[PATH_MAX], out[PATH_MAX + 16], p[PATH_MAX + 32];
	struct fx f;

	mkdir_in(dir, sizeof(dir), "env");
	path_in(out, sizeof(out), dir, "cap");
	for (size_t i = 0; i < sizeof(bad_max) / sizeof(bad_max[0]); i++) {
		if (fx_start(&f, "env", out, bad_max[i])) {
			CHECK(!"fixture started");
			return;
		}
		CHECK(fx_do(&f, "names 1"));
		/* nothing armed: the socket's ARM is free */
		CHECK(socket_arm(f.sock, NULL, 0) == 0);
		CHECK(fx_quit(&f));
		CHECK(!lt_exists(dir, "cap"));
		CHECK(err_has(&f, "agent output not armed: XPROBE_AGENT_MAX_RECORDS="));
	}
	/* paths that name no file */
	{
		const char *paths[3];
		const char *why[3] = { "XPROBE_AGENT_OUTPUT is empty", "names a directory",
				       "cannot open the directory" };
		char slash[PATH_MAX + 16], missing[PATH_MAX + 32];

		snprintf(slash, sizeof(slash), "%s/", dir);
		snprintf(missing, sizeof(missing), "%s/nodir/cap", dir);
		paths[0] = "";
		paths[1] = slash;
		paths[2] = missing;
		for (int i = 0; i < 3; i++) {
			if (fx_start(&f, "envpath", paths[i], NULL)) {
				CHECK(!"fixture started");
				return;
			}
			CHECK(socket_arm(f.sock, NULL, 0) == 0);
			CHECK(fx_quit(&f));
			CHECK(err_has(&f, why[i]));
		}
		CHECK(lt_count_names(dir, "") == 2);
		path_in(p, sizeof(p), dir, "nodir");
		CHECK(!is_type(p, S_IFDIR));
	}
}

static void test_socket(void)
{
	char dir[PATH_MAX], out[PATH_MAX + 16], msg[256];
	struct capfile cf;
	struct stat st1, st2;
	struct fx f;
	pid_t pid;

	mkdir_in(dir, sizeof(dir), "socket");
	path_in(out, sizeof(out), dir, "cap");
	if (fx_start(&f, "socket", out, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	pid = f.ap.pid;
	CHECK(fx_do(&f, "names 1"));
	CHECK(socket_arm(f.sock, msg, sizeof(msg)) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(strstr(msg, "XPROBE_AGENT_OUTPUT=") && strstr(msg, out));
	CHECK(fx_do(&f, "names 1"));
	CHECK(ap_cmd(&f.ap, "flush", msg, sizeof(msg)) == 0 && !strcmp(msg, "DONE flush 0"));
	CHECK(stat(out, &st1) == 0);
	CHECK(cap_read(out, &cf) == 0);
	check_header(&cf, pid, 20);
	cap_free(&cf);
	/* written: nothing more is recorded into it, the socket may ARM */
	CHECK(fx_do(&f, "names 1"));
	CHECK(socket_arm(f.sock, NULL, 0) == 0);
	{
		char line[64], want[64];

		snprintf(want, sizeof(want), "DONE flush %d", -XPROBE_E_NOT_ACTIVE);
		CHECK(ap_cmd(&f.ap, "flush", line, sizeof(line)) == 0 && !strcmp(line, want));
	}
	CHECK(fx_quit(&f));
	CHECK(stat(out, &st2) == 0 && st2.st_ino == st1.st_ino &&
	      st2.st_mtim.tv_nsec == st1.st_mtim.tv_nsec &&
	      st2.st_mtim.tv_sec == st1.st_mtim.tv_sec);
	CHECK(lt_count_names(dir, ".tmp.") == 0);
}

/* Run the fixture with the output at @out, "names 1", quit: it must exit
 * 0 and its stderr say @why. */
static void run_refused(const char *tag, const char *out, const char *why)
{
	struct fx f;

	if (fx_start(&f, tag, out, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	CHECK(fx_do(&f, "names 1"));
	CHECK(fx_quit(&f));
	CHECK(err_has(&f, why));
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

static bool has_text(const char *path, const char *text)
{
	char buf[256];

	lt_read_file(path, buf, sizeof(buf));
	return !strcmp(buf, text);
}

static void test_links(void)
{
	char dir[PATH_MAX], out[PATH_MAX + 16], victim[PATH_MAX + 16], ghost[PATH_MAX + 16];
	char moved[PATH_MAX + 16];
	struct fx f;

	mkdir_in(dir, sizeof(dir), "links");
	path_in(out, sizeof(out), dir, "cap");
	path_in(victim, sizeof(victim), dir, "victim");
	path_in(ghost, sizeof(ghost), dir, "ghost");
	write_text(victim, "precious");

	/* planted before the start: a link (to a file, dangling), a FIFO */
	CHECK(symlink(victim, out) == 0);
	run_refused("link", out, "is a symbolic link, not a regular file");
	CHECK(has_text(victim, "precious") && is_type(out, S_IFLNK));
	unlink(out);
	CHECK(symlink(ghost, out) == 0);
	run_refused("dangling", out, "is a symbolic link, not a regular file");
	CHECK(!lt_exists(dir, "ghost") && is_type(out, S_IFLNK));
	unlink(out);
	CHECK(mkfifo(out, 0600) == 0);
	run_refused("fifo", out, "is a FIFO, not a regular file"); /* never opened: no hang */
	CHECK(is_type(out, S_IFIFO));
	unlink(out);

	/* planted while it records: refused at the rename */
	if (fx_start(&f, "late", out, NULL) == 0) {
		CHECK(fx_do(&f, "names 1"));
		CHECK(symlink(victim, out) == 0);
		CHECK(fx_quit(&f));
		CHECK(err_has(&f, "it is a symbolic link"));
		CHECK(err_has(&f, "the capture (10 records) is lost"));
		CHECK(has_text(victim, "precious") && is_type(out, S_IFLNK));
	} else {
		CHECK(!"fixture started");
	}
	unlink(out);
	if (fx_start(&f, "latedir", out, NULL) == 0) {
		CHECK(mkdir(out, 0700) == 0);
		CHECK(fx_quit(&f));
		CHECK(err_has(&f, "it is not a regular file"));
		CHECK(is_type(out, S_IFDIR) && lt_count_names(out, "") == 2);
	} else {
		CHECK(!"fixture started");
	}
	rmdir(out);
	CHECK(lt_count_names(dir, ".tmp.") == 0);

	/* the directory itself swapped between load and exit */
	mkdir_in(dir, sizeof(dir), "swapped");
	path_in(out, sizeof(out), dir, "cap");
	snprintf(moved, sizeof(moved), "%s.old", dir);
	if (fx_start(&f, "swapped", out, NULL) == 0) {
		CHECK(rename(dir, moved) == 0 && mkdir(dir, 0700) == 0);
		CHECK(fx_quit(&f));
		CHECK(err_has(&f, "its directory is not the one it was"));
		CHECK(lt_count_names(dir, "") == 2 && lt_count_names(moved, "") == 2);
	} else {
		CHECK(!"fixture started");
	}

	/* a regular file there is replaced */
	mkdir_in(dir, sizeof(dir), "replace");
	path_in(out, sizeof(out), dir, "cap");
	write_text(out, "old");
	if (fx_start(&f, "replace", out, NULL) == 0) {
		struct capfile cf;
		pid_t pid = f.ap.pid;

		CHECK(fx_do(&f, "names 1"));
		CHECK(fx_quit(&f));
		CHECK(cap_read(out, &cf) == 0);
		check_header(&cf, pid, 10);
		cap_free(&cf);
	} else {
		CHECK(!"fixture started");
	}
}

static void test_relative(void)
{
	char dir[PATH_MAX], cwd[PATH_MAX];
	struct fx f;
	int rc;

	mkdir_in(dir, sizeof(dir), "relative");
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	rc = fx_start(&f, "relative", "rel.cap", NULL);
	CHECK(chdir(cwd) == 0);
	if (rc) {
		CHECK(!"fixture started");
		return;
	}
	CHECK(fx_do(&f, "names 1"));
	CHECK(fx_quit(&f));
	CHECK(lt_exists(dir, "rel.cap"));
}

static void test_signal(void)
{
	static const int sigs[] = { SIGTERM, SIGSEGV };
	char dir[PATH_MAX], out[PATH_MAX + 16];

	mkdir_in(dir, sizeof(dir), "signal");
	for (size_t i = 0; i < 2; i++) {
		struct capfile cf;
		struct fx f;
		pid_t pid;

		path_in(out, sizeof(out), dir, sigs[i] == SIGTERM ? "term" : "segv");
		if (fx_start(&f, "signal", out, NULL)) {
			CHECK(!"fixture started");
			return;
		}
		pid = f.ap.pid;
		CHECK(fx_do(&f, "names 2"));
		CHECK(fx_kill(&f, sigs[i]));
		CHECK(cap_read(out, &cf) == 0);
		check_header(&cf, pid, 20);
		CHECK_EQ_U64(cf.h.flags, XPROBE_AGENT_CAPFILE_F_SIGNAL);
		CHECK_EQ_U64(cf.h.signal, (uint64_t)sigs[i]);
		CHECK(err_has(&f, "20 records written to"));
		cap_free(&cf);
	}
	CHECK(lt_count_names(dir, ".tmp.") == 0);
}

static void test_fork(void)
{
	char dir[PATH_MAX], out[PATH_MAX + 16], line[64];
	struct capfile cf;
	struct fx f;
	pid_t pid;

	mkdir_in(dir, sizeof(dir), "fork");
	path_in(out, sizeof(out), dir, "cap");
	if (fx_start(&f, "fork", out, NULL)) {
		CHECK(!"fixture started");
		return;
	}
	pid = f.ap.pid;
	CHECK(fx_do(&f, "names 1"));
	CHECK(ap_cmd(&f.ap, "forkexit", line, sizeof(line)) == 0 &&
	      !strcmp(line, "DONE forkexit 0"));
	CHECK(!lt_exists(dir, "cap")); /* the child wrote nothing */
	CHECK(fx_quit(&f));
	CHECK(cap_read(out, &cf) == 0);
	check_header(&cf, pid, 10); /* not the child's push/pop */
	cap_free(&cf);
}

static int disk_full(void *arg)
{
	const char *mnt = arg;
	char out[PATH_MAX + 16];
	int fails = xpt_failures;
	struct fx f;

	path_in(out, sizeof(out), mnt, "cap");
	if (fx_start(&f, "disk", out, NULL)) {
		CHECK(!"fixture started");
		return 1;
	}
	CHECK(fx_do(&f, "names 20"));
	CHECK(lt_fill_fs(mnt) > 0);
	CHECK(fx_quit(&f)); /* exits 0: the failure is only logged */
	CHECK(err_has(&f, "agent output: cannot write"));
	CHECK(err_has(&f, "No space left on device"));
	CHECK(err_has(&f, "the capture (200 records) is lost"));
	CHECK(!lt_exists(mnt, "cap"));
	CHECK(lt_count_names(mnt, ".tmp.") == 0);
	/* space back: the same run writes its file */
	lt_unfill_fs(mnt);
	if (fx_start(&f, "disk2", out, NULL) == 0) {
		CHECK(fx_do(&f, "names 20"));
		CHECK(fx_quit(&f));
		CHECK(lt_exists(mnt, "cap"));
	} else {
		CHECK(!"fixture started");
	}
	return xpt_failures - fails;
}

static void test_disk(void)
{
	char mnt[PATH_MAX + 8];

	snprintf(mnt, sizeof(mnt), "%s/mnt", scratch);
	if (lt_tmpfs_mount(mnt, 256) != 0) {
		CHECK(!"tmpfs mounted (the tests run as root)");
		return;
	}
	CHECK(lt_in_child("disk", disk_full, mnt, 60));
	lt_tmpfs_umount(mnt);
}

/* secure_target as RUNNER_UID with XPROBE_AGENT_OUTPUT=@out: its stdout's
 * AT_SECURE line, or -1. */
static long run_secure(const char *exe, const char *lib, const char *out, const char *res)
{
	char buf[512], env_out[PATH_MAX + 32], *p;
	pid_t pid;
	int st = -1, fd;

	fd = open(res, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		snprintf(env_out, sizeof(env_out), "XPROBE_AGENT_OUTPUT=%s", out);
		putenv(env_out);
		putenv((char *)"XPROBE_LOG_LEVEL=debug");
		if (setgroups(0, NULL) != 0 || setgid(RUNNER_UID) != 0 || setuid(RUNNER_UID) != 0)
			_exit(126);
		execl(exe, exe, lib, (char *)NULL);
		_exit(127);
	}
	close(fd);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	lt_read_file(res, buf, sizeof(buf));
	p = strstr(buf, "AT_SECURE ");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

static void test_secure(void)
{
	char mnt[PATH_MAX], exe[PATH_MAX + 32], lib[PATH_MAX + 32], src[PATH_MAX];
	char outdir[PATH_MAX + 32], out[PATH_MAX + 48], res[PATH_MAX + 48];

	/* world-traversable and not nosuid (the build tree may be neither) */
	snprintf(mnt, sizeof(mnt), "/tmp/xpl-test-capfile-mnt-%d", (int)getpid());
	if (lt_tmpfs_mount_flags(mnt, 64 * 1024, MS_NODEV) != 0) {
		CHECK(!"tmpfs mounted (the tests run as root)");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/secure_target", mnt);
	snprintf(lib, sizeof(lib), "%s/libxprobe.so", mnt);
	snprintf(outdir, sizeof(outdir), "%s/out", mnt);
	snprintf(out, sizeof(out), "%s/cap", outdir);
	snprintf(res, sizeof(res), "%s/target.out", mnt);
	lt_build_path(src, sizeof(src), "tests/lib/secure_target");
	CHECK(lt_copy(src, exe, 0755) == 0);
	CHECK(lt_copy(libso, lib, 0644) == 0);
	CHECK(mkdir(outdir, 0777) == 0 && chmod(outdir, 0777) == 0);
	chmod(mnt, 0777);

	/* setuid nobody, run by another user: AT_SECURE, nothing written */
	CHECK(chown(exe, OWNER_UID, OWNER_UID) == 0);
	CHECK(chmod(exe, 04755) == 0);
	CHECK(run_secure(exe, lib, out, res) == 1);
	CHECK(lt_count_names(outdir, "") == 2);

	/* the control: the same copy without the bit writes its (empty) capture */
	CHECK(chmod(exe, 0755) == 0);
	CHECK(run_secure(exe, lib, out, res) == 0);
	CHECK(lt_exists(outdir, "cap"));
	lt_tmpfs_umount(mnt);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "capfile");
	lt_build_path(libso, sizeof(libso), "lib/libxprobe.so");
	lt_build_path(fixture_exe, sizeof(fixture_exe), "tests/lib/agent_fixture");
	signal(SIGPIPE, SIG_IGN);
	test_plain();
	test_limit();
	test_env();
	test_socket();
	test_links();
	test_relative();
	test_signal();
	test_fork();
	test_disk();
	test_secure();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
