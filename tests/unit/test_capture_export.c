/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_export.c - the exporters of src/capture/export.c: JSONL
 * content equals the Event renderer's line by line, the Chrome document
 * byte for byte on a small capture of every event family, mode 0600 under
 * umask 0, atomic replacement (forced failure before the rename leaves
 * the old file and no temporary), and TRACE_EXPORT_FAILED for paths that
 * cannot be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/atomic_file.h"
#include "../../common/json.h"
#include "capture/capture_io.h"
#include "model/event_json.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/xp-export-test-XXXXXX";

static char *path_in(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static char *slurp(const char *path, size_t *len)
{
	struct xpc_buf b = XPC_BUF_INIT;
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		xpc_buf_append(&b, chunk, (size_t)n);
	close(fd);
	if (len)
		*len = b.len;
	if (!b.data)
		return calloc(1, 1);
	return xpc_buf_steal(&b);
}

/* Entries of tmpdir whose name ends in ".tmp" (left-over temporaries). */
static int count_temporaries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l > 4 && strcmp(de->d_name + l - 4, ".tmp") == 0)
			n++;
	}
	closedir(d);
	return n;
}

static struct xp_event *add(struct xp_capture *c, unsigned source, unsigned type, uint32_t tid,
			    uint64_t ts)
{
	int err = 0;
	struct xp_event *e = xp_capture_add(c, &err);

	CHECK(e != NULL);
	if (!e)
		abort();
	e->sequence = c->count - 1;
	e->source = (uint8_t)source;
	e->event_type = (uint8_t)type;
	e->pid = 4242;
	e->tid = tid;
	e->timestamp_ns = ts;
	e->timestamp_raw = ts;
	e->clock_domain = XP_CLOCK_HOST_MONOTONIC;
	return e;
}

/*
 * One event of each family:
 *   0 syscall mmap entry (6 arguments, cpu, start time)
 *   1 syscall mmap exit (return value)
 *   2 CUDA runtime API entry (cuda_api_name attribute, correlation id)
 *   3 GPU kernel start on stream 7 (kernel name, grid/block)
 *   4 NVTX range start (name from nvtx)
 *   5 marker without any name (falls back to event_type)
 */
