#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-fixtures.sh - build the CUDA fixture of the GPU truth check
# (tests/gpu/fixture.cu -> OUTDIR/xpgpu_fixture) with nvcc.  run.sh calls
# it; it also runs on a machine without a GPU (compiling needs none).
#
#   tests/gpu/build-fixtures.sh OUTDIR
#
# nvcc: $NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH.  Code:
# sm_90 machine code (H100/H200) plus compute_75 PTX, which the driver
# compiles at load time on any other GPU CUDA 13 supports; override with
# XPGPU_GENCODE (the -gencode arguments, space separated).  The CUDA
# runtime is linked shared with an rpath to the toolkit's library folder,
# as real applications load it (so the target's CUDA major is visible in
# its maps), the driver API from the toolkit's stub libcuda.so (the real
# one comes from the driver at run time), NVTX v3 from the toolkit's
# headers.  Exit 0 built, 1 the compiler failed, 5 no nvcc or no NVTX
# headers (run.sh's "cannot build" code).
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then
		nvcc=/usr/local/cuda/bin/nvcc
	else
		nvcc=$(command -v nvcc || true)
	fi
fi
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
	echo "build-fixtures: nvcc not found (set NVCC, or install the CUDA toolkit at /usr/local/cuda)" >&2
	exit 5
fi
cuda=$(cd "$(dirname "$nvcc")/.." && pwd)
inc=$cuda/include
if [ ! -f "$inc/nvtx3/nvToolsExt.h" ]; then
	echo "build-fixtures: $inc/nvtx3/nvToolsExt.h not found (NVTX v3 headers of the toolkit)" >&2
	exit 5
fi
libdir=
for d in "$cuda/lib64" "$cuda/targets/x86_64-linux/lib"; do
	if [ -e "$d/libcudart.so" ]; then
		libdir=$(cd "$d" && pwd -P)
		break
	fi
done
if [ -z "$libdir" ]; then
	echo "build-fixtures: libcudart.so not found under $cuda/lib64" >&2
	exit 5
fi
stubs=$libdir/stubs
if [ ! -e "$stubs/libcuda.so" ]; then
	echo "build-fixtures: $stubs/libcuda.so (the driver API stub) not found" >&2
	exit 5
fi

# shellcheck disable=SC2206
gencode=(${XPGPU_GENCODE:--gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75})

mkdir -p "$out"
echo "build-fixtures: $("$nvcc" --version | tail -n 2 | head -n 1)" >&2
"$nvcc" -O2 -std=c++17 -lineinfo "${gencode[@]}" \
	-Xcompiler -Wall,-fno-omit-frame-pointer \
	-I"$inc" -cudart shared \
	-o "$out/xpgpu_fixture.tmp" "$here/fixture.cu" \
	-L"$libdir" -L"$stubs" -Xlinker -rpath="$libdir" -lcuda -ldl -lpthread
mv -f "$out/xpgpu_fixture.tmp" "$out/xpgpu_fixture"
echo "build-fixtures: $out/xpgpu_fixture" >&2
