/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_checks_parse.c - the process, resolve and checks modules's parsers and pure functions on
 * synthetic input: /proc maps/status/cmdline/stat, the ld.so.cache
 * reader, library majors, the doctor's file checks and container
 * detection, C++ base names, edit distance, the process-tree filter, and
 * validate's policy mask and recommendation (selectors from the parser).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checks/cudalibs.h"
#include "checks/cuda_candidates.h"
#include "checks/doctor_checks.h"
#include "checks/ldcache.h"
#include "process/procfs.h"
#include "checks/validate_checks.h"
#include "resolve/xelf.h"
#include "testlib.h"

static char *xdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();
	return d;
}

static void test_maps(void)
{
	struct xp_maps m;
	size_t bad;
	char *text = xdup(
		"55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1234                       /usr/bin/my prog\n"
		"55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1234                       /usr/bin/my prog\n"
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:02 99                         /tmp/lib (x).so (deleted)\n"
		"7f0000002000-7f0000003000 r-xp 00000000 08:02 98                         /tmp/new\\012line.so\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n");

	CHECK(xp_maps_parse(text, &m, &bad) == 0);
	CHECK_EQ_U64(m.n, 7);
	CHECK_STR(m.v[0].path, "/usr/bin/my prog");
	CHECK_EQ_U64(m.v[1].offset, 0x1000);
	CHECK_EQ_U64(m.v[1].dev_major, 0xfd);
	CHECK_EQ_U64(m.v[1].inode, 1234);
	CHECK(xp_map_is_exec(&m.v[1]) && !xp_map_is_exec(&m.v[0]));
	CHECK(m.v[2].path == NULL && !xp_map_is_file(&m.v[2]));
	CHECK_STR(m.v[3].path, "/tmp/lib (x).so");
	CHECK(m.v[3].deleted);
	CHECK_STR(m.v[4].path, "/tmp/new\nline.so");
	CHECK_STR(m.v[5].path, "[stack]");
	CHECK(!xp_map_is_file(&m.v[5]));
	CHECK_EQ_U64(m.v[6].start, 0xffffffffff600000ull);
	{
		size_t *idx;
		ssize_t n = xp_maps_files(&m, &idx);

		CHECK_EQ_U64(n, 3); /* "my prog" once, the deleted lib, the newline lib */
		free(idx);
	}
	xp_maps_free(&m);

	/* malformed lines: the line number is reported */
	text = xdup("55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1 /a\nzz-1 r--p 0 0:0 0\n");
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	CHECK_EQ_U64(bad, 2);
	text = xdup("1000-0fff r--p 00000000 fd:01 1 /a\n"); /* end < start */
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	text = xdup("1000-2000 rq-p 00000000 fd:01 1 /a\n");
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	text = xdup("1000-2000 r--p 00000000 fd01 1 /a\n");
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	text = xdup("1000-2000 r--p 00000000 fd:01 x /a\n");
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	text = xdup("10000000000000000-2 r--p 0 0:0 0\n"); /* 17 hex digits */
	CHECK(xp_maps_parse(text, &m, &bad) == -EINVAL);
	text = xdup("");
	CHECK(xp_maps_parse(text, &m, &bad) == 0 && m.n == 0);
	xp_maps_free(&m);
}

static void test_status_cmdline(void)
{
	struct xp_proc_status st;
	struct xp_argv a;
	char cmd[] = "python3\0-c\0\0print(1)\0";

	CHECK(xp_status_parse("Name:\tx\nUid:\t0\t1000\t2\t3\nCapEff:\t000001fffeffffff\n"
			      "NSpid:\t4242\t7\t1\nThreads:\t5\n",
			      &st) == 0);
	CHECK(st.has_uid && st.uid[1] == 1000 && st.uid[3] == 3);
	CHECK_EQ_U64(st.cap_eff, 0x1fffeffffffull);
	CHECK(xp_cap_has(st.cap_eff, XP_CAP_SYS_ADMIN) && xp_cap_has(st.cap_eff, XP_CAP_BPF));
	CHECK(!xp_cap_has(st.cap_eff, 24) && !xp_cap_has(st.cap_eff, 64));
	CHECK_EQ_U64(st.n_nspid, 3);
	CHECK_EQ_U64(st.nspid[2], 1);
	CHECK_EQ_U64(st.threads, 5);
	CHECK(xp_status_parse("Uid:\t0\t1\n", &st) == -EINVAL);
	CHECK(xp_status_parse("CapEff:\tzz\n", &st) == -EINVAL);
	CHECK(xp_status_parse("NSpid:\t-1\n", &st) == -EINVAL);
	CHECK(xp_status_parse("", &st) == 0 && !st.has_uid && st.n_nspid == 0);

	{
		char *buf = malloc(sizeof(cmd));

		memcpy(buf, cmd, sizeof(cmd));
		CHECK(xp_cmdline_parse(buf, sizeof(cmd) - 1, &a) == 0);
		CHECK_EQ_U64(a.n, 3);
		CHECK_STR(a.v[0], "python3");
		CHECK_STR(a.v[2], "print(1)");
		xp_argv_free(&a);
	}
}

