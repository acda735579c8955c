# SPDX-License-Identifier: Apache-2.0
"""The terminal view of a measurement (no --json), on completed captures
written here: the histogram under the summary in bpftrace's layout
(--hist log2 | linear | none), per-thread lines, colors only on a
terminal, and the JSON document untouched by any of it.

The expected lines are golden: written out by hand from the capture's
latencies (power-of-two bounds 2^k ns in three significant digits, linear
bounds exactly, bars of ceil(count * 40 / widest) '@').
"""
import json
import os
import pty
import select
import subprocess

import xpcap
from xpcap import syscall_entry, syscall_exit

MMAP = ("syscall:mmap:entry", "syscall:mmap:exit")
SGR = "\033["


def capture(tmp_path, latencies, tids=None, name="cap.jsonl"):
    """One mmap entry/exit pair per latency, one after the other (tid 100
    unless @tids gives each pair's thread)."""
    events, t = [], 1000
    for i, lat in enumerate(latencies):
        tid = tids[i] if tids else 100
        events += [syscall_entry(tid, t), syscall_exit(tid, t + lat)]
        t += lat + 1000
    return xpcap.write_jsonl(tmp_path / name, events)


def human(xprobe, path, *extra, env=None):
    r = xprobe.run("measure", "--input", path, "--from", MMAP[0], "--to", MMAP[1],
                   "--match", "exact", "--duration-ms", 100000, *extra, json_mode=False,
                   env=env)
    assert r.rc == 0, r
    assert r.stderr == "", r
    assert SGR not in r.stdout, "no colors into a pipe: %r" % r.stdout
    return r.stdout.splitlines()


def bar(label, count, k):
    return "%-20s %8d |%s|" % (label, count, "@" * k + " " * (40 - k))


def block(lines, heading):
    """The lines after @heading up to the next blank line."""
    i = lines.index(heading)
    out = []
    for line in lines[i + 1:]:
        if not line:
            break
        out.append(line)
    return out


def test_log2_golden(xprobe, tmp_path):
    path = capture(tmp_path, [100] + [300] * 2 + [5000] * 40 + [20000] * 10)
    lines = human(xprobe, path)
    # under today's summary: the summary lines come first, unchanged
    assert lines[0] == "syscall:mmap:entry -> syscall:mmap:exit (exact_syscall_tid_lifecycle, exact)"
    assert lines[1].startswith("status: completed; 53 pairs matched")
    assert lines[2].startswith("latency: min 100 ns")
    assert lines[4] == ""
    assert block(lines, "histogram of 53 pairs (power-of-two buckets):") == [
        bar("[64ns, 128ns)", 1, 1),       # first non-empty: nothing before it
        bar("[128ns, 256ns)", 0, 0),      # empty inside the range: kept
        bar("[256ns, 512ns)", 2, 2),
        bar("[512ns, 1.02us)", 0, 0),
        bar("[1.02us, 2.05us)", 0, 0),
        bar("[2.05us, 4.10us)", 0, 0),
        bar("[4.10us, 8.19us)", 40, 40),  # the widest fills the bar
        bar("[8.19us, 16.4us)", 0, 0),
        bar("[16.4us, 32.8us)", 10, 10),  # last non-empty: nothing after it
    ]
    # one thread: no per-thread lines
    assert not [l for l in lines if l.startswith("per thread")]


