/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor_checks.c - the machine diagnosis (doctor.h).  The contract's rules
 * for its nine checks (docs/contract.md, "doctor's checks"); the probes added
 * here are real: a BPF map and program are created and loaded, a perf event
 * is opened on xprobe itself, NVML is loaded and initialized.  Nothing is
 * spawned: the dynamic linker cache is read directly (ldcache.c) and the CUDA
 * toolkit is found on disk.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../../common/json.h"
#include "../../common/parse.h"
#include "bpfprobe.h"
#include "doctor_checks.h"
#include "ldcache.h"
#include "nvml.h"
#include "../process/procfs.h"
#include "../resolve/resolve.h"
#include "../resolve/tracefs.h"
#include "../model/names.h"

#define LOCKDOWN_PATH "/sys/kernel/security/lockdown"
#define BTF_PATH "/sys/kernel/btf/vmlinux"

const char *xp_check_status_name(enum xp_check_status s)
{
	static const char *const names[] = {
		[XP_CHECK_AVAILABLE] = "available",
		[XP_CHECK_RESTRICTED] = "restricted",
		[XP_CHECK_UNAVAILABLE] = "unavailable",
		[XP_CHECK_UNKNOWN] = "unknown",
	};

	return XP_NAME_OF(names, s, "unknown");
}

const char *xp_check_name(enum xp_check_id id)
{
	static const char *const names[XP_CHK__COUNT] = {
		"btf",
		"ebpf_permissions",
		"kernel_lockdown",
		"perf_event_paranoid",
		"ptrace_scope",
		"nvidia_driver",
		"cuda_driver",
		"cuda_toolkit",
		"cupti",
		"bpf_probe",
		"perf_event_open",
		"unprivileged_bpf",
		"tracefs",
		"nvml",
	};

	return id < XP_CHK__COUNT ? names[id] : "unknown";
}

/* TRACEFS_NOT_MOUNTED, details { hint, tracefs_root } (sorted keys). */
static void tracefs_warning(struct xp_doctor *d)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_kstr(&w, "hint", XP_TRACEFS_MOUNT_HINT);
	xpc_json_kstr(&w, "tracefs_root", d->env.tracefs_root);
	xpc_json_obj_end(&w);
	if (xpc_json_finish(&w) == 0)
		xp_warnings_add(
			&d->warnings, "TRACEFS_NOT_MOUNTED",
			"tracefs is not mounted; tracepoint:<category>:<name> selectors cannot be resolved.",
			xpc_buf_str(&b));
	xpc_buf_free(&b);
}

enum xp_check_id xp_check_reported_under(enum xp_check_id id)
{
	switch (id) {
	case XP_CHK_BPF_PROBE:
	case XP_CHK_UNPRIVILEGED_BPF:
	case XP_CHK_TRACEFS:
		return XP_CHK_EBPF_PERMISSIONS;
	case XP_CHK_PERF_EVENT_OPEN:
		return XP_CHK_PERF_EVENT_PARANOID;
	case XP_CHK_NVML:
		return XP_CHK_NVIDIA_DRIVER;
	default:
		return id;
	}
}

