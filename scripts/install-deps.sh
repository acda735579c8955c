#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install what xprobe needs on Debian 12, only what is missing.  Runs as
# root (or through sudo when available).
#
#   install-deps.sh [build|test|bench]     (default build)
#
#   build  what building the CLI and libxprobe and running them needs:
#          `make`, `make demo`, `make install` (the demo runs the CLI and
#          its bundled fixture, mounts tracefs with util-linux's mount and
#          summarises a document with Debian's python3)
#   test   build, and every program the tests, their fixtures and the
#          sanitizer and fuzz builds run: `make test` (tests/tools/
#          test_install_deps.py proves each program the suite runs comes
#          from a package of this list, or of Debian's required set)
#   bench  test, and the tools bench/ compares against: `make bench`
#
# `--list SET` prints the packages of SET, one per line, and installs
# nothing (the dependency test reads it).
set -eu
# Building: compilers (clang also compiles the BPF programs), libbpf and
# bpftool (skeletons), libelf/libdw (ELF, DWARF), pcre2 (selectors),
# simdjson (the JSON decoder plugin), protobuf-c (trace files),
# systemtap-sdt-dev (USDT markers of the fixtures), Capstone (+0x uprobe
# offsets are refused mid-instruction: src/resolve/insn.c), the kernel's
# uapi headers.  Running the demo: util-linux (mount, for tracefs), procps,
# python3.
BUILD="build-essential cmake pkg-config clang llvm
libbpf-dev bpftool libelf-dev libdw-dev libpcre2-dev libsimdjson-dev
libprotobuf-c-dev protobuf-c-compiler systemtap-sdt-dev
libcapstone-dev
linux-libc-dev util-linux procps python3"
# Testing: clang's sanitizer and libFuzzer runtimes, pytest and jsonschema
# (every document is validated), jq, man-db (`man -l` renders xprobe(1) in
# tests/cli/test_install.py), chromium-headless-shell (the HTML report's
# tests load each page in a real browser: tests/pylib/browser.py),
# bpftrace (tests/live/test_probe_cost.py reads the same pair with it),
# linux-perf and libbpf-tools (perf sched and offcputime:
# tests/live/test_explain_anchors.py checks --explain against them),
# prometheus and prometheus-node-exporter (promtool checks every
# --metrics-out file; tests/live/test_histogram_continuous.py starts both
# servers on loopback ports and queries what they scraped), binutils
# (readelf and strip in the install and offset tests) and the package that
# holds its x86-64 tools (nm: the layering test reads the built objects'
# symbols).
TEST="libclang-rt-14-dev python3-pytest python3-jsonschema jq man-db
chromium-headless-shell bpftrace linux-perf libbpf-tools prometheus
prometheus-node-exporter binutils binutils-x86-64-linux-gnu"
# Benchmarks: the tools each bench/ script runs side by side (perf and
# libbpf-tools come with the test set).
# redis-server, redis-tools: bench/bench_app.sh's application.
BENCH="liblttng-ust-dev lttng-tools hyperfine redis-server redis-tools gdb"

set_of() {
	case "$1" in
	build) echo "$BUILD" ;;
	test) echo "$BUILD $TEST" ;;
	bench) echo "$BUILD $TEST $BENCH" ;;
	*)
		echo "install-deps: unknown set '$1' (build, test or bench)" >&2
		exit 2
		;;
	esac
}

if [ "${1:-}" = --list ]; then
	for p in $(set_of "${2:-build}"); do echo "$p"; done
	exit 0
fi
set_name=${1:-build}
# the older spelling of the bench set
if [ "${XPROBE_BENCH_DEPS:-0}" = 1 ]; then
	set_name=bench
fi
PKGS=$(set_of "$set_name")
missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -z "$missing" ]; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps: missing packages:$missing (run as root)" >&2
		exit 1
	fi
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
