#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh - the GPU truth check (issue 11): one prepared script, run from
# the repository root on a machine with an NVIDIA GPU, the CUDA toolkit and
# the repository, nothing built.  It checks the prerequisites (and names
# exactly what is missing; it never installs anything or uses the
# network), stops with exit 3 when there is no NVIDIA GPU, builds xprobe
# and the CUDA fixture (tests/gpu/build-fixtures.sh), runs nvidia-smi, then
# hands over to tests/gpu/truth.py, which measures the fixture with the
# real CUPTI and compares every count and duration with the fixture's own
# (tests/gpu/README.md lists the rows).  One table at the end, also written
# to $OUT/gpu-table.txt when $OUT is set (with the log and documents) and
# to <build>/gpu/gpu-table.txt.  Not part of `make test`.
#
#   tests/gpu/run.sh [--build-dir DIR] [--prebuilt] [--build-only] [--budget-s N]
#
#   --build-dir DIR  build into DIR (default: build)
#   --prebuilt       DIR already holds a build (bin/xprobe, lib/libxprobe.so,
#                    lib/xprobe/...): use it, build only the fixture.  A
#                    DIR/deps folder (shared libraries the build needs that
#                    this machine lacks) is put on LD_LIBRARY_PATH
#   --build-only     prerequisites and builds only, no GPU needed (exit 0/5)
#   --budget-s N     the whole run's time budget, default 470 (under 8 min):
#                    the build gets what it needs up to 300 s, the checks
#                    what is left; a check that does not fit is a FAIL row
#
# Exit: 0 every row passed; 1 a row failed; 2 usage; 3 no NVIDIA GPU;
# 5 xprobe or the fixture cannot be built (missing prerequisites are
# listed, or the build's error is shown).
set -uo pipefail

usage() {
	sed -n '/^#   tests\/gpu\/run.sh/,/^# 5 xprobe/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

build=build
prebuilt=0
build_only=0
budget=470
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir)
		[ $# -ge 2 ] || usage
		build=$2
		shift 2
		;;
	--prebuilt)
		prebuilt=1
		shift
		;;
	--build-only)
		build_only=1
		shift
		;;
	--budget-s)
		[ $# -ge 2 ] || usage
		case "$2" in '' | *[!0-9]*) usage ;; esac
		budget=$2
		shift 2
		;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2
