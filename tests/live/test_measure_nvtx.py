# SPDX-License-Identifier: Apache-2.0
"""Live NVTX measurements through the Agent (issue 10, sections 1 and 4).

The target is tests/fixtures/live_nvtx, an ordinary NVTX program started
under NVTX_INJECTION64_PATH=<build>/lib/libxprobe.so; measure connects to
its Agent, HELLO (NVTX routed?), ARM with the endpoints' name filter,
SNAPSHOT on a timer, STOP.  Every figure checked comes from the fixture's
own account (its done line): the ranges of the measured name it made, the
ranges of other names (which the Agent's hot-path filter must reject: the
observed count proves they were never recorded), its threads, and the
shortest and longest interval it timed around each push/pop.  Every
document is validated against schemas/ and the reference schemas (the
xprobe fixture and LiveRun do it).
"""
import json
import os
import signal
import socket
import subprocess
import time

from agent_helpers import (STEP, NvtxFixture, agent_hello, libxprobe, measure_armed,
                           nvtx_env, nvtx_sel, socket_path, wait_state)
from measure_live_helpers import LiveRun, events_of, read_jsonl
from proc_helpers import NOBODY, other_user_dir, other_user_xprobe

import xprobe_test

US = 1000


def exact(*extra):
    return ["--match", "exact"] + [str(a) for a in extra]


def check_latency(doc, done, work_us):
    """Every pair lies inside the interval the fixture timed around it and
    lasts at least the sleep inside it."""
    lat = doc["measurement"]["latency_ns"]
    assert lat["min"] >= work_us * US, (lat, done)
    assert lat["max"] <= done["max_ns"], (lat, done)
    for pair in doc["evidence"]:
        assert work_us * US <= pair["latency_ns"] <= done["max_ns"]
        assert pair["end"]["timestamp_ns"] - pair["start"]["timestamp_ns"] == pair["latency_ns"]


def test_thread_ranges_samples(xprobe):
    with NvtxFixture("thread", iters=60) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP + exact("--samples", 20))
        assert res.rc == 0, res
        d = res.doc
        assert d["status"] == "completed"
        assert d["measurement"]["samples"] == {"matched": 20, "unmatched_start": 0,
                                               "unmatched_end": 0, "ambiguous": 0, "dropped": 0}
        assert d["correlation"] == {"method": "exact_nvtx_range_id", "confidence": "exact",
                                    "score": 1.0}
        assert d["clock"]["alignment"] == "host_monotonic"
        check_latency(d, done, 200)
        col = d["collection"]
        # cut at the 20th pair: the capture holds exactly its 40 events
        assert col["host_events"] == 0 and col["cuda_events"] == 40, col
        cupti = col["cupti"]
        assert cupti["record_capacity"] == 100000 and cupti["dropped_records"] == 0
        assert cupti["retained_records"] == 40
        assert 40 <= cupti["observed_records"] <= 2 * done["ranges"]
        for pair in d["evidence"]:
            for side in ("start", "end"):
                e = pair[side]
                assert e["pid"] == fx.pid and e["tid"] == done["tid_main"]
                assert e["nvtx"]["name"] == "step" and e["nvtx"]["name_complete"] is True
                assert e["nvtx"]["range_kind"] == "thread"
                assert e["clock_domain"] == "host_monotonic"
            assert pair["start"]["event_type"] == "nvtx_range_start"
            assert pair["end"]["event_type"] == "nvtx_range_end"
            assert pair["start"]["nvtx"]["range_id"] == pair["end"]["nvtx"]["range_id"]
        assert done["levels_ok"] is True
        fx.quit()


def test_duration_counts_and_rejecting_filter(xprobe, tmp_path):
    """A duration capture pairs every "step" range the fixture made, and
    nothing else: 150 ranges of other names ("stepper", "prestep",
    "other") never reach the capture, and the Agent never even observed
    them (its filter runs before a timestamp is read)."""
    out = tmp_path / "nvtx.jsonl"
    with NvtxFixture("thread", iters=50) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1500, "--events-out", out))
        assert res.rc == 0, res
        assert done["ranges"] == 50 and done["rejected"] == 150
        d = res.doc
        assert d["measurement"]["samples"]["matched"] == done["ranges"]
        assert d["measurement"]["samples"]["unmatched_start"] == 0
        assert d["measurement"]["samples"]["unmatched_end"] == 0
        cupti = d["collection"]["cupti"]
        assert cupti["observed_records"] == 2 * done["ranges"], cupti
        assert cupti["retained_records"] == 2 * done["ranges"]
        check_latency(d, done, 200)
        events = read_jsonl(out)
        assert len(events) == 2 * done["ranges"]
        assert {e["nvtx"]["name"] for e in events} == {"step"}
        fx.quit()


