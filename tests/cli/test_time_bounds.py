# SPDX-License-Identifier: Apache-2.0
"""Millisecond bounds whose nanoseconds do not fit are refused, never
wrapped (issue 9, section 2, "Overflow in bounds").

--timeout-ms and --duration-ms, and a MeasurementSpec's timeout_ms and
duration_ms, are turned into nanoseconds and added to CLOCK_MONOTONIC.
18446744073709551615 ms used to time out at once and 18446744073710 ms to
complete in 0.02 s.  The bound is XPC_MS_MAX (common/parse.h): the
nanoseconds fit in an int64_t.  A flag over it is a syntax error (exit 2,
usage on stderr) in every source mode; a spec field over it is the spec
decoder's out-of-range error (INVALID_EVENT_SELECTOR, exit 1), as for a
pid over 2^32.
"""
import json

import pytest

import xpcap
import xprobe_test

MS_MAX = 9223372036854  # (2^63 - 1) // 10^6
OVER = [str(MS_MAX + 1), "18446744073710", "18446744073709551615"]

PAIR = ["--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact"]


def small_capture(tmp_path):
    path = tmp_path / "cap.jsonl"
    xpcap.write_jsonl(path, [xpcap.syscall_entry(1, 100), xpcap.syscall_exit(1, 250)])
    return path


def modes(tmp_path):
    """argv of every source mode that takes the time bounds."""
    cap = str(small_capture(tmp_path))
    return {
        "live": ["measure", "--pid", "1"] + PAIR + ["--samples", "1"],
        "input": ["measure", "--input", cap] + PAIR + ["--samples", "1"],
        "cpu-sample": ["measure", "--pid", "1", "--cpu-sample"],
        "syscall-aggregate": ["measure", "--pid", "1", "--syscall-aggregate"],
    }


@pytest.mark.parametrize("mode", ["live", "input", "cpu-sample", "syscall-aggregate"])
@pytest.mark.parametrize("flag", ["--timeout-ms", "--duration-ms"])
@pytest.mark.parametrize("value", OVER)
def test_flag_whose_nanoseconds_overflow_is_a_syntax_error(xprobe, tmp_path, mode, flag,
                                                           value):
    argv = modes(tmp_path)[mode] + [flag, value]
    if flag == "--timeout-ms" and mode in ("cpu-sample", "syscall-aggregate"):
        argv += ["--duration-ms", "10"]
    r = xprobe.run(*argv)
    assert r.rc == 2, r
    assert r.stdout == ""
    assert "invalid value '%s' for '%s'" % (value, flag) in r.stderr, r
    assert "at most %d milliseconds" % MS_MAX in r.stderr, r


@pytest.mark.parametrize("flag", ["--timeout-ms", "--duration-ms"])
def test_largest_bound_is_accepted_and_not_wrapped(xprobe, tmp_path, flag):
    # --input: the window from the first selected event covers the pair.
    argv = modes(tmp_path)["input"]
    r = xprobe.run(*argv, flag, str(MS_MAX))
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 1
    assert r.doc["measurement"]["latency_ns"]["max"] == 150


def test_duration_only_at_the_bound_pairs_everything(xprobe, tmp_path):
    path = tmp_path / "far.jsonl"
    far = MS_MAX * 1000000 - 1000  # last pair just inside the window
    xpcap.write_jsonl(path, [xpcap.syscall_entry(1, 0), xpcap.syscall_exit(1, 10),
                             xpcap.syscall_entry(1, far), xpcap.syscall_exit(1, far + 10)])
    r = xprobe.run("measure", "--input", str(path), *PAIR, "--duration-ms", str(MS_MAX))
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 2


def spec(pid=1, **over):
    doc = {
        "schema_version": "2.0",
        "name": None,
        "target": {"pid": pid, "process_start_time": 1},
        "start_selector": "syscall:mmap:entry",
        "end_selector": "syscall:mmap:exit",
        "match_policy": "exact",
        "samples": 1,
        "duration_ms": None,
        "timeout_ms": 1000,
        "max_events": 100,
    }
    doc.update(over)
    return doc


@pytest.mark.parametrize("field", ["timeout_ms", "duration_ms"])
@pytest.mark.parametrize("value", [MS_MAX + 1, 18446744073710, 18446744073709551615])
def test_spec_field_whose_nanoseconds_overflow_is_out_of_range(xprobe, tmp_path, field,
                                                               value):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec(**{field: value})))
    with pytest.raises(Exception):
        xprobe_test.validate(spec(**{field: value}), "measurement-spec")
    r = xprobe.run("measure", "--spec", str(path))
    assert r.rc == 1, r
    assert r.code == "INVALID_EVENT_SELECTOR", r
    e = r.error
    assert e["details"]["field"] == field
    assert e["message"] == (
        "invalid MeasurementSpec %s: %s: %d is out of range for milliseconds whose "
        "nanoseconds fit in a signed 64-bit integer" % (path, field, value))


@pytest.mark.parametrize("field", ["timeout_ms", "duration_ms"])
def test_spec_field_at_the_bound_is_decoded(xprobe, tmp_path, field):
    # Decoded: the run goes on to the target check (no such process).
    doc = spec(pid=4194305, **{field: MS_MAX})
    xprobe_test.validate(doc, "measurement-spec")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    r = xprobe.run("measure", "--spec", str(path))
    assert r.rc == 3, r
    assert r.code == "TARGET_NOT_FOUND", r
