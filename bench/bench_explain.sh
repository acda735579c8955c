#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_explain.sh - what `measure --histogram --explain` costs the rest of
# the machine, side by side with the tools a user would arm instead:
# libbpf-tools runqlat and offcputime.
#
# --explain adds four scheduler tracepoint programs that run on every
# context switch and wakeup of every task (each filters on the target's
# tgid first).  The figure that matters is therefore the added cost per
# context switch for a bystander: `perf bench sched pipe` (two tasks
# ping-ponging through a pipe, pinned to one CPU) runs while each tool is
# armed on another process (tests/fixtures/live_explain, idle), and two
# figures are taken per run:
#   BPF ns/switch  the run time of the tool's programs during the run
#                  (kernel.bpf_stats_enabled, bpftool's run_time_ns of the
#                  programs the tool's process holds) over the context
#                  switches the whole machine made meanwhile (/proc/stat
#                  ctxt): what the programs cost per switch, precisely;
#   usecs/op       the bystander's own figure, which includes the
#                  tracepoints' dispatch but moves by several percent from
#                  run to run on a shared machine (shown, not compared).
# Rows (medians of the runs, configurations interleaved run by run so
# background load hits all alike):
#   nothing armed                 the bystander's usecs/op
#   xprobe --histogram --explain  armed on the fixture (its uprobe pair)
#   xprobe --histogram            the same without --explain
#   runqlat -p PID                libbpf-tools, the same target
#   offcputime -p PID             libbpf-tools, the same target
# then the ratios of BPF ns/switch xprobe --explain / runqlat and
# / offcputime (goal: at most 1, i.e. at most theirs).
#
# Usage: bench/bench_explain.sh [runs]   (root; XPROBE_BUILD=build dir;
# needs perf and libbpf-tools: scripts/install-deps.sh bench)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${XPROBE_BUILD:-$here/build}
runs=${1:-7}
exec /usr/bin/python3 - "$build" "$runs" <<'EOF'
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

build, runs = sys.argv[1], int(sys.argv[2])
xprobe = os.path.join(build, "bin", "xprobe")
fixture = os.path.join(build, "tests", "fixtures", "live_explain")
LOOPS = 200000
for path in (xprobe, fixture):
    if not os.path.exists(path):
        sys.exit("bench_explain: %s is missing (build xprobe and fx_live_explain)" % path)
tools = {t: shutil.which(t) for t in ("perf", "runqlat", "offcputime")}
missing = [t for t, p in tools.items() if not p]
if missing:
    sys.exit("bench_explain: %s not installed (scripts/install-deps.sh bench)" % ", ".join(missing))

fx = subprocess.Popen([fixture, "--calls", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      text=True, bufsize=1)
ready = fx.stdout.readline()
pid = int(re.search(r'"pid": (\d+)', ready).group(1))
sel = "uprobe:%s:xp_explain_call:" % fixture


def armed(cmd, wait):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(wait)
    return p


CONFIGS = [
    ("nothing armed", None, 0),
    ("xprobe --histogram --explain",
     [xprobe, "measure", "--pid", str(pid), "--histogram", "--explain", "--from", sel + "entry",
      "--to", sel + "return", "--match", "stack-nested", "--non-interactive"], 1.0),
    ("xprobe --histogram",
     [xprobe, "measure", "--pid", str(pid), "--histogram", "--from", sel + "entry", "--to",
      sel + "return", "--match", "stack-nested", "--non-interactive"], 1.0),
    ("runqlat -p PID", [tools["runqlat"], "-p", str(pid)], 1.5),
    ("offcputime -p PID", [tools["offcputime"], "-p", str(pid)], 1.5),
]


def bystander():
    out = subprocess.run(["taskset", "-c", "1", tools["perf"], "bench", "sched", "pipe", "-l",
                          str(LOOPS)], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([\d.]+) usecs/op", out).group(1))


def ctxt():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    return 0


def progs():
    return {p["id"]: p.get("run_time_ns", 0) for p in json.loads(
        subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True).stdout or "[]")}


def prog_ns(ids):
    """run_time_ns summed over the programs @ids (the armed tool's)."""
    now = progs()
    return sum(now.get(i, 0) for i in ids)


with open("/proc/sys/kernel/bpf_stats_enabled") as f:
    stats_was = f.read().strip()
with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
    f.write("1")
res = {name: [] for name, _, _ in CONFIGS}
per_switch = {name: [] for name, _, _ in CONFIGS}
try:
    for _ in range(runs):
        for name, cmd, wait in CONFIGS:
            before = set(progs())
            p = armed(cmd, wait) if cmd else None
            ids = set(progs()) - before if p else set()
            try:
                ns0, c0 = prog_ns(ids), ctxt()
                res[name].append(bystander())
                ns1, c1 = prog_ns(ids), ctxt()
                per_switch[name].append((ns1 - ns0) / max(1, c1 - c0))
            finally:
                if p:
                    p.send_signal(2)
                    try:
                        p.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
finally:
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(stats_was)
    fx.stdin.write("quit\n")
    fx.stdin.flush()
    fx.wait(timeout=10)

med = {k: statistics.median(v) for k, v in res.items()}
bpf = {k: statistics.median(v) for k, v in per_switch.items()}
print("bench_explain: perf bench sched pipe -l %d pinned to CPU 1, %d runs each, medians; "
      "tools armed on pid %d (idle)" % (LOOPS, runs, pid))
print("%-32s %14s %12s" % ("", "BPF ns/switch", "usecs/op"))
for name, _, _ in CONFIGS:
    print("%-32s %14s %12.3f" % (name, "-" if name == "nothing armed" else "%.1f" % bpf[name],
                                 med[name]))
x = bpf["xprobe --histogram --explain"]
for other in ("runqlat -p PID", "offcputime -p PID"):
    o = bpf[other]
    ratio = x / o if o > 0 else float("inf")
    print("ratio xprobe --explain / %-13s %.2f  (goal <= 1)%s" % (
        other.split()[0] + ":", ratio, "" if ratio <= 1 else "  MISSED"))
EOF
