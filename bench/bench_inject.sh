#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_inject.sh - online injection of the Agent (src/agent/agent_inject.c)
# side by side with what a user does today:
#   gdb -p PID -batch -ex 'call (void*)dlopen("<libxprobe.so>", 2)'
# Goal (issue 10): at most 0.1x gdb's time, the target stopped at most 5 ms.
#
# Each run starts a fresh tests/fixtures/inject_target (blocked mode plus a
# heartbeat thread that sleeps 1 ms at a time and records its longest
# lateness: how long it stood still), so every injection is a first one
# (dlopen + xprobe_agent_start), and the two tools alternate run by run so
# background load hits both alike.
# Rows (medians of the runs):
#   xprobe inject         wall time of the injecting command
#                         (test_agent_inject --inject: process start +
#                         checks + the calls), the library's own total,
#                         and how long the one thread it used stood still
#                         (PTRACE_INTERRUPT to PTRACE_DETACH), which it
#                         reports; the other threads never stop
#   xprobe inject, tid    the same injected through the heartbeat thread
#   = heartbeat           (--tid): the lateness the target itself measured
#   gdb call dlopen       wall time of gdb; the target stood still from
#                         attach to detach (every thread: gdb stops them
#                         all), measured by the heartbeat's lateness
#   heartbeat floor       the longest lateness with nothing attached, over the
#                         same window: the machine's own scheduling noise
# then the ratios xprobe/gdb (< 1: xprobe is faster / stops less).
#
# Usage: bench/bench_inject.sh [runs]    (root; XPROBE_BUILD=build dir;
# needs gdb, and the targets test_agent_inject, fx_inject_target, libxprobe)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${XPROBE_BUILD:-$here/build}
runs=${1:-9}
exec /usr/bin/python3 - "$build" "$runs" <<'EOF'
import os
import shutil
import statistics
import subprocess
import sys
import time

build, runs = sys.argv[1], int(sys.argv[2])
driver = os.path.join(build, "tests", "test_agent_inject")
fixture = os.path.join(build, "tests", "fixtures", "inject_target")
agent = os.path.join(build, "lib", "libxprobe.so")
gdb = shutil.which("gdb")
for path in (driver, fixture, agent):
    if not os.path.exists(path):
        sys.exit("bench_inject: %s is missing (build test_agent_inject, fx_inject_target, "
                 "libxprobe)" % path)
if not gdb:
    sys.exit("bench_inject: gdb is not installed (apt-get install gdb)")


class Target:
    def __init__(self):
        self.p = subprocess.Popen([fixture, "blocked", "--heartbeat"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.tids = {}
        for line in self.p.stdout:
            w = line.split()
            if w == ["ready"]:
                break
            if w[0] == "pid":
                self.pid = int(w[1])
            elif w[0] == "tid":
                self.tids[w[1]] = int(w[2])
        time.sleep(0.1)

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().split()

    def gap(self):
        return int(self.ask("gap")[1])

    def check(self):
        line = " ".join(self.ask("check"))
        if not line.startswith("check ok"):
            sys.exit("bench_inject: the target's self-check failed: %s" % line)

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(timeout=10)


def kv(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def xprobe_run(tid_role=None):
    t = Target()
    extra = ["--tid", str(t.tids[tid_role])] if tid_role else []
    t.gap()
    t0 = time.monotonic_ns()
    p = subprocess.run([driver, "--inject", str(t.pid), agent] + extra, capture_output=True,
                       text=True)
    wall = time.monotonic_ns() - t0
    gap = t.gap()
    if p.returncode != 0:
        sys.exit("bench_inject: injection failed: %s%s" % (p.stdout, p.stderr))
    r = kv(p.stdout)
    t.check()
    t.close()
    return wall, int(r["total_ns"]), int(r["stopped_ns"]), gap


def gdb_run():
    t = Target()
    t.gap()
    t0 = time.monotonic_ns()
    p = subprocess.run([gdb, "-p", str(t.pid), "-batch", "-ex",
                        'call (void*)dlopen("%s", 2)' % agent], capture_output=True, text=True)
    wall = time.monotonic_ns() - t0
    gap = t.gap()
    if p.returncode != 0 or "$1 = (void *) 0x" not in p.stdout:
        sys.exit("bench_inject: gdb failed: %s%s" % (p.stdout, p.stderr))
    t.check()
    t.close()
    return wall, gap


def floor_run(window_ns):
    t = Target()
    t.gap()
    time.sleep(window_ns / 1e9)
    gap = t.gap()
    t.close()
    return gap


xs, xts, gs, fl = [], [], [], []
for i in range(runs):
    xs.append(xprobe_run())
    xts.append(xprobe_run("heartbeat"))
    gs.append(gdb_run())
    fl.append(floor_run(statistics.median(g[0] for g in gs)))

med = statistics.median
ms = lambda ns: "%9.3f" % (ns / 1e6)
x_wall, x_total, x_stop = med(x[0] for x in xs), med(x[1] for x in xs), med(x[2] for x in xs)
xt_stop, xt_gap = med(x[2] for x in xts), med(x[3] for x in xts)
g_wall, g_gap = med(g[0] for g in gs), med(g[1] for g in gs)
floor = med(fl)
print("bench_inject: %d runs each, medians, ms; target: inject_target blocked --heartbeat "
      "(fresh per run)" % runs)
print("%-34s %9s %9s %9s" % ("", "wall", "in-lib", "stopped"))
print("%-34s %s %s %s  (one thread; the heartbeat's gap %s)" % (
    "xprobe inject (chosen thread)", ms(x_wall), ms(x_total), ms(x_stop),
    ms(med(x[3] for x in xs)).strip()))
print("%-34s %s %s %s  (= target-measured gap %s)" % (
    "xprobe inject (heartbeat thread)", ms(med(x[0] for x in xts)), ms(med(x[1] for x in xts)),
    ms(xt_stop), ms(xt_gap).strip()))
print("%-34s %s %9s %s  (every thread: heartbeat gap)" % ("gdb call dlopen", ms(g_wall), "-",
                                                          ms(g_gap)))
print("%-34s %9s %9s %s  (nothing attached, same window)" % ("heartbeat floor", "-", "-",
                                                             ms(floor)))
print("ratio xprobe/gdb wall time:       %.4f  (goal <= 0.1)" % (x_wall / g_wall))
print("ratio xprobe/gdb target stopped:  %.4f  (xprobe's one thread vs gdb's whole process)" % (
    x_stop / g_gap))
print("xprobe target stopped:            %.3f ms (goal <= 5 ms); target-measured %.3f ms" % (
    x_stop / 1e6, xt_gap / 1e6))
EOF
