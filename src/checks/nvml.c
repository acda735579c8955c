/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml.c - the dlopen'ed NVML (nvml.h).  The prototypes and the process
 * record layout below follow NVIDIA's NVML API reference: nvmlReturn_t
 * is an int-sized enum (0 = NVML_SUCCESS, 4 = NO_PERMISSION,
 * 7 = INSUFFICIENT_SIZE), nvmlDevice_t an opaque pointer, and
 * nvmlProcessInfo_t (the _v2/_v3 layout) {unsigned pid; unsigned long
 * long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId}.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/env_hooks.h"
#include "nvml.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef void *nvml_device;

struct nvml_process_info {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};

struct xp_nvml {
	void *handle;
	char path[512];
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*driver_version)(char *, unsigned int);
	int (*device_count)(unsigned int *);
	int (*device_by_index)(unsigned int, nvml_device *);
	int (*device_uuid)(nvml_device, char *, unsigned int);
	int (*compute_procs)(nvml_device, unsigned int *, struct nvml_process_info *);
	bool initialized;
};

static const char *errstr(struct xp_nvml *n, int rc)
{
	const char *s = n->error_string ? n->error_string(rc) : NULL;

	return s ? s : "unknown NVML error";
}

static int nvml_fail(struct xp_nvml *n, const char *call, int rc, struct xp_error *err)
{
	xp_error_detail_str(err, "nvml_library", n->path);
	xp_error_detail_str(err, "nvml_call", call);
	xp_error_detail_i64(err, "nvml_return", rc);
	if (rc == NVML_ERROR_NO_PERMISSION) {
		xp_error_hint(err, "run xprobe as root or as a user allowed to query the GPU");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true, "NVML %s: %s", call,
				    errstr(n, rc));
	}
	xp_error_hint(
		err,
		"run xprobe doctor: checks.nvidia_driver and checks.nvml show the driver state");
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true, "NVML %s failed: %s", call,
			    errstr(n, rc));
}

#define SYM(field, name)                                      \
	do {                                                  \
		*(void **)&n->field = dlsym(n->handle, name); \
		if (!n->field && required) {                  \
			missing = name;                       \
			goto fail;                            \
		}                                             \
	} while (0)

int xp_nvml_open(struct xp_nvml **out, struct xp_error *err)
{
	/* a test hook, loaded only from a path no other user can write */
	const char *env = xpc_env("XPROBE_NVML_LIBRARY"), *missing = NULL;
	const char *lib = env ? env : XP_NVML_SONAME;
	struct xp_nvml *n;
	bool required = true;
	char why[512] = "";
	int rc;

	*out = NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
	snprintf(n->path, sizeof(n->path), "%s", lib);
	if (env) {
		n->handle = xpc_dlopen_trusted(lib, RTLD_NOW | RTLD_LOCAL, "XPROBE_NVML_LIBRARY",
					       why, sizeof(why));
	} else {
		const char *e;

		n->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!n->handle && (e = dlerror()))
			snprintf(why, sizeof(why), "%s", e);
	}
	if (!n->handle && strncmp(why, "refused:", 8) == 0) {
		xp_error_detail_str(err, "nvml_library", lib);
		xp_error_detail_str(err, "dlerror", why);
		xp_error_hint(err, "XPROBE_NVML_LIBRARY must name a file owned by root or by you, "
				   "writable by its owner only, in a directory likewise; or unset it");
		free(n);
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "XPROBE_NVML_LIBRARY %s is not loaded: %s", lib, why + 9);
	}
	if (!n->handle) {
		xp_error_detail_str(err, "nvml_library", lib);
		xp_error_detail_str(err, "dlerror", why);
		xp_error_hint(
			err,
			"NVML comes with the NVIDIA driver; install it or run where the GPU driver is visible");
		xp_error_hint(err,
			      "run xprobe doctor to see the NVIDIA driver, CUDA and CUPTI checks");
		xp_error_hint(
			err,
			"if you already know the worker PID, run xprobe validate --pid <PID> directly");
		free(n);
		return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
				    "NVML is not available: %s cannot be loaded", lib);
	}
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(device_count, "nvmlDeviceGetCount_v2");
	SYM(device_by_index, "nvmlDeviceGetHandleByIndex_v2");
	SYM(device_uuid, "nvmlDeviceGetUUID");
	required = false;
	SYM(error_string, "nvmlErrorString");
	SYM(driver_version, "nvmlSystemGetDriverVersion");
	SYM(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->compute_procs)
		SYM(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->compute_procs) {
		missing = "nvmlDeviceGetComputeRunningProcesses_v3";
		goto fail;
	}
	rc = n->init();
	if (rc != NVML_SUCCESS) {
		rc = nvml_fail(n, "nvmlInit_v2", rc, err);
		dlclose(n->handle);
		free(n);
		return rc;
	}
	n->initialized = true;
	*out = n;
	return 0;
