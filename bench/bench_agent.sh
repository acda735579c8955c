#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_agent.sh - the Agent's benchmark table (issue 10), in one run:
#
#   1. start to armed, NVTX measurement (this script): the time from
#      spawning `xprobe measure --pid P --from cuda:nvtx_range_start:...
#      --to cuda:nvtx_range_end:...` to the Agent's ARM inside the target
#      (the arm_ns the Agent itself reports, CLOCK_MONOTONIC, so polling
#      adds nothing), side by side with
#        - `xprobe --version`: spawn to exit, the process start-up every
#          xprobe command pays (goal: start to armed <= start-up + 5 ms);
#        - bpftrace's spawn to armed for one uprobe on the same fixture
#          (its BEGIN probe prints after every probe is attached): the
#          anchor a user compares with.
#      The target is tests/fixtures/live_nvtx under
#      NVTX_INJECTION64_PATH=<build>/lib/libxprobe.so, idle (no range while
#      measuring, so every run arms the same empty capture); each measure
#      runs --duration-ms 20 and ends NO_MATCHED_SAMPLES, which is expected.
#      The three alternate run by run so background load hits all alike.
#   2. the NVTX pair cost inside the target with a capture armed over the
#      socket, a rule that matches and one that rejects, beside LTTng-UST
#      and no tool: bench/bench_lib.sh's "Agent pair" rows
#      (bench/lib/bench_agent_nvtx.c; LIB_RUNS, default 3), when it exists;
#   3. online injection vs gdb (inject's bench, bench/bench_inject.sh), when
#      it exists.
# Medians of RUNS; ratios printed as x (xprobe / anchor: < 1 is faster).
#
# Usage: bench/bench_agent.sh [BUILD_DIR] [RUNS]   (defaults: ./build, 15)
# Needs root (eBPF for bpftrace, the Agent socket of a root target),
# bpftrace, and the targets xprobe, libxprobe, fx_live_nvtx; rows 2 and 3
# need what bench_lib.sh (lttng-tools) and bench_inject.sh (gdb) need.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${XPROBE_BUILD:-$root/build}}
runs=${2:-15}
status=0

/usr/bin/python3 - "$build" "$runs" "$root" <<'EOF' || status=1
import os
import signal
import statistics
import subprocess
import sys
import time

build, runs = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, os.path.join(sys.argv[3], "tests", "pylib"))
from agent_wire import REPLY, hello_bytes, socket_path  # noqa: E402
xprobe = os.path.join(build, "bin", "xprobe")
lib = os.path.join(build, "lib", "libxprobe.so")
fixture = os.path.join(build, "tests", "fixtures", "live_nvtx")
for path in (xprobe, lib, fixture):
    if not os.path.exists(path):
        sys.exit("bench_agent: %s is missing (build xprobe, libxprobe, fx_live_nvtx)" % path)
bpftrace = subprocess.run(["sh", "-c", "command -v bpftrace"], capture_output=True,
                          text=True).stdout.strip()
if not bpftrace:
    sys.exit("bench_agent: bpftrace is not installed (the anchor)")

def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def hello(path):
    """(state, arm_ns) of the Agent, as a second client (agent.h)."""
    f = REPLY.unpack(hello_bytes(path))
    return f[6], f[12]


env = dict(os.environ, NVTX_INJECTION64_PATH=lib)
fx = subprocess.Popen([fixture, "--mode", "mixed", "--iters", "1"], stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, text=True, env=env)
fx.stdout.readline()  # ready: its first NVTX call started the Agent
pid = fx.pid
sock = socket_path(pid, os.geteuid())
sel = ["--from", "cuda:nvtx_range_start:name~^step$", "--to", "cuda:nvtx_range_end:name~^step$"]


def xprobe_version():
    t0 = now()
    subprocess.run([xprobe, "--version"], stdout=subprocess.DEVNULL, check=True)
    return now() - t0


def nvtx_armed():
    t0 = now()
    p = subprocess.Popen([xprobe, "measure", "--pid", str(pid)] + sel +
                         ["--match", "exact", "--duration-ms", "20", "--json"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    arm = 0
    while p.poll() is None:
        state, arm_ns = hello(sock)
        if state in (1, 2) and arm_ns >= t0:
            arm = arm_ns
            break
        time.sleep(0.0002)
    p.wait()
    if not arm:
        raise SystemExit("bench_agent: measure never armed (rc %s)" % p.returncode)
    return arm - t0


def bpftrace_armed():
    prog = 'uprobe:%s:xp_fx_handler { @n = count(); } BEGIN { printf("armed\\n"); }' % fixture
    t0 = now()
    p = subprocess.Popen([bpftrace, "-B", "line", "-p", str(pid), "-e", prog], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        if line.strip() == "armed":
            break
    t = now() - t0
    p.send_signal(signal.SIGINT)
    try:
        p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    return t


ver, arm, bpf = [], [], []
try:
    for _ in range(2):  # warm the page cache for all three
        xprobe_version(), nvtx_armed(), bpftrace_armed()
    for _ in range(runs):
        ver.append(xprobe_version())
        arm.append(nvtx_armed())
        bpf.append(bpftrace_armed())
finally:
    fx.stdin.close()
    fx.wait()

mv, ma, mb = (statistics.median(v) / 1e6 for v in (ver, arm, bpf))
print("bench_agent: start to armed, median of %d runs (ms)" % runs)
print("  %-44s %9.2f" % ("xprobe --version (spawn to exit)", mv))
print("  %-44s %9.2f" % ("xprobe measure NVTX (spawn to Agent ARM)", ma))
print("  %-44s %9.2f" % ("bpftrace uprobe (spawn to BEGIN)", mb))
print("  %-44s %9.2f  (goal <= 5 ms: %s)" % ("  beyond start-up (measure - --version)", ma - mv,
                                            "met" if ma - mv <= 5 else "MISSED"))
print("  %-44s %9.3fx" % ("  measure NVTX / xprobe --version", ma / mv))
print("  %-44s %9.3fx" % ("  measure NVTX / bpftrace uprobe", ma / mb))
EOF

# the NVTX pair cost with a capture armed: bench_lib.sh's "Agent pair" rows
# (bench/lib/bench_agent_nvtx.c, beside LTTng-UST and no tool)
if [ -x "$root/bench/bench_lib.sh" ] && [ -e "$root/bench/lib/bench_agent_nvtx.c" ]; then
	echo
	"$root/bench/bench_lib.sh" "$build" "${LIB_RUNS:-3}" || status=1
else
	echo
	echo "bench_agent: bench/lib/bench_agent_nvtx.c (NVTX pair cost, capture armed) is not in this tree"
fi
if [ -x "$root/bench/bench_inject.sh" ]; then
	echo
	XPROBE_BUILD="$build" "$root/bench/bench_inject.sh" 5 || status=1
else
	echo
	echo "bench_agent: bench/bench_inject.sh (injection vs gdb) is not in this tree"
fi
exit $status
