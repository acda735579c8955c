# SPDX-License-Identifier: Apache-2.0
"""validate --pid PID --list PATTERN [--limit N] (src/resolve/endpoint_list.h):
the target's endpoints whose selector text matches a glob, read-only, like
`bpftrace -l`.  What is expected comes from the fixtures themselves (the
functions and addresses they print), from nm (libc's dynamic symbols),
bpftrace -l (the fixture's functions), the kernel headers' syscall table
and tracefs's available_events.  Every selector listed is run through
validate as printed, with a boundary appended."""
import fnmatch
import os
import re
import subprocess

import pytest

from target_helpers import PY311, Target, canonical, fx, private_tracefs, python_target

LIBC_GLOB = "uprobe:*libc.so*:pthread_mutex_*"


def listing(xprobe, pid, pattern, *extra, **kw):
    r = xprobe.run("validate", "--pid", pid, "--list", pattern, *extra, **kw)
    assert r.rc == 0, r
    d = r.doc
    assert d["mode"] == "endpoint_list" and d["pattern"] == pattern
    sels = [e["selector"] for e in d["endpoints"]]
    assert sels == sorted(sels, key=lambda s: s.encode()), "sorted by bytes"
    assert len(d["endpoints"]) == min(d["total"], d["limit"])
    assert d["truncated"] == (d["total"] > d["limit"])
    for e in d["endpoints"]:
        assert fnmatch.fnmatchcase(e["selector"], pattern) or e["by_offset"] or \
            (e["symbol_selector"] and fnmatch.fnmatchcase(e["symbol_selector"], pattern)) \
            or e["signature"], e
    return d


def validates(xprobe, pid, e):
    """The selector as printed, a boundary appended, is valid."""
    b = e["boundaries"]
    if not b:
        start, end, match = e["selector"], e["selector"], "first-after"
        if e["kind"] == "python_gc":
            start, end, match = "python:gc_start", "python:gc_end", "exact"
    else:
        start = e["selector"] + ":entry"
        end = e["selector"] + ":" + b[1]
        match = "exact" if e["kind"] == "syscall" else "stack-nested"
    r = xprobe.run("validate", "--pid", pid, "--from", start, "--to", end, "--match", match)
    assert r.rc == 0 and r.doc["valid"] is True, (e, r)
    return r.doc


@pytest.fixture
def funcs():
    with Target([fx("target_funcs")]) as t:
        yield t


