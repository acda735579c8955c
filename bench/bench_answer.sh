#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_answer.sh - the time to an answer and the cost per event (issue
# 21), side by side with bpftrace in one run, medians of RUNS (default 7):
#
#   exec -> exit     `xprobe measure --samples 1 --json` (uprobe entry and
#                    return of xp_fx_hot, stack-nested) against a bpftrace
#                    pair that prints the first latency and exits, on the
#                    same fixture (live_sleeper --tick-us 2000: a pair every
#                    2 ms); the ratio xprobe/bpftrace.  Phases of xprobe's
#                    run, from outside (it has no timing switch):
#                      start-up   exec -> exit of `xprobe --version`
#                      validate   exec -> exit of `xprobe validate` of the
#                                 same selectors, less start-up
#                      armed      exec -> the first event's timestamp
#                                 (--events-out), whatever the pair
#                      attach     armed - validate - start-up
#                      answer     exec -> the document's first byte
#                      teardown   the first byte -> exit (the probes go
#                                 after the result is written)
#   time to armed    exec -> the first event (xprobe --events-out) or the
#                    first printed timestamp (bpftrace), on a target calling
#                    xp_fx_hot every 50 us (bench_host.py's method)
#   per event        `measure --samples 1000000` on xp_fx_hot in a tight
#                    loop: the collector's CPU time and peak RSS (wait4
#                    rusage, as /usr/bin/time -v reports them) per kept
#                    event (two per pair)
#   redis            bench/bench_app.sh uprobe: --histogram on CPU-bound
#                    redis against bpftrace hist() and the empty-program
#                    floor (its own table and goal lines)
# The kernel's uprobe link kinds (src/live/uprobe_link.h) are printed
# beside the figures: uprobe_multi (6.6+), uprobe session (6.13+).
#
# Goals: exec -> exit <= 60 ms and <= 0.2x bpftrace; armed <= 10 ms;
# collector CPU <= 0.5 us and RSS <= 128 B per event; --histogram within
# 1.15x the floor.  Each printed met or MISSED (the exit status says
# whether the bench ran).
#
# Usage: [XPROBE_BUILD=dir] [RUNS=n] [NPAIRS=n] [SKIP_REDIS=1]
#        bench/bench_answer.sh          (root; bpftrace, redis for the table)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${XPROBE_BUILD:-$ROOT/build}
command -v bpftrace >/dev/null || { echo "bench_answer: bpftrace is not installed" >&2; exit 1; }
/usr/bin/python3 - "$BUILD" <<'PY'
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1])
RUNS = int(os.environ.get("RUNS", "7"))
NPAIRS = int(os.environ.get("NPAIRS", "1000000"))
XPROBE = os.environ.get("XPROBE_BENCH_BIN", os.path.join(BUILD, "bin", "xprobe"))
RUNSTAT = os.path.join(BUILD, "bench", "xp_bench_runstat")
SLEEPER = os.path.join(BUILD, "tests", "fixtures", "live_sleeper")
TMP = tempfile.mkdtemp(prefix="xp-bench-answer-")
for p in (XPROBE, RUNSTAT, SLEEPER):
    if not os.path.exists(p):
        sys.exit("bench_answer: %s is missing (make build)" % p)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


