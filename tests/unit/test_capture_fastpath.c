/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_fastpath.c - the canonical-line fast path of the Event
 * stream decoder (src/capture/json/decode_fast.c in front of decode_json.cc's
 * simdjson path).  Every check decodes the same bytes with the fast path
 * on and off (xp_decode_test_fastpath) and requires the same result --
 * events rendered identically, or the same error with the same details --
 * and uses the fast path's counters (xp_decode_test_fast_stats) to check
 * which path did the work: canonical lines of every event kind are taken
 * by the fast path, every deviation from the canonical form is declined
 * and decoded (or rejected) by simdjson exactly as before, and a failure
 * inside a segment makes simdjson decode the segment again.
 */
#include <stdlib.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "capture/decode_json.h"
#include "model/event_json.h"
#include "capture_text.h"
#include "testlib.h"

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */

struct outcome {
	int rc;
	size_t count;
	char *events; /* rendered, on success */
	char *error; /* rendered error fields */
	char *message; /* the error's message */
	struct xp_decode_fast_stats st; /* of this decode */
};

static void outcome_free(struct outcome *o)
{
	free(o->events);
	free(o->error);
	free(o->message);
}

/* Decode @text (bound @max, chunks of @chunk bytes, 0 = default) with the
 * fast path on (@fast 1) or off. */
static struct outcome decode(const char *text, size_t max, size_t chunk, int fast)
{
	struct xp_capture c;
	struct xp_error err = { 0 };
	struct outcome o;

	xp_decode_test_fast_stats(&o.st); /* reset */
	xp_decode_test_fastpath(fast);
	xp_decode_test_chunk_bytes(chunk);
	xp_capture_init(&c, max);
	o.rc = xp_decode_event_stream(text, strlen(text), "in.jsonl", &c, &err);
	xp_decode_test_chunk_bytes(0);
	xp_decode_test_fastpath(-1);
	xp_decode_test_fast_stats(&o.st);
	o.count = c.count;
	o.events = o.rc == 0 ? xpt_render_all(&c) : strdup("");
	o.error = xpt_render_error(&err);
	o.message = strdup(err.message);
	xp_error_clear(&err);
	xp_capture_free(&c);
	return o;
}

/*
 * Decode @text with the fast path on and off; check the results are the
 * same; return the fast path's counts.  *rc_out gets the return code and
 * @msg_out (may be NULL) a copy of the error's message.
 */
static struct xp_decode_fast_stats same_both_ways(const char *text, size_t max, size_t chunk,
						  int *rc_out, char **msg_out)
{
	struct outcome f = decode(text, max, chunk, 1), s = decode(text, max, chunk, 0);

	CHECK_EQ_U64(f.rc, s.rc);
	CHECK_EQ_U64(f.count, s.count);
	CHECK_STR(f.error, s.error);
	CHECK_STR(f.events, s.events);
	CHECK_EQ_U64(s.st.fast_lines, 0); /* off is off */
	if (rc_out)
		*rc_out = f.rc;
	if (msg_out)
		*msg_out = strdup(f.message);
	outcome_free(&f);
	outcome_free(&s);
	return f.st;
}

/* ---------------------------------------------------------------------- */
/* canonical lines of every kind                                           */

