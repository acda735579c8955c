/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_profile.c - the device-profile engine through the public API,
 * on the `sim` backend: backend choice (explicit only, cupti unavailable),
 * mutual exclusion of continuous and inspect device profiling in both
 * directions, rollback when sim fails to arm core k of N, SESSION
 * harvest -> stash -> serialize with several ids (and drop, and a failed
 * harvest), MODEL profiles per file name, MODEL mode's per-execution files
 * with a warm-up, on-fail keeping only the failing execution's files,
 * continuous save of the newest execution(s), and that every file made with
 * sim says so.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "../../lib/device/backend.h"
#include "../../lib/device/cupti.h"
#include "../../lib/inspect/controller.h"
#include "../../lib/profile/engine.h"
#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static char scratch[PATH_MAX];

static struct xprobe_inspect_config *cfg_sim(const char *base, uint32_t cores, int mode)
{
	struct xprobe_inspect_config *c = NULL;
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = cores, .sim_records_per_exec = 2);

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_instance_id(c, "prof");
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	xprobe_inspect_config_set_device_profile_mode(c, mode);
	return c;
}

static uint64_t run_exec(const char *model, int status)
{
	uint64_t id = 0;

	CHECK(xprobe_execution_begin(model, &id) == 0);
	CHECK(xprobe_execution_end(id, status) == 0);
	return id;
}

/* Open @dir/@name and check it is a simulated device profile. */
static struct xprobe_xtf *open_profile(const char *dir, const char *name,
				       struct xprobe_xtf_info *in)
{
	char path[PATH_MAX], err[512];
	struct xprobe_xtf *x = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (xprobe_xtf_open_file(path, &x, err, sizeof(err))) {
		fprintf(stderr, "open %s: %s\n", path, err);
		CHECK(!"profile opens");
		return NULL;
	}
	in->sz = sizeof(*in);
	xprobe_xtf_get_info(x, in);
	CHECK(in->kind == XPROBE_XTF_DEVICE_PROFILE);
	CHECK(in->simulated && (in->flags & XPROBE_XTF_F_SIMULATED));
	CHECK_STR(in->backend, "sim");
	return x;
}

static void test_backend_choice(void)
{
	struct xprobe_inspect_config *c = cfg_sim("choice", 2, XPROBE_DEVICE_PROFILE_SESSION);

	/* no backend: never a silent fallback to sim */
	xprobe_inspect_config_set_backend(c, NULL, NULL);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_BACKEND_UNAVAILABLE);
	CHECK(strstr(xprobe_last_error(), "'sim'") != NULL);
	/* cupti: compiled out off 64-bit Linux; built, it is loaded when
	 * the engine opens, and this process maps no CUDA and its loader finds
	 * no usable CUPTI: CUPTI_NOT_AVAILABLE, with the backend's reason
	 * (test_lib_cupti.c drives it against its test double) */
	xprobe_inspect_config_set_backend(c, "cupti", NULL);
	{
		int rc = xprobe_inspect_begin_with_options(c);

		if (!xpl_cupti_built()) {
			CHECK(rc == -XPROBE_E_BACKEND_UNAVAILABLE);
		} else if (rc == 0) {
			/* a machine whose CUPTI loads and subscribes (a GPU's
			 * driver is there): a real cupti session */
			CHECK(xprobe_inspect_is_active() == 1);
			CHECK(xprobe_inspect_close() == 0);
		} else {
			/* no libcupti in the loader's search, or no driver to
			 * subscribe with (this machine's CUPTI 13 without a GPU) */
			CHECK(rc == -XPROBE_E_CUPTI_NOT_AVAILABLE);
		}
		CHECK(rc == 0 || strstr(xprobe_last_error(), "cupti") != NULL);
	}
	CHECK(xprobe_inspect_is_active() == 0);
	/* profile calls without an engine */
	{
		uint64_t id;

		CHECK(xprobe_profile_session_start(0) == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_session_stop(0, &id) == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_session_serialize(0, 1, NULL) == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_session_drop(0, 1) == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_start("m", "f.xtf") == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_stop("f.xtf") == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_device_count() == -XPROBE_E_NOT_ACTIVE);
		CHECK(xprobe_profile_session_stop(0, NULL) == -XPROBE_E_INVALID_ARGUMENT);
	}
	xprobe_inspect_config_free(c);
}

