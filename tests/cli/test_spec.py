# SPDX-License-Identifier: Apache-2.0
"""measure --spec: reading the versioned MeasurementSpec and the target
identity check that precedes any live collection.  A spec names a process
by PID and start time; a live process with another start time is a reused
PID (TARGET_REUSED, exit 3), a PID with no process is TARGET_NOT_FOUND
(exit 3).  The happy path is live collection, covered by tests/live.
"""
import json
import subprocess

import pytest

import xprobe_test

# Above the largest pid_max Linux allows (2^22), so never a live process.
NO_SUCH_PID = 4194305


def start_time_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2:].split()[19])


@pytest.fixture
def sleeper():
    p = subprocess.Popen(["sleep", "30"])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def spec_doc(pid, start_time, **over):
    doc = {
        "schema_version": "2.0",
        "name": "mmap_duration",
        "target": {"pid": pid, "process_start_time": start_time},
        "start_selector": "syscall:mmap:entry",
        "end_selector": "syscall:mmap:exit",
        "match_policy": "exact",
        "samples": 10,
        "duration_ms": None,
        "timeout_ms": 2000,
        "max_events": 1000,
    }
    doc.update(over)
    return doc


def write_spec(tmp_path, doc, name="spec.json", check=True):
    if check:
        xprobe_test.validate(doc, "measurement-spec")
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2))
    return path


def run_spec(xprobe, path, *extra):
    return xprobe.run("measure", "--spec", str(path), *extra)


def fail(r, code, rc=1):
    assert r.rc == rc, r
    assert r.code == code, r
    assert r.stderr == "", r
    return r.error


def test_missing_spec_file(xprobe, tmp_path):
    path = tmp_path / "nope.json"
    e = fail(run_spec(xprobe, path), "TRACE_EXPORT_FAILED")
    assert e["recoverable"] is False
    assert str(path) in e["message"]


def test_spec_is_a_directory(xprobe, tmp_path):
    fail(run_spec(xprobe, tmp_path), "TRACE_EXPORT_FAILED")


@pytest.mark.parametrize("text", ["", "{", "[]", "null", '{"schema_version": "2.0"} {}'],
                         ids=["empty", "truncated", "array", "null", "two-documents"])