static void set(struct xp_check *c, enum xp_check_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct xp_check *c, enum xp_check_status s, const char *fmt, ...)
{
	va_list ap;

	c->status = s;
	c->has_detail = fmt != NULL;
	c->detail[0] = '\0';
	if (!fmt)
		return;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* ---- helpers with explicit paths (unit-tested) ------------------------------ */

void xp_check_sysctl_max(const char *path, int64_t max, const char *note, struct xp_check *c)
{
	char *text;
	int64_t v;
	int rc = xp_read_file(path, 4096, &text, NULL);

	if (rc) {
		set(c, XP_CHECK_UNKNOWN, "%s not found", path);
		return;
	}
	trim(text);
	if (xpc_parse_i64(text, INT64_MIN, INT64_MAX, &v)) {
		set(c, XP_CHECK_UNKNOWN, "%s holds \"%.64s\", not an integer", path, text);
		free(text);
		return;
	}
	set(c, v <= max ? XP_CHECK_AVAILABLE : XP_CHECK_RESTRICTED, "%lld%s%s", (long long)v,
	    note ? " " : "", note ? note : "");
	free(text);
}

void xp_check_lockdown(const char *path, struct xp_check *c)
{
	char *text;

	if (xp_read_file(path, 4096, &text, NULL)) {
		set(c, XP_CHECK_UNKNOWN, "%s not found", path);
		return;
	}
	trim(text);
	set(c, strstr(text, "[none]") ? XP_CHECK_AVAILABLE : XP_CHECK_RESTRICTED, "%s", text);
	free(text);
}

void xp_check_file_exists(const char *path, struct xp_check *c)
{
	struct stat st;

	if (stat(path, &st) == 0)
		set(c, XP_CHECK_AVAILABLE, "%s", path);
	else
		set(c, XP_CHECK_UNAVAILABLE, "%s not found", path);
}

static void add_hint(struct xp_doctor *d, const char *fmt, const char *arg)
{
	if (d->env.ncontainer_hints == XP_DOCTOR_MAX_HINTS)
		return;
	snprintf(d->env.container_hints[d->env.ncontainer_hints++],
		 sizeof(d->env.container_hints[0]), fmt, arg);
}

static void set_container(struct xp_doctor *d, const char *name)
{
	if (d->env.has_container)
		return;
	d->env.has_container = true;
	snprintf(d->env.container, sizeof(d->env.container), "%s", name);
}

void xp_detect_container(const char *root, struct xp_doctor *d)
{
	static const char *const markers[] = { "kubepods", "containerd", "docker", "lxc",
					       "libpod" };
	char path[512], *text;
	struct stat st;
	size_t len, i;

	snprintf(path, sizeof(path), "%s/.dockerenv", root);
	if (stat(path, &st) == 0) {
		set_container(d, "docker");
		add_hint(d, "%s exists", "/.dockerenv");
	}
	snprintf(path, sizeof(path), "%s/run/.containerenv", root);
	if (stat(path, &st) == 0) {
		set_container(d, "podman");
		add_hint(d, "%s exists", "/run/.containerenv");
	}
	snprintf(path, sizeof(path), "%s/proc/1/cgroup", root);
	if (xp_read_file(path, 1 << 20, &text, NULL) == 0) {
		for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
			if (strstr(text, markers[i])) {
				set_container(d, markers[i]);
				add_hint(d, "/proc/1/cgroup mentions %s", markers[i]);
				break;
			}
		}
		free(text);
	}
	snprintf(path, sizeof(path), "%s/proc/1/environ", root);
	if (xp_read_file(path, 1 << 20, &text, &len) == 0) {
		size_t off = 0;

		while (off < len) {
			const char *v = text + off;

			if (strncmp(v, "container=", 10) == 0 && v[10]) {
				set_container(d, v + 10);
				add_hint(d, "pid 1 runs with container=%s", v + 10);
				break;
			}
			off += strlen(v) + 1;
		}
		free(text);
	}
}

int xp_cuda_h_version(const char *text, char *out, size_t size)
{
	const char *p = strstr(text, "#define CUDA_VERSION");
	char num[16];
	uint64_t v;
	size_t n;

	if (!p)
		return -EINVAL;
	p += 20;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strspn(p, "0123456789");
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, p, n);
	num[n] = '\0';
	if (xpc_parse_u64(num, 1000, 99999, &v))
		return -EINVAL;
	snprintf(out, size, "%u.%u", (unsigned)(v / 1000), (unsigned)(v % 1000 / 10));
	return 0;
}

/* ---- the host eBPF rule ------------------------------------------------------- */

bool xp_host_ebpf_capable(char *why, size_t size)
{
	struct xp_proc_status st;
	struct xp_check lock;
	bool priv;

	if (xp_proc_status_read(0, &st) || !st.has_cap_eff)
		st.cap_eff = 0;
	priv = geteuid() == 0 ||
	       (xp_cap_has(st.cap_eff, XP_CAP_BPF) && xp_cap_has(st.cap_eff, XP_CAP_PERFMON)) ||
	       xp_cap_has(st.cap_eff, XP_CAP_SYS_ADMIN);
	if (!priv) {
		if (why)
			snprintf(why, size,
				 "requires root, CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN");
		return false;
	}
	xp_check_lockdown(LOCKDOWN_PATH, &lock);
	if (lock.status == XP_CHECK_RESTRICTED) {
		if (why)
			snprintf(why, size, "kernel lockdown is %s", lock.detail);
		return false;
	}
	return true;
}

/* ---- checks of this machine ------------------------------------------------ */

