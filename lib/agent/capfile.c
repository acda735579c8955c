/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capfile.c - the Agent's saved capture: XPROBE_AGENT_OUTPUT=<path> arms,
 * at load, a capture of every NVTX range (no name rule), of
 * XPROBE_AGENT_MAX_RECORDS records (default 100000), and the capture is
 * written to <path> as agent.h's struct xprobe_agent_capfile followed by
 * its records at exit, at xprobe_agent_output_flush(), or on a fatal
 * signal.  `xprobe measure --input <path>` reads it with the decoder the
 * control socket uses.  docs/agent.md, "Saved captures", is the user's
 * view; this file owns the variable, the arming and the writing.  The
 * capture itself is lib/producers/agent_capture.c's, recorded by the same
 * hot path.
 *
 * The door.  Both variables are read with secure_getenv and nothing
 * happens in an AT_SECURE process: a user who runs a privileged program
 * must not choose where it writes.  A value that cannot be used (an empty
 * path, a capacity that is not a decimal in 1..XPROBE_AGENT_CAPACITY_MAX,
 * a directory that cannot be opened or written, something that is not a
 * regular file at the path) arms nothing and the log says why.
 *
 * One capture at a time.  The hot path has one published capture
 * (agent_capture.h's xpl_agent_hot), so while this one is armed or being
 * written a control-socket ARM is refused with ALREADY_ACTIVE (server.c
 * asks xpl_capfile_busy); once written, the socket may ARM again.  It is armed
 * by a constructor that runs before the one that starts the control
 * socket's thread, so the two never race to publish.
 *
 * Where it writes, nothing planted is followed.  The directory part of the
 * path is the caller's (resolved as usual, made absolute at load, so a
 * later chdir changes nothing); it is opened again at write time and must
 * be the same directory (dev/ino) as at load.  The file's own name is never
 * followed: the temporary "<name>.tmp.<pid>.<64 random bits>" is created
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600 (fchmod'ed, whatever the umask),
 * written, fsync'ed, then renamed onto <name>, which may only be a
 * regular file or nothing (RENAME_NOREPLACE first; a link there is
 * refused, anything else that is not a regular file too) and the
 * directory fsync'ed.  A link, FIFO or device at <name> is refused at load
 * as well.  Any failure (a full disk among them) removes the temporary,
 * is logged, and the process goes on: the capture is lost, nothing else.
 *
 * Who writes, once.  `state` moves ARMED -> WRITING -> DONE by
 * compare-and-swap; the first of exit, flush and a fatal signal wins.  Only
 * the process that armed it writes (a fork child never does: the file is
 * its parent's, and its copy of the capture is unpublished).  At exit and
 * flush the capture is disarmed first (agent_capture.c: every recording
 * thread has left its record); on a signal it is only unpublished, since the
 * crashing thread itself may be inside a record: the committed records are
 * the prefix a reader always takes, records still being written are
 * counted as dropped, and the buffer is never freed.  The signal path
 * takes no lock and allocates nothing (open, write, fsync, renameat and
 * xpl_sfmt only); a signal that comes while another thread writes waits
 * for it (at most 10 s) so the process does not die under the writer; one
 * that comes on the writing thread itself removes the temporary.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../inspect/controller.h"
#include "../internal.h"
#include "../nvtx/nvtx_abi.h"
#include "../producers/agent_capture.h"
#include "capfile.h"
#include "parse.h"
#include "xprobe/agent.h"

#define DEFAULT_RECORDS 100000u
/* How long a signal waits for another thread's write to end. */
#define SIGNAL_WAIT_NS 10000000000ull
/* Room the temporary's name needs beyond <name>: ".tmp.<pid>.<16 hex>". */
#define TMP_SUFFIX_MAX 40

enum { CF_OFF = 0, CF_ARMED, CF_WRITING, CF_DONE };

static struct {
	_Atomic int state;
	_Atomic pid_t writer; /* the thread in WRITING */
	_Atomic int dirfd; /* the directory while writing, else -1 */
	struct xpl_agent_cap *cap;
	pid_t pid; /* the process that armed it: the only one that writes */
	uint64_t start_time;
	dev_t dev; /* the directory checked at load */
	ino_t ino;
	char path[PATH_MAX]; /* as given (messages) */
	char dir[PATH_MAX]; /* absolute */
	char name[NAME_MAX + 1];
	char tmp[NAME_MAX + 1 + TMP_SUFFIX_MAX]; /* the temporary being written, "" none */
} cf = { .dirfd = -1 };

static uint8_t chunk[XPROBE_AGENT_CHUNK_MAX];

/* --- arming at load ------------------------------------------------------------- */

/* Split @path into cf.dir (absolute) and cf.name; 0 or an error filled in. */
static int split_path(const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	char cwd[PATH_MAX];

	if (!name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"XPROBE_AGENT_OUTPUT=%s names a directory, not a file", path);
	if (strlen(name) > NAME_MAX - TMP_SUFFIX_MAX)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"XPROBE_AGENT_OUTPUT=%s: the file name is longer than %d bytes",
				path, NAME_MAX - TMP_SUFFIX_MAX);
	memcpy(cf.name, name, strlen(name) + 1);
	if (path[0] == '/') {
		if (xpl_snprintf(cf.dir, sizeof(cf.dir), "%.*s", (int)dlen, path) < 0)
			goto long_path;
		if (!cf.dir[0])
			memcpy(cf.dir, "/", 2);
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"XPROBE_AGENT_OUTPUT=%s is relative and the working directory is "
				"unknown: %s",
				path, strerror(errno));
	if (xpl_snprintf(cf.dir, sizeof(cf.dir), "%s%s%.*s", cwd, dlen ? "/" : "", (int)dlen,
			 path) < 0)
		goto long_path;
	return 0;
long_path:
	return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "XPROBE_AGENT_OUTPUT=%s: path too long", path);
}

