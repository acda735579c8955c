# SPDX-License-Identifier: Apache-2.0
"""Which process a live command is given (issue 12, section 4): a thread id
is refused at validate and measure with the thread group's PID in the
message (it used to pass validate and then time out with nothing), and a
capture that ends with zero events from a target whose children map the
probed binary names those children (an nginx master and its workers)."""
import pytest

from measure_live_helpers import Fixture, LiveRun, fixture_path


def up(exe, fn, end=False):
    return "uprobe:%s:%s:%s" % (exe, fn, "return" if end else "entry")


@pytest.fixture
def threaded():
    with Fixture([fixture_path("live_probe_cost"), "--threads", 2]) as fx:
        yield fx


@pytest.fixture
def workers():
    with Fixture([fixture_path("live_workers"), "--workers", 3]) as fx:
        yield fx


def test_thread_id_is_refused_by_validate(xprobe, threaded):
    exe = threaded.ready["exe"]
    tid = threaded.ready["tids"][0]
    assert tid != threaded.pid
    r = xprobe.run("validate", "--pid", tid, "--from", up(exe, "xp_fx_cost_push"),
                   "--to", up(exe, "xp_fx_cost_push", True), "--match", "stack-nested")
    assert r.rc == 3, r
    e = r.error
    assert e["code"] == "TARGET_NOT_FOUND"
    assert e["details"]["pid"] == tid
    assert e["details"]["thread_group_pid"] == threaded.pid
    assert "thread of process %d" % threaded.pid in e["message"]
    assert any("--pid %d" % threaded.pid in h for h in e["hints"])
    # the process itself validates
    ok = xprobe.run("validate", "--pid", threaded.pid, "--from", up(exe, "xp_fx_cost_push"),
                    "--to", up(exe, "xp_fx_cost_push", True), "--match", "stack-nested")
    assert ok.rc == 0 and ok.doc["valid"] is True, ok


def test_thread_id_is_refused_by_measure(xprobe, threaded):
    tid = threaded.ready["tids"][1]
    r = xprobe.run("measure", "--pid", tid, "--from", "syscall:read:entry",
                   "--to", "syscall:read:exit", "--match", "exact", "--samples", 1,
                   "--timeout-ms", 60000)
    assert r.rc == 3, r
    assert r.code == "TARGET_NOT_FOUND"
    assert r.error["details"]["thread_group_pid"] == threaded.pid


def test_thread_id_is_refused_by_inventories(xprobe, threaded):
    tid = threaded.ready["tids"][0]
    r = xprobe.run("validate", "--pid", tid, "--cpu-sample")
    assert r.rc == 3 and r.code == "TARGET_NOT_FOUND", r
    assert r.error["details"]["thread_group_pid"] == threaded.pid


def test_zero_events_from_a_master_names_its_workers(xprobe, workers, tmp_path):
    exe = workers.ready["exe"]
    out = tmp_path / "none.jsonl"
    run = LiveRun(xprobe, "--pid", workers.pid, "--from", up(exe, "xp_fx_work"),
                  "--to", up(exe, "xp_fx_work", True), "--match", "stack-nested",
                  "--duration-ms", 400, "--events-out", out)
    res = run.finish()
    assert res.rc == 1, res
    e = res.error
    assert e["code"] == "NO_MATCHED_SAMPLES"
    assert e["details"]["child_pids"] == sorted(workers.ready["workers"])
    assert e["details"]["artifact_event_count"] == 0
    text = "\n".join(e["hints"])
    for pid in workers.ready["workers"]:
        assert str(pid) in text
    assert exe in text
    # and a worker, measured, has the events
    w = workers.ready["workers"][0]
    again = xprobe.run("measure", "--pid", w, "--from", up(exe, "xp_fx_work"),
                       "--to", up(exe, "xp_fx_work", True), "--match", "stack-nested",
                       "--samples", 3, "--timeout-ms", 20000)
    assert again.rc == 0, again
    assert again.doc["measurement"]["samples"]["matched"] == 3


def test_timeout_without_events_names_the_workers(xprobe, workers):
    """The samples capture's timeout path, with syscall endpoints (every
    child counts: no binary to match)."""
    res = xprobe.run("measure", "--pid", workers.pid, "--from", "syscall:getppid:entry",
                     "--to", "syscall:getppid:exit", "--match", "exact", "--samples", 5,
                     "--timeout-ms", 500)
    assert res.rc == 1, res
    e = res.error
    assert e["code"] == "NO_MATCHED_SAMPLES" and e["details"]["timed_out"] is True
    assert e["details"]["child_pids"] == sorted(workers.ready["workers"])


def test_no_children_no_hint(xprobe, threaded):
    """A target without children: the error is as before, no child_pids."""
    exe = threaded.ready["exe"]
    res = xprobe.run("measure", "--pid", threaded.pid, "--from", up(exe, "xp_fx_cost_push"),
                     "--to", up(exe, "xp_fx_cost_push", True), "--match", "stack-nested",
                     "--duration-ms", 200)
    assert res.rc == 1 and res.code == "NO_MATCHED_SAMPLES", res
    assert "child_pids" not in res.error["details"]


def test_histogram_of_a_master_names_its_workers(xprobe, workers):
    """--histogram gives the hint the exact mode gives: a window without a
    start or an end from a target whose children map the binary (or, for
    syscalls, have children) says so in a warning naming them.  Before: an
    empty "complete" result, no word about the workers."""
    exe = workers.ready["exe"]
    for frm, to in ((up(exe, "xp_fx_work"), up(exe, "xp_fx_work", True)),
                    ("syscall:getppid:entry", "syscall:getppid:exit")):
        policy = "exact" if frm.startswith("syscall") else "stack-nested"
        res = xprobe.run("measure", "--pid", workers.pid, "--histogram", "--from", frm,
                         "--to", to, "--match", policy, "--duration-ms", 400,
                         schema_name="latency-histogram-result")
        assert res.rc == 0, res
        w = [w for w in res.doc["warnings"] if w["code"] == "NO_EVENTS_IN_TARGET"]
        assert w, res.doc["warnings"]
        assert w[0]["details"]["child_pids"] == sorted(workers.ready["workers"])
        assert "--pid %d" % sorted(workers.ready["workers"])[0] in w[0]["message"]