static void test_stat(void)
{
	struct xp_proc_stat st;
	char line[] = "42 (we(ird) n) S 7 42 42 0 -1 4194560 1 0 0 0 10 20 0 0 20 0 3 0 "
		      "123456 1000 50 18446744073709551615\n";

	CHECK(xp_proc_stat_parse(line, &st) == 0);
	CHECK_STR(st.comm, "we(ird) n");
	CHECK(st.state == 'S' && st.ppid == 7 && st.num_threads == 3);
	CHECK_EQ_U64(st.start_time, 123456);
	CHECK(xp_proc_stat_parse("42 (x) S 7", &st) == -EINVAL);
	CHECK(xp_proc_stat_parse("42 x S 7 1 2 3", &st) == -EINVAL);
}

/* A new-format ld.so.cache image with two entries. */
static size_t make_cache(unsigned char *buf, size_t size, bool old_prefix)
{
	const char *names[] = { "libcupti.so.13", "/opt/cuda/lib/libcupti.so.13", "libcuda.so.1",
				"/usr/lib/libcuda.so.1" };
	size_t base = 0, strs, off, i;
	uint32_t v;

	memset(buf, 0, size);
	if (old_prefix) {
		memcpy(buf, "ld.so-1.7.0", 11);
		v = 1; /* one old entry (12 bytes) */
		memcpy(buf + 12, &v, 4);
		base = (16 + 12 + 7) & ~(size_t)7;
	}
	memcpy(buf + base, "glibc-ld.so.cache1.1", 20);
	v = 2;
	memcpy(buf + base + 20, &v, 4);
	strs = 48 + 2 * 24;
	off = strs;
	for (i = 0; i < 4; i++) {
		uint32_t o = (uint32_t)off;

		memcpy(buf + base + 48 + (i / 2) * 24 + 4 + (i % 2) * 4, &o, 4);
		memcpy(buf + base + off, names[i], strlen(names[i]) + 1);
		off += strlen(names[i]) + 1;
	}
	return base + off;
}

static int collect(const char *name, const char *path, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s=%s;", name, path);
	return 0;
}

static void test_ldcache(void)
{
	unsigned char buf[1024];
	char out[512];
	size_t n;

	n = make_cache(buf, sizeof(buf), false);
	out[0] = '\0';
	CHECK(xp_ldcache_parse(buf, n, "", collect, out) == 0);
	CHECK_STR(
		out,
		"libcupti.so.13=/opt/cuda/lib/libcupti.so.13;libcuda.so.1=/usr/lib/libcuda.so.1;");
	out[0] = '\0';
	CHECK(xp_ldcache_parse(buf, n, "libcuda.so", collect, out) == 0);
	CHECK_STR(out, "libcuda.so.1=/usr/lib/libcuda.so.1;");
	n = make_cache(buf, sizeof(buf), true);
	out[0] = '\0';
	CHECK(xp_ldcache_parse(buf, n, "libcupti", collect, out) == 0);
	CHECK_STR(out, "libcupti.so.13=/opt/cuda/lib/libcupti.so.13;");
	/* truncated and corrupt images are refused, never over-read */
	CHECK(xp_ldcache_parse(buf, 40, "", collect, out) == -EINVAL);
	n = make_cache(buf, sizeof(buf), false);
	CHECK(xp_ldcache_parse(buf, n - 3, "", collect, out) == -EINVAL);
	buf[22] = 0xff; /* nlibs huge */
	buf[23] = 0xff;
	CHECK(xp_ldcache_parse(buf, n, "", collect, out) == -EINVAL);
	CHECK(xp_ldcache_parse((const unsigned char *)"garbage", 7, "", collect, out) == -EINVAL);
	/* the machine's own cache parses and lists libc */
	out[0] = '\0';
	CHECK(xp_ldcache_scan(XP_LDCACHE_PATH, "libc.so.6", collect, out) == 0);
	CHECK(strstr(out, "libc.so.6=") != NULL);
}

