# SPDX-License-Identifier: Apache-2.0
"""measure --input on libxprobe sessions (docs/xtf-format.md, "Events").

Sessions are recorded here by real programs of the build:
  - tests/lib/nvtx_fixture, an unmodified NVTX v3 program, run under
    NVTX_INJECTION64_PATH=libxprobe.so with XPROBE_INSPECT_* (the session is
    written at exit); the fixture reports what it did;
  - tests/lib/crash_target, linked with libxprobe, with the sim device:
    a normal exit (atexit stop) and a SIGKILL (no stop: the rings are
    recovered from host_rings.live).
Every JSON document is validated against schemas/ by the xprobe fixture.
"""
import json
import os
import re
import signal
import subprocess

import pytest

import xprobe_test


def build_path(rel):
    return os.path.join(xprobe_test.build_dir(), rel)


def helper_env(extra):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0:handle_segv=0:handle_abort=0"
    env.update(extra)
    return env


def only_session(base):
    (inst,) = os.listdir(base)
    (leaf,) = os.listdir(os.path.join(base, inst))
    return os.path.join(base, inst, leaf)


@pytest.fixture(scope="module")
def nvtx_session(tmp_path_factory):
    """(session dir, fixture report) of the NVTX fixture under injection."""
    base = tmp_path_factory.mktemp("nvtx")
    fixture = build_path("tests/lib/nvtx_fixture")
    lib = build_path("lib/libxprobe.so")
    assert os.access(fixture, os.X_OK), "the NVTX fixture is built with the NVTX v3 headers"
    p = subprocess.run([fixture], capture_output=True, text=True, timeout=60,
                       env=helper_env({"NVTX_INJECTION64_PATH": lib,
                                       "XPROBE_INSPECT_ENABLE": "1",
                                       "XPROBE_INSPECT_OUTPUT_DIR": str(base),
                                       "XPROBE_INSPECT_ACTIVITIES": "system_profile"}))
    assert p.returncode == 0, p
    report = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    assert report["LEVELS"] == "ok", "push/pop answered by the injection"
    return only_session(str(base)), report


def crash_session(tmp_path, mode, threads=2, events=500):
    exe = build_path("tests/lib/crash_target")
    base = tmp_path / mode
    p = subprocess.run([exe, mode, str(base), str(threads), str(events)], capture_output=True,
                       text=True, timeout=60, env=helper_env({}))
    m = re.search(r"READY (\S+) (\d+) (\d+)", p.stdout)
    assert m, p
    return p, m.group(1), int(m.group(2)), int(m.group(3))


def measure(xprobe, inputs, start, end, *extra, **kw):
    args = ["measure"]
    for i in inputs:
        args += ["--input", str(i)]
    args += ["--from", start, "--to", end, "--match", "exact"]
    return xprobe.run(*(args + [str(a) for a in extra]), **kw)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_thread_ranges_pair_exactly(xprobe, nvtx_session):
    d, rep = nvtx_session
    for name in ("outer", "inner"):
        r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^%s$" % name,
                    "cuda:nvtx_range_end:name~^%s$" % name, "--samples", 1000)
        assert r.rc == 0, r
        doc = r.doc
        assert doc["measurement"]["samples"] == {
            "matched": 100, "unmatched_start": 0, "unmatched_end": 0, "ambiguous": 0,
            "dropped": 0}
        assert doc["correlation"]["method"] == "exact_nvtx_range_id"
        assert doc["clock"]["alignment"] == "host_monotonic"
        for pair in doc["evidence"]:
            s, e = pair["start"], pair["end"]
            assert s["source"] == e["source"] == "cupti_callback"
            assert s["nvtx"]["range_kind"] == "thread"
            assert s["nvtx"]["range_id"] == e["nvtx"]["range_id"]
            assert s["nvtx"]["name"] == e["nvtx"]["name"] == name
            assert s["tid"] == e["tid"] == int(rep["TID_A"])
            assert s["nvtx"]["start_tid"] == int(rep["TID_A"])
            assert s["attributes"]["nvtx_push_level"] == (0 if name == "outer" else 1)
            assert pair["latency_ns"] > 0
        ids = [p["start"]["nvtx"]["range_id"] for p in doc["evidence"]]
        assert len(set(ids)) == 100, "one key per (tid, level) occurrence"


def test_process_ranges_end_on_another_thread(xprobe, nvtx_session):
    d, rep = nvtx_session
    r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^span$",
                "cuda:nvtx_range_end:name~^span$", "--samples", 1000)
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 100
    for pair in r.doc["evidence"]:
        assert pair["start"]["nvtx"]["range_kind"] == "process"
        assert pair["start"]["tid"] == int(rep["TID_B"])
        assert pair["end"]["tid"] == int(rep["TID_MAIN"])
        assert pair["end"]["nvtx"]["start_tid"] == int(rep["TID_B"])


