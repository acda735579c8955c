/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_path.c - find the Agent library (agent_path.h says in which
 * order and why the first two are not checked here).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/env_hooks.h"
#include "agent_path.h"

#ifndef XP_BUILD_AGENT_PATH
#define XP_BUILD_AGENT_PATH ""
#endif
#ifndef XP_AGENT_SONAME
#define XP_AGENT_SONAME "libxprobe.so"
#endif

static int put(const char *path, char *buf, size_t size, struct xp_error *err)
{
	if ((size_t)snprintf(buf, size, "%s", path) >= size)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "Agent path too long: %s", path);
	return 0;
}

static int regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int xp_checks_agent_library(const char *flag, char *buf, size_t size, enum xp_agent_origin *origin,
			    struct xp_error *err)
{
	static const char *const names[] = { XP_AGENT_SONAME, "libxprobe.so" };
	char exe[PATH_MAX], near[PATH_MAX + 32], canon[PATH_MAX];
	const char *env = xpc_env("XPROBE_CUPTI_AGENT_PATH");
	ssize_t n;

	if (flag && *flag) {
		*origin = XP_AGENT_FROM_FLAG;
		return put(flag, buf, size, err);
	}
	if (env) {
		*origin = XP_AGENT_FROM_ENV;
		return put(env, buf, size, err);
	}
	near[0] = '\0';
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		size_t i;

		slash = strrchr(exe, '/');
		for (i = 0; slash && i < sizeof(names) / sizeof(names[0]); i++) {
			*slash = '\0';
			snprintf(near, sizeof(near), "%s/../lib/%s", exe, names[i]);
			if (regular(near) && realpath(near, canon)) {
				*origin = XP_AGENT_FROM_EXE;
				return put(canon, buf, size, err);
			}
		}
	}
	if (XP_BUILD_AGENT_PATH[0] && regular(XP_BUILD_AGENT_PATH)) {
		*origin = XP_AGENT_FROM_BUILD;
		return put(XP_BUILD_AGENT_PATH, buf, size, err);
	}
	xp_error_detail_str(err, "searched", near[0] ? near : "/proc/self/exe unreadable");
	xp_error_hint(
		err,
		"pass --agent PATH or set XPROBE_CUPTI_AGENT_PATH to the xprobe Agent (libxprobe.so)");
	return xp_error_set(err, XPROBE_E_CUPTI_NOT_AVAILABLE, true,
			    "the xprobe Agent library (libxprobe.so) was not found");
}