def test_log2_scaling_rounds_up_and_units(xprobe, tmp_path):
    # 7 pairs in one bucket, 1 in another: 40 * 1 / 7 = 5.7 -> 6 '@'
    path = capture(tmp_path, [3000] * 7 + [3_000_000])
    lines = human(xprobe, path)
    got = block(lines, "histogram of 8 pairs (power-of-two buckets):")
    assert got[0] == bar("[2.05us, 4.10us)", 7, 40)
    assert got[-1] == bar("[2.10ms, 4.19ms)", 1, 6)
    assert len(got) == 11  # 2^11 .. 2^21 ns
    # milliseconds and seconds in the labels
    path = capture(tmp_path, [3_000_000] * 2 + [1_500_000_000], name="slow.jsonl")
    lines = human(xprobe, path)
    assert block(lines, "histogram of 3 pairs (power-of-two buckets):") == [
        bar("[2.10ms, 4.19ms)", 2, 40),
        bar("[4.19ms, 8.39ms)", 0, 0),
        bar("[8.39ms, 16.8ms)", 0, 0),
        bar("[16.8ms, 33.6ms)", 0, 0),
        bar("[33.6ms, 67.1ms)", 0, 0),
        bar("[67.1ms, 134ms)", 0, 0),
        bar("[134ms, 268ms)", 0, 0),
        bar("[268ms, 537ms)", 0, 0),
        bar("[537ms, 1.07s)", 0, 0),
        bar("[1.07s, 2.15s)", 1, 20),
    ]


def test_log2_is_the_default(xprobe, tmp_path):
    path = capture(tmp_path, [100, 300, 5000])
    assert human(xprobe, path) == human(xprobe, path, "--hist", "log2")


