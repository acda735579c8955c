# SPDX-License-Identifier: Apache-2.0
"""The largest millisecond bound (XPC_MS_MAX, common/parse.h) runs as
written in live mode and from a spec: a --timeout-ms or timeout_ms of
9223372036854 ms neither times out at once (the wrap of 18446744073709551615
ms did) nor stops the capture early; the capture ends on its samples.
Values above it are refused at parse time (tests/cli/test_time_bounds.py).
"""
import json

from measure_live_helpers import Fixture, fixture_path, start_time

import xprobe_test

MS_MAX = 9223372036854
PAIR = ["--from", "syscall:getppid:entry", "--to", "syscall:getppid:exit",
        "--match", "exact"]


def ticker():
    # getppid() once a millisecond after "go"
    fx = Fixture([fixture_path("live_sleeper"), "--tick-us", "1000"])
    fx.go()
    return fx


def test_live_timeout_at_the_bound_ends_on_samples(xprobe):
    with ticker() as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *PAIR, "--samples", 5,
                       "--max-events", 1000, "--timeout-ms", MS_MAX, timeout=60)
        assert r.rc == 0, r
        assert r.doc["status"] == "completed"
        assert r.doc["measurement"]["samples"]["matched"] == 5


def test_live_duration_and_timeout_at_the_bound(xprobe):
    with ticker() as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *PAIR, "--samples", 3,
                       "--duration-ms", MS_MAX, "--timeout-ms", MS_MAX,
                       "--max-events", 1000, timeout=60)
        assert r.rc == 0, r
        assert r.doc["status"] == "completed"
        assert r.doc["measurement"]["samples"]["matched"] == 3


def test_spec_timeout_at_the_bound_ends_on_samples(xprobe, tmp_path):
    with ticker() as fx:
        doc = {
            "schema_version": "2.0",
            "name": "bound",
            "target": {"pid": fx.pid, "process_start_time": start_time(fx.pid)},
            "start_selector": "syscall:getppid:entry",
            "end_selector": "syscall:getppid:exit",
            "match_policy": "exact",
            "samples": 4,
            "duration_ms": None,
            "timeout_ms": MS_MAX,
            "max_events": 1000,
        }
        xprobe_test.validate(doc, "measurement-spec")
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(doc))
        r = xprobe.run("measure", "--spec", str(path), timeout=60)
        assert r.rc == 0, r
        assert r.doc["status"] == "completed"
        assert r.doc["measurement"]["samples"]["matched"] == 4
