/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env_hooks.h - the doors the environment opens into the CLI, and what
 * each trusts (docs/environment.md, "The CLI").
 *
 * xprobe runs as root; its environment must not make it load a library
 * another user can write, nor change how it measures in a build meant
 * for users.  Three kinds of variables:
 *
 *   - plain settings (XPROBE_DECODE_NO_FASTPATH): xpc_env(), that is
 *     secure_getenv(): nothing under AT_SECURE (setuid, setgid, file
 *     capabilities), the value otherwise;
 *   - libraries to load (XPROBE_JSON_PLUGIN, XPROBE_NVML_LIBRARY):
 *     xpc_env(), then xpc_dlopen_trusted(): an absolute path to a regular
 *     file (not a symbolic link) owned by root or by the real uid and not
 *     writable by group or others, in a directory that passes the same
 *     owner and mode test.  The checks are fstat()s of O_PATH descriptors
 *     (the directory's, then the file's, opened with O_NOFOLLOW relative
 *     to it) and dlopen() loads "/proc/self/fd/N" of the file's
 *     descriptor, so what was checked is what is loaded, whatever renames
 *     happen meanwhile;
 *   - test hooks that change behaviour (XPROBE_TEST_*, XPROBE_TRACEFS_ROOT):
 *     xpc_test_hook_env(), which is xpc_env() in the programs linked with
 *     xpc_test_hooks of a tree configured -DXPROBE_TEST_HOOKS=ON (the
 *     unit tests, the fuzz targets, test-bin/xprobe: what the suite runs)
 *     and always NULL elsewhere: bin/xprobe, which `make install` ships,
 *     never honours them (common/test_hooks.c).
 */
#ifndef XPC_ENV_HOOKS_H
#define XPC_ENV_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

/* secure_getenv(@name); NULL when unset, empty or under AT_SECURE. */
const char *xpc_env(const char *name);

/* xpc_env(@name) in a test-hooks build, else NULL. */
const char *xpc_test_hook_env(const char *name);

/* Whether this build honours the test hooks (XPROBE_TEST_HOOKS). */
bool xpc_test_hooks_built(void);

/*
 * dlopen(@path, @flags) after the trust checks above.  @var names the
 * variable that supplied the path, for the reason.  NULL on refusal or
 * load failure, with the reason in @why: "refused: ..." for a path that
 * fails a check, else what dlopen or open said (a missing file reads
 * "<path>: cannot open shared object file: No such file or directory",
 * as dlerror() words it).
 */
void *xpc_dlopen_trusted(const char *path, int flags, const char *var, char *why,
			 size_t why_size);

#endif /* XPC_ENV_HOOKS_H */
