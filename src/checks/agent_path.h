/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_path.h - which file is the xprobe Agent (libxprobe.so) that
 * measure injects into a target and that validate names in its
 * NVTX_INJECTION64_PATH hint.
 *
 * Order (the contract's, for this build's single Agent library):
 *   1. --agent PATH (measure only);
 *   2. $XPROBE_CUPTI_AGENT_PATH (read with secure_getenv);
 *   3. ../lib/libxprobe.so.<major> (the soname: what a runtime package
 *      ships), else ../lib/libxprobe.so (the link for linking), next to
 *      the xprobe executable (build/bin/xprobe finds build/lib/...), its
 *      real path (the versioned file);
 *   4. the build tree xprobe was built in.
 * 1 and 2 are taken as given (the injection checks the file: a regular
 * ELF shared object exporting xprobe_agent_start, owned by root or the
 * target's uid, not writable by others); 3 and 4 only when the file
 * exists.  Nothing is opened or loaded here.
 */
#ifndef XP_CHECKS_AGENT_PATH_H
#define XP_CHECKS_AGENT_PATH_H

#include <stddef.h>

#include "../model/error_record.h"

/* Where the path came from. */
enum xp_agent_origin {
	XP_AGENT_FROM_FLAG = 0, /* --agent */
	XP_AGENT_FROM_ENV,      /* XPROBE_CUPTI_AGENT_PATH */
	XP_AGENT_FROM_EXE,      /* next to the executable */
	XP_AGENT_FROM_BUILD,    /* the build tree */
};

/*
 * The Agent library's path into @buf, by the order above (@flag: --agent
 * or NULL).  Returns 0 with *@origin set, or -XPROBE_E_CUPTI_NOT_AVAILABLE
 * with @err saying where it looked and the hint "pass --agent or set
 * XPROBE_CUPTI_AGENT_PATH"; -XPROBE_E_INTERNAL when @size is too small.
 */
int xp_checks_agent_library(const char *flag, char *buf, size_t size, enum xp_agent_origin *origin,
			    struct xp_error *err);

#endif /* XP_CHECKS_AGENT_PATH_H */
