#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install what xprobe needs on Debian 12, only what is missing.  Runs as
# root (or through sudo when available).  Used by `make deps`, `make demo`,
# `make test` and .ci/run.
set -eu
# man-db: `man -l` renders the installed xprobe(1) in tests/cli/test_install.py.
# libcapstone-dev: Capstone decodes x86 code so +0x uprobe offsets are refused mid-instruction (src/resolve/insn.c).
# chromium-headless-shell: the HTML report's tests load each page in a real browser
# (tests/pylib/browser.py; Debian 12 has it beside the full chromium package).
PKGS="build-essential cmake pkg-config clang llvm libclang-rt-14-dev
libbpf-dev bpftool libelf-dev libdw-dev libpcre2-dev libsimdjson-dev
libprotobuf-c-dev protobuf-c-compiler systemtap-sdt-dev
libcapstone-dev
chromium-headless-shell
man-db
python3 python3-pytest python3-jsonschema jq
linux-libc-dev util-linux procps"
if [ "${XPROBE_BENCH_DEPS:-0}" = 1 ]; then
	# redis-server, redis-tools: bench/bench_app.sh's application
	PKGS="$PKGS bpftrace libbpf-tools liblttng-ust-dev lttng-tools linux-perf hyperfine redis-server redis-tools"
fi
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
