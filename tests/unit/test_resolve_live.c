/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_resolve_live.c - uprobe and USDT resolution against live
 * fixture processes (root): every runtime address is compared with the
 * one the fixture printed for itself; every error code of the resolver
 * is provoked for real.
 */
#include <errno.h>
#include <sys/stat.h>

#include "../../common/parse.h"
#include "process/procfs.h"
#include "resolve/resolve.h"
#include "error_text.h"
#include "target_spawn.h"
#include "testlib.h"
#include "process/namespaces.h"

static void mk_uprobe(struct xp_selector *s, const char *text, const char *bin,
		      enum xp_uprobe_target how, const char *sym, uint64_t off, bool ret)
{
	memset(s, 0, sizeof(*s));
	s->text = (char *)text;
	s->kind = XP_SEL_UPROBE;
	s->is_end = ret;
	s->binary = (char *)bin;
	s->uprobe_target = how;
	s->symbol = (char *)sym;
	s->offset = off;
	s->syscall_nr = -1;
}

static int resolve(const struct fx_proc *p, const char *bin, enum xp_uprobe_target how,
		   const char *sym, uint64_t off, struct xp_resolved_probe *out,
		   struct xp_error *err)
{
	struct xp_selector s;
	struct xp_target t;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = xp_target_identify((uint32_t)p->pid, &t, err);
	if (rc)
		return rc;
	mk_uprobe(&s, "test-selector", bin, how, sym, off, false);
	return xp_resolve_uprobe(&t, &s, out, err);
}

static void test_pie_and_nopie(const char *fixture, enum xp_object_kind kind)
{
	char *argv[] = { (char *)fixture, NULL }, bin[PATH_MAX];
	struct xp_resolved_probe r;
	struct xp_error err;
	struct fx_proc p;
	uint64_t off;
	int rc;

	fx_path(bin, sizeof(bin), fixture);
	CHECK(fx_start(&p, argv) == 0);

	/* exported function */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "fx_add", 0, &r, &err);
	CHECK(rc == 0);
	if (rc == 0) {
		CHECK_EQ_U64(r.runtime_address, fx_addr(&p, "fx_add"));
		CHECK(r.object_kind == kind);
		CHECK_STR(r.symbol, "fx_add");
		CHECK(r.symbol_demangled == NULL);
		CHECK(r.has_symbol && r.symbol_size == 18);
		CHECK(r.build_id && strlen(r.build_id) == 40);
		{
			char *real = realpath(bin, NULL);

			CHECK(real && strcmp(r.binary_path, real) == 0);
			free(real);
		}
		CHECK_EQ_U64(r.runtime_address - r.mapping.start_address + r.mapping.file_offset,
			     r.file_offset);
		if (kind == XP_OBJ_EXECUTABLE)
			CHECK_EQ_U64(r.runtime_address, r.symbol_virtual_address);
		off = r.file_offset;
		xp_resolved_probe_free(&r);

		/* the same function by +0x file offset */
		rc = resolve(&p, bin, XP_UPROBE_OFFSET, NULL, off, &r, &err);
		CHECK(rc == 0);
		if (!rc) {
			CHECK_EQ_U64(r.runtime_address, fx_addr(&p, "fx_add"));
			CHECK(r.symbol == NULL && !r.has_symbol);
			xp_resolved_probe_free(&r);
		}
	}
	/* a local (static) function is in .symtab only */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "fx_local_helper", 0, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK_EQ_U64(r.runtime_address, fx_addr(&p, "fx_local_helper"));
		xp_resolved_probe_free(&r);
	}
	/* two local functions of one name */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "target_dup_helper", 0, &r, &err);
	CHECK(rc == -XPROBE_E_AMBIGUOUS_TARGET);
	CHECK(xp_error_detail_get(&err, "candidate_count") &&
	      strcmp(xp_error_detail_get(&err, "candidate_count"), "2") == 0);
	CHECK(xpt_detail_contains(&err, "candidates", "\"symbol\":\"target_dup_helper\""));
	CHECK(xpt_hint_contains(&err, "+0x"));
	xp_error_clear(&err);
	/* missing, with close matches (typo, other case) */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "fx_ad", 0, &r, &err);
	CHECK(rc == -XPROBE_E_SYMBOL_NOT_FOUND);
	CHECK(xpt_detail_contains(&err, "close_matches", "\"fx_add\""));
	CHECK(xpt_hint_contains(&err, ":fx_add:entry"));
	xp_error_clear(&err);
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "fx_mixed_case", 0, &r, &err);
	CHECK(rc == -XPROBE_E_SYMBOL_NOT_FOUND);
	CHECK(xpt_detail_contains(&err, "close_matches", "fx_Mixed_Case"));
	xp_error_clear(&err);
	/* a data object is not a function */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "fx_sink", 0, &r, &err);
	CHECK(rc == -XPROBE_E_SYMBOL_NOT_FOUND);
	xp_error_clear(&err);
	/* offset 0 is the ELF header: not executable */
	rc = resolve(&p, bin, XP_UPROBE_OFFSET, NULL, 0, &r, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(err.message, "executable segment") != NULL);
	xp_error_clear(&err);
	rc = resolve(&p, bin, XP_UPROBE_OFFSET, NULL, 1ull << 40, &r, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	xp_error_clear(&err);
	fx_stop(&p);
}