static void check_ebpf_permissions(struct xp_doctor *d)
{
	uint64_t c = d->env.cap_eff;

	if (d->env.effective_uid == 0 ||
	    (xp_cap_has(c, XP_CAP_BPF) && xp_cap_has(c, XP_CAP_PERFMON)) ||
	    xp_cap_has(c, XP_CAP_SYS_ADMIN))
		set(&d->checks[XP_CHK_EBPF_PERMISSIONS], XP_CHECK_AVAILABLE,
		    "effective BPF and perf privileges (euid %u, CapEff 0x%016llx)",
		    d->env.effective_uid, (unsigned long long)c);
	else
		set(&d->checks[XP_CHK_EBPF_PERMISSIONS], XP_CHECK_RESTRICTED,
		    "requires root, CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN (CapEff 0x%016llx)",
		    (unsigned long long)c);
}

static void check_bpf_probe(struct xp_doctor *d)
{
	struct xp_bpf_probe p;
	struct xp_check *c = &d->checks[XP_CHK_BPF_PROBE];

	if (xp_bpf_probe_basic(&p)) {
		set(c, XP_CHECK_AVAILABLE, "created a BPF map and loaded a raw tracepoint program");
		return;
	}
	{
		const struct xp_bpf_step *s = p.map_create.err ? &p.map_create : &p.prog_load;

		set(c,
		    s->err == EPERM || s->err == EACCES ? XP_CHECK_RESTRICTED :
							  XP_CHECK_UNAVAILABLE,
		    "%s", s->detail);
	}
}

static void check_perf_open(struct xp_doctor *d)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_freq = 99;
	a.freq = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		set(&d->checks[XP_CHK_PERF_EVENT_OPEN], XP_CHECK_AVAILABLE,
		    "opened a cpu-clock sampling event on xprobe itself");
		return;
	}
	set(&d->checks[XP_CHK_PERF_EVENT_OPEN],
	    errno == EACCES || errno == EPERM ? XP_CHECK_RESTRICTED : XP_CHECK_UNAVAILABLE,
	    "perf_event_open(cpu-clock) failed: %s", strerror(errno));
}

static void check_unprivileged_bpf(struct xp_doctor *d)
{
	struct xp_check *c = &d->checks[XP_CHK_UNPRIVILEGED_BPF];

	xp_check_sysctl_max("/proc/sys/kernel/unprivileged_bpf_disabled", 0, NULL, c);
	if (c->status == XP_CHECK_RESTRICTED) {
		char v[64];

		snprintf(v, sizeof(v), "%s", c->detail);
		set(c, XP_CHECK_RESTRICTED, "%s: only privileged processes may use bpf(2)%s", v,
		    d->checks[XP_CHK_EBPF_PERMISSIONS].status == XP_CHECK_AVAILABLE ?
			    " (xprobe is privileged)" :
			    "");
	} else if (c->status == XP_CHECK_AVAILABLE) {
		set(c, XP_CHECK_AVAILABLE, "0: unprivileged bpf(2) is allowed");
	}
}

static void check_tracefs(struct xp_doctor *d)
{
	const char *root = xp_tracefs_root();

	snprintf(d->env.tracefs_root, sizeof(d->env.tracefs_root), "%s", root);
	switch (xp_tracefs_state(root)) {
	case XP_TRACEFS_READABLE:
		set(&d->checks[XP_CHK_TRACEFS], XP_CHECK_AVAILABLE, "mounted at %s", root);
		break;
	case XP_TRACEFS_UNREADABLE:
		/* permission, not absence: mounting it again would change nothing */
		set(&d->checks[XP_CHK_TRACEFS], XP_CHECK_RESTRICTED,
		    "mounted at %s, but not readable by uid %u; named tracepoints need root (or CAP_DAC_READ_SEARCH)",
		    root, (unsigned)geteuid());
		break;
	case XP_TRACEFS_ABSENT:
		set(&d->checks[XP_CHK_TRACEFS], XP_CHECK_UNAVAILABLE,
		    "not mounted at %s; named tracepoints need it: %s", root,
		    XP_TRACEFS_MOUNT_HINT);
		break;
	}
}

