/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_decode.c - the completed-capture decoders (decode_json.cc)
 * and input loading (input.c): every Event field decoded and rendered back
 * identically, each class of bad input with its code, message and
 * location, chunk boundaries (tiny chunks, two threads, pipes), the
 * max_events bound with its exact count, host captures, format detection
 * and the merge of several inputs.  Fixtures are written by the test into
 * a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "model/event_json.h"
#include "capture_text.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/xp-test-decode-XXXXXX";

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */

/* Text helpers shared with the other capture tests: capture_text.h. */
static const char *tmp_path(const char *name)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static const char *write_file(const char *name, const char *data, size_t len)
{
	return xpt_write_file(tmpdir, name, data, len);
}

static const char *write_str(const char *name, const char *s)
{
	return write_file(name, s, strlen(s));
}

#define CHECK_CONTAINS(hay, needle)                                                          \
	do {                                                                                 \
		const char *h_ = (hay), *n_ = (needle);                                      \
		xpt_checks++;                                                                \
		if (!xpt_contains(h_, n_)) {                                                     \
			fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
				__LINE__, h_ ? h_ : "(null)", n_);                           \
			xpt_failures++;                                                      \
		}                                                                            \
	} while (0)

/* A detail value compared as the JSON string it is. */
static void check_detail_str(const struct xp_error *err, const char *key, const char *want)
{
	char q[512];

	snprintf(q, sizeof(q), "\"%s\"", want);
	CHECK_STR(xp_error_detail_get(err, key), q);
}

/* A compact Event document; fields other than the named ones are fixed. */
static char *event_doc(unsigned seq, unsigned pid, unsigned tid, unsigned long long ts,
		       const char *type, const char *probe_kind)
{
	struct xpc_buf b = XPC_BUF_INIT;

	xpc_buf_printf(&b,
		       "{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_%u\","
		       "\"sequence\":%u,\"source\":\"ebpf\",\"event_type\":\"%s\",\"pid\":%u,"
		       "\"tid\":%u,\"cpu\":1,\"timestamp_raw\":%llu,\"timestamp_ns\":%llu,"
		       "\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
		       "\"process_start_time\":5555,\"host\":{\"probe_kind\":\"%s\","
		       "\"binary_path\":\"/bin/app\",\"build_id\":null,\"symbol\":\"work\","
		       "\"symbol_demangled\":null,\"offset\":null,\"return_value\":null,"
		       "\"arguments\":[]},\"cuda\":null,\"nvtx\":null,\"attributes\":{}}",
		       seq, seq, type, pid, tid, ts, ts, probe_kind);
	return xpc_buf_steal(&b);
}

/* n uprobe entry/exit events of pid 100 as JSONL, timestamps 1000 + 10*i. */
static char *jsonl_events(unsigned n, unsigned pid)
{
	struct xpc_buf b = XPC_BUF_INIT;
	unsigned i;

	for (i = 0; i < n; i++) {
		char *d = event_doc(i, pid, pid + 1 + i % 3, 1000 + 10ull * i,
				    i % 2 ? "host_function_exit" : "host_function_entry",
				    i % 2 ? "uretprobe" : "uprobe");

		xpc_buf_puts(&b, d);
		xpc_buf_putc(&b, '\n');
		free(d);
	}
	return xpc_buf_steal(&b);
}

/* Decode @text as an Event stream into a fresh capture bounded by @max. */
static int decode_text(const char *text, size_t max, struct xp_capture *c, struct xp_error *err)
{
	xp_capture_init(c, max);
	memset(err, 0, sizeof(*err));
	return xp_decode_event_stream(text, strlen(text), "in.jsonl", c, err);
}

