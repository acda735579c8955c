# SPDX-License-Identifier: Apache-2.0
"""Live measure failures: each with its stable code, exit code, details and
hints, and the capture still written (--events-out) when one exists."""
import json
import os
import stat
import subprocess

import xprobe_test
from measure_live_helpers import (Fixture, LiveRun, assert_released, fixture_path,
                                  measure_fixture, read_jsonl, start_time)


def sleeper(*args):
    return Fixture([fixture_path("live_sleeper")] + [str(a) for a in args])


def sleep_sel(exe, end):
    return "uprobe:%s:xp_fx_sleep:%s" % (exe, "return" if end else "entry")


def hot_sel(exe, end):
    return "uprobe:%s:xp_fx_hot:%s" % (exe, "return" if end else "entry")


def validate_events(path):
    events = read_jsonl(path)
    for e in events:
        xprobe_test.validate(e, "event")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    return events


def test_target_exits_mid_capture(xprobe, tmp_path):
    out = tmp_path / "exited.jsonl"
    with sleeper("--calls", 2, "--sleep-ms", 10, "--exit-after-go") as fx:
        exe = fx.ready["exe"]
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", sleep_sel(exe, 0), "--to", sleep_sel(exe, 1),
            "--match", "stack-nested", "--duration-ms", 10000, "--events-out", out], nlinks=2)
        assert res.rc == 3, res
        err = res.error
        assert err["code"] == "TARGET_EXITED"
        assert err["details"]["pid"] == fx.pid
        assert err["details"]["host_events"] == 4
        assert err["details"]["artifact_path"] == str(out)
        assert err["details"]["artifact_event_count"] == 4
        assert err["hints"]
        events = validate_events(str(out))
        assert [e["event_type"] for e in events] == ["host_function_entry", "host_function_exit"] * 2
    assert_released(run.progs, run.links)


def test_pid_reuse_through_stale_spec(xprobe, tmp_path):
    with sleeper("--calls", 1) as fx:
        exe = fx.ready["exe"]
        spec = {
            "schema_version": "2.0", "name": "stale",
            "target": {"pid": fx.pid, "process_start_time": start_time(fx.pid) - 1},
            "start_selector": sleep_sel(exe, 0), "end_selector": sleep_sel(exe, 1),
            "match_policy": "stack_nested", "samples": 1, "duration_ms": None,
            "timeout_ms": 2000, "max_events": 100,
        }
        xprobe_test.validate(spec, "measurement-spec")
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        res = xprobe.run("measure", "--spec", path)
        assert res.rc == 3
        assert res.code == "TARGET_REUSED"
        assert res.error["details"]["process_start_time"] == start_time(fx.pid)
        fx.quit()


def test_live_spec_measures(xprobe, tmp_path):
    with sleeper("--calls", 3, "--sleep-ms", 5) as fx:
        exe = fx.ready["exe"]
        spec = {
            "schema_version": "2.0", "name": "sleep-spec",
            "target": {"pid": fx.pid, "process_start_time": start_time(fx.pid)},
            "start_selector": sleep_sel(exe, 0), "end_selector": sleep_sel(exe, 1),
            "match_policy": "stack_nested", "samples": 3, "duration_ms": None,
            "timeout_ms": 20000, "max_events": 100,
        }
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        res, done, _ = measure_fixture(xprobe, fx, ["--spec", path], nlinks=2)
        assert res.rc == 0, res
        assert res.doc["measurement"]["name"] == "sleep-spec"
        assert res.doc["measurement"]["samples"]["matched"] == 3
        # the ring's counters are not JSON (the contract's collection is
        # closed): the spec's max_events shows in the human view
        assert "host" not in res.doc["collection"]
        fx.quit()


