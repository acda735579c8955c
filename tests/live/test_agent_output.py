# SPDX-License-Identifier: Apache-2.0
"""Saved Agent captures measured afterwards (issue 10 section 3: one
decoder serves the socket, .xtf files and a saved capture given to
`measure --input`).

tests/fixtures/live_nvtx, an ordinary NVTX program, runs under
NVTX_INJECTION64_PATH=<build>/lib/libxprobe.so with
XPROBE_AGENT_OUTPUT=<tmp>/cap.xpagent: libxprobe records every NVTX range
(no name rule) and writes the capture when the fixture exits.  Then
`xprobe measure --input` pairs the file's ranges with the same selectors
a live measurement uses; every figure checked comes from the fixture's
own account (its done line), and every document is validated against
schemas/ (the xprobe fixture does it).
"""
import os
import signal
import struct

from agent_helpers import STEP, NvtxFixture, agent_hello, nvtx_env, wait_state
from measure_live_helpers import LiveRun, read_jsonl

HEADER = 424  # struct xprobe_agent_capfile
US = 1000


def recorded(mode, path, iters=40, work_us=200, extra_env=None, kill=None):
    """Run live_nvtx once with its capture saved at @path; its done line."""
    env = nvtx_env({"XPROBE_AGENT_OUTPUT": str(path)})
    env.update(extra_env or {})
    with NvtxFixture(mode, iters=iters, work_us=work_us, env=env) as fx:
        fx.go()
        done = fx.done()
        done["pid"] = fx.pid
        if kill:
            fx.p.send_signal(kill)
            assert fx.p.wait(timeout=10) == -kill
        else:
            fx.quit()
            assert fx.p.returncode == 0
    return done


def measure_file(xprobe, *paths, samples=None, extra=()):
    args = ["measure"]
    for p in paths:
        args += ["--input", p]
    args += STEP + ["--match", "exact"]
    args += ["--samples", samples] if samples else ["--duration-ms", 1000]
    return xprobe.run(*(args + list(extra)))


def check_pairs(doc, done, work_us, tid_start, tid_end):
    lat = doc["measurement"]["latency_ns"]
    assert lat["min"] >= work_us * US and lat["max"] <= done["max_ns"], (lat, done)
    for pair in doc["evidence"]:
        assert work_us * US <= pair["latency_ns"] <= done["max_ns"]
        for side in ("start", "end"):
            e = pair[side]
            assert e["pid"] == done["pid"]
            assert e["nvtx"]["name"] == "step" and e["nvtx"]["name_complete"] is True
            assert e["clock_domain"] == "host_monotonic"
        assert pair["start"]["tid"] == tid_start and pair["end"]["tid"] == tid_end
        assert pair["start"]["nvtx"]["range_id"] == pair["end"]["nvtx"]["range_id"]


def test_thread_ranges_from_a_saved_capture(xprobe, tmp_path):
    """Every range the fixture made is in the file (the rejected names
    too: no name rule); measure --input pairs exactly the "step" ones."""
    cap = tmp_path / "cap.xpagent"
    done = recorded("thread", cap, iters=40)
    assert done["ranges"] == 40 and done["rejected"] == 120
    st = os.stat(cap)
    assert st.st_mode & 0o7777 == 0o600
    assert [n for n in os.listdir(tmp_path) if ".tmp." in n] == []
    res = measure_file(xprobe, cap, samples=done["ranges"])
    assert res.rc == 0, res
    d = res.doc
    assert d["status"] == "completed"
    assert d["measurement"]["samples"] == {"matched": 40, "unmatched_start": 0,
                                           "unmatched_end": 0, "ambiguous": 0, "dropped": 0}
    assert d["correlation"]["method"] == "exact_nvtx_range_id"
    assert d["clock"]["alignment"] == "host_monotonic"
    col = d["collection"]
    total = 2 * (done["ranges"] + done["rejected"])
    assert col["cuda_events"] == total and col["host_events"] == 0
    assert col["dropped_events"] == 0
    assert col["cupti"] == {"record_capacity": 100000, "observed_records": total,
                            "retained_records": total, "dropped_records": 0,
                            "buffer_utilization": total / 100000}
    check_pairs(d, done, 200, done["tid_main"], done["tid_main"])
    # the samples bound of a completed input: the first N pairs
    res = measure_file(xprobe, cap, samples=10)
    assert res.rc == 0, res
    assert res.doc["measurement"]["samples"]["matched"] == 10


def test_process_ranges_from_a_saved_capture(xprobe, tmp_path):
    """Process ranges started on thread B and ended on main: each pair
    carries both threads and start_tid."""
    cap = tmp_path / "cap.xpagent"
    done = recorded("process", cap, iters=30, work_us=300)
    res = measure_file(xprobe, cap, samples=done["ranges"])
    assert res.rc == 0, res
    assert res.doc["measurement"]["samples"]["matched"] == 30
    check_pairs(res.doc, done, 300, done["tid_b"], done["tid_main"])
    for pair in res.doc["evidence"]:
        assert pair["end"]["nvtx"]["start_tid"] == done["tid_b"]
        assert pair["start"]["nvtx"]["range_kind"] == "process"


