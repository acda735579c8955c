# SPDX-License-Identifier: Apache-2.0
"""Live uprobe measurements: a function of the executable (by symbol and by
+0x offset), a function of a shared library, a C++ member function by its
full signature.  Expected figures come from the fixtures."""
import os

from measure_live_helpers import (Fixture, assert_released, events_of, fixture_path,
                                  measure_fixture)


def sleeper(calls, sleep_ms, *extra):
    return Fixture([fixture_path("live_sleeper"), "--calls", calls, "--sleep-ms", sleep_ms]
                   + list(extra))


def check_pairs(doc, fx, done, n, symbol, binary):
    m = doc["measurement"]
    assert doc["status"] == "completed"
    assert m["samples"]["matched"] == n
    assert m["samples"]["unmatched_start"] == 0
    assert m["samples"]["unmatched_end"] == 0
    assert m["samples"]["dropped"] == 0
    assert doc["correlation"]["method"] == "stack_nested_tid_lifo"
    assert doc["correlation"]["score"] == 1.0
    assert doc["collection"]["host_events"] == 2 * n
    assert "host" not in doc["collection"]  # closed: the ring's counters are human-only
    assert "HOST_RECORDS_LOST_AFTER_STOP" not in [w["code"] for w in doc["warnings"]]
    for pair in doc["evidence"]:
        for side, kind, etype in (("start", "uprobe", "host_function_entry"),
                                  ("end", "uretprobe", "host_function_exit")):
            e = pair[side]
            assert e["source"] == "ebpf"
            assert e["event_type"] == etype
            assert e["pid"] == fx.ready["pid"]
            assert e["tid"] == fx.ready["tid"]
            assert e["clock_domain"] == "host_monotonic"
            assert e["timestamp_raw"] == e["timestamp_ns"]
            assert e["cpu"] is not None
            assert e["process_start_time"] is not None
            assert e["host"]["probe_kind"] == kind
            assert e["host"]["binary_path"] == binary
            assert e["host"]["symbol"] == symbol
            assert e["host"]["arguments"] == []
            assert e["host"]["return_value"] is None
        assert pair["latency_ns"] == pair["end"]["timestamp_ns"] - pair["start"]["timestamp_ns"]


def test_function_latency_samples(xprobe):
    with sleeper(5, 20) as fx:
        exe = fx.ready["exe"]
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
            "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
            "--samples", 5, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        assert res.stderr == ""
        doc = res.doc
        check_pairs(doc, fx, done, 5, "xp_fx_sleep", exe)
        # each latency lies between the requested sleep and the longest
        # call the fixture timed around the same calls
        for pair in doc["evidence"]:
            assert fx.ready["sleep_ns"] <= pair["latency_ns"] <= done["call_max_ns"]
        lat = doc["measurement"]["latency_ns"]
        assert fx.ready["sleep_ns"] <= lat["min"] <= lat["p50"] <= lat["max"]
        assert abs(lat["mean"] - done["call_mean_ns"]) < 2_000_000
        fx.quit()
    assert_released(run.progs, run.links)


def test_function_latency_duration_exact_counts(xprobe):
    with sleeper(7, 5) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
            "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
            "--duration-ms", 1500], nlinks=2)
        assert res.rc == 0, res
        check_pairs(res.doc, fx, done, 7, "xp_fx_sleep", exe)
        fx.quit()


def test_offset_selector(xprobe):
    with sleeper(4, 10) as fx:
        exe, off = fx.ready["exe"], fx.ready["sleep_offset"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:+%s:entry" % (exe, off),
            "--to", "uprobe:%s:+%s:return" % (exe, off), "--match", "stack-nested",
            "--samples", 4, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["measurement"]["samples"]["matched"] == 4
        for e in events_of(doc, "start") + events_of(doc, "end"):
            assert e["host"]["offset"] == int(off, 16)
            assert e["host"]["binary_path"] == exe
        for pair in doc["evidence"]:
            assert fx.ready["sleep_ns"] <= pair["latency_ns"] <= done["call_max_ns"]
        fx.quit()


def test_shared_library_function(xprobe):
    with Fixture([fixture_path("live_libuser"), "--calls", 6, "--us", 4000]) as fx:
        lib = fx.ready["library"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:live_work_step:entry" % lib,
            "--to", "uprobe:%s:live_work_step:return" % lib, "--match", "stack-nested",
            "--samples", 6, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        check_pairs(res.doc, fx, done, 6, "live_work_step", lib)
        for pair in res.doc["evidence"]:
            assert pair["latency_ns"] >= fx.ready["sleep_ns"]
        fx.quit()


def test_cpp_signature_selector(xprobe):
    with Fixture([fixture_path("live_cpp"), "--calls", 5, "--us", 3000]) as fx:
        exe, sig = fx.ready["exe"], fx.ready["signature"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:symbol=%s:entry" % (exe, sig),
            "--to", "uprobe:%s:symbol=%s:return" % (exe, sig), "--match", "stack-nested",
            "--samples", 5, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        m = doc["measurement"]
        assert m["samples"]["matched"] == 5
        assert doc["collection"]["host_events"] == 10  # the other overload is not probed
        for e in events_of(doc, "start") + events_of(doc, "end"):
            assert e["host"]["symbol"] == "_ZN4xpfx6Worker4stepElPKc"
            assert e["host"]["symbol_demangled"] == sig
        for pair in doc["evidence"]:
            assert pair["latency_ns"] >= fx.ready["sleep_ns"]
        fx.quit()


def test_entry_to_entry_first_after(xprobe):
    """Two events of one endpoint: an entry-to-next-entry interval."""
    with sleeper(4, 10) as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
            "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "first-after",
            "--samples", 4, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        assert res.doc["correlation"]["method"] == "first_after"
        assert [w["code"] for w in res.doc["warnings"]] == ["HEURISTIC_CORRELATION"]
        assert res.doc["measurement"]["samples"]["matched"] == 4
        fx.quit()