/* Expect @text to fail with TRACE_EXPORT_FAILED and @msg in the message. */
static void expect_decode_error(const char *text, const char *msg, const char *field)
{
	struct xp_capture c;
	struct xp_error err;
	int rc = decode_text(text, 0, &c, &err);

	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(err.code == XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(!err.recoverable);
	CHECK_CONTAINS(err.message, msg);
	if (field)
		check_detail_str(&err, "field", field);
	CHECK_STR(xp_error_detail_get(&err, "path"), "\"in.jsonl\"");
	if (rc && !xpt_contains(err.message, msg))
		fprintf(stderr, "  (message: %s)\n", err.message);
	xp_error_clear(&err);
	xp_capture_free(&c);
}

/* Mutate one valid event with xpt_subst() and expect an error. */
static void expect_mutation_error(const char *from, const char *to, const char *msg,
				  const char *field)
{
	char *good = event_doc(0, 100, 101, 1000, "host_function_entry", "uprobe");
	char *bad = xpt_subst(good, from, to);

	expect_decode_error(bad, msg, field);
	free(good);
	free(bad);
}

/* ---------------------------------------------------------------------- */
/* every field, rendered back                                              */

/* Canonical documents: keys in reference order, attribute keys sorted,
 * numbers in canonical form, so rendering reproduces them byte for byte. */
static const char *const full_events[] = {
	/* uprobe entry, every host field set, timestamp error, start time */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_0\",\"sequence\":0,"
	"\"source\":\"ebpf\",\"event_type\":\"host_function_entry\",\"pid\":4242,\"tid\":4243,"
	"\"cpu\":3,\"timestamp_raw\":18446744073709551615,\"timestamp_ns\":1000,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":7,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"uprobe\","
	"\"binary_path\":\"/srv/app/bin/server\",\"build_id\":\"abcdef0123\","
	"\"symbol\":\"_ZN3app6ServerC2Ev\",\"symbol_demangled\":\"app::Server::Server()\","
	"\"offset\":4096,\"return_value\":null,\"arguments\":[]},\"cuda\":null,\"nvtx\":null,"
	"\"attributes\":{}}",
	/* syscall entry with six arguments of several shapes */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_1\",\"sequence\":1,"
	"\"source\":\"ebpf\",\"event_type\":\"syscall_entry\",\"pid\":4242,\"tid\":4244,"
	"\"cpu\":0,\"timestamp_raw\":1010,\"timestamp_ns\":1010,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"syscall\","
	"\"binary_path\":null,\"build_id\":null,\"symbol\":\"read\",\"symbol_demangled\":null,"
	"\"offset\":null,\"return_value\":null,\"arguments\":["
	"{\"index\":0,\"abi_type\":\"u64\",\"value\":3,\"read_error\":null},"
	"{\"index\":1,\"abi_type\":\"u64\",\"value\":140737488355328,\"read_error\":null},"
	"{\"index\":2,\"abi_type\":\"u64\",\"value\":18446744073709551615,\"read_error\":null},"
	"{\"index\":3,\"abi_type\":\"char*\",\"value\":\"tab\\there \\\"q\\\" \\u0001\",\"read_error\":null},"
	"{\"index\":4,\"abi_type\":\"struct\",\"value\":{\"a\":[1,-2,2.5,true,null],\"b\":{}},\"read_error\":null},"
	"{\"index\":65535,\"abi_type\":\"u64\",\"value\":null,\"read_error\":\"EFAULT\"}]},"
	"\"cuda\":null,\"nvtx\":null,\"attributes\":{\"tracepoint_category\":\"syscalls\"}}",
	/* syscall exit: negative return value */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_2\",\"sequence\":2,"
	"\"source\":\"ebpf\",\"event_type\":\"syscall_exit\",\"pid\":4242,\"tid\":4244,"
	"\"cpu\":1,\"timestamp_raw\":1020,\"timestamp_ns\":1020,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"syscall\","
	"\"binary_path\":null,\"build_id\":null,\"symbol\":\"read\",\"symbol_demangled\":null,"
	"\"offset\":null,\"return_value\":-9223372036854775808,\"arguments\":[]},"
	"\"cuda\":null,\"nvtx\":null,\"attributes\":{\"tracepoint_category\":\"syscalls\"}}",
	/* CUDA API callback */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_3\",\"sequence\":3,"
	"\"source\":\"cupti_callback\",\"event_type\":\"cuda_api_entry\",\"pid\":4242,"
	"\"tid\":4245,\"cpu\":null,\"timestamp_raw\":1030,\"timestamp_ns\":1030,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":{\"device_id\":null,"
	"\"context_id\":1,\"stream_id\":null,\"correlation_id\":77,"
	"\"runtime_correlation_id\":77,\"callback_domain\":2,\"callback_id\":211,"
	"\"kernel_name\":null,\"kernel_name_mangled\":null,\"start_ns\":null,\"end_ns\":null,"
	"\"grid\":null,\"block\":null,\"bytes\":null,\"memcpy_kind\":null},\"nvtx\":null,"
	"\"attributes\":{\"cuda_api_domain\":\"runtime_api\","
	"\"cuda_api_name\":\"cudaLaunchKernel\"}}",
	/* kernel activity, every CUDA field */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_4\",\"sequence\":4,"
	"\"source\":\"cupti_activity\",\"event_type\":\"gpu_kernel_start\",\"pid\":4242,"
	"\"tid\":4245,\"cpu\":null,\"timestamp_raw\":1040,\"timestamp_ns\":1040,"
	"\"clock_domain\":\"cupti_normalized_to_host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":{\"device_id\":0,"
	"\"context_id\":4294967295,\"stream_id\":18446744073709551615,\"correlation_id\":77,"
	"\"runtime_correlation_id\":78,\"callback_domain\":1,\"callback_id\":13,"
	"\"kernel_name\":\"vecAdd(float*, int)\",\"kernel_name_mangled\":\"_Z6vecAddPfi\","
	"\"start_ns\":1040,\"end_ns\":2040,\"grid\":{\"x\":128,\"y\":1,\"z\":4294967295},"
	"\"block\":{\"x\":256,\"y\":2,\"z\":1},\"bytes\":123456789,\"memcpy_kind\":\"PtoP\"},"
	"\"nvtx\":null,\"attributes\":{}}",
	/* memcpy in the CUPTI clock */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_5\",\"sequence\":5,"
	"\"source\":\"cupti_activity\",\"event_type\":\"gpu_memcpy_end\",\"pid\":4242,"
	"\"tid\":0,\"cpu\":null,\"timestamp_raw\":1050,\"timestamp_ns\":1050,"
	"\"clock_domain\":\"cupti\",\"timestamp_error_ns\":0,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":{\"device_id\":1,"
	"\"context_id\":null,\"stream_id\":7,\"correlation_id\":null,"
	"\"runtime_correlation_id\":null,\"callback_domain\":null,\"callback_id\":null,"
	"\"kernel_name\":null,\"kernel_name_mangled\":null,\"start_ns\":null,\"end_ns\":1050,"
	"\"grid\":null,\"block\":null,\"bytes\":4096,\"memcpy_kind\":\"unknown\"},"
	"\"nvtx\":null,\"attributes\":{\"memset_value\":0}}",
	/* NVTX range end of a process range */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_6\",\"sequence\":6,"
	"\"source\":\"cupti_callback\",\"event_type\":\"nvtx_range_end\",\"pid\":4242,"
	"\"tid\":4246,\"cpu\":null,\"timestamp_raw\":1060,\"timestamp_ns\":1060,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":null,\"nvtx\":{"
	"\"name\":\"step \xc3\xa9\xe4\xb8\xad\",\"name_complete\":false,\"range_kind\":\"process\","
	"\"range_id\":18446744073709551615,\"start_tid\":4245},\"attributes\":{}}",
	/* our USDT event, and attribute values of every JSON type */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_7\",\"sequence\":7,"
	"\"source\":\"ebpf\",\"event_type\":\"marker\",\"pid\":4242,\"tid\":4242,\"cpu\":1,"
	"\"timestamp_raw\":1070,\"timestamp_ns\":1070,\"clock_domain\":\"host_monotonic\","
	"\"timestamp_error_ns\":null,\"process_start_time\":987654,\"host\":{"
	"\"probe_kind\":\"usdt\",\"binary_path\":\"/usr/bin/python3.11\",\"build_id\":null,"
	"\"symbol\":\"gc__start\",\"symbol_demangled\":null,\"offset\":null,"
	"\"return_value\":0,\"arguments\":[]},\"cuda\":null,\"nvtx\":null,\"attributes\":{"
	"\"a\":[],\"b\":false,\"c\":-3,\"d\":0.25,\"e\":null,\"f\":{\"z\":1,\"a\":[{}]},"
	"\"usdt_provider\":\"python\"}}",
};

static void test_round_trip(void)
{
	struct xpc_buf in = XPC_BUF_INIT;
	struct xp_capture c;
	struct xp_error err;
	size_t i, n = sizeof(full_events) / sizeof(full_events[0]);

	for (i = 0; i < n; i++) {
		xpc_buf_puts(&in, full_events[i]);
		xpc_buf_putc(&in, '\n');
	}
	CHECK(decode_text(xpc_buf_str(&in), 0, &c, &err) == 0);
	CHECK_EQ_U64(c.count, n);
	for (i = 0; i < c.count && i < n; i++) {
		char *out = xpt_render_event(&c, i);

		CHECK_STR(out, full_events[i]);
		free(out);
	}
	/* a few fields checked directly */
	if (c.count == n) {
		const struct xp_event *e = &c.events[1];

		CHECK(c.has_pid && c.pid == 4242);
		CHECK(c.has_start_time && c.process_start_time == 987654);
		CHECK_EQ_U64(c.events[0].timestamp_raw, UINT64_MAX);
		CHECK(c.events[0].flags & XP_EVF_TS_ERROR);
		CHECK(!(c.events[3].flags & XP_EVF_CPU));
		CHECK_EQ_U64(e->host.args_count, 6);
		CHECK_EQ_U64(c.args[e->host.args_first + 5].index, 65535);
		CHECK_STR(xp_capture_str(&c, c.args[e->host.args_first + 4].value),
			  "{\"a\":[1,-2,2.5,true,null],\"b\":{}}");
		CHECK_EQ_U64(c.events[2].host.return_value, (uint64_t)INT64_MIN);
		CHECK_EQ_U64(c.events[4].cuda.grid.z, UINT32_MAX);
		CHECK_EQ_U64(c.events[7].event_type, XP_EV_MARKER);
		CHECK(xp_event_attr(&c, &c.events[7], xp_capture_intern(&c, "usdt_provider")) ==
		      xp_capture_intern(&c, "\"python\""));
		/* one copy of each repeated string */
		CHECK(c.events[1].host.symbol == c.events[2].host.symbol);
	}
	xp_capture_free(&c);

	/* identical argument lists and attribute maps share one table run;
	 * different ones do not, and rendering is unaffected */
	{
		struct xpc_buf t = XPC_BUF_INIT;
		char *other = xpt_subst(full_events[1], "\"value\":3,", "\"value\":4,");
		char *got;

		xpc_buf_printf(&t, "%s\n%s\n%s\n%s\n", full_events[1], full_events[2],
			       full_events[1], other);
		CHECK(decode_text(xpc_buf_str(&t), 0, &c, &err) == 0);
		CHECK_EQ_U64(c.count, 4);
		if (c.count == 4) {
			CHECK_EQ_U64(c.events[0].host.args_first, c.events[2].host.args_first);
			CHECK(c.events[3].host.args_first != c.events[0].host.args_first);
			CHECK_EQ_U64(c.nargs, 12);
			CHECK_EQ_U64(c.events[0].attrs_first, c.events[1].attrs_first);
			CHECK_EQ_U64(c.nattrs, 1);
			got = xpt_render_event(&c, 2);
			CHECK_STR(got, full_events[1]);
			free(got);
			got = xpt_render_event(&c, 3);
			CHECK_STR(got, other);
			free(got);
		}
		xp_capture_free(&c);
		xpc_buf_free(&t);
		free(other);
	}

	/* any whitespace separates documents; none is needed between objects */
	{
		char *a = event_doc(0, 7, 8, 10, "host_function_entry", "uprobe");
		char *b = event_doc(1, 7, 8, 20, "host_function_exit", "uretprobe");
		struct xpc_buf t = XPC_BUF_INIT;

		xpc_buf_printf(&t, " \r\n\t%s%s\n\n   \t\r\n", a, b);
		CHECK(decode_text(xpc_buf_str(&t), 0, &c, &err) == 0);
		CHECK_EQ_U64(c.count, 2);
		xp_capture_free(&c);
		/* optional fields may be absent; attributes default to {} */
		xpc_buf_reset(&t);
		xpc_buf_puts(&t,
			     "{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"e\","
			     "\"sequence\":9,\"source\":\"ebpf\",\"event_type\":\"tracepoint\","
			     "\"pid\":1,\"tid\":2,\"timestamp_raw\":3,\"timestamp_ns\":4,"
			     "\"clock_domain\":\"host_monotonic\"}");
		CHECK(decode_text(xpc_buf_str(&t), 0, &c, &err) == 0);
		CHECK_EQ_U64(c.count, 1);
		if (c.count == 1) {
			CHECK_EQ_U64(c.events[0].flags, 0);
			CHECK_EQ_U64(c.events[0].attrs_count, 0);
			CHECK(!c.has_start_time);
		}
		xp_capture_free(&c);
		/* pretty-printed (multi-line) documents */
		xpc_buf_reset(&t);
		xpc_buf_puts(&t,
			     "{\n  \"schema_version\": \"2.0\",\n  \"session_id\": \"S\",\n"
			     "  \"event_id\": \"e\",\n  \"sequence\": 1,\n  \"source\": \"ebpf\",\n"
			     "  \"event_type\": \"tracepoint\",\n  \"pid\": 1,\n  \"tid\": 2,\n"
			     "  \"timestamp_raw\": 3,\n  \"timestamp_ns\": 4,\n"
			     "  \"clock_domain\": \"host_monotonic\",\n  \"attributes\": {\n"
			     "    \"k\": [\n      1\n    ]\n  }\n}\n");
		xpc_buf_puts(&t, xpc_buf_str(&t));
		CHECK(decode_text(xpc_buf_str(&t), 0, &c, &err) == 0);
		CHECK_EQ_U64(c.count, 2);
		xp_capture_free(&c);
		xpc_buf_free(&t);
		free(a);
		free(b);
	}
	xpc_buf_free(&in);
}

/* ---------------------------------------------------------------------- */
/* strictness                                                              */

static void test_strict_fields(void)
{
	/* unknown fields, top level and nested */
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"extra\":1,", "unknown field \"extra\"",
			      "extra");
	expect_mutation_error("\"probe_kind\":\"uprobe\",", "\"probe_kind\":\"uprobe\",\"foo\":[],",
			      "unknown field \"host.foo\"", "host.foo");
	expect_mutation_error("\"arguments\":[]",
			      "\"arguments\":[{\"index\":0,\"abi_type\":\"u64\",\"bogus\":1}]",
			      "unknown field \"host.arguments[0].bogus\"",
			      "host.arguments[0].bogus");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"stream\":1}",
			      "unknown field \"cuda.stream\"", "cuda.stream");
	expect_mutation_error("\"cuda\":null",
			      "\"cuda\":{\"grid\":{\"x\":1,\"y\":1,\"z\":1,\"w\":1}}",
			      "unknown field \"cuda.grid.w\"", "cuda.grid.w");
	expect_mutation_error("\"nvtx\":null",
			      "\"nvtx\":{\"name\":\"n\",\"name_complete\":true,\"range_kind\":"
			      "\"thread\",\"range_id\":1,\"start_tid\":2,\"color\":3}",
			      "unknown field \"nvtx.color\"", "nvtx.color");
	/* near misses: names that differ from a known one only inside (the
	 * matcher compares first and last words, then the middle) */
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"timestampXerror_ns\":1,",
			      "unknown field \"timestampXerror_ns\"", "timestampXerror_ns");
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"process_sXart_time\":1,",
			      "unknown field \"process_sXart_time\"", "process_sXart_time");
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"sessionXid\":\"s\",",
			      "unknown field \"sessionXid\"", "sessionXid");
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"pie\":1,", "unknown field \"pie\"",
			      "pie");
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"hosT\":null,",
			      "unknown field \"hosT\"", "hosT");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"runtime_correlatiXn_id\":1}",
			      "unknown field \"cuda.runtime_correlatiXn_id\"",
			      "cuda.runtime_correlatiXn_id");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"grid\":{\"x\":1,\"y\":1,\"Z\":1}}",
			      "unknown field \"cuda.grid.Z\"", "cuda.grid.Z");
	expect_mutation_error("\"event_type\":\"host_function_entry\"",
			      "\"event_type\":\"host_functiXn_entry\"",
			      "unknown value \"host_functiXn_entry\"", "event_type");
	expect_mutation_error("\"clock_domain\":\"host_monotonic\"",
			      "\"clock_domain\":\"cupti_normalized_tX_host_monotonic\"",
			      "unknown value \"cupti_normalized_tX_host_monotonic\"",
			      "clock_domain");
	/* duplicate keys, anywhere */
	expect_mutation_error("\"pid\":100,", "\"pid\":100,\"pid\":100,", "duplicate field \"pid\"",
			      "pid");
	expect_mutation_error("\"symbol\":\"work\",", "\"symbol\":\"work\",\"symbol\":\"work\",",
			      "duplicate field \"host.symbol\"", "host.symbol");
	expect_mutation_error("\"attributes\":{}", "\"attributes\":{\"k\":1,\"j\":2,\"k\":1}",
			      "duplicate field \"attributes.k\"", "attributes.k");
	expect_mutation_error("\"attributes\":{}",
			      "\"attributes\":{\"k\":{\"a\":[{\"b\":1,\"b\":2}]}}",
			      "duplicate field \"attributes.k.a[0].b\"", "attributes.k.a[0].b");
	{
		/* many attribute keys take the sorting path */
		struct xpc_buf b = XPC_BUF_INIT;
		int i;

		xpc_buf_puts(&b, "\"attributes\":{");
		for (i = 0; i < 40; i++)
			xpc_buf_printf(&b, "\"k%d\":%d,", i, i);
		xpc_buf_puts(&b, "\"k17\":0}");
		expect_mutation_error("\"attributes\":{}", xpc_buf_str(&b),
				      "duplicate field \"attributes.k17\"", "attributes.k17");
		xpc_buf_free(&b);
	}
	/* attribute names are C strings downstream: no NUL inside */
	expect_mutation_error("\"attributes\":{}", "\"attributes\":{\"a\\u0000b\":1}",
			      "NUL character in the name of field", NULL);
	/* versions and required fields */
	expect_mutation_error("\"schema_version\":\"2.0\"", "\"schema_version\":\"1.0\"",
			      "unsupported schema version \"1.0\"", "schema_version");
	expect_mutation_error("\"schema_version\":\"2.0\"", "\"schema_version\":2.0",
			      "expected a string, found a floating-point number", "schema_version");
	expect_mutation_error("\"timestamp_ns\":1000,", "", "missing field \"timestamp_ns\"",
			      "timestamp_ns");
	expect_mutation_error("\"session_id\":\"S\",", "", "missing field \"session_id\"",
			      "session_id");
	expect_mutation_error("\"probe_kind\":\"uprobe\",", "", "missing field \"host.probe_kind\"",
			      "host.probe_kind");
	expect_mutation_error("\"arguments\":[]", "\"arguments\":[{\"index\":0}]",
			      "missing field \"host.arguments[0].abi_type\"",
			      "host.arguments[0].abi_type");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"block\":{\"x\":1,\"y\":1}}",
			      "missing field \"cuda.block.z\"", "cuda.block.z");
	expect_mutation_error("\"nvtx\":null", "\"nvtx\":{\"name\":\"n\"}",
			      "missing field \"nvtx.name_complete\"", "nvtx.name_complete");
	/* enums */
	expect_mutation_error("\"source\":\"ebpf\"", "\"source\":\"bpf\"", "unknown value \"bpf\"",
			      "source");
	expect_mutation_error("\"event_type\":\"host_function_entry\"", "\"event_type\":\"entry\"",
			      "unknown value \"entry\"", "event_type");
	expect_mutation_error("\"clock_domain\":\"host_monotonic\"",
			      "\"clock_domain\":\"realtime\"", "unknown value \"realtime\"",
			      "clock_domain");
	expect_mutation_error("\"probe_kind\":\"uprobe\"", "\"probe_kind\":\"UPROBE\"",
			      "unknown value \"UPROBE\"", "host.probe_kind");
	expect_mutation_error("\"probe_kind\":\"uprobe\"", "\"probe_kind\":null",
			      "expected one of uprobe", "host.probe_kind");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"memcpy_kind\":\"htod\"}",
			      "unknown value \"htod\"", "cuda.memcpy_kind");
	expect_mutation_error("\"nvtx\":null",
			      "\"nvtx\":{\"name\":\"n\",\"name_complete\":true,\"range_kind\":"
			      "\"global\",\"range_id\":1,\"start_tid\":2}",
			      "unknown value \"global\"", "nvtx.range_kind");
	/* types */
	expect_mutation_error("\"attributes\":{}", "\"attributes\":null",
			      "expected an attributes object, found null", "attributes");
	expect_mutation_error("\"cuda\":null", "\"cuda\":[]",
			      "expected a CudaEvent object, found an array", "cuda");
	expect_mutation_error("\"session_id\":\"S\"", "\"session_id\":null",
			      "expected a string, found null", "session_id");
	expect_mutation_error("\"symbol\":\"work\"", "\"symbol\":7",
			      "expected a string, found an integer", "host.symbol");
	expect_mutation_error("\"arguments\":[]", "\"arguments\":{}",
			      "expected an array of ArgumentValue", "host.arguments");
	expect_mutation_error("\"arguments\":[]", "\"arguments\":[1]",
			      "expected an ArgumentValue object, found an integer",
			      "host.arguments[0]");
	expect_mutation_error("\"nvtx\":null",
			      "\"nvtx\":{\"name\":\"n\",\"name_complete\":1,\"range_kind\":"
			      "\"thread\",\"range_id\":1,\"start_tid\":2}",
			      "expected a boolean, found an integer", "nvtx.name_complete");
}