def test_functions_of_a_binary_as_the_fixture_and_bpftrace_say(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    d = listing(xprobe, funcs.pid, "uprobe:*target_funcs:fx_*")
    expect = sorted("uprobe:%s:%s" % (exe, n) for n in funcs.addrs if n.startswith("fx_"))
    assert [e["selector"] for e in d["endpoints"]] == expect
    assert d["total"] == 4 and d["truncated"] is False and d["warnings"] == []
    # bpftrace -l, the tool a user would use instead, lists the same
    bt = subprocess.run(["bpftrace", "-l", "uprobe:%s:fx_*" % exe], capture_output=True,
                        text=True, check=True).stdout.split()
    assert sorted(bt) == expect
    for e in d["endpoints"]:
        assert e["kind"] == "uprobe" and e["binary_path"] == exe
        assert e["boundaries"] == ["entry", "return"] and e["by_offset"] is False
        assert e["signature"] is None and e["symbol_selector"] is None
        doc = validates(xprobe, funcs.pid, e)
        assert doc["start"]["host"]["runtime_address"] == funcs.addrs[e["symbol"]]


def test_a_name_at_two_addresses_is_listed_by_offset(xprobe, funcs):
    """target_dup_helper is a local function of two files: the name alone
    is AMBIGUOUS_TARGET, so each address is listed as +0x<file offset>,
    and each validates at the address the fixture printed."""
    exe = canonical(fx("target_funcs"))
    r = xprobe.run("validate", "--pid", funcs.pid, "--from",
                   "uprobe:%s:target_dup_helper:entry" % exe, "--to",
                   "uprobe:%s:target_dup_helper:return" % exe, "--match", "stack-nested")
    assert r.rc == 1 and r.code == "AMBIGUOUS_TARGET", r
    d = listing(xprobe, funcs.pid, "uprobe:*target_funcs:*dup_helper*")
    dup = [e for e in d["endpoints"] if e["symbol"] == "target_dup_helper"]
    assert len(dup) == 2 and all(e["by_offset"] for e in dup)
    got = sorted(validates(xprobe, funcs.pid, e)["start"]["host"]["runtime_address"]
                 for e in dup)
    assert got == sorted([funcs.addrs["target_dup_helper.a"],
                          funcs.addrs["target_dup_helper.b"]])
    assert all(re.fullmatch(r"uprobe:.*:\+0x[0-9a-f]+", e["selector"]) for e in dup)


def test_cxx_symbols_match_through_their_signature(xprobe):
    """A glob over the demangled form finds the overloads; each carries
    its signature and its symbol= selector, and both validate."""
    exe = canonical(fx("target_cxx"))
    with Target([exe]) as t:
        d = listing(xprobe, t.pid, "uprobe:*target_cxx:*xp_fx::over(*")
        sigs = sorted(e["signature"] for e in d["endpoints"])
        assert sigs == ["xp_fx::over(char const*, unsigned int)", "xp_fx::over(double)",
                        "xp_fx::over(int)", "xp_fx::over(long)"]
        for e in d["endpoints"]:
            assert e["symbol"].startswith("_ZN5xp_fx4over")
            assert e["selector"] == "uprobe:%s:%s" % (exe, e["symbol"])
            assert e["symbol_selector"] == "uprobe:%s:symbol=%s" % (exe, e["signature"])
            a = validates(xprobe, t.pid, e)["start"]["host"]["runtime_address"]
            b = validates(xprobe, t.pid, dict(e, selector=e["symbol_selector"]))
            assert b["start"]["host"]["runtime_address"] == a
        # the human view: the selector, a tab, its symbol= form
        h = xprobe.run("validate", "--pid", t.pid, "--list", "uprobe:*target_cxx:*over*",
                       json_mode=False)
        lines = h.stdout.splitlines()
        assert len(lines) == 4 and all("\tuprobe:%s:symbol=xp_fx::over(" % exe in ln
                                       for ln in lines), h.stdout


def nm_functions(path, glob):
    """Defined function names of @path's dynamic symbols, versions cut."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in ("T", "W"):
            name = f[2].split("@")[0]
            if fnmatch.fnmatchcase(name, glob):
                names.add(name)
    return names


def test_libc_functions_as_nm_lists_them(xprobe, funcs):
    d = listing(xprobe, funcs.pid, LIBC_GLOB)
    libc = d["endpoints"][0]["binary_path"]
    assert os.path.basename(libc) == "libc.so.6"
    got = {e["symbol"] for e in d["endpoints"]}
    assert got == nm_functions(libc, "pthread_mutex_*")
    assert {"pthread_mutex_lock", "pthread_mutex_unlock"} <= got
    for e in d["endpoints"]:
        if e["symbol"] in ("pthread_mutex_lock", "pthread_mutex_unlock"):
            validates(xprobe, funcs.pid, e)


def kernel_syscalls():
    with open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") as f:
        return {m.group(1) for m in re.finditer(r"#define __NR_(\w+)\s+\d+", f.read())}


def test_syscalls_from_the_table(xprobe, funcs):
    d = listing(xprobe, funcs.pid, "syscall:*read*", "--limit", 1000)
    assert {e["symbol"] for e in d["endpoints"]} == \
        {n for n in kernel_syscalls() if "read" in n}
    for e in d["endpoints"]:
        assert e["kind"] == "syscall" and e["boundaries"] == ["entry", "exit"]
        assert e["binary_path"] is None
        if e["symbol"] in ("read", "pread64"):
            validates(xprobe, funcs.pid, e)


def test_tracepoints_from_tracefs(xprobe, funcs):
    with open("/sys/kernel/tracing/available_events") as f:
        expect = sorted("tracepoint:" + ln.strip() for ln in f
                        if ln.startswith("sched:"))
    d = listing(xprobe, funcs.pid, "tracepoint:sched:*", "--limit", 1000)
    assert [e["selector"] for e in d["endpoints"]] == expect
    (sw,) = [e for e in d["endpoints"] if e["symbol"] == "sched:sched_switch"]
    assert sw["boundaries"] == []
    validates(xprobe, funcs.pid, sw)


def test_without_tracefs_the_tracepoints_are_not_listed_and_it_says_so(xprobe, funcs,
                                                                        tmp_path):
    env = dict(os.environ, XPROBE_TRACEFS_ROOT=str(tmp_path))
    d = listing(xprobe, funcs.pid, "*sched_switch*", env=env)
    assert d["total"] == 0
    (w,) = d["warnings"]
    assert w["code"] == "TRACEPOINTS_NOT_LISTED" and "mount -t tracefs" in w["message"]
    # a pattern that cannot name a tracepoint does not look
    d = listing(xprobe, funcs.pid, "syscall:read", env=env)
    assert d["warnings"] == [] and d["total"] == 1
    with private_tracefs() as root:
        env = dict(os.environ, XPROBE_TRACEFS_ROOT=root)
        d = listing(xprobe, funcs.pid, "tracepoint:sched:sched_switch", env=env)
        assert d["total"] == 1 and d["warnings"] == []


def test_python_gc_markers_and_the_name_python_was_started_by(xprobe):
    """Debian's CPython: the GC USDT markers as python:gc_*, and its
    functions under /usr/bin/python3 (a symlink to python3.11, the mapped
    file): a pattern with the name the program was started by matches."""
    with python_target() as t:
        d = listing(xprobe, t.pid, "python:*")
        assert [e["selector"] for e in d["endpoints"]] == ["python:gc_end", "python:gc_start"]
        assert [e["symbol"] for e in d["endpoints"]] == ["gc__done", "gc__start"]
        assert d["endpoints"][0]["binary_path"] == canonical(PY311)
        validates(xprobe, t.pid, d["endpoints"][0])
        link = "/usr/bin/python3"
        assert os.path.islink(link) and canonical(link) == canonical(PY311)
        d = listing(xprobe, t.pid, "uprobe:%s:Py_Initialize*" % link)
        (e,) = [e for e in d["endpoints"] if e["symbol"] == "Py_Initialize"]
        assert e["selector"] == "uprobe:%s:Py_Initialize" % link
        assert e["binary_path"] == canonical(PY311)
        validates(xprobe, t.pid, e)


def test_limit_keeps_the_first_by_name(xprobe, funcs):
    full = listing(xprobe, funcs.pid, "*", "--limit", 1000000)
    assert full["truncated"] is False and full["total"] == len(full["endpoints"]) > 500
    kinds = {e["kind"] for e in full["endpoints"]}
    assert kinds == {"uprobe", "syscall", "tracepoint"}
    cut = listing(xprobe, funcs.pid, "*", "--limit", 7)
    assert cut["total"] == full["total"] and cut["truncated"] is True and cut["limit"] == 7
    assert cut["endpoints"] == full["endpoints"][:7]
    default = listing(xprobe, funcs.pid, "*")
    assert default["limit"] == 200 and default["endpoints"] == full["endpoints"][:200]
    # the human view: one selector a line on stdout, the cut on stderr
    h = xprobe.run("validate", "--pid", funcs.pid, "--list", "*", "--limit", 7,
                   json_mode=False)
    assert h.rc == 0
    assert [ln.split("\t")[0] for ln in h.stdout.splitlines()] == \
        [e["selector"] for e in cut["endpoints"]]
    assert "7 of %d endpoints shown" % full["total"] in h.stderr


def test_nothing_matches(xprobe, funcs):
    d = listing(xprobe, funcs.pid, "uprobe:*:no_such_function_anywhere")
    assert d["total"] == 0 and d["endpoints"] == []
    h = xprobe.run("validate", "--pid", funcs.pid, "--list", "sycall:read", json_mode=False)
    assert h.rc == 0 and h.stdout == ""
    assert "no endpoint of pid %d matches" % funcs.pid in h.stderr
    assert "syscall:*mmap*" in h.stderr


@pytest.mark.parametrize("args,message", [
    (["--list", ""], "an empty pattern"),
    (["--list", "x" * 4097], "at most 4096"),
    (["--list", "syscall:*", "--limit", "0"], "at least 1"),
    (["--list", "syscall:*", "--from", "syscall:read:entry"], "cannot be used with"),
    (["--list", "syscall:*", "--cpu-sample"], "cannot be used with"),
    (["--limit", "5", "--cpu-sample"], "requires '--list'"),
])
def test_usage_errors(xprobe, funcs, args, message):
    r = xprobe.run("validate", "--pid", funcs.pid, *args)
    assert r.rc == 2 and message in r.stderr, r


def test_target_errors(xprobe):
    r = xprobe.run("validate", "--pid", 4194303, "--list", "syscall:*")
    assert r.rc == 3 and r.code == "TARGET_NOT_FOUND", r