static void test_majors(void)
{
	CHECK(xp_lib_major("libcudart.so.12", "libcudart") == 12);
	CHECK(xp_lib_major("libcudart.so.12.4.127", "libcudart") == 12);
	CHECK(xp_lib_major("libcupti.so.13", "libcupti") == 13);
	CHECK(xp_lib_major("libcupti.so.2025.1.1", "libcupti") == -1);
	CHECK(xp_lib_major("libcupti.so", "libcupti") == -1);
	CHECK(xp_lib_major("libcupti.so.x", "libcupti") == -1);
	CHECK(xp_lib_major("libcudart_static.a", "libcudart") == -1);
	CHECK(xp_cuda_major_supported(12) && xp_cuda_major_supported(13));
	CHECK(!xp_cuda_major_supported(11) && !xp_cuda_major_supported(14));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void test_doctor_helpers(void)
{
	char dir[] = "/tmp/xp-test-doctor-XXXXXX", p[256], v[32];
	struct xp_check c;
	struct xp_doctor *d = calloc(1, sizeof(*d));

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/paranoid", dir);
	write_file(p, "2\n");
	xp_check_sysctl_max(p, 1, NULL, &c);
	CHECK(c.status == XP_CHECK_RESTRICTED);
	CHECK_STR(c.detail, "2");
	write_file(p, "-1\n");
	xp_check_sysctl_max(p, 1, "(note)", &c);
	CHECK(c.status == XP_CHECK_AVAILABLE);
	CHECK_STR(c.detail, "-1 (note)");
	write_file(p, "lots\n");
	xp_check_sysctl_max(p, 1, NULL, &c);
	CHECK(c.status == XP_CHECK_UNKNOWN && strstr(c.detail, "not an integer"));
	unlink(p);
	xp_check_sysctl_max(p, 1, NULL, &c);
	CHECK(c.status == XP_CHECK_UNKNOWN && strstr(c.detail, "not found"));

	snprintf(p, sizeof(p), "%s/lockdown", dir);
	write_file(p, "[none] integrity confidentiality\n");
	xp_check_lockdown(p, &c);
	CHECK(c.status == XP_CHECK_AVAILABLE);
	write_file(p, "none [integrity] confidentiality\n");
	xp_check_lockdown(p, &c);
	CHECK(c.status == XP_CHECK_RESTRICTED);
	CHECK_STR(c.detail, "none [integrity] confidentiality");
	unlink(p);
	xp_check_lockdown(p, &c);
	CHECK(c.status == XP_CHECK_UNKNOWN);
	xp_check_file_exists(dir, &c);
	CHECK(c.status == XP_CHECK_AVAILABLE);
	xp_check_file_exists("/nonexistent/btf", &c);
	CHECK(c.status == XP_CHECK_UNAVAILABLE);

	/* containers: cgroup markers, pid 1's environment */
	snprintf(p, sizeof(p), "%s/proc", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/1", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/1/cgroup", dir);
	write_file(p, "0::/kubepods/burstable/pod1234/abcd\n");
	xp_detect_container(dir, d);
	CHECK(d->env.has_container);
	CHECK_STR(d->env.container, "kubepods");
	CHECK(d->env.ncontainer_hints == 1);
	memset(d, 0, sizeof(*d));
	write_file(p, "0::/\n");
	snprintf(p, sizeof(p), "%s/proc/1/environ", dir);
	{
		FILE *f = fopen(p, "w");

		fwrite("PATH=/bin\0container=systemd-nspawn\0", 1, 36, f);
		fclose(f);
	}
	xp_detect_container(dir, d);
	CHECK(d->env.has_container);
	CHECK_STR(d->env.container, "systemd-nspawn");
	memset(d, 0, sizeof(*d));
	unlink(p);
	xp_detect_container(dir, d);
	CHECK(!d->env.has_container && d->env.ncontainer_hints == 0);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	CHECK(system(p) == 0);
	free(d);

	CHECK(xp_cuda_h_version("#define CUDA_VERSION 12040\n", v, sizeof(v)) == 0);
	CHECK_STR(v, "12.4");
	CHECK(xp_cuda_h_version("#define CUDA_VERSION 13000\n", v, sizeof(v)) == 0);
	CHECK_STR(v, "13.0");
	CHECK(xp_cuda_h_version("#define CUDA_VERSION x\n", v, sizeof(v)) == -EINVAL);
	CHECK(xp_cuda_h_version("nothing", v, sizeof(v)) == -EINVAL);
}

static void test_names(void)
{
	char b[128];

	CHECK(xp_cxx_base_name("ns::K<int>::f(long) const", b, sizeof(b)) == 1);
	CHECK_STR(b, "f");
	CHECK(xp_cxx_base_name("ns::K::~K()", b, sizeof(b)) == 1);
	CHECK_STR(b, "K");
	CHECK(xp_cxx_base_name("int xp_fx::twice<int>(int)", b, sizeof(b)) == 5);
	CHECK_STR(b, "twice");
	CHECK(xp_cxx_base_name("(anonymous namespace)::anon_fn(int)", b, sizeof(b)) == 7);
	CHECK_STR(b, "anon_fn");
	CHECK(xp_cxx_base_name("plain_c", b, sizeof(b)) == 7);
	CHECK(xp_cxx_base_name("ns::K::operator()(int)", b, sizeof(b)) == 0);
	CHECK(xp_cxx_base_name("{lambda(int)#1}::operator()", b, sizeof(b)) == 0);
	CHECK(xp_cxx_base_name("f<a<b>(", b, sizeof(b)) == 0 || b[0]);


	{
		char *dm = xp_demangle("_ZN14xprobe_fixture15native_operatorEl");

		CHECK_STR(dm, "xprobe_fixture::native_operator(long)");
		free(dm);
		CHECK(xp_demangle("main") == NULL);
		CHECK(xp_demangle("_Zgarbage!") == NULL);
	}
}

/* A synthetic process tree: pid -> ppid. */
struct tree {
	uint32_t pid[16], ppid[16];
	size_t n;
};

static int tree_ppid(uint32_t pid, uint32_t *ppid, void *ctx)
{
	struct tree *t = ctx;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->pid[i] == pid) {
			*ppid = t->ppid[i];
			return 0;
		}
	}
	return -ENOENT;
}

