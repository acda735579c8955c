# SPDX-License-Identifier: Apache-2.0
"""`--histogram` command lines the in-kernel pairing cannot serve are usage
errors (exit 2, usage on stderr, nothing on stdout) whatever the target:
flags of the capture modes and inventories, cuda: endpoints, policies
other than exact / stack-nested, endpoints of two lifecycles, flags of
the other pairing (src/cmd/histogram_rules.c, docs/histograms.md).  Bounds
out of range and selectors that do not parse are JSON errors (exit 1),
as in every other mode; none of these touch a target (pid 1 is never
probed: the checks come first).
"""
import pytest

UP = "uprobe:/bin/true:main:entry"
UP_RET = "uprobe:/bin/true:main:return"
SYS = ["--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact"]
NEST = ["--from", UP, "--to", UP_RET, "--match", "stack-nested"]


def usage(xprobe, *argv):
    r = xprobe.run(*argv)
    assert r.rc == 2, r
    assert r.stdout == ""
    assert "Usage: xprobe" in r.stderr
    return r.stderr


@pytest.mark.parametrize("extra,flag", [
    (["--input", "/dev/null"], "--input"),
    (["--spec", "/dev/null"], "--spec"),
    (["--events-out", "/tmp/x.jsonl"], "--events-out"),
    (["--format", "chrome"], "--format"),
    (["--samples", "10"], "--samples"),
    (["--max-events", "10"], "--max-events"),
    (["--cpu-sample"], "--cpu-sample"),
    (["--syscall-aggregate"], "--syscall-aggregate"),
    (["--aggregate"], "--aggregate"),
])
def test_capture_and_inventory_flags_are_refused(xprobe, extra, flag):
    argv = ["measure", "--histogram"] + extra
    if flag != "--spec":  # a spec carries the pair and the target itself
        argv += ["--pid", "1"] + SYS
    err = usage(xprobe, *argv)
    assert "'--histogram' cannot be used with '%s'" % flag in err or \
        "'%s' cannot be used with '--histogram'" % flag in err, err


@pytest.mark.parametrize("policy", ["first-after", "nearest", "stream-order", "bogus"])
def test_other_policies_are_refused(xprobe, policy):
    err = usage(xprobe, "measure", "--pid", "1", "--histogram", "--from", "syscall:write:entry",
                "--to", "syscall:write:exit", "--match", policy)
    assert "--match exact or stack-nested, not '%s'" % policy in err


def test_agent_flags_need_cuda_endpoints(xprobe):
    err = usage(xprobe, "measure", "--pid", "1", "--histogram", "--agent", "/tmp/libxprobe.so",
                *SYS)
    assert "--agent reaches the Agent, which --histogram uses for cuda: endpoints only" in err


NVTX = ["--from", "cuda:nvtx_range_start:name~^step$", "--to", "cuda:nvtx_range_end:name~^step$"]
KERNEL = ["--from", "cuda:kernel_start", "--to", "cuda:kernel_end"]


@pytest.mark.parametrize("argv,why", [
    (["--from", "syscall:write:entry", "--to", "cuda:runtime_api:cudaMalloc:exit",
      "--match", "exact"], "mixes them"),
    (NVTX + ["--match", "first-after"], "use --match exact, not 'first-after'"),
    (NVTX + ["--match", "exact", "--max-depth", "4"], "--max-depth bounds the kernel's"),
    (NVTX + ["--match", "exact", "--explain"], "--explain follows host threads"),
    (NVTX + ["--match", "exact", "--max-groups", "8"], "add --by name, thread, stream or device"),
    (NVTX + ["--match", "exact", "--by", "stream"], "--by stream groups device activity"),
    (NVTX + ["--match", "exact", "--by", "arg0"], "expected name, thread, stream or device"),
    (KERNEL + ["--match", "exact", "--by", "thread"], "--by thread groups NVTX ranges"),
    (["--from", "cuda:memset_start", "--to", "cuda:memset_end", "--match", "exact", "--by",
      "name"], "copies and sets have no name"),
    (["--from", "cuda:nvtx_range_start:name~^a$", "--to", "cuda:nvtx_range_end:name~^b$",
      "--match", "exact"], "is not one"),
    (["--from", "cuda:kernel_start", "--to", "cuda:memcpy_end", "--match", "exact"],
     "is not one"),
    (["--from", "cuda:kernel_end", "--to", "cuda:kernel_start", "--match", "exact"],
     "is not one"),
    (NVTX + ["--match", "exact", "--interval-ms", "50"], "at least 100 milliseconds"),
])
def test_cuda_pairs_the_agent_cannot_serve(xprobe, argv, why):
    """cuda: endpoints are paired by the Agent in the target (exact, one
    lifecycle, the same filter); what it cannot serve is a usage error."""
    err = usage(xprobe, "measure", "--pid", "1", "--histogram", *argv)
    assert why in err, err