static void test_strict_numbers(void)
{
	expect_mutation_error("\"pid\":100", "\"pid\":-1",
			      "expected an unsigned 32-bit integer, found negative number -1",
			      "pid");
	expect_mutation_error("\"pid\":100", "\"pid\":4294967296",
			      "4294967296 is out of range for an unsigned 32-bit integer", "pid");
	expect_mutation_error(
		"\"pid\":100", "\"pid\":1.5",
		"expected an unsigned 32-bit integer, found floating-point number 1.5", "pid");
	expect_mutation_error("\"pid\":100", "\"pid\":100.0", "found floating-point number", "pid");
	expect_mutation_error("\"pid\":100", "\"pid\":1e2", "found floating-point number", "pid");
	expect_mutation_error("\"pid\":100", "\"pid\":\"100\"",
			      "expected an unsigned 32-bit integer, found a string", "pid");
	expect_mutation_error("\"tid\":101", "\"tid\":true", "found a boolean", "tid");
	expect_mutation_error("\"cpu\":1", "\"cpu\":-3", "found negative number -3", "cpu");
	expect_mutation_error("\"sequence\":0", "\"sequence\":-1",
			      "expected an unsigned 64-bit integer, found negative number -1",
			      "sequence");
	/* above u64: simdjson refuses the number itself */
	expect_mutation_error("\"sequence\":0", "\"sequence\":18446744073709551616",
			      "malformed JSON", NULL);
	expect_mutation_error("\"return_value\":null", "\"return_value\":9223372036854775808",
			      "9223372036854775808 is out of range for a signed 64-bit integer",
			      "host.return_value");
	expect_mutation_error("\"return_value\":null", "\"return_value\":-1.0",
			      "expected a signed 64-bit integer, found floating-point number",
			      "host.return_value");
	expect_mutation_error(
		"\"arguments\":[]", "\"arguments\":[{\"index\":65536,\"abi_type\":\"u64\"}]",
		"65536 is out of range for an unsigned 16-bit integer", "host.arguments[0].index");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"device_id\":4294967296}",
			      "out of range for an unsigned 32-bit integer", "cuda.device_id");
	expect_mutation_error("\"cuda\":null", "\"cuda\":{\"grid\":{\"x\":1,\"y\":-1,\"z\":1}}",
			      "found negative number -1", "cuda.grid.y");
	expect_mutation_error("\"process_start_time\":5555", "\"process_start_time\":\"5555\"",
			      "found a string", "process_start_time");
}