static void build_capture(struct xp_capture *c)
{
	static const uint64_t regs[6] = { 0, 4096, 3, 34, UINT64_MAX, 0 };
	struct xp_event *e;
	int i;

	xp_capture_init(c, 0);

	e = add(c, XP_SRC_EBPF, XP_EV_SYSCALL_ENTRY, 4243, 1000001999);
	e->flags |= XP_EVF_HOST | XP_EVF_CPU | XP_EVF_START_TIME;
	e->cpu = 1;
	e->process_start_time = 123456;
	e->host.probe_kind = XP_PROBE_SYSCALL;
	e->host.symbol = xp_capture_intern(c, "mmap");
	e->host.args_first = (uint32_t)c->nargs;
	for (i = 0; i < 6; i++) {
		struct xp_arg a = { 0 };
		char v[24];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)regs[i]);
		a.index = (uint16_t)i;
		a.abi_type = xp_capture_intern(c, "u64");
		a.value = xp_capture_intern(c, v);
		CHECK(xp_capture_add_arg(c, &a) >= 0);
	}
	e->host.args_count = 6;
	CHECK(xp_event_add_attr_str(c, e, "tracepoint_category", "syscalls") == 0);

	e = add(c, XP_SRC_EBPF, XP_EV_SYSCALL_EXIT, 4243, 1000005000);
	e->flags |= XP_EVF_HOST | XP_EVF_CPU | XP_EVF_START_TIME;
	e->cpu = 1;
	e->process_start_time = 123456;
	e->host.probe_kind = XP_PROBE_SYSCALL;
	e->host.symbol = xp_capture_intern(c, "mmap");
	e->host.flags |= XP_HOSTF_RETURN_VALUE;
	e->host.return_value = 140737488351232;
	CHECK(xp_event_add_attr_str(c, e, "tracepoint_category", "syscalls") == 0);

	e = add(c, XP_SRC_CUPTI_CALLBACK, XP_EV_CUDA_API_ENTRY, 4244, 2000000500);
	e->flags |= XP_EVF_CUDA;
	e->cuda.flags = XP_CUDAF_CONTEXT_ID | XP_CUDAF_CORRELATION_ID |
			XP_CUDAF_RUNTIME_CORRELATION_ID | XP_CUDAF_CALLBACK_DOMAIN |
			XP_CUDAF_CALLBACK_ID;
	e->cuda.context_id = 1;
	e->cuda.correlation_id = 77;
	e->cuda.runtime_correlation_id = 77;
	e->cuda.callback_domain = 2;
	e->cuda.callback_id = 211;
	CHECK(xp_event_add_attr_str(c, e, "cuda_api_name", "cudaLaunchKernel") == 0);
	CHECK(xp_event_add_attr_str(c, e, "cuda_api_domain", "runtime_api") == 0);

	e = add(c, XP_SRC_CUPTI_ACTIVITY, XP_EV_GPU_KERNEL_START, 4244, 2000010000);
	e->clock_domain = XP_CLOCK_CUPTI_NORMALIZED;
	e->flags |= XP_EVF_CUDA;
	e->cuda.flags = XP_CUDAF_DEVICE_ID | XP_CUDAF_CONTEXT_ID | XP_CUDAF_STREAM_ID |
			XP_CUDAF_CORRELATION_ID | XP_CUDAF_START_NS | XP_CUDAF_GRID |
			XP_CUDAF_BLOCK;
	e->cuda.device_id = 0;
	e->cuda.context_id = 1;
	e->cuda.stream_id = 7;
	e->cuda.correlation_id = 77;
	e->cuda.start_ns = 2000010000;
	e->cuda.grid = (struct xp_dim3){ 128, 1, 1 };
	e->cuda.block = (struct xp_dim3){ 256, 1, 1 };
	e->cuda.kernel_name = xp_capture_intern(c, "flash_fwd\"kernel\"");

	e = add(c, XP_SRC_CUPTI_CALLBACK, XP_EV_NVTX_RANGE_START, 4245, 3000000000);
	e->flags |= XP_EVF_NVTX;
	e->nvtx.name = xp_capture_intern(c, "forward");
	e->nvtx.name_complete = 1;
	e->nvtx.range_kind = XP_NVTX_THREAD;
	e->nvtx.range_id = 9;
	e->nvtx.start_tid = 4245;

	e = add(c, XP_SRC_MARKER, XP_EV_MARKER, 4245, 999);
	CHECK(!c->strings.failed);
}

static void test_format_names(void)
{
	CHECK_STR(xp_export_format_name(XP_EXPORT_JSONL), "jsonl");
	CHECK_STR(xp_export_format_name(XP_EXPORT_CHROME), "chrome");
	CHECK(xp_export_format_parse("jsonl") == XP_EXPORT_JSONL);
	CHECK(xp_export_format_parse("chrome") == XP_EXPORT_CHROME);
	CHECK(xp_export_format_parse("Chrome") == -1);
	CHECK(xp_export_format_parse("json") == -1);
	CHECK(xp_export_format_parse("") == -1);
	CHECK(xp_export_format_parse(NULL) == -1);
}

