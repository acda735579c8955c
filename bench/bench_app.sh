#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_app.sh - what a capture costs a real application: redis-server
# under redis-benchmark, traced by `xprobe measure --histogram`, by xprobe's
# exact mode, by bpftrace's hist() one-liner and by the same probes with
# empty BPF programs (the floor no tool can go below), side by side in one
# run (issue 12; docs/histograms.md, "Cost on an application", has the
# figures of a run).
#
#   uprobe table   processCommand entry/return (one call per command):
#     untraced; xprobe --histogram (stack-nested); the same with --explain
#     (issue 19: the scheduler's four programs on every switch too, and the
#     pair's explain work); xprobe exact
#     (--samples 95% of the calls, so the bound is reached near the end);
#     bpftrace  uprobe { @s[tid] = nsecs } uretprobe { @h = hist(...) };
#     bpftrace with empty actions on the same two probes (the floor)
#   syscall table  write(2) entry/exit on redis:
#     untraced; xprobe --histogram (exact), with --explain; xprobe exact; bpftrace's
#     tracepoint pair + hist(); bpftrace empty tracepoint programs (the
#     floor); libbpf-tools `syscount -L -p`
#
# Each table twice: CPU-bound (redis-benchmark -P 16: redis's one thread
# saturated, so every ns a probe adds shows in throughput) and not (no
# pipelining: round trips dominate).  redis-benchmark -t get,set with a
# fixed request count, ROUNDS rounds (default 5) with the modes in a
# rotating order, medians.  redis is pinned to CPU 0 and redis-benchmark to
# CPU 1 where there are two.  Per mode: throughput, the added cost per
# call (1e9/ops traced - 1e9/ops untraced, per processCommand call or per
# write(2)), the collector's own CPU seconds and peak RSS (wait4 of a tiny
# launcher), the p50/p99 it reports, and the goals of issue 12 marked met
# or missed.
#
# BENCH_LONG=1 runs the long mode instead: one --histogram capture of
# BENCH_LONG_MS (default 600000: 10 minutes) on redis under continuous
# load, xprobe's RSS sampled every BENCH_LONG_SAMPLE_S (default 30) seconds,
# and whether it stayed flat; BENCH_LONG_EXPLAIN=1 adds --explain.
#
# Run as root from a built tree (XPROBE_BUILD, default ./build).  Installs
# redis-server, redis-tools, bpftrace and libbpf-tools when missing
# (scripts/install-deps.sh with XPROBE_BENCH_DEPS=1).
#
# Usage: [XPROBE_BUILD=dir] [ROUNDS=n] [REQ_P16=n] [REQ_P1=n] [BENCH_LONG=1]
#        bench/bench_app.sh [uprobe|syscall|all]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${XPROBE_BUILD:-$ROOT/build}
for t in redis-server redis-benchmark redis-cli bpftrace /usr/sbin/syscount; do
	if ! command -v "$t" >/dev/null 2>&1; then
		XPROBE_BENCH_DEPS=1 "$ROOT/scripts/install-deps.sh"
		break
	fi
done
exec /usr/bin/python3 - "$BUILD" "$ROOT" "${1:-all}" <<'PY'
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BUILD, ROOT, WHAT = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
from proc_helpers import fd_targets  # noqa: E402

XPROBE = os.path.join(BUILD, "bin", "xprobe")
ROUNDS = int(os.environ.get("ROUNDS", "5"))
REQ = {16: int(os.environ.get("REQ_P16", "200000")), 1: int(os.environ.get("REQ_P1", "40000"))}
CLIENTS = int(os.environ.get("CLIENTS", "50"))
LONG = os.environ.get("BENCH_LONG") == "1"
LONG_MS = int(os.environ.get("BENCH_LONG_MS", "600000"))
LONG_SAMPLE_S = float(os.environ.get("BENCH_LONG_SAMPLE_S", "30"))
LONG_EXPLAIN = os.environ.get("BENCH_LONG_EXPLAIN") == "1"
PORT = int(os.environ.get("REDIS_PORT", "6390"))
TMP = tempfile.mkdtemp(prefix="xp-bench-app-")
NCPU = os.cpu_count() or 1
REDIS_CPU, BENCH_CPU = ("0", "1") if NCPU >= 2 else ("0", "0")
REDIS_EXE = shutil.which("redis-server")  # redis picks its mode by argv[0]
REDIS_BIN = os.path.realpath(REDIS_EXE)     # the file the uprobes name
BPFTRACE = shutil.which("bpftrace")
SYSCOUNT = "/usr/sbin/syscount"


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(v, nd=1, unit=""):
    return "n/a" if v is None else "%.*f%s" % (nd, v, unit)