/* Exactly what event_json.c writes (attribute keys sorted, no floats). */
static const char *const canonical[] = {
	/* uprobe entry, every host field set */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_0\",\"sequence\":0,"
	"\"source\":\"ebpf\",\"event_type\":\"host_function_entry\",\"pid\":4242,\"tid\":4243,"
	"\"cpu\":3,\"timestamp_raw\":18446744073709551615,\"timestamp_ns\":1000,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":7,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"uprobe\","
	"\"binary_path\":\"/srv/app/bin/server\",\"build_id\":\"abcdef0123\","
	"\"symbol\":\"_ZN3app6ServerC2Ev\",\"symbol_demangled\":\"app::Server::Server()\","
	"\"offset\":4096,\"return_value\":null,\"arguments\":[]},\"cuda\":null,\"nvtx\":null,"
	"\"attributes\":{}}",
	/* uretprobe */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_1\",\"sequence\":1,"
	"\"source\":\"ebpf\",\"event_type\":\"host_function_exit\",\"pid\":4242,\"tid\":4243,"
	"\"cpu\":3,\"timestamp_raw\":1005,\"timestamp_ns\":1005,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"uretprobe\","
	"\"binary_path\":\"/srv/app/bin/server\",\"build_id\":null,"
	"\"symbol\":\"_ZN3app6ServerC2Ev\",\"symbol_demangled\":\"app::Server::Server()\","
	"\"offset\":null,\"return_value\":null,\"arguments\":[]},\"cuda\":null,\"nvtx\":null,"
	"\"attributes\":{}}",
	/* syscall entry, arguments of several shapes, canonical escapes */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_2\",\"sequence\":2,"
	"\"source\":\"ebpf\",\"event_type\":\"syscall_entry\",\"pid\":4242,\"tid\":4244,"
	"\"cpu\":0,\"timestamp_raw\":1010,\"timestamp_ns\":1010,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"syscall\","
	"\"binary_path\":null,\"build_id\":null,\"symbol\":\"read\",\"symbol_demangled\":null,"
	"\"offset\":null,\"return_value\":null,\"arguments\":["
	"{\"index\":0,\"abi_type\":\"u64\",\"value\":3,\"read_error\":null},"
	"{\"index\":1,\"abi_type\":\"u64\",\"value\":140737488355328,\"read_error\":null},"
	"{\"index\":2,\"abi_type\":\"u64\",\"value\":18446744073709551615,\"read_error\":null},"
	"{\"index\":3,\"abi_type\":\"char*\",\"value\":\"tab\\there \\\"q\\\" \\\\ \\u0001\\u001f\","
	"\"read_error\":null},"
	"{\"index\":4,\"abi_type\":\"struct\",\"value\":{\"a\":[1,-2,true,null],\"b\":{},"
	"\"c\":\"\xc3\xa9\"},\"read_error\":null},"
	"{\"index\":65535,\"abi_type\":\"u64\",\"value\":null,\"read_error\":\"EFAULT\"}]},"
	"\"cuda\":null,\"nvtx\":null,\"attributes\":{\"tracepoint_category\":\"syscalls\"}}",
	/* syscall exit: the most negative return value */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_3\",\"sequence\":3,"
	"\"source\":\"ebpf\",\"event_type\":\"syscall_exit\",\"pid\":4242,\"tid\":4244,"
	"\"cpu\":1,\"timestamp_raw\":1020,\"timestamp_ns\":1020,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"syscall\","
	"\"binary_path\":null,\"build_id\":null,\"symbol\":\"read\",\"symbol_demangled\":null,"
	"\"offset\":null,\"return_value\":-9223372036854775808,\"arguments\":[]},"
	"\"cuda\":null,\"nvtx\":null,\"attributes\":{\"tracepoint_category\":\"syscalls\"}}",
	/* tracepoint, symbol with escapes (decoded before interning) */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_4\",\"sequence\":4,"
	"\"source\":\"ebpf\",\"event_type\":\"tracepoint\",\"pid\":4242,\"tid\":4244,"
	"\"cpu\":1,\"timestamp_raw\":1025,\"timestamp_ns\":1025,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":987654,\"host\":{\"probe_kind\":\"tracepoint\","
	"\"binary_path\":null,\"build_id\":null,\"symbol\":\"sched\\\\switch \\\"x\\\"\\u0000\","
	"\"symbol_demangled\":null,\"offset\":null,\"return_value\":0,\"arguments\":[]},"
	"\"cuda\":null,\"nvtx\":null,\"attributes\":{\"tracepoint_category\":\"sched\"}}",
	/* CUDA API callback */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_5\",\"sequence\":5,"
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
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_6\",\"sequence\":6,"
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
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_7\",\"sequence\":7,"
	"\"source\":\"cupti_activity\",\"event_type\":\"gpu_memcpy_end\",\"pid\":4242,"
	"\"tid\":0,\"cpu\":null,\"timestamp_raw\":1050,\"timestamp_ns\":1050,"
	"\"clock_domain\":\"cupti\",\"timestamp_error_ns\":0,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":{\"device_id\":1,"
	"\"context_id\":null,\"stream_id\":7,\"correlation_id\":null,"
	"\"runtime_correlation_id\":null,\"callback_domain\":null,\"callback_id\":null,"
	"\"kernel_name\":null,\"kernel_name_mangled\":null,\"start_ns\":null,\"end_ns\":1050,"
	"\"grid\":null,\"block\":null,\"bytes\":4096,\"memcpy_kind\":\"unknown\"},"
	"\"nvtx\":null,\"attributes\":{\"memset_value\":0}}",
	/* NVTX range end of a process range, non-ASCII name */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_8\",\"sequence\":8,"
	"\"source\":\"cupti_callback\",\"event_type\":\"nvtx_range_end\",\"pid\":4242,"
	"\"tid\":4246,\"cpu\":null,\"timestamp_raw\":1060,\"timestamp_ns\":1060,"
	"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
	"\"process_start_time\":null,\"host\":null,\"cuda\":null,\"nvtx\":{"
	"\"name\":\"step \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\",\"name_complete\":false,"
	"\"range_kind\":\"process\",\"range_id\":18446744073709551615,\"start_tid\":4245},"
	"\"attributes\":{}}",
	/* our USDT event, attribute values of every kind but floats */
	"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_9\",\"sequence\":9,"
	"\"source\":\"ebpf\",\"event_type\":\"marker\",\"pid\":4242,\"tid\":4242,\"cpu\":1,"
	"\"timestamp_raw\":1070,\"timestamp_ns\":1070,\"clock_domain\":\"host_monotonic\","
	"\"timestamp_error_ns\":null,\"process_start_time\":987654,\"host\":{"
	"\"probe_kind\":\"usdt\",\"binary_path\":\"/usr/bin/python3.11\",\"build_id\":null,"
	"\"symbol\":\"gc__start\",\"symbol_demangled\":null,\"offset\":null,"
	"\"return_value\":0,\"arguments\":[]},\"cuda\":null,\"nvtx\":null,\"attributes\":{"
	"\"a\":[],\"b\":false,\"c\":-3,\"e\":null,\"f\":{\"z\":1,\"a\":[{}]},\"g\":true,"
	"\"usdt_provider\":\"python\"}}",
};

#define NCANON (sizeof(canonical) / sizeof(canonical[0]))

static char *join_lines(const char *const *lines, size_t n)
{
	struct xpc_buf b = XPC_BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		xpc_buf_puts(&b, lines[i]);
		xpc_buf_putc(&b, '\n');
	}
	return xpc_buf_steal(&b);
}