static void test_mutual_exclusion(void)
{
	struct xprobe_inspect_config *c = cfg_sim("excl", 2, XPROBE_DEVICE_PROFILE_SESSION);
	XPROBE_OPTS(xprobe_continuous_opts, co, .backend = "sim", .output_dir = "excl_cont");

	/* inspect device profiling first, then continuous: refused */
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_profile_continuous_start(&co) == -XPROBE_E_CONTINUOUS_CONFLICT);
	CHECK(strstr(xprobe_last_error(), "inspect device profiling") != NULL);
	CHECK(xprobe_inspect_close() == 0);
	/* continuous first, then inspect device profiling: refused */
	CHECK(xprobe_profile_continuous_start(&co) == 0);
	CHECK(xprobe_profile_continuous_start(&co) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_CONTINUOUS_CONFLICT);
	CHECK(strstr(xprobe_last_error(), "continuous profiling is running") != NULL);
	/* an inspect session without device profiling is fine alongside */
	xprobe_inspect_config_set_device_profile_mode(c, XPROBE_DEVICE_PROFILE_DISABLED);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_close() == 0);
	CHECK(xprobe_profile_continuous_stop() == 0);
	CHECK(xprobe_profile_continuous_stop() == -XPROBE_E_NOT_ACTIVE);
	/* continuous options checks */
	CHECK(xprobe_profile_continuous_start(NULL) == -XPROBE_E_INVALID_ARGUMENT);
	{
		XPROBE_OPTS(xprobe_continuous_opts, o, .output_dir = "x");
		CHECK(xprobe_profile_continuous_start(&o) == -XPROBE_E_INVALID_ARGUMENT);
	}
	{
		XPROBE_OPTS(xprobe_continuous_opts, o, .backend = "cupti");
		int rc = xprobe_profile_continuous_start(&o);

		/* as in test_backend_choice: compiled out, not loadable here, or
		 * a GPU machine's real CUPTI */
		if (rc == 0)
			CHECK(xpl_cupti_built() && xprobe_profile_continuous_stop() == 0);
		else
			CHECK(rc == (xpl_cupti_built() ? -XPROBE_E_CUPTI_NOT_AVAILABLE :
							 -XPROBE_E_BACKEND_UNAVAILABLE));
	}
	{
		XPROBE_OPTS(xprobe_continuous_opts, o, .backend = "quantum");
		CHECK(xprobe_profile_continuous_start(&o) == -XPROBE_E_UNKNOWN_NAME);
	}
	{
		XPROBE_OPTS(xprobe_continuous_opts, o, .backend = "sim", .capacity = 1025);
		CHECK(xprobe_profile_continuous_start(&o) == -XPROBE_E_INVALID_ARGUMENT);
	}
	{
		XPROBE_OPTS(xprobe_continuous_opts, o, .backend = "sim", .output_dir = "/dev/null");
		CHECK(xprobe_profile_continuous_start(&o) == -XPROBE_E_OUTPUT_NOT_DIRECTORY);
	}
	CHECK(xprobe_profile_continuous_save(NULL) == -XPROBE_E_NOT_ACTIVE);
	CHECK(strstr(xprobe_last_error(), "xprobe_profile_continuous_start") != NULL);
	xprobe_inspect_config_free(c);
}

