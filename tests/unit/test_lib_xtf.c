/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_xtf.c - the .xtf container: writer/reader round trip, the strict
 * reader against every truncation and every byte flip of valid files, an
 * extended file, files whose checksums are right but whose content is not
 * (records, streams, metadata), ring-file recovery from a live session,
 * session-directory errors, and FIFOs where files are expected (refused at
 * once, never a reader blocked on an open with no writer).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <time.h>

#include "../../lib/internal.h"
#include "../../lib/xtf/xtf_internal.h"
#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	FILE *f = fopen(path, "rb");

	*len = 0;
	if (!f || fstat(fileno(f), &st) != 0) {
		if (f)
			fclose(f);
		return NULL;
	}
	b = malloc((size_t)st.st_size + 1);
	*len = fread(b, 1, (size_t)st.st_size, f);
	fclose(f);
	return b;
}

/* Every prefix and every single-byte corruption must be refused. */
static void reject_damage(const char *path)
{
	size_t len, refused = 0, cases = 0;
	uint8_t *b = slurp(path, &len);
	struct xprobe_xtf *x = NULL;
	char err[256];

	CHECK(b != NULL && len > 128);
	if (!b)
		return;
	CHECK(xprobe_xtf_open_mem(b, len, &x, err, sizeof(err)) == 0);
	xprobe_xtf_close(x);
	for (size_t n = 0; n < len; n++) {
		cases++;
		x = NULL;
		if (xprobe_xtf_open_mem(b, n, &x, err, sizeof(err)) == -XPROBE_E_FORMAT && !x &&
		    err[0])
			refused++;
		xprobe_xtf_close(x);
	}
	for (size_t i = 0; i < len; i++) {
		cases++;
		b[i] ^= 0x5a;
		x = NULL;
		if (xprobe_xtf_open_mem(b, len, &x, err, sizeof(err)) == -XPROBE_E_FORMAT && !x)
			refused++;
		xprobe_xtf_close(x);
		b[i] ^= 0x5a;
	}
	/* one byte too many */
	{
		uint8_t *l = malloc(len + 1);

		memcpy(l, b, len);
		l[len] = 0;
		cases++;
		x = NULL;
		if (xprobe_xtf_open_mem(l, len + 1, &x, err, sizeof(err)) == -XPROBE_E_FORMAT)
			refused++;
		CHECK(strstr(err, "truncated or extended") != NULL);
		free(l);
	}
	CHECK_EQ_U64(refused, cases);
	x = NULL;
	CHECK(xprobe_xtf_open_mem(b, 100, &x, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(strstr(err, "shorter than the 128-byte header") != NULL);
	CHECK(xprobe_xtf_open_mem(b, len - 1, &x, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(strstr(err, "truncated") != NULL);
	free(b);
}

static void make_session(char *dir, size_t size)
{
	struct xprobe_inspect_config *c = NULL;
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 3);
	uint64_t id;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, "sessions");
	xprobe_inspect_config_set_monitor_period_ms(c, 10);
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	xprobe_inspect_config_set_device_profile_mode(c, XPROBE_DEVICE_PROFILE_SESSION);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 50; i++)
		xprobe_trace_record(3, (uint64_t)i, 0);
	xprobe_trace_mark("a mark");
	CHECK(xprobe_execution_begin("model-x", &id) == 0);
	CHECK(xprobe_execution_end(id, 0) == 0);
	usleep(30000);
	xprobe_inspect_get_output_dir(dir, size);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
}

static void test_damage(void)
{
	char dir[PATH_MAX], p[PATH_MAX + 64];
	static const char *const names[] = { "ntrace.pb", "trace_info.pb", "cpu_util.pb",
					     "host_mem.pb", "profile_dev_1_session_1.xtf" };

	make_session(dir, sizeof(dir));
	for (size_t i = 0; i < XPL_ARRAY_SIZE(names); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		reject_damage(p);
	}
}

/* --- hand-made files: valid checksums, invalid content ------------------------- */

struct mk {
	uint32_t kind, flags;
	uint8_t blob[512];
	size_t blob_len;
	int64_t records; /* stream records field; -1 = count them right */
	bool no_tid;
	bool device;
	bool sim_meta;
	const char *backend;
};

static void mk_record(struct mk *m, uint16_t type, const char *name, uint16_t size_override,
		      uint32_t tid)
{
	struct xprobe_record r = { 0 };
	size_t n = name ? strlen(name) : 0;
	size_t size = XPL_ALIGN8(40 + n);

	r.size = size_override ? size_override : (uint16_t)size;
	r.type = type;
	r.tid = tid;
	r.ts = 1000;
	r.a0 = 2000;
	r.name_len = (uint16_t)n;
	r.flags = name ? XPROBE_RECF_NAME_COMPLETE : 0;
	memcpy(m->blob + m->blob_len, &r, sizeof(r));
	memcpy(m->blob + m->blob_len + 40, name ? name : "", n);
	m->blob_len += size;
}

static int mk_write(struct mk *m, char *err, size_t errlen)
{
	Xprobe__Xtf__Capture meta = XPROBE__XTF__CAPTURE__INIT;
	Xprobe__Xtf__Clock clock = XPROBE__XTF__CLOCK__INIT;
	Xprobe__Xtf__Stream st = XPROBE__XTF__STREAM__INIT, *stp = &st;
	Xprobe__Xtf__DeviceProfile dp = XPROBE__XTF__DEVICE_PROFILE__INIT;
	Xprobe__Xtf__TraceInfo ti = XPROBE__XTF__TRACE_INFO__INIT;
	struct xpl_seg seg = { m->blob, m->blob_len };
	struct xpl_stream_src src = { .segs = &seg, .nsegs = 1 };
	struct xpl_xtf_write_args wa = { 0 };
	struct xprobe_xtf *x = NULL;
	char path[PATH_MAX];
	uint64_t recs = 0;
	size_t len;
	uint8_t *b;
	int rc;

	for (size_t o = 0; o + 8 <= m->blob_len;) {
		const struct xprobe_record *r = (const void *)(m->blob + o);

		if (r->size < 8 || r->size % 8)
			break;
		recs += r->type != 0;
		o += r->size;
	}
	clock.domain = (char *)"host_monotonic";
	clock.source = (char *)"clock_gettime";
	meta.kind = (Xprobe__Xtf__FileKind)m->kind;
	meta.producer = (char *)"test";
	meta.pid = 42;
	meta.instance_id = (char *)"inst";
	meta.backend = (char *)(m->backend ? m->backend : (m->sim_meta ? "sim" : "none"));
	meta.simulated = m->sim_meta;
	meta.clock = &clock;
	st.tid = m->no_tid ? 0 : 7;
	st.records = m->records >= 0 ? (uint64_t)m->records : recs;
	if (m->device) {
		st.has_device = true;
		st.device = 0;
		st.tid = 0;
		dp.key_space = (char *)"session";
		dp.has_device = true;
		dp.has_session_id = true;
		dp.session_id = 1;
		meta.device = &dp;
	}
	if (m->kind == XPROBE_XTF_TRACE_INFO) {
		ti.stop_reason = (char *)"stop";
		ti.device_profile_mode = (char *)"disabled";
		meta.info = &ti;
	}
	meta.n_streams = 1;
	meta.streams = &stp;
	wa.kind = m->kind;
	wa.flags = m->flags;
	wa.meta = &meta;
	wa.src = &src;
	snprintf(path, sizeof(path), "%s/hand.xtf", scratch);
	CHECK(xpl_xtf_write_at(AT_FDCWD, path, &wa, NULL) == 0);
	b = slurp(path, &len);
	rc = xprobe_xtf_open_mem(b, len, &x, err, errlen);
	xprobe_xtf_close(x);
	free(b);
	return rc;
}

static void expect_reject(struct mk *m, const char *why)
{
	char err[256] = "";

	CHECK(mk_write(m, err, sizeof(err)) == -XPROBE_E_FORMAT);
	if (!strstr(err, why))
		fprintf(stderr, "expected '%s' in '%s'\n", why, err);
	CHECK(strstr(err, why) != NULL);
}

static void test_content_checks(void)
{
	struct mk m;
	char err[256];

#define RESET(k)                          \
	do {                              \
		memset(&m, 0, sizeof(m)); \
		m.kind = (k);             \
		m.records = -1;           \
	} while (0)

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_PUSH, "ok", 0, 7);
	mk_record(&m, XPROBE_EV_NVTX_POP, NULL, 0, 7);
	CHECK(mk_write(&m, err, sizeof(err)) == 0);

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_POP, NULL, 44, 7);
	m.blob_len = 48;
	expect_reject(&m, "size 44 is not a multiple of 8");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_POP, NULL, 48, 7);
	m.blob_len = 48;
	expect_reject(&m, "type nvtx_range_pop is 48 bytes");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_DEVICE_ACTIVITY, "k", 0, 7);
	expect_reject(&m, "not allowed in this kind");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_MARK, "ab", 0, 7);
	m.blob[40 + 1] = '\0'; /* NUL inside the name */
	expect_reject(&m, "NUL inside the name");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_MARK, "ab", 0, 7);
	m.blob[45] = 'x'; /* padding */
	expect_reject(&m, "non-zero padding");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_NVTX_MARK, "ab", 0, 7);
	((struct xprobe_record *)m.blob)->name_len = 200;
	expect_reject(&m, "name length 200");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	((struct xprobe_record *)m.blob)->ts = 0;
	expect_reject(&m, "zero timestamp");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 0);
	expect_reject(&m, "host record without tid");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	((struct xprobe_record *)m.blob)->flags = 0x80;
	expect_reject(&m, "unknown flags");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, 99, NULL, 0, 7);
	expect_reject(&m, "type 99");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	m.records = 3;
	expect_reject(&m, "metadata says 3");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	m.no_tid = true;
	expect_reject(&m, "needs a tid");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	m.flags = XPROBE_XTF_F_SIMULATED; /* header says sim, metadata does not */
	expect_reject(&m, "disagrees with the header");

	RESET(XPROBE_XTF_NTRACE);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	m.backend = "gpu";
	expect_reject(&m, "unknown backend");

	RESET(XPROBE_XTF_DEVICE_PROFILE);
	mk_record(&m, XPROBE_EV_DEVICE_ACTIVITY, "k", 0, 0);
	m.device = true;
	m.sim_meta = true;
	m.flags = XPROBE_XTF_F_SIMULATED;
	CHECK(mk_write(&m, err, sizeof(err)) == 0);
	((struct xprobe_record *)m.blob)->a0 = 10; /* ends before it starts */
	expect_reject(&m, "ends before it starts");

	RESET(XPROBE_XTF_TRACE_INFO);
	mk_record(&m, XPROBE_EV_USER, NULL, 0, 7);
	expect_reject(&m, "no streams");

	RESET(XPROBE_XTF_CPU_UTIL);
	mk_record(&m, XPROBE_EV_CPU_SAMPLE, NULL, 72, 0);
	m.no_tid = true;
	expect_reject(&m, "period"); /* no sample_period_ms */