static void test_canonical(void)
{
	char *text = join_lines(canonical, NCANON);
	struct outcome o = decode(text, 0, 0, 1);
	struct xp_decode_fast_stats st;
	int rc;

	/* every line taken by the fast path, rendered back byte for byte */
	CHECK_EQ_U64(o.rc, 0);
	CHECK_EQ_U64(o.count, NCANON);
	CHECK_EQ_U64(o.st.fast_lines, NCANON);
	CHECK_EQ_U64(o.st.declined, 0);
	CHECK_EQ_U64(o.st.reruns, 0);
	CHECK_STR(o.events, text);
	outcome_free(&o);
	/* and what simdjson makes of them */
	st = same_both_ways(text, 0, 0, &rc, NULL);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(st.fast_lines, NCANON);

	/* one line at a time, through the fast path alone: the same event,
	 * struct for struct, as simdjson's */
	for (size_t i = 0; i < NCANON; i++) {
		struct xp_capture cf, cs;
		struct xp_error err = { 0 };

		xp_capture_init(&cf, 0);
		xp_capture_init(&cs, 0);
		CHECK_EQ_U64(xp_decode_test_fast_line(canonical[i], strlen(canonical[i]), &cf), 1);
		xp_decode_test_fastpath(0);
		CHECK(xp_decode_event_stream(canonical[i], strlen(canonical[i]), "l", &cs, &err) ==
		      0);
		xp_decode_test_fastpath(-1);
		CHECK(cf.count == 1 && cs.count == 1);
		if (cf.count == 1 && cs.count == 1) {
			CHECK(memcmp(&cf.events[0], &cs.events[0], sizeof(cf.events[0])) == 0);
			CHECK_EQ_U64(cf.nargs, cs.nargs);
			CHECK_EQ_U64(cf.nattrs, cs.nattrs);
			CHECK_EQ_U64(cf.strings.count, cs.strings.count);
		}
		xp_error_clear(&err);
		xp_capture_free(&cf);
		xp_capture_free(&cs);
	}
	free(text);
}

