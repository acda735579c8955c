/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudalibs.h - CUDA as a target maps it and as this machine installs it.
 *
 * Mapped (validate): the CUDA/CUPTI majors a target has loaded, read from
 * library file names: libcudart.so.<N>[.x.y] and libcupti.so.<N>[.x.y]
 * with N < 100 (calendar-versioned names such as libcupti.so.2025.1.1
 * carry no major and are ignored); libcuda.so.* (the driver, whose file
 * version is the driver's, not CUDA's); and whether an xprobe Agent
 * (libxprobe*.so*) is already loaded.  Majors 12 and 13 are supported;
 * two distinct majors are a conflict.
 *
 * Installed (doctor, and measure's choice of an Agent when the target's
 * major cannot be observed): libcupti.so.12 / .13 from the dynamic
 * linker cache, then from the CUDA trees (/usr/local/cuda,
 * /usr/local/cuda-<major>*) under extras/CUPTI/lib64, targets/x86_64-
 * linux/lib, lib64 and lib.
 */
#ifndef XP_CHECKS_CUDALIBS_H
#define XP_CHECKS_CUDALIBS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "../process/procfs.h"

#define XP_CUDA_MAX_MAJORS 8

struct xp_cuda_mapped {
	bool libcuda; /* libcuda.so* mapped */
	bool libcudart; /* libcudart.so* mapped */
	bool libcupti; /* libcupti.so* mapped */
	bool agent; /* an xprobe Agent (libxprobe*.so*) mapped */
	char agent_path[PATH_MAX];
	char cudart_path[PATH_MAX]; /* the first libcudart.so.<N> mapped, "" none */
	char cupti_path[PATH_MAX]; /* the first libcupti.so.<N> mapped, "" none */
	int majors[XP_CUDA_MAX_MAJORS]; /* distinct, ascending */
	size_t nmajors;
};

/* Major of a library file name "<stem>.so.<N>[.*]", -1 when none or N >= 100. */
int xp_lib_major(const char *base_name, const char *stem);
bool xp_cuda_major_supported(int major);
void xp_cuda_mapped_scan(const struct xp_maps *maps, struct xp_cuda_mapped *out);

struct xp_cupti_install {
	int major;
	char path[PATH_MAX]; /* resolved (realpath) library path */
};

/* The installed supported CUPTI majors (at most one path per major),
 * ascending.  Returns the count (0..2). */
size_t xp_cupti_installed(struct xp_cupti_install out[2]);

/*
 * Before a measurement modifies a target for CUDA (measure's online
 * injection), where the Agent loaded into it will find CUPTI, searched as
 * its loader (the library's device backend) searches, read from outside
 * through /proc/<pid>/root: a supported libcupti.so.<N> the target maps;
 * then for the major of its libcudart (either supported major when none is
 * mapped) libcupti.so.<N> beside that libcudart and in its
 * ../extras/CUPTI/lib64; then what the target's dynamic linker finds for
 * the name: its LD_LIBRARY_PATH (from /proc/<pid>/environ), its
 * /etc/ld.so.cache, the default directories.  @out->path is the path as
 * the target sees it.  Returns true when found; false with @why (one
 * sentence naming what was searched).
 */
bool xp_cupti_for_target(uint32_t pid, const struct xp_cuda_mapped *m,
			 struct xp_cupti_install *out, char *why, size_t whylen);

/* The NVIDIA kernel driver is loaded on this machine (/proc/driver/nvidia). */
bool xp_nvidia_driver_loaded(void);

#endif /* XP_CHECKS_CUDALIBS_H */
