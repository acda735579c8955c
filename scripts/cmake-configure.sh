#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cmake-configure.sh DIR [CMAKE ARGS...] - configure build directory DIR
# for this source tree.  A DIR that was configured for another tree (the
# tree was copied or moved with its build directory) has a cache CMake
# refuses to reuse; its cache is dropped first (the objects are rebuilt).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
cache="$dir/CMakeCache.txt"
if [ -f "$cache" ]; then
	was=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
	if [ -n "$was" ] && [ "$(cd "$was" 2>/dev/null && pwd -P || echo "$was")" != \
		"$(cd "$root" && pwd -P)" ]; then
		echo "cmake-configure: $dir was configured for $was; configuring it for $root" >&2
		rm -rf "$cache" "$dir/CMakeFiles"
	fi
fi
exec cmake -S "$root" -B "$dir" "$@" >/dev/null