@pytest.mark.parametrize("start,end", [
    ("syscall:read:entry", "syscall:write:exit"),          # two syscalls
    ("syscall:write:exit", "syscall:write:entry"),         # end before start
    ("syscall:write:entry", "syscall:write:entry"),
    ("uprobe:/bin/true:main:entry", "uprobe:/bin/true:exit:return"),  # two functions
    ("uprobe:/bin/true:main:entry", "uprobe:/bin/ls:main:return"),    # two binaries
    ("uprobe:/bin/true:main:entry", "uprobe:/bin/true:+0x10:return"),  # named two ways
    ("uprobe:/bin/true:main:entry", "syscall:write:exit"),
    ("python:gc_start", "syscall:write:exit"),
    ("python:gc_end", "python:gc_start"),
    ("tracepoint:sched:sched_switch", "tracepoint:sched:sched_wakeup"),
])
def test_pairs_the_kernel_cannot_pair_are_refused(xprobe, start, end):
    for cmd in (["measure", "--pid", "1"], ["validate", "--pid", "1"]):
        err = usage(xprobe, *cmd, "--histogram", "--from", start, "--to", end,
                    "--match", "exact")
        assert "pairs the start and end of one lifecycle per thread" in err, err
        assert "'%s' -> '%s' is not one" % (start, end) in err


def test_flag_rules(xprobe):
    assert "--histogram requires --pid" in usage(xprobe, "measure", "--histogram", *SYS)
    assert "requires --from, --to and --match" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--from", "syscall:write:entry",
        "--to", "syscall:write:exit")
    assert "invalid value 'fd' for '--by'" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--by", "fd", *SYS)
    assert "'--by' requires '--histogram'" in usage(
        xprobe, "measure", "--pid", "1", "--by", "thread", *SYS, "--samples", "1")
    assert "'--max-depth' requires '--histogram'" in usage(
        xprobe, "measure", "--pid", "1", "--max-depth", "4", *NEST, "--samples", "1")
    assert "--max-depth bounds stack-nested pairing" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--max-depth", "4", *SYS)
    assert "--max-groups bounds the groups of --by" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--max-groups", "4", *SYS)
    # --max-inflight is the histogram's too now, still not the exact mode's
    assert "'--max-inflight' requires" in usage(
        xprobe, "measure", "--pid", "1", "--max-inflight", "4", *SYS, "--samples", "1")
    assert "--histogram" in usage(xprobe, "validate", "--pid", "1", "--histogram",
                                  "--cpu-sample", *SYS)


@pytest.mark.parametrize("flag,value", [
    ("--max-inflight", "0"), ("--max-inflight", "65537"),
    ("--max-groups", "0"), ("--max-groups", "16385"),
    ("--max-depth", "0"), ("--max-depth", "33"),
])
def test_bounds_out_of_range(xprobe, flag, value):
    argv = ["measure", "--pid", "1", "--histogram", flag, value]
    argv += NEST if flag == "--max-depth" else SYS
    if flag == "--max-groups":
        argv += ["--by", "thread"]
    r = xprobe.run(*argv)
    assert r.rc == 1, r
    assert r.code == "SESSION_LIMIT_EXCEEDED"
    d = r.error["details"]
    assert d["flag"] == flag[2:] and d["value"] == int(value)


def test_zero_window_and_window_over_timeout(xprobe):
    r = xprobe.run("measure", "--pid", "1", "--histogram", *SYS, "--duration-ms", "0")
    assert r.rc == 1 and r.code == "SESSION_LIMIT_EXCEEDED", r
    r = xprobe.run("measure", "--pid", "1", "--histogram", *SYS, "--duration-ms", "2000",
                   "--timeout-ms", "1000")
    assert r.rc == 1 and r.code == "SESSION_LIMIT_EXCEEDED", r


def test_selector_that_does_not_parse_is_the_usual_error(xprobe):
    r = xprobe.run("measure", "--pid", "1", "--histogram", "--from", "uprobe:nope",
                   "--to", "uprobe:nope:return", "--match", "stack-nested")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r


def test_help_names_the_flags(xprobe):
    r = xprobe.run("measure", "--help", json_mode=False)
    assert r.rc == 0
    for flag in ("--histogram", "--by <KEY>", "--max-depth", "--max-inflight"):
        assert flag in r.stdout
    r = xprobe.run("validate", "--help", json_mode=False)
    assert "--histogram" in r.stdout


def test_interval_and_metrics_rules(xprobe):
    """--interval-ms (at least 100) and --metrics-out belong to --histogram."""
    assert "at least 100 milliseconds" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--interval-ms", "99", *SYS)
    assert "invalid value 'x' for '--interval-ms'" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--interval-ms", "x", *SYS)
    assert "'--interval-ms' requires '--histogram'" in usage(
        xprobe, "measure", "--pid", "1", "--interval-ms", "500", *SYS, "--samples", "1")
    assert "'--metrics-out' requires '--histogram'" in usage(
        xprobe, "measure", "--pid", "1", "--metrics-out", "/tmp/x.prom", *SYS, "--samples", "1")