static void test_document_errors(void)
{
	char *good = jsonl_events(4, 100);
	struct xp_capture c;
	struct xp_error err;
	const char *nl2;
	char off[32];

	/* not an object */
	expect_decode_error("[1,2]\n", "line 1: expected an Event object, found an array", NULL);
	expect_decode_error("42", "expected an Event object, found an integer", NULL);
	/* a host capture after the first document */
	{
		char *bad = NULL;
		struct xpc_buf b = XPC_BUF_INIT;

		xpc_buf_puts(&b, good);
		xpc_buf_puts(&b, "{\"schema_version\":\"2.0\",\"ok\":true,\"events\":[]}\n");
		bad = xpc_buf_steal(&b);
		expect_decode_error(bad,
				    "line 5: a host-capture document must be "
				    "the only document of its file",
				    NULL);
		free(bad);
	}
	/* malformed third line: line and byte offset name it */
	nl2 = strchr(strchr(good, '\n') + 1, '\n') + 1;
	{
		struct xpc_buf b = XPC_BUF_INIT;
		char *bad;

		xpc_buf_append(&b, good, (size_t)(nl2 - good));
		xpc_buf_puts(&b, "{\"schema_version\":\"2.0\",\"session_id\":tru}\n");
		xpc_buf_puts(&b, nl2);
		bad = xpc_buf_steal(&b);
		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "failed to decode in.jsonl: line 3: malformed JSON");
		CHECK_STR(xp_error_detail_get(&err, "line"), "3");
		snprintf(off, sizeof(off), "%zu", (size_t)(nl2 - good));
		CHECK_STR(xp_error_detail_get(&err, "byte_offset"), off);
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);

		/* an unclosed string fails simdjson's first stage for the
		 * whole chunk; the line is still the right one */
		b = (struct xpc_buf)XPC_BUF_INIT;
		xpc_buf_append(&b, good, (size_t)(nl2 - good));
		xpc_buf_puts(&b, "{\"schema_version\":\"2.0}\n");
		xpc_buf_puts(&b, nl2);
		bad = xpc_buf_steal(&b);
		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "line 3: malformed JSON");
		CHECK_STR(xp_error_detail_get(&err, "byte_offset"), off);
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);

		/* invalid UTF-8 */
		b = (struct xpc_buf)XPC_BUF_INIT;
		xpc_buf_append(&b, good, (size_t)(nl2 - good));
		xpc_buf_puts(&b, "{\"schema_version\":\"2.\xff\"}\n");
		bad = xpc_buf_steal(&b);
		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "line 3: malformed JSON");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	/* a field error names line and offset of its document */
	{
		char *bad = xpt_subst(good, "\"sequence\":2,", "\"sequence\":2,\"x\":0,");

		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "failed to decode in.jsonl: line 3: unknown field \"x\"");
		CHECK_STR(xp_error_detail_get(&err, "line"), "3");
		CHECK_STR(xp_error_detail_get(&err, "byte_offset"), off);
		CHECK_STR(xp_error_detail_get(&err, "field"), "\"x\"");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	/* truncated last document */
	{
		size_t n = strlen(good);
		char *bad = strndup(good, n - 20);

		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "line 4: truncated document at end of input");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	/* garbage and stray punctuation */
	expect_decode_error("}\n", "malformed JSON", NULL);
	expect_decode_error("{\"a\":1}}", "", NULL);
	expect_decode_error("{\"a\" 1}", "malformed JSON", NULL);
	/* an empty stream decodes to nothing (xp_input_load calls it empty) */
	CHECK(decode_text("  \n ", 0, &c, &err) == 0);
	CHECK_EQ_U64(c.count, 0);
	xp_capture_free(&c);
	free(good);
}

