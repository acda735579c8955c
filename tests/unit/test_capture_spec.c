/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_spec.c - the MeasurementSpec parser (spec.c): every field,
 * the defaults, and each class of invalid document with its code, message
 * and field; file loading with its size cap and read errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/parse.h"
#include "capture/spec.h"
#include "capture_text.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/xp-test-spec-XXXXXX";

static const char full_spec[] =
	"{\n"
	"  \"schema_version\": \"2.0\",\n"
	"  \"name\": \"host_function_span\",\n"
	"  \"target\": {\"pid\": 1234, \"process_start_time\": 987654},\n"
	"  \"start_selector\": \"uprobe:/srv/app/server:handle_request:entry\",\n"
	"  \"end_selector\": \"uprobe:/srv/app/server:handle_request:return\",\n"
	"  \"match_policy\": \"stack_nested\",\n"
	"  \"samples\": 100,\n"
	"  \"duration_ms\": null,\n"
	"  \"timeout_ms\": 30000,\n"
	"  \"max_events\": 1000,\n"
	"  \"measurement_mode\": \"exact\",\n"
	"  \"max_groups\": null\n"
	"}\n";

static const char min_spec[] =
	"{\"schema_version\":\"2.0\",\"target\":{\"pid\":1,\"process_start_time\":2},"
	"\"start_selector\":\"a\",\"end_selector\":\"b\",\"match_policy\":\"exact\","
	"\"timeout_ms\":5}";

static void test_full(void)
{
	struct xp_error err = { 0 };
	struct xp_spec s;

	CHECK(xp_spec_parse(full_spec, strlen(full_spec), "spec.json", &s, &err) == 0);
	CHECK_STR(s.name, "host_function_span");
	CHECK_EQ_U64(s.pid, 1234);
	CHECK_EQ_U64(s.process_start_time, 987654);
	CHECK_STR(s.start_selector, "uprobe:/srv/app/server:handle_request:entry");
	CHECK_STR(s.end_selector, "uprobe:/srv/app/server:handle_request:return");
	CHECK_EQ_U64(s.match_policy, 3);
	CHECK(s.has_samples && s.samples == 100);
	CHECK(!s.has_duration_ms);
	CHECK_EQ_U64(s.timeout_ms, 30000);
	CHECK(s.has_max_events && s.max_events == 1000);
	CHECK(!s.aggregate);
	CHECK(!s.has_max_groups);
	xp_spec_free(&s);
	CHECK(s.name == NULL && s.start_selector == NULL);
	xp_spec_free(&s); /* twice is harmless */

	/* defaults: absent optional fields */
	CHECK(xp_spec_parse(min_spec, strlen(min_spec), "m", &s, &err) == 0);
	CHECK(s.name == NULL);
	CHECK(!s.has_samples && !s.has_duration_ms && !s.has_max_events && !s.has_max_groups);
	CHECK(!s.aggregate);
	CHECK_EQ_U64(s.match_policy, 0);
	xp_spec_free(&s);

	/* the five policies in enum xp_policy order, and aggregate mode */
	{
		static const char *const pol[] = { "exact", "first_after", "nearest",
						   "stack_nested", "stream_order" };
		int i;

		for (i = 0; i < 5; i++) {
			char repl[64], *t;

			snprintf(repl, sizeof(repl), "\"match_policy\":\"%s\"", pol[i]);
			t = xpt_subst(min_spec, "\"match_policy\":\"exact\"", repl);
			CHECK(xp_spec_parse(t, strlen(t), "p", &s, &err) == 0);
			CHECK_EQ_U64(s.match_policy, (uint64_t)i);
			xp_spec_free(&s);
			free(t);
		}
	}
	{
		char *t = xpt_subst(min_spec, "\"timeout_ms\":5",
				"\"timeout_ms\":9223372036854,\"measurement_mode\":"
				"\"aggregate\",\"max_groups\":4096,\"duration_ms\":0,\"name\":null,"
				"\"samples\":null,\"max_events\":null");

		CHECK(xp_spec_parse(t, strlen(t), "a", &s, &err) == 0);
		CHECK(s.aggregate);
		CHECK(s.has_max_groups && s.max_groups == 4096);
		CHECK(s.has_duration_ms && s.duration_ms == 0);
		CHECK_EQ_U64(s.timeout_ms, XPC_MS_MAX); /* the largest bound */
		CHECK(!s.has_samples && !s.has_max_events && s.name == NULL);
		xp_spec_free(&s);
		free(t);
	}
	/* a bound whose nanoseconds do not fit an int64_t is out of range */
	{
		static const char *const over[] = {
			"\"timeout_ms\":9223372036855",
			"\"timeout_ms\":18446744073709551615",
			"\"timeout_ms\":5,\"duration_ms\":18446744073710",
		};
		size_t i;

		for (i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
			char *t = xpt_subst(min_spec, "\"timeout_ms\":5", over[i]);

			CHECK(xp_spec_parse(t, strlen(t), "o", &s, &err) ==
			      -XPROBE_E_INVALID_EVENT_SELECTOR);
			CHECK(strstr(err.message, "is out of range for milliseconds whose "
						  "nanoseconds fit in a signed 64-bit integer") != NULL);
			xp_error_clear(&err);
			free(t);
		}
	}
	/* the reference's published example */
	{
		static const char example[] =
			"{\"schema_version\":\"2.0\",\"name\":\"syscall_duration\",\"target\":"
			"{\"pid\":1234,\"process_start_time\":987654},\"start_selector\":"
			"\"syscall:read:entry\",\"end_selector\":\"syscall:read:exit\","
			"\"match_policy\":\"exact\",\"samples\":100,\"duration_ms\":null,"
			"\"timeout_ms\":30000,\"max_events\":1000}";

		CHECK(xp_spec_parse(example, strlen(example), "e", &s, &err) == 0);
		xp_spec_free(&s);
	}
}