/* ---------------------------------------------------------------------- */
/* deviations: declined, then decoded by simdjson as before                */

struct deviation {
	const char *from, *to; /* applied to canonical[0] (uprobe) or [2] */
	int line; /* index into canonical[] */
	const char *error; /* NULL: decodes; else part of the message */
};

static const struct deviation deviations[] = {
	/* decodes all the same */
	{ "\"pid\":4242", "\"pid\": 4242", 0, NULL },
	{ "{\"schema_version\"", " {\"schema_version\"", 0, NULL },
	{ "\"attributes\":{}}", "\"attributes\":{}} ", 0, NULL },
	{ "\"attributes\":{}}", "\"attributes\":{}}\r", 0, NULL },
	{ "\"pid\":4242,\"tid\":4243", "\"tid\":4243,\"pid\":4242", 0, NULL },
	{ "\"cpu\":3,", "", 0, NULL },
	{ "\"cuda\":null,", "", 0, NULL },
	{ ",\"attributes\":{}", "", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":1.5}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":1e3}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":-0}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":\"\\/\"}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":\"\\u00e9\"}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":\"\\u001F\"}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":\"\\u000a\"}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"x\":\"\\ud83d\\ude00\"}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"a\\nb\":1}", 0, NULL },
	{ "\"attributes\":{}", "\"attributes\":{\"d\":[[[[[[[[[[1]]]]]]]]]]}", 0, NULL },
	{ "\"return_value\":null", "\"return_value\":-0", 0, NULL },
	{ "\"symbol\":\"_ZN", "\"symbol\":\"\\u005fZN", 0, NULL },
	{ "\"source\":\"ebpf\"", "\"source\":\"ebp\\u0066\"", 0, NULL },
	{ "\"value\":3,", "\"value\":3.0,", 2, NULL },
	{ "\"index\":0,", "\"index\": 0,", 2, NULL },
	/* rejected, with simdjson's message */
	{ "\"pid\":4242,", "\"pid\":4242,\"extra\":1,", 0, "unknown field \"extra\"" },
	{ "\"attributes\":{}}", "\"attributes\":{},\"zz\":1}", 0, "unknown field \"zz\"" },
	{ "\"pid\":4242,", "\"pid\":4242,\"pid\":4242,", 0, "duplicate field \"pid\"" },
	{ "\"session_id\":\"S\",", "", 0, "missing field \"session_id\"" },
	{ "\"probe_kind\":\"uprobe\",", "", 0, "missing field \"host.probe_kind\"" },
	{ "\"attributes\":{}", "\"attributes\":{\"k\":1,\"k\":1}", 0,
	  "duplicate field \"attributes.k\"" },
	{ "\"attributes\":{}", "\"attributes\":{\"k\":{\"a\":1,\"a\":2}}", 0,
	  "duplicate field \"attributes.k.a\"" },
	{ "\"attributes\":{}", "\"attributes\":{\"a\\u0000b\":1}", 0, "NUL character" },
	{ "\"schema_version\":\"2.0\"", "\"schema_version\":\"1.0\"", 0,
	  "unsupported schema version" },
	{ "\"source\":\"ebpf\"", "\"source\":\"bpf\"", 0, "unknown value \"bpf\"" },
	{ "\"pid\":4242", "\"pid\":4294967296", 0, "out of range" },
	{ "\"tid\":4243", "\"tid\":04243", 0, "malformed JSON" },
	{ "\"sequence\":0", "\"sequence\":18446744073709551616", 0, "malformed JSON" },
	{ "\"index\":0,", "\"index\":65536,", 2, "out of range for an unsigned 16-bit" },
	{ "/srv/app", "/srv/\xff", 0, "malformed JSON" },
	{ "/srv/app", "/srv/\xc0\xaf", 0, "malformed JSON" },
	{ "/srv/app", "/srv/\xed\xa0\x80", 0, "malformed JSON" },
	{ "/srv/app", "/srv/\xf4\x90\x80\x80", 0, "malformed JSON" },
	{ "/srv/app", "/srv/\tapp", 0, "malformed JSON" },
	{ "\"symbol\":\"_ZN", "\"symbol\":\"\\ud800ZN", 0, "malformed JSON" },
	{ "\"symbol\":\"_ZN", "\"symbol\":\"\\x41ZN", 0, "malformed JSON" },
};

