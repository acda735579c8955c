# SPDX-License-Identifier: Apache-2.0
"""--events-out where the user running xprobe may not write: the
TRACE_EXPORT_FAILED "Permission denied" case, really exercised.

The suite runs as root (CI does too), and root passes every mode bit, so
before this file the case ran only when someone ran the suite unprivileged
(the skip in test_capture_export.c).  Here xprobe runs as nobody: a copy
of the binary and of the input sit in a world-readable temporary
directory (the build tree may be where nobody cannot enter), and the
destination is in a directory of root's that nobody may not write (0700:
not even enter; 0555: enter and list, not create).  The same command run
as root then writes the artifact, so the refusal is the permission and
nothing else.
"""
import os

import pytest

import xpcap
from proc_helpers import NOBODY, other_user_xprobe

SELECTORS = ("--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact",
             "--samples", "2")


@pytest.mark.parametrize("mode", [0o700, 0o555])
def test_events_out_where_nobody_may_not_write(xprobe, tmp_path, mode):
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", [
        xpcap.syscall_entry(100, 500), xpcap.syscall_exit(100, 700),
        xpcap.syscall_entry(100, 900), xpcap.syscall_exit(100, 1200)])
    with other_user_xprobe(xprobe, src) as (xp, (capture,)):
        locked = os.path.join(os.path.dirname(capture), "roots")
        os.mkdir(locked)
        os.chmod(locked, mode)
        out = os.path.join(locked, "x.jsonl")
        args = ["measure", "--input", capture, *SELECTORS, "--events-out", out]

        r = xp.run(*args, user=NOBODY)
        assert r.rc == 1 and r.code == "TRACE_EXPORT_FAILED", r
        assert r.stderr == "", r
        e = r.error
        assert e["message"] == "failed to write %s: Permission denied" % out, e
        assert e["details"]["path"] == out
        assert e["recoverable"] is False
        assert os.listdir(locked) == []  # no artifact, no temporary

        r = xp.run(*args)  # root: the same command writes it
        assert r.rc == 0, r
        assert r.doc["measurement"]["samples"]["matched"] == 2
        assert os.listdir(locked) == ["x.jsonl"]
