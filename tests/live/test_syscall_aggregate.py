# SPDX-License-Identifier: Apache-2.0
"""`xprobe measure --syscall-aggregate` on live fixtures (root; no skips).

inv_syscalls makes exactly known numbers of getppid, failing close(-1),
failing openat and an unknown syscall number after "go", then blocks in
read(2) (one call in flight at the end); its "go" read was entered before
arming (one unmatched exit).  Counts and error counts must match exactly;
tiny --max-groups / --max-inflight must show their overflow accounting.
Every document is validated against syscall-aggregate-result.
"""
import signal
import time

import pytest

from inv_helpers import InvProc, fixture_path, validate_selectors, warning_codes
from measure_live_helpers import LiveRun, assert_released

SCHEMA = "syscall-aggregate-result"
N_GETPPID, N_CLOSE, N_OPENAT, N_UNKNOWN = 1000, 300, 200, 50
NR = {"read": 0, "write": 1, "close": 3, "getppid": 110, "openat": 257, "pause": 34}


def groups_by_nr(doc):
    return {g["syscall_nr"]: g for g in doc["inventory"]["groups"]}


def run_burst(xprobe, fx, *args, duration=1500):
    """Start the aggregate, wait for its two links, let the fixture work."""
    run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", duration,
                  *args)
    run.wait_armed(2)
    fx.send("go")
    done = fx.line()
    assert done.startswith("done "), done
    res = run.finish(schema_name=SCHEMA)
    assert res.rc == 0, res
    assert res.stderr == "", res
    return res.doc, run


def check_accounting(doc):
    col = doc["collection"]
    gs = doc["inventory"]["groups"]
    for key in ("entries", "matched_exits", "unmatched_exits", "inflight_at_end", "errors",
                "superseded", "noreturn"):
        assert col[key] == sum(g[key] for g in gs), key
    assert col["dropped"] == (col["group_drop_entries"] + col["group_drop_exits"]
                              + col["inflight_drops"] + col["regs_read_errors"])
    assert col["groups"] == len(gs) <= col["group_capacity"]
    assert col["inflight_at_end"] <= col["inflight_occupied"] <= col["inflight_capacity"]
    for g in gs:
        # every call entered in the window is accounted for exactly once
        assert g["entries"] == (g["matched_exits"] + g["inflight_at_end"] + g["inflight_drops"]
                                + g["superseded"] + g["noreturn"]), g
        d = g["duration_ns"]
        if g["matched_exits"]:
            assert d["min"] <= d["mean"] <= d["max"] and d["total"] >= d["max"]
            assert d["mean"] == d["total"] / g["matched_exits"]
        else:
            assert d["min"] is None and d["mean"] is None and d["max"] is None
            assert d["total"] == 0
        if g["known"]:
            assert g["entry_selector_hint"] == "syscall:%s:entry" % g["name"]
            assert g["exit_selector_hint"] == "syscall:%s:exit" % g["name"]
        else:
            assert g["name"] is None
            assert g["entry_selector_hint"] is None and g["exit_selector_hint"] is None
    keys = [(-g["duration_ns"]["total"], -g["entries"], -g["unmatched_exits"], g["syscall_nr"])
            for g in gs]
    assert keys == sorted(keys)
    assert col["completeness"] == ("complete" if not col["dropped"]
                                   and col["stop_reason"] == "duration" else "partial")
    assert "pointer" not in str(doc).lower()