static void test_deviations(void)
{
	for (size_t i = 0; i < sizeof(deviations) / sizeof(deviations[0]); i++) {
		const struct deviation *dv = &deviations[i];
		/* the deviating line between two canonical ones */
		char *bad = xpt_subst(canonical[dv->line], dv->from, dv->to);
		struct xpc_buf b = XPC_BUF_INIT;
		struct xp_decode_fast_stats st;
		char *msg = NULL;
		int rc;

		xpc_buf_printf(&b, "%s\n%s\n%s\n", canonical[1], bad, canonical[1]);
		st = same_both_ways(xpc_buf_str(&b), 0, 0, &rc, &msg);
		CHECK(st.declined >= 1);
		if (dv->error) {
			CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK(xpt_contains(msg, dv->error));
			CHECK(xpt_contains(msg, "line 2"));
			CHECK(st.reruns == 1);
		} else {
			CHECK_EQ_U64(rc, 0);
			CHECK_EQ_U64(st.fast_lines, 2); /* the canonical ones */
		}
		if (rc != 0 && dv->error && !xpt_contains(msg, dv->error))
			fprintf(stderr, "  deviation %zu: %s\n", i, msg);
		/* and the line alone is declined by the fast path itself */
		{
			struct xp_capture c;

			xp_capture_init(&c, 0);
			CHECK_EQ_U64(xp_decode_test_fast_line(bad, strlen(bad), &c), 0);
			xp_capture_free(&c);
		}
		free(msg);
		free(bad);
		xpc_buf_free(&b);
	}
}

/* ---------------------------------------------------------------------- */
/* streams: errors, targets, bounds, chunks                                */

/* n canonical uprobe events of pid 100, alternating entry and exit, over
 * three threads */
static char *stream(unsigned n, unsigned pid)
{
	struct xpc_buf b = XPC_BUF_INIT;

	for (unsigned i = 0; i < n; i++)
		xpc_buf_printf(
			&b,
			"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_%u\","
			"\"sequence\":%u,\"source\":\"ebpf\",\"event_type\":\"%s\",\"pid\":%u,"
			"\"tid\":%u,\"cpu\":1,\"timestamp_raw\":%u,\"timestamp_ns\":%u,"
			"\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
			"\"process_start_time\":5555,\"host\":{\"probe_kind\":\"%s\","
			"\"binary_path\":\"/bin/app\",\"build_id\":null,\"symbol\":\"work\","
			"\"symbol_demangled\":null,\"offset\":null,\"return_value\":null,"
			"\"arguments\":[{\"index\":0,\"abi_type\":\"u64\",\"value\":%u,"
			"\"read_error\":null}]},\"cuda\":null,\"nvtx\":null,"
			"\"attributes\":{\"k\":\"v%u\"}}\n",
			i, i, i % 2 ? "host_function_exit" : "host_function_entry", pid, pid + 1 + i % 3,
			1000 + 10 * i, 1000 + 10 * i, i % 2 ? "uretprobe" : "uprobe", i % 4, i % 5);
	return xpc_buf_steal(&b);
}

