#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_validate.sh - `xprobe validate` lookups side by side with readelf
# (issue #3).  Three kinds of lookup, each against live targets:
#   name     uprobe:<bin>:<symbol>:entry        vs  readelf -Ws <bin> | grep -w <symbol>
#   symbol=  uprobe:<bin>:symbol=<C++ sig>:entry vs  readelf -Ws -C <bin> | grep -F '<sig>'
#   usdt     python:gc_start -> python:gc_end   vs  readelf -n <bin>
# on /usr/bin/python3.11 (a live CPython), libpython3.11 and, when
# installed, libLLVM-14 (45,000 C++ symbols; libstdc++ otherwise), mapped
# by a live fixture.  Every command runs through `sh -c` (the readelf
# side is a pipeline), the two sides alternate run by run so background
# load hits both alike, and each row reports the median wall time and the
# peak RSS (wait4 of the shell, which covers its children), then the
# ratio readelf/xprobe (> 1: xprobe is faster).  xprobe's own start
# (`xprobe --version`) and readelf's (`readelf --version`) are printed as
# the floor each side pays before any lookup.
#
# Usage: bench/bench_validate.sh [runs]    (root; XPROBE_BUILD=build dir)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${XPROBE_BUILD:-$here/build}
runs=${1:-41}
exec /usr/bin/python3 - "$build" "$runs" <<'EOF'
import os
import statistics
import subprocess
import sys
import time

build, runs = sys.argv[1], int(sys.argv[2])
xprobe = os.path.join(build, "bin", "xprobe")
fixture = os.path.join(build, "tests", "fixtures", "target_funcs")
PY = "/usr/bin/python3.11"
LIBPY = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
CXX_CANDIDATES = [
    ("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
     "llvm::Function::getInstructionCount() const",
     "_ZN4llvm8Function23setValueSubclassDataBitEjb"),
    ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
     "std::runtime_error::what() const",
     "_ZNKSt13runtime_error4whatEv"),
]
for path in (xprobe, fixture, PY, LIBPY):
    if not os.path.exists(path):
        sys.exit("bench_validate: %s is missing (build the xprobe and fx_target_funcs targets)" % path)
cxx = next(c for c in CXX_CANDIDATES if os.path.exists(c[0]))
CXXLIB = os.path.realpath(cxx[0])


def start(argv, ready):
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("bench_validate: %r did not start" % argv)
        if line.strip() == ready:
            return p


def run_once(cmd):
    """Wall time and CPU time (ns) of sh -c cmd (children included)."""
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter_ns() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench_validate: %r failed" % cmd)
    return t, int((ru.ru_utime + ru.ru_stime) * 1e9)


def peak_rss(cmd):
    """Peak RSS (KiB) of sh -c cmd and its children, by GNU time (a fork
    of this Python process would report Python's own RSS)."""
    best = 0
    for _ in range(3):
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "sh", "-c", cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        best = max(best, int(p.stderr.strip().splitlines()[-1]))
    return best


def bench_pair(a, b):
    """Medians of wall and CPU time, alternating a and b run by run."""
    wa, wb, ca, cb = [], [], [], []
    for _ in range(3):  # warm the page cache for both
        run_once(a)
        run_once(b)
    for _ in range(runs):
        w, c = run_once(a)
        wa.append(w)
        ca.append(c)
        w, c = run_once(b)
        wb.append(w)
        cb.append(c)
    med = statistics.median
    return med(wa), med(ca), peak_rss(a), med(wb), med(cb), peak_rss(b)


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


py = start([PY, "-c", "import sys; print('ready', flush=True); sys.stdin.read()"], "ready")
fx = start([fixture, "--dlopen", LIBPY, "--dlopen", CXXLIB], "ready")


def validate(pid, start_sel, end_sel="syscall:read:exit", match="first-after"):
    return "%s validate --pid %d --from %s --to %s --match %s --json >/dev/null" % (
        xprobe, pid, q(start_sel), q(end_sel), match)


rows = [
    ("name", "python3.11", validate(py.pid, "uprobe:%s:PyObject_GC_Track:entry" % PY),
     "readelf -Ws %s | grep -w PyObject_GC_Track >/dev/null" % PY),
    ("name", "libpython3.11", validate(fx.pid, "uprobe:%s:PyObject_GC_Track:entry" % LIBPY),
     "readelf -Ws %s | grep -w PyObject_GC_Track >/dev/null" % LIBPY),
    ("name", os.path.basename(CXXLIB), validate(fx.pid, "uprobe:%s:%s:entry" % (CXXLIB, cxx[2])),
     "readelf -Ws %s | grep -w %s >/dev/null" % (CXXLIB, cxx[2])),
    ("symbol=", os.path.basename(CXXLIB),
     validate(fx.pid, "uprobe:%s:symbol=%s:entry" % (CXXLIB, cxx[1])),
     "readelf -Ws -C %s | grep -F %s >/dev/null" % (CXXLIB, q(cxx[1]))),
    ("symbol=", "python3.11", validate(py.pid, "uprobe:%s:symbol=PyObject_GC_Track:entry" % PY),
     "readelf -Ws -C %s | grep -F PyObject_GC_Track >/dev/null" % PY),
    ("usdt", "python3.11", validate(py.pid, "python:gc_start", "python:gc_end", "exact"),
     "readelf -n %s >/dev/null" % PY),
    ("usdt", "libpython3.11", validate(fx.pid, "python:gc_start", "python:gc_end", "exact"),
     "readelf -n %s >/dev/null" % LIBPY),
]

try:
    print("bench_validate: %d runs per command, medians; x = readelf / xprobe (> 1: xprobe faster)"
          % runs)
    fw, fc, fr, gw, gc, gr = bench_pair("%s --version >/dev/null" % xprobe,
                                        "readelf --version >/dev/null")
    print("start-up floor: xprobe --version %.2f ms wall, %.2f ms cpu, %d KiB; "
          "readelf --version %.2f ms wall, %.2f ms cpu, %d KiB"
          % (fw / 1e6, fc / 1e6, fr, gw / 1e6, gc / 1e6, gr))
    print("%-8s %-16s | %8s %8s %7s | %8s %8s %7s | %6s %6s %6s" % (
        "lookup", "object", "xp wall", "xp cpu", "xp KiB", "re wall", "re cpu", "re KiB",
        "wall x", "cpu x", "rss x"))
    slowest = None
    for kind, obj, a, b in rows:
        aw, ac, ar, bw, bc, br = bench_pair(a, b)
        ratio = bw / aw
        slowest = (ratio, kind, obj) if slowest is None or ratio < slowest[0] else slowest
        print("%-8s %-16s | %8.2f %8.2f %7d | %8.2f %8.2f %7d | %6.2f %6.2f %6.2f" % (
            kind, obj, aw / 1e6, ac / 1e6, ar, bw / 1e6, bc / 1e6, br, ratio, bc / ac, br / ar))
    print("slowest wall ratio: %.2f (%s %s): %s" % (
        slowest[0], slowest[1], slowest[2],
        "xprobe is faster on every lookup" if slowest[0] > 1 else
        "readelf is faster on at least one lookup"))
finally:
    for p in (py, fx):
        p.stdin.close()
        p.terminate()
        p.wait()
EOF