static void test_jsonl_content_and_mode(void)
{
	struct xpc_buf want = XPC_BUF_INIT;
	struct xp_error err = { 0 };
	struct xp_capture c;
	struct stat st;
	const char *p = path_in("capture.jsonl");
	char *got;
	size_t len, i, lines = 0;
	mode_t old = umask(0);

	build_capture(&c);
	CHECK(xp_export_write(p, XP_EXPORT_JSONL, &c, "xp_measure_1", &err) == 0);
	CHECK(err.code == 0);
	umask(old);
	CHECK(stat(p, &st) == 0);
	CHECK_EQ_U64(st.st_mode & 07777, 0600);

	for (i = 0; i < c.count; i++) {
		struct xpc_json w;

		xpc_json_init_buf(&w, &want, 0);
		xp_event_render(&w, &c, &c.events[i], "xp_measure_1");
		CHECK(xpc_json_finish(&w) == 0);
		xpc_buf_putc(&want, '\n');
	}
	got = slurp(p, &len);
	CHECK(got != NULL);
	if (got) {
		CHECK_STR(got, want.data);
		CHECK_EQ_U64(len, want.len);
		CHECK(len > 0 && got[len - 1] == '\n');
		for (i = 0; i < len; i++)
			lines += got[i] == '\n';
		CHECK_EQ_U64(lines, c.count);
		/* spot checks of what the renderer put there */
		CHECK(strstr(got, "{\"schema_version\":\"2.0\",\"session_id\":\"xp_measure_1\","
				  "\"event_id\":\"evt_0\",\"sequence\":0,\"source\":\"ebpf\","
				  "\"event_type\":\"syscall_entry\"") == got);
		CHECK(strstr(got, "\"return_value\":140737488351232") != NULL);
		CHECK(strstr(got, "{\"index\":4,\"abi_type\":\"u64\",\"value\":18446744073709551615,"
				  "\"read_error\":null}") != NULL);
	}
	free(got);
	CHECK_EQ_U64(count_temporaries(), 0);
	xpc_buf_free(&want);
	xp_capture_free(&c);
	unlink(p);
}