static void test_shlib_and_paths(void)
{
	char lib[PATH_MAX], bin[PATH_MAX], link[64];
	char *argv[] = { "target_funcs", "--dlopen", lib, NULL };
	struct xp_resolved_probe r;
	struct xp_error err;
	struct fx_proc p;
	const char *names[] = { "fx_lib_exported", "fx_lib_local", "fx_lib_hidden" };
	size_t i;
	int rc;

	fx_path(lib, sizeof(lib), "libtarget_shlib.so");
	fx_path(bin, sizeof(bin), "target_funcs");
	CHECK(fx_start(&p, argv) == 0);
	for (i = 0; i < 3; i++) {
		rc = resolve(&p, lib, XP_UPROBE_SYMBOL, names[i], 0, &r, &err);
		CHECK(rc == 0);
		if (!rc) {
			CHECK_EQ_U64(r.runtime_address, fx_addr(&p, names[i]));
			CHECK(r.object_kind == XP_OBJ_SHARED_LIBRARY);
			xp_resolved_probe_free(&r);
		}
	}
	/* a symlink names the same mapped file; binary_path is canonical */
	snprintf(link, sizeof(link), "/tmp/xp-test-link-%d.so", (int)getpid());
	unlink(link);
	CHECK(symlink(lib, link) == 0);
	rc = resolve(&p, link, XP_UPROBE_SYMBOL, "fx_lib_exported", 0, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK(strcmp(r.binary_path, link) != 0 &&
		      strstr(r.binary_path, "libtarget_shlib.so"));
		CHECK_EQ_U64(r.runtime_address, fx_addr(&p, "fx_lib_exported"));
		xp_resolved_probe_free(&r);
	}
	unlink(link);
	/* not mapped: an existing file, a missing one, a relative path */
	rc = resolve(&p, "/usr/bin/python3.11", XP_UPROBE_SYMBOL, "main", 0, &r, &err);
	CHECK(rc == -XPROBE_E_BINARY_NOT_MAPPED);
	CHECK(xpt_detail_contains(&err, "mapped_objects", "libtarget_shlib.so"));
	CHECK(xp_error_detail_get(&err, "mapped_objects_total") != NULL);
	xp_error_clear(&err);
	rc = resolve(&p, "/nonexistent/libtarget_shlib.so", XP_UPROBE_SYMBOL, "x", 0, &r, &err);
	CHECK(rc == -XPROBE_E_BINARY_NOT_MAPPED);
	CHECK(strstr(err.message, "does not exist") != NULL);
	CHECK(xpt_hint_contains(&err, "a mapped object has this name"));
	xp_error_clear(&err);
	rc = resolve(&p, "libtarget_shlib.so", XP_UPROBE_SYMBOL, "x", 0, &r, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(xpt_hint_contains(&err, "libtarget_shlib.so"));
	xp_error_clear(&err);
	/* binary_path resolves through binary_path too */
	{
		struct xp_target t;
		char *bp, *ap;

		CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);
		CHECK(xp_resolve_binary(&t, lib, &bp, &ap, &err) == 0);
		CHECK(bp && ap && strstr(bp, "libtarget_shlib.so"));
		free(bp);
		free(ap);
	}
	fx_stop(&p);
}

