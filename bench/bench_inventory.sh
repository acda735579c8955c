#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_inventory.sh - the two inventories side by side with their anchors,
# ratios printed (issue #6; DESIGN.md section 8 for the anchors' figures):
#
#   --cpu-sample        vs  perf record -F 99 -g -p PID  +  perf report
#     on tests/fixtures/inv_cpu_hot (80% of its CPU in inv_hot_spin), the
#     same 99 Hz and the same window: target slowdown (added run time per
#     second of window), collector CPU time and peak RSS (wait4 rusage; perf
#     counts record + report), and whether both name the same top hotspot.
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
exec /usr/bin/python3 - "$BUILD" "$RUNS" "$WHAT" <<'PY'
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BUILD, RUNS, WHAT = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
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
# kernel folds the pre-exec mm's high-water mark into it).
LAUNCH_SRC = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
static pid_t child;
static void fwd(int s) { if (child > 0) kill(child, s); }
int main(int argc, char **argv)
{
	struct rusage ru;
	int st = 0;
	FILE *f;

	signal(SIGINT, fwd);
	signal(SIGTERM, fwd);
	child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(child, &st, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	fprintf(f, "%ld %ld\n", (long)(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
				 ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec),
		ru.ru_maxrss);
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
"""
LAUNCH = os.path.join(TMP, "xp_launch")
with open(LAUNCH + ".c", "w") as _f:
    _f.write(LAUNCH_SRC)
subprocess.run(["cc", "-O1", "-o", LAUNCH, LAUNCH + ".c"], check=True)
os.unlink(LAUNCH + ".c")
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
    p = spawn_target([os.path.join(FX, "inv_cpu_hot"), str(rounds)])
    ready(p)
    return p


def target_done(p):
    line = p.stdout.readline()
    p.wait()
    assert line.startswith("done "), line
    return int(line.split()[1]) / 1e9


def bench_cpu():
    print("== --cpu-sample vs perf record -F 99 -g + perf report (inv_cpu_hot) ==")
    p = cpu_target(50)
    t50 = target_done(p)
    rounds = max(100, int(4.0 / t50 * 50))
    base_s = target_done(cpu_target(rounds))
    window_ms = int(base_s * 1000 * 0.75)
    print("target: %d rounds, %.2f s alone; sampling window %d ms at 99 Hz; %d runs"
          % (rounds, base_s, window_ms, RUNS))
    rows = {"base": [], "xprobe": [], "perf": []}
    for run in range(RUNS):
        # alone
        rows["base"].append({"elapsed": target_done(cpu_target(rounds))})
        # xprobe
        t = cpu_target(rounds)
        x = spawn([XPROBE, "measure", "--pid", str(t.pid), "--cpu-sample", "--duration-ms",
                   str(window_ms), "--frequency-hz", "99", "--json"])
        out, err, cpu, rss = finish(x)
        el = target_done(t)
        doc = json.loads(out)
        top = doc["inventory"]["hotspots"][0] if doc.get("ok") and doc["inventory"]["hotspots"] else {}
        rows["xprobe"].append({"elapsed": el, "cpu": cpu, "rss": rss,
                               "top": top.get("function"),
                               "share": top.get("exclusive_proportion"),
                               "samples": doc.get("collection", {}).get("observed_samples")})
        # perf record + report
        t = cpu_target(rounds)
        data = os.path.join(TMP, "perf-%d.data" % run)
        r = spawn(["perf", "record", "-q", "-F", "99", "-g", "-p", str(t.pid), "-o", data,
                   "--", "sleep", "%.3f" % (window_ms / 1000)])
        _, _, cpu_r, rss_r = finish(r)
        el = target_done(t)
        rep = spawn(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "sym",
                     "-q"])
        rep_out, _, cpu_p, rss_p = finish(rep)
        top, share = None, None
        for line in rep_out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0].endswith("%"):
                top, share = parts[-1], float(parts[0][:-1]) / 100
                break
        rows["perf"].append({"elapsed": el, "cpu": cpu_r + cpu_p, "rss": max(rss_r, rss_p),
                             "rss_record": rss_r, "top": top, "share": share})
        os.unlink(data)
        print("  run %d: alone %.3f s | xprobe %.3f s, %s %.2f | perf %.3f s, %s %.2f"
              % (run + 1, rows["base"][-1]["elapsed"], rows["xprobe"][-1]["elapsed"],
                 rows["xprobe"][-1]["top"], rows["xprobe"][-1]["share"] or 0,
                 rows["perf"][-1]["elapsed"], top, share or 0))
    base = med(r["elapsed"] for r in rows["base"])
    res = {}
    for tool in ("xprobe", "perf"):
        el = med(r["elapsed"] for r in rows[tool])
        res[tool] = {
            # added target run time per second of sampling window, in %
            "slowdown": (el - base) / (window_ms / 1000) * 100,
            "cpu_ms": med(r["cpu"] for r in rows[tool]) * 1000,
            "rss": med(r["rss"] for r in rows[tool]),
            "top": statistics.mode(r["top"] for r in rows[tool]),
            "share": med(r["share"] for r in rows[tool]),
        }
    x, p = res["xprobe"], res["perf"]
    print()
    print("%-34s %14s %14s %10s" % ("", "xprobe", "perf", "ratio"))
    print("%-34s %13s%% %13s%% %10s" % ("target slowdown (per window s)", fmt(x["slowdown"], nd=2),
                                       fmt(p["slowdown"], nd=2),
                                       "n/a" if p["slowdown"] <= 0 else fmt(ratio(x["slowdown"], p["slowdown"]), "x", 2)))
    print("%-34s %14s %14s %10s" % ("collector CPU (ms)", fmt(x["cpu_ms"]), fmt(p["cpu_ms"]),
                                    fmt(ratio(x["cpu_ms"], p["cpu_ms"]), "x", 2)))
    print("%-34s %14s %14s %10s" % ("peak RSS (MiB)", fmt(x["rss"]), fmt(p["rss"]),
                                    fmt(ratio(x["rss"], p["rss"]), "x", 2)))
    print("%-34s %14s %14s" % ("top hotspot", x["top"], p["top"]))
    print("%-34s %14s %14s" % ("its share", fmt(x["share"], nd=3), fmt(p["share"], nd=3)))
    print("same top hotspot: %s" % ("yes" if x["top"] == p["top"] else "NO"))
    print("goals: slowdown <= perf's: %s; collector CPU <= perf's: %s; peak RSS < 10 MiB: %s"
          % ("met" if x["slowdown"] <= max(p["slowdown"], 0) + 0.05 else "MISSED (within noise? see runs)",
             "met" if x["cpu_ms"] <= p["cpu_ms"] else "MISSED",
             "met" if x["rss"] < 10 else "MISSED"))
    print("(slowdown: median added run time of the target per second of window; the noise")
    print(" floor of one run is ~0.3%% of %.1f s on a shared 2-vCPU VM)" % base)
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
    elif tool == "syscount":
        x = spawn(["stdbuf", "-oL", "syscount", "-p", str(t.pid), "-d", str(WINDOW_S)])
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
    tools = [None, "xprobe", "syscount", "perf trace"]
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
    for tool in tools[1:]:
        c = burst_counts(tool)
        ok = []
        for name, (n, e) in EXPECTED.items():
            got = c.get(name)
            ok.append(got is not None and got[0] == n and (got[1] is None or got[1] == e))
        agree[tool] = (sum(ok), len(ok), c)
    x, s, p = res["xprobe"], res["syscount"], res["perf trace"]
    print()
    print("target alone: %.0f getppid per CPU-second (%.0f ns per call)" % (base, 1e9 / base))
    print("%-30s %12s %12s %12s %10s %10s" % ("", "xprobe", "syscount", "perf trace",
                                              "x/syscount", "x/perf"))
    for key, label, unit, nd in (("cost_ns", "added cost per syscall (ns)", "", 0),
                                 ("cpu_ms", "collector CPU, 5 s (ms)", "", 1),
                                 ("rss", "peak RSS (MiB)", "", 1),
                                 ("armed_ms", "spawn to armed (ms)", "", 1)):
        print("%-30s %12s %12s %12s %10s %10s" % (
            label, fmt(x[key], nd=nd), fmt(s[key], nd=nd), fmt(p[key], nd=nd),
            fmt(ratio(x[key], s[key]), "x", 2), fmt(ratio(x[key], p[key]), "x", 2)))
    for tool in tools[1:]:
        n, m, c = agree[tool]
        got = ", ".join("%s=%s" % (k, c.get(k, ("missing",))[0]) for k in EXPECTED)
        print("count agreement %-12s %d/%d exact (%s)" % (tool + ":", n, m, got))
    print("goals: per-syscall cost <= syscount's: %s; armed within 10 ms: %s; peak RSS < 10 MiB: %s"
          % ("met" if x["cost_ns"] <= s["cost_ns"] else "MISSED",
             "met" if x["armed_ms"] is not None and x["armed_ms"] <= 10 else "MISSED",
             "met" if x["rss"] < 10 else "MISSED"))
    print("(perf trace armed time: n/a, it prints nothing until it stops; syscount is")
    print(" libbpf-tools' count-only mode, armed = its 'Tracing' line)")
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