def test_nested_ranges_on_two_threads(xprobe):
    """"step" at push level 1 inside "outer", on two threads at once: each
    pair is one thread's range (nesting by thread and level)."""
    with NvtxFixture("nested", iters=40, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1500))
        assert res.rc == 0, res
        d = res.doc
        assert done["ranges"] == 80 and done["levels_ok"] is True
        assert d["measurement"]["samples"]["matched"] == 80
        assert d["collection"]["cupti"]["observed_records"] == 160  # "outer" rejected
        tids = set()
        for pair in d["evidence"]:
            assert pair["start"]["tid"] == pair["end"]["tid"]
            tids.add(pair["start"]["tid"])
        assert len(tids) == 2
        check_latency(d, done, 300)
        fx.quit()


def test_process_ranges_end_on_another_thread(xprobe):
    with NvtxFixture("process", iters=30, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1500))
        assert res.rc == 0, res
        d = res.doc
        assert done["ranges"] == 30 and done["levels_ok"] is True
        assert d["measurement"]["samples"]["matched"] == 30
        assert d["correlation"]["method"] == "exact_nvtx_range_id"
        for pair in d["evidence"]:
            s, e = pair["start"], pair["end"]
            assert s["tid"] == done["tid_b"] and e["tid"] == done["tid_main"]
            assert s["nvtx"]["range_kind"] == e["nvtx"]["range_kind"] == "process"
            assert s["nvtx"]["start_tid"] == e["nvtx"]["start_tid"] == done["tid_b"]
            assert s["nvtx"]["range_id"] == e["nvtx"]["range_id"]
        check_latency(d, done, 300)
        fx.quit()


def test_long_names_are_bounded_and_filtered(xprobe):
    """A 200-byte name: an exact ^step$ filter rejects it (only the 30
    "step" ranges are observed), a prefix filter on it admits it and its
    events carry the first 127 bytes with name_complete false."""
    with NvtxFixture("long", iters=30, work_us=100) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1200))
        assert res.rc == 0, res
        assert res.doc["measurement"]["samples"]["matched"] == done["ranges"] == 30
        assert res.doc["collection"]["cupti"]["observed_records"] == 60
        prefix = "step" + "x" * 20
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid,
                                               "--from", nvtx_sel("start", "^" + prefix),
                                               "--to", nvtx_sel("end", "^" + prefix)] +
                                  exact("--duration-ms", 1200))
        assert res.rc == 0, res
        d = res.doc
        assert d["measurement"]["samples"]["matched"] == 30
        assert d["collection"]["cupti"]["observed_records"] == 60
        for pair in d["evidence"]:
            for side in ("start", "end"):
                n = pair[side]["nvtx"]
                assert n["name"] == ("step" + "x" * 192 + "step")[:127]
                assert n["name_complete"] is False
        fx.quit()


def test_ex_forms_with_ascii_messages(xprobe):
    """nvtxRangePushEx / nvtxRangeStartEx with ASCII messages are measured
    (a thread and a process range each); the same calls with a wide
    message are not collected, so never observed."""
    with NvtxFixture("ex", iters=20, work_us=150) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1500))
        assert res.rc == 0, res
        d = res.doc
        assert done["ranges"] == 40 and done["rejected"] == 40
        assert d["measurement"]["samples"]["matched"] == 40
        assert d["collection"]["cupti"]["observed_records"] == 80
        kinds = [p["start"]["nvtx"]["range_kind"] for p in d["evidence"]]
        assert kinds.count("thread") == 20 and kinds.count("process") == 20
        check_latency(d, done, 150)
        fx.quit()


def test_timeout_without_ranges(xprobe):
    """Nothing happens in the target: the timeout answers
    NO_MATCHED_SAMPLES with the counters, and the Agent is idle after."""
    with NvtxFixture("thread", iters=5) as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact", "--samples", 5,
                       "--timeout-ms", 300)
        assert r.rc == 1 and r.code == "NO_MATCHED_SAMPLES", r
        det = r.error["details"]
        assert det["timed_out"] is True and det["timeout_ms"] == 300
        assert det["cuda_events"] == 0 and det["host_events"] == 0
        assert agent_hello(fx.pid)["state"] == "idle"
        fx.quit()