def fmt_ns(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return "%.2fms" % (v / 1e6)
    if v >= 1e3:
        return "%.2fus" % (v / 1e3)
    return "%.0fns" % v


# --- the launcher: CPU time and peak RSS of the tool alone (wait4) --------
LAUNCH = os.path.join(TMP, "xp_launch")
subprocess.run(["cc", "-O1", "-o", LAUNCH, os.path.join(ROOT, "bench", "xp_launch.c")],
               check=True)


class Tool:
    """A collector under the launcher; its stdout and stderr go to files."""
    n = 0

    def __init__(self, argv):
        Tool.n += 1
        self.stat = os.path.join(TMP, "stat-%d" % Tool.n)
        self.out = os.path.join(TMP, "out-%d" % Tool.n)
        self.err = os.path.join(TMP, "err-%d" % Tool.n)
        self.p = subprocess.Popen([LAUNCH, self.stat] + argv, stdin=subprocess.DEVNULL,
                                  stdout=open(self.out, "w"), stderr=open(self.err, "w"))

    def pid(self):
        for _ in range(5000):
            try:
                with open("/proc/%d/task/%d/children" % (self.p.pid, self.p.pid)) as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except OSError:
                pass
            if self.p.poll() is not None:
                raise RuntimeError("tool exited: %s" % self.text(self.err))
            time.sleep(0.002)
        raise RuntimeError("the launcher started nothing")

    def wait_fds(self, kinds, n, timeout=60, text=None, stable=0.0):
        """Armed: the tool holds @n descriptors of @kinds (and printed @text);
        with @stable, at least @n and no new one for @stable seconds (an
        xprobe --histogram of a uprobe pair holds two links with a session
        link, three with uprobe_multi links: both builds are measured)."""
        pid = self.pid()
        deadline = time.monotonic() + timeout

        def count():
            return sum(1 for t in fd_targets(pid).values() if any(k in t for k in kinds))
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise RuntimeError("tool exited before arming: %s" % self.text(self.err))
            got = count()
            if got >= n and (text is None or text in self.text(self.out) + self.text(self.err)):
                while stable:
                    time.sleep(stable)
                    again = count()
                    if again == got:
                        break
                    got = again
                time.sleep(0.2)
                return
            time.sleep(0.01)
        raise RuntimeError("tool not armed in %ds: %s" % (timeout, self.text(self.err)))

    @staticmethod
    def text(path):
        with open(path) as f:
            return f.read()

    def prog_ids(self):
        """BPF program ids the tool holds (its fdinfo)."""
        ids = set()
        pid = self.pid()
        for fd, t in fd_targets(pid).items():
            if "bpf-prog" not in t and "bpf_link" not in t and "bpf-link" not in t:
                continue
            try:
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                    for line in f:
                        k, _, v = line.partition(":")
                        if k == "prog_id":
                            ids.add(int(v))
            except OSError:
                pass
        return ids

    def stop(self, signo=signal.SIGINT, timeout=60, grace=0):
        """End the tool (after @grace s for one that ends by itself)."""
        deadline = time.monotonic() + grace
        while self.p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.p.poll() is None:
            self.p.send_signal(signo)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # (bpftrace 0.17 once sat on a SIGINT for minutes here): the
            # launcher still reports CPU and RSS of a tool it had to kill
            print("  (%s did not stop in %d s: killed)" % (self.p.args[2], timeout))
            try:
                os.kill(self.pid(), signal.SIGKILL)
            except (OSError, RuntimeError):
                pass
            self.p.wait(timeout=30)
        with open(self.stat) as f:
            us, kb = f.read().split()
        return int(us) / 1e6, int(kb) / 1024.0, self.text(self.out), self.text(self.err)


# --- redis ------------------------------------------------------------------
def start_redis():
    p = subprocess.Popen(["taskset", "-c", REDIS_CPU, REDIS_EXE, "--port", str(PORT),
                          "--save", "", "--appendonly", "no", "--protected-mode", "no",
                          "--daemonize", "no"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(500):
        r = subprocess.run(["redis-cli", "-p", str(PORT), "ping"], capture_output=True,
                           text=True)
        if r.stdout.strip() == "PONG":
            return p
        time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def stop_redis(p):
    subprocess.run(["redis-cli", "-p", str(PORT), "shutdown", "nosave"], capture_output=True)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def redis_cpu_ns(pid):
    """CPU time of every redis thread so far (schedstat: ns, on any CPU)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def benchmark(pipe, n, rp):
    """redis-benchmark GET and SET, n requests each: (requests/s of the
    pair -- 2n over the time both took --, redis's own CPU ns per request)."""
    c0 = redis_cpu_ns(rp)
    r = subprocess.run(["taskset", "-c", BENCH_CPU, "redis-benchmark", "-p", str(PORT), "-n",
                        str(n), "-c", str(CLIENTS), "-P", str(pipe), "-t", "get,set", "--csv"],
                       capture_output=True, text=True, check=True)
    rps = {}
    for line in r.stdout.splitlines():
        f = [x.strip('"') for x in line.split(",")]
        if f and f[0] in ("GET", "SET"):
            rps[f[0]] = float(f[1])
    assert set(rps) == {"GET", "SET"}, r.stdout
    return 2 * n / (n / rps["GET"] + n / rps["SET"]), (redis_cpu_ns(rp) - c0) / (2 * n)


# --- modes ------------------------------------------------------------------
def up_sel(end):
    return "uprobe:%s:processCommand:%s" % (REDIS_BIN, "return" if end else "entry")


BT_UP = ("uprobe:%s:processCommand { @s[tid] = nsecs; } "
         "uretprobe:%s:processCommand /@s[tid]/ { @h = hist(nsecs - @s[tid]); "
         "delete(@s[tid]); }") % (REDIS_BIN, REDIS_BIN)
BT_UP_EMPTY = "uprobe:%s:processCommand {} uretprobe:%s:processCommand {}" % (REDIS_BIN,
                                                                              REDIS_BIN)
BT_SYS = ("tracepoint:syscalls:sys_enter_write /pid == %d/ { @s[tid] = nsecs; } "
          "tracepoint:syscalls:sys_exit_write /@s[tid]/ { @h = hist(nsecs - @s[tid]); "
          "delete(@s[tid]); }")
BT_SYS_EMPTY = "tracepoint:syscalls:sys_enter_write {} tracepoint:syscalls:sys_exit_write {}"


UPROBE_LINK = set()  # collection.uprobe_link of the --histogram runs


def hist_pcts(doc):
    if doc["collection"].get("uprobe_link"):
        UPROBE_LINK.add(doc["collection"]["uprobe_link"])
    p = {x["percentile"]: x["value_ns"] for x in doc["histogram"]["percentiles"]}
    return p.get(50.0), p.get(99.0), doc["histogram"]["stats"]["count"]


def parse_bt_hist(text):
    """bpftrace's @h: [(lo, hi, count)]; K/M/G are powers of 1024."""
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    rows = []
    for m in re.finditer(r"^\[(\d+)([KMG]?), (\d+)([KMG]?)\)\s+(\d+) \|", text, re.M):
        rows.append((int(m.group(1)) * mult[m.group(2)], int(m.group(3)) * mult[m.group(4)],
                     int(m.group(5))))
    for m in re.finditer(r"^\[(\d+)([KMG]?)\]\s+(\d+) \|", text, re.M):  # [0], [1]
        v = int(m.group(1)) * mult[m.group(2)]
        rows.append((v, v + 1, int(m.group(3))))
    return sorted(rows)


def bt_pct(rows, pct):
    """The bucket holding the nearest-rank value and a linear
    interpolation inside it (the usual reading of a log2 histogram)."""
    n = sum(c for _, _, c in rows)
    if not n:
        return None, None
    rank = max(1, -(-int(pct * 10) * n // 1000))
    seen = 0
    for lo, hi, c in rows:
        if seen + c >= rank:
            return lo + (hi - lo) * (rank - seen) / c, (lo, hi)
        seen += c
    return None, None


def prog_stats(ids):
    """(run_time_ns, run_cnt) summed over programs (kernel.bpf_stats_enabled)."""
    t = c = 0
    for i in ids:
        r = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(i)], capture_output=True,
                           text=True)
        if r.returncode == 0:
            d = json.loads(r.stdout)
            t += d.get("run_time_ns", 0)
            c += d.get("run_cnt", 0)
    return t, c


def run_mode(mode, table, pipe, n, rp, stats=False):
    """One mode over one benchmark run: (ops/s, cpu s, rss MiB, p50, p99,
    pairs, extra, redis CPU ns/request); with @stats, the tool's BPF
    programs' ns per run instead (kernel.bpf_stats_enabled)."""
    calls = 2 * n
    tool = None
    if mode.startswith("xprobe --histogram"):
        argv = [XPROBE, "measure", "--pid", str(rp), "--histogram", "--json"]
        explain = mode.endswith("--explain")
        if explain:
            argv.append("--explain")
        argv += (["--from", up_sel(False), "--to", up_sel(True), "--match", "stack-nested"]
                 if table == "uprobe" else
                 ["--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match",
                  "exact"])
        tool = Tool(argv)
        if explain or table != "uprobe":
            tool.wait_fds(["bpf_link", "bpf-link"], 7 if explain else 3)
        else:
            tool.wait_fds(["bpf_link", "bpf-link"], 2, stable=0.3)
    elif mode.startswith("xprobe exact"):
        # every processCommand call is one pair; writes: about one per
        # request unpipelined, fewer pipelined (measured by --histogram)
        samples = int(calls * 0.95) if table == "uprobe" else int(WRITES[pipe] * calls * 0.6)
        events = 2 * calls * max(1.0, WRITES[pipe] if table == "syscall" else 1.0)
        argv = [XPROBE, "measure", "--pid", str(rp), "--samples", str(max(samples, 1)),
                "--max-events", str(int(events) + 50000), "--timeout-ms", "900000"]
        argv += (["--from", up_sel(False), "--to", up_sel(True), "--match", "stack-nested"]
                 if table == "uprobe" else
                 ["--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match",
                  "exact"])
        tool = Tool(argv)
        tool.wait_fds(["bpf_link", "bpf-link"], 2)
    elif mode.startswith("bpftrace"):
        prog = {("uprobe", False): BT_UP, ("uprobe", True): BT_UP_EMPTY,
                ("syscall", False): BT_SYS % rp, ("syscall", True): BT_SYS_EMPTY}[
                    (table, "empty" in mode)]
        tool = Tool([BPFTRACE, "-p", str(rp), "-e", prog] if table == "uprobe" else
                    [BPFTRACE, "-e", prog])
        tool.wait_fds(["perf_event", "bpf_link", "bpf-link"], 2, text="Attaching")
    elif mode == "syscount -L":
        tool = Tool([SYSCOUNT, "-L", "-p", str(rp)])
        # (its "Tracing syscalls" line sits in a full stdio buffer until exit)
        tool.wait_fds(["bpf_link", "bpf-link", "perf_event"], 2)
    ids = tool.prog_ids() if stats and tool else set()
    t0, c0 = prog_stats(ids)
    ops, rcpu = benchmark(pipe, n, rp)
    if stats:
        t1, c1 = prog_stats(ids)
        tool.stop(grace=30 if mode == "xprobe exact" else 0)
        return (t1 - t0, c1 - c0)
    if tool is None:
        return ops, None, None, None, None, None, None, rcpu
    # SIGINT ends the open-ended tools; the exact mode stops by itself at
    # its --samples bound (it may still be correlating: give it time)
    cpu, rss, out, err = tool.stop(grace=30 if mode == "xprobe exact" else 0)
    p50 = p99 = pairs = extra = None
    if mode.startswith("xprobe --histogram"):
        p50, p99, pairs = hist_pcts(json.loads(out))
    elif mode.startswith("xprobe exact"):
        m = re.search(r"latency: min \S+ \S+\s+p50 (\S+) (\S+)\s+mean \S+ \S+\s+p99 (\S+) (\S+)",
                      out)
        unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
        if m:
            p50 = float(m.group(1)) * unit[m.group(2)]
            p99 = float(m.group(3)) * unit[m.group(4)]
        m = re.search(r"status: (\S+); (\d+) matched", out)
        pairs = int(m.group(2)) if m else None
        extra = m.group(1) if m else (out + err)[-300:]
    elif mode == "bpftrace hist()":
        rows = parse_bt_hist(out)
        p50, b50 = bt_pct(rows, 50.0)
        p99, _ = bt_pct(rows, 99.0)
        pairs = sum(c for _, _, c in rows)
        extra = b50
    elif mode == "syscount -L":
        m = re.search(r"^write\s+(\d+)\s+([\d.]+)", out, re.M)
        if m:
            pairs = int(m.group(1))
            extra = float(m.group(2)) * 1e3 / max(1, pairs)  # mean ns per write
    return ops, cpu, rss, p50, p99, pairs, extra, rcpu


WRITES = {16: 1.0, 1: 1.0}  # write(2) calls per request, measured below


def table(kind, pipe):
    n = REQ[pipe]
    modes = ["untraced", "xprobe --histogram", "xprobe --histogram --explain", "xprobe exact",
             "bpftrace hist()", "bpftrace empty (floor)"]
    if kind == "syscall":
        modes.append("syscount -L")
    res = {m: [] for m in modes}
    redis = start_redis()
    rp = redis.pid
    try:
        # warm-up (allocations, page cache) and the write(2) rate per request
        benchmark(pipe, n // 4, rp)
        if kind == "syscall":
            t = Tool([XPROBE, "measure", "--pid", str(rp), "--histogram", "--json", "--from",
                      "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact"])
            t.wait_fds(["bpf_link", "bpf-link"], 3)
            benchmark(pipe, n // 4, rp)
            out = t.stop()[2]
            WRITES[pipe] = json.loads(out)["histogram"]["stats"]["count"] / (2 * (n // 4))
        # every traced run right after an untraced one: its added cost is
        # the difference within that pair, so the load of a shared machine,
        # which drifts over minutes, cancels out of it
        traced = modes[1:]
        for r in range(ROUNDS):
            for m in traced[r % len(traced):] + traced[:r % len(traced)]:
                u = run_mode("untraced", kind, pipe, n, rp)
                x = run_mode(m, kind, pipe, n, rp)
                res["untraced"].append(u)
                res[m].append(x + (1e9 / x[0] - 1e9 / u[0], x[7] - u[7]))
        # one more run each with the kernel's BPF run-time accounting on
        # (it adds its own clock reads to every program, so it is kept out
        # of the throughput rounds): the programs' own ns per run
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            old = f.read().strip()
        try:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write("1")
            for m in modes[1:]:
                if m == "xprobe exact":
                    continue  # it may end before the counters are read
                rt, cnt = run_mode(m, kind, pipe, n // 2, rp, stats=True)
                # uprobes run only in redis: ns per call; the syscall tools'
                # programs run system-wide (raw tracepoints: every syscall
                # of every process; bpftrace's: every write), so per run
                calls = 2 * (n // 2) if kind == "uprobe" else cnt
                BPF_NS[(kind, pipe, m)] = rt / calls if calls else None
        finally:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write(old)
    finally:
        stop_redis(redis)
    return res


BPF_NS = {}


def report(kind, pipe, res):
    n = REQ[pipe]
    what = ("processCommand uprobe entry/return" if kind == "uprobe" else
            "write(2) entry/exit")
    per = "per call" if kind == "uprobe" else "per write"
    scale = 1.0 if kind == "uprobe" else 1.0 / WRITES[pipe]
    print()
    print("redis-server %s, %s, %d requests x GET+SET, %d clients, medians of %d "
          "(each traced run paired with an untraced one just before it)"
          % (what, "pipelining 16 (CPU-bound)" if pipe == 16 else "no pipelining",
             n, CLIENTS, ROUNDS))
    if kind == "syscall":
        print("write(2) calls per request: %.3f" % WRITES[pipe])
    base = med([x[0] for x in res["untraced"]])
    base_cpu = med([x[7] for x in res["untraced"]])
    rows = {}
    print("%-29s %9s %10s %10s %10s %8s %8s %8s %9s %9s %8s" % (
        "mode", "ops/s", "added ns", "redis CPU", "added CPU", "BPF ns", "CPU s", "RSS MiB",
        "p50", "p99", "pairs"))
    print("%-29s %9s %10s %10s %10s %8s %8s %8s" % (
        "", "", per, "ns/request", per, per if kind == "uprobe" else "per run", "collector",
        "collector"))
    for m, v in res.items():
        ops = med([x[0] for x in v])
        rcpu = med([x[7] for x in v])
        # medians of the per-pair differences (table())
        added = med([x[8] for x in v]) * scale if m != "untraced" else None
        added_cpu = med([x[9] for x in v]) * scale if m != "untraced" else None
        cpu, rss = med([x[1] for x in v]), med([x[2] for x in v])
        p50, p99 = med([x[3] for x in v]), med([x[4] for x in v])
        pairs = med([x[5] for x in v])
        rows[m] = dict(ops=ops, added=added, added_cpu=added_cpu, cpu=cpu, rss=rss, p50=p50,
                       p99=p99, v=v)
        note = ""
        if m == "syscount -L":
            note = "  (mean %s)" % fmt_ns(med([x[6] for x in v]))
        if m == "xprobe exact":
            st = sorted(set(str(x[6]).split(":")[0] for x in v))
            note = "  (status %s)" % ",".join(st)
        print("%-29s %9s %10s %10s %10s %8s %8s %8s %9s %9s %8s%s" % (
            m, fmt(ops, 0), fmt(added, 0), fmt(rcpu, 0), fmt(added_cpu, 0),
            fmt(BPF_NS.get((kind, pipe, m)), 1), fmt(cpu, 3), fmt(rss, 1), fmt_ns(p50),
            fmt_ns(p99), fmt(pairs, 0), note))
    h, b, f, e = (rows["xprobe --histogram"], rows["bpftrace hist()"],
                  rows["bpftrace empty (floor)"], rows["xprobe exact"])
    buckets = [x[6] for x in b["v"] if x[6]]

    def goal(name, ok, detail):
        print("  goal %-66s %-7s %s" % (name, "met" if ok else "MISSED", detail))

    def le(a, c):
        return a is not None and c is not None and a <= c

    def x(a, c):
        return "%.2fx" % (a / c) if a is not None and c else "n/a"

    if UPROBE_LINK:
        print("xprobe --histogram's uprobes attached as: %s" % ", ".join(sorted(UPROBE_LINK)))
    print("goals (issue 12; cost by throughput, as the issue defines it, then by redis's own "
          "CPU per call):")
    for key, how in (("added", "throughput"), ("added_cpu", "redis CPU")):
        goal("--histogram added cost within 15%% of the floor (%s)" % how,
             le(h[key], 1.15 * f[key]) if f[key] and f[key] > 0 else False,
             "(%s vs %s ns, %s)" % (fmt(h[key]), fmt(f[key]), x(h[key], f[key])))
        goal("--histogram added cost <= 0.8x bpftrace's (%s)" % how,
             le(h[key], 0.8 * b[key]) if b[key] and b[key] > 0 else False,
             "(%s vs %s ns, %s)" % (fmt(h[key]), fmt(b[key]), x(h[key], b[key])))
    # The same goals from the steadiest figures: the floor's added cost
    # (the trap every tool pays) plus what each tool's programs take per
    # call over the empty ones (kernel.bpf_stats_enabled: every run of the
    # tool's programs, the ones that filter other syscalls out included)
    hb, bb, fb = (BPF_NS.get((kind, pipe, m)) for m in
                  ("xprobe --histogram", "bpftrace hist()", "bpftrace empty (floor)"))
    if kind == "uprobe" and None not in (hb, bb, fb) and f["added_cpu"]:
        trap = f["added_cpu"]
        mh, mb = trap + (hb - fb), trap + (bb - fb)
        goal("--histogram added cost within 15% of the floor (programs)", mh <= 1.15 * trap,
             "(floor %s + (%.0f - %.0f) ns = %s ns, %.2fx)" % (
                 fmt(trap), hb, fb, fmt(mh), mh / trap))
        goal("--histogram added cost <= 0.8x bpftrace's (programs)", mh <= 0.8 * mb,
             "(%s vs %s ns, %.2fx)" % (fmt(mh), fmt(mb), mh / mb))
    # issue 19: what --explain adds on top of --histogram
    ex = rows["xprobe --histogram --explain"]
    for key, how in (("added", "throughput"), ("added_cpu", "redis CPU")):
        goal("--histogram --explain added cost <= 1.3x --histogram's (%s)" % how,
             le(ex[key], 1.3 * h[key]) if h[key] and h[key] > 0 else False,
             "(%s vs %s ns, %s)" % (fmt(ex[key]), fmt(h[key]), x(ex[key], h[key])))
    eb = BPF_NS.get((kind, pipe, "xprobe --histogram --explain"))
    if None not in (eb, hb, bb, fb) and kind == "uprobe" and f["added_cpu"]:
        me = f["added_cpu"] + (eb - fb)
        goal("--histogram --explain added cost <= 1.3x --histogram's (programs)",
             me <= 1.3 * mh, "(%s vs %s ns, %.2fx)" % (fmt(me), fmt(mh), me / mh))
    goal("collector CPU <= 0.2x bpftrace's", le(h["cpu"], 0.2 * (b["cpu"] or 0)),
         "(%s vs %s s, %.3fx)" % (fmt(h["cpu"], 3), fmt(b["cpu"], 3), h["cpu"] / b["cpu"]))
    goal("peak RSS <= 0.1x bpftrace's", le(h["rss"], 0.1 * (b["rss"] or 0)),
         "(%s vs %s MiB, %.3fx)" % (fmt(h["rss"]), fmt(b["rss"]), h["rss"] / b["rss"]))
    if buckets:
        lo = statistics.median([x[0] for x in buckets])
        hi = statistics.median([x[1] for x in buckets])
        ok = h["p50"] is not None and 0.9 * lo <= h["p50"] < 1.1 * hi
        goal("p50 within 10% of bpftrace's", ok,
             "(%s; bpftrace: bucket [%s, %s), interpolated %s)" % (
                 fmt_ns(h["p50"]), fmt_ns(lo), fmt_ns(hi), fmt_ns(b["p50"])))
    if e["p50"]:
        goal("p50 within 10% of the exact mode's (exact ranks)",
             h["p50"] is not None and abs(h["p50"] - e["p50"]) <= 0.1 * e["p50"],
             "(%s vs %s)" % (fmt_ns(h["p50"]), fmt_ns(e["p50"])))
    sys.stdout.flush()


def long_mode():
    redis = start_redis()
    rp = redis.pid
    stop = [False]
    load = None
    try:
        tool = Tool([XPROBE, "measure", "--pid", str(rp), "--histogram", "--json",
                     "--from", up_sel(False), "--to", up_sel(True), "--match", "stack-nested",
                     "--duration-ms", str(LONG_MS)] + (["--explain"] if LONG_EXPLAIN else []))
        if LONG_EXPLAIN:
            tool.wait_fds(["bpf_link", "bpf-link"], 7)
        else:
            tool.wait_fds(["bpf_link", "bpf-link"], 2, stable=0.3)
        xp = tool.pid()
        load = subprocess.Popen(
            ["sh", "-c", "while :; do taskset -c %s redis-benchmark -p %d -n 1000000 -c %d "
             "-P 16 -t get,set -q >/dev/null 2>&1 || exit; done" % (BENCH_CPU, PORT, CLIENTS)],
            start_new_session=True)
        t0 = time.monotonic()
        samples = []
        print("\nlong --histogram%s capture on redis processCommand, %d s under continuous "
              "redis-benchmark -P 16 load" % (" --explain" if LONG_EXPLAIN else "",
                                              LONG_MS // 1000))
        print("%8s %12s %12s" % ("t (s)", "VmRSS KiB", "VmHWM KiB"))
        while tool.p.poll() is None:
            try:
                with open("/proc/%d/status" % xp) as f:
                    st = dict(x.split(":", 1) for x in f.read().splitlines() if ":" in x)
                rss = int(st["VmRSS"].split()[0])
                hwm = int(st["VmHWM"].split()[0])
            except (OSError, KeyError):
                break
            samples.append((time.monotonic() - t0, rss, hwm))
            print("%8.0f %12d %12d" % samples[-1])
            sys.stdout.flush()
            end = time.monotonic() + LONG_SAMPLE_S
            while time.monotonic() < end and tool.p.poll() is None:
                time.sleep(0.2)
        cpu, rss_peak, out, err = tool.stop()
        doc = json.loads(out)
        pairs = doc["histogram"]["stats"]["count"]
        rs = [s[1] for s in samples[1:]] or [s[1] for s in samples]
        growth = max(rs) - min(rs)
        print("pairs %d (%.0f/s), window %.0f s, stop %s, collector CPU %.2f s, peak RSS "
              "%.1f MiB" % (pairs, pairs / (doc["collection"]["window_ns"] / 1e9),
                            doc["collection"]["window_ns"] / 1e9,
                            doc["collection"]["stop_reason"], cpu, rss_peak))
        p = {x["percentile"]: x["value_ns"] for x in doc["histogram"]["percentiles"]}
        print("p50 %s  p99 %s  p99.9 %s  max %s" % (fmt_ns(p.get(50.0)), fmt_ns(p.get(99.0)),
                                                   fmt_ns(p.get(99.9)),
                                                   fmt_ns(doc["histogram"]["stats"]["max_ns"])))
        print("  goal %-52s %-7s (RSS after the first sample moved by %d KiB: %d..%d)" % (
            "flat memory over the capture", "met" if growth <= 256 else "MISSED", growth,
            min(rs), max(rs)))
    finally:
        if load is not None:
            os.killpg(load.pid, signal.SIGTERM)
            load.wait()
        stop_redis(redis)


print("bench_app.sh: %s, %d CPUs, redis %s, bpftrace %s; redis on CPU %s, redis-benchmark "
      "on CPU %s" % (os.uname().release, NCPU,
                     subprocess.run(["redis-server", "--version"], capture_output=True,
                                    text=True).stdout.split()[2],
                     subprocess.run([BPFTRACE, "--version"], capture_output=True,
                                    text=True).stdout.strip(), REDIS_CPU, BENCH_CPU))
try:
    if LONG:
        long_mode()
    else:
        for kind in (["uprobe", "syscall"] if WHAT == "all" else [WHAT]):
            for pipe in (16, 1):
                report(kind, pipe, table(kind, pipe))
finally:
    shutil.rmtree(TMP, ignore_errors=True)
PY