def test_duration_capture_full_is_event_rate_too_high(xprobe, tmp_path):
    out = tmp_path / "full.jsonl"
    with sleeper("--hot-ms", 3000) as fx:
        exe = fx.ready["exe"]
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", hot_sel(exe, 0), "--to", hot_sel(exe, 1),
            "--match", "stack-nested", "--duration-ms", 1000, "--max-events", 50,
            "--events-out", out], nlinks=2)
        assert res.rc == 1, res
        err = res.error
        assert err["code"] == "EVENT_RATE_TOO_HIGH"
        assert err["details"]["max_events"] == 50
        assert err["details"]["artifact_event_count"] == 50
        assert "narrow the selectors or explicitly increase max-events" in err["hints"]
        assert len(validate_events(str(out))) == 50
        fx.quit()
    assert_released(run.progs, run.links)


def test_ring_reservation_failures_are_events_dropped(xprobe):
    """A one-page ring (the XPROBE_TEST_RING_BYTES hook: 128 uprobe records)
    cannot hold what a hot target emits while the collector waits 200 ms
    before its first read (XPROBE_TEST_FIRST_READ_DELAY_MS: the losses must
    not depend on how fast this machine's consumer is), so records inside
    the capture's window are lost: EVENTS_DROPPED, never a result."""
    env = dict(os.environ, XPROBE_TEST_RING_BYTES="4096", XPROBE_TEST_FIRST_READ_DELAY_MS="200")
    with sleeper("--hot-ms", 3000) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", hot_sel(exe, 0), "--to", hot_sel(exe, 1),
            "--match", "stack-nested", "--samples", 5000, "--max-events", 100000,
            "--timeout-ms", 10000], nlinks=2, env=env)
        assert res.rc == 1, res
        err = res.error
        assert err["code"] == "EVENTS_DROPPED"
        assert err["details"]["dropped_events"] > 0
        assert err["hints"]
        fx.quit()


def test_losses_after_the_stopping_point_are_counted_not_fatal(xprobe):
    """Same tiny ring, one sample: the first pair lies in the ring's first
    records, every loss comes after the capture's stopping point."""
    env = dict(os.environ, XPROBE_TEST_RING_BYTES="4096", XPROBE_TEST_FIRST_READ_DELAY_MS="200")
    with sleeper("--hot-ms", 3000) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", hot_sel(exe, 0), "--to", hot_sel(exe, 1),
            "--match", "stack-nested", "--samples", 1, "--max-events", 100000,
            "--timeout-ms", 10000], nlinks=2, env=env)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["measurement"]["samples"]["matched"] == 1
        assert doc["collection"]["dropped_events"] == 0
        # not silent: the losses are a warning with the ring's counters
        (w,) = [w for w in doc["warnings"] if w["code"] == "HOST_RECORDS_LOST_AFTER_STOP"]
        host = w["details"]
        assert list(host) == sorted(host)
        assert host["dropped_records"] > 0
        assert host["record_capacity"] == 100000
        assert host["observed_records"] >= host["retained_records"] + host["dropped_records"]
        assert "lost %d records" % host["dropped_records"] in w["message"]
        fx.quit()


def test_samples_not_reached_within_max_events(xprobe):
    with sleeper("--calls", 10, "--sleep-ms", 1) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", sleep_sel(exe, 0), "--to", sleep_sel(exe, 1),
            "--match", "stack-nested", "--samples", 10, "--max-events", 6,
            "--timeout-ms", 10000], nlinks=2)
        assert res.rc == 1, res
        assert res.code == "EVENT_RATE_TOO_HIGH"
        assert res.error["details"]["samples"] == 10
        assert res.error["details"]["record_capacity"] == 6
        fx.quit()


def test_timeout_without_events(xprobe):
    with sleeper("--calls", 0) as fx:
        exe = fx.ready["exe"]
        res = xprobe.run("measure", "--pid", fx.pid, "--from", sleep_sel(exe, 0),
                         "--to", sleep_sel(exe, 1), "--match", "stack-nested",
                         "--samples", 3, "--timeout-ms", 600)
        assert res.rc == 1
        err = res.error
        assert err["code"] == "NO_MATCHED_SAMPLES"
        assert err["details"]["timed_out"] is True
        assert err["details"]["host_events"] == 0
        assert err["details"]["cuda_events"] == 0
        assert "timeout" in err["message"]
        fx.quit()


