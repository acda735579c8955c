/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_config.c - libxprobe's options bag and small API surface: the
 * defaults, every setter's bad input (NULL, freed, foreign handles,
 * out-of-range values, unknown names), activity and event-type names round
 * trip, sz-versioned options, log callback and level, strerror/errname of
 * the library codes, xprobe_last_error.
 */
#include <stdlib.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

static int logged;
static enum xprobe_log_level last_level;

static void log_cb(enum xprobe_log_level level, const char *msg, void *ctx)
{
	(void)msg;
	(void)ctx;
	logged++;
	last_level = level;
}

static void test_defaults(void)
{
	struct xprobe_inspect_config *c = NULL;
	uint32_t mask = 0;

	CHECK(xprobe_inspect_config_new(&c) == 0);
	CHECK(c != NULL);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK_EQ_U64(mask,
		     XPROBE_ACT_SYSTEM_PROFILE | XPROBE_ACT_CPU_UTIL | XPROBE_ACT_HOST_MEMORY);
	CHECK(xprobe_inspect_config_new(NULL) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(xprobe_last_error(), "NULL") != NULL);
	xprobe_inspect_config_free(c);
	xprobe_inspect_config_free(NULL); /* accepted */
}

static void test_bad_handles(void)
{
	struct xprobe_inspect_config *c = NULL, *freed = NULL;
	char foreign[64] = { 0 };
	uint32_t mask;

	/* NULL */
	CHECK(xprobe_inspect_config_set_session_id(NULL, 1) == -XPROBE_E_MISUSE);
	CHECK(strstr(xprobe_last_error(), "NULL, freed") != NULL);
	CHECK(errno == XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_output_dir(NULL, "x") == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_activity(NULL, "all", true) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_get_activities(NULL, &mask) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_device_profile_mode(NULL, 1) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(NULL, 0, true) ==
	      -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(NULL, "user", true) ==
	      -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_ring_events(NULL, 4096) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_max_threads(NULL, 4) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_monitor_period_ms(NULL, 100) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_enable(NULL, true) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_enable_on_fail(NULL, true) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_warmup(NULL, 1) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_backend(NULL, "sim", NULL) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_instance_id(NULL, "a") == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_ring_backing(NULL, 0) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_begin_with_options(NULL) == -XPROBE_E_MISUSE);

	/* freed: the pointer is compared, never dereferenced (ASan would say) */
	CHECK(xprobe_inspect_config_new(&freed) == 0);
	xprobe_inspect_config_free(freed);
	CHECK(xprobe_inspect_config_set_session_id(freed, 1) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_config_set_activity(freed, "all", true) == -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_begin_with_options(freed) == -XPROBE_E_MISUSE);
	xprobe_inspect_config_free(freed); /* a double free is ignored */

	/* foreign memory */
	CHECK(xprobe_inspect_config_set_enable((struct xprobe_inspect_config *)foreign, true) ==
	      -XPROBE_E_MISUSE);
	CHECK(xprobe_inspect_begin_with_options((struct xprobe_inspect_config *)foreign) ==
	      -XPROBE_E_MISUSE);

	CHECK(xprobe_inspect_config_new(&c) == 0);
	CHECK(xprobe_inspect_config_get_activities(c, NULL) == -XPROBE_E_INVALID_ARGUMENT);
	xprobe_inspect_config_free(c);
}