def test_max_events_overflow_is_event_rate_too_high(xprobe, tmp_path):
    """A duration capture that fills --max-events fails, names its counters
    and keeps the capture in the artifact; the drops are visible."""
    out = tmp_path / "full.jsonl"
    with NvtxFixture("burst", iters=5000) as fx:
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--duration-ms", 1500, "--max-events", 100,
                                        "--events-out", out))
        assert res.rc == 1, res
        e = res.error
        assert e["code"] == "EVENT_RATE_TOO_HIGH", e
        det = e["details"]
        assert det["record_capacity"] == 100 and det["max_events"] == 100
        assert det["cuda_events"] == 100 and det["host_events"] == 0
        assert det["observed_records"] > 100
        assert det["dropped_events"] > 0
        assert det["artifact_event_count"] == 100
        assert len(read_jsonl(out)) == 100
        assert done["ranges"] == 5000
        # the Agent is idle again and serves the next measurement
        wait_state(fx.pid, "idle")
        fx.quit()


def test_sigkill_mid_capture_then_measure_again(xprobe):
    """A killed xprobe's capture is disarmed by the Agent (it sees the
    closed connection) and the next measure arms and completes."""
    with NvtxFixture("thread", iters=30) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, *STEP, *exact("--samples", 100000,
                                                              "--timeout-ms", 30000))
        wait_state(fx.pid, "active", run=run)
        run.p.send_signal(signal.SIGKILL)
        run.p.wait()
        t0 = time.monotonic()
        wait_state(fx.pid, "idle", timeout=1.0)
        assert time.monotonic() - t0 < 0.5
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP + exact("--samples", 10))
        assert res.rc == 0, res
        assert res.doc["measurement"]["samples"]["matched"] == 10
        fx.quit()


def test_mixed_host_and_nvtx(xprobe, tmp_path):
    """A uprobe on the request handler's entry to the end of the "step"
    range it opens, first-after: the eBPF and Agent sources armed, merged
    by timestamp into one capture, correlated.  Each latency covers the
    handler's gap before the range and the range itself."""
    out = tmp_path / "mixed.jsonl"
    with NvtxFixture("mixed", iters=40, work_us=300, extra=["--gap-us", "200"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_handler:entry" % exe,
                      "--to", nvtx_sel("end"), "--match", "first-after", "--samples", 25,
                      "--events-out", out)
        run.wait_armed(1)
        wait_state(fx.pid, "active", run=run)
        fx.go()
        done = fx.done()
        res = run.finish()
        assert res.rc == 0, res
        d = res.doc
        assert d["measurement"]["samples"]["matched"] == 25
        assert d["correlation"]["method"] == "first_after"
        col = d["collection"]
        # cut at the 25th pair: 25 handler entries, and the NVTX events up
        # to the 25th "step" end (25 starts and 25 ends)
        assert col["host_events"] == 25 and col["cuda_events"] == 50, col
        assert col["cupti"]["retained_records"] == 50
        for pair in d["evidence"]:
            assert pair["start"]["source"] == "ebpf"
            assert pair["start"]["host"]["symbol"] == "xp_fx_handler"
            assert pair["end"]["event_type"] == "nvtx_range_end"
            assert pair["end"]["nvtx"]["name"] == "step"
            assert pair["start"]["tid"] == pair["end"]["tid"] == done["tid_main"]
            assert 500 * US <= pair["latency_ns"] <= done["max_ns"] + 5000 * US
        codes = [w["code"] for w in d["warnings"]]
        assert "HEURISTIC_CORRELATION" in codes
        events = read_jsonl(out)
        assert [e["sequence"] for e in events] == list(range(75))
        ts = [e["timestamp_ns"] for e in events]
        assert ts == sorted(ts)
        assert {e["source"] for e in events} == {"ebpf", "cupti_callback"}
        fx.quit()


def test_explicit_cupti_socket(xprobe):
    """--cupti-socket names the socket to connect to; one that is not
    there is CUPTI_AGENT_NOT_LOADED naming it, never ignored."""
    with NvtxFixture("thread", iters=30) as fx:
        path = socket_path(fx.pid)
        res, done = measure_armed(xprobe, fx, ["--pid", fx.pid] + STEP +
                                  exact("--samples", 5, "--cupti-socket", path))
        assert res.rc == 0, res
        assert res.doc["measurement"]["samples"]["matched"] == 5
        r = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact", "--samples", 5,
                       "--cupti-socket", path + ".missing")
        assert r.rc == 1 and r.code == "CUPTI_AGENT_NOT_LOADED", r
        assert path + ".missing" in json.dumps(r.error)
        fx.quit()


def test_startup_required_names_nvtx_injection64_path(xprobe):
    """No Agent in the target: validate says startup_required (valid:
    false) and measure refuses with the same issue and the hint."""
    with NvtxFixture("thread", iters=5, inject=False) as fx:
        v = xprobe.run("validate", "--pid", fx.pid, *STEP, "--match", "exact")
        assert v.rc == 0 and v.doc["valid"] is False, v
        assert v.doc["requirements"]["agent_activation"] == "startup_required"
        r = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact", "--samples", 5)
        assert r.rc == 1 and r.code == "CUPTI_AGENT_NOT_LOADED", r
        want = "NVTX_INJECTION64_PATH=%s" % os.path.realpath(libxprobe())
        assert want in r.error["message"]
        assert any(want in h for h in r.error["hints"])
        fx.quit()