static void test_cxx(void)
{
	char *argv[] = { "target_cxx", NULL }, bin[PATH_MAX];
	const char *sigs[] = {
		"xp_fx::over(int)",
		"xp_fx::over(long)",
		"xp_fx::over(double)",
		"xp_fx::over(char const*, unsigned int)",
		"xp_fx::inner::Klass::smethod(int)",
		"int xp_fx::twice<int>(int)",
		"long xp_fx::twice<long>(long)",
		"(anonymous namespace)::anon_fn(int)",
	};
	struct xp_resolved_probe r;
	struct xp_error err;
	struct fx_proc p;
	size_t i;
	int rc;

	fx_path(bin, sizeof(bin), "target_cxx");
	CHECK(fx_start(&p, argv) == 0);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		rc = resolve(&p, bin, XP_UPROBE_SIGNATURE, sigs[i], 0, &r, &err);
		CHECK(rc == 0);
		if (rc) {
			fprintf(stderr, "  %s: %s\n", sigs[i], err.message);
			xp_error_clear(&err);
			continue;
		}
		CHECK_EQ_U64(r.runtime_address, fx_addr(&p, sigs[i]));
		CHECK(r.symbol && strncmp(r.symbol, "_Z", 2) == 0);
		CHECK_STR(r.symbol_demangled, sigs[i]);
		xp_resolved_probe_free(&r);
	}
	/* the mangled name itself resolves by the raw pass */
	rc = resolve(&p, bin, XP_UPROBE_SYMBOL, "_ZN5xp_fx4overEl", 0, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK_STR(r.symbol_demangled, "xp_fx::over(long)");
		xp_resolved_probe_free(&r);
	}
	/* a wrong overload: the real ones are the close matches */
	rc = resolve(&p, bin, XP_UPROBE_SIGNATURE, "xp_fx::over(short)", 0, &r, &err);
	CHECK(rc == -XPROBE_E_SYMBOL_NOT_FOUND);
	CHECK(xpt_detail_contains(&err, "close_matches", "xp_fx::over(int)"));
	CHECK(xpt_hint_contains(&err, "symbol=xp_fx::over("));
	xp_error_clear(&err);
	fx_stop(&p);
}

