/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_cost.c - the calibrated cost of a uprobe pair (probe_cost.h says
 * what is measured, how, and how the figures are cached).
 *
 * The cache file, one "key value" per line in this order, nothing else:
 *   xprobe-probe-cost 1
 *   boot_id <36 characters of /proc/sys/kernel/random/boot_id>
 *   kernel <uname release>
 *   calls <n>
 *   single_step_pair_ns <n>
 *   emulated_pair_ns <n>
 *   single_step_added_ns <n>
 *   emulated_added_ns <n>
 *   calibrated_at <CLOCK_REALTIME seconds>
 *   checksum <FNV-1a 64 of every byte above, 16 hex digits>
 * The checksum catches a file cut short or edited by hand; the ownership
 * and mode checks are what keep other users out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/env_hooks.h"
#include "../../common/parse.h"
#include "../process/identity.h"
#include "../process/namespaces.h"
#include "../process/procfs.h"
#include "live.h"
#include "probe_cost.h"

/*
 * The bundled fixture: two functions of xprobe's own, fixed bytes.  The
 * first instruction of xp_calib_step (sub $8,%rsp: 48 83 ec 08) is one the
 * kernel single-steps out of line, that of xp_calib_emul (push %rbp: 55)
 * one it emulates; both return at once.
 */
__asm__(".text\n"
	".type xp_calib_step, @function\n"
	".p2align 4\n"
	"xp_calib_step:\n"
	"	sub $8, %rsp\n"
	"	add $8, %rsp\n"
	"	ret\n"
	".size xp_calib_step, .-xp_calib_step\n"
	".type xp_calib_emul, @function\n"
	".p2align 4\n"
	"xp_calib_emul:\n"
	"	push %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size xp_calib_emul, .-xp_calib_emul\n");
void xp_calib_step(void);
void xp_calib_emul(void);

#define CACHE_MAX 4096
#define CHILD_WAIT_MS 20000

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int boot_id(char out[40])
{
	char *text = NULL;
	size_t len = 0;
	int rc = xp_read_file("/proc/sys/kernel/random/boot_id", 64, &text, &len);

	if (rc)
		return rc;
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (len != 36) {
		free(text);
		return -EINVAL;
	}
	memcpy(out, text, 36);
	out[36] = '\0';
	free(text);
	return 0;
}

/* --- the cache ----------------------------------------------------------- */

struct ident {
	char boot[40];
	char kernel[65];
};

/*
 * The runtime directory, created root's 0700 when absent, opened without
 * following a symbolic link and checked: root's, nothing for group or
 * others.  Returns its fd, or -1 with @why.
 */
