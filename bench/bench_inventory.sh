#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_inventory.sh - the two inventories side by side with their anchors,
# ratios printed (issue #6; docs/inventories.md, "Cost", has the figures):
#
#   --cpu-sample        vs  perf record -F 99 -g -p PID  +  perf report
#     on tests/fixtures/inv_cpu_hot (80% of its CPU in inv_hot_spin), the
#     same 99 Hz, a fixed amount of target work done entirely inside the
#     window: target slowdown (the target's own CPU time for that work, so
#     busy neighbours do not count), collector CPU time and peak RSS (wait4
#     rusage of a tiny launcher; perf counts record + report), and whether
#     both name the same top hotspot.
#
#   --syscall-aggregate vs  libbpf-tools syscount -p PID  and  perf trace -s
#     on tests/fixtures/inv_syscalls: added cost per syscall on the target
#     (its getppid calls per CPU-second of its own, with and without each
#     tool: CPU-based so busy neighbours do not count), collector CPU and RSS
#     over the same 5 s window, time from spawn to armed, and agreement of
#     the counts with what the fixture made (1000 getppid, 300 failing
#     close, 200 failing openat, 50 calls of the unknown number 1000).
#
# Medians of RUNS runs (default 5), tools interleaved run by run so a busy
# neighbour on a shared machine hits all of them alike.  Run as root from a
# built tree: XPROBE_BUILD (default ./build) must hold bin/xprobe and
# tests/fixtures/inv_*.  Needs perf, syscount (Debian libbpf-tools), stdbuf.
#
# Usage: [XPROBE_BUILD=dir] [RUNS=n] bench/bench_inventory.sh [cpu|syscall|all]
set -eu
BUILD=${XPROBE_BUILD:-$(dirname "$0")/../build}
RUNS=${RUNS:-5}
WHAT=${1:-all}
exec /usr/bin/python3 - "$BUILD" "$RUNS" "$WHAT" "$(dirname "$0")/.." <<'PY'
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BUILD, RUNS, WHAT = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ROOT = os.path.abspath(sys.argv[4])
# the process helpers the live tests use (perf_fds: the profiler is armed)
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
from proc_helpers import perf_fds  # noqa: E402
XPROBE = os.path.join(BUILD, "bin", "xprobe")
FX = os.path.join(BUILD, "tests", "fixtures")
TMP = tempfile.mkdtemp(prefix="xp-bench-inv-")


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(v, unit="", nd=1):
    return "n/a" if v is None else ("%.*f%s" % (nd, v, unit))


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


# Peak RSS and CPU come from a tiny C launcher's wait4(): a child forked
# by this Python process would carry Python's own RSS into ru_maxrss (the
# kernel folds the pre-exec mm's high-water mark into it): bench/xp_launch.c.
LAUNCH = os.path.join(TMP, "xp_launch")
subprocess.run(["cc", "-O1", "-o", LAUNCH, os.path.join(ROOT, "bench", "xp_launch.c")],
               check=True)
_nstat = [0]


def reap(p):
    """Wait for a launched child: (cpu seconds, peak RSS MiB) of the tool."""
    p.wait()
    with open(p.statfile) as f:
        us, kb = f.read().split()
    os.unlink(p.statfile)
    return int(us) / 1e6, int(kb) / 1024.0


def spawn(argv):
    """A tool under the launcher, stdout on a pipe and stderr in a file, so
    neither can fill up and block it."""
    err = tempfile.TemporaryFile(mode="w+", dir=TMP)
    _nstat[0] += 1
    stat = os.path.join(TMP, "stat-%d" % _nstat[0])
    p = subprocess.Popen([LAUNCH, stat] + list(argv), stdout=subprocess.PIPE, stderr=err,
                         stdin=subprocess.PIPE, text=True)
    p.errfile = err
    p.statfile = stat
    return p


def finish(p):
    """Read a child's output to EOF, reap it: (stdout, stderr, cpu s, RSS MiB)."""
    out = p.stdout.read()
    cpu, rss = reap(p)
    p.errfile.seek(0)
    err = p.errfile.read()
    p.errfile.close()
    return out, err, cpu, rss


def spawn_target(argv):
    """A fixture, directly (its PID is the one measured)."""
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.PIPE, text=True)


def ready(p):
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return line


# ------------------------------------------------------------------ CPU
def cpu_target(rounds):
    p = spawn_target([os.path.join(FX, "inv_cpu_hot"), str(rounds), "go"])
    ready(p)
    return p


