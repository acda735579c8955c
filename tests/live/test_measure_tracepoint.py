# SPDX-License-Identifier: Apache-2.0
"""Live named tracepoints (perf tracepoint links by tracefs id): identity and
time only, category in attributes, exact counts from the fixture."""
import os
import subprocess

import xprobe_test
from measure_live_helpers import Fixture, fixture_path, measure_fixture


def tp_fixture(calls):
    return Fixture([fixture_path("live_tracepoint"), "--calls", calls])


def setup_module(module):
    subprocess.run(["sh", os.path.join(xprobe_test.ROOT, "scripts", "ensure-tracefs.sh")],
                   check=False)


def check_tp(e, fx, category, name):
    assert e["source"] == "ebpf"
    assert e["event_type"] == "tracepoint"
    assert e["pid"] == fx.ready["pid"]
    assert e["tid"] == fx.ready["tid"]
    assert e["host"]["probe_kind"] == "tracepoint"
    assert e["host"]["symbol"] == name
    assert e["host"]["binary_path"] is None
    assert e["host"]["arguments"] == []
    assert e["host"]["return_value"] is None
    assert e["attributes"] == {"tracepoint_category": category}


def test_syscall_tracepoints_duration(xprobe):
    with tp_fixture(12) as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "tracepoint:syscalls:sys_enter_getppid",
            "--to", "tracepoint:syscalls:sys_exit_getppid", "--match", "first-after",
            "--duration-ms", 1500], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert done["getppid_calls"] == 12
        assert doc["measurement"]["samples"]["matched"] == 12
        assert doc["collection"]["host_events"] == 24
        assert doc["correlation"]["method"] == "first_after"
        assert [w["code"] for w in doc["warnings"]] == ["HEURISTIC_CORRELATION"]
        for pair in doc["evidence"]:
            check_tp(pair["start"], fx, "syscalls", "sys_enter_getppid")
            check_tp(pair["end"], fx, "syscalls", "sys_exit_getppid")
        fx.quit()


def test_signal_tracepoints_samples(xprobe):
    with tp_fixture(8) as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "tracepoint:signal:signal_generate",
            "--to", "tracepoint:signal:signal_deliver", "--match", "first-after",
            "--samples", 8, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert done["signals"] == 8
        assert doc["measurement"]["samples"]["matched"] == 8
        assert doc["collection"]["host_events"] == 16
        for pair in doc["evidence"]:
            check_tp(pair["start"], fx, "signal", "signal_generate")
            check_tp(pair["end"], fx, "signal", "signal_deliver")
        fx.quit()