def test_written_on_sigterm(xprobe, tmp_path):
    """A fixture ended by SIGTERM (default action) still leaves its
    capture: the crash handlers write it before the signal kills it."""
    cap = tmp_path / "cap.xpagent"
    done = recorded("thread", cap, iters=20, kill=signal.SIGTERM)
    with open(cap, "rb") as f:
        flags, sig = struct.unpack_from("<II", f.read(32), 24)
    assert (flags, sig) == (1, signal.SIGTERM)
    res = measure_file(xprobe, cap, samples=done["ranges"])
    assert res.rc == 0, res
    assert res.doc["measurement"]["samples"]["matched"] == 20


def test_full_capture_is_event_rate_too_high(xprobe, tmp_path):
    """XPROBE_AGENT_MAX_RECORDS=50: the file is a full capture; measured,
    it fails as a full live Agent capture does, with its own counters."""
    cap = tmp_path / "cap.xpagent"
    out = tmp_path / "full.jsonl"
    recorded("thread", cap, iters=40, extra_env={"XPROBE_AGENT_MAX_RECORDS": "50"})
    res = measure_file(xprobe, cap, samples=40, extra=("--events-out", out))
    assert res.rc == 1, res
    e = res.error
    assert e["code"] == "EVENT_RATE_TOO_HIGH", e
    det = e["details"]
    # 25 ranges kept; the 135 pushes after it dropped (their pops never admitted)
    assert det["record_capacity"] == 50 and det["retained_records"] == 50
    assert det["dropped_records"] == 135 and det["observed_records"] == 185
    assert det["artifact_event_count"] == 50
    assert len(read_jsonl(out)) == 50


def test_mixed_targets_refused(xprobe, tmp_path):
    """Repeated inputs are merged after target-PID checks: two processes'
    captures, or a capture and another process's Event JSONL, are a
    mixed capture."""
    a, b = tmp_path / "a.xpagent", tmp_path / "b.xpagent"
    da = recorded("thread", a, iters=5)
    db = recorded("thread", b, iters=5)
    res = measure_file(xprobe, a, b, samples=5)
    assert res.rc == 1 and res.code == "TRACE_EXPORT_FAILED", res
    assert "mixes target PIDs %d and %d" % (da["pid"], db["pid"]) in res.error["message"]
    # b's events as Event JSONL (an artifact of measuring b alone)
    jl = tmp_path / "b.jsonl"
    res = measure_file(xprobe, b, samples=5, extra=("--events-out", jl))
    assert res.rc == 0, res
    res = measure_file(xprobe, a, jl, samples=5)
    assert res.rc == 1 and res.code == "TRACE_EXPORT_FAILED", res
    assert "mixes target PIDs" in res.error["message"]
    # the same process's capture and its own artifact merge
    res = measure_file(xprobe, b, jl, samples=5)
    assert res.rc == 0, res


def test_cut_file_refused(xprobe, tmp_path):
    cap = tmp_path / "cap.xpagent"
    recorded("thread", cap, iters=5)
    data = cap.read_bytes()
    cut = tmp_path / "cut.xpagent"
    cut.write_bytes(data[:-8])
    res = measure_file(xprobe, cut, samples=5)
    assert res.rc == 1 and res.code == "TRACE_EXPORT_FAILED", res
    assert res.error["details"]["field"] == "file_size"
    assert res.error["details"]["path"] == str(cut)
    assert res.error["message"].startswith("failed to decode %s: " % cut)
    short = tmp_path / "short.xpagent"
    short.write_bytes(data[:HEADER - 1])
    res = measure_file(xprobe, short, samples=5)
    assert res.rc == 1 and res.error["details"]["field"] == "size", res


def test_live_measure_refused_while_saving(xprobe, tmp_path):
    """While XPROBE_AGENT_OUTPUT records, the one published capture is
    taken: a live measure of the same process is refused (one measurement
    at a time), saying why; the saved capture is unharmed."""
    cap = tmp_path / "cap.xpagent"
    env = nvtx_env({"XPROBE_AGENT_OUTPUT": str(cap)})
    with NvtxFixture("thread", iters=10, env=env) as fx:
        assert agent_hello(fx.pid)["state"] == "idle"
        res = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact",
                         "--samples", 5, "--timeout-ms", 5000)
        assert res.rc != 0 and res.code == "CUPTI_NOT_AVAILABLE", res
        assert "XPROBE_AGENT_OUTPUT" in res.error["message"], res.error
        fx.go()
        done = fx.done()
        done["pid"] = fx.pid
        fx.quit()
    res = measure_file(xprobe, cap, samples=10)
    assert res.rc == 0, res
    assert res.doc["measurement"]["samples"]["matched"] == done["ranges"] == 10