def work(p):
    """Let a waiting target do its rounds: (wall s, CPU s of the target)."""
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    assert line.startswith("done "), line
    wall, cpu = line.split()[1:3]
    return int(wall) / 1e9, int(cpu) / 1e9


def end_target(p):
    p.stdin.close()
    p.wait()


def tool_pid(launcher):
    """The tool the launcher started."""
    for _ in range(2000):
        try:
            with open("/proc/%d/task/%d/children" % (launcher.pid, launcher.pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.002)
    raise RuntimeError("launcher started nothing")


def wait_sampling(launcher, timeout=20):
    pid = tool_pid(launcher)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if perf_fds(pid):
            time.sleep(0.05)
            return
        time.sleep(0.002)
    raise RuntimeError("the profiler opened no perf event")


def bench_cpu():
    print("== --cpu-sample vs perf record -F 99 -g + perf report (inv_cpu_hot) ==")
    t = cpu_target(10)
    _, c10 = work(t)
    end_target(t)
    rounds = max(20, int(2.0 / (c10 / 10)))
    window_ms = int(4 * 2.0 * 1000 + 2000)
    print("target: %d rounds (~2 s of its CPU), started and finished inside a %d ms window"
          " at 99 Hz; %d runs" % (rounds, window_ms, RUNS))
    rows = {"alone": [], "xprobe": [], "perf": []}
    for run in range(RUNS):
        # alone
        t = cpu_target(rounds)
        _, cpu = work(t)
        end_target(t)
        rows["alone"].append({"cpu": cpu})
        # xprobe
        t = cpu_target(rounds)
        x = spawn([XPROBE, "measure", "--pid", str(t.pid), "--cpu-sample", "--duration-ms",
                   str(window_ms), "--frequency-hz", "99", "--json"])
        wait_sampling(x)
        _, tcpu = work(t)
        out, err, cpu, rss = finish(x)
        end_target(t)
        doc = json.loads(out)
        assert doc.get("ok"), out
        top = doc["inventory"]["hotspots"][0]
        rows["xprobe"].append({"cpu": tcpu, "tool_cpu": cpu, "rss": rss,
                               "top": top["function"], "share": top["exclusive_proportion"]})
        # perf record + report
        t = cpu_target(rounds)
        data = os.path.join(TMP, "perf-%d.data" % run)
        r = spawn(["perf", "record", "-q", "-F", "99", "-g", "-p", str(t.pid), "-o", data,
                   "--", "sleep", "%.3f" % (window_ms / 1000)])
        wait_sampling(r)
        _, tcpu = work(t)
        _, _, cpu_r, rss_r = finish(r)
        end_target(t)
        rep = spawn(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "sym",
                     "-q"])
        rep_out, _, cpu_p, rss_p = finish(rep)
        top, share = None, None
        for line in rep_out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0].endswith("%"):
                top, share = parts[-1], float(parts[0][:-1]) / 100
                break
        rows["perf"].append({"cpu": tcpu, "tool_cpu": cpu_r + cpu_p, "rss": max(rss_r, rss_p),
                             "top": top, "share": share})
        os.unlink(data)
        print("  run %d: target CPU alone %.3f s | with xprobe %.3f s (top %s %.2f)"
              " | with perf %.3f s (top %s %.2f)"
              % (run + 1, rows["alone"][-1]["cpu"], rows["xprobe"][-1]["cpu"],
                 rows["xprobe"][-1]["top"], rows["xprobe"][-1]["share"],
                 rows["perf"][-1]["cpu"], top, share or 0))
    base = med(r["cpu"] for r in rows["alone"])
    res = {}
    for tool in ("xprobe", "perf"):
        res[tool] = {
            "slowdown": (med(r["cpu"] for r in rows[tool]) / base - 1) * 100,
            "cpu_ms": med(r["tool_cpu"] for r in rows[tool]) * 1000,
            "rss": med(r["rss"] for r in rows[tool]),
            "top": statistics.mode(r["top"] for r in rows[tool]),
            "share": med(r["share"] for r in rows[tool]),
        }
    x, p = res["xprobe"], res["perf"]
    print()
    print("%-34s %14s %14s %10s" % ("", "xprobe", "perf", "x/perf"))
    print("%-34s %13s%% %13s%% %10s" % ("target CPU slowdown", fmt(x["slowdown"], nd=2),
                                       fmt(p["slowdown"], nd=2),
                                       fmt(ratio(x["slowdown"], p["slowdown"]), "x", 2)
                                       if p["slowdown"] > 0 else "n/a"))
    print("%-34s %14s %14s %10s" % ("collector CPU (ms)", fmt(x["cpu_ms"]), fmt(p["cpu_ms"]),
                                    fmt(ratio(x["cpu_ms"], p["cpu_ms"]), "x", 2)))
    print("%-34s %14s %14s %10s" % ("peak RSS (MiB)", fmt(x["rss"]), fmt(p["rss"]),
                                    fmt(ratio(x["rss"], p["rss"]), "x", 2)))
    print("%-34s %14s %14s" % ("top hotspot", x["top"], p["top"]))
    print("%-34s %14s %14s" % ("its share (truth 0.80)", fmt(x["share"], nd=3),
                               fmt(p["share"], nd=3)))
    print("same top hotspot: %s" % ("yes" if x["top"] == p["top"] else "NO"))
    print("goals: slowdown <= perf's: %s; collector CPU <= perf's: %s; peak RSS < 10 MiB: %s"
          % ("met" if x["slowdown"] <= p["slowdown"] else "MISSED",
             "met" if x["cpu_ms"] <= p["cpu_ms"] else "MISSED",
             "met" if x["rss"] < 10 else "MISSED"))
    print("(slowdown: the target's own CPU time for the same work, median, against the")
    print(" target alone; perf's CPU and RSS are perf record + perf report)")
    print()


