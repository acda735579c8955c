#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_host.sh - live host collection side by side: xprobe's eBPF
# collector vs bpftrace, libbpf-tools funclatency and empty BPF programs
# on the same attachments.  Prints one table of medians and ratios, then
# the issue's goals, met or missed.  Details: bench/bench_host.py.
#
#   bench/bench_host.sh [BUILD_DIR]      (default: build)
#   XPROBE_BENCH_RUNS=N                  rounds per figure (default 5)
# Needs root, bpftrace, libbpf-tools (funclatency), /usr/bin/python3.11.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
if [ "$(id -u)" != 0 ]; then
	echo "bench_host: needs root (eBPF, uprobes)" >&2
	exit 1
fi
for tool in bpftrace funclatency /usr/bin/python3.11; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench_host: $tool is missing (make bench installs the benchmark dependencies)" >&2
		exit 1
	}
done
if [ ! -x "$build/bench/xp_bench_floor" ] || [ ! -x "$build/bench/xp_bench_runstat" ]; then
	cmake --build "$build" --target xp_bench_floor xp_bench_runstat >/dev/null
fi
exec /usr/bin/python3 "$here/bench_host.py" "$build"
