/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller.h - the session controller's internal seams: output-dir
 * resolution (outdir.c) and what tests may peek at.
 */
#ifndef XPL_CONTROLLER_H
#define XPL_CONTROLLER_H

#include <stdint.h>

#define XPL_ON_FAIL_DIR "on_fail"

/* Check a base dir against the reserved names (outdir.c). */
int xpl_outdir_check_base(const char *base);
/* Resolve and create <base>/<instance>-<pid>/<start_ns> into @out. */
int xpl_outdir_make(const char *base, const char *instance_id, uint32_t pid, uint64_t start_ns,
		    char *out, size_t outlen);

struct xpl_engine;
/* The engine of the running session or of continuous profiling (tests). */
struct xpl_engine *xpl_controller_engine(void);

#endif /* XPL_CONTROLLER_H */
