# SPDX-License-Identifier: Apache-2.0
"""SIGTERM / SIGINT during `measure --input` (common/cancel.h).

xprobe used to ignore them while decoding, correlating and exporting --
and then die by the default action without a document, leaving its
".NAME.xprobe-PID-N.tmp" behind (4 GB over 44 interrupted runs).  Now
main() installs the handler before anything slow, the long phases check
the request, and the answer is a cancelled error document:

  decode / correlate   NO_MATCHED_SAMPLES, details.cancelled, phase, signal
                       (what the live path answers for a cancelled capture
                       without pairs)
  export               TRACE_EXPORT_FAILED, the same details, phase export

exit 1 either way, and no temporary file is left.

The capture is big (some 260 MB of Event JSONL) so each phase lasts long
enough to be hit: the test waits for the phase's mark -- the handler in
/proc/PID/status SigCgt, the JSON plugin in /proc/PID/maps, the temporary
file in the directory -- and signals at once.
"""
import glob
import json
import os
import signal
import subprocess
import time

import pytest

import xpcap
import xprobe_test

EVENTS = 500000
PAIR = ["--from", "uprobe:/usr/bin/app:handle_request:entry",
        "--to", "uprobe:/usr/bin/app:handle_request:return", "--match", "stack-nested"]


def _template(event):
    e = dict(event, event_id="@ID@", sequence=-777, timestamp_raw=-888, timestamp_ns=-999)
    s = json.dumps(e, separators=(",", ":"))
    return (s.replace('"@ID@"', '"evt_%d"').replace("-777", "%d").replace("-888", "%d")
            .replace("-999", "%d"))


@pytest.fixture(scope="module")
def big_capture(tmp_path_factory):
    """EVENTS uprobe entry/return events, written from one template."""
    d = tmp_path_factory.mktemp("big")
    path = d / "big.jsonl"
    entry, ret = xpcap.numbered([xpcap.uprobe_entry(1, 100), xpcap.uprobe_return(1, 200)])
    xprobe_test.validate(entry, "event")
    te, tr = _template(entry), _template(ret)
    with open(path, "w") as f:
        for i in range(0, EVENTS, 2):
            ts = 1000 + i * 500
            f.write(te % (i, i, ts, ts) + "\n")
            f.write(tr % (i + 1, i + 1, ts + 250, ts + 250) + "\n")
    yield str(path)
    os.unlink(path)


def argv(xprobe, capture, out, json_mode=True):
    a = [xprobe.binary, "measure", "--input", capture] + PAIR + [
        "--samples", "1", "--max-events", str(2 * EVENTS), "--events-out", str(out)]
    if json_mode:
        a += ["--json", "--non-interactive", "--no-color"]
    return a


def leftovers(out):
    return glob.glob(os.path.join(os.path.dirname(out), ".%s.xprobe-*.tmp"
                                  % os.path.basename(out)))


def exporting(pid, out):
    """The export is under way: an unnamed temporary (O_TMPFILE, shown as
    "<dir>/#<inode> (deleted)") is open in the artifact's directory, or a
    named one exists (a filesystem without O_TMPFILE)."""
    d = os.path.dirname(str(out)) + "/#"
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith(d):
                return True
        except OSError:
            pass
    return bool(leftovers(str(out)))


