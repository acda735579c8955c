/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_checks_host.c - the machine-side checks for real (root): tracefs in
 * both states (a private tracefs mount and an empty directory, through
 * $XPROBE_TRACEFS_ROOT, so the system's tracefs is never unmounted),
 * the BPF probes, NVML loading (missing, and the fake NVML fixture), and
 * a doctor run whose answers are compared with the machine itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checks/bpfprobe.h"
#include "checks/doctor_checks.h"
#include "checks/nvml.h"
#include "resolve/resolve.h"
#include "error_text.h"
#include "target_spawn.h"
#include "testlib.h"
#include "resolve/tracefs.h"

static void test_tracefs(void)
{
	char empty[] = "/tmp/xp-test-notrace-XXXXXX", mnt[] = "/tmp/xp-test-tracefs-XXXXXX";
	struct xp_error err = { 0 };
	uint64_t id = 0;
	int rc;

	CHECK(mkdtemp(empty) != NULL);
	CHECK(mkdtemp(mnt) != NULL);

	/* unmounted: an empty directory */
	setenv("XPROBE_TRACEFS_ROOT", empty, 1);
	CHECK_STR(xp_tracefs_root(), empty);
	CHECK(!xp_tracefs_mounted(empty));
	rc = xp_tracefs_check("sched", "sched_switch", &id, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(err.message, "tracefs is not mounted") != NULL);
	CHECK(xpt_hint_contains(&err, "mount -t tracefs none /sys/kernel/tracing"));
	xp_error_clear(&err);

	/* mounted: a private tracefs instance */
	if (mount("none", mnt, "tracefs", 0, NULL) != 0) {
		CHECK(!"cannot mount a private tracefs (root needed)");
		goto out;
	}
	setenv("XPROBE_TRACEFS_ROOT", mnt, 1);
	CHECK(xp_tracefs_mounted(mnt));
	rc = xp_tracefs_check("sched", "sched_switch", &id, &err);
	CHECK(rc == 0 && id > 0);
	{
		char p[256], *text;
		uint64_t want = 0;

		snprintf(p, sizeof(p), "%s/events/sched/sched_switch/id", mnt);
		CHECK(xp_read_file(p, 64, &text, NULL) == 0);
		text[strcspn(text, "\n")] = '\0';
		CHECK(xpc_parse_u64(text, 0, UINT64_MAX, &want) == 0);
		CHECK_EQ_U64(id, want);
		free(text);
	}
	rc = xp_tracefs_check("sched", "sched_swich", &id, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(err.message, "does not exist") != NULL);
	CHECK(xpt_hint_contains(&err, "tracepoint:sched:sched_switch"));
	xp_error_clear(&err);
	rc = xp_tracefs_check("schedd", "sched_switch", &id, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	CHECK(strstr(err.message, "category schedd") != NULL);
	CHECK(xpt_hint_contains(&err, "tracepoint:sched"));
	xp_error_clear(&err);
	rc = xp_tracefs_check("..", "x", &id, &err);
	CHECK(rc == -XPROBE_E_INVALID_EVENT_SELECTOR);
	xp_error_clear(&err);
	CHECK(umount(mnt) == 0);
out:
	unsetenv("XPROBE_TRACEFS_ROOT");
	rmdir(empty);
	rmdir(mnt);
}

static void test_bpf_probes(void)
{
	struct xp_bpf_probe p;

	CHECK(xp_bpf_probe_basic(&p));
	CHECK(p.map_create.tried && p.map_create.err == 0);
	CHECK(p.prog_load.tried && p.prog_load.err == 0);
	CHECK(!p.attach.tried);
	CHECK(xp_bpf_probe_aggregate(1024, &p));
	CHECK(p.attach.tried && p.attach.err == 0);
	CHECK(strstr(p.attach.detail, "sys_enter") != NULL);
}

static void test_nvml(void)
{
	struct xp_error err = { 0 };
	struct xp_nvml *n = NULL;
	struct xp_gpu_proc *procs;
	char lib[PATH_MAX], ver[64];
	size_t count;
	int rc;

	setenv("XPROBE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == -XPROBE_E_CUPTI_NOT_AVAILABLE && n == NULL);
	CHECK(xp_error_detail_get(&err, "dlerror") != NULL);
	xp_error_clear(&err);

	fx_path(lib, sizeof(lib), "libtarget_fakenvml.so");
	setenv("XPROBE_NVML_LIBRARY", lib, 1);
	setenv("XPROBE_FAKE_NVML_PROCS", "100@GPU-a,200@GPU-b,100@GPU-b", 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == 0 && n);
	if (!rc) {
		CHECK(xp_nvml_driver_version(n, ver, sizeof(ver)) == 0);
		CHECK_STR(ver, "999.99.99-fake");
		CHECK(xp_nvml_compute_procs(n, &procs, &count, &err) == 0);
		CHECK_EQ_U64(count, 3);
		if (count == 3) {
			CHECK(procs[0].pid == 100 && strcmp(procs[0].uuid, "GPU-a") == 0);
			CHECK(procs[1].pid == 200 && strcmp(procs[1].uuid, "GPU-b") == 0);
			CHECK(procs[2].pid == 100 && strcmp(procs[2].uuid, "GPU-b") == 0);
		}
		free(procs);
		xp_nvml_close(n);
	}
	setenv("XPROBE_FAKE_NVML_FAIL", "init", 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == -XPROBE_E_CUPTI_NOT_AVAILABLE);
	CHECK(strstr(err.message, "Driver Not Loaded") != NULL);
	xp_error_clear(&err);
	setenv("XPROBE_FAKE_NVML_FAIL", "noperm", 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == -XPROBE_E_PERMISSION_DENIED);
	xp_error_clear(&err);
	setenv("XPROBE_FAKE_NVML_FAIL", "procs", 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK(xp_nvml_compute_procs(n, &procs, &count, &err) ==
		      -XPROBE_E_CUPTI_NOT_AVAILABLE);
		CHECK(xp_error_detail_get(&err, "nvml_call") != NULL);
		xp_error_clear(&err);
		xp_nvml_close(n);
	}
	/* a library that is not NVML: a function is missing */
	fx_path(lib, sizeof(lib), "libtarget_shlib.so");
	setenv("XPROBE_NVML_LIBRARY", lib, 1);
	rc = xp_nvml_open(&n, &err);
	CHECK(rc == -XPROBE_E_CUPTI_NOT_AVAILABLE);
	CHECK(strstr(err.message, "lacks nvmlInit_v2") != NULL);
	xp_error_clear(&err);
	unsetenv("XPROBE_NVML_LIBRARY");
	unsetenv("XPROBE_FAKE_NVML_PROCS");
	unsetenv("XPROBE_FAKE_NVML_FAIL");
}

static void test_doctor(void)
{
	struct xp_doctor *d = calloc(1, sizeof(*d));
	struct xp_error err = { 0 };
	struct stat st;

	CHECK(xp_doctor_run(d, &err) == 0);
	CHECK_STR(d->env.operating_system, "linux");
	CHECK(d->env.effective_uid == 0);
	CHECK(d->checks[XP_CHK_EBPF_PERMISSIONS].status == XP_CHECK_AVAILABLE);
	CHECK(d->checks[XP_CHK_BPF_PROBE].status == XP_CHECK_AVAILABLE);
	CHECK(d->checks[XP_CHK_PERF_EVENT_OPEN].status == XP_CHECK_AVAILABLE);
	CHECK(d->checks[XP_CHK_BTF].status == (stat("/sys/kernel/btf/vmlinux", &st) == 0 ?
						       XP_CHECK_AVAILABLE :
						       XP_CHECK_UNAVAILABLE));
	CHECK(d->caps.uprobe == (d->checks[XP_CHK_KERNEL_LOCKDOWN].status != XP_CHECK_RESTRICTED));
	CHECK(d->caps.runtime_injection);
	CHECK(d->caps.cuda_callback ==
	      (d->checks[XP_CHK_NVIDIA_DRIVER].status == XP_CHECK_AVAILABLE &&
	       d->checks[XP_CHK_CUDA_DRIVER].status == XP_CHECK_AVAILABLE &&
	       d->checks[XP_CHK_CUPTI].status == XP_CHECK_AVAILABLE));
	CHECK(strncmp(d->env.pid_namespace, "pid:[", 5) == 0);
	CHECK(xp_warnings_has(&d->warnings, "NVIDIA_DRIVER_UNAVAILABLE") ==
	      (d->checks[XP_CHK_NVIDIA_DRIVER].status != XP_CHECK_AVAILABLE));
	CHECK(xp_host_ebpf_capable(NULL, 0));
	xp_doctor_free(d);
	free(d);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_checks_host must run as root\n");
		return 1;
	}
	test_tracefs();
	test_bpf_probes();
	test_nvml();
	test_doctor();
	TEST_MAIN_END();
}