def test_agent_mapped_without_nvtx_routing(xprobe):
    """libxprobe preloaded but NVTX not routed to it: validate answers
    already_loaded (it cannot know more without connecting); measure
    re-checks at HELLO and refuses with CUPTI_NOT_AVAILABLE (the contract's
    code; before: CUPTI_AGENT_NOT_LOADED, though the Agent is loaded)."""
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    env["LD_PRELOAD"] = libxprobe()
    with NvtxFixture("thread", iters=5, env=env) as fx:
        hello = agent_hello(fx.pid)
        assert not hello["features"] & 1  # not routed
        v = xprobe.run("validate", "--pid", fx.pid, *STEP, "--match", "exact")
        assert v.rc == 0 and v.doc["valid"] is True, v
        assert v.doc["requirements"]["agent_activation"] == "already_loaded"
        r = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact", "--samples", 5)
        assert r.rc == 1 and r.code == "CUPTI_NOT_AVAILABLE", r
        assert any("NVTX_INJECTION64_PATH" in h for h in r.error["hints"])
        assert any("cannot retrofit an initialized NVTX dispatch table" in h
                   for h in r.error["hints"])
        fx.quit()


def test_validate_already_loaded(xprobe):
    with NvtxFixture("thread", iters=5) as fx:
        v = xprobe.run("validate", "--pid", fx.pid, *STEP, "--match", "exact")
        assert v.rc == 0 and v.doc["valid"] is True, v
        req = v.doc["requirements"]
        assert req["agent_activation"] == "already_loaded" and req["target_mutation"] is False
        assert req["needs_nvtx"] and req["needs_cupti_callback"]
        assert v.doc["start"]["collectable"] is True and v.doc["start"]["source"] == "cuda"
        assert v.doc["issues"] == [] and v.doc["warnings"] == []
        fx.quit()


PLANT = ("import socket,sys,time\n"
         "s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
         "s.bind(sys.argv[1]);s.listen(4);print('up',flush=True)\n"
         "while True:\n c,_=s.accept();time.sleep(5)\n")


def planted_socket_refusal(xprobe, fx, d, user):
    """measure --cupti-socket to a socket a process of @user serves."""
    path = os.path.join(d, "planted-%s.sock" % user)
    kw = {} if user == 0 else {"user": user, "group": user, "extra_groups": []}
    server = subprocess.Popen(["/usr/bin/python3", "-c", PLANT, path], stdout=subprocess.PIPE,
                              text=True, cwd=d, **kw)
    try:
        assert server.stdout.readline().strip() == "up"
        r = xprobe.run("measure", "--pid", fx.pid, *STEP, "--match", "exact",
                       "--samples", 5, "--cupti-socket", path)
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
    assert r.rc == 4 and r.code == "PERMISSION_DENIED", r
    assert r.error["details"]["socket_path"] == path
    return r.error


def test_socket_of_another_uid_is_refused(xprobe):
    """Sockets named with --cupti-socket that are not the target's Agent:
    one owned by another user is refused before connecting, one owned by
    the target's user (root) but served by another process is refused by
    the peer check, before any request (PERMISSION_DENIED, exit 4)."""
    with NvtxFixture("thread", iters=5) as fx, other_user_dir() as d:
        os.chmod(d, 0o1777)
        e = planted_socket_refusal(xprobe, fx, d, NOBODY)
        assert "owned by uid %d, not by the target's uid 0" % NOBODY in e["message"], e
        e = planted_socket_refusal(xprobe, fx, d, 0)
        assert "PID %d" % fx.pid in e["message"], e
        assert "not by the target" in e["message"] and e["details"]["peer_pid"] != fx.pid, e
        assert agent_hello(fx.pid)["state"] == "idle"
        fx.quit()


def test_other_user_cannot_use_the_agent(xprobe):
    """xprobe run by another user against root's NVTX target: refused
    (reading the target already is), and the Agent never armed."""
    with NvtxFixture("thread", iters=5) as fx, other_user_xprobe(xprobe) as (xp, _):
        r = xp.run("measure", "--pid", fx.pid, *STEP, "--match", "exact", "--samples", 5,
                   user=NOBODY)
        assert r.rc == 4 and r.code == "PERMISSION_DENIED", r
        assert agent_hello(fx.pid)["state"] == "idle"
        fx.quit()