# ------------------------------------------------------------- syscalls
def loop_target():
    p = spawn_target([os.path.join(FX, "inv_syscalls"), "loop"])
    ready(p)
    return p


def rates(p, n):
    out = []
    while len(out) < n:
        line = p.stdout.readline()
        assert line.startswith("rate "), line
        out.append(float(line.split()[2]))  # calls per CPU-second of the target
    return out


def wait_line(p, prefix, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            return None
        if line.startswith(prefix):
            return time.monotonic()
    return None


WINDOW_S = 5


def one_rate_run(tool):
    """Median getppid rate of the target with @tool attached (None: alone);
    returns (rate, cpu s, rss MiB, armed ms)."""
    t = loop_target()
    rates(t, 1)  # warm up
    armed_ms = None
    x = None
    t0 = time.monotonic()
    if tool == "xprobe":
        x = spawn([XPROBE, "measure", "--pid", str(t.pid), "--syscall-aggregate",
                   "--duration-ms", str(WINDOW_S * 1000), "--json"])
    elif tool in ("syscount", "syscount -L"):
        x = spawn(["stdbuf", "-oL", "syscount", "-p", str(t.pid), "-d", str(WINDOW_S)]
                  + (["-L"] if tool == "syscount -L" else []))
        armed = wait_line(x, "Tracing")
        armed_ms = None if armed is None else (armed - t0) * 1000
    elif tool == "perf trace":
        x = spawn(["perf", "trace", "-s", "-p", str(t.pid)])
    rates(t, 1)  # the second the tool arms in
    r = med(rates(t, 3))
    cpu = rss = None
    if x is not None:
        if tool == "perf trace":
            x.send_signal(signal.SIGINT)
        out, _, cpu, rss = finish(x)
        if tool == "xprobe":
            doc = json.loads(out)
            armed_ms = (doc["collection"]["armed_at_ns"] / 1e9 - t0) * 1000
    t.kill()
    t.wait()
    return r, cpu, rss, armed_ms


def burst_counts(tool):
    """Run the exact-count fixture under @tool; {name: (count, errors|None)}."""
    t = spawn_target([os.path.join(FX, "inv_syscalls")])
    ready(t)
    counts = {}
    if tool == "xprobe":
        x = spawn([XPROBE, "measure", "--pid", str(t.pid), "--syscall-aggregate",
                   "--duration-ms", "2000", "--json"])
        time.sleep(0.5)
    elif tool == "syscount":
        x = spawn(["stdbuf", "-oL", "syscount", "-p", str(t.pid), "-d", "2", "-T", "50"])
        wait_line(x, "Tracing")
    else:
        x = spawn(["perf", "trace", "-s", "-p", str(t.pid)])
        time.sleep(1.0)
    t.stdin.write("go\n")
    t.stdin.flush()
    t.stdout.readline()
    if tool == "perf trace":
        time.sleep(0.5)
        x.send_signal(signal.SIGINT)
    out, err, _, _ = finish(x)
    if tool == "xprobe":
        for g in json.loads(out)["inventory"]["groups"]:
            counts[g["name"] or "#%d" % g["syscall_nr"]] = (g["entries"], g["errors"])
    elif tool == "syscount":
        for line in out.splitlines():
            parts = line.rsplit(None, 1)
            if len(parts) == 2 and parts[1].isdigit():
                name = parts[0].strip()
                if name.startswith("[unknown:"):
                    name = "#" + name[len("[unknown:"):].strip(" ]")
                counts[name] = (int(parts[1]), None)
    else:
        for line in (out + err).splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1].isdigit() and parts[2].isdigit():
                counts[parts[0]] = (int(parts[1]), int(parts[2]))
    t.kill()
    t.wait()
    return counts


