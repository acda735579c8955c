#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pack-build.sh - for a GPU machine that cannot build xprobe (no libbpf-dev,
# bpftool, clang, ... and no network to get them): build xprobe here and
# pack what run.sh needs into OUTDIR, to be copied or carried there and
# used with `tests/gpu/run.sh --build-dir OUTDIR --prebuilt`.
#
#   tests/gpu/pack-build.sh OUTDIR [BUILD]
#
# BUILD (default /tmp/xprobe-gpu-pack-build) is configured RelWithDebInfo
# and the targets run.sh builds are built in it: the CLI, libxprobe.so (the
# Agent, CUPTI backend inside) and the JSON plugin (XPGPU_TARGETS replaces
# the list).  OUTDIR gets
# bin/xprobe and the whole lib/ tree (same layout, so the CLI finds
# ../lib/libxprobe.so and the plugin), and deps/: every shared library
# those files load that is not the C or C++ runtime or an NVIDIA library
# (those must be the GPU machine's own); run.sh --prebuilt puts deps/ on
# LD_LIBRARY_PATH.  The BPF objects are compiled against THIS kernel's BTF:
# prefer building on the GPU machine when it can.  Inside a repository
# checkout, ignore OUTDIR first (echo /OUTDIR/ >> .git/info/exclude).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 OUTDIR [BUILD]" >&2
	exit 2
fi
out=$1
build=${2:-/tmp/xprobe-gpu-pack-build}
root=$(cd "$(dirname "$0")/../.." && pwd)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
read -r -a targets <<<"${XPGPU_TARGETS:-xprobe libxprobe xprobe_json}"
echo "pack-build: building ${targets[*]}" >&2
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null

rm -rf "$out"
mkdir -p "$out/bin" "$out/deps"
cp -p "$build/bin/xprobe" "$out/bin/"
cp -pR "$build/lib" "$out/lib"
# keep only shared objects in lib/ (no static archives, CMake files)
find "$out/lib" -type f ! -name '*.so' ! -name '*.so.*' -delete
find "$out/lib" -type d -empty -delete

system='^(linux-vdso|libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+|libcuda|libcupti|libnvidia-ml|libcudart)\.so'
find "$out/bin" "$out/lib" -type f | while read -r f; do
	ldd "$f" 2>/dev/null || true
done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u | while read -r name path; do
	if ! printf '%s\n' "$name" | grep -q -E "$system"; then
		cp -L "$path" "$out/deps/$name"
	fi
done
chmod -R go-w "$out"
du -sh "$out" >&2
echo "pack-build: $out (run: tests/gpu/run.sh --build-dir $out --prebuilt)" >&2
