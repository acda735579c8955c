# SPDX-License-Identifier: Apache-2.0
"""The terminal tables of the inventories (no --json): a header with the
units, then one row per group sorted the way perf report and syscount
sort -- the share first, then the count:

- --syscall-aggregate: % time (of every group's total), total, mean,
  entries, errors, in flight, syscall;
- --cpu-sample: self %, total %, self samples, function and hint;
- --aggregate: % time, total, mean, count, group (sorted for the terminal
  only: the document keeps the reference's kind/name order);

and the per-thread lines of live latency results, the demo's included.
"""
import os
import re
import subprocess

import xprobe_test
from agent_helpers import wait_state
from cuda_helpers import CuptiFixture
from inv_helpers import InvProc, fixture_path
from measure_live_helpers import Fixture, LiveRun

UNIT = r"(?:\d+ns|\d+(?:\.\d+)?(?:us|ms|s))"


def table(out, header):
    """The rows after the line that splits into @header."""
    lines = out.splitlines()
    i = [k for k, line in enumerate(lines) if line.split() == header]
    assert len(i) == 1, out
    rows = []
    for line in lines[i[0] + 1:]:
        if not line or line.startswith(("...", "warning ")):
            break
        rows.append(line)
    return rows


def test_syscall_table(xprobe):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 1500,
                      json_mode=False)
        run.wait_armed(2)  # its two links: the fixture's calls come after "go"
        fx.send("go")
        assert fx.line().startswith("done ")
        out, err = run.p.communicate(timeout=60)
    assert run.p.returncode == 0 and err == "", (out, err)
    rows = table(out, ["%", "time", "total", "mean", "entries", "errors", "inflight",
                       "syscall"])
    parsed = []
    for row in rows:
        m = re.fullmatch(r"\s*(\d+\.\d\d) +(%s) +(%s|-) +(\d+) +(\d+) +(\d+)  (\S+)" % (UNIT, UNIT),
                         row)
        assert m, row
        parsed.append((float(m.group(1)), int(m.group(4)), int(m.group(5)), m.group(7)))
    by_name = {r[3]: r for r in parsed}
    assert by_name["getppid"][1:3] == (1000, 0)
    assert by_name["close"][1:3] == (300, 300)
    assert by_name["openat"][1:3] == (200, 200)
    assert by_name["#1000"][1:3] == (50, 50)
    # the share of the time first (non-increasing), summing to 100
    shares = [r[0] for r in parsed]
    assert shares == sorted(shares, reverse=True), rows
    assert abs(sum(shares) - 100.0) < 0.05 * len(shares) + 0.01, shares


def test_cpu_sample_table(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 500,
                         json_mode=False)
    assert res.rc == 0 and res.stderr == "", res
    rows = table(res.stdout, ["self", "%", "total", "%", "samples", "function"])
    assert rows, res.stdout
    parsed = []
    for row in rows:
        m = re.fullmatch(r"\s*(\d+\.\d\d) +(\d+\.\d\d) +(\d+)  (.+)", row)
        assert m, row
        parsed.append((float(m.group(1)), float(m.group(2)), int(m.group(3)), m.group(4)))
    # perf report's order: self share, then total share
    keys = [(r[0], r[1]) for r in parsed]
    assert keys == sorted(keys, reverse=True), rows
    assert parsed[0][3].startswith("inv_hot_spin [native]"), rows
    total = int(re.search(r": (\d+) samples in", res.stdout).group(1))
    for self_pct, _, samples, _ in parsed:
        assert abs(self_pct - 100.0 * samples / total) < 0.006, (self_pct, samples, total)


def test_aggregate_table_sorted_by_time_then_count(xprobe):
    with CuptiFixture("preload") as fx:
        p = subprocess.Popen([xprobe.binary, "measure", "--pid", str(fx.pid), "--from",
                              "cuda:kernel_start", "--to", "cuda:kernel_end", "--match",
                              "exact", "--aggregate", "--duration-ms", "1500"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_state(fx.pid, "active")
        # document order (kind, then name): aab, big, gemm, small
        assert fx.do("launch 10 small 100") == 10    # most calls, least time
        assert fx.do("launch 3 gemm 2000") == 3      # 6 us
        assert fx.do("launch 2 aab 3000") == 2       # 6 us too, fewer calls
        assert fx.do("launch 1 big 50000") == 1      # most time
        out, err = p.communicate(timeout=30)
        fx.quit()
    assert p.returncode == 0 and err == "", (out, err)
    rows = table(out, ["%", "time", "total", "mean", "count", "group"])
    # shares of 63 us
    assert [r.split() for r in rows] == [
        ["79.37", "50.0us", "50.0us", "1", "cuda:kernel_start:name~^big$"],
        ["9.52", "6.00us", "2.00us", "3", "cuda:kernel_start:name~^gemm$"],
        ["9.52", "6.00us", "3.00us", "2", "cuda:kernel_start:name~^aab$"],
        ["1.59", "1.00us", "100ns", "10", "cuda:kernel_start:name~^small$"],
    ]


def test_the_human_view_of_a_duration_capture_has_per_thread_lines(xprobe):
    """live_service's two workers: one line each, their counts summing to
    the matched pairs."""
    with Fixture([fixture_path("live_service"), "--seconds", 60]) as fx:
        r = xprobe.run("measure", "--pid", fx.pid, "--from", "syscall:mmap:entry", "--to",
                       "syscall:mmap:exit", "--match", "exact", "--duration-ms", 700,
                       json_mode=False)
    assert r.rc == 0 and r.stderr == "", r
    matched = int(re.search(r"status: completed; (\d+) pairs? matched", r.stdout).group(1))
    lines = r.stdout.splitlines()
    i = lines.index("per thread (the start event's tid), 2 threads:")
    counts = []
    for line in lines[i + 1:i + 3]:
        m = re.fullmatch(r"  tid (\d+) +(\d+) pairs  p50 \S+ \S+  p99 \S+ \S+  max \S+ \S+",
                         line)
        assert m, line
        counts.append(int(m.group(2)))
    assert sum(counts) == matched and counts == sorted(counts, reverse=True)
    assert "histogram of %d pairs (power-of-two buckets):" % matched in lines


def test_the_demo_shows_the_histogram(xprobe):
    """scripts/demo.sh (make demo): its human measurement prints the
    histogram of its 40 pairs and the two workers' lines."""
    demo = os.path.join(xprobe_test.ROOT, "scripts", "demo.sh")
    p = subprocess.run([demo, xprobe.binary], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()
    i = lines.index("histogram of 40 pairs (power-of-two buckets):")
    assert re.fullmatch(r"\[\S+, \S+\) +\d+ \|@+ *\|", lines[i + 1]), lines[i + 1]
    assert "per thread (the start event's tid), 2 threads:" in lines