/* The directory exists, can be written, and nothing but a regular file is
 * at the name: 0 and its identity kept, or an error filled in. */
static int check_place(const char *path)
{
	struct stat ds, st;
	int dfd, rc = 0;

	dfd = open(cf.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				"XPROBE_AGENT_OUTPUT=%s: cannot open the directory %s: %s", path,
				cf.dir, strerror(errno));
	if (fstat(dfd, &ds) != 0) {
		rc = xpl_fail(-XPROBE_E_OUTPUT_FAILED, "XPROBE_AGENT_OUTPUT=%s: fstat %s: %s", path,
			      cf.dir, strerror(errno));
		goto out;
	}
	cf.dev = ds.st_dev;
	cf.ino = ds.st_ino;
	if (faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
		rc = xpl_fail(-XPROBE_E_OUTPUT_FAILED,
			      "XPROBE_AGENT_OUTPUT=%s: cannot write in %s: %s", path, cf.dir,
			      strerror(errno));
		goto out;
	}
	if (fstatat(dfd, cf.name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		rc = xpl_fail(-XPROBE_E_OUTPUT_FAILED,
			      "XPROBE_AGENT_OUTPUT=%s is a %s, not a regular file: libxprobe only "
			      "ever replaces a regular file and never follows a link where it "
			      "writes; remove it or name another file",
			      path, xpl_file_type_name(st.st_mode));
out:
	close(dfd);
	return rc;
}

static void cf_fork_child(void)
{
	/* the file is the parent's: the child never writes it, and its copy
	 * of the capture records nothing (the memory stays reachable) */
	if (atomic_load(&cf.state) == CF_OFF)
		return;
	if (atomic_load(&xpl_agent_hot.cap) == cf.cap && cf.cap) {
		atomic_store(&xpl_agent_hot.cap, NULL);
		atomic_fetch_add(&xpl_agent_hot.gen, 1);
	}
	atomic_store(&cf.state, CF_DONE);
	atomic_store(&cf.dirfd, -1);
	xpl_crash_set_signal_hook(NULL);
}

static int finish(int sig, bool sigpath);
static void on_signal(int sig);

static void cf_atexit(void)
{
	finish(0, false);
}

static int arm(const char *path)
{
	struct xprobe_agent_req req;
	struct xpl_agent_cap *c;
	const char *v;
	uint64_t cap = DEFAULT_RECORDS;
	int rc;

	if (!path[0])
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "XPROBE_AGENT_OUTPUT is empty");
	if (strlen(path) >= sizeof(cf.path))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "XPROBE_AGENT_OUTPUT is too long");
	v = secure_getenv("XPROBE_AGENT_MAX_RECORDS");
	if (v && xpc_parse_u64(v, 1, XPROBE_AGENT_CAPACITY_MAX, &cap) != 0)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"XPROBE_AGENT_MAX_RECORDS=%s: expected a decimal number in 1..%u",
				v, XPROBE_AGENT_CAPACITY_MAX);
	memcpy(cf.path, path, strlen(path) + 1);
	rc = split_path(path);
	if (rc)
		return rc;
	rc = check_place(path);
	if (rc)
		return rc;
	if (atomic_load(&xpl_agent_hot.cap))
		return xpl_fail(
			-XPROBE_E_ALREADY_ACTIVE,
			"XPROBE_AGENT_OUTPUT=%s: a capture is already armed in this process", path);
	/* an ARM of every NVTX range, as the socket would decode it */
	memset(&req, 0, sizeof(req));
	memcpy(req.magic, XPROBE_AGENT_REQ_MAGIC, sizeof(req.magic));
	req.version = XPROBE_AGENT_PROTO_VERSION;
	req.op = XPROBE_AGENT_OP_ARM;
	req.size = sizeof(req);
	req.mode = XPROBE_AGENT_MODE_EXACT;
	req.capacity = cap;
	req.nfilters = 1;
	req.filters[0].kind = XPROBE_AGENT_KIND_NVTX_RANGE;
	req.filters[0].name_match = XPROBE_AGENT_NAME_ANY;
	if (xpl_capture_new(&req, &c) != 0)
		return xpl_fail(-XPROBE_E_INTERNAL,
				"XPROBE_AGENT_OUTPUT=%s: cannot allocate a capture of %llu records",
				path, (unsigned long long)cap);
	cf.cap = c;
	cf.pid = getpid();
	cf.start_time = xpl_process_start_time(0);
	pthread_atfork(NULL, NULL, cf_fork_child);
	atexit(cf_atexit);
	/* the fatal-signal path: the crash handlers call on_signal through
	 * their hook (cleared again once the capture is written) */
	xpl_crash_set_signal_hook(on_signal);
	xpl_crash_handlers_install();
	xpl_capture_arm(c);
	atomic_store(&cf.state, CF_ARMED);
	pr_info("agent output: recording every NVTX range (at most %llu records) into %s, "
		"written at exit",
		(unsigned long long)cap, path);
	return 0;
}