static void check_nvidia(struct xp_doctor *d)
{
	struct xp_check *drv = &d->checks[XP_CHK_NVIDIA_DRIVER], *nv = &d->checks[XP_CHK_NVML];
	struct xp_error err = { 0 };
	struct xp_nvml *n = NULL;
	char *text, version[128];
	struct stat st;

	if (xp_nvml_open(&n, &err) == 0) {
		if (xp_nvml_driver_version(n, version, sizeof(version)) == 0)
			set(nv, XP_CHECK_AVAILABLE, "%s initialized (driver %s)", xp_nvml_path(n),
			    version);
		else
			set(nv, XP_CHECK_AVAILABLE, "%s initialized", xp_nvml_path(n));
	} else {
		set(nv,
		    err.code == XPROBE_E_PERMISSION_DENIED ? XP_CHECK_RESTRICTED :
							     XP_CHECK_UNAVAILABLE,
		    "%s", err.message);
	}
	xp_error_clear(&err);
	if (xp_read_file("/proc/driver/nvidia/version", 4096, &text, NULL) == 0) {
		char *nl = strchr(text, '\n');

		if (nl)
			*nl = '\0';
		set(drv, XP_CHECK_AVAILABLE, "%s", text);
		free(text);
	} else if (n) {
		set(drv, XP_CHECK_AVAILABLE, "NVML reports a loaded driver");
	} else if (stat("/dev/nvidiactl", &st) == 0 ||
		   stat("/usr/lib/wsl/lib/libcuda.so.1", &st) == 0) {
		set(drv, XP_CHECK_RESTRICTED,
		    "an NVIDIA device node exists, but the driver cannot be queried");
	} else {
		set(drv, XP_CHECK_UNAVAILABLE,
		    "/proc/driver/nvidia/version not found and NVML cannot be loaded");
	}
	xp_nvml_close(n);
}

static int find_libcuda(const char *name, const char *path, void *ctx)
{
	snprintf(ctx, PATH_MAX, "%s", path);
	(void)name;
	return 1;
}

static void check_cuda_driver(struct xp_doctor *d)
{
	char path[PATH_MAX] = "";
	struct stat st;

	xp_ldcache_scan(XP_LDCACHE_PATH, "libcuda.so", find_libcuda, path);
	if (!path[0] && stat("/usr/lib/wsl/lib/libcuda.so.1", &st) == 0)
		snprintf(path, sizeof(path), "/usr/lib/wsl/lib/libcuda.so.1");
	if (!path[0])
		set(&d->checks[XP_CHK_CUDA_DRIVER], XP_CHECK_UNAVAILABLE,
		    "libcuda.so not found in the dynamic linker cache");
	else if (d->checks[XP_CHK_NVIDIA_DRIVER].status == XP_CHECK_AVAILABLE)
		set(&d->checks[XP_CHK_CUDA_DRIVER], XP_CHECK_AVAILABLE, "libcuda.so found: %s",
		    path);
	else
		set(&d->checks[XP_CHK_CUDA_DRIVER], XP_CHECK_RESTRICTED,
		    "libcuda.so found (%s), but the NVIDIA runtime is unavailable", path);
}