def handler_installed(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def plugin_mapped(pid):
    with open("/proc/%d/maps" % pid) as f:
        return "xprobe-json.so" in f.read()


def wait_for(p, cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise AssertionError("xprobe ended (rc %s) before %s" % (p.returncode, what))
        try:
            if cond():
                return
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.0005)
    raise AssertionError("no %s within %.0f s" % (what, timeout))


def finish(p, json_mode=True):
    out, err = p.communicate(timeout=120)
    if not json_mode:
        return p.returncode, out, err, None
    assert err == "", err
    doc = json.loads(out)
    assert out.endswith("}\n")
    xprobe_test.validate(doc, "error")
    return p.returncode, out, err, doc


def check_cancelled(rc, doc, signo, phase, out):
    assert rc == 1, (rc, doc)
    e = doc["error"]
    d = e["details"]
    assert d["cancelled"] is True, e
    assert d["signal"] == signal.strsignal(signo), e
    assert d["phase"] == phase, e
    assert e["recoverable"] is True
    if phase == "export":
        assert e["code"] == "TRACE_EXPORT_FAILED", e
        assert e["message"] == "failed to write %s: cancelled by signal %d (%s)" % (
            out, signo, signal.strsignal(signo))
        assert d["path"] == str(out)
    else:
        assert e["code"] == "NO_MATCHED_SAMPLES", e
        assert e["message"].startswith("measurement cancelled by signal %d while " % signo), e
        assert d["start_selector"] == PAIR[1] and d["end_selector"] == PAIR[3]
        assert d["match_policy"] == "stack-nested"
        assert 0 <= d["captured_events"] < EVENTS
    assert not os.path.exists(out), "a cancelled run writes no artifact"
    assert leftovers(str(out)) == []


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_signal_as_soon_as_the_handler_is_installed(xprobe, big_capture, tmp_path, signo):
    """main() installs the handler first of all; a signal as soon as it is
    there (SigCgt) is honoured, however early in the run."""
    out = tmp_path / "events.jsonl"
    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_for(p, lambda: handler_installed(p.pid), "signal handler")
    p.send_signal(signo)
    rc, _, _, doc = finish(p)
    check_cancelled(rc, doc, signo, "decode", out)


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_signal_pending_at_exec(xprobe, big_capture, tmp_path, signo):
    """Pending at exec (blocked and raised in the child before exec, so it
    cannot land in the dynamic loader): xprobe unblocks the signals once
    its handler is installed and then honours the pending one."""
    out = tmp_path / "events.jsonl"

    def block_and_raise():  # a pending signal survives execve
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM])
        os.kill(os.getpid(), signo)

    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=block_and_raise)
    rc, _, _, doc = finish(p)
    check_cancelled(rc, doc, signo, "decode", out)


def test_signal_immediately_after_spawn(xprobe, big_capture, tmp_path):
    """Unmasked, right after the exec: before main() (in the dynamic
    loader) the default action still applies; from main() on it is a
    cancelled document.  Either way nothing is left behind."""
    for i in range(5):
        out = tmp_path / ("events%d.jsonl" % i)
        p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        p.send_signal(signal.SIGTERM)
        stdout, stderr = p.communicate(timeout=120)
        if p.returncode == -signal.SIGTERM:
            assert stdout == "" and stderr == ""
        else:
            doc = json.loads(stdout)
            xprobe_test.validate(doc, "error")
            check_cancelled(p.returncode, doc, signal.SIGTERM, "decode", out)
        assert not os.path.exists(out)
        assert leftovers(str(out)) == []


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_signal_during_decode(xprobe, big_capture, tmp_path, signo):
    """A signal inside the decode loop: cancelled, with the events decoded
    so far counted.  When the signal lands before the first event (a
    loaded machine, the ASan build), the cancellation is still checked and
    the next try waits longer."""
    out = tmp_path / "events.jsonl"
    for delay in (0.02, 0.05, 0.1, 0.2, 0.4):
        p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        wait_for(p, lambda: plugin_mapped(p.pid), "JSON plugin")
        time.sleep(delay)  # inside the decode loop
        p.send_signal(signo)
        rc, _, _, doc = finish(p)
        check_cancelled(rc, doc, signo, "decode", out)
        if doc["error"]["details"]["captured_events"] > 0:
            return
    assert False, "no signal landed after the first decoded event in 5 tries"


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_signal_during_export(xprobe, big_capture, tmp_path, signo):
    out = tmp_path / "events.jsonl"
    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_for(p, lambda: exporting(p.pid, out), "temporary file of the export")
    p.send_signal(signo)
    rc, _, _, doc = finish(p)
    check_cancelled(rc, doc, signo, "export", out)


def test_export_cancel_keeps_the_previous_artifact(xprobe, big_capture, tmp_path):
    out = tmp_path / "events.jsonl"
    out.write_text("previous\n")
    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_for(p, lambda: exporting(p.pid, out), "temporary file of the export")
    p.send_signal(signal.SIGTERM)
    rc, _, _, doc = finish(p)
    assert rc == 1 and doc["error"]["details"]["phase"] == "export", doc
    assert out.read_text() == "previous\n"
    assert leftovers(str(out)) == []