case "$build" in /*) ;; *) build=$root/$build ;; esac
start=$(date +%s)
deadline=$((start + budget))
gpudir=$build/gpu
rows=$gpudir/rows.tsv
out=${OUT:-}

say() { echo "gpu-check: $*" >&2; }
left() { echo $((deadline - $(date +%s))); }
# row WHAT EXPECTED GOT PASS|FAIL (tabs and newlines flattened)
row() {
	local a b c
	a=$(printf '%s' "$1" | tr '\t\n' '  ')
	b=$(printf '%s' "$2" | tr '\t\n' '  ')
	c=$(printf '%s' "$3" | tr '\t\n' '  ')
	printf '%s\t%s\t%s\t%s\n' "$a" "$b" "$c" "$4" >>"$rows"
	say "$4: $a: $c"
}

# The table of the rows so far, when truth.py cannot run (no python3, an
# early stop): the same markdown layout truth.py prints.
table_from_rows() {
	awk -F '\t' 'BEGIN { print "| # | what | expected | got | result |"; print "| ---: | --- | --- | --- | --- |" }
		{ n++; if ($4 != "PASS") bad = bad " #" n; gsub(/\|/, "\\|");
		  printf "| %d | %s | %s | %s | %s |\n", n, $1, $2, $3, $4 }
		END { print ""; printf "%d rows%s\n", n, bad == "" ? ", all passed" : "; FAILED:" bad }' "$rows"
}

write_table() {
	local text=$1
	printf '\n%s\n' "$text"
	printf '%s\n' "$text" >"$gpudir/gpu-table.txt"
	if [ -n "$out" ]; then
		mkdir -p "$out" && printf '%s\n' "$text" >"$out/gpu-table.txt"
	fi
}

# stop EXIT_CODE MESSAGE: a stop before the checks; the table of the rows so far
stop() {
	local code=$1
	shift
	say "$*"
	write_table "$(table_from_rows)
stopped: $*"
	collect
	exit "$code"
}

collect() {
	[ -n "$out" ] || return 0
	mkdir -p "$out"
	for f in build.log fixtures.log nvidia-smi.txt gpu-log.txt gpu-docs.jsonl; do
		if [ -f "$gpudir/$f" ]; then
			tail -c 8000000 "$gpudir/$f" >"$out/$f" 2>/dev/null || true
		fi
	done
}

# --- prerequisites -------------------------------------------------------------
# Each missing piece is named with the Debian/Ubuntu package that has it.
miss_build=()
miss_run=()
have() { command -v "$1" >/dev/null 2>&1; }
libdirs="/usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib /usr/local/lib64"
find_static() {
	local d
	for d in $libdirs; do
		[ -f "$d/lib$1.a" ] && return 0
	done
	return 1
}
find_cmake_pkg() {
	local d
	for d in $libdirs /usr/share /usr/local/share ${CMAKE_PREFIX_PATH:+${CMAKE_PREFIX_PATH//:/ }}; do
		for f in "$d"/cmake/"$1"/*onfig.cmake "$d"/"$1"/cmake/*onfig.cmake; do
			[ -f "$f" ] && return 0
		done
	done
	return 1
}

check_prereqs() {
	local t pc
	have python3 || miss_run+=("python3 (the check driver tests/gpu/truth.py)")
	[ "$prebuilt" = 1 ] && return 0
	for t in cmake make cc c++ pkg-config protoc-c; do
		if ! have "$t"; then
			case "$t" in
			cmake) miss_build+=("cmake (package cmake)") ;;
			make) miss_build+=("make (package make)") ;;
			cc) miss_build+=("cc: a C compiler (package gcc)") ;;
			c++) miss_build+=("c++: a C++ compiler (package g++)") ;;
			pkg-config) miss_build+=("pkg-config (package pkg-config)") ;;
			protoc-c) miss_build+=("protoc-c (package protobuf-c-compiler)") ;;
			esac
		fi
	done
	if ! have clang && ! have clang-14 && ! have clang-15 && ! have clang-16; then
		miss_build+=("clang: the BPF compiler (package clang)")
	fi
	if ! have bpftool && [ ! -x /usr/sbin/bpftool ] && [ ! -x /usr/local/sbin/bpftool ]; then
		miss_build+=("bpftool (package bpftool, or linux-tools-\$(uname -r) on Ubuntu)")
	fi
	if have pkg-config; then
		for pc in libbpf:libbpf-dev libelf:libelf-dev libdw:libdw-dev \
			libpcre2-8:libpcre2-dev libprotobuf-c:libprotobuf-c-dev capstone:libcapstone-dev; do
			pkg-config --exists "${pc%%:*}" ||
				miss_build+=("${pc%%:*} (pkg-config module; package ${pc#*:})")
		done
	fi
	find_cmake_pkg simdjson || miss_build+=("simdjson CMake package (package libsimdjson-dev)")
	if [ ! -f /usr/include/x86_64-linux-gnu/asm/unistd_64.h ] && [ ! -f /usr/include/asm/unistd_64.h ]; then
		miss_build+=("asm/unistd_64.h (package linux-libc-dev)")
	fi
	[ -f /sys/kernel/btf/vmlinux ] ||
		miss_build+=("/sys/kernel/btf/vmlinux: kernel BTF (vmlinux.h is generated from it; a kernel with CONFIG_DEBUG_INFO_BTF)")
	static=ON
	for t in bpf elf z lzma bz2 dw pcre2-8 protobuf-c capstone; do
		find_static "$t" || static=OFF
	done
}

check_nvcc() {
	if [ ! -x /usr/local/cuda/bin/nvcc ] && ! have nvcc && [ -z "${NVCC:-}" ]; then
		miss_build+=("nvcc: the CUDA toolkit (/usr/local/cuda/bin/nvcc) for the fixture")
	fi
}

static=ON
check_prereqs
check_nvcc
if [ ${#miss_run[@]} -gt 0 ]; then
	for m in "${miss_run[@]}"; do say "missing: $m"; done
fi

# --- the first GPU check ------------------------------------------------------
if [ "$build_only" = 0 ]; then
	gpus=
	if have nvidia-smi; then
		gpus=$(timeout 60 nvidia-smi -L 2>&1)
		rc=$?
	else
		rc=127
		gpus="nvidia-smi not found"
	fi
	if [ $rc -ne 0 ] || ! printf '%s\n' "$gpus" | grep -q '^GPU [0-9]'; then
		say "no NVIDIA GPU: nvidia-smi -L: $(printf '%s' "$gpus" | head -n 3 | tr '\n' ' ' | sed 's/ *$//') (rc $rc)"
		say "this check needs a machine with an NVIDIA GPU and its driver; nothing was built or run"
		exit 3
	fi
fi
mkdir -p "$gpudir" || exit 5
: >"$rows"
if [ "$build_only" = 0 ]; then
	{
		nvidia-smi
		nvidia-smi -q 2>/dev/null | head -n 60
	} >"$gpudir/nvidia-smi.txt" 2>&1
	smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total,uuid --format=csv,noheader 2>&1 | head -n 4 | tr '\n' ';')
	row "nvidia-smi lists the GPU" "one NVIDIA GPU with its driver" "$smi" PASS
fi

# --- build xprobe -------------------------------------------------------------
if [ ${#miss_build[@]} -gt 0 ]; then
	say "cannot build: missing prerequisites (nothing is installed by this script):"
	for m in "${miss_build[@]}"; do say "  - $m"; done
	say "install them, or build on another machine with tests/gpu/pack-build.sh DIR, bring DIR here, and run: tests/gpu/run.sh --build-dir DIR --prebuilt"
	row "build prerequisites" "all present" "missing: $(printf '%s; ' "${miss_build[@]}")" FAIL
	stop 5 "cannot build: missing prerequisites"
fi

if [ "$prebuilt" = 1 ]; then
	for f in bin/xprobe lib/libxprobe.so; do
		[ -e "$build/$f" ] || stop 5 "--prebuilt: $build/$f does not exist"
	done
	if [ -d "$build/deps" ]; then
		export LD_LIBRARY_PATH="$build/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fi
	unresolved=$(for f in "$build/bin/xprobe" "$build"/lib/*.so "$build"/lib/xprobe/*.so "$build"/lib/xprobe/*/*.so; do
		[ -e "$f" ] && ldd "$f" 2>/dev/null | grep 'not found' | sed "s|^|$(basename "$f"): |"
	done | grep -v -E 'libcuda\.so|libcupti\.so|libnvidia-ml\.so' | sort -u | tr '\n' ';')
	if [ -n "$unresolved" ]; then
		row "prebuilt xprobe in $build" "every shared library resolves" "unresolved: $unresolved" FAIL
		stop 5 "prebuilt build has unresolved libraries: $unresolved"
	fi
	row "prebuilt xprobe in $build" "bin/xprobe, lib/libxprobe.so, libraries resolve" "$("$build/bin/xprobe" --version 2>&1 | head -n 1)" PASS