static int open_dir(const char *dir, char *why, size_t n)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(why, n, "%s cannot be created: %s", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "%s refused: %s", dir,
			 errno == ELOOP || errno == ENOTDIR ? "not a directory (a symbolic link?)" :
							      strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(why, n, "%s refused: owned by uid %u with mode %04o, not root's 0700", dir,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

/* "key value\n" at *@p: the value into @val (NUL-terminated), 0 or -1. */
static int take(char **p, const char *key, char *val, size_t n)
{
	size_t k = strlen(key), v;
	char *nl;

	if (strncmp(*p, key, k) != 0 || (*p)[k] != ' ')
		return -1;
	nl = strchr(*p + k + 1, '\n');
	if (!nl)
		return -1;
	v = (size_t)(nl - (*p + k + 1));
	if (v == 0 || v >= n)
		return -1;
	memcpy(val, *p + k + 1, v);
	val[v] = '\0';
	*p = nl + 1;
	return 0;
}

static int take_u64(char **p, const char *key, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char v[32];

	if (take(p, key, v, sizeof(v)))
		return -1;
	return xpc_parse_u64(v, lo, hi, out) ? -1 : 0;
}

/* Parse a cache file's text; 0 with @out's figures, or -1 with @why. */
static int parse_cache(char *text, size_t len, const struct ident *id, struct xp_probe_cost *out,
		       char *why, size_t n)
{
	char v[80], *p = text, *sum_at;
	uint64_t sum;

	if (len == 0 || text[len - 1] != '\n' || memchr(text, '\0', len)) {
		snprintf(why, n, "malformed");
		return -1;
	}
	if (take(&p, "xprobe-probe-cost", v, sizeof(v)) || strcmp(v, "1") != 0) {
		snprintf(why, n, "not a version 1 cache file");
		return -1;
	}
	if (take(&p, "boot_id", v, sizeof(v)) || strcmp(v, id->boot) != 0) {
		snprintf(why, n, "from another boot");
		return -1;
	}
	if (take(&p, "kernel", v, sizeof(v)) || strcmp(v, id->kernel) != 0) {
		snprintf(why, n, "from another kernel");
		return -1;
	}
	if (take_u64(&p, "calls", 1, 10000000, &out->calls) ||
	    take_u64(&p, "single_step_pair_ns", 1, 1000000000, &out->single_step_pair_ns) ||
	    take_u64(&p, "emulated_pair_ns", 1, 1000000000, &out->emulated_pair_ns) ||
	    take_u64(&p, "single_step_added_ns", 0, 1000000000, &out->single_step_added_ns) ||
	    take_u64(&p, "emulated_added_ns", 0, 1000000000, &out->emulated_added_ns) ||
	    take_u64(&p, "calibrated_at", 0, UINT64_MAX, &out->calibrated_at)) {
		snprintf(why, n, "malformed figures");
		return -1;
	}
	sum_at = p;
	if (take(&p, "checksum", v, sizeof(v)) || strlen(v) != 16 || (size_t)(p - text) != len) {
		snprintf(why, n, "malformed checksum line");
		return -1;
	}
	{
		char hex[24] = "0x";

		memcpy(hex + 2, v, 17);
		if (xpc_parse_hex_u64(hex, &sum) || sum != fnv1a(text, (size_t)(sum_at - text))) {
			snprintf(why, n, "its checksum does not match its contents");
			return -1;
		}
	}
	return 0;
}

/* The cache file under @dfd: 1 (figures in @out), 0 (none usable: @why). */
static int read_cache(int dfd, const struct ident *id, struct xp_probe_cost *out, char *why,
		      size_t n)
{
	char text[CACHE_MAX + 1];
	struct xp_probe_cost tmp;
	struct stat st;
	ssize_t got;
	size_t len = 0;
	int fd;

	fd = openat(dfd, XP_PROBE_COST_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, n, errno == ENOENT ? "absent" : "cannot be opened: %s",
			 strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) ||
	    st.st_size > CACHE_MAX) {
		snprintf(
			why, n,
			"ignored: %s owned by uid %u with mode %04o (root's 0600 regular file expected)",
			S_ISREG(st.st_mode) ? "a file" : "not a regular file", (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777));
		close(fd);
		return 0;
	}
	while (len < CACHE_MAX && (got = read(fd, text + len, CACHE_MAX - len)) > 0)
		len += (size_t)got;
	close(fd);
	text[len] = '\0';
	memset(&tmp, 0, sizeof(tmp));
	{
		char w[96];

		if (parse_cache(text, len, id, &tmp, w, sizeof(w))) {
			snprintf(why, n, "ignored: %s", w);
			return 0;
		}
	}
	out->calls = tmp.calls;
	out->single_step_pair_ns = tmp.single_step_pair_ns;
	out->emulated_pair_ns = tmp.emulated_pair_ns;
	out->single_step_added_ns = tmp.single_step_added_ns;
	out->emulated_added_ns = tmp.emulated_added_ns;
	out->calibrated_at = tmp.calibrated_at;
	return 1;
}

/* Write the figures atomically (temporary, fsync, rename, fsync dir). */
static int write_cache(int dfd, const struct ident *id, const struct xp_probe_cost *c)
{
	char text[CACHE_MAX], tmp[64];
	int len, fd, rc = 0;

	len = snprintf(
		text, sizeof(text),
		"xprobe-probe-cost 1\nboot_id %s\nkernel %s\ncalls %llu\n"
		"single_step_pair_ns %llu\nemulated_pair_ns %llu\n"
		"single_step_added_ns %llu\nemulated_added_ns %llu\ncalibrated_at %llu\n",
		id->boot, id->kernel, (unsigned long long)c->calls,
		(unsigned long long)c->single_step_pair_ns, (unsigned long long)c->emulated_pair_ns,
		(unsigned long long)c->single_step_added_ns,
		(unsigned long long)c->emulated_added_ns, (unsigned long long)c->calibrated_at);
	if (len < 0 || (size_t)len + 32 >= sizeof(text))
		return -EOVERFLOW;
	len += snprintf(text + len, sizeof(text) - (size_t)len, "checksum %016llx\n",
			(unsigned long long)fnv1a(text, (size_t)len));
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", XP_PROBE_COST_FILE, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) || write(fd, text, (size_t)len) != len || fsync(fd))
		rc = -errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(dfd, tmp, dfd, XP_PROBE_COST_FILE))
		rc = -errno;
	if (rc)
		unlinkat(dfd, tmp, 0);
	else
		fsync(dfd);
	return rc;
}