def test_human_mode_cancel(xprobe, big_capture, tmp_path):
    out = tmp_path / "events.jsonl"
    p = subprocess.Popen(argv(xprobe, big_capture, out, json_mode=False),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(p, lambda: plugin_mapped(p.pid), "JSON plugin")
    p.send_signal(signal.SIGINT)
    rc, stdout, stderr, _ = finish(p, json_mode=False)
    assert rc == 1, (rc, stdout, stderr)
    assert stdout == ""
    assert stderr.startswith("NO_MATCHED_SAMPLES: measurement cancelled by signal 2 while "), stderr
    assert leftovers(str(out)) == []


def test_second_signal_ends_at_once_and_leaves_no_temporary(xprobe, big_capture, tmp_path):
    """Ctrl-C twice: the second ends xprobe by the default action, after
    unlinking the temporary in flight -- or the first already produced the
    document.  Never a temporary left."""
    out = tmp_path / "events.jsonl"
    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_for(p, lambda: exporting(p.pid, out), "temporary file of the export")
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGINT)
    stdout, _ = p.communicate(timeout=120)
    assert p.returncode in (1, -signal.SIGINT), p.returncode
    if p.returncode == 1:
        doc = json.loads(stdout)
        xprobe_test.validate(doc, "error")
        assert doc["error"]["details"]["cancelled"] is True
    assert not os.path.exists(out)
    assert leftovers(str(out)) == []


def test_uncancelled_run_still_completes(xprobe, big_capture, tmp_path):
    """The checks cost nothing visible: the same run, left alone, succeeds
    and writes every event."""
    out = tmp_path / "events.jsonl"
    p = subprocess.run(argv(xprobe, big_capture, out), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    xprobe_test.validate(doc, "measurement-result")
    assert doc["status"] == "completed"
    with open(out) as f:
        assert sum(1 for _ in f) == EVENTS
    assert leftovers(str(out)) == []
    os.unlink(out)  # some 260 MB


def test_sigkill_during_export_leaves_nothing(xprobe, big_capture, tmp_path):
    """SIGKILL at drawn instants of the export: no temporary is ever left
    (the artifact is written into an unnamed O_TMPFILE inode, which goes
    with its descriptor, and linked into place only when complete), and
    the previous artifact stays whole.  Before, 12 of 100 such kills left
    a full-size temporary beside the destination that nothing removed."""
    import random
    rnd = random.Random(16)
    out = tmp_path / "events.jsonl"
    out.write_text("previous\n")
    for _ in range(6):
        p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        wait_for(p, lambda: exporting(p.pid, out), "temporary file of the export")
        time.sleep(rnd.uniform(0, 0.2))
        p.kill()
        p.wait()
        assert leftovers(str(out)) == [], os.listdir(tmp_path)
        assert sorted(os.listdir(tmp_path)) == ["events.jsonl"]
        with open(out) as f:
            first = f.readline()
        assert first == "previous\n" or first.startswith("{"), first  # whole, old or new


def test_named_temporaries_of_dead_writers_are_swept(xprobe, big_capture, tmp_path):
    """Without O_TMPFILE (the test hook) a writer killed mid-way leaves its
    named temporary; the next write into that directory removes it (its
    pid names no process), and leaves a live writer's alone."""
    out = tmp_path / "events.jsonl"
    env = dict(os.environ, XPROBE_TEST_NO_TMPFILE="1")
    p = subprocess.Popen(argv(xprobe, big_capture, out), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    wait_for(p, lambda: leftovers(str(out)), "the named temporary of the export")
    p.kill()
    p.wait()
    left = leftovers(str(out))
    assert len(left) == 1, left
    alive = tmp_path / (".events.jsonl.xprobe-%d-1.tmp" % os.getpid())
    alive.write_text("a live writer's\n")
    small = xpcap.write_jsonl(tmp_path / "small.jsonl", list(xpcap.numbered(
        [xpcap.uprobe_entry(1, 100), xpcap.uprobe_return(1, 200)])))
    r = subprocess.run([xprobe.binary, "measure", "--input", str(small)] + PAIR + [
        "--samples", "1", "--events-out", str(tmp_path / "other.jsonl"), "--json"],
        capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not os.path.exists(left[0]), os.listdir(tmp_path)
    assert alive.exists()