def test_ex_forms_and_bounded_names(xprobe, nvtx_session, tmp_path):
    d, _ = nvtx_session
    out = tmp_path / "events.jsonl"
    r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^ex_push$",
                "cuda:nvtx_range_end:name~^ex_push$", "--samples", 10, "--events-out", out)
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 1
    events = read_jsonl(out)
    names = [e["nvtx"]["name"] for e in events if e["nvtx"]]
    assert "wide" not in names  # wide Ex messages are not collected
    long = [e for e in events if e["nvtx"] and e["nvtx"]["name"].startswith("LLL")]
    assert len(long) == 2 and all(len(e["nvtx"]["name"]) == 127 and
                                  not e["nvtx"]["name_complete"] for e in long)
    marks = [e for e in events if e["event_type"] == "marker" and
             e["attributes"].get("xprobe_event") == "nvtx_mark"]
    assert sorted({m["attributes"]["name"] for m in marks}) == ["ex_mark", "tick"]
    assert len(marks) == 101
    assert all(e["pid"] == events[0]["pid"] for e in events)
    assert [e["sequence"] for e in events] == list(range(len(events)))


def test_single_xtf_file_and_chrome_export(xprobe, nvtx_session, tmp_path):
    d, _ = nvtx_session
    out = tmp_path / "trace.json"
    r = measure(xprobe, [os.path.join(d, "ntrace.pb")], "cuda:nvtx_range_start:name~^outer$",
                "cuda:nvtx_range_end:name~^outer$", "--samples", 5, "--events-out", out,
                "--format", "chrome")
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 5
    with open(out) as f:
        chrome = json.load(f)
    nvtx = [e for e in chrome["traceEvents"]
            if e.get("args", {}).get("event_type") == "nvtx_range_start"]
    assert nvtx and all(e["cat"] == "cuda.api" for e in nvtx)
    assert {e["name"] for e in nvtx} >= {"outer", "inner", "span"}


def test_sim_session_after_exit(xprobe, tmp_path):
    """Executions and sim device activity are marker events that say so."""
    p, d, events, exec_id = crash_session(tmp_path, "exit")
    assert p.returncode == 7
    out = tmp_path / "all.jsonl"
    r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^none$",
                "cuda:nvtx_range_end:name~^none$", "--samples", 1, "--events-out", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    assert r.doc["error"]["details"]["artifact_path"] == str(out)
    evs = read_jsonl(out)
    kinds = {}
    for e in evs:
        assert e["source"] == "marker" and e["event_type"] == "marker"
        k = e["attributes"]["xprobe_event"]
        kinds[k] = kinds.get(k, 0) + 1
    assert kinds["user"] == events
    assert kinds["execution_begin"] == 2 and kinds["execution_end"] == 1
    assert kinds["session_begin"] == 1 and kinds["session_end"] == 1
    dev = [e for e in evs if e["attributes"]["xprobe_event"].startswith("device_activity")]
    assert len(dev) == 2 * 2 * 2  # 2 cores, 2 records each, start and end
    for e in dev:
        assert e["attributes"]["backend"] == "sim"
        assert e["attributes"]["simulated"] is True
        assert e["attributes"]["execution_id"] == exec_id
        assert e["attributes"]["activity"].startswith("sim.")


def test_session_recovered_after_sigkill(xprobe, tmp_path):
    p, d, events, _ = crash_session(tmp_path, "kill", threads=3, events=2000)
    assert p.returncode == -signal.SIGKILL
    assert not os.path.exists(os.path.join(d, "trace_info.pb"))
    out = tmp_path / "recovered.jsonl"
    r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^none$",
                "cuda:nvtx_range_end:name~^none$", "--samples", 1, "--events-out", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    evs = read_jsonl(out)
    users = [e for e in evs if e["attributes"].get("xprobe_event") == "user"]
    assert len(users) == events
    ts = [e["timestamp_ns"] for e in evs]
    assert ts == sorted(ts)


def test_damaged_and_foreign_inputs(xprobe, nvtx_session, tmp_path):
    d, _ = nvtx_session
    with open(os.path.join(d, "ntrace.pb"), "rb") as f:
        data = f.read()
    cut = tmp_path / "cut.xtf"
    cut.write_bytes(data[:-8])
    r = measure(xprobe, [cut], "cuda:nvtx_range_start:name~^a$", "cuda:nvtx_range_end:name~^a$",
                "--samples", 1)
    assert r.code == "TRACE_EXPORT_FAILED", r
    assert "truncated" in r.doc["error"]["message"]
    assert r.doc["error"]["details"]["path"] == str(cut)
    empty = tmp_path / "notasession"
    empty.mkdir()
    r = measure(xprobe, [empty], "cuda:nvtx_range_start:name~^a$",
                "cuda:nvtx_range_end:name~^a$", "--samples", 1)
    assert r.code == "TRACE_EXPORT_FAILED", r
    assert "not a libxprobe session directory" in r.doc["error"]["message"]


def test_event_bound(xprobe, nvtx_session):
    d, _ = nvtx_session
    r = measure(xprobe, [d], "cuda:nvtx_range_start:name~^outer$",
                "cuda:nvtx_range_end:name~^outer$", "--samples", 5, "--max-events", 50)
    assert r.code == "EVENT_RATE_TOO_HIGH", r
    assert r.doc["error"]["details"]["max_events"] == 50
    assert r.doc["error"]["details"]["observed_events"] > 50
