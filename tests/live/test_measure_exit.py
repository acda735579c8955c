# SPDX-License-Identifier: Apache-2.0
"""Exact live measurements whose target exits, or whose capture fills
(issue 12, section 2): the contract's rules stand -- no partial result,
TARGET_EXITED and EVENT_RATE_TOO_HIGH -- but a capture that exists is never
dropped silently: with --events-out it is written, the error names it
(path, format, event count), it reads back through `measure --input`, and
the hints name --histogram and --events-out + measure --input.  A target
that exits once a --samples capture holds its pairs ends in a result."""
import os
import stat

from measure_live_helpers import (Fixture, assert_released, fixture_path, measure_fixture,
                                  read_jsonl)
import xprobe_test


def sleeper(*args):
    return Fixture([fixture_path("live_sleeper")] + [str(a) for a in args])


def sel(exe, fn, end):
    return "uprobe:%s:%s:%s" % (exe, fn, "return" if end else "entry")


def hints_keep(err, path=None):
    """The hints name both ways to keep such data."""
    text = "\n".join(err["hints"])
    assert "--histogram" in text, err["hints"]
    if path is None:
        assert "--events-out" in text and "measure --input" in text, err["hints"]
    else:
        assert "measure --input %s" % path in text, err["hints"]


def test_exit_mid_window_writes_the_capture_and_it_reads_back(xprobe, tmp_path):
    out = tmp_path / "exited.jsonl"
    with sleeper("--calls", 3, "--sleep-ms", 5, "--exit-after-go") as fx:
        exe = fx.ready["exe"]
        frm, to = sel(exe, "xp_fx_sleep", 0), sel(exe, "xp_fx_sleep", 1)
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", frm, "--to", to, "--match", "stack-nested",
            "--duration-ms", 20000, "--events-out", out], nlinks=2)
        assert done["calls"] == 3
    assert res.rc == 3, res
    err = res.error
    assert err["code"] == "TARGET_EXITED"
    d = err["details"]
    assert (d["artifact_path"], d["artifact_format"], d["artifact_event_count"]) == (
        str(out), "jsonl", 6)
    hints_keep(err, str(out))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    events = read_jsonl(out)
    assert len(events) == 6
    # the artifact is a valid --input: the pairs the exit cost are there
    again = xprobe.run("measure", "--input", out, "--from", frm, "--to", to,
                       "--match", "stack-nested", "--samples", 3)
    assert again.rc == 0, again
    assert again.doc["measurement"]["samples"]["matched"] == 3
    lat = again.doc["measurement"]["latency_ns"]
    assert lat["min"] >= 5_000_000
    assert_released(run.progs, run.links)


def test_exit_without_events_out_says_how_to_keep_it(xprobe):
    with sleeper("--calls", 2, "--sleep-ms", 2, "--exit-after-go") as fx:
        exe = fx.ready["exe"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", sel(exe, "xp_fx_sleep", 0),
            "--to", sel(exe, "xp_fx_sleep", 1), "--match", "stack-nested",
            "--duration-ms", 20000], nlinks=2)
    assert res.rc == 3, res
    err = res.error
    assert err["code"] == "TARGET_EXITED"
    assert "artifact_path" not in err["details"]
    assert err["details"]["host_events"] == 4
    hints_keep(err)


def test_exit_after_the_samples_formed_is_a_result(xprobe):
    """live_exit: N-1 reads, a pause (the samples rule counts N-1 pairs:
    the read it waited for "go" in is an end without a start), then the
    N-th read and exit within the rule's 20 ms recheck interval.  The
    capture holds N pairs: a completed result, cut at the N-th pair."""
    n = 3000
    with Fixture([fixture_path("live_exit"), "--reads", n, "--pause-ms", 8]) as fx:
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "syscall:read:entry", "--to", "syscall:read:exit",
            "--match", "exact", "--samples", n, "--timeout-ms", 30000], nlinks=2)
        assert done["reads"] == n
        fx.p.wait(timeout=10)
    assert res.rc == 0, res
    doc = res.doc
    assert doc["status"] == "completed"
    s = doc["measurement"]["samples"]
    assert s["matched"] == n
    assert s["unmatched_end"] == 1  # the read that waited for "go"
    assert len(doc["evidence"]) == n
    # cut at the event that completed the N-th pair: nothing after it
    assert doc["collection"]["host_events"] == 2 * n + 1
    assert_released(run.progs, run.links)


def test_capture_full_writes_the_capture_and_names_the_ways(xprobe, tmp_path):
    """A samples capture whose --max-events bound comes first."""
    out = tmp_path / "full.jsonl"
    with sleeper("--hot-ms", 3000) as fx:
        exe = fx.ready["exe"]
        frm, to = sel(exe, "xp_fx_hot", 0), sel(exe, "xp_fx_hot", 1)
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", frm, "--to", to, "--match", "stack-nested",
            "--samples", 100000, "--max-events", 40, "--timeout-ms", 20000,
            "--events-out", out], nlinks=2)
        fx.quit()
    assert res.rc == 1, res
    err = res.error
    assert err["code"] == "EVENT_RATE_TOO_HIGH"
    d = err["details"]
    assert (d["artifact_path"], d["artifact_format"], d["artifact_event_count"]) == (
        str(out), "jsonl", 40)
    assert d["samples"] == 100000
    hints_keep(err, str(out))
    events = read_jsonl(out)
    assert len(events) == 40
    for e in events:
        xprobe_test.validate(e, "event")
    again = xprobe.run("measure", "--input", out, "--from", frm, "--to", to,
                       "--match", "stack-nested", "--samples", 10)
    assert again.rc == 0, again
    assert again.doc["measurement"]["samples"]["matched"] == 10
    assert_released(run.progs, run.links)


def test_capture_full_chrome_artifact(xprobe, tmp_path):
    """The same with --format chrome: the error names the format."""
    out = tmp_path / "full.json"
    with sleeper("--hot-ms", 3000) as fx:
        exe = fx.ready["exe"]
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", sel(exe, "xp_fx_hot", 0),
            "--to", sel(exe, "xp_fx_hot", 1), "--match", "stack-nested",
            "--duration-ms", 1000, "--max-events", 30, "--events-out", out,
            "--format", "chrome"], nlinks=2)
        fx.quit()
    assert res.rc == 1, res
    d = res.error["details"]
    assert res.code == "EVENT_RATE_TOO_HIGH"
    assert (d["artifact_path"], d["artifact_format"], d["artifact_event_count"]) == (
        str(out), "chrome", 30)
    text = "\n".join(res.error["hints"])
    assert "--histogram" in text and "--format jsonl" in text, res.error["hints"]
    assert "measure --input %s" % out not in text