static void test_rollback(void)
{
	struct xprobe_inspect_config *c = cfg_sim("rollback", 4, XPROBE_DEVICE_PROFILE_SESSION);
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 4);
	struct stat st;
	char base[PATH_MAX];

	bo.sim_fail_arm[0] = 1u << 2; /* core 2 of 4 fails to arm */
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_DEVICE_FAILED);
	CHECK(strstr(xprobe_last_error(), "device 2 of 4") != NULL);
	CHECK(xprobe_inspect_is_active() == 0);
	CHECK(xpl_controller_engine() == NULL);
	/* nothing is left: the empty session tree was removed */
	snprintf(base, sizeof(base), "rollback/prof-%d", (int)getpid());
	CHECK(stat(base, &st) != 0);
	/* excluding core 2 makes it work; cores 0, 1 and 3 are armed */
	xprobe_inspect_config_set_capture_enabled_for_device(c, 2, false);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	{
		struct xpl_engine *e = xpl_controller_engine();
		struct xpl_sim_stats ss;

		CHECK(e != NULL);
		if (e) {
			xpl_sim_stats(xpl_engine_backend(e), 0, &ss);
			CHECK(ss.armed && ss.starts == 1);
			xpl_sim_stats(xpl_engine_backend(e), 2, &ss);
			CHECK(!ss.armed && ss.starts == 0);
			xpl_sim_stats(xpl_engine_backend(e), 3, &ss);
			CHECK(ss.armed);
		}
	}
	CHECK(xprobe_profile_device_count() == 4);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);

	/* the rollback itself: drive the engine directly and look at the sim */
	{
		struct xpl_engine *e = NULL;
		XPROBE_OPTS(xprobe_backend_opts, o, .sim_cores = 4);
		struct xpl_engine_params p = { .ops = &xpl_sim_backend, .opts = &o };
		struct xpl_sim_stats ss;
		uint64_t id;

		o.sim_fail_arm[0] = 1u << 3;
		CHECK(xpl_engine_create(&p, &e) == 0);
		CHECK(xpl_engine_session_start(e, 0) == 0);
		CHECK(xpl_engine_session_start(e, 1) == 0);
		CHECK(xpl_engine_session_start(e, 3) == -XPROBE_E_DEVICE_FAILED);
		/* what begin does on that failure: stop + drop every armed one */
		CHECK(xpl_engine_session_stop(e, 1, &id) == 0);
		CHECK(xpl_engine_session_drop(e, 1, id) == 0);
		CHECK(xpl_engine_session_stop(e, 0, &id) == 0);
		CHECK(xpl_engine_session_drop(e, 0, id) == 0);
		for (uint32_t d = 0; d < 2; d++) {
			xpl_sim_stats(xpl_engine_backend(e), d, &ss);
			CHECK(!ss.armed && ss.starts == 1 && ss.stops == 1);
		}
		xpl_sim_stats(xpl_engine_backend(e), 3, &ss);
		CHECK(ss.arm_failures == 1 && ss.starts == 0);
		xpl_engine_destroy(e);
	}
}