static void test_python_gc(void)
{
	char lib[PATH_MAX];
	char *pygc[] = { "target_funcs", "--dlopen", lib, NULL };
	char *plain[] = { "target_funcs", NULL };
	char *half[] = { "target_pygc_half", NULL };
	char *py[] = { "/usr/bin/python3.11", "-c",
		       "import sys; print('ready', flush=True); sys.stdin.read()", NULL };
	struct xp_usdt_marker s, e;
	struct xp_target t;
	struct xp_error err = { 0 };
	struct fx_proc p;
	int rc;

	/* a library that is not CPython but carries the markers */
	fx_path(lib, sizeof(lib), "libtarget_pygc.so");
	CHECK(fx_start(&p, pygc) == 0);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);
	rc = xp_resolve_python_gc(&t, &s, &e, &err);
	CHECK(rc == 0);
	if (!rc) {
		uint64_t fn = fx_addr(&p, "fx_fake_gc");

		CHECK(strstr(s.binary_path, "libtarget_pygc.so") != NULL);
		CHECK_STR(s.provider, "python");
		CHECK_STR(s.name, "gc__start");
		CHECK_STR(e.name, "gc__done");
		CHECK(s.runtime_address > fn && s.runtime_address < fn + 64);
		CHECK(e.runtime_address > s.runtime_address && e.runtime_address < fn + 64);
		CHECK_EQ_U64(s.semaphore_runtime_address,
			     fx_addr(&p, "python_gc__start_semaphore"));
		CHECK_EQ_U64(e.semaphore_runtime_address, fx_addr(&p, "python_gc__done_semaphore"));
		CHECK(s.semaphore_offset != 0 && s.locations == 1);
		CHECK(s.object_kind == XP_OBJ_SHARED_LIBRARY);
		xp_usdt_marker_free(&s);
		xp_usdt_marker_free(&e);
	}
	fx_stop(&p);

	/* Debian's CPython: markers in the executable */
	CHECK(fx_start(&p, py) == 0);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);
	rc = xp_resolve_python_gc(&t, &s, &e, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK_STR(s.binary_path, "/usr/bin/python3.11");
		CHECK(s.object_kind == XP_OBJ_EXECUTABLE);
		/* ET_EXEC: runtime == link-time address */
		CHECK_EQ_U64(s.runtime_address, s.pc);
		CHECK(s.semaphore_address && s.semaphore_runtime_address == s.semaphore_address);
		xp_usdt_marker_free(&s);
		xp_usdt_marker_free(&e);
	} else {
		fprintf(stderr, "  python3.11: %s\n", err.message);
		xp_error_clear(&err);
	}
	fx_stop(&p);

	/* no markers at all */
	CHECK(fx_start(&p, plain) == 0);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);
	rc = xp_resolve_python_gc(&t, &s, &e, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(xpt_detail_contains(&err, "searched_objects", "target_funcs"));
	CHECK(strstr(err.message, "no mapped object") != NULL);
	xp_error_clear(&err);
	fx_stop(&p);

	/* only gc__start */
	CHECK(fx_start(&p, half) == 0);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);
	rc = xp_resolve_python_gc(&t, &s, &e, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(xpt_detail_contains(&err, "partial_markers", "\"missing\":\"gc__done\""));
	xp_error_clear(&err);
	fx_stop(&p);
}

