# SPDX-License-Identifier: Apache-2.0
"""Files xprobe reads or writes at paths other users can create (issue 9,
section 2): xprobe runs as root, so a path given to --input, --spec or
--events-out may be a FIFO without a writer, a device node, a symlink or
a sparse file claiming gigabytes.

  - --input and --spec read regular files only (and --input session
    directories, whose entries must be regular files too): anything else is
    TRACE_EXPORT_FAILED at once, naming the path and its type, with a hint.
    Before, open() of a FIFO blocked for ever.
  - Whole-file inputs are checked against their bound by fstat before a
    byte is read: a 5 GiB (sparse) host capture was read 4 GiB deep (33 s,
    4 GiB RSS) before it was refused.
  - --events-out replaces a regular file only: a FIFO, a character device
    or a symlink at the path stays what it is and the export fails with
    TRACE_EXPORT_FAILED (the measurement's own error code kept in details).
    Before, the atomic rename replaced each with a regular file.

Device nodes are made with mknod in a temporary directory; /dev/null itself
is never touched.
"""
import json
import os
import stat
import subprocess
import time

import pytest

import xprobe_test
import xpcap
from xpcap import syscall_entry, syscall_exit

MMAP = ("syscall:mmap:entry", "syscall:mmap:exit")
XTF_MAGIC = b"\x89XTF\r\n\x1a\n"
FIVE_GIB = 5 << 30


def measure(xprobe, inputs, *extra, **kw):
    args = ["measure"]
    for path in inputs:
        args += ["--input", str(path)]
    args += ["--from", MMAP[0], "--to", MMAP[1], "--match", "exact", "--samples", 5]
    return xprobe.run(*(args + [str(a) for a in extra]), **kw)


def fail(r, code="TRACE_EXPORT_FAILED", rc=1):
    assert r.rc == rc, r
    assert r.code == code, r
    assert r.stderr == "", r
    return r.error


def mmap_pairs():
    return [syscall_entry(100, 1000), syscall_exit(100, 1500),
            syscall_entry(100, 2000), syscall_exit(100, 2600)]


def no_temporaries(directory):
    left = [n for n in os.listdir(directory) if n.endswith(".tmp")]
    assert left == [], left


def sparse(path, head, size=FIVE_GIB):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def run_rss(xprobe, args, timeout=60):
    """(rc, stdout, stderr, wall seconds, peak RSS in KiB) of one run."""
    argv = [xprobe.binary] + [str(a) for a in args] + ["--json", "--non-interactive",
                                                       "--no-color"]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.execv(argv[0], argv)
    os.close(out_w)
    os.close(err_w)
    deadline = t0 + timeout
    while True:
        wpid, status, ru = os.wait4(pid, os.WNOHANG)
        if wpid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.wait4(pid, 0)
            raise AssertionError("xprobe ran past %d s" % timeout)
        time.sleep(0.02)
    wall = time.monotonic() - t0
    out = os.read(out_r, 1 << 20).decode()
    err = os.read(err_r, 1 << 20).decode()
    os.close(out_r)
    os.close(err_r)
    return os.waitstatus_to_exitcode(status), out, err, wall, ru.ru_maxrss


def bounded_refusal(xprobe, args, code="TRACE_EXPORT_FAILED"):
    """Refused at once, in bounded memory, with one valid error document."""
    rc, out, err, wall, rss_kib = run_rss(xprobe, args)
    assert rc == 1, (rc, out, err)
    assert err == ""
    doc = json.loads(out)
    xprobe_test.validate(doc, "error")
    assert doc["error"]["code"] == code, doc
    assert wall < 10, wall
    assert rss_kib < 256 * 1024, rss_kib
    return doc["error"]


# --- --input ------------------------------------------------------------------

def test_input_fifo_without_writer_is_refused_at_once(xprobe, tmp_path):
    fifo = tmp_path / "capture.jsonl"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    e = fail(measure(xprobe, [fifo], timeout=30))
    assert time.monotonic() - t0 < 10
    assert e["recoverable"] is False
    assert e["message"] == \
        "failed to read %s: it is a fifo, not a regular file or a directory" % fifo
    assert e["details"]["path"] == str(fifo)
    assert e["details"]["file_type"] == "fifo"
    assert any("regular files" in h for h in e["hints"]), e["hints"]


