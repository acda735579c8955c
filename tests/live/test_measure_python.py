# SPDX-License-Identifier: Apache-2.0
"""Live CPython GC measurement through the python:gc__start / gc__done USDT
markers of Debian's /usr/bin/python3.11 (libbpf USDT support, semaphore
handled): one pair per gc.collect() call, exact per-thread lifecycle."""
import os

from measure_live_helpers import PY311, FIXTURE_SRC, Fixture, assert_released, measure_fixture


def gc_fixture(calls):
    return Fixture([PY311, os.path.join(FIXTURE_SRC, "live_gc.py"), "--calls", calls])


def check_gc(e, fx, name):
    assert e["source"] == "ebpf"
    assert e["event_type"] == "marker"  # the contract has no usdt event type
    assert e["pid"] == fx.ready["pid"]
    assert e["tid"] == fx.ready["tid"]
    assert e["host"]["probe_kind"] == "usdt"
    assert e["host"]["binary_path"] == fx.ready["exe"]
    assert e["host"]["symbol"] == name
    assert e["host"]["arguments"] == []
    assert e["attributes"] == {"usdt_provider": "python"}


def test_gc_pauses_samples(xprobe):
    with gc_fixture(7) as fx:
        assert fx.ready["exe"] == os.path.realpath(PY311)
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "python:gc_start", "--to", "python:gc_end",
            "--match", "exact", "--samples", 7, "--max-events", 1000,
            "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert done["collections"] == 7
        assert doc["measurement"]["samples"]["matched"] == 7
        assert doc["measurement"]["samples"]["unmatched_start"] == 0
        assert doc["collection"]["host_events"] == 14
        assert doc["correlation"]["confidence"] == "exact"
        for pair in doc["evidence"]:
            check_gc(pair["start"], fx, "gc__start")
            check_gc(pair["end"], fx, "gc__done")
            assert 0 < pair["latency_ns"] < done["elapsed_ns"]
        fx.quit()
    assert_released(run.progs, run.links)


def test_gc_pauses_duration_exact_count(xprobe):
    with gc_fixture(11) as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "python:gc_start", "--to", "python:gc_end",
            "--match", "exact", "--duration-ms", 2000], nlinks=2)
        assert res.rc == 0, res
        assert res.doc["measurement"]["samples"]["matched"] == 11
        assert res.doc["collection"]["host_events"] == 22
        fx.quit()