static void test_session_stash(void)
{
	struct xprobe_inspect_config *c = cfg_sim("stash", 3, XPROBE_DEVICE_PROFILE_SESSION);
	struct xprobe_xtf_info in;
	struct xprobe_xtf *x;
	char dir[PATH_MAX], path[PATH_MAX];
	uint64_t id1 = 0, id2 = 0, id3 = 0;

	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	CHECK(xprobe_profile_session_start(0) == -XPROBE_E_ALREADY_ACTIVE); /* begin armed it */
	CHECK(xprobe_profile_session_start(3) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(xprobe_last_error(), "device 3 does not exist") != NULL);
	run_exec("alpha", 0); /* 2 records per core */
	CHECK(xprobe_profile_session_stop(0, &id1) == 0); /* stash #1 of core 0 */
	CHECK(xprobe_profile_session_stop(0, &id1) == -XPROBE_E_NOT_ACTIVE);
	CHECK(xprobe_profile_session_start(0) == 0);
	run_exec("alpha", 0);
	run_exec("beta", 0);
	CHECK(xprobe_profile_session_stop(0, &id2) == 0); /* stash #2: two executions */
	CHECK(xprobe_profile_session_start(0) == 0);
	CHECK(xprobe_profile_session_stop(0, &id3) == 0); /* stash #3: empty */
	CHECK(id1 == 1 && id2 == 2 && id3 == 3);

	/* serialize out of order, to default and explicit paths */
	CHECK(xprobe_profile_session_serialize(0, id2, NULL) == 0);
	CHECK(xprobe_profile_session_serialize(0, id2, NULL) == -XPROBE_E_NO_SUCH_SESSION);
	snprintf(path, sizeof(path), "%s/mine.xtf", scratch);
	CHECK(xprobe_profile_session_serialize(0, id1, path) == 0);
	CHECK(xprobe_profile_session_serialize(0, 99, NULL) == -XPROBE_E_NO_SUCH_SESSION);
	CHECK(xprobe_profile_session_serialize(0, id1, "") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_profile_session_drop(0, id3) == 0);
	CHECK(xprobe_profile_session_drop(0, id3) == -XPROBE_E_NO_SUCH_SESSION);
	CHECK(xprobe_profile_session_drop(7, 1) == -XPROBE_E_INVALID_ARGUMENT);

	x = open_profile(dir, "profile_dev_0_session_2.xtf", &in);
	if (x) {
		CHECK_STR(in.key_space, "session");
		CHECK(in.device == 0 && in.session_id == 2 && in.complete);
		CHECK_EQ_U64(in.records, 4); /* alpha + beta, 2 each */
	}
	xprobe_xtf_close(x);
	x = open_profile(scratch, "mine.xtf", &in);
	if (x)
		CHECK(in.session_id == 1 && in.records == 2);
	xprobe_xtf_close(x);
	CHECK(!lt_exists(dir, "profile_dev_0_session_3.xtf"));

	/* core 1 keeps its session capture: the stop writes it, with a fresh
	 * id, and a stash left unserialized is written rather than lost */
	CHECK(xprobe_profile_session_stop(2, &id1) == 0);
	CHECK(xprobe_inspect_stop() == 0);
	CHECK(lt_exists(dir, "profile_dev_1_session_1.xtf"));
	CHECK(lt_exists(dir, "profile_dev_2_session_1.xtf")); /* the stash */
	CHECK(!lt_exists(dir, "profile_dev_0_session_4.xtf")); /* core 0 was left stopped */
	x = open_profile(dir, "profile_dev_1_session_1.xtf", &in);
	if (x)
		CHECK_EQ_U64(in.records, 6); /* alpha, alpha, beta */
	xprobe_xtf_close(x);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
}

static void test_failed_harvest(void)
{
	struct xprobe_inspect_config *c = cfg_sim("harvest", 2, XPROBE_DEVICE_PROFILE_SESSION);
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 1);
	struct xprobe_xtf_info in;
	struct xprobe_xtf *x;
	char dir[PATH_MAX];
	uint64_t id = 0;

	bo.sim_fail_harvest[0] = 1u << 1;
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	run_exec("m", 0);
	CHECK(xprobe_profile_session_stop(1, &id) == -XPROBE_E_DEVICE_FAILED);
	CHECK(id == 1);
	CHECK(xprobe_profile_session_serialize(1, id, NULL) == 0);
	x = open_profile(dir, "profile_dev_1_session_1.xtf", &in);
	if (x) {
		CHECK(in.harvest_error && strstr(in.harvest_error, "device 1"));
		CHECK_EQ_U64(in.records, 0);
	}
	xprobe_xtf_close(x);
	CHECK(xprobe_inspect_close() == 0);
	x = open_profile(dir, "profile_dev_0_session_1.xtf", &in);
	if (x)
		CHECK(in.harvest_error == NULL && in.records == 1);
	xprobe_xtf_close(x);
	xprobe_inspect_config_free(c);
}