static void test_identity_errors(void)
{
	char *argv[] = { "target_funcs", NULL }, bin[PATH_MAX];
	struct xp_resolved_probe r;
	struct xp_usdt_marker s, e;
	struct xp_target_ns ns;
	struct xp_selector sel;
	struct xp_target t, forged;
	struct xp_error err = { 0 };
	struct fx_proc p;
	int st;

	fx_path(bin, sizeof(bin), "target_funcs");
	mk_uprobe(&sel, "x", bin, XP_UPROBE_SYMBOL, "fx_add", 0, false);
	CHECK(fx_start(&p, argv) == 0);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == 0);

	/* a recorded identity whose start time differs: reuse */
	forged = t;
	forged.start_time += 1;
	CHECK(xp_resolve_uprobe(&forged, &sel, &r, &err) == -XPROBE_E_TARGET_REUSED);
	CHECK(xp_error_detail_get(&err, "observed_process_start_time") != NULL);
	xp_error_clear(&err);
	CHECK(xp_resolve_python_gc(&forged, &s, &e, &err) == -XPROBE_E_TARGET_REUSED);
	xp_error_clear(&err);
	CHECK(xp_target_namespaces(&forged, &ns, &err) == -XPROBE_E_TARGET_REUSED);
	xp_error_clear(&err);

	/* the target exits between identify and resolve (signal) */
	kill(p.pid, SIGUSR1);
	waitpid(p.pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(xp_resolve_uprobe(&t, &sel, &r, &err) == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	CHECK(xp_resolve_python_gc(&t, &s, &e, &err) == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	CHECK(xp_target_namespaces(&t, &ns, &err) == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
	CHECK(xp_target_identify((uint32_t)p.pid, &t, &err) == -XPROBE_E_TARGET_NOT_FOUND);
	xp_error_clear(&err);
	close(p.stdin_fd);
	fclose(p.out);
	p.pid = 0;
}

/*
 * Real PID reuse: record a process, end it, and make the kernel hand its
 * PID to a new process by writing ns_last_pid (root).  Other processes
 * on the machine may take the PID first, so try a few times.
 */
static void test_pid_reuse(void)
{
	struct xp_error err = { 0 };
	int attempt, reused = 0;

	for (attempt = 0; attempt < 20 && !reused; attempt++) {
		struct xp_target old;
		pid_t a, b;
		int st, rc;
		FILE *f;

		a = fork();
		if (a == 0) {
			pause();
			_exit(0);
		}
		CHECK(xp_target_identify((uint32_t)a, &old, &err) == 0);
		kill(a, SIGKILL);
		waitpid(a, &st, 0);
		usleep(20000); /* the next start time must differ in ticks */
		f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f) {
			CHECK(!"cannot write ns_last_pid (not root?)");
			return;
		}
		fprintf(f, "%d", (int)a - 1);
		fclose(f);
		b = fork();
		if (b == 0) {
			pause();
			_exit(0);
		}
		if (b == a) {
			rc = xp_target_verify(&old, &err);
			CHECK(rc == -XPROBE_E_TARGET_REUSED);
			CHECK(strstr(err.message, "reused") != NULL);
			xp_error_clear(&err);
			reused = 1;
		}
		kill(b, SIGKILL);
		waitpid(b, &st, 0);
	}
	CHECK(reused);
}

static void test_namespaces(void)
{
	char *argv[] = { "/usr/bin/unshare",
			 "--pid",
			 "--fork",
			 "--mount-proc",
			 "--kill-child",
			 "/bin/sh",
			 "-c",
			 "echo ready; exec cat",
			 NULL };
	struct xp_target_ns ns;
	struct xp_target t;
	struct xp_error err = { 0 };
	struct fx_proc p;
	char path[64], *text;
	uint32_t child = 0;

	/* ourselves */
	CHECK(xp_target_identify((uint32_t)getpid(), &t, &err) == 0);
	CHECK(xp_target_namespaces(&t, &ns, &err) == 0);
	CHECK(ns.same_pidns && ns.same_mntns && ns.ns_pid == (uint32_t)getpid());
	CHECK(ns.pidns_ino != 0);

	/* a shell in its own PID (and mount) namespace: its NSpid ends in 1 */
	CHECK(fx_start(&p, argv) == 0);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)p.pid, (int)p.pid);
	if (xp_read_file(path, 4096, &text, NULL) == 0) {
		uint64_t v;
		char *sp = strchr(text, ' ');

		if (sp)
			*sp = '\0';
		if (xpc_parse_u64(text, 1, UINT32_MAX, &v) == 0)
			child = (uint32_t)v;
		free(text);
	}
	CHECK(child != 0);
	if (child) {
		CHECK(xp_target_identify(child, &t, &err) == 0);
		CHECK(xp_target_namespaces(&t, &ns, &err) == 0);
		CHECK(!ns.same_pidns);
		CHECK(!ns.same_mntns);
		CHECK_EQ_U64(ns.ns_pid, 1);
	}
	fx_stop(&p);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_resolve_live must run as root\n");
		return 1;
	}
	test_pie_and_nopie("target_funcs", XP_OBJ_PIE);
	test_pie_and_nopie("target_funcs_nopie", XP_OBJ_EXECUTABLE);
	test_shlib_and_paths();
	test_cxx();
	test_python_gc();
	test_identity_errors();
	test_pid_reuse();
	test_namespaces();
	TEST_MAIN_END();
}