def test_malformed_spec(xprobe, tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    e = fail(run_spec(xprobe, path), "INVALID_EVENT_SELECTOR")
    assert e["message"].startswith("invalid MeasurementSpec %s: " % path)


@pytest.mark.parametrize("over,word", [
    ({"surprise": True}, "surprise"),
    ({"target": {"pid": 1, "process_start_time": 1, "uid": 0}}, "uid"),
    ({"schema_version": "1.0"}, "schema_version"),
    ({"schema_version": 2.0}, "schema_version"),
    ({"match_policy": "sideways"}, "match_policy"),
    ({"samples": -1}, "samples"),
    ({"timeout_ms": "2000"}, "timeout_ms"),
    ({"measurement_mode": "sampled"}, "measurement_mode"),
], ids=["unknown-field", "unknown-target-field", "version-1.0", "version-number",
        "unknown-policy", "negative-samples", "string-timeout", "unknown-mode"])
def test_rejected_spec_fields(xprobe, tmp_path, over, word):
    path = write_spec(tmp_path, spec_doc(1, 1, **over), check=False)
    e = fail(run_spec(xprobe, path), "INVALID_EVENT_SELECTOR")
    assert e["message"].startswith("invalid MeasurementSpec %s: " % path)
    assert word in e["message"], e["message"]


@pytest.mark.parametrize("field", ["schema_version", "target", "start_selector",
                                   "end_selector", "match_policy", "timeout_ms"])
def test_missing_required_field(xprobe, tmp_path, field):
    doc = spec_doc(1, 1)
    del doc[field]
    path = write_spec(tmp_path, doc, check=False)
    e = fail(run_spec(xprobe, path), "INVALID_EVENT_SELECTOR")
    assert field in e["message"], e["message"]


def test_duplicate_key(xprobe, tmp_path):
    text = json.dumps(spec_doc(1, 1))
    path = tmp_path / "dup.json"
    path.write_text(text[:-1] + ', "samples": 20}')
    fail(run_spec(xprobe, path), "INVALID_EVENT_SELECTOR")


def test_exact_spec_requires_max_events(xprobe, tmp_path, sleeper):
    doc = spec_doc(sleeper.pid, start_time_of(sleeper.pid))
    del doc["max_events"]
    e = fail(run_spec(xprobe, write_spec(tmp_path, doc)), "SESSION_LIMIT_EXCEEDED")
    assert e["message"] == "exact MeasurementSpec requires max_events"


@pytest.mark.parametrize("over", [
    {"samples": 0},
    {"samples": None, "duration_ms": None},
    {"timeout_ms": 0},
    {"max_events": 0},
], ids=["samples-0", "no-bound", "timeout-0", "max-events-0"])
def test_spec_limits(xprobe, tmp_path, sleeper, over):
    doc = spec_doc(sleeper.pid, start_time_of(sleeper.pid), **over)
    fail(run_spec(xprobe, write_spec(tmp_path, doc)), "SESSION_LIMIT_EXCEEDED")


def test_target_reused(xprobe, tmp_path, sleeper):
    real = start_time_of(sleeper.pid)
    path = write_spec(tmp_path, spec_doc(sleeper.pid, real + 1))
    e = fail(run_spec(xprobe, path), "TARGET_REUSED", rc=3)
    assert e["message"] == "trace specification target identity no longer matches the process"
    assert e["details"]["pid"] == sleeper.pid
    assert e["details"]["process_start_time"] == real
    assert e["hints"]
    # the process itself is untouched
    assert sleeper.poll() is None


def test_target_reused_human_mode(xprobe, tmp_path, sleeper):
    path = write_spec(tmp_path, spec_doc(sleeper.pid, start_time_of(sleeper.pid) + 7))
    r = xprobe.run("measure", "--spec", str(path), json_mode=False)
    assert r.rc == 3, r
    assert r.stdout == ""
    assert r.stderr.startswith("TARGET_REUSED: ")


def test_target_not_found(xprobe, tmp_path):
    path = write_spec(tmp_path, spec_doc(NO_SUCH_PID, 12345))
    e = fail(run_spec(xprobe, path), "TARGET_NOT_FOUND", rc=3)
    assert e["details"]["pid"] == NO_SUCH_PID


def test_target_exited(xprobe, tmp_path):
    # a process that has come and gone: its PID names nothing now
    p = subprocess.Popen(["true"])
    pid = p.pid
    st = 0
    try:
        st = start_time_of(pid)
    except OSError:
        pass
    p.wait()
    path = write_spec(tmp_path, spec_doc(pid, st))
    r = run_spec(xprobe, path)
    assert r.rc == 3, r
    assert r.code in ("TARGET_NOT_FOUND", "TARGET_EXITED", "TARGET_REUSED"), r


def test_invalid_selector_in_spec(xprobe, tmp_path, sleeper):
    doc = spec_doc(sleeper.pid, start_time_of(sleeper.pid), start_selector="syscall:nosuch:entry")
    fail(run_spec(xprobe, write_spec(tmp_path, doc)), "INVALID_EVENT_SELECTOR")


def test_spec_flags_that_conflict(xprobe, tmp_path):
    path = write_spec(tmp_path, spec_doc(1, 1))
    for extra in (["--pid", "1"], ["--samples", "3"], ["--match", "exact"],
                  ["--input", "x.jsonl"], ["--name", "n"], ["--timeout-ms", "5"]):
        r = xprobe.run("measure", "--spec", str(path), *extra)
        assert r.rc == 2, (extra, r)


def test_skill_example_shape_is_accepted(xprobe, tmp_path):
    # The shape agents write (every optional field present, nulls
    # included) parses; against a missing PID it fails on the target.
    doc = spec_doc(NO_SUCH_PID, 1, measurement_mode="exact", max_groups=None, name=None)
    fail(run_spec(xprobe, write_spec(tmp_path, doc)), "TARGET_NOT_FOUND", rc=3)


def test_minimal_spec_is_accepted(xprobe, tmp_path):
    doc = {k: v for k, v in spec_doc(NO_SUCH_PID, 1).items()
           if k in ("schema_version", "target", "start_selector", "end_selector",
                    "match_policy", "timeout_ms", "samples", "max_events")}
    fail(run_spec(xprobe, write_spec(tmp_path, doc)), "TARGET_NOT_FOUND", rc=3)