class Target:
    """live_sleeper (tests/fixtures/live_fixture.h protocol)."""

    def __init__(self, *args):
        self.p = subprocess.Popen([SLEEPER] + [str(a) for a in args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = json.loads(self.p.stdout.readline())
        ns = self.ready.get("nspid") or []
        self.pid = ns[0] if ns else self.ready["pid"]
        self.exe = self.ready["exe"]

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def done(self):
        return json.loads(self.p.stdout.readline())

    def kill(self):
        self.p.kill()
        self.p.wait()


def runstat(name, argv, timeout=600):
    """Run @argv under xp_runstat: its stats (t0_ns, first_output_ns,
    wall_ns, maxrss_kb, cpu) and stdout."""
    st, out = os.path.join(TMP, name + ".json"), os.path.join(TMP, name + ".out")
    subprocess.run([RUNSTAT, st, out, "--"] + [str(a) for a in argv], timeout=timeout,
                   stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(st) as f:
        s = json.load(f)
    with open(out) as f:
        s["stdout"] = f.read()
    return s


def ms(ns):
    return ns / 1e6


def pair_args(t, fn):
    return ["--pid", t.pid, "--from", "uprobe:%s:%s:entry" % (t.exe, fn),
            "--to", "uprobe:%s:%s:return" % (t.exe, fn), "--match", "stack-nested"]


def bt_pair(t, fn):
    return ["bpftrace", "-p", t.pid, "-e",
            "uprobe:%s:%s { @s[tid] = nsecs; } uretprobe:%s:%s /@s[tid]/ "
            "{ printf(\"%%llu\\n\", nsecs - @s[tid]); exit(); }" % (t.exe, fn, t.exe, fn)]


def first_event_ms(st, path):
    try:
        with open(path) as f:
            ts = [json.loads(l)["timestamp_ns"] for l in f if l.strip()]
    except OSError:
        return None
    return ms(min(ts) - st["t0_ns"]) if ts else None


def kernel_features():
    """The link kinds the kernel knows: the attach types in its BTF (the
    collector's own probe, uprobe_link.c, asks the bpf syscall)."""
    feats = {}
    try:
        btf = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        btf = ""
    feats["uprobe_multi"] = "'BPF_TRACE_UPROBE_MULTI'" in btf
    feats["uprobe_session"] = "'BPF_TRACE_UPROBE_SESSION'" in btf
    return feats


def bench_answer():
    res = {k: [] for k in ("xprobe", "bpftrace", "startup", "validate", "armed", "answer",
                           "teardown")}
    t = Target("--tick-us", 2000)
    t.go()
    ev = os.path.join(TMP, "answer.jsonl")
    try:
        for r in range(RUNS):
            s = runstat("startup", [XPROBE, "--version"])
            res["startup"].append(ms(s["wall_ns"]))
            s = runstat("validate", [XPROBE, "validate", "--json"] + pair_args(t, "xp_fx_hot"))
            res["validate"].append(ms(s["wall_ns"]))
            if os.path.exists(ev):
                os.unlink(ev)
            s = runstat("xprobe", [XPROBE, "measure"] + pair_args(t, "xp_fx_hot") +
                        ["--samples", 1, "--json", "--events-out", ev])
            doc = json.loads(s["stdout"])
            if doc.get("status") != "completed":
                sys.exit("bench_answer: xprobe did not complete: %s" % s["stdout"][:400])
            res["xprobe"].append(ms(s["wall_ns"]))
            res["armed"].append(first_event_ms(s, ev))
            res["answer"].append(ms(s["first_output_ns"] - s["t0_ns"]))
            res["teardown"].append(ms(s["t0_ns"] + s["wall_ns"] - s["first_output_ns"]))
            s = runstat("bpftrace", bt_pair(t, "xp_fx_hot"))
            if not any(l.strip().isdigit() for l in s["stdout"].splitlines()):
                sys.exit("bench_answer: bpftrace printed no latency: %s" % s["stdout"][:400])
            res["bpftrace"].append(ms(s["wall_ns"]))
            log("  round %d: xprobe %.1f ms, bpftrace %.1f ms" % (r + 1, res["xprobe"][-1],
                                                                 res["bpftrace"][-1]))
    finally:
        t.kill()
    return {k: median(v) for k, v in res.items()}


def bench_armed():
    res = {"xprobe": [], "bpftrace": []}
    t = Target("--tick-us", 50)
    t.go()
    ev = os.path.join(TMP, "armed.jsonl")
    try:
        for _ in range(RUNS):
            if os.path.exists(ev):
                os.unlink(ev)
            s = runstat("xprobe-armed", [XPROBE, "measure"] + pair_args(t, "xp_fx_hot") +
                        ["--samples", 1, "--max-events", 10000, "--json", "--events-out", ev])
            res["xprobe"].append(first_event_ms(s, ev))
            s = runstat("bpftrace-armed", [
                "bpftrace", "-p", t.pid, "-e",
                "uprobe:%s:xp_fx_hot { printf(\"%%llu\\n\", nsecs); exit(); }" % t.exe])
            lines = [l.strip() for l in s["stdout"].splitlines() if l.strip().isdigit()]
            res["bpftrace"].append(ms(int(lines[0]) - s["t0_ns"]) if lines else None)
    finally:
        t.kill()
    return {k: median(v) for k, v in res.items()}


def bench_per_event():
    """One run (a million pairs take seconds): CPU and peak RSS per kept
    event."""
    t = Target("--hot-calls", NPAIRS + NPAIRS // 10)
    try:
        p = subprocess.Popen([str(a) for a in [RUNSTAT, os.path.join(TMP, "big.json"),
                              os.path.join(TMP, "big.out"), "--", XPROBE, "measure"] +
                             pair_args(t, "xp_fx_hot") +
                             ["--samples", NPAIRS, "--max-events", 4 * NPAIRS,
                              "--timeout-ms", 600000, "--json"]],
                             stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # armed: the breakpoint is in; then the loop
        time.sleep(1.0)
        t.go()
        t.done()
        p.wait(timeout=900)
    finally:
        t.kill()
    with open(os.path.join(TMP, "big.json")) as f:
        s = json.load(f)
    with open(os.path.join(TMP, "big.out")) as f:
        try:
            doc = json.loads(f.read())
        except ValueError:
            doc = {}
    kept = 2 * NPAIRS
    ok = doc.get("status") == "completed"
    cpu_us = s.get("cpu_us")
    if cpu_us is None:
        cpu_us = (s.get("utime_us", 0) + s.get("stime_us", 0))
    return {"ok": ok, "cpu_us_per_event": cpu_us / kept, "rss_b_per_event":
            s["maxrss_kb"] * 1024 / kept, "cpu_s": cpu_us / 1e6, "rss_mb": s["maxrss_kb"] / 1024}


def goal(name, met):
    print("  %-58s %s" % (name, "met" if met else "MISSED"))


def fmt(v, unit="ms"):
    return "-" if v is None else "%.1f %s" % (v, unit)


feats = kernel_features()
log("exec -> exit, %d rounds" % RUNS)
a = bench_answer()
log("time to armed")
armed = bench_armed()
log("per event, %d pairs" % NPAIRS)
pe = bench_per_event()
uname = os.uname()
print("bench_answer: kernel %s, %d CPUs; kernel features: uprobe_multi %s, uprobe session %s"
      % (uname.release, os.cpu_count() or 1, "yes" if feats["uprobe_multi"] else "no",
         "yes" if feats["uprobe_session"] else "no"))
print("medians of %d; xprobe %s" % (RUNS, XPROBE))
print()
print("%-34s %12s %12s %8s" % ("row", "xprobe", "bpftrace", "ratio"))
ratio = a["xprobe"] / a["bpftrace"] if a["xprobe"] and a["bpftrace"] else None
print("%-34s %12s %12s %8s" % ("measure --samples 1, exec -> exit", fmt(a["xprobe"]),
                               fmt(a["bpftrace"]), "-" if ratio is None else "%.2fx" % ratio))
for k, label in (("startup", "  start-up (--version)"), ("validate", "  validate (less start-up)"),
                 ("attach", "  attach (armed - validate)"), ("first", "  first pair + answer"),
                 ("teardown", "  teardown (answer -> exit)")):
    if k == "validate":
        v = a["validate"] - a["startup"] if a["validate"] and a["startup"] else None
    elif k == "attach":
        v = a["armed"] - a["validate"] if a["armed"] and a["validate"] else None
    elif k == "first":
        v = a["answer"] - a["armed"] if a["answer"] and a["armed"] else None
    else:
        v = a[k]
    print("%-34s %12s" % (label, fmt(v)))
aratio = armed["xprobe"] / armed["bpftrace"] if armed["xprobe"] and armed["bpftrace"] else None
print("%-34s %12s %12s %8s" % ("time to armed", fmt(armed["xprobe"]), fmt(armed["bpftrace"]),
                               "-" if aratio is None else "%.2fx" % aratio))
print("%-34s %12s" % ("%d pairs: collector CPU / event" % NPAIRS,
                      "%.2f us" % pe["cpu_us_per_event"]))
print("%-34s %12s" % ("%d pairs: peak RSS / event" % NPAIRS, "%.0f B" % pe["rss_b_per_event"]))
print("%-34s %12s" % ("  (CPU s, peak RSS MiB, completed)", "%.2f, %.0f, %s" % (
    pe["cpu_s"], pe["rss_mb"], pe["ok"])))
print()
print("goals (issue 21):")
goal("exec -> exit <= 60 ms", a["xprobe"] is not None and a["xprobe"] <= 60)
goal("exec -> exit <= 0.2x bpftrace", ratio is not None and ratio <= 0.2)
goal("time to armed <= 10 ms", armed["xprobe"] is not None and armed["xprobe"] <= 10)
goal("collector CPU <= 0.5 us per event", pe["ok"] and pe["cpu_us_per_event"] <= 0.5)
goal("peak RSS <= 128 B per event", pe["ok"] and pe["rss_b_per_event"] <= 128)
sys.stdout.flush()
PY
if [ "${SKIP_REDIS:-0}" != 1 ]; then
	echo
	echo "redis (bench/bench_app.sh uprobe; the goal: --histogram within 1.15x the floor):"
	ROUNDS=${RUNS:-7} XPROBE_BUILD="$BUILD" "$ROOT/bench/bench_app.sh" uprobe
fi