def test_timeout_with_pairs_is_timed_out_result(xprobe):
    with sleeper("--calls", 2, "--sleep-ms", 5) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", sleep_sel(exe, 0), "--to", sleep_sel(exe, 1),
            "--match", "stack-nested", "--samples", 10, "--timeout-ms", 2000], nlinks=2)
        assert res.rc == 0, res
        assert res.doc["status"] == "timed_out"
        assert res.doc["measurement"]["samples"]["matched"] == 2
        fx.quit()


def test_missing_tracefs_for_named_tracepoint(xprobe, tmp_path):
    empty = tmp_path / "no-tracefs"
    empty.mkdir()
    env = dict(os.environ, XPROBE_TRACEFS_ROOT=str(empty))
    with Fixture([fixture_path("live_tracepoint"), "--calls", 1]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid,
                         "--from", "tracepoint:syscalls:sys_enter_getppid",
                         "--to", "tracepoint:syscalls:sys_exit_getppid",
                         "--match", "first-after", "--samples", 1, "--timeout-ms", 2000,
                         env=env)
        assert res.rc == 1
        assert res.code == "INVALID_EVENT_SELECTOR"
        assert "tracefs is not mounted" in res.error["message"]
        assert any("mount -t tracefs" in h for h in res.error["hints"])
        # syscall selectors need no tracefs: the same target measures fine
        fx.quit()


def test_cuda_endpoint_without_cuda_in_target(xprobe):
    """Refused before anything is injected (tests/live/test_measure_cuda_agent.py
    has the details): without an NVIDIA driver here, CUPTI_NOT_AVAILABLE;
    on a machine with one, CUDA_CONTEXT_NOT_FOUND (the process maps no
    CUDA, which the Agent's ARM would refuse after the injection)."""
    with sleeper("--calls", 0) as fx:
        res = xprobe.run("measure", "--pid", fx.pid,
                         "--from", "cuda:runtime_api:cudaLaunchKernel:exit",
                         "--to", "cuda:kernel_start:name~flash.*", "--match", "exact",
                         "--samples", 1)
        assert res.rc == 1
        driver = os.path.exists("/proc/driver/nvidia")
        assert res.code == ("CUDA_CONTEXT_NOT_FOUND" if driver else "CUPTI_NOT_AVAILABLE"), res
        assert res.error["details"]["target_modified"] is False
        assert "agent_injected" not in res.error["details"]
        assert res.error["hints"]
        fx.quit()


def test_incompatible_policy_before_attach(xprobe):
    with sleeper("--calls", 0) as fx:
        exe = fx.ready["exe"]
        res = xprobe.run("measure", "--pid", fx.pid, "--from", sleep_sel(exe, 0),
                         "--to", sleep_sel(exe, 1), "--match", "exact", "--samples", 1)
        assert res.rc == 1
        assert res.code == "INVALID_CORRELATION_POLICY"
        assert "stack_nested" in res.error["details"]["compatible_policies"]
        assert res.error["details"]["recommended_policy"] == "stack-nested"
        fx.quit()


def test_validate_issue_refuses_what_only_the_lenient_correlator_accepts(xprobe):
    """measure --pid runs validate: exact on syscall:read:entry -> syscall:write:exit
    passes the correlator's lenient check but not validate's strict one, so the
    live measurement stops on validate's first issue before attaching."""
    with sleeper("--calls", 0) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--from", "syscall:read:entry",
                         "--to", "syscall:write:exit", "--match", "exact", "--samples", 1,
                         "--timeout-ms", 2000)
        assert res.rc == 1, res
        assert res.code == "INVALID_CORRELATION_POLICY"
        assert res.error["message"] == (
            "exact matching requires endpoints that share a deterministic correlation key")
        assert res.error["details"]["compatible_policies"] == ["first_after", "nearest"]
        assert res.error["details"]["recommended_policy"] == "first-after"
        assert res.error["hints"] == ["rerun validate with an explicitly compatible policy"]
        fx.quit()