static void test_setters(void)
{
	struct xprobe_inspect_config *c = NULL;
	char big[4000];
	uint32_t mask = 0;

	CHECK(xprobe_inspect_config_new(&c) == 0);
	CHECK(xprobe_inspect_config_set_session_id(c, -5) == 0);
	CHECK(xprobe_inspect_config_set_output_dir(c, "/tmp/x") == 0);
	CHECK(xprobe_inspect_config_set_output_dir(c, NULL) == 0);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(xprobe_inspect_config_set_output_dir(c, big) == -XPROBE_E_INVALID_ARGUMENT);

	/* activities */
	CHECK(xprobe_inspect_config_set_activity(c, NULL, true) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_activity(c, "gpu", true) == -XPROBE_E_UNKNOWN_NAME);
	CHECK(strstr(xprobe_last_error(), "'gpu'") != NULL);
	CHECK(xprobe_inspect_config_set_activity(c, "all", false) == 0);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK_EQ_U64(mask, 0);
	CHECK(xprobe_inspect_config_set_activity(c, "cpu_util", true) == 0);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK_EQ_U64(mask, XPROBE_ACT_CPU_UTIL);
	/* device_profile <-> mode */
	CHECK(xprobe_inspect_config_set_activity(c, "device_profile", true) == 0);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK(mask & XPROBE_ACT_DEVICE_PROFILE);
	CHECK(xprobe_inspect_config_set_device_profile_mode(c, XPROBE_DEVICE_PROFILE_DISABLED) ==
	      0);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK(!(mask & XPROBE_ACT_DEVICE_PROFILE));
	CHECK(xprobe_inspect_config_set_device_profile_mode(c, XPROBE_DEVICE_PROFILE_MODEL) == 0);
	CHECK(xprobe_inspect_config_get_activities(c, &mask) == 0);
	CHECK(mask & XPROBE_ACT_DEVICE_PROFILE);
	CHECK(xprobe_inspect_config_set_device_profile_mode(c, 3) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_device_profile_mode(c, -1) == -XPROBE_E_INVALID_ARGUMENT);

	/* devices */
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(c, 0, false) == 0);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(c, 255, false) == 0);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(c, -1, true) == 0);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(c, 256, true) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_device(c, -2, true) ==
	      -XPROBE_E_INVALID_ARGUMENT);

	/* event types */
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(c, NULL, true) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(c, "nope", true) ==
	      -XPROBE_E_UNKNOWN_NAME);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(c, "pad", true) ==
	      -XPROBE_E_UNKNOWN_NAME);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(c, "user", false) == 0);
	CHECK(xprobe_inspect_config_set_capture_enabled_for_event_type(c, "all", true) == 0);

	/* bounds */
	CHECK(xprobe_inspect_config_set_ring_events(c, 1023) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_ring_events(c, 1024) == 0);
	CHECK(xprobe_inspect_config_set_ring_events(c, (1ull << 26) + 1) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_max_threads(c, 0) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_max_threads(c, 4097) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_max_threads(c, 4096) == 0);
	CHECK(xprobe_inspect_config_set_monitor_period_ms(c, 9) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_monitor_period_ms(c, 3600001) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_monitor_period_ms(c, 10) == 0);
	CHECK(xprobe_inspect_config_set_warmup(c, 1000001) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_warmup(c, 3) == 0);
	CHECK(xprobe_inspect_config_set_enable(c, false) == 0);
	CHECK(xprobe_inspect_config_set_enable_on_fail(c, true) == 0);
	CHECK(xprobe_inspect_config_set_ring_backing(c, XPROBE_RING_ANON) == 0);
	CHECK(xprobe_inspect_config_set_ring_backing(c, 2) == -XPROBE_E_INVALID_ARGUMENT);

	/* instance id */
	CHECK(xprobe_inspect_config_set_instance_id(c, "node-1.a_b") == 0);
	CHECK(xprobe_inspect_config_set_instance_id(c, "") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_instance_id(c, "a/b") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_instance_id(c, "..") == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_config_set_instance_id(c, NULL) == -XPROBE_E_INVALID_ARGUMENT);
	memset(big, 'i', 64);
	big[64] = '\0';
	CHECK(xprobe_inspect_config_set_instance_id(c, big) == -XPROBE_E_INVALID_ARGUMENT);

	xprobe_inspect_config_free(c);
}

static void test_backend_opts(void)
{
	struct xprobe_inspect_config *c = NULL;
	struct {
		struct xprobe_backend_opts o;
		uint64_t newer_field;
	} newer;

	CHECK(xprobe_inspect_config_new(&c) == 0);
	CHECK(xprobe_inspect_config_set_backend(c, "gpu9000", NULL) == -XPROBE_E_UNKNOWN_NAME);
	CHECK(xprobe_inspect_config_set_backend(c, "sim", NULL) == 0);
	CHECK(xprobe_inspect_config_set_backend(c, "cupti", NULL) == 0); /* known; fails at begin */
	CHECK(xprobe_inspect_config_set_backend(c, NULL, NULL) == 0);
	{
		XPROBE_OPTS(xprobe_backend_opts, o, .sim_cores = 257);
		CHECK(xprobe_inspect_config_set_backend(c, "sim", &o) ==
		      -XPROBE_E_INVALID_ARGUMENT);
	}
	{
		XPROBE_OPTS(xprobe_backend_opts, o, .sim_records_per_exec = 65);
		CHECK(xprobe_inspect_config_set_backend(c, "sim", &o) ==
		      -XPROBE_E_INVALID_ARGUMENT);
	}
	{
		XPROBE_OPTS(xprobe_backend_opts, o, .sim_cores = 3);
		o.sz = 4; /* smaller than a size_t */
		CHECK(xprobe_inspect_config_set_backend(c, "sim", &o) ==
		      -XPROBE_E_INVALID_ARGUMENT);
	}
	/* a newer caller's struct: unknown trailing field set -> refused, zero -> fine */
	memset(&newer, 0, sizeof(newer));
	newer.o.sz = sizeof(newer);
	CHECK(xprobe_inspect_config_set_backend(c, "sim", &newer.o) == 0);
	newer.newer_field = 1;
	CHECK(xprobe_inspect_config_set_backend(c, "sim", &newer.o) == -XPROBE_E_INVALID_ARGUMENT);
	/* an older caller's shorter struct: missing fields take defaults */
	{
		XPROBE_OPTS(xprobe_backend_opts, o, .sim_cores = 2);
		o.sz = offsetof(struct xprobe_backend_opts, sim_records_per_exec);
		CHECK(xprobe_inspect_config_set_backend(c, "sim", &o) == 0);
	}
	xprobe_inspect_config_free(c);
}