/* --- the measurement ------------------------------------------------------ */

/* CPU time of @n calls of @fn. */
static uint64_t loop(void (*fn)(void), int n)
{
	void (*volatile f)(void) = fn;
	uint64_t t0 = cpu_ns();
	int i;

	for (i = 0; i < n; i++)
		f();
	return cpu_ns() - t0;
}

/* Entry-to-return latencies of one function's probe pair. */
struct lat {
	uint64_t entry;
	bool open;
	uint64_t v[XP_PROBE_COST_CALLS];
	size_t n;
};

static int on_record(void *ctx, void *data, size_t size)
{
	const struct xp_live_hdr *h = data;
	struct lat *l = ctx;

	if (size < sizeof(*h))
		return 0;
	if (h->endpoint == 0) {
		l->entry = h->ts_ns;
		l->open = true;
	} else if (l->open && l->n < XP_PROBE_COST_CALLS) {
		l->v[l->n++] = h->ts_ns - l->entry;
		l->open = false;
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* File offset of code address @fn in xprobe's own executable. */
static int self_offset(void (*fn)(void), uint64_t *off)
{
	uint64_t a = (uint64_t)(uintptr_t)fn;
	struct xp_maps m;
	size_t bad = 0, i;
	int rc = xp_maps_read_pid((uint32_t)getpid(), &m, &bad);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < m.n; i++) {
		if (a >= m.v[i].start && a < m.v[i].end && xp_map_is_file(&m.v[i])) {
			*off = a - m.v[i].start + m.v[i].offset;
			rc = 0;
			break;
		}
	}
	xp_maps_free(&m);
	return rc;
}

static void endpoints(struct xp_live_endpoint ep[2], uint64_t off, const char *what)
{
	int i;

	memset(ep, 0, 2 * sizeof(*ep));
	for (i = 0; i < 2; i++) {
		ep[i].kind = XP_LIVE_UPROBE;
		ep[i].selector = what;
		/* the kernel resolves it in xprobe: its own executable's inode */
		ep[i].access_path = "/proc/self/exe";
		ep[i].file_offset = off;
		ep[i].retprobe = i == 1;
		ep[i].event_type = i ? XP_EV_HOST_FUNCTION_EXIT : XP_EV_HOST_FUNCTION_ENTRY;
		ep[i].probe_kind = i ? XP_PROBE_URETPROBE : XP_PROBE_UPROBE;
		ep[i].symbol = what;
	}
}

/*
 * The measurement, in the calibration process itself (a child of xprobe:
 * calibrate() below): its own functions, probed on its own PID.  0 with
 * the figures in @out, or -1 with out->reason.
 */
static int calibrate_here(struct xp_probe_cost *out)
{
	static struct lat lat[2]; /* 8 KB each: not on the stack */
	struct xp_live_endpoint ep[2][2];
	struct xp_live_obj *obj[2] = { NULL, NULL };
	struct xp_error err = { 0 };
	struct xp_live_filter f;
	struct xp_target_ns ns;
	struct xp_target t;
	uint64_t off[2], base[2], traced[2];
	int rc = -1, i;

	memset(&t, 0, sizeof(t));
	t.pidfd = -1;
	memset(lat, 0, sizeof(lat));
	if (self_offset(xp_calib_step, &off[0]) || self_offset(xp_calib_emul, &off[1])) {
		snprintf(out->reason, sizeof(out->reason),
			 "xprobe's own calibration functions are not in a mapped file");
		return -1;
	}
	/* untraced, twice: the first round pays for page faults */
	for (i = 0; i < 2; i++) {
		base[0] = loop(xp_calib_step, XP_PROBE_COST_CALLS);
		base[1] = loop(xp_calib_emul, XP_PROBE_COST_CALLS);
	}
	if (xp_target_identify((uint32_t)getpid(), &t, &err) ||
	    xp_target_namespaces(&t, &ns, &err) ||
	    xp_live_filter_init(&f, &t, ns.same_pidns, ns.pidns_dev, ns.pidns_ino, ns.ns_pid)) {
		snprintf(out->reason, sizeof(out->reason), "the calibration process: %s",
			 err.message[0] ? err.message : "no PID namespace");
		goto out;
	}
	endpoints(ep[0], off[0], "xprobe calibration (single-stepped)");
	endpoints(ep[1], off[1], "xprobe calibration (emulated)");
	for (i = 0; i < 2; i++) {
		if (xp_live_bpf_open(&f, ep[i], 2, 256u << 10, on_record, &lat[i], &obj[i], &err) ||
		    xp_live_bpf_attach(obj[i], (uint32_t)getpid(), &err)) {
			snprintf(out->reason, sizeof(out->reason), "%s", err.message);
			goto out;
		}
		xp_live_bpf_arm(obj[i], true);
	}
	traced[0] = loop(xp_calib_step, XP_PROBE_COST_CALLS);
	traced[1] = loop(xp_calib_emul, XP_PROBE_COST_CALLS);
	for (i = 0; i < 2; i++) {
		/* disarmed, the loops done: every record is in; the links go
		 * with the objects at the end */
		xp_live_bpf_arm(obj[i], false);
		xp_live_bpf_consume(obj[i]);
		if (lat[i].n < XP_PROBE_COST_CALLS / 2) {
			snprintf(out->reason, sizeof(out->reason),
				 "the calibration probes saw %zu of %d calls", lat[i].n,
				 XP_PROBE_COST_CALLS);
			goto out;
		}
		qsort(lat[i].v, lat[i].n, sizeof(lat[i].v[0]), u64_cmp);
	}
	out->calls = XP_PROBE_COST_CALLS;
	out->single_step_pair_ns = lat[0].v[lat[0].n / 2];
	out->emulated_pair_ns = lat[1].v[lat[1].n / 2];
	out->single_step_added_ns =
		traced[0] > base[0] ? (traced[0] - base[0]) / XP_PROBE_COST_CALLS : 0;
	out->emulated_added_ns =
		traced[1] > base[1] ? (traced[1] - base[1]) / XP_PROBE_COST_CALLS : 0;
	out->calibrated_at = (uint64_t)time(NULL);
	rc = 0;
out:
	for (i = 0; i < 2; i++)
		xp_live_bpf_destroy(obj[i]);
	xp_error_clear(&err);
	xp_target_release(&t);
	return rc;
}

/*
 * Measure in a child process: xprobe itself never holds the calibration's
 * programs and links (nothing of them is in its descriptors, memory or
 * libbpf state when it goes on to attach to the target), and a child
 * that hangs is killed after CHILD_WAIT_MS.  0 or -1 with out->reason.
 */
static int calibrate(struct xp_probe_cost *out)
{
	struct {
		int rc;
		struct xp_probe_cost c;
	} r;
	struct pollfd p;
	size_t got = 0;
	int fd[2], st;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC)) {
		snprintf(out->reason, sizeof(out->reason), "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(out->reason, sizeof(out->reason), "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		memset(&r, 0, sizeof(r));
		r.rc = calibrate_here(&r.c);
		if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	p.fd = fd[0];
	p.events = POLLIN;
	while (got < sizeof(r)) {
		ssize_t n;
		int k = poll(&p, 1, CHILD_WAIT_MS);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n = read(fd[0], (char *)&r + got, sizeof(r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	if (got < sizeof(r))
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got < sizeof(r)) {
		snprintf(out->reason, sizeof(out->reason),
			 "the calibration process gave no answer within %d ms", CHILD_WAIT_MS);
		return -1;
	}
	if (r.rc) {
		snprintf(out->reason, sizeof(out->reason), "%s", r.c.reason);
		return -1;
	}
	out->calls = r.c.calls;
	out->single_step_pair_ns = r.c.single_step_pair_ns;
	out->emulated_pair_ns = r.c.emulated_pair_ns;
	out->single_step_added_ns = r.c.single_step_added_ns;
	out->emulated_added_ns = r.c.emulated_added_ns;
	out->calibrated_at = r.c.calibrated_at;
	return 0;
}

int xp_live_probe_cost(struct xp_probe_cost *out)
{
	const char *dir = xpc_test_hook_env("XPROBE_TEST_RUNTIME_DIR");
	char why[192] = "", path[256];
	struct utsname u;
	struct ident id;
	int dfd = -1, rc;

	memset(out, 0, sizeof(*out));
	snprintf(
		out->method, sizeof(out->method),
		"median entry-to-return latency of xprobe's uprobe+uretprobe programs on two bundled functions, %d calls each in a child process: first instruction sub $8,%%rsp (single-stepped) and push %%rbp (emulated); added_ns: CPU time per call, traced minus untraced",
		XP_PROBE_COST_CALLS);
	if (!dir || dir[0] != '/')
		dir = XP_PROBE_COST_DIR;
	snprintf(path, sizeof(path), "%s/%s", dir, XP_PROBE_COST_FILE);
	memset(&id, 0, sizeof(id));
	if (geteuid() != 0) {
		snprintf(out->cache, sizeof(out->cache), "%s: not used (root's only)", path);
	} else if (boot_id(id.boot) || uname(&u)) {
		snprintf(out->cache, sizeof(out->cache), "%s: not used (no boot id)", path);
	} else {
		snprintf(id.kernel, sizeof(id.kernel), "%s", u.release);
		dfd = open_dir(dir, why, sizeof(why));
		if (dfd < 0)
			snprintf(out->cache, sizeof(out->cache), "%s", why);
		else if (read_cache(dfd, &id, out, why, sizeof(why)) == 1) {
			snprintf(out->cache, sizeof(out->cache), "%s: read", path);
			snprintf(out->source, sizeof(out->source), "cache");
			out->available = true;
			close(dfd);
			return 0;
		}
	}
	snprintf(out->source, sizeof(out->source), "measured");
	if (calibrate(out)) {
		snprintf(out->source, sizeof(out->source), "none");
		if (dfd >= 0) {
			snprintf(out->cache, sizeof(out->cache), "%s: %s, not written", path, why);
			close(dfd);
		}
		return 0;
	}
	out->available = true;
	if (dfd >= 0) {
		char prev[192];

		snprintf(prev, sizeof(prev), "%s", why);
		rc = write_cache(dfd, &id, out);
		if (rc)
			snprintf(out->cache, sizeof(out->cache),
				 "%s: %s, and writing it failed: %s", path, prev, strerror(-rc));
		else
			snprintf(out->cache, sizeof(out->cache), "%s: %s, written", path, prev);
		close(dfd);
	}
	return 0;
}