def test_unknown_symbol(xprobe):
    with sleeper("--calls", 0) as fx:
        exe = fx.ready["exe"]
        res = xprobe.run("measure", "--pid", fx.pid,
                         "--from", "uprobe:%s:xp_no_such_function:entry" % exe,
                         "--to", "uprobe:%s:xp_no_such_function:return" % exe,
                         "--match", "stack-nested", "--samples", 1)
        assert res.rc == 1
        assert res.code == "SYMBOL_NOT_FOUND"
        fx.quit()


def test_target_not_found(xprobe):
    res = xprobe.run("measure", "--pid", 4194303, "--from", "syscall:mmap:entry",
                     "--to", "syscall:mmap:exit", "--match", "exact", "--samples", 1)
    assert res.rc == 3
    assert res.code == "TARGET_NOT_FOUND"


def test_events_out_jsonl_and_chrome(xprobe, tmp_path):
    jl, ch = tmp_path / "c.jsonl", tmp_path / "c.json"
    for out, fmt in ((jl, None), (ch, "chrome")):
        with sleeper("--calls", 3, "--sleep-ms", 2) as fx:
            exe = fx.ready["exe"]
            args = ["--pid", fx.pid, "--from", sleep_sel(exe, 0), "--to", sleep_sel(exe, 1),
                    "--match", "stack-nested", "--samples", 3, "--timeout-ms", 20000,
                    "--events-out", out]
            if fmt:
                args += ["--format", fmt]
            res, done, _ = measure_fixture(xprobe, fx, args, nlinks=2)
            assert res.rc == 0, res
            fx.quit()
    events = validate_events(str(jl))
    assert len(events) == 6
    assert [e["sequence"] for e in events] == list(range(6))
    doc = json.loads(ch.read_text())
    assert stat.S_IMODE(os.stat(ch).st_mode) == 0o600
    assert doc["displayTimeUnit"] == "ns"
    instants = [t for t in doc["traceEvents"] if t["ph"] == "i"]
    assert len(instants) == 6
    assert len([t for t in doc["traceEvents"] if t["ph"] == "X"]) == 3  # the pairs
    for t in instants:
        assert t["ph"] == "i" and t["cat"] == "host" and t["name"] == "xp_fx_sleep"
        assert t["ts"] == t["args"]["timestamp_ns"] // 1000


def test_human_output(xprobe):
    with sleeper("--calls", 2, "--sleep-ms", 2) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", sleep_sel(exe, 0),
                      "--to", sleep_sel(exe, 1), "--match", "stack-nested", "--samples", 2,
                      "--timeout-ms", 20000, json_mode=False)
        run.wait_armed(2)
        fx.go()
        fx.done()
        res = run.finish()
        assert res.rc == 0, res
        assert res.stdout.strip()
        fx.quit()


def test_unwritable_outputs_are_refused_before_the_window(xprobe, tmp_path):
    """A missing directory, a directory, a FIFO: refused before anything
    attaches (a 60 s window would outlast the test's timeout), with the
    words the write would have failed with.  Before, the whole live
    window ran and the measurement was lost."""
    os.mkfifo(tmp_path / "fifo")
    cases = [(tmp_path / "nodir" / "x.jsonl", "No such file or directory", None),
             (tmp_path, None, "directory"), (tmp_path / "fifo", None, "fifo")]
    with sleeper("--calls", 0) as fx:
        for flag in ("--events-out", "--report"):
            for path, words, ftype in cases:
                res = xprobe.run("measure", "--pid", fx.pid, "--from", "syscall:read:entry",
                                 "--to", "syscall:read:exit", "--match", "exact",
                                 "--duration-ms", 60000, flag, path, timeout=20)
                assert res.rc == 1 and res.error["code"] == "TRACE_EXPORT_FAILED", res
                d = res.error["details"]
                assert d["checked"] == "before measuring" and d["path"] == str(path)
                if words:
                    assert res.error["message"].endswith(words), res.error
                else:
                    assert d["file_type"] == ftype, d
        fx.quit()