/*
 * Before the control socket's constructor (103): the capture is published
 * before the server thread exists.  Quietly nothing without the variable
 * or in an AT_SECURE process.
 */
__attribute__((constructor(102))) static void capfile_from_env(void)
{
	const char *path;

	if (getauxval(AT_SECURE))
		return;
	path = secure_getenv("XPROBE_AGENT_OUTPUT");
	if (!path)
		return;
	if (arm(path))
		pr_warn("agent output not armed: %s", xprobe_last_error());
}

/* --- writing (async-signal-safe) -------------------------------------------- */

/* 64 unpredictable bits: getrandom, else a mix of what differs. */
static uint64_t nonce(void)
{
	struct timespec ts;
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec << 32 ^
	    (uint64_t)(uintptr_t)&ts ^ (uint64_t)getpid() << 48;
	return v ^ (v >> 29);
}

/* Move the temporary onto the name: a regular file there is replaced,
 * anything else refused (-ELOOP a link, -EEXIST the rest). */
static int place(int dfd)
{
	return xpl_rename_regular(dfd, cf.tmp, cf.name);
}

/* The file header: the final STOP reply of @rd's capture from offset 0. */
static void header(struct xprobe_agent_capfile *h, const struct xpl_capture_read *rd, int sig)
{
	struct xprobe_agent_reply *r = &h->reply;
	struct xpl_capture_stats st;

	xpl_capture_stats(cf.cap, &st);
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, XPROBE_AGENT_CAPFILE_MAGIC, sizeof(h->magic));
	h->version = XPROBE_AGENT_CAPFILE_VERSION;
	h->header_size = sizeof(*h);
	h->file_size = sizeof(*h) + rd->bytes;
	if (sig) {
		h->flags = XPROBE_AGENT_CAPFILE_F_SIGNAL;
		h->signal = (uint32_t)sig;
	}
	memcpy(r->magic, XPROBE_AGENT_REPLY_MAGIC, sizeof(r->magic));
	r->version = XPROBE_AGENT_PROTO_VERSION;
	r->op = XPROBE_AGENT_OP_STOP;
	r->size = sizeof(*r);
	r->features = XPROBE_AGENT_F_HOST_MONOTONIC;
	if (xpl_nvtx_routed())
		r->features |= XPROBE_AGENT_F_NVTX_ROUTED;
	r->state = XPROBE_AGENT_STOPPED;
	r->stop_reason = st.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT ?
				 XPROBE_AGENT_STOP_RECORD_LIMIT :
				 XPROBE_AGENT_STOP_REQUESTED;
	r->pid = (uint32_t)cf.pid;
	r->start_time = cf.start_time;
	r->arm_ns = cf.cap->arm_ns;
	r->capacity = st.capacity;
	r->observed = st.observed;
	r->retained = st.retained;
	r->dropped = st.dropped;
	r->unknown = st.unknown;
	/* records reserved but never committed (a thread inside its record on
	 * the signal path, or one a disarm gave up on): lost, so dropped */
	if (NEVER(rd->nrecords > r->retained))
		r->retained = rd->nrecords;
	if (r->retained > rd->nrecords) {
		r->dropped += r->retained - rd->nrecords;
		r->retained = rd->nrecords;
	}
	if (r->observed < r->retained + r->dropped)
		r->observed = r->retained + r->dropped;
	r->nrecords = rd->nrecords;
	r->bytes = rd->bytes;
	r->nchunks = rd->nchunks;
}