static bool executable(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* nvcc on $PATH, else in a CUDA tree; version from version.json or cuda.h. */
static void check_cuda_toolkit(struct xp_doctor *d)
{
	const char *envs[] = { "CUDA_HOME", "CUDA_PATH" };
	char nvcc[PATH_MAX] = "", root[PATH_MAX] = "", version[32] = "";
	const char *path = getenv("PATH");
	size_t i;

	for (i = 0; i < 2 && !nvcc[0]; i++) {
		const char *r = getenv(envs[i]);
		char p[PATH_MAX];

		if (!r || !r[0])
			continue;
		snprintf(p, sizeof(p), "%s/bin/nvcc", r);
		if (executable(p)) {
			snprintf(nvcc, sizeof(nvcc), "%s", p);
			snprintf(root, sizeof(root), "%s", r);
		}
	}
	while (!nvcc[0] && path && *path) {
		size_t n = strcspn(path, ":");
		char p[PATH_MAX];

		if (n && n < sizeof(p) - 6) {
			snprintf(p, sizeof(p), "%.*s/nvcc", (int)n, path);
			if (executable(p)) {
				snprintf(nvcc, sizeof(nvcc), "%s", p);
				snprintf(root, sizeof(root), "%.*s/..", (int)n, path);
			}
		}
		path += n;
		if (*path == ':')
			path++;
	}
	if (!nvcc[0]) {
		glob_t g;

		memset(&g, 0, sizeof(g));
		glob("/usr/local/cuda", GLOB_NOSORT, NULL, &g);
		glob("/usr/local/cuda-*", GLOB_APPEND, NULL, &g);
		for (i = 0; i < g.gl_pathc && !nvcc[0]; i++) {
			char p[PATH_MAX];

			snprintf(p, sizeof(p), "%s/bin/nvcc", g.gl_pathv[i]);
			if (executable(p)) {
				snprintf(nvcc, sizeof(nvcc), "%s", p);
				snprintf(root, sizeof(root), "%s", g.gl_pathv[i]);
			}
		}
		globfree(&g);
	}
	if (!nvcc[0]) {
		set(&d->checks[XP_CHK_CUDA_TOOLKIT], XP_CHECK_UNAVAILABLE,
		    "nvcc not found (looked in $CUDA_HOME, $PATH and /usr/local/cuda*)");
		return;
	}
	{
		char p[PATH_MAX], real[PATH_MAX], *text;

		if (realpath(root, real))
			snprintf(root, sizeof(root), "%s", real);
		snprintf(p, sizeof(p), "%s/version.json", root);
		if (xp_read_file(p, 1 << 20, &text, NULL) == 0) {
			/* {"cuda": {"name": ..., "version": "12.4.1"}, ...} */
			const char *c = strstr(text, "\"cuda\"");
			const char *v = c ? strstr(c, "\"version\"") : NULL;

			if (v && (v = strchr(v + 9, '"')))
				snprintf(version, sizeof(version), "%.*s",
					 (int)strcspn(v + 1, "\""), v + 1);
			free(text);
		}
		snprintf(p, sizeof(p), "%s/include/cuda.h", root);
		if (!version[0] && xp_read_file(p, 1 << 22, &text, NULL) == 0) {
			xp_cuda_h_version(text, version, sizeof(version));
			free(text);
		}
	}
	if (version[0])
		set(&d->checks[XP_CHK_CUDA_TOOLKIT], XP_CHECK_AVAILABLE, "CUDA %s at %s (nvcc %s)",
		    version, root, nvcc);
	else
		set(&d->checks[XP_CHK_CUDA_TOOLKIT], XP_CHECK_AVAILABLE,
		    "nvcc %s (version unknown)", nvcc);
}

static void check_cupti(struct xp_doctor *d)
{
	struct xp_check *c = &d->checks[XP_CHK_CUPTI];

	d->ncupti = xp_cupti_installed(d->cupti);
	if (d->ncupti == 0)
		set(c, XP_CHECK_UNAVAILABLE, "libcupti.so.12 and libcupti.so.13 not found");
	else if (d->ncupti == 1)
		set(c, XP_CHECK_AVAILABLE, "CUDA %d: %s", d->cupti[0].major, d->cupti[0].path);
	else
		set(c, XP_CHECK_AVAILABLE, "CUDA %d: %s; CUDA %d: %s", d->cupti[0].major,
		    d->cupti[0].path, d->cupti[1].major, d->cupti[1].path);
}

static void environment(struct xp_doctor *d)
{
	struct xp_proc_status st;
	char *text;

	snprintf(d->env.operating_system, sizeof(d->env.operating_system), "linux");
	d->env.effective_uid = (uint32_t)geteuid();
	if (xp_proc_status_read(0, &st) == 0 && st.has_cap_eff)
		d->env.cap_eff = st.cap_eff;
	if (xp_read_file("/proc/sys/kernel/osrelease", 4096, &text, NULL) == 0) {
		trim(text);
		snprintf(d->env.kernel_release, sizeof(d->env.kernel_release), "%s", text);
		free(text);
	}
	xp_proc_ns_link(0, "pid", d->env.pid_namespace, sizeof(d->env.pid_namespace));
	xp_proc_ns_link(0, "mnt", d->env.mount_namespace, sizeof(d->env.mount_namespace));
	xp_proc_ns_link(0, "user", d->env.user_namespace, sizeof(d->env.user_namespace));
	/* the initial user namespace maps all 2^32 ids onto themselves */
	if (xp_read_file("/proc/self/uid_map", 4096, &text, NULL) == 0) {
		char w[3][24];
		size_t n = 0;
		const char *p = text;

		while (n < 3 && *p) {
			size_t len;

			p += strspn(p, " \t\n");
			len = strcspn(p, " \t\n");
			if (!len || len >= sizeof(w[0]))
				break;
			memcpy(w[n], p, len);
			w[n++][len] = '\0';
			p += len;
		}
		d->env.initial_user_namespace = n == 3 && strcmp(w[0], "0") == 0 &&
						strcmp(w[1], "0") == 0 &&
						strcmp(w[2], "4294967295") == 0;
		free(text);
	}
	if (!d->env.initial_user_namespace)
		add_hint(d, "%s", "xprobe runs in a user namespace other than the initial one");
	xp_detect_container("", d);
}

int xp_doctor_run(struct xp_doctor *d, struct xp_error *err)
{
	struct utsname u;
	const struct xp_check *c = d->checks;
	bool ebpf;

	memset(d, 0, sizeof(*d));
	if (uname(&u) < 0)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "uname failed: %s",
				    strerror(errno));
	environment(d);
	snprintf(d->env.architecture, sizeof(d->env.architecture), "%s", u.machine);
	snprintf(d->env.kernel_version, sizeof(d->env.kernel_version), "%s", u.version);
	if (!d->env.kernel_release[0])
		snprintf(d->env.kernel_release, sizeof(d->env.kernel_release), "%s", u.release);

	xp_check_file_exists(BTF_PATH, &d->checks[XP_CHK_BTF]);
	check_ebpf_permissions(d);
	xp_check_lockdown(LOCKDOWN_PATH, &d->checks[XP_CHK_KERNEL_LOCKDOWN]);
	xp_check_sysctl_max("/proc/sys/kernel/perf_event_paranoid", 1,
			    d->env.effective_uid == 0 ? "(does not limit root)" : NULL,
			    &d->checks[XP_CHK_PERF_EVENT_PARANOID]);
	xp_check_sysctl_max("/proc/sys/kernel/yama/ptrace_scope", 0, NULL,
			    &d->checks[XP_CHK_PTRACE_SCOPE]);
	check_nvidia(d);
	check_cuda_driver(d);
	check_cuda_toolkit(d);
	check_cupti(d);
	check_bpf_probe(d);
	check_perf_open(d);
	check_unprivileged_bpf(d);
	check_tracefs(d);

	ebpf = c[XP_CHK_EBPF_PERMISSIONS].status == XP_CHECK_AVAILABLE &&
	       c[XP_CHK_KERNEL_LOCKDOWN].status != XP_CHECK_RESTRICTED &&
	       c[XP_CHK_BPF_PROBE].status == XP_CHECK_AVAILABLE;
	d->caps.uprobe = d->caps.uretprobe = d->caps.tracepoint = d->caps.usdt = ebpf;
	d->caps.named_tracepoint = ebpf && c[XP_CHK_TRACEFS].status == XP_CHECK_AVAILABLE;
	d->caps.cpu_sampling = c[XP_CHK_PERF_EVENT_OPEN].status == XP_CHECK_AVAILABLE;
	d->caps.cuda_callback = d->caps.cuda_activity =
		c[XP_CHK_NVIDIA_DRIVER].status == XP_CHECK_AVAILABLE &&
		c[XP_CHK_CUDA_DRIVER].status == XP_CHECK_AVAILABLE &&
		c[XP_CHK_CUPTI].status == XP_CHECK_AVAILABLE;
	d->caps.runtime_injection =
		strcmp(u.machine, "x86_64") == 0 &&
		(d->env.effective_uid == 0 || xp_cap_has(d->env.cap_eff, XP_CAP_SYS_PTRACE) ||
		 c[XP_CHK_PTRACE_SCOPE].status == XP_CHECK_AVAILABLE);

	if (!ebpf)
		xp_warnings_add(&d->warnings, "BPF_PERMISSION_MISSING",
				"The current process cannot attach eBPF probes.", NULL);
	if (c[XP_CHK_NVIDIA_DRIVER].status != XP_CHECK_AVAILABLE)
		xp_warnings_add(&d->warnings, "NVIDIA_DRIVER_UNAVAILABLE",
				"The NVIDIA driver is unavailable from this execution environment.",
				NULL);
	if (c[XP_CHK_CUPTI].status != XP_CHECK_AVAILABLE)
		xp_warnings_add(
			&d->warnings, "CUPTI_NOT_AVAILABLE",
			"CUPTI was not found in the dynamic linker cache or CUDA installation.",
			NULL);
	if (c[XP_CHK_KERNEL_LOCKDOWN].status == XP_CHECK_RESTRICTED)
		xp_warnings_add(&d->warnings, "KERNEL_LOCKDOWN",
				"Kernel lockdown may prevent probe attachment.", NULL);
	if (c[XP_CHK_TRACEFS].status == XP_CHECK_UNAVAILABLE)
		tracefs_warning(d);
	else if (c[XP_CHK_TRACEFS].status == XP_CHECK_RESTRICTED)
		xp_warnings_add(&d->warnings, "TRACEFS_NOT_READABLE",
				"tracefs is mounted but this user cannot read it; tracepoint:<category>:<name> selectors need root.",
				NULL);
	return 0;
}

void xp_doctor_free(struct xp_doctor *d)
{
	xp_warnings_free(&d->warnings);
}