static const char chrome_want[] =
	"{\n"
	"  \"displayTimeUnit\": \"ns\",\n"
	"  \"traceEvents\": [\n"
	"    {\n"
	"      \"args\": {\n"
	"        \"name\": \"pid 4242 (xp_measure_9)\"\n"
	"      },\n"
	"      \"name\": \"process_name\",\n"
	"      \"ph\": \"M\",\n"
	"      \"pid\": 4242,\n"
	"      \"tid\": 0\n"
	"    },\n"
	/* 0: syscall entry, ts floor(1000001999 / 1000) */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {\n"
	"          \"tracepoint_category\": \"syscalls\"\n"
	"        },\n"
	"        \"clock_domain\": \"host_monotonic\",\n"
	"        \"context_id\": null,\n"
	"        \"correlation_id\": null,\n"
	"        \"event_id\": \"evt_0\",\n"
	"        \"event_type\": \"syscall_entry\",\n"
	"        \"nvtx\": null,\n"
	"        \"stream_id\": null,\n"
	"        \"timestamp_ns\": 1000001999,\n"
	"        \"timestamp_raw\": 1000001999\n"
	"      },\n"
	"      \"cat\": \"host\",\n"
	"      \"name\": \"mmap\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 4243,\n"
	"      \"ts\": 1000001\n"
	"    },\n"
	/* 1: syscall exit */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {\n"
	"          \"tracepoint_category\": \"syscalls\"\n"
	"        },\n"
	"        \"clock_domain\": \"host_monotonic\",\n"
	"        \"context_id\": null,\n"
	"        \"correlation_id\": null,\n"
	"        \"event_id\": \"evt_1\",\n"
	"        \"event_type\": \"syscall_exit\",\n"
	"        \"nvtx\": null,\n"
	"        \"stream_id\": null,\n"
	"        \"timestamp_ns\": 1000005000,\n"
	"        \"timestamp_raw\": 1000005000\n"
	"      },\n"
	"      \"cat\": \"host\",\n"
	"      \"name\": \"mmap\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 4243,\n"
	"      \"ts\": 1000005\n"
	"    },\n"
	/* 2: CUDA API: name from attributes.cuda_api_name, attributes sorted */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {\n"
	"          \"cuda_api_domain\": \"runtime_api\",\n"
	"          \"cuda_api_name\": \"cudaLaunchKernel\"\n"
	"        },\n"
	"        \"clock_domain\": \"host_monotonic\",\n"
	"        \"context_id\": 1,\n"
	"        \"correlation_id\": 77,\n"
	"        \"event_id\": \"evt_2\",\n"
	"        \"event_type\": \"cuda_api_entry\",\n"
	"        \"nvtx\": null,\n"
	"        \"stream_id\": null,\n"
	"        \"timestamp_ns\": 2000000500,\n"
	"        \"timestamp_raw\": 2000000500\n"
	"      },\n"
	"      \"cat\": \"cuda.api\",\n"
	"      \"name\": \"cudaLaunchKernel\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 4244,\n"
	"      \"ts\": 2000000\n"
	"    },\n"
	/* 3: kernel: tid = stream id, name escaped */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {},\n"
	"        \"clock_domain\": \"cupti_normalized_to_host_monotonic\",\n"
	"        \"context_id\": 1,\n"
	"        \"correlation_id\": 77,\n"
	"        \"event_id\": \"evt_3\",\n"
	"        \"event_type\": \"gpu_kernel_start\",\n"
	"        \"nvtx\": null,\n"
	"        \"stream_id\": 7,\n"
	"        \"timestamp_ns\": 2000010000,\n"
	"        \"timestamp_raw\": 2000010000\n"
	"      },\n"
	"      \"cat\": \"cuda.activity\",\n"
	"      \"name\": \"flash_fwd\\\"kernel\\\"\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 7,\n"
	"      \"ts\": 2000010\n"
	"    },\n"
	/* 4: NVTX: name from nvtx.name, nvtx keys alphabetical */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {},\n"
	"        \"clock_domain\": \"host_monotonic\",\n"
	"        \"context_id\": null,\n"
	"        \"correlation_id\": null,\n"
	"        \"event_id\": \"evt_4\",\n"
	"        \"event_type\": \"nvtx_range_start\",\n"
	"        \"nvtx\": {\n"
	"          \"name\": \"forward\",\n"
	"          \"name_complete\": true,\n"
	"          \"range_id\": 9,\n"
	"          \"range_kind\": \"thread\",\n"
	"          \"start_tid\": 4245\n"
	"        },\n"
	"        \"stream_id\": null,\n"
	"        \"timestamp_ns\": 3000000000,\n"
	"        \"timestamp_raw\": 3000000000\n"
	"      },\n"
	"      \"cat\": \"cuda.api\",\n"
	"      \"name\": \"forward\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 4245,\n"
	"      \"ts\": 3000000\n"
	"    },\n"
	/* 5: nameless marker: name = event_type, ts 999 ns -> 0 us */
	"    {\n"
	"      \"args\": {\n"
	"        \"attributes\": {},\n"
	"        \"clock_domain\": \"host_monotonic\",\n"
	"        \"context_id\": null,\n"
	"        \"correlation_id\": null,\n"
	"        \"event_id\": \"evt_5\",\n"
	"        \"event_type\": \"marker\",\n"
	"        \"nvtx\": null,\n"
	"        \"stream_id\": null,\n"
	"        \"timestamp_ns\": 999,\n"
	"        \"timestamp_raw\": 999\n"
	"      },\n"
	"      \"cat\": \"marker\",\n"
	"      \"name\": \"marker\",\n"
	"      \"ph\": \"i\",\n"
	"      \"pid\": 4242,\n"
	"      \"s\": \"t\",\n"
	"      \"tid\": 4245,\n"
	"      \"ts\": 0\n"
	"    },\n"
	/* CUDA correlation 77 (the API call 2, the kernel 3): one arrow, at
	 * the events' exact times, on their tracks (thread, stream 7) */
	"    {\n"
	"      \"args\": {\n"
	"        \"correlation_id\": 77,\n"
	"        \"event_id\": \"evt_2\"\n"
	"      },\n"
	"      \"cat\": \"cuda.correlation\",\n"
	"      \"id\": 77,\n"
	"      \"name\": \"cuda correlation\",\n"
	"      \"ph\": \"s\",\n"
	"      \"pid\": 4242,\n"
	"      \"tid\": 4244,\n"
	"      \"ts\": 2000000.500\n"
	"    },\n"
	"    {\n"
	"      \"args\": {\n"
	"        \"correlation_id\": 77,\n"
	"        \"event_id\": \"evt_3\"\n"
	"      },\n"
	"      \"bp\": \"e\",\n"
	"      \"cat\": \"cuda.correlation\",\n"
	"      \"id\": 77,\n"
	"      \"name\": \"cuda correlation\",\n"
	"      \"ph\": \"f\",\n"
	"      \"pid\": 4242,\n"
	"      \"tid\": 7,\n"
	"      \"ts\": 2000010.000\n"
	"    }\n"
	"  ]\n"
	"}\n";

static void test_chrome_document(void)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	struct stat st;
	const char *p = path_in("capture.chrome.json");
	char *got;

	build_capture(&c);
	CHECK(xp_export_write(p, XP_EXPORT_CHROME, &c, "xp_measure_9", &err) == 0);
	got = slurp(p, NULL);
	CHECK(got != NULL);
	if (got && strcmp(got, chrome_want) != 0)
		fprintf(stderr, "chrome document:\n%s\n", got);
	CHECK_STR(got, chrome_want);
	free(got);
	CHECK(stat(p, &st) == 0);
	CHECK_EQ_U64(st.st_mode & 07777, 0600);
	xp_capture_free(&c);

	/* Empty capture: valid documents, no metadata for pids never seen. */
	xp_capture_init(&c, 0);
	CHECK(xp_export_write(p, XP_EXPORT_CHROME, &c, "s", &err) == 0);
	got = slurp(p, NULL);
	CHECK_STR(got, "{\n  \"displayTimeUnit\": \"ns\",\n  \"traceEvents\": []\n}\n");
	free(got);
	CHECK(xp_export_write(p, XP_EXPORT_JSONL, &c, "s", &err) == 0);
	got = slurp(p, NULL);
	CHECK_STR(got, "");
	free(got);
	xp_capture_free(&c);
	unlink(p);
}

/* Several pids (a capture built by hand): one process_name each, sorted. */
static void test_chrome_pids(void)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	const char *p = path_in("pids.json");
	char *got, *a, *b, *x;

	xp_capture_init(&c, 0);
	add(&c, XP_SRC_EBPF, XP_EV_TRACEPOINT, 1, 10)->pid = 300;
	add(&c, XP_SRC_EBPF, XP_EV_TRACEPOINT, 1, 20)->pid = 100;
	add(&c, XP_SRC_EBPF, XP_EV_TRACEPOINT, 1, 30)->pid = 300;
	CHECK(xp_export_write(p, XP_EXPORT_CHROME, &c, "s", &err) == 0);
	got = slurp(p, NULL);
	CHECK(got != NULL);
	if (got) {
		a = strstr(got, "\"name\": \"pid 100 (s)\"");
		b = strstr(got, "\"name\": \"pid 300 (s)\"");
		CHECK(a && b && a < b);
		CHECK(b && !strstr(b + 1, "\"name\": \"pid 300 (s)\""));
		x = strstr(got, "\"ph\": \"i\"");
		CHECK(x && b && b < x); /* metadata first */
	}
	free(got);
	xp_capture_free(&c);
	unlink(p);
}

static void test_atomic_replace(void)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	const char *p = path_in("keep.jsonl");
	char *got;
	int rc;

	CHECK(xpc_atomic_write(p, "OLD\n", 4) == 0);
	build_capture(&c);

	xpc_atomic_fault_before_rename = -EIO;
	rc = xp_export_write(p, XP_EXPORT_JSONL, &c, "s", &err);
	xpc_atomic_fault_before_rename = 0;
	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(err.code == XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(!err.recoverable);
	CHECK(strncmp(err.message, "failed to write ", 16) == 0);
	CHECK(strstr(err.message, p) != NULL);
	CHECK(strstr(err.message, "Input/output error") != NULL);
	CHECK(xp_error_detail_get(&err, "path") != NULL);
	got = slurp(p, NULL);
	CHECK_STR(got, "OLD\n");
	free(got);
	CHECK_EQ_U64(count_temporaries(), 0);
	xp_error_clear(&err);

	/* Same for Chrome. */
	xpc_atomic_fault_before_rename = -ENOSPC;
	rc = xp_export_write(p, XP_EXPORT_CHROME, &c, "s", &err);
	xpc_atomic_fault_before_rename = 0;
	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(strstr(err.message, "No space left on device") != NULL);
	got = slurp(p, NULL);
	CHECK_STR(got, "OLD\n");
	free(got);
	CHECK_EQ_U64(count_temporaries(), 0);
	xp_error_clear(&err);

	/* And a successful write replaces it. */
	CHECK(xp_export_write(p, XP_EXPORT_JSONL, &c, "s", &err) == 0);
	got = slurp(p, NULL);
	CHECK(got && strncmp(got, "{\"schema_version\":\"2.0\"", 23) == 0);
	free(got);
	CHECK_EQ_U64(count_temporaries(), 0);
	xp_capture_free(&c);
	unlink(p);
}

static void expect_unwritable(const char *p, const char *reason)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	char want[600];
	int rc;

	build_capture(&c);
	rc = xp_export_write(p, XP_EXPORT_JSONL, &c, "s", &err);
	CHECK(rc == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK_STR(xprobe_errname(err.code), "TRACE_EXPORT_FAILED");
	snprintf(want, sizeof(want), "failed to write %s: %s", p, reason);
	CHECK_STR(err.message, want);
	CHECK(!err.recoverable);
	snprintf(want, sizeof(want), "\"%s\"", p);
	CHECK_STR(xp_error_detail_get(&err, "path"), want);
	CHECK_EQ_U64(count_temporaries(), 0);
	xp_error_clear(&err);
	xp_capture_free(&c);
}

/*
 * Run @fn(@p, @reason) in a child that dropped root for nobody (65534) and
 * return its failure count (-1 when it could not run): the unprivileged
 * cases run in a suite that runs as root.  _exit skips LeakSanitizer's
 * exit check, which cannot trace a process that changed its credentials.
 */
static int as_nobody(void (*fn)(const char *, const char *), const char *p, const char *reason)
{
	int st = 0;
	pid_t pid;

	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534)) {
			perror("as_nobody");
			_exit(126);
		}
		fn(p, reason);
		fflush(stderr);
		_exit(xpt_failures ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_unwritable(void)
{
	/* copies: path_in() reuses its buffers after four calls */
	char file[512], dir[512], ro[512], p[600];

	snprintf(file, sizeof(file), "%s", path_in("plain-file"));
	snprintf(dir, sizeof(dir), "%s", path_in("a-directory"));
	snprintf(ro, sizeof(ro), "%s", path_in("read-only"));

	/* parent directory does not exist */
	expect_unwritable(path_in("missing/out.jsonl"), "No such file or directory");
	/* parent is a regular file */
	CHECK(xpc_atomic_write(file, "x", 1) == 0);
	snprintf(p, sizeof(p), "%s/out.jsonl", file);
	expect_unwritable(p, "Not a directory");
	/* target is a directory: refused before the temporary is made */
	CHECK(mkdir(dir, 0700) == 0);
	expect_unwritable(dir, "it exists and is a directory, not a regular file");
	/* only a regular file is ever replaced: a FIFO, a device node and a
	 * symlink stay what they are (before: the rename replaced each with a
	 * regular file, so as root --events-out /dev/null replaced /dev/null) */
	{
		const char *fifo = path_in("a-fifo"), *chr = path_in("a-null-device");
		const char *link = path_in("a-symlink"), *stdout_link = path_in("to-stdout");
		struct stat st;

		CHECK(mkfifo(fifo, 0600) == 0);
		expect_unwritable(fifo, "it exists and is a fifo, not a regular file");
		CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
		/* the numbers of /dev/null, made here: /dev/null itself is not touched */
		CHECK(mknod(chr, S_IFCHR | 0600, makedev(1, 3)) == 0);
		expect_unwritable(chr, "it exists and is a character device, not a regular file");
		CHECK(lstat(chr, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
		CHECK(symlink(file, link) == 0); /* to a regular file: still a symlink */
		expect_unwritable(link, "it exists and is a symlink, not a regular file");
		CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
		CHECK(symlink("/proc/self/fd/1", stdout_link) == 0);
		expect_unwritable(stdout_link, "it exists and is a symlink, not a regular file");
		CHECK(lstat(stdout_link, &st) == 0 && S_ISLNK(st.st_mode));
		{
			struct xp_error err = { 0 };
			struct xp_capture c;

			build_capture(&c);
			CHECK(xp_export_write(fifo, XP_EXPORT_JSONL, &c, "s", &err) ==
			      -XPROBE_E_TRACE_EXPORT_FAILED);
			CHECK_STR(xp_error_detail_get(&err, "file_type"), "\"fifo\"");
			xp_error_clear(&err);
			xp_capture_free(&c);
		}
		unlink(fifo);
		unlink(chr);
		unlink(link);
		unlink(stdout_link);
	}
	/* a directory the writer may enter but not write: root passes the
	 * mode bits, so as root (CI) the writer is a child running as nobody */
	CHECK(mkdir(ro, 0555) == 0 && chmod(ro, 0555) == 0);
	snprintf(p, sizeof(p), "%s/out.jsonl", ro);
	if (geteuid() != 0)
		expect_unwritable(p, "Permission denied");
	else
		CHECK(as_nobody(expect_unwritable, p, "Permission denied") == 0);
	rmdir(ro);
	rmdir(dir);
	unlink(file);
}

/* Past the writer's flush threshold: streamed output stays exact. */
static void test_large(void)
{
	struct xp_error err = { 0 };
	struct xp_capture c;
	const char *p = path_in("large.jsonl");
	const size_t n = 20000;
	size_t i, len = 0, lines = 0;
	char *got;

	xp_capture_init(&c, n);
	for (i = 0; i < n; i++) {
		struct xp_event *e = add(&c, XP_SRC_EBPF, i % 2 ? XP_EV_SYSCALL_EXIT :
							 XP_EV_SYSCALL_ENTRY,
					 (uint32_t)(100 + i % 3), 1000 + i * 10);

		e->flags |= XP_EVF_HOST;
		e->host.probe_kind = XP_PROBE_SYSCALL;
		e->host.symbol = xp_capture_intern(&c, "read");
	}
	CHECK(xp_export_write(p, XP_EXPORT_JSONL, &c, "s", &err) == 0);
	got = slurp(p, &len);
	CHECK(len > XPC_JSON_FLUSH_AT);
	for (i = 0; got && i < len; i++)
		lines += got[i] == '\n';
	CHECK_EQ_U64(lines, n);
	CHECK(got && strstr(got, "\"event_id\":\"evt_19999\"") != NULL);
	free(got);

	CHECK(xp_export_write(p, XP_EXPORT_CHROME, &c, "s", &err) == 0);
	got = slurp(p, &len);
	CHECK(len > XPC_JSON_FLUSH_AT);
	CHECK(got && len > 4 && strcmp(got + len - 4, "]\n}\n") == 0);
	CHECK(got && strstr(got, "\"ts\": 200") != NULL);
	free(got);
	xp_capture_free(&c);
	unlink(p);
}

int main(void)
{
	/* 0755: the unprivileged writer of test_unwritable reaches it */
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755)) {
		perror("mkdtemp");
		return 1;
	}
	test_format_names();
	test_jsonl_content_and_mode();
	test_chrome_document();
	test_chrome_pids();
	test_atomic_replace();
	test_unwritable();
	test_large();
	rmdir(tmpdir);
	TEST_MAIN_END();
}