def test_input_character_device_is_refused(xprobe, tmp_path):
    dev = tmp_path / "zero"
    os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    e = fail(measure(xprobe, [dev], timeout=30))
    assert e["details"]["file_type"] == "character device"
    assert str(dev) in e["message"]


def test_input_fifo_after_a_good_input_is_refused(xprobe, tmp_path):
    good = xpcap.write_jsonl(tmp_path / "good.jsonl", mmap_pairs())
    fifo = tmp_path / "second.jsonl"
    os.mkfifo(fifo)
    e = fail(measure(xprobe, [good, fifo], timeout=30))
    assert e["details"]["path"] == str(fifo)


def test_input_sparse_5gib_host_capture_is_refused_by_its_size(xprobe, tmp_path):
    # before: read 4 GiB into memory (about 33 s, 4 GiB RSS), then refused
    big = sparse(tmp_path / "big.json", b'{"schema_version":"2.0","events":[')
    e = bounded_refusal(xprobe, ["measure", "--input", big, "--from", MMAP[0],
                                 "--to", MMAP[1], "--match", "exact", "--samples", 5])
    assert e["message"] == \
        "failed to decode %s: the host capture is larger than 4 GiB" % big
    assert e["details"]["size_bytes"] == FIVE_GIB
    assert e["details"]["size_limit_bytes"] == 0xFFFFFFFF
    assert e["details"]["path"] == str(big)


def test_input_sparse_5gib_xtf_file_is_refused_by_its_size(xprobe, tmp_path):
    big = sparse(tmp_path / "big.xtf", XTF_MAGIC)
    e = bounded_refusal(xprobe, ["measure", "--input", big, "--from", MMAP[0],
                                 "--to", MMAP[1], "--match", "exact", "--samples", 5])
    assert e["message"] == "failed to decode %s: the .xtf file is larger than 4 GiB" % big
    assert e["details"]["size_bytes"] == FIVE_GIB


# --- files inside a session directory -----------------------------------------

@pytest.mark.parametrize("name", ["trace_info.pb", "ntrace.xtf", "on_fail/exec_1.xtf"])
def test_session_directory_with_a_fifo_is_refused(xprobe, tmp_path, name):
    # before: the session reader's open() of the FIFO blocked for ever
    d = tmp_path / "inst-1" / "123"
    (d / "on_fail").mkdir(parents=True)
    os.mkfifo(d / name)
    t0 = time.monotonic()
    e = fail(measure(xprobe, [d], timeout=30))
    assert time.monotonic() - t0 < 10
    assert e["message"] == "failed to read %s: %s is a fifo, not a regular file" % (d, name)
    assert e["details"]["path"] == str(d)
    assert e["details"]["file"] == name
    assert e["details"]["file_type"] == "fifo"
    assert any("regular files" in h for h in e["hints"]), e["hints"]


def test_session_directory_with_a_symlink_is_refused(xprobe, tmp_path):
    d = tmp_path / "inst-1" / "123"
    d.mkdir(parents=True)
    os.symlink("/etc/shadow", d / "trace_info.pb")
    e = fail(measure(xprobe, [d], timeout=30))
    assert e["details"]["file"] == "trace_info.pb"
    assert e["details"]["file_type"] == "symlink"


def test_session_directory_with_a_sparse_5gib_file_is_refused(xprobe, tmp_path):
    d = tmp_path / "inst-1" / "123"
    d.mkdir(parents=True)
    sparse(d / "ntrace.xtf", XTF_MAGIC)
    e = bounded_refusal(xprobe, ["measure", "--input", d, "--from", MMAP[0],
                                 "--to", MMAP[1], "--match", "exact", "--samples", 5])
    assert e["message"] == \
        "failed to decode %s: session file ntrace.xtf is larger than 4 GiB" % d
    assert e["details"]["file"] == "ntrace.xtf"
    assert e["details"]["size_bytes"] == FIVE_GIB


# --- --spec ---------------------------------------------------------------------