/*
 * Write the file; 0 or -errno, and *why a sentence for the failures errno
 * does not say.  *nrec: the records it holds.
 */
static int write_file(int sig, uint64_t *nrec, const char **why)
{
	struct xprobe_agent_capfile h;
	struct xpl_capture_read rd;
	struct stat ds;
	uint64_t n64;
	int dfd, fd = -1, rc;

	*why = NULL;
	*nrec = 0;
	dfd = open(cf.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &ds) != 0 || ds.st_dev != cf.dev || ds.st_ino != cf.ino) {
		*why = "its directory is not the one it was when the process started";
		rc = -ESTALE;
		goto out;
	}
	atomic_store(&cf.dirfd, dfd);
	if (NEVER(xpl_capture_read_begin(cf.cap, 0, sizeof(chunk), &rd) != 0)) {
		rc = -EIO;
		goto out;
	}
	header(&h, &rd, sig);
	*nrec = rd.nrecords;
	n64 = nonce();
	if (xpl_sfmt(cf.tmp, sizeof(cf.tmp), "%s.tmp.%u.%x%x", cf.name, (unsigned)cf.pid,
		     (unsigned)(n64 >> 32), (unsigned)n64) >= sizeof(cf.tmp) - 1) {
		cf.tmp[0] = '\0';
		rc = -ENAMETOOLONG;
		goto out;
	}
	fd = openat(dfd, cf.tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		cf.tmp[0] = '\0'; /* not ours: never unlinked */
		rc = -errno;
		goto out;
	}
	if (fchmod(fd, 0600) != 0) {
		rc = -errno;
		goto out;
	}
	rc = xpl_write_all(fd, &h, sizeof(h));
	for (uint32_t k = 0; !rc && k < rd.nchunks; k++) {
		size_t n = xpl_capture_read_chunk(&rd, chunk, sizeof(chunk));

		rc = NEVER(!n) ? -EIO : xpl_write_all(fd, chunk, n);
	}
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	fd = -1;
	if (!rc)
		rc = place(dfd);
	if (rc == -ELOOP)
		*why = "it is a symbolic link (libxprobe never follows a link where it writes)";
	else if (rc == -EEXIST)
		*why = "it is not a regular file (libxprobe only replaces a regular file)";
	if (!rc) {
		cf.tmp[0] = '\0';
		fsync(dfd);
	}