static void test_names(void)
{
	const char *const *names;
	size_t n;
	uint32_t bit, type;

	CHECK(xprobe_inspect_activity_names(&names, &n) == 0);
	CHECK_EQ_U64(n, 5);
	for (size_t i = 0; i < n; i++) {
		CHECK(xprobe_inspect_activity_from_name(names[i], &bit) == 0);
		CHECK_STR(xprobe_inspect_activity_name(bit), names[i]);
	}
	CHECK_STR(xprobe_inspect_activity_name(XPROBE_ACT_ALL), "all");
	CHECK(xprobe_inspect_activity_name(0x10) == NULL);
	CHECK(xprobe_inspect_activity_name(3) == NULL);
	CHECK(xprobe_inspect_activity_from_name("nope", &bit) == -XPROBE_E_UNKNOWN_NAME);
	CHECK(xprobe_inspect_activity_from_name(NULL, &bit) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_activity_from_name("all", NULL) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_inspect_activity_names(NULL, &n) == -XPROBE_E_INVALID_ARGUMENT);

	CHECK(xprobe_event_type_names(&names, &n) == 0);
	CHECK_EQ_U64(n, XPROBE_EV__COUNT);
	for (size_t i = 1; i < n; i++) {
		CHECK(xprobe_event_type_from_name(names[i], &type) == 0);
		CHECK_EQ_U64(type, i);
		CHECK_STR(xprobe_event_type_name((uint32_t)i), names[i]);
	}
	CHECK(xprobe_event_type_name(XPROBE_EV__COUNT) == NULL);
	CHECK(xprobe_event_type_from_name("pad", &type) == -XPROBE_E_UNKNOWN_NAME);
	CHECK(xprobe_event_type_from_name(NULL, &type) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_event_type_names(&names, NULL) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK_STR(xprobe_event_type_name(XPROBE_EV_NVTX_PUSH), "nvtx_range_push");
}

static void test_errors_and_log(void)
{
	char buf[128];
	xprobe_log_fn prev;

	CHECK_STR(xprobe_errname(-XPROBE_E_OUTPUT_NOT_DIRECTORY), "OUTPUT_NOT_DIRECTORY");
	CHECK_STR(xprobe_errname(XPROBE_E_RESERVED_OUTPUT_DIR), "RESERVED_OUTPUT_DIR");
	CHECK(xprobe_strerror(-XPROBE_E_CONTINUOUS_CONFLICT, buf, sizeof(buf)) == 0);
	CHECK(strstr(buf, "continuous") != NULL);
	CHECK(xprobe_strerror(-ENOENT, buf, sizeof(buf)) == 0);
	CHECK(xprobe_strerror(-XPROBE_E_MISUSE, buf, 4) == -XPROBE_E_TRUNCATED);

	CHECK(xprobe_set_log_level(4) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_set_log_level(-1) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xprobe_set_log_level(XPROBE_LOG_DEBUG) == 0);
	prev = xprobe_set_log_fn(log_cb, NULL);
	CHECK(prev != NULL); /* the default stderr writer */
	logged = 0;
	CHECK(xprobe_inspect_config_set_warmup(NULL, 1) == -XPROBE_E_MISUSE);
	CHECK(logged == 1 && last_level == XPROBE_LOG_DEBUG); /* refusals log at DEBUG */
	CHECK(xprobe_set_log_level(XPROBE_LOG_WARN) == 0);
	logged = 0;
	CHECK(xprobe_inspect_config_set_warmup(NULL, 1) == -XPROBE_E_MISUSE);
	CHECK(logged == 0);
	CHECK(xprobe_set_log_fn(NULL, NULL) == log_cb); /* silenced */
	CHECK(xprobe_inspect_config_set_warmup(NULL, 1) == -XPROBE_E_MISUSE);
	xprobe_set_log_fn(prev, NULL);
	CHECK_STR(xprobe_version(), "0.1.0");
}

int main(void)
{
	test_defaults();
	test_bad_handles();
	test_setters();
	test_backend_opts();
	test_names();
	test_errors_and_log();
	TEST_MAIN_END();
}