fail:
	xp_error_detail_str(err, "nvml_library", lib);
	xp_error_detail_str(err, "missing_function", missing);
	xp_error_hint(err, "the NVIDIA driver is too old for xprobe's NVML calls; update it");
	dlclose(n->handle);
	free(n);
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true, "NVML library %s lacks %s",
			    lib, missing);
}

void xp_nvml_close(struct xp_nvml *n)
{
	if (!n)
		return;
	if (n->initialized)
		n->shutdown();
	/* NVML is never unloaded mid-process in NVIDIA's own tools either;
	 * dlclose is safe here since no callback points into it */
	dlclose(n->handle);
	free(n);
}

const char *xp_nvml_path(const struct xp_nvml *n)
{
	return n->path;
}

int xp_nvml_driver_version(struct xp_nvml *n, char *buf, size_t size)
{
	if (!n->driver_version || size == 0)
		return -ENOSYS;
	buf[0] = '\0';
	if (n->driver_version(buf, (unsigned int)(size > 256 ? 256 : size)) != NVML_SUCCESS)
		return -EIO;
	buf[size - 1] = '\0';
	return 0;
}

int xp_nvml_compute_procs(struct xp_nvml *n, struct xp_gpu_proc **out, size_t *count,
			  struct xp_error *err)
{
	struct xp_gpu_proc *v = NULL;
	size_t nv = 0, cap = 0;
	unsigned int ndev = 0, d;
	int rc;

	*out = NULL;
	*count = 0;
	rc = n->device_count(&ndev);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetCount_v2", rc, err);
	for (d = 0; d < ndev; d++) {
		struct nvml_process_info *procs = NULL;
		char uuid[XP_NVML_UUID_MAX];
		unsigned int np = 0, i;
		nvml_device dev;
		int tries;

		rc = n->device_by_index(d, &dev);
		if (rc == NVML_SUCCESS)
			rc = n->device_uuid(dev, uuid, sizeof(uuid));
		if (rc != NVML_SUCCESS) {
			free(v);
			xp_error_detail_u64(err, "device_index", d);
			return nvml_fail(n, "nvmlDeviceGetUUID", rc, err);
		}
		uuid[sizeof(uuid) - 1] = '\0';
		/* processes come and go between the size query and the read:
		 * retry with room to spare */
		for (tries = 0; tries < 8; tries++) {
			unsigned int want = np;

			rc = n->compute_procs(dev, &np, procs);
			if (rc == NVML_SUCCESS)
				break;
			if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
				break;
			free(procs);
			np = (np > want ? np : want) + 8;
			procs = calloc(np, sizeof(*procs));
			if (!procs) {
				free(v);
				return xp_error_set(err, XPROBE_E_INTERNAL, false, "out of memory");
			}
		}
		if (rc != NVML_SUCCESS) {
			free(procs);
			free(v);
			xp_error_detail_u64(err, "device_index", d);
			return nvml_fail(n, "nvmlDeviceGetComputeRunningProcesses", rc, err);
		}
		for (i = 0; i < np; i++) {
			if (nv == cap) {
				size_t ncap = cap ? cap * 2 : 16;
				struct xp_gpu_proc *nvp = realloc(v, ncap * sizeof(*nvp));

				if (!nvp) {
					free(procs);
					free(v);
					return xp_error_set(err, XPROBE_E_INTERNAL, false,
							    "out of memory");
				}
				v = nvp;
				cap = ncap;
			}
			v[nv].pid = procs[i].pid;
			memcpy(v[nv].uuid, uuid, sizeof(uuid));
			nv++;
		}
		free(procs);
	}
	*out = v;
	*count = nv;
	return 0;
}