def test_exact_counts_errors_and_hints(xprobe):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        doc, run = run_burst(xprobe, fx)
        check_accounting(doc)
        col, g = doc["collection"], groups_by_nr(doc)
        assert doc["status"] == "completed"
        assert col["completeness"] == "complete" and col["dropped"] == 0
        assert doc["inventory"]["arch"] == "x86_64"
        assert doc["inventory"]["target"]["pid"] == fx.pid
        assert col["pid_namespace_filter"] is False

        gp = g[NR["getppid"]]
        assert gp["name"] == "getppid" and gp["known"] is True
        assert (gp["entries"], gp["matched_exits"], gp["errors"]) == (N_GETPPID, N_GETPPID, 0)
        assert gp["unmatched_exits"] == 0 and gp["inflight_at_end"] == 0
        assert gp["duration_ns"]["min"] > 0
        cl = g[NR["close"]]
        assert (cl["entries"], cl["matched_exits"], cl["errors"]) == (N_CLOSE, N_CLOSE, N_CLOSE)
        op = g[NR["openat"]]
        assert (op["entries"], op["matched_exits"], op["errors"]) == (N_OPENAT, N_OPENAT,
                                                                       N_OPENAT)
        unk = g[1000]
        assert unk["known"] is False and unk["name"] is None
        assert (unk["entries"], unk["errors"]) == (N_UNKNOWN, N_UNKNOWN)
        rd = g[NR["read"]]
        assert rd["unmatched_exits"] == 1  # the "go" read began before arming
        assert rd["entries"] == 1 and rd["inflight_at_end"] == 1  # blocked at the end
        assert rd["matched_exits"] == 0 and rd["duration_ns"]["mean"] is None
        assert col["inflight_at_end"] == 1 and col["inflight_occupied"] == 1
        assert col["setup_ns"] < 500 * 10**6
        assert doc["warnings"] == []

        # the hints are ready for the next step
        v = validate_selectors(xprobe, fx.pid, gp["entry_selector_hint"],
                               gp["exit_selector_hint"], "exact")
        assert v["valid"] is True, v
    assert_released(run.progs, run.links)


def test_tiny_max_groups_counts_the_overflow(xprobe):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        doc, _ = run_burst(xprobe, fx, "--max-groups", 2)
        check_accounting(doc)
        col, g = doc["collection"], groups_by_nr(doc)
        # read (the go read's exit) and getppid (first call after it) fit
        assert sorted(g) == [NR["read"], NR["getppid"]]
        assert g[NR["getppid"]]["entries"] == N_GETPPID
        assert col["groups"] == 2 and col["group_table_utilization"] == 1.0
        # close, openat, #1000, write: counted as dropped, never silently
        assert col["group_drop_entries"] >= N_CLOSE + N_OPENAT + N_UNKNOWN + 1
        assert col["group_drop_exits"] >= N_CLOSE + N_OPENAT + N_UNKNOWN + 1
        assert col["completeness"] == "partial"
        codes = warning_codes(doc)
        assert "SYSCALL_GROUPS_FULL" in codes
        d = doc["warnings"][codes.index("SYSCALL_GROUPS_FULL")]["details"]
        assert d["group_capacity"] == 2 and d["group_drop_entries"] == col["group_drop_entries"]


def test_tiny_max_inflight_counts_the_overflow(xprobe):
    # four threads enter pause(2) and never leave: one slot, the rest dropped
    with InvProc([fixture_path("inv_syscalls"), N_GETPPID, N_CLOSE, N_OPENAT, N_UNKNOWN,
                  4]) as fx:
        doc, _ = run_burst(xprobe, fx, "--max-inflight", 1)
        check_accounting(doc)
        col, g = doc["collection"], groups_by_nr(doc)
        assert col["inflight_capacity"] == 1 and col["inflight_occupied"] == 1
        assert col["inflight_table_utilization"] == 1.0
        assert col["inflight_drops"] >= 3
        assert col["completeness"] == "partial"
        assert "INFLIGHT_TABLE_FULL" in warning_codes(doc)
        # counting still exact: entries survive a dropped start
        assert g[NR["getppid"]]["entries"] == N_GETPPID
        assert g[NR["pause"]]["entries"] == 4


def test_target_in_its_own_pid_namespace(xprobe):
    with InvProc(["unshare", "--pid", "--fork", "--kill-child",
                  fixture_path("inv_syscalls")]) as fx:
        assert fx.ready[1] == "1"  # pid 1 of its namespace
        kids = open("/proc/%d/task/%d/children" % (fx.pid, fx.pid)).read().split()
        assert len(kids) == 1
        fx.pid = int(kids[0])  # the global PID, as xprobe is given
        doc, run = run_burst(xprobe, fx)
        check_accounting(doc)
        g = groups_by_nr(doc)
        assert doc["collection"]["pid_namespace_filter"] is True
        assert g[NR["getppid"]]["entries"] == N_GETPPID
        assert g[NR["close"]]["errors"] == N_CLOSE
        assert g[1000]["entries"] == N_UNKNOWN
    assert_released(run.progs, run.links)