static void expect_error(const char *text, const char *msg, const char *field)
{
	struct xp_error err = { 0 };
	struct xp_spec s;

	memset(&s, 0x5a, sizeof(s));
	CHECK(xp_spec_parse(text, strlen(text), "bad.json", &s, &err) ==
	      -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(err.code == XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(!err.recoverable);
	CHECK(xpt_contains(err.message, "invalid MeasurementSpec bad.json: "));
	CHECK(xpt_contains(err.message, msg));
	if (!xpt_contains(err.message, msg))
		fprintf(stderr, "  (message: %s, want %s)\n", err.message, msg);
	CHECK_STR(xp_error_detail_get(&err, "path"), "\"bad.json\"");
	if (field) {
		char q[128];

		snprintf(q, sizeof(q), "\"%s\"", field);
		CHECK_STR(xp_error_detail_get(&err, "field"), q);
	}
	/* nothing allocated is left behind on failure */
	CHECK(s.name == NULL && s.start_selector == NULL && s.end_selector == NULL);
	xp_error_clear(&err);
}

static void expect_mutation(const char *from, const char *to, const char *msg, const char *field)
{
	char *t = xpt_subst(full_spec, from, to);

	expect_error(t, msg, field);
	free(t);
}

static void test_errors(void)
{
	expect_mutation("\"samples\": 100,", "\"samples\": 100, \"sample\": 1,", "unknown field",
			"sample");
	expect_mutation("\"process_start_time\": 987654}",
			"\"process_start_time\": 987654, \"comm\": \"x\"}", "unknown field",
			"target.comm");
	expect_mutation("\"samples\": 100,", "\"samples\": 100, \"samples\": 100,",
			"duplicate field", "samples");
	expect_mutation("\"pid\": 1234,", "\"pid\": 1234, \"pid\": 1,", "duplicate field",
			"target.pid");
	expect_mutation("\"2.0\"", "\"1.0\"",
			"unsupported schema version \"1.0\", expected \"2.0\"", "schema_version");
	expect_mutation("\"timeout_ms\": 30000,", "", "missing field", "timeout_ms");
	expect_mutation("\"target\": {\"pid\": 1234, \"process_start_time\": 987654},\n", "",
			"missing field", "target");
	expect_mutation("\"pid\": 1234, ", "", "missing field", "target.pid");
	expect_mutation("\"stack_nested\"", "\"stack-nested\"",
			"unknown value \"stack-nested\", expected one of exact, first_after",
			"match_policy");
	expect_mutation("\"stack_nested\"", "3", "found an integer", "match_policy");
	expect_mutation("\"measurement_mode\": \"exact\"", "\"measurement_mode\": \"Exact\"",
			"unknown value \"Exact\"", "measurement_mode");
	expect_mutation("\"samples\": 100", "\"samples\": -1", "found negative number -1",
			"samples");
	expect_mutation("\"samples\": 100", "\"samples\": 1.5", "found floating-point number 1.5",
			"samples");
	expect_mutation("\"samples\": 100", "\"samples\": 1e2", "found floating-point number",
			"samples");
	expect_mutation("\"samples\": 100", "\"samples\": \"100\"", "found a string", "samples");
	expect_mutation("\"timeout_ms\": 30000", "\"timeout_ms\": null", "found null",
			"timeout_ms");
	expect_mutation("\"pid\": 1234", "\"pid\": 4294967296",
			"4294967296 is out of range for an unsigned 32-bit integer", "target.pid");
	expect_mutation("\"name\": \"host_function_span\"", "\"name\": 5", "expected a string",
			"name");
	expect_mutation("\"end_selector\": \"uprobe", "\"end_selector\": \"a\\u0000b\", \"x\": \"",
			"contains a NUL character", "end_selector");
	expect_mutation("\"start_selector\": \"uprobe:/srv/app/server:handle_request:entry\"",
			"\"start_selector\": null", "expected a string, found null",
			"start_selector");
	expect_mutation("\"target\": {", "\"target\": [", "malformed JSON", NULL);
	expect_mutation("\"target\": {\"pid\": 1234, \"process_start_time\": 987654}",
			"\"target\": 7", "expected a TargetIdentity object", "target");
	expect_error("[]", "expected a MeasurementSpec object, found an array", NULL);
	expect_error("", "malformed JSON", NULL);
	expect_error("{} {}", "malformed JSON", NULL);
	expect_error("{\"schema_version\":\"2.0\"", "malformed JSON", NULL);
	expect_error("\xef\xbb\xbf{}", "malformed JSON", NULL);
	expect_error("{\"a\xff\":1}", "malformed JSON", NULL);
}

static void test_load(void)
{
	struct xp_error err = { 0 };
	struct xp_spec s;
	const char *p;
	char missing[300];

	p = xpt_write_file(tmpdir, "spec.json", full_spec, strlen(full_spec));
	CHECK(xp_spec_load(p, &s, &err) == 0);
	CHECK_EQ_U64(s.pid, 1234);
	xp_spec_free(&s);

	/* read failures are TRACE_EXPORT_FAILED, not recoverable */
	snprintf(missing, sizeof(missing), "%s/none.json", tmpdir);
	CHECK(xp_spec_load(missing, &s, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_contains(err.message, "failed to read "));
	CHECK(xpt_contains(err.message, "none.json: No such file or directory"));
	CHECK(!err.recoverable);
	xp_error_clear(&err);
	CHECK(xp_spec_load(tmpdir, &s, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_contains(err.message, "Is a directory"));
	xp_error_clear(&err);

	/* the size cap: 1 MiB of whitespace around a valid spec is refused,
	 * exactly 1 MiB is read */
	{
		size_t cap = 1u << 20, n = strlen(min_spec);
		char *big = malloc(cap + 2);

		memset(big, ' ', cap + 1);
		memcpy(big, min_spec, n);
		p = xpt_write_file(tmpdir, "big.json", big, cap + 1);
		CHECK(xp_spec_load(p, &s, &err) == -XPROBE_E_INVALID_EVENT_SELECTOR);
		CHECK(xpt_contains(err.message, "larger than 1048576 bytes"));
		xp_error_clear(&err);
		p = xpt_write_file(tmpdir, "cap.json", big, cap);
		CHECK(xp_spec_load(p, &s, &err) == 0);
		xp_spec_free(&s);
		free(big);
	}
	p = xpt_write_file(tmpdir, "empty.json", "", 0);
	CHECK(xp_spec_load(p, &s, &err) == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(xpt_contains(err.message, "malformed JSON"));
	xp_error_clear(&err);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	test_full();
	test_errors();
	test_load();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	TEST_MAIN_END();
}