static void test_model_profiles(void)
{
	struct xprobe_inspect_config *c = cfg_sim("model", 2, XPROBE_DEVICE_PROFILE_MODEL);
	struct xprobe_xtf_info in;
	struct xprobe_xtf *x;
	char dir[PATH_MAX], name[128];
	uint64_t a1, b1, a3, a4;

	xprobe_inspect_config_set_warmup(c, 1);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	/* per file name: a.xtf follows model A, b.xtf model B */
	CHECK(xprobe_profile_start("A", "a.xtf") == 0);
	CHECK(xprobe_profile_start("B", "b.xtf") == 0);
	CHECK(xprobe_profile_start("A", "a.xtf") == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(xprobe_profile_start("A", "../a.xtf") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_profile_start("A", "..") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_profile_start(NULL, "x.xtf") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_profile_start("", "x.xtf") == -XPROBE_E_INVALID_ARGUMENT);
	a1 = run_exec("A", 0); /* warm-up of A: no per-execution file */
	b1 = run_exec("B", 0); /* warm-up of B */
	a3 = run_exec("A", 0); /* profiled: A_exec_<a3>.xtf */
	a4 = run_exec("A", 0); /* A_exec_<a4>.xtf */
	CHECK(xprobe_profile_stop("a.xtf") == 0);
	CHECK(xprobe_profile_stop("a.xtf") == -XPROBE_E_NO_SUCH_SESSION);
	CHECK(xprobe_profile_stop("zzz.xtf") == -XPROBE_E_NO_SUCH_SESSION);
	CHECK(xprobe_profile_stop(NULL) == -XPROBE_E_INVALID_ARGUMENT);
	run_exec("B", 0); /* B_exec_<n>.xtf, and into b.xtf */

	x = open_profile(dir, "a.xtf", &in);
	if (x) {
		CHECK_STR(in.key_space, "model");
		CHECK_STR(in.model, "A");
		CHECK_STR(in.filename, "a.xtf");
		CHECK(in.complete);
		CHECK_EQ_U64(in.records, 3 * 2 * 2); /* 3 executions of A, 2 cores, 2 records */
		CHECK(in.streams == 2);
	}
	xprobe_xtf_close(x);
	snprintf(name, sizeof(name), "A_exec_%llu.xtf", (unsigned long long)a1);
	CHECK(!lt_exists(dir, name)); /* warm-up */
	snprintf(name, sizeof(name), "B_exec_%llu.xtf", (unsigned long long)b1);
	CHECK(!lt_exists(dir, name));
	snprintf(name, sizeof(name), "A_exec_%llu.xtf", (unsigned long long)a4);
	CHECK(lt_exists(dir, name));
	snprintf(name, sizeof(name), "A_exec_%llu.xtf", (unsigned long long)a3);
	x = open_profile(dir, name, &in);
	if (x) {
		CHECK(in.execution_id == a3 && in.has_status && in.status == 0);
		CHECK_EQ_U64(in.records, 4);
	}
	xprobe_xtf_close(x);
	/* b.xtf was never stopped: the session stop writes it as incomplete */
	CHECK(xprobe_inspect_close() == 0);
	x = open_profile(dir, "b.xtf", &in);
	if (x) {
		CHECK(!in.complete);
		CHECK_EQ_U64(in.records, 2 * 2 * 2); /* B exec 2 and 5 */
	}
	xprobe_xtf_close(x);
	CHECK(xprobe_execution_end(12345, 0) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_execution_begin("x/y", &a1) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_execution_begin("x", NULL) == -XPROBE_E_INVALID_ARGUMENT);
	xprobe_inspect_config_free(c);
}

static void test_on_fail(void)
{
	struct xprobe_inspect_config *c = cfg_sim("onfail", 2, XPROBE_DEVICE_PROFILE_DISABLED);
	struct xprobe_xtf_info in;
	struct xprobe_xtf *x;
	char dir[PATH_MAX], sub[PATH_MAX], name[128];
	uint64_t ok1, bad, ok2;
	int files = 0;
	DIR *d;
	struct dirent *e;

	xprobe_inspect_config_set_enable(c, false); /* on-fail alone */
	xprobe_inspect_config_set_enable_on_fail(c, true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	xprobe_inspect_get_output_dir(dir, sizeof(dir));
	ok1 = run_exec("net", 0);
	bad = run_exec("net", 3);
	ok2 = run_exec("net", 0);
	snprintf(sub, sizeof(sub), "%s/on_fail", dir);
	d = opendir(sub);
	CHECK(d != NULL);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			files++;
	if (d)
		closedir(d);
	CHECK(files == 1); /* only the failing execution's */
	snprintf(name, sizeof(name), "on_fail/net_exec_%llu.xtf", (unsigned long long)bad);
	x = open_profile(dir, name, &in);
	if (x) {
		CHECK_STR(in.key_space, "on_fail");
		CHECK(in.execution_id == bad && in.status == 3);
		CHECK_EQ_U64(in.records, 2 * 3); /* 2 records + sim.fault, 2 cores */
	}
	xprobe_xtf_close(x);
	(void)ok1;
	(void)ok2;
	CHECK(xprobe_inspect_close() == 0);
	/* the session reader finds it through trace_info.pb */
	{
		struct xprobe_session *s = NULL;
		char err[256];

		CHECK(xprobe_session_open(dir, &s, err, sizeof(err)) == 0);
		CHECK(lt_file(s, name + 0) != NULL);
		xprobe_session_close(s);
	}
	xprobe_inspect_config_free(c);
}

static void test_continuous(void)
{
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 2, .sim_records_per_exec = 1);
	XPROBE_OPTS(xprobe_continuous_opts, co, .backend = "sim", .backend_opts = &bo,
		    .output_dir = "cont", .capacity = 3, .warmup = 1);
	char name[256];
	int n = 0;
	DIR *d;
	struct dirent *e;
	uint64_t ids[6];

	CHECK(xprobe_profile_continuous_start(&co) == 0);
	CHECK(xprobe_profile_continuous_save(NULL) == 0); /* nothing captured yet */
	for (int i = 0; i < 6; i++)
		ids[i] = run_exec("cm", i == 4 ? 1 : 0); /* first is warm-up */
	{
		XPROBE_OPTS(xprobe_continuous_save_opts, so, .output_dir = "cont_newest");
		CHECK(xprobe_profile_continuous_save(&so) == 1);
	}
	{
		XPROBE_OPTS(xprobe_continuous_save_opts, so, .count = 10);
		CHECK(xprobe_profile_continuous_save(&so) == 3); /* the ring holds 3 */
	}
	d = opendir("cont_newest");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(name, sizeof(name), "model_cm_pid_%d_exec_%llu_", (int)getpid(),
			 (unsigned long long)ids[5]);
		CHECK(strncmp(e->d_name, name, strlen(name)) == 0);
		{
			struct xprobe_xtf_info in;
			struct xprobe_xtf *x = open_profile("cont_newest", e->d_name, &in);

			if (x) {
				CHECK_STR(in.key_space, "continuous");
				CHECK_EQ_U64(in.records, 2);
			}
			xprobe_xtf_close(x);
		}
	}
	if (d)
		closedir(d);
	CHECK(n == 1);
	n = 0;
	d = opendir("cont");
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK(n == 3);
	{
		XPROBE_OPTS(xprobe_continuous_save_opts, so, .output_dir = "/dev/null");
		CHECK(xprobe_profile_continuous_save(&so) == -XPROBE_E_OUTPUT_NOT_DIRECTORY);
	}
	CHECK(xprobe_profile_continuous_stop() == 0);
}

int main(void)
{
	lt_scratch(scratch, sizeof(scratch), "profile");
	test_backend_choice();
	test_mutual_exclusion();
	test_rollback();
	test_session_stash();
	test_failed_harvest();
	test_model_profiles();
	test_on_fail();
	test_continuous();
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