def test_sigterm_cancels_and_cleans_up(xprobe):
    with InvProc([fixture_path("inv_syscalls"), "loop"], ready_prefix="ready") as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 20000)
        run.wait_armed(2)
        time.sleep(0.3)
        run.signal(signal.SIGTERM)
        res = run.finish(schema_name=SCHEMA)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["status"] == "cancelled"
        assert doc["collection"]["stop_reason"] == "cancelled"
        assert doc["collection"]["completeness"] == "partial"
        assert "AGGREGATE_CANCELLED" in warning_codes(doc)
        assert groups_by_nr(doc)[NR["getppid"]]["entries"] > 1000
        check_accounting(doc)
    assert_released(run.progs, run.links)


def test_human_mode(xprobe):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 1000,
                      json_mode=False)
        run.wait_armed(2)
        fx.send("go")
        assert fx.line().startswith("done ")
        out, err = run.p.communicate(timeout=60)
        assert run.p.returncode == 0, err
        assert out.startswith("syscall inventory of pid %d:" % fx.pid)
        assert "getppid" in out and "#1000" in out
        assert err == ""


def test_target_exiting_in_the_window_is_an_error(xprobe):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 1500)
        run.wait_armed(2)
        fx.send("go")
        fx.line()
        fx.p.stdin.close()  # the fixture's final read returns: it exits
        fx.p.wait(timeout=10)
        res = run.finish(schema_name=SCHEMA)
        assert res.rc == 3, res
        assert res.code == "TARGET_EXITED"
    assert_released(run.progs, run.links)


@pytest.mark.parametrize("args,fragment", [
    (["--max-groups", 0], "--max-groups 0"),
    (["--max-groups", 10**6], "--max-groups"),
    (["--max-inflight", 0], "--max-inflight 0"),
    (["--max-inflight", 10**8], "--max-inflight"),
    (["--timeout-ms", 100], "must not exceed timeout"),
])
def test_bad_bounds_are_clear_errors(xprobe, args, fragment):
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--syscall-aggregate", "--duration-ms",
                         1000, *args)
        assert res.rc == 1, res
        assert res.code == "SESSION_LIMIT_EXCEEDED"
        assert fragment in res.error["message"]
        assert res.error["hints"]


@pytest.mark.parametrize("args,code,fragment", [
    (["--input", "/tmp/x.jsonl", "--duration-ms", 100], "INVALID_EVENT_SELECTOR", "--input"),
    (["--pid", 1, "--duration-ms", 100, "--events-out", "/tmp/x.jsonl"],
     "INVALID_EVENT_SELECTOR", "--events-out"),
    (["--pid", 1, "--duration-ms", 100, "--format", "chrome"], "INVALID_EVENT_SELECTOR",
     "--format"),
    (["--pid", 1, "--duration-ms", 100, "--from", "syscall:read:entry"],
     "INVALID_EVENT_SELECTOR", "event-pair selectors"),
    (["--pid", 1, "--duration-ms", 100, "--match", "exact"], "INVALID_EVENT_SELECTOR",
     "event-pair selectors"),
    (["--duration-ms", 100], "INVALID_EVENT_SELECTOR", "requires --pid"),
    (["--pid", 1], "SESSION_LIMIT_EXCEEDED", "--duration-ms"),
    (["--pid", 4194303, "--duration-ms", 100], "TARGET_NOT_FOUND", None),
])
def test_refused_modes_and_targets(xprobe, args, code, fragment):
    res = xprobe.run("measure", "--syscall-aggregate", *args)
    assert res.code == code, res
    assert res.rc == (3 if code == "TARGET_NOT_FOUND" else 1)
    if fragment:
        assert fragment in res.error["message"]
    assert res.error["details"].get("mode") in (None, "syscall-aggregate")


@pytest.mark.parametrize("flag", [["--frequency-hz", 99], ["--stack-depth", 8],
                                  ["--max-samples", 5], ["--max-threads", 2]])
def test_cpu_sample_flags_are_usage_errors(xprobe, flag):
    res = xprobe.run("measure", "--pid", 1, "--syscall-aggregate", "--duration-ms", 100, *flag)
    assert res.rc == 2, res