/* ---------------------------------------------------------------------- */
/* targets                                                                 */

static void test_mixed_targets(void)
{
	char *good = jsonl_events(4, 100);
	struct xp_capture c;
	struct xp_error err;

	{
		char *bad = xpt_subst(good,
				  "\"sequence\":1,\"source\":\"ebpf\",\"event_type\":"
				  "\"host_function_exit\",\"pid\":100",
				  "\"sequence\":1,\"source\":\"ebpf\",\"event_type\":"
				  "\"host_function_exit\",\"pid\":200");

		CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "completed capture mixes target PIDs 100 and 200");
		CHECK_STR(xp_error_detail_get(&err, "line"), "2");
		CHECK_STR(xp_error_detail_get(&err, "pids"), "[100,200]");
		CHECK_STR(xp_error_detail_get(&err, "path"), "\"in.jsonl\"");
		CHECK(!err.recoverable);
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	{
		/* same pid, another process start time: another process */
		char *lines = jsonl_events(3, 100);
		char *bad = xpt_subst(strchr(lines, '\n') + 1, "\"process_start_time\":5555",
				  "\"process_start_time\":5556");
		char *all = malloc(strlen(lines) * 2);

		snprintf(all, strlen(lines) * 2, "%.*s%s", (int)(strchr(lines, '\n') + 1 - lines),
			 lines, bad);
		CHECK(decode_text(all, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "completed capture mixes target processes: pid 100 "
					    "with process start times 5555 and 5556");
		CHECK_STR(xp_error_detail_get(&err, "line"), "2");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(all);
		free(bad);
		free(lines);
	}
	{
		/* a capture that already has a target rejects another */
		xp_capture_init(&c, 0);
		c.has_pid = true;
		c.pid = 7;
		memset(&err, 0, sizeof(err));
		CHECK(xp_decode_event_stream(good, strlen(good), "x", &c, &err) ==
		      -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "completed capture mixes target PIDs 7 and 100");
		xp_error_clear(&err);
		xp_capture_free(&c);
	}
	free(good);
}

/* ---------------------------------------------------------------------- */
/* the bound                                                               */

static void test_max_events(void)
{
	char *text = jsonl_events(10, 100);
	struct xp_capture c;
	struct xp_error err;

	CHECK(decode_text(text, 4, &c, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_STR(err.message, "capture contains 10 events, exceeding the maximum of 4");
	CHECK(err.recoverable);
	CHECK_STR(xp_error_detail_get(&err, "observed_events"), "10");
	CHECK_STR(xp_error_detail_get(&err, "max_events"), "4");
	CHECK_STR(xp_error_detail_get(&err, "path"), "\"in.jsonl\"");
	CHECK(err.nhints == 2 && xpt_contains(err.hints[0], "narrow the selectors"));
	CHECK(err.nhints == 2 && xpt_contains(err.hints[1], "--max-events 10 holds this capture"));
	CHECK_EQ_U64(c.count, 4); /* nothing beyond the bound was kept */
	xp_error_clear(&err);
	xp_capture_free(&c);

	/* exactly at the bound is fine */
	CHECK(decode_text(text, 10, &c, &err) == 0);
	CHECK_EQ_U64(c.count, 10);
	xp_capture_free(&c);

	/* past the bound, documents are still validated */
	{
		char *bad = xpt_subst(text, "\"sequence\":8,", "\"sequence\":8,\"zz\":1,");

		CHECK(decode_text(bad, 4, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "line 9: unknown field \"zz\"");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	free(text);
}

/* ---------------------------------------------------------------------- */
/* chunks, threads, file descriptors                                       */

static void test_chunks(void)
{
	char *text = jsonl_events(60, 100);
	const char *path = write_str("chunks.jsonl", text);
	struct xp_capture ref, c;
	struct xp_error err;
	char *want, *got;
	size_t sizes[] = { 1, 2, 3, 7, 64, 200, 333, 512, 1000, 1500, 4096, 100000 };
	size_t i;

	CHECK(decode_text(text, 0, &ref, &err) == 0);
	CHECK_EQ_U64(ref.count, 60);
	want = xpt_render_all(&ref);
	xp_capture_free(&ref);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int fd = open(path, O_RDONLY);

		xp_decode_test_chunk_bytes(sizes[i]);
		xp_capture_init(&c, 0);
		memset(&err, 0, sizeof(err));
		CHECK(xp_decode_event_stream_fd(fd, path, &c, &err) == 0);
		close(fd);
		got = xpt_render_all(&c);
		CHECK_STR(got, want);
		free(got);
		xp_capture_free(&c);
		xp_error_clear(&err);

		/* in memory too, with the bound crossed in the helper's half */
		CHECK(decode_text(text, 45, &c, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
		CHECK_STR(xp_error_detail_get(&err, "observed_events"), "60");
		CHECK_EQ_U64(c.count, 45);
		xp_error_clear(&err);
		xp_capture_free(&c);
	}

	/* errors keep their line whatever the chunking */
	{
		char *bad = xpt_subst(text, "\"sequence\":41,", "\"sequence\":41,\"zz\":1,");
		char *mixed = xpt_subst(text,
				    "\"sequence\":37,\"source\":\"ebpf\",\"event_type\":"
				    "\"host_function_exit\",\"pid\":100",
				    "\"sequence\":37,\"source\":\"ebpf\",\"event_type\":"
				    "\"host_function_exit\",\"pid\":300");
		char *broken = xpt_subst(text,
				     "{\"schema_version\":\"2.0\",\"session_id\":\"S\","
				     "\"event_id\":\"evt_50\"",
				     "{\"schema_version\":\"2.0\",\"session_id\":\"S\","
				     "\"event_id\":\"evt_50");

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			xp_decode_test_chunk_bytes(sizes[i]);
			CHECK(decode_text(bad, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK_STR(xp_error_detail_get(&err, "line"), "42");
			xp_error_clear(&err);
			xp_capture_free(&c);
			CHECK(decode_text(mixed, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK_STR(xp_error_detail_get(&err, "line"), "38");
			CHECK_STR(err.message, "completed capture mixes target PIDs 100 and 300");
			xp_error_clear(&err);
			xp_capture_free(&c);
			CHECK(decode_text(broken, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK_STR(xp_error_detail_get(&err, "line"), "51");
			xp_error_clear(&err);
			xp_capture_free(&c);
		}
		free(bad);
		free(mixed);
		free(broken);
	}

	/* multi-line documents: the split falls inside documents */
	{
		struct xpc_buf b = XPC_BUF_INIT;
		const char *p;
		char *pretty, *pw;

		for (p = text; *p; p++) {
			xpc_buf_putc(&b, *p);
			if (*p == ',' || *p == '{')
				xpc_buf_putc(&b, '\n');
		}
		pretty = xpc_buf_steal(&b);
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			xp_decode_test_chunk_bytes(sizes[i]);
			CHECK(decode_text(pretty, 0, &c, &err) == 0);
			got = xpt_render_all(&c);
			CHECK_STR(got, want);
			free(got);
			xp_capture_free(&c);
		}
		/* and an error deep inside one of them */
		pw = xpt_subst(pretty, "\"sequence\":33,", "\"sequence\":33,\n\"q\":1,");
		xp_decode_test_chunk_bytes(0);
		CHECK(decode_text(pw, 0, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "unknown field \"q\"");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(pw);
		free(pretty);
	}

	/* from a pipe: not seekable, lines counted as read */
	for (i = 0; i < 3; i++) {
		int pfd[2];
		pid_t child;
		char *bad = xpt_subst(text, "\"sequence\":52,", "\"sequence\":52,\"zz\":1,");
		const char *src = i == 2 ? bad : text;

		xp_decode_test_chunk_bytes(i == 0 ? 0 : 700);
		CHECK(pipe(pfd) == 0);
		child = fork();
		if (child == 0) {
			size_t n = strlen(src), off = 0;

			close(pfd[0]);
			while (off < n) {
				ssize_t w = write(pfd[1], src + off, n - off > 333 ? 333 : n - off);

				if (w <= 0)
					_exit(1);
				off += (size_t)w;
			}
			_exit(0);
		}
		close(pfd[1]);
		xp_capture_init(&c, 0);
		memset(&err, 0, sizeof(err));
		if (i == 2) {
			CHECK(xp_decode_event_stream_fd(pfd[0], "pipe", &c, &err) ==
			      -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK_STR(xp_error_detail_get(&err, "line"), "53");
		} else {
			CHECK(xp_decode_event_stream_fd(pfd[0], "pipe", &c, &err) == 0);
			CHECK_EQ_U64(c.count, 60);
		}
		close(pfd[0]);
		waitpid(child, NULL, 0);
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
	}
	xp_decode_test_chunk_bytes(0);

	/* a read error */
	{
		int fd = open(tmpdir, O_RDONLY | O_DIRECTORY);

		xp_capture_init(&c, 0);
		memset(&err, 0, sizeof(err));
		CHECK(xp_decode_event_stream_fd(fd, "dir", &c, &err) ==
		      -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "failed to read dir: Is a directory");
		xp_error_clear(&err);
		xp_capture_free(&c);
		close(fd);
	}
	free(want);
	free(text);
}

/* ---------------------------------------------------------------------- */
/* host captures                                                           */

static char *host_capture(unsigned pid, unsigned n, unsigned captured, unsigned dropped,
			  const char *extra)
{
	struct xpc_buf b = XPC_BUF_INIT;
	unsigned i;

	xpc_buf_printf(&b,
		       "{\"schema_version\":\"2.0\",\"ok\":true,\"session_id\":\"xp_trace_1\","
		       "\"target\":{\"pid\":%u,\"process_start_time\":5555},\"probe_id\":3,"
		       "\"captured\":%u,\"dropped\":%u,\"timed_out\":false,%s\"events\":[",
		       pid, captured, dropped, extra);
	for (i = 0; i < n; i++) {
		char *d = event_doc(i, pid, pid + 1, 500 + 20ull * i,
				    i % 2 ? "host_function_exit" : "host_function_entry",
				    i % 2 ? "uretprobe" : "uprobe");

		xpc_buf_printf(&b, "%s%s", i ? "," : "", d);
		free(d);
	}
	xpc_buf_puts(&b, "]}\n");
	return xpc_buf_steal(&b);
}

static void expect_host_error(const char *text, int code, const char *msg, const char *field)
{
	struct xp_capture c;
	struct xp_error err = { 0 };

	xp_capture_init(&c, 0);
	CHECK(xp_decode_host_capture(text, strlen(text), "h.json", &c, &err) == -code);
	CHECK_CONTAINS(err.message, msg);
	if (field)
		check_detail_str(&err, "field", field);
	xp_error_clear(&err);
	xp_capture_free(&c);
}

static void test_host_capture(void)
{
	struct xp_capture c;
	struct xp_error err = { 0 };
	char *t;

	t = host_capture(100, 4, 4, 3, "\"record_limit_reached\":true,");
	xp_capture_init(&c, 0);
	CHECK(xp_decode_host_capture(t, strlen(t), "h.json", &c, &err) == 0);
	CHECK_EQ_U64(c.count, 4);
	CHECK_EQ_U64(c.dropped, 3);
	CHECK(c.record_limit_reached);
	CHECK(c.has_pid && c.pid == 100);
	CHECK(c.has_start_time && c.process_start_time == 5555);
	xp_capture_free(&c);
	free(t);

	/* record_limit_reached defaults to false; an empty capture is fine */
	t = host_capture(100, 0, 0, 0, "");
	xp_capture_init(&c, 0);
	CHECK(xp_decode_host_capture(t, strlen(t), "h.json", &c, &err) == 0);
	CHECK_EQ_U64(c.count, 0);
	CHECK(!c.record_limit_reached);
	CHECK(c.has_pid && c.pid == 100);
	xp_capture_free(&c);
	free(t);

	/* the bound */
	t = host_capture(100, 9, 9, 0, "");
	xp_capture_init(&c, 5);
	CHECK(xp_decode_host_capture(t, strlen(t), "h.json", &c, &err) ==
	      -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_STR(err.message, "capture contains 9 events, exceeding the maximum of 5");
	CHECK_EQ_U64(c.count, 5);
	xp_error_clear(&err);
	xp_capture_free(&c);
	free(t);

	t = host_capture(100, 3, 2, 0, "");
	expect_host_error(t, XPROBE_E_TRACE_EXPORT_FAILED,
			  "host capture is inconsistent: captured is 2 but events holds 3",
			  "captured");
	free(t);
	t = host_capture(100, 2, 2, 0, "\"bogus\":1,");
	expect_host_error(t, XPROBE_E_TRACE_EXPORT_FAILED, "unknown field \"bogus\"", "bogus");
	free(t);
	t = host_capture(100, 2, 2, 0, "\"probe_id\":4,");
	expect_host_error(t, XPROBE_E_TRACE_EXPORT_FAILED, "duplicate field \"probe_id\"",
			  "probe_id");
	free(t);
	t = host_capture(100, 2, 2, 0, "");
	{
		char *bad = xpt_subst(t, "\"ok\":true", "\"ok\":false");

		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED,
				  "a host capture with ok false is not a completed capture", "ok");
		free(bad);
		bad = xpt_subst(t, "\"process_start_time\":5555}",
			    "\"process_start_time\":5555,\"x\":1}");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED, "unknown field \"target.x\"",
				  "target.x");
		free(bad);
		bad = xpt_subst(t, "\"target\":{\"pid\":100,", "\"target\":{");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED, "missing field \"target.pid\"",
				  "target.pid");
		free(bad);
		bad = xpt_subst(t, "\"timed_out\":false,", "");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED, "missing field \"timed_out\"",
				  "timed_out");
		free(bad);
		bad = xpt_subst(t, "\"probe_id\":3", "\"probe_id\":-3");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED, "found negative number -3",
				  "probe_id");
		free(bad);
		bad = xpt_subst(t, "\"schema_version\":\"2.0\"", "\"schema_version\":\"3.0\"");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED,
				  "unsupported schema version \"3.0\"", "schema_version");
		free(bad);
		/* an event of another pid than the target */
		bad = xpt_subst(t,
			    "\"event_id\":\"evt_1\",\"sequence\":1,\"source\":\"ebpf\","
			    "\"event_type\":\"host_function_exit\",\"pid\":100",
			    "\"event_id\":\"evt_1\",\"sequence\":1,\"source\":\"ebpf\","
			    "\"event_type\":\"host_function_exit\",\"pid\":101");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED,
				  "completed capture mixes target PIDs 100 and 101", NULL);
		free(bad);
		/* a nested event error names the event */
		bad = xpt_subst(t, "\"event_id\":\"evt_1\",", "\"event_id\":\"evt_1\",\"k\":0,");
		xp_capture_init(&c, 0);
		CHECK(xp_decode_host_capture(bad, strlen(bad), "h.json", &c, &err) ==
		      -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "failed to decode h.json: unknown field \"events[1].k\"");
		CHECK_STR(xp_error_detail_get(&err, "event_index"), "1");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(bad);
		bad = xpt_subst(t, "\"events\":[", "\"events\":{\"a\":[");
		bad[strlen(bad) - 2] = '}';
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED, "malformed JSON", NULL);
		free(bad);
		bad = xpt_subst(t, "\"events\":[{", "\"events\":[{\"events\":1,");
		expect_host_error(bad, XPROBE_E_TRACE_EXPORT_FAILED,
				  "unknown field \"events[0].events\"", NULL);
		free(bad);
	}
	free(t);
	expect_host_error("[]", XPROBE_E_TRACE_EXPORT_FAILED,
			  "expected a HostCaptureResult object, found an array", NULL);
	expect_host_error("{\"events\":[]} {}", XPROBE_E_TRACE_EXPORT_FAILED,
			  "a host-capture document must be the only document of its file", NULL);
	expect_host_error("{\"schema_version\":\"2.0\",\"ok\":true,\"session_id\":\"s\",\"target\":"
			  "{\"pid\":1,\"process_start_time\":2},\"probe_id\":0,\"captured\":0,"
			  "\"dropped\":0,\"timed_out\":true,\"events\":null}",
			  XPROBE_E_TRACE_EXPORT_FAILED, "expected an array of Event, found null",
			  "events");
}

/* ---------------------------------------------------------------------- */
/* xp_input_load: detection                                                */

static void expect_input_error(const char *path, int code, const char *msg)
{
	struct xp_capture c;
	struct xp_error err = { 0 };

	xp_capture_init(&c, 0);
	CHECK(xp_input_load(path, &c, &err) == -code);
	CHECK(err.code == code);
	CHECK_CONTAINS(err.message, msg);
	if (!xpt_contains(err.message, msg))
		fprintf(stderr, "  (message: %s)\n", err.message);
	xp_error_clear(&err);
	xp_capture_free(&c);
}

static void test_detection(void)
{
	struct xp_capture c;
	struct xp_error err = { 0 };
	const char *p;
	char *t;

	p = write_str("empty.jsonl", "");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED, "failed to decode ");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED, "empty.jsonl: capture is empty");
	p = write_str("blank.jsonl", " \n\n\t \r\n");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED, "capture is empty");
	p = write_file("cap.bin", "XPCUPTI\0\4\0\0\0\x58\0\0\0", 16);
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED,
			   "CUPTI ABI captures are not supported by this build");
	p = write_file("junk.bin",
		       "\x7f"
		       "ELF\2\1\1\0garbage",
		       16);
	xp_capture_init(&c, 0);
	CHECK(xp_input_load(p, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK_CONTAINS(err.message, "junk.bin: unrecognized capture format");
	CHECK_STR(xp_error_detail_get(&err, "first_bytes"), "\"7f454c46020101006761726261676500\"");
	xp_error_clear(&err);
	xp_capture_free(&c);
	p = write_str("arr.json", "[{\"a\":1}]");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED, "unrecognized capture format");
	/* directories and .xtf files go to the xtf reader, which explains */
	expect_input_error(tmpdir, XPROBE_E_TRACE_EXPORT_FAILED, "not a libxprobe session");
	p = write_file("bad.xtf", "\x89XTF\r\n\x1a\nshort", 13);
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED, "failed to decode ");
	expect_input_error(tmp_path("missing.jsonl"), XPROBE_E_TRACE_EXPORT_FAILED,
			   "missing.jsonl: No such file or directory");
	p = write_str("trace.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED,
			   "Chrome Trace Event files cannot be read back");

	/* a host capture, its keys in any order */
	t = host_capture(100, 2, 2, 1, "");
	p = write_str("host.json", t);
	xp_capture_init(&c, 0);
	CHECK(xp_input_load(p, &c, &err) == 0);
	CHECK_EQ_U64(c.count, 2);
	CHECK_EQ_U64(c.dropped, 1);
	xp_capture_free(&c);
	free(t);
	p = write_str("host2.json", "\n {\"events\":[],\"schema_version\":\"2.0\",\"ok\":true,"
				    "\"session_id\":\"s\",\"target\":{\"pid\":1,"
				    "\"process_start_time\":2},\"probe_id\":0,\"captured\":0,"
				    "\"dropped\":0,\"timed_out\":false}");
	xp_capture_init(&c, 0);
	CHECK(xp_input_load(p, &c, &err) == 0);
	CHECK_EQ_U64(c.count, 0);
	CHECK(c.has_pid && c.pid == 1);
	xp_capture_free(&c);
	/* a host capture is the only document of its file */
	p = write_str("host3.json", "{\"events\":[],\"schema_version\":\"2.0\",\"ok\":true,"
				    "\"session_id\":\"s\",\"target\":{\"pid\":1,"
				    "\"process_start_time\":2},\"probe_id\":0,\"captured\":0,"
				    "\"dropped\":0,\"timed_out\":false}\n{}\n");
	expect_input_error(p, XPROBE_E_TRACE_EXPORT_FAILED,
			   "a host-capture document must be the only document of its file");
	/* an Event stream whose first line is long: still an Event stream */
	{
		struct xpc_buf b = XPC_BUF_INIT;
		char *d = event_doc(0, 9, 10, 1, "tracepoint", "tracepoint");
		char *big;
		int i;

		xpc_buf_puts(&b, "\"attributes\":{\"blob\":\"");
		for (i = 0; i < 100000; i++)
			xpc_buf_putc(&b, 'a' + i % 26);
		xpc_buf_puts(&b, "\"}");
		big = xpt_subst(d, "\"attributes\":{}", xpc_buf_str(&b));
		xpc_buf_reset(&b);
		xpc_buf_printf(&b, "%s\n%s\n", big, d);
		p = write_str("long.jsonl", xpc_buf_str(&b));
		xp_capture_init(&c, 0);
		CHECK(xp_input_load(p, &c, &err) == 0);
		CHECK_EQ_U64(c.count, 2);
		xp_capture_free(&c);
		xpc_buf_free(&b);
		free(big);
		free(d);
	}
}

/* ---------------------------------------------------------------------- */
/* xp_inputs_load: several inputs                                          */

static void test_inputs(void)
{
	struct xp_capture c;
	struct xp_error err = { 0 };
	const char *paths[4];
	char *a = jsonl_events(5, 100), *one = jsonl_events(1, 100), *b, *h;
	size_t i;

	/* b: later timestamps interleaved with a, another symbol */
	b = xpt_subst(one, "\"symbol\":\"work\"", "\"symbol\":\"other\"");
	free(one);
	{
		char *b2 = xpt_subst(b, "\"timestamp_raw\":1000,\"timestamp_ns\":1000",
				 "\"timestamp_raw\":1015,\"timestamp_ns\":1015");

		free(b);
		b = b2;
	}
	h = host_capture(100, 2, 2, 2, "");
	paths[0] = strdup(write_str("in-a.jsonl", a));
	paths[1] = strdup(write_str("in-b.jsonl", b));
	paths[2] = strdup(write_str("in-h.json", h));
	{
		char *h2 = host_capture(100, 1, 1, 3, "");

		paths[3] = strdup(write_str("in-h2.json", h2));
		free(h2);
	}
	xp_capture_init(&c, 100);
	CHECK(xp_inputs_load(paths, 4, &c, &err) == 0);
	/* h and h2 share one event identical in every field: kept once */
	CHECK_EQ_U64(c.count, 5 + 1 + 2 + 1 - 1);
	CHECK_EQ_U64(c.duplicates_dropped, 1);
	CHECK_EQ_U64(c.dropped, 5);
	for (i = 0; i < c.count; i++) {
		CHECK_EQ_U64(c.events[i].sequence, i);
		if (i)
			CHECK(c.events[i - 1].timestamp_ns <= c.events[i].timestamp_ns);
	}
	/* the event of input b sits between a's 1010 and 1020, its symbol
	 * interned in the merged capture */
	for (i = 0; i < c.count; i++)
		if (c.events[i].timestamp_ns == 1015)
			break;
	CHECK(i < c.count);
	if (i < c.count) {
		CHECK_STR(xp_capture_str(&c, c.events[i].host.symbol), "other");
		CHECK_EQ_U64(c.events[i].sequence, i);
		/* host-capture events (timestamps 500, 520) come first */
		CHECK_EQ_U64(c.events[0].timestamp_ns, 500);
		CHECK_EQ_U64(i, 4);
	}
	xp_capture_free(&c);

	/* the bound counts across inputs */
	xp_capture_init(&c, 6);
	CHECK(xp_inputs_load(paths, 4, &c, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_STR(err.message, "capture contains 9 events, exceeding the maximum of 6");
	CHECK_STR(xp_error_detail_get(&err, "observed_events"), "9");
	CHECK_EQ_U64(c.count, 6);
	xp_error_clear(&err);
	xp_capture_free(&c);
	xp_capture_init(&c, 5); /* the first input fills it exactly */
	CHECK(xp_inputs_load(paths, 4, &c, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK_STR(xp_error_detail_get(&err, "observed_events"), "9");
	CHECK_CONTAINS(xp_error_detail_get(&err, "path"), "in-b.jsonl");
	xp_error_clear(&err);
	xp_capture_free(&c);

	/* mixed pids across inputs */
	{
		char *o = jsonl_events(2, 200);
		const char *mixed[2] = { paths[0], NULL };

		mixed[1] = write_str("in-o.jsonl", o);
		xp_capture_init(&c, 100);
		CHECK(xp_inputs_load(mixed, 2, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_STR(err.message, "completed capture mixes target PIDs 100 and 200");
		CHECK_CONTAINS(xp_error_detail_get(&err, "path"), "in-o.jsonl");
		CHECK_STR(xp_error_detail_get(&err, "line"), "1");
		xp_error_clear(&err);
		xp_capture_free(&c);
		free(o);
	}
	/* a broken input after good ones */
	{
		const char *two[2] = { paths[0], NULL };

		two[1] = write_str("in-x.jsonl", "{\"schema_version\":\"2.0\"}\n");
		xp_capture_init(&c, 100);
		CHECK(xp_inputs_load(two, 2, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK_CONTAINS(err.message, "in-x.jsonl: line 1: missing field \"session_id\"");
		xp_error_clear(&err);
		xp_capture_free(&c);
	}
	for (i = 0; i < 4; i++)
		free((char *)paths[i]);
	free(a);
	free(b);
	free(h);
}

static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	test_round_trip();
	test_strict_fields();
	test_strict_numbers();
	test_document_errors();
	test_mixed_targets();
	test_max_events();
	test_chunks();
	test_host_capture();
	test_detection();
	test_inputs();
	cleanup();
	TEST_MAIN_END();
}
