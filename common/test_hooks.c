/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hooks.c - the test hooks' build switch (env_hooks.h).  Compiled
 * twice by CMakeLists.txt: into xpc_test_hooks with XPROBE_TEST_HOOKS
 * defined (the unit tests, the fuzz targets and test-bin/xprobe of a tree
 * configured with -DXPROBE_TEST_HOOKS=ON, which the Makefile's builds
 * are), and into xpc_no_test_hooks without it (bin/xprobe, the binary
 * `make install` ships, always).  A program links exactly one of them.
 */
#include "env_hooks.h"

bool xpc_test_hooks_built(void)
{
#ifdef XPROBE_TEST_HOOKS
	return true;
#else
	return false;
#endif
}

const char *xpc_test_hook_env(const char *name)
{
	return xpc_test_hooks_built() ? xpc_env(name) : NULL;
}