out:
	if (fd >= 0)
		close(fd);
	if (cf.tmp[0])
		unlinkat(dfd, cf.tmp, 0);
	cf.tmp[0] = '\0';
	atomic_store(&cf.dirfd, -1);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A signal while another thread writes: let it finish (bounded); on the
 * writing thread itself: remove its temporary (it will never finish). */
static void signal_during_write(void)
{
	struct timespec ts;
	uint64_t until;
	int dfd;

	if (atomic_load(&cf.writer) == my_tid()) {
		dfd = atomic_load(&cf.dirfd);
		if (dfd >= 0 && cf.tmp[0])
			unlinkat(dfd, cf.tmp, 0);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	until = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + SIGNAL_WAIT_NS;
	while (atomic_load(&cf.state) == CF_WRITING) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec > until)
			break;
		sched_yield();
	}
}

/*
 * End the capture and write it, once: 0, -XPROBE_E_NOT_ACTIVE (none armed,
 * or another caller won), -XPROBE_E_OUTPUT_FAILED (logged; also
 * xprobe_last_error() off the signal path).
 */
static int finish(int sig, bool sigpath)
{
	char msg[PATH_MAX + 512];
	const char *why;
	uint64_t nrec;
	int expect = CF_ARMED, rc;

	if (cf.pid != getpid())
		return -XPROBE_E_NOT_ACTIVE;
	if (!atomic_compare_exchange_strong(&cf.state, &expect, CF_WRITING)) {
		if (sigpath && expect == CF_WRITING)
			signal_during_write();
		return -XPROBE_E_NOT_ACTIVE;
	}
	atomic_store(&cf.writer, my_tid());
	if (sigpath)
		atomic_store(&xpl_agent_hot.cap, NULL); /* no wait: see the top comment */
	else
		xpl_capture_disarm(cf.cap);
	rc = write_file(sigpath ? sig : 0, &nrec, &why);
	if (rc)
		xpl_sfmt(msg, sizeof(msg),
			 "agent output: cannot write %s: %s; the capture (%llu records) is lost",
			 cf.path, why ? why : xpl_errdesc(rc), (unsigned long long)nrec);
	else if (sigpath)
		xpl_sfmt(msg, sizeof(msg), "agent output: signal %d: %llu records written to %s",
			 sig, (unsigned long long)nrec, cf.path);
	else
		xpl_sfmt(msg, sizeof(msg), "agent output: %llu records written to %s",
			 (unsigned long long)nrec, cf.path);
	if (sigpath) {
		xpl_log_signal_safe(rc ? XPROBE_LOG_WARN : XPROBE_LOG_INFO, msg);
	} else {
		if (rc)
			pr_warn("%s", msg);
		else
			pr_info("%s", msg);
		if (!cf.cap->leak) {
			xpl_capture_free(cf.cap);
			cf.cap = NULL;
		}
	}
	atomic_store(&cf.state, CF_DONE);
	/* after DONE: a handler that still finds the hook finds nothing to do */
	xpl_crash_set_signal_hook(NULL);
	if (rc) {
		if (!sigpath)
			xpl_fail(-XPROBE_E_OUTPUT_FAILED, "%s", msg);
		return -XPROBE_E_OUTPUT_FAILED;
	}
	return 0;
}

bool xpl_capfile_busy(const char **path)
{
	int s = atomic_load(&cf.state);

	if ((s != CF_ARMED && s != CF_WRITING) || cf.pid != getpid())
		return false;
	if (path)
		*path = cf.path;
	return true;
}

/*
 * A fatal signal (the crash handlers' signal hook, before the previous
 * action runs): write the armed capture now, async-signal-safely (no lock,
 * no allocation), with XPROBE_AGENT_CAPFILE_F_SIGNAL.  Nothing when none
 * is armed or it was written.
 */
static void on_signal(int sig)
{
	if (atomic_load(&cf.state) == CF_OFF)
		return;
	finish(sig, true);
}

XPROBE_API int xprobe_agent_output_flush(void)
{
	int rc;

	xpl_clear_error();
	rc = finish(0, false);
	if (rc == -XPROBE_E_NOT_ACTIVE)
		return xpl_fail(rc, "no XPROBE_AGENT_OUTPUT capture is armed in this process%s",
				atomic_load(&cf.state) == CF_DONE ? " (it was written already)" :
								    "");
	return rc;
}