#undef RESET
}

static void test_recover_live(void)
{
	struct xprobe_inspect_config *c = NULL;
	struct xprobe_xtf *x = NULL;
	struct xprobe_xtf_info in = { .sz = sizeof(in) };
	char dir[PATH_MAX], path[PATH_MAX + 32], err[256];
	struct timespec now;
	uint64_t last = 0, nowns;
	int fd;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, "live");
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	for (int i = 0; i < 300; i++)
		xprobe_trace_record(5, (uint64_t)i, 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/host_rings.live", dir);
	/* the process is alive: the file already holds everything recorded */
	CHECK(xprobe_rings_recover(path, &x, err, sizeof(err)) == 0);
	if (x) {
		xprobe_xtf_get_info(x, &in);
		CHECK(in.flags & XPROBE_XTF_F_RECOVERED);
		CHECK_EQ_U64(lt_count(x, XPROBE_EV_USER), 300);
		CHECK_EQ_U64(in.pid, (uint64_t)getpid());
		{
			struct xprobe_xtf_stream st;
			size_t cur = 0;
			const struct xprobe_record *r;

			xprobe_xtf_get_stream(x, 0, &st);
			while ((r = xprobe_xtf_next_record(&st, &cur)))
				last = r->ts;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		nowns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		/* converted to CLOCK_MONOTONIC: within a second of now */
		CHECK(last < nowns + 1000000000ull && last + 1000000000ull > nowns);
	}
	xprobe_xtf_close(x);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_rings_recover(path, &x, err, sizeof(err)) == -ENOENT);
	/* a damaged ring file is refused */
	snprintf(path, sizeof(path), "%s/fake.live", scratch);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(write(fd, "XPRRING1garbage-garbage-garbage-garbage", 40) == 40);
	close(fd);
	CHECK(xprobe_rings_recover(path, &x, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(xprobe_rings_recover(NULL, &x, err, sizeof(err)) == -XPROBE_E_INVALID_ARGUMENT);
	xprobe_inspect_config_free(c);
}

static void test_session_errors(void)
{
	struct xprobe_session *s = NULL;
	char dir[PATH_MAX], p[PATH_MAX + 64], err[256];
	FILE *f;

	CHECK(xprobe_session_open(NULL, &s, err, sizeof(err)) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_session_open("nonexistent", &s, err, sizeof(err)) == -ENOENT);
	mkdir("emptydir", 0700);
	CHECK(xprobe_session_open("emptydir", &s, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(strstr(err, "not a libxprobe session directory") != NULL);
	make_session(dir, sizeof(dir));
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	CHECK(xprobe_session_recovered(s) == 0);
	CHECK_EQ_U64(xprobe_session_file_count(s), 6);
	CHECK(xprobe_session_get_file(s, 99, NULL) == NULL);
	xprobe_session_close(s);
	s = NULL;
	/* a listed file grows: refused */
	snprintf(p, sizeof(p), "%s/cpu_util.pb", dir);
	f = fopen(p, "a");
	fputc('x', f);
	fclose(f);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(strstr(err, "cpu_util.pb") != NULL);
	/* a listed file is gone: refused */
	unlink(p);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(strstr(err, "missing") != NULL);
	/* a file path, not a directory */
	snprintf(p, sizeof(p), "%s/ntrace.pb", dir);
	CHECK(xprobe_session_open(p, &s, err, sizeof(err)) == -XPROBE_E_FORMAT);
	CHECK(s == NULL);
}

/*
 * Run one reader in a child with an alarm: a reader that blocks (a FIFO
 * opened for reading waits for a writer that never comes) dies of SIGALRM
 * instead of hanging the test.  The child exits 0 when the reader refused
 * the input as "not a regular file", 1 for any other outcome.
 */
enum { RD_XTF, RD_RINGS, RD_SESSION };

static bool refused_in_child(int reader, const char *path)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		struct xprobe_xtf *x = NULL;
		struct xprobe_session *s = NULL;
		char err[512] = "";
		int rc;

		alarm(5);
		if (reader == RD_XTF)
			rc = xprobe_xtf_open_file(path, &x, err, sizeof(err));
		else if (reader == RD_RINGS)
			rc = xprobe_rings_recover(path, &x, err, sizeof(err));
		else
			rc = xprobe_session_open(path, &s, err, sizeof(err));
		fprintf(stderr, "  %s: rc %d: %s\n", path, rc, err);
		_exit(rc == -XPROBE_E_FORMAT && strstr(err, "not a regular file: a FIFO") ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		fprintf(stderr, "%s: the reader was killed by signal %d (it blocked)\n", path,
			WTERMSIG(st));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_fifos(void)
{
	char dir[PATH_MAX], rec[PATH_MAX], p[PATH_MAX + 64];

	/* the readers of single files */
	snprintf(p, sizeof(p), "%s/lone.fifo", scratch);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(refused_in_child(RD_XTF, p));
	CHECK(refused_in_child(RD_RINGS, p));
	/* a file trace_info.pb lists is a FIFO */
	make_session(dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/host_mem.pb", dir);
	CHECK(unlink(p) == 0 && mkfifo(p, 0600) == 0);
	CHECK(refused_in_child(RD_SESSION, dir));
	/* trace_info.pb itself is a FIFO */
	snprintf(p, sizeof(p), "%s/trace_info.pb", dir);
	CHECK(unlink(p) == 0 && mkfifo(p, 0600) == 0);
	CHECK(refused_in_child(RD_SESSION, dir));
	/* a killed session (no trace_info.pb): a FIFO among its files, and a
	 * FIFO as its ring file */
	snprintf(rec, sizeof(rec), "%s/killed", scratch);
	CHECK(mkdir(rec, 0700) == 0);
	snprintf(p, sizeof(p), "%s/stray.xtf", rec);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(refused_in_child(RD_SESSION, rec));
	CHECK(unlink(p) == 0);
	snprintf(p, sizeof(p), "%s/host_rings.live", rec);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(refused_in_child(RD_SESSION, rec));
}

/*
 * A symbolic link as a session's entry is not followed (a link planted in
 * a directory others can write would make the reader take another file),
 * whether trace_info.pb lists it or a killed session's scan finds it;
 * the same file given by path to xprobe_xtf_open_file is followed.
 */
static void test_symlinked_entries(void)
{
	char dir[PATH_MAX], p[PATH_MAX + 64], moved[PATH_MAX + 64], err[512];
	struct xprobe_session *s = NULL;
	struct xprobe_xtf *x = NULL;

	make_session(dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/host_mem.pb", dir);
	snprintf(moved, sizeof(moved), "%s/host_mem.real", scratch);
	CHECK(rename(p, moved) == 0 && symlink(moved, p) == 0);
	CHECK(xprobe_xtf_open_file(p, &x, err, sizeof(err)) == 0);
	xprobe_xtf_close(x);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == -XPROBE_E_FORMAT && !s);
	CHECK(strstr(err, "host_mem.pb: not a regular file: a symbolic link, not followed") != NULL);
	/* trace_info.pb itself */
	CHECK(unlink(p) == 0 && rename(moved, p) == 0);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
	xprobe_session_close(s);
	s = NULL;
	snprintf(p, sizeof(p), "%s/trace_info.pb", dir);
	CHECK(rename(p, moved) == 0 && symlink(moved, p) == 0);
	CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == -XPROBE_E_FORMAT && !s);
	CHECK(strstr(err, "trace_info.pb: not a regular file: a symbolic link") != NULL);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "xtf");
	test_damage();
	test_content_checks();
	test_recover_live();
	test_session_errors();
	test_fifos();
	test_symlinked_entries();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
