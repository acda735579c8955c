/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml.h - NVIDIA's management library, loaded with dlopen at run time
 * from its documented soname (libnvidia-ml.so.1), through our own
 * prototypes of the few documented functions xprobe calls:
 *   nvmlInit_v2, nvmlShutdown, nvmlErrorString, nvmlSystemGetDriverVersion,
 *   nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
 *   nvmlDeviceGetUUID, nvmlDeviceGetComputeRunningProcesses_v3 (or _v2).
 * No header and no link-time dependency: a machine without the driver
 * builds and runs xprobe, and discover says NVML is unavailable.
 *
 * $XPROBE_NVML_LIBRARY names another library to load instead (tests use
 * a fake NVML built from tests/fixtures to drive the real code path on
 * machines without a GPU).
 */
#ifndef XP_CHECKS_NVML_H
#define XP_CHECKS_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"

#define XP_NVML_SONAME "libnvidia-ml.so.1"
#define XP_NVML_UUID_MAX 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

struct xp_nvml;

/*
 * Load and initialize NVML.  Errors: CUPTI_NOT_AVAILABLE (library missing,
 * a function missing, nvmlInit failing: the NVML error text is in the
 * message and details), PERMISSION_DENIED (NVML_ERROR_NO_PERMISSION).
 */
int xp_nvml_open(struct xp_nvml **out, struct xp_error *err);
void xp_nvml_close(struct xp_nvml *n);
/* The library path that was loaded (for details). */
const char *xp_nvml_path(const struct xp_nvml *n);

int xp_nvml_driver_version(struct xp_nvml *n, char *buf, size_t size);

/* One compute process on one GPU. */
struct xp_gpu_proc {
	uint32_t pid;
	char uuid[XP_NVML_UUID_MAX];
};

/*
 * Every compute process on every GPU (one entry per pid and GPU).
 * *out malloc'ed.  Errors as xp_nvml_open.
 */
int xp_nvml_compute_procs(struct xp_nvml *n, struct xp_gpu_proc **out, size_t *count,
			  struct xp_error *err);

#endif /* XP_CHECKS_NVML_H */