static void test_proctree(void)
{
	/*   1 -> 10 -> 20 -> 30
	 *          \-> 21
	 *   1 -> 11 -> 22
	 *   40 <-> 41 (a cycle, synthetic)
	 *   50 -> 99 (99 vanished) */
	struct tree t = { { 1, 10, 20, 30, 21, 11, 22, 40, 41, 50 },
			  { 0, 1, 10, 20, 10, 1, 11, 41, 40, 99 },
			  10 };
	uint32_t cands[] = { 30, 21, 22, 10, 40, 50, 77 };
	bool keep[7], gone[7];

	CHECK(xp_proctree_filter(10, cands, 7, tree_ppid, &t, keep, gone) == 0);
	CHECK(keep[0] && keep[1] && !keep[2] && keep[3]);
	CHECK(!keep[4] && !keep[5] && !keep[6]);
	CHECK(!gone[0] && !gone[4] && !gone[5] && gone[6]);
	CHECK(xp_proctree_filter(1, cands, 7, tree_ppid, &t, keep, gone) == 0);
	CHECK(keep[0] && keep[1] && keep[2] && keep[3] && !keep[4] && !keep[5]);
	CHECK(xp_proctree_filter(22, cands, 7, tree_ppid, &t, keep, gone) == 0);
	CHECK(!keep[0] && keep[2]);
	CHECK(xp_proctree_filter(5, NULL, 0, tree_ppid, &t, keep, gone) == 0);
}

static int parse(const char *text, struct xp_selector *s)
{
	struct xp_error err = { 0 };
	int rc;

	memset(s, 0, sizeof(*s));
	rc = xp_selector_parse(text, s, &err);
	if (rc)
		fprintf(stderr, "parse %s: %s\n", text, err.message);
	xp_error_clear(&err);
	return rc;
}