else
	t0=$(date +%s)
	tb=$(($(left) - 200))
	[ $tb -gt 300 ] && tb=300
	[ $tb -lt 60 ] && tb=60
	say "configuring and building xprobe in $build (static deps $static, at most $tb s)"
	{
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXPROBE_STATIC_DEPS="$static"
	} >"$gpudir/build.log" 2>&1 || {
		tail -n 30 "$gpudir/build.log" >&2
		row "build xprobe (cmake configure)" "configures" "failed: $(grep -m1 -i 'error' "$gpudir/build.log" | cut -c1-200)" FAIL
		stop 5 "cmake configure failed (log: $gpudir/build.log)"
	}
	# the CLI, the Agent (libxprobe.so, with the CUPTI backend inside) and
	# the JSON decoder plugin; XPGPU_TARGETS replaces the list
	read -r -a targets <<<"${XPGPU_TARGETS:-xprobe libxprobe xprobe_json}"
	say "targets: ${targets[*]}"
	if ! timeout "$tb" cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >>"$gpudir/build.log" 2>&1; then
		tail -n 40 "$gpudir/build.log" >&2
		row "build xprobe" "builds in <= $tb s" "failed or timed out after $(($(date +%s) - t0)) s: $(grep -m1 -E 'error|Error' "$gpudir/build.log" | cut -c1-200)" FAIL
		stop 5 "the xprobe build failed (log: $gpudir/build.log)"
	fi
	cupti_inc=$(sed -n 's/^XPL_CUPTI_INCLUDE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
	row "build xprobe (${targets[*]})" "builds" "built in $(($(date +%s) - t0)) s, static deps $static, CUPTI headers ${cupti_inc:-not recorded}; $("$build/bin/xprobe" --version 2>&1 | head -n 1)" PASS
fi

# --- build the fixture ----------------------------------------------------------
t0=$(date +%s)
if ! timeout 180 "$here/build-fixtures.sh" "$gpudir" >"$gpudir/fixtures.log" 2>&1; then
	rc=$?
	cat "$gpudir/fixtures.log" >&2
	row "build the CUDA fixture (nvcc)" "builds" "failed (rc $rc): $(tail -n 1 "$gpudir/fixtures.log" | cut -c1-200)" FAIL
	stop 5 "the fixture build failed (log: $gpudir/fixtures.log)"
fi
row "build the CUDA fixture (nvcc, sm_90 + compute_75 PTX)" "builds" "built in $(($(date +%s) - t0)) s: $(head -n 1 "$gpudir/fixtures.log" | sed 's/^build-fixtures: //')" PASS

if [ "$build_only" = 1 ]; then
	write_table "$(table_from_rows)"
	exit 0
fi

if [ ${#miss_run[@]} -gt 0 ]; then
	row "check driver prerequisites" "python3" "missing: $(printf '%s; ' "${miss_run[@]}")" FAIL
	stop 1 "cannot run the checks: ${miss_run[*]}"
fi

"$root/scripts/ensure-tracefs.sh" >/dev/null 2>&1 || true

# --- the checks -------------------------------------------------------------------
tl=$(($(left) - 5))
if [ $tl -lt 60 ]; then
	row "checks" "time left" "only $tl s of the $budget s budget left after building" FAIL
	stop 1 "no time left for the checks"
fi
say "running the checks (at most $tl s)"
tables=(--table "$gpudir/gpu-table.txt")
[ -n "$out" ] && mkdir -p "$out" && tables+=(--table "$out/gpu-table.txt")
rm -f "$gpudir/gpu-table.txt"
timeout -k 10 "$tl" python3 "$here/truth.py" \
	--xprobe "$build/bin/xprobe" --libxprobe "$build/lib/libxprobe.so" \
	--fixture "$gpudir/xpgpu_fixture" --root "$root" --root-pid $$ \
	--rows "$rows" "${tables[@]}" \
	--log "$gpudir/gpu-log.txt" --docs "$gpudir/gpu-docs.jsonl" \
	--deadline $((deadline - 15))
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	if [ -s "$gpudir/gpu-table.txt" ]; then
		# SIGTERM from timeout: truth.py marked the rest "not run" and
		# printed its table
		say "the checks were stopped by the time budget (exit $rc)"
	else
		row "checks (tests/gpu/truth.py)" "exit 0 or 1 with a table" "exit $rc (killed by the time budget, or crashed: see $gpudir/gpu-log.txt)" FAIL
		write_table "$(table_from_rows)"
	fi
	rc=1
fi
collect
say "done in $(($(date +%s) - start)) s, exit $rc"
exit $rc
