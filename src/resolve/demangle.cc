// SPDX-License-Identifier: Apache-2.0
/*
 * demangle.cc - the one C++ file of the resolve module: Itanium C++ names
 * are demangled by the C++ runtime's own __cxa_demangle
 * (docs/selectors-live.md, "uprobe selectors"), so
 * `symbol=` signatures read exactly as the toolchain prints them.  Kept
 * to this wrapper so the rest of the module stays C.
 */
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

extern "C" char *xp_demangle(const char *name);

extern "C" char *xp_demangle(const char *name)
{
	int status = 0;
	char *out;

	if (!name || std::strncmp(name, "_Z", 2) != 0)
		return nullptr;
	out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
	if (status != 0) {
		std::free(out);
		return nullptr;
	}
	return out;
}
