#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_cuda.sh - the CUDA benchmark table (issue 11), in one run, on the
# CUPTI TEST DOUBLE (tests/fixtures/cupti_double: no GPU needed; what a
# real GPU costs is tests/gpu/run.sh's):
#
#   1. the CUPTI backend inside the target (bench/lib/bench_cupti.sh, the
#      libxprobe half): ns per API callback filtered out / retained, per
#      activity record harvested (exact and aggregate), ARM times, each
#      beside the same loop with no Agent;
#   2. time to armed (this script): spawn of `xprobe measure --pid P
#      --from cuda:kernel_start --to cuda:kernel_end ...` to the moment the
#      target's Agent answers a HELLO with its capture armed, for
#        - a fresh cupti_fixture (preloaded libxprobe: its socket answers
#          from the start), whose first CUDA ARM loads CUPTI, subscribes
#          and enables the activity kinds;
#        - the same target armed again (CUPTI already loaded);
#      side by side with an NVTX measurement's (tests/fixtures/live_nvtx
#      under NVTX_INJECTION64_PATH, the same path up to the ARM) and with
#      `xprobe --version` (the start-up every command pays).  Both
#      measurements connect and HELLO the same way, so "CUDA - NVTX" is
#      what arming CUDA adds after the socket answered (goal <= 10 ms).
#      The armed moment is observed from outside (a second client's HELLO
#      every 0.2 ms: the Agent's one server thread answers it only after
#      the ARM it is busy with), the same way for both.
# Medians of RUNS; ratios as x (CUDA / NVTX).
#
# Usage: bench/bench_cuda.sh [BUILD_DIR] [RUNS]   (defaults: ./build, 11)
# Needs root (the targets are root's), and in BUILD_DIR: xprobe, libxprobe,
# cupti_double (the CUPTI headers are needed to build it), fx_live_nvtx.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${XPROBE_BUILD:-$root/build}}
runs=${2:-11}
status=0

if [ -e "$root/bench/lib/bench_cupti.sh" ]; then
	# shellcheck source=lib/bench_cupti.sh
	. "$root/bench/lib/bench_cupti.sh"
	bench_cupti_rows "$build" "${LIB_RUNS:-5}" || status=1
	echo
fi

/usr/bin/python3 - "$build" "$runs" "$root" <<'EOF' || status=1
import os
import statistics
import subprocess
import sys
import time

build, runs = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, os.path.join(sys.argv[3], "tests", "pylib"))
from agent_wire import REPLY, hello_bytes, socket_path  # noqa: E402
xprobe = os.path.join(build, "bin", "xprobe")
lib = os.path.join(build, "lib", "libxprobe.so")
double = os.path.join(build, "tests", "cupti_double")
nvtx_fixture = os.path.join(build, "tests", "fixtures", "live_nvtx")
for path in (xprobe, lib, os.path.join(double, "cupti_fixture"), nvtx_fixture):
    if not os.path.exists(path):
        sys.exit("bench_cuda: %s is missing (build xprobe, libxprobe, cupti_double, "
                 "fx_live_nvtx)" % path)

def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def state(path):
    """The Agent's capture state, as a second client (agent.h HELLO)."""
    return REPLY.unpack(hello_bytes(path))[6]


def armed_after(pid, sel):
    """ns from spawning measure to its capture seen armed."""
    sock = socket_path(pid, os.geteuid())
    t0 = now()
    p = subprocess.Popen([xprobe, "measure", "--pid", str(pid)] + sel +
                         ["--match", "exact", "--duration-ms", "20", "--json"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = 0
    while p.poll() is None:
        if state(sock) in (1, 2):
            t = now() - t0
            break
        time.sleep(0.0002)
    p.wait()
    if not t:
        raise SystemExit("bench_cuda: measure never armed (rc %s)" % p.returncode)
    return t


def version():
    t0 = now()
    subprocess.run([xprobe, "--version"], stdout=subprocess.DEVNULL, check=True)
    return now() - t0


class Cupti:
    def __init__(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("XPROBE_")}
        env.update(LD_LIBRARY_PATH=os.path.join(double, "13"), LD_PRELOAD=lib)
        self.p = subprocess.Popen([os.path.join(double, "cupti_fixture")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
        self.p.stdin.write("init\n")
        assert self.p.stdout.readline().startswith("READY")

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


CUDA = ["--from", "cuda:kernel_start", "--to", "cuda:kernel_end"]
NVTX = ["--from", "cuda:nvtx_range_start:name~^step$", "--to", "cuda:nvtx_range_end:name~^step$"]
nv = subprocess.Popen([nvtx_fixture, "--mode", "mixed", "--iters", "1"], stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, text=True,
                      env=dict(os.environ, NVTX_INJECTION64_PATH=lib))
nv.stdout.readline()  # ready: its first NVTX call started the Agent
ver, nvtx, first, later = [], [], [], []
try:
    for i in range(runs + 2):  # two to warm the page cache
        fx = Cupti()
        try:
            v, n, f, l = version(), armed_after(nv.pid, NVTX), armed_after(fx.p.pid, CUDA), \
                armed_after(fx.p.pid, CUDA)
        finally:
            fx.close()
        if i >= 2:
            ver.append(v), nvtx.append(n), first.append(f), later.append(l)
finally:
    nv.stdin.close()
    nv.wait()

mv, mn, mf, ml = (statistics.median(x) / 1e6 for x in (ver, nvtx, first, later))
print("bench_cuda: spawn of xprobe measure to its capture armed, median of %d runs (ms)" % runs)
print("  %-58s %9.2f" % ("xprobe --version (spawn to exit)", mv))
print("  %-58s %9.2f" % ("NVTX measurement (live_nvtx)", mn))
print("  %-58s %9.2f" % ("CUDA measurement, first ARM (loads CUPTI)", mf))
print("  %-58s %9.2f" % ("CUDA measurement, later ARM (CUPTI loaded)", ml))
print("  %-58s %9.2f  (goal <= 10 ms: %s)" % ("  first CUDA ARM beyond NVTX's (after the socket answered)",
                                             mf - mn, "met" if mf - mn <= 10 else "MISSED"))
print("  %-58s %9.2f" % ("  later CUDA ARM beyond NVTX's", ml - mn))
print("  %-58s %9.3fx" % ("  CUDA first / NVTX", mf / mn))
print("  %-58s %9.3fx" % ("  CUDA later / NVTX", ml / mn))
print("  %-58s %9.3fx" % ("  CUDA first / xprobe --version", mf / mv))
EOF
exit $status