EXPECTED = {"getppid": (1000, 0), "close": (300, 300), "openat": (200, 200),
            "#1000": (50, 50)}


def bench_syscall():
    print("== --syscall-aggregate vs syscount -p and perf trace -s (inv_syscalls) ==")
    tools = [None, "xprobe", "syscount", "syscount -L", "perf trace"]
    rows = {t: [] for t in tools}
    for run in range(RUNS):
        for tool in tools:
            rows[tool].append(one_rate_run(tool))
        print("  run %d: " % (run + 1) + " | ".join(
            "%s %.0f/cpu-s" % (t or "alone", rows[t][-1][0]) for t in tools))
    base = med(r[0] for r in rows[None])
    res = {}
    for tool in tools[1:]:
        rate = med(r[0] for r in rows[tool])
        res[tool] = {"rate": rate, "cost_ns": 1e9 / rate - 1e9 / base,
                     "cpu_ms": med(r[1] for r in rows[tool]) * 1000,
                     "rss": med(r[2] for r in rows[tool]),
                     "armed_ms": med(r[3] for r in rows[tool])}
    agree = {}
    for tool in ("xprobe", "syscount", "perf trace"):
        c = burst_counts(tool)
        ok = []
        for name, (n, e) in EXPECTED.items():
            got = c.get(name)
            ok.append(got is not None and got[0] == n and (got[1] is None or got[1] == e))
        agree[tool] = (sum(ok), len(ok), c)
    x, s, sl, p = res["xprobe"], res["syscount"], res["syscount -L"], res["perf trace"]
    print()
    print("target alone: %.0f getppid per CPU-second (%.0f ns per call)" % (base, 1e9 / base))
    print("%-28s %9s %9s %11s %10s %10s %11s %8s" % (
        "", "xprobe", "syscount", "syscount-L", "perf trace", "x/syscount", "x/syscnt-L",
        "x/perf"))
    for key, label, nd in (("cost_ns", "added cost per syscall (ns)", 0),
                           ("cpu_ms", "collector CPU, 5 s (ms)", 1),
                           ("rss", "peak RSS (MiB)", 1),
                           ("armed_ms", "spawn to armed (ms)", 1)):
        print("%-28s %9s %9s %11s %10s %10s %11s %8s" % (
            label, fmt(x[key], nd=nd), fmt(s[key], nd=nd), fmt(sl[key], nd=nd),
            fmt(p[key], nd=nd), fmt(ratio(x[key], s[key]), "x", 2),
            fmt(ratio(x[key], sl[key]), "x", 2), fmt(ratio(x[key], p[key]), "x", 2)))
    for tool in ("xprobe", "syscount", "perf trace"):
        n, m, c = agree[tool]
        got = ", ".join("%s=%s" % (k, c.get(k, ("missing",))[0]) for k in EXPECTED)
        print("count agreement %-12s %d/%d exact (%s)" % (tool + ":", n, m, got))
    print("goals: per-syscall cost <= syscount's: %s; armed within 10 ms: %s; peak RSS < 10 MiB: %s"
          % ("met" if x["cost_ns"] <= s["cost_ns"] else "MISSED",
             "met" if x["armed_ms"] is not None and x["armed_ms"] <= 10 else "MISSED",
             "met" if x["rss"] < 10 else "MISSED"))
    print("(syscount: libbpf-tools, count-only; syscount -L also times each call, as xprobe")
    print(" does; armed = its 'Tracing' line.  perf trace armed: n/a, it prints nothing")
    print(" until it stops.  Cost: 1e9/rate(with) - 1e9/rate(alone), rates in getppid per")
    print(" CPU-second of the target, so busy neighbours do not count)")
    print()


if os.geteuid() != 0:
    sys.exit("bench_inventory.sh needs root (perf events of other processes, BPF)")
if WHAT in ("cpu", "all"):
    bench_cpu()
if WHAT in ("syscall", "all"):
    bench_syscall()
for f in os.listdir(TMP):
    os.unlink(os.path.join(TMP, f))
os.rmdir(TMP)
PY