def test_spec_fifo_without_writer_is_refused_at_once(xprobe, tmp_path):
    fifo = tmp_path / "spec.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    e = fail(xprobe.run("measure", "--spec", fifo, timeout=30))
    assert time.monotonic() - t0 < 10
    assert e["recoverable"] is False
    assert e["message"] == "failed to read %s: not a regular file (fifo)" % fifo
    assert e["details"]["file_type"] == "fifo"
    assert e["details"]["path"] == str(fifo)
    assert e["hints"], e


def test_spec_sparse_5gib_is_refused_by_its_size(xprobe, tmp_path):
    big = sparse(tmp_path / "spec.json", b"{")
    e = bounded_refusal(xprobe, ["measure", "--spec", big], code="INVALID_EVENT_SELECTOR")
    assert "larger than 1048576 bytes" in e["message"]


# --- --events-out -----------------------------------------------------------------

def export_refused(xprobe, tmp_path, dest, file_type, inputs=None, code=None):
    src = inputs or [xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_pairs())]
    e = fail(measure(xprobe, src, "--events-out", dest, timeout=30))
    assert e["message"] == \
        "failed to write %s: it exists and is a %s, not a regular file" % (dest, file_type)
    assert e["details"]["path"] == str(dest)
    assert e["details"]["file_type"] == file_type
    assert "artifact_path" not in e["details"]
    if code:
        assert e["details"]["original_error_code"] == code
    else:
        assert "original_error_code" not in e["details"]
    no_temporaries(tmp_path)
    return e


def test_events_out_fifo_is_not_replaced(xprobe, tmp_path):
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    export_refused(xprobe, tmp_path, fifo, "fifo")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_events_out_character_device_is_not_replaced(xprobe, tmp_path):
    # /dev/null's numbers on a node made here: as root, the old rename
    # would have replaced the system's /dev/null the same way
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    export_refused(xprobe, tmp_path, null, "character device")
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("target", ["/proc/self/fd/1", "regular"])
def test_events_out_symlink_is_not_replaced(xprobe, tmp_path, target):
    if target == "regular":
        target = str(tmp_path / "elsewhere.jsonl")
        with open(target, "w") as f:
            f.write("kept\n")
    link = tmp_path / "out.jsonl"
    os.symlink(target, link)
    export_refused(xprobe, tmp_path, link, "symlink")
    assert os.path.islink(link) and os.readlink(link) == target
    if target.endswith("elsewhere.jsonl"):
        with open(target) as f:
            assert f.read() == "kept\n"


def test_events_out_fifo_is_refused_before_measuring(xprobe, tmp_path):
    # refused before anything is read: no measurement error to keep
    src = xpcap.write_jsonl(tmp_path / "reads.jsonl", [
        syscall_entry(100, 500, name="read"), syscall_exit(100, 600, name="read")])
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    e = export_refused(xprobe, tmp_path, fifo, "fifo", inputs=[src])
    assert e["details"]["checked"] == "before measuring"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_events_out_failing_at_the_end_keeps_the_measurement_error_code(xprobe, tmp_path):
    # the capture exists but nothing pairs: NO_MATCHED_SAMPLES, and the
    # artifact's write fails too (after the checks passed: the test hook)
    src = xpcap.write_jsonl(tmp_path / "reads.jsonl", [
        syscall_entry(100, 500, name="read"), syscall_exit(100, 600, name="read")])
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, XPROBE_TEST_WRITE_FAULT="1")
    e = fail(measure(xprobe, [src], "--events-out", out, timeout=30, env=env))
    assert e["details"]["original_error_code"] == "NO_MATCHED_SAMPLES"
    assert e["message"] == "failed to write %s: Input/output error" % out
    assert "the measurement also failed; rerun after fixing artifact output" in e["hints"]
    assert not out.exists()
    no_temporaries(tmp_path)


def test_events_out_regular_file_is_still_replaced(xprobe, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_pairs())
    r = measure(xprobe, [src], "--events-out", out, timeout=30)
    assert r.rc == 0, r
    with open(out) as f:
        assert len(f.read().splitlines()) == 4
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    no_temporaries(tmp_path)