static unsigned mask_of(const char *a, const char *b)
{
	struct xp_endpoint_check x = { 0 }, y = { 0 };
	struct xp_selector sa, sb;
	unsigned m;

	CHECK(parse(a, &sa) == 0);
	CHECK(parse(b, &sb) == 0);
	x.sel = &sa;
	y.sel = &sb;
	if (sa.kind == XP_SEL_UPROBE) {
		x.has_probe = y.has_probe = true;
		x.probe.binary_path = y.probe.binary_path = (char *)"/bin/x";
		x.probe.file_offset = 0x1000;
		y.probe.file_offset = strstr(b, "other") ? 0x2000 : 0x1000;
	}
	m = xp_validate_policy_mask(&x, &y);
	xp_selector_free(&sa);
	xp_selector_free(&sb);
	return m;
}

#define P(x) (1u << (x))
#define TEMPORAL (P(XP_POLICY_FIRST_AFTER) | P(XP_POLICY_NEAREST))

static void test_policy(void)
{
	enum xp_policy p;
	enum xp_policy_reason r;

	CHECK(mask_of("syscall:mmap:entry", "syscall:mmap:exit") ==
	      (TEMPORAL | P(XP_POLICY_EXACT)));
	CHECK(mask_of("syscall:mmap:entry", "syscall:munmap:exit") == TEMPORAL);
	CHECK(mask_of("syscall:mmap:exit", "syscall:mmap:entry") == TEMPORAL);
	CHECK(mask_of("python:gc_start", "python:gc_end") == (TEMPORAL | P(XP_POLICY_EXACT)));
	CHECK(mask_of("python:gc_end", "python:gc_start") == TEMPORAL);
	CHECK(mask_of("uprobe:/bin/x:f:entry", "uprobe:/bin/x:f:return") ==
	      (TEMPORAL | P(XP_POLICY_STACK_NESTED)));
	CHECK(mask_of("uprobe:/bin/x:f:entry", "uprobe:/bin/x:other:return") == TEMPORAL);
	CHECK(mask_of("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start") ==
	      (TEMPORAL | P(XP_POLICY_EXACT)));
	CHECK(mask_of("cuda:kernel_end", "cuda:driver_api:cuLaunchKernel:entry") ==
	      (TEMPORAL | P(XP_POLICY_EXACT)));
	CHECK(mask_of("cuda:runtime_api:cudaMemcpy:entry", "cuda:kernel_start") == TEMPORAL);
	CHECK(mask_of("cuda:kernel_start", "cuda:kernel_end") ==
	      (TEMPORAL | P(XP_POLICY_EXACT) | P(XP_POLICY_STREAM_ORDER)));
	CHECK(mask_of("cuda:memcpy_start", "cuda:kernel_start") ==
	      (TEMPORAL | P(XP_POLICY_STREAM_ORDER)));
	CHECK(mask_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^a$") ==
	      (TEMPORAL | P(XP_POLICY_EXACT)));
	CHECK(mask_of("cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^b$") ==
	      TEMPORAL);
	CHECK(mask_of("cuda:runtime_api:cudaMalloc:entry", "cuda:runtime_api:cudaMalloc:exit") ==
	      (TEMPORAL | P(XP_POLICY_EXACT)));

	xp_validate_recommend(TEMPORAL | P(XP_POLICY_EXACT) | P(XP_POLICY_STREAM_ORDER), &p, &r);
	CHECK(p == XP_POLICY_EXACT && r == XP_REASON_DETERMINISTIC_KEY);
	xp_validate_recommend(TEMPORAL | P(XP_POLICY_STACK_NESTED), &p, &r);
	CHECK(p == XP_POLICY_STACK_NESTED && r == XP_REASON_HOST_CALL_FRAME);
	xp_validate_recommend(TEMPORAL | P(XP_POLICY_STREAM_ORDER), &p, &r);
	CHECK(p == XP_POLICY_STREAM_ORDER && r == XP_REASON_STREAM_ORDER);
	xp_validate_recommend(TEMPORAL, &p, &r);
	CHECK(p == XP_POLICY_FIRST_AFTER && r == XP_REASON_TEMPORAL);
	CHECK_STR(xp_policy_reason_name(XP_REASON_STREAM_ORDER), "cuda_stream_order");
	CHECK_STR(xp_checks_activation_name(XP_AGENT_STARTUP_REQUIRED), "startup_required");
}

int main(void)
{
	test_maps();
	test_status_cmdline();
	test_stat();
	test_ldcache();
	test_majors();
	test_doctor_helpers();
	test_names();
	test_proctree();
	test_policy();
	TEST_MAIN_END();
}