static void test_stream_errors(void)
{
	char *good = stream(40, 100);
	struct xp_decode_fast_stats st;
	char *msg = NULL;
	int rc;

	/* a repetitive stream: all fast, kept tails taken */
	st = same_both_ways(good, 0, 0, &rc, NULL);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(st.fast_lines, 40);

	/* an unknown field in line 7, a malformed line 30: simdjson checks a
	 * whole batch first, so the malformed line wins, both ways */
	{
		char *a = xpt_subst(good, "\"sequence\":6,", "\"sequence\":6,\"x\":0,");
		char *b = xpt_subst(a, "{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_29\"",
				"{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_29");

		st = same_both_ways(b, 0, 0, &rc, &msg);
		CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
		CHECK(xpt_contains(msg, "line 30: malformed JSON"));
		CHECK(st.reruns == 1);
		free(msg);
		/* the unknown field alone */
		st = same_both_ways(a, 0, 0, &rc, &msg);
		CHECK(xpt_contains(msg, "line 7: unknown field \"x\""));
		free(msg);
		free(a);
		free(b);
	}
	/* a second pid in a line the fast path accepts */
	{
		char *bad = xpt_subst(good, "\"sequence\":12,\"source\":\"ebpf\",\"event_type\":\"host_function_entry\",\"pid\":100",
				  "\"sequence\":12,\"source\":\"ebpf\",\"event_type\":\"host_function_entry\",\"pid\":200");

		st = same_both_ways(bad, 0, 0, &rc, &msg);
		CHECK(xpt_contains(msg, "completed capture mixes target PIDs 100 and 200"));
		CHECK(st.reruns == 1);
		free(msg);
		/* ... and, in small chunks, in the helper's half (the details,
		 * line included, are compared by same_both_ways) */
		for (size_t chunk = 300; chunk < 3000; chunk += 677) {
			st = same_both_ways(bad, 0, chunk, &rc, &msg);
			CHECK(xpt_contains(msg, "completed capture mixes target PIDs 100 and 200"));
			free(msg);
		}
		free(bad);
	}
	/* a process start time that changes, in line 22 */
	{
		char *l22 = strstr(good, "{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"evt_21\"");
		char *rest = xpt_subst(l22, "\"process_start_time\":5555", "\"process_start_time\":5556");
		struct xpc_buf b = XPC_BUF_INIT;

		xpc_buf_append(&b, good, (size_t)(l22 - good));
		xpc_buf_puts(&b, rest);
		st = same_both_ways(xpc_buf_str(&b), 0, 0, &rc, &msg);
		CHECK(xpt_contains(msg, "pid 100 with process start times 5555 and 5556"));
		free(msg);
		xpc_buf_free(&b);
		free(rest);
	}
	/* a cut last line, and garbage glued to the last complete line */
	{
		size_t n = strlen(good);
		char *cut = strndup(good, n - 30);
		struct xpc_buf b = XPC_BUF_INIT;

		st = same_both_ways(cut, 0, 0, &rc, &msg);
		CHECK(xpt_contains(msg, "line 40: truncated document at end of input"));
		free(msg);
		xpc_buf_puts(&b, good);
		xpc_buf_puts(&b, ",\"cuda\":null,\"nvtx\":{\"name\":\"ste");
		for (size_t chunk = 0; chunk < 4000; chunk += 997) {
			st = same_both_ways(xpc_buf_str(&b), 0, chunk, &rc, &msg);
			CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
			free(msg);
		}
		xpc_buf_free(&b);
		free(cut);
	}
	free(good);
}