def test_linear_golden(xprobe, tmp_path):
    # 1.0 .. 2.9 us: a step of 50 ns would need 39 buckets, 100 ns needs 20
    path = capture(tmp_path, [1000] * 4 + [1500] * 2 + [2900])
    lines = human(xprobe, path, "--hist", "linear")
    got = block(lines, "histogram of 7 pairs (linear buckets of 100ns):")
    expect = []
    for i in range(20):
        lo = 1000 + 100 * i
        n = {1000: 4, 1500: 2, 2900: 1}.get(lo, 0)
        label = "[%d.%dus, %d.%dus)" % (lo // 1000, lo % 1000 // 100,
                                       (lo + 100) // 1000, (lo + 100) % 1000 // 100)
        expect.append(bar(label, n, {4: 40, 2: 20, 1: 10, 0: 0}[n]))
    assert got == expect
    assert got[0] == bar("[1.0us, 1.1us)", 4, 40)
    assert got[-1] == bar("[2.9us, 3.0us)", 1, 10)
    assert not [l for l in lines if "power-of-two" in l]


def test_linear_milliseconds(xprobe, tmp_path):
    # range 2.2 ms: 100 us would need 23 buckets; 200 us from 1.2 ms needs 12
    path = capture(tmp_path, [1_234_567, 1_400_000, 3_456_789])
    lines = human(xprobe, path, "--hist", "linear")
    got = block(lines, "histogram of 3 pairs (linear buckets of 200us):")
    assert got[0] == bar("[1.2ms, 1.4ms)", 1, 40)
    assert got[1] == bar("[1.4ms, 1.6ms)", 1, 40)
    assert got[2] == bar("[1.6ms, 1.8ms)", 0, 0)
    assert got[-1] == bar("[3.4ms, 3.6ms)", 1, 40)
    assert len(got) == 12


def test_hist_none(xprobe, tmp_path):
    path = capture(tmp_path, [100, 300, 5000], tids=[1, 2, 2])
    lines = human(xprobe, path, "--hist", "none")
    assert not [l for l in lines if l.startswith("histogram") or "|@" in l or " |" in l]
    # the summary and the per-thread lines stay
    assert lines[0].startswith("syscall:mmap:entry -> syscall:mmap:exit")
    assert "per thread (the start event's tid), 2 threads:" in lines


def test_per_thread_lines(xprobe, tmp_path):
    lat = [1000, 500, 2000, 10000, 700, 3000]
    tids = [101, 102, 101, 103, 102, 101]
    path = capture(tmp_path, lat, tids)
    lines = human(xprobe, path)
    assert block(lines, "per thread (the start event's tid), 3 threads:") == [
        # by count, then tid; p50 and p99 by nearest rank
        "  tid 101           3 pairs  p50 2.000 us  p99 3.000 us  max 3.000 us",
        "  tid 102           2 pairs  p50 500 ns  p99 700 ns  max 700 ns",
        "  tid 103           1 pair   p50 10.000 us  p99 10.000 us  max 10.000 us",
    ]
    # the histogram comes before them, the summary before both
    assert lines.index("histogram of 6 pairs (power-of-two buckets):") < \
        lines.index("per thread (the start event's tid), 3 threads:")


def test_per_thread_lines_are_bounded(xprobe, tmp_path):
    tids = list(range(1, 21)) + [1]
    path = capture(tmp_path, [1000] * 21, tids)
    lines = human(xprobe, path)
    got = block(lines, "per thread (the start event's tid), 20 threads:")
    assert len(got) == 17
    assert got[0].startswith("  tid 1             2 pairs")
    assert got[1].startswith("  tid 2             1 pair ")
    assert got[-1] == "  ... 4 more threads (every pair is in --json's evidence)"


def normalized(doc):
    """The document with this run's session id replaced (it holds the pid)."""
    return json.loads(json.dumps(doc).replace(doc["session_id"], "SESSION"))


def test_json_unchanged_by_hist(xprobe, tmp_path):
    path = capture(tmp_path, [100, 300, 5000, 20000], tids=[1, 2, 1, 2])
    args = ["measure", "--input", path, "--from", MMAP[0], "--to", MMAP[1], "--match",
            "exact", "--samples", 4]
    base = xprobe.run(*args)
    assert base.rc == 0, base
    for mode in ("log2", "linear", "none"):
        r = xprobe.run(*args, "--hist", mode)
        assert r.rc == 0, r
        assert r.stderr == ""
        assert normalized(r.doc) == normalized(base.doc), mode
        assert "histogram" not in r.stdout and "@" not in r.stdout


def test_hist_usage_errors(xprobe, tmp_path):
    path = capture(tmp_path, [100])
    sel = ["--from", MMAP[0], "--to", MMAP[1], "--match", "exact"]
    for extra, msg in (
            (["--input", path, *sel, "--samples", 1, "--hist", "log10"],
             "invalid value 'log10' for '--hist': expected log2, linear or none"),
            (["--input", path, *sel, "--samples", 1, "--hist", "log2", "--hist", "none"],
             "the argument '--hist' cannot be used multiple times"),
            (["--input", path, *sel, "--samples", 1, "--hist"],
             "a value is required for '--hist'"),
            (["--pid", 1, "--cpu-sample", "--duration-ms", 10, "--hist", "linear"],
             "the argument '--hist' cannot be used with '--cpu-sample'"),
            (["--pid", 1, "--syscall-aggregate", "--duration-ms", 10, "--hist", "none"],
             "the argument '--hist' cannot be used with '--syscall-aggregate'"),
            (["--pid", 1, "--histogram", *sel, "--hist", "log2"],
             "the argument '--hist' cannot be used with '--histogram'"),
            (["--pid", 1, "--aggregate", "--from", "cuda:kernel_start", "--to",
              "cuda:kernel_end", "--match", "exact", "--hist", "log2"],
             "the argument '--hist' cannot be used with '--aggregate'")):
        # (with --json after a bare --hist, --json would be its value)
        for json_mode in (True, False) if extra[-1] != "--hist" else (False,):
            r = xprobe.run("measure", *extra, json_mode=json_mode)
            assert r.rc == 2, r
            assert r.stderr.startswith("error: " + msg), r
    r = xprobe.run("validate", "--pid", 1, *sel, "--hist", "log2", json_mode=False)
    assert r.rc == 2 and "unexpected argument '--hist'" in r.stderr, r


# --- colors ------------------------------------------------------------------

def run_on_pty(argv, env=None):
    """Run @argv with stdout on a pseudo-terminal; (rc, stdout, stderr)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(a) for a in argv], stdout=slave, stderr=subprocess.PIPE,
                         env=env)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 10)
        assert r, "no output within 10 s"
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every slave side closed
            break
        if not data:
            break
        out += data
    os.close(master)
    err = p.stderr.read()
    p.wait(timeout=30)
    return p.returncode, out.decode(), err.decode()


def color_env(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    env.update(kw)
    return env


def test_colors_only_on_a_terminal(xprobe, tmp_path):
    path = capture(tmp_path, [100, 300, 5000])
    argv = [xprobe.binary, "measure", "--input", path, "--from", MMAP[0], "--to", MMAP[1],
            "--match", "exact", "--samples", 3]
    rc, out, err = run_on_pty(argv, color_env())
    assert rc == 0 and err == "", (out, err)
    assert "\033[32m@" in out, out          # the bars
    assert "\033[1msyscall:mmap:entry" in out  # the measured pair
    # the same text once the escapes are gone
    plain = out.replace("\r\n", "\n")
    for sgr in ("\033[32m", "\033[1m", "\033[0m"):
        plain = plain.replace(sgr, "")
    assert plain.splitlines() == human(xprobe, path, env=color_env())
    # an empty NO_COLOR is no request
    rc, out, _ = run_on_pty(argv, color_env(NO_COLOR=""))
    assert rc == 0 and SGR in out


def test_no_color_and_NO_COLOR(xprobe, tmp_path):
    path = capture(tmp_path, [100, 300, 5000])
    argv = [xprobe.binary, "measure", "--input", path, "--from", MMAP[0], "--to", MMAP[1],
            "--match", "exact", "--samples", 3]
    for extra, env in (([], color_env(NO_COLOR="1")), ([], color_env(NO_COLOR="yes")),
                       (["--no-color"], color_env()), ([], color_env(TERM="dumb"))):
        rc, out, err = run_on_pty(argv + extra, env)
        assert rc == 0 and err == ""
        assert "|@" in out and SGR not in out and "\033" not in out, (extra, out)


def test_percentiles_plurals_errors_and_written_files(xprobe, tmp_path):
    """The summary a person reads: p50, p90, p95, p99 and max; singular
    and plural words; how many syscall pairs ended in an error return and
    which errnos; the files the run wrote."""
    import xpcap
    ev = []
    rets = [0x7F0000000000, -12, -12, -1, 0x7F0000001000]
    for i, ret in enumerate(rets):
        ev += [xpcap.syscall_entry(100, 1000 + 10000 * i),
               xpcap.syscall_exit(100, 1500 + 10000 * i, ret=ret)]
    src = xpcap.write_jsonl(tmp_path / "e.jsonl", ev)
    out, rep = tmp_path / "o.jsonl", tmp_path / "r.html"
    r = xprobe.run("measure", "--input", src, "--from", "syscall:mmap:entry", "--to",
                   "syscall:mmap:exit", "--match", "exact", "--samples", 5, "--events-out", out,
                   "--report", rep, json_mode=False)
    assert r.rc == 0, r
    lines = r.stdout.splitlines()
    assert lines[1].startswith("status: completed; 5 pairs matched, 0 unmatched starts, "
                               "0 unmatched ends"), lines[1]
    assert lines[2].startswith("latency: min 500 ns  p50 500 ns  p90 500 ns  p95 500 ns  "
                               "p99 500 ns  max 500 ns"), lines[2]
    assert "errors: 3 of 5 pairs ended in an error return (ENOMEM 2, EPERM 1)" in lines
    assert "events written: %s (jsonl, 10 events)" % out in lines
    assert "report written: %s" % rep in lines


def test_nvtx_ranges_need_nvtx_not_cupti(xprobe):
    """An NVTX-only pair comes through the Agent's NVTX injection: the
    terminal view says so (the JSON keeps the contract's needs_cupti_*).
    Before: "needs: CUPTI"."""
    import os
    r = xprobe.run("validate", "--pid", os.getpid(), "--from", "cuda:nvtx_range_start:name~^s$",
                   "--to", "cuda:nvtx_range_end:name~^s$", "--match", "exact", json_mode=False)
    assert r.rc == 0, r
    needs = [l for l in r.stdout.splitlines() if l.startswith("needs:")]
    assert needs and "NVTX" in needs[0] and "CUPTI" not in needs[0], r.stdout
    r = xprobe.run("validate", "--pid", os.getpid(), "--from", "cuda:kernel_start",
                   "--to", "cuda:kernel_end", "--match", "exact", json_mode=False)
    needs = [l for l in r.stdout.splitlines() if l.startswith("needs:")]
    assert needs and "CUPTI" in needs[0], r.stdout