static void test_bounds_and_chunks(void)
{
	char *good = stream(60, 100);
	struct xp_decode_fast_stats st;
	size_t chunks[] = { 0, 1, 7, 64, 333, 700, 1000, 1500, 4096, 100000 };
	char *msg = NULL;
	int rc;

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		/* whole */
		st = same_both_ways(good, 0, chunks[i], &rc, NULL);
		CHECK_EQ_U64(rc, 0);
		CHECK(st.fast_lines > 0 || chunks[i] < 700);
		/* bounded: counted past the bound, the same total */
		st = same_both_ways(good, 45, chunks[i], &rc, &msg);
		CHECK(rc == -XPROBE_E_EVENT_RATE_TOO_HIGH);
		CHECK(xpt_contains(msg, "capture contains 60 events, exceeding the maximum of 45"));
		free(msg);
	}
	/* canonical lines around pretty-printed and spaced documents */
	{
		struct xpc_buf b = XPC_BUF_INIT;
		char *spaced = xpt_subst(canonical[0], "\"pid\":4242,", "\"pid\": 4242, ");

		xpc_buf_printf(&b, "%s\n{\n  \"schema_version\": \"2.0\", \"session_id\": \"S\",\n"
			       "  \"event_id\": \"e\", \"sequence\": 1, \"source\": \"ebpf\",\n"
			       "  \"event_type\": \"tracepoint\", \"pid\": 4242, \"tid\": 2,\n"
			       "  \"timestamp_raw\": 3, \"timestamp_ns\": 4,\n"
			       "  \"clock_domain\": \"host_monotonic\"\n}\n%s\n\n%s\n",
			       canonical[2], spaced, canonical[3]);
		for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			st = same_both_ways(xpc_buf_str(&b), 0, chunks[i], &rc, NULL);
			CHECK_EQ_U64(rc, 0);
		}
		/* (after a document of several lines, simdjson takes the rest of
		 * the segment) */
		st = same_both_ways(xpc_buf_str(&b), 0, 0, &rc, NULL);
		CHECK_EQ_U64(st.fast_lines, 1);
		free(spaced);
		xpc_buf_free(&b);
	}
	free(good);
}

/* Many lines whose tails never repeat: the kept tails stop being looked
 * up, and nothing changes. */
static void test_unique_tails(void)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xp_decode_fast_stats st;
	int rc;

	for (unsigned i = 0; i < 3000; i++)
		xpc_buf_printf(&b,
			       "{\"schema_version\":\"2.0\",\"session_id\":\"S\",\"event_id\":\"e\","
			       "\"sequence\":%u,\"source\":\"ebpf\",\"event_type\":\"tracepoint\","
			       "\"pid\":7,\"tid\":8,\"cpu\":null,\"timestamp_raw\":%u,\"timestamp_ns\":%u,"
			       "\"clock_domain\":\"host_monotonic\",\"timestamp_error_ns\":null,"
			       "\"process_start_time\":null,\"host\":null,\"cuda\":null,\"nvtx\":null,"
			       "\"attributes\":{\"n\":%u}}\n",
			       i, i, i, i);
	st = same_both_ways(xpc_buf_str(&b), 0, 0, &rc, NULL);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(st.fast_lines, 3000);
	xpc_buf_free(&b);
}

/* XPROBE_DECODE_NO_FASTPATH turns it off (tests set it per decode). */
static void test_environment(void)
{
	char *text = join_lines(canonical, 3);
	struct xp_capture c;
	struct xp_error err = { 0 };
	struct xp_decode_fast_stats st;

	xp_decode_test_fast_stats(&st);
	setenv("XPROBE_DECODE_NO_FASTPATH", "1", 1);
	xp_capture_init(&c, 0);
	CHECK(xp_decode_event_stream(text, strlen(text), "e", &c, &err) == 0);
	xp_capture_free(&c);
	xp_decode_test_fast_stats(&st);
	CHECK_EQ_U64(st.fast_lines, 0);
	setenv("XPROBE_DECODE_NO_FASTPATH", "0", 1);
	xp_capture_init(&c, 0);
	CHECK(xp_decode_event_stream(text, strlen(text), "e", &c, &err) == 0);
	xp_capture_free(&c);
	xp_decode_test_fast_stats(&st);
	CHECK_EQ_U64(st.fast_lines, 3);
	unsetenv("XPROBE_DECODE_NO_FASTPATH");
	free(text);
}

int main(void)
{
	test_canonical();
	test_deviations();
	test_stream_errors();
	test_bounds_and_chunks();
	test_unique_tails();
	test_environment();
	TEST_MAIN_END();
}
