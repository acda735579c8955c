# SPDX-License-Identifier: Apache-2.0
"""Helpers of the inventory live tests (test_cpu_sample.py,
test_syscall_aggregate.py): the inv_* fixtures speak plain lines
("ready <pid> ...", then optional "go" on stdin), and a background
`xprobe measure` is known to be collecting once it holds its perf event
descriptors (--cpu-sample) or its two BPF links (--syscall-aggregate).
"""
import subprocess
import time

import xprobe_test
from proc_helpers import PY311, fixture_path, perf_fds, stop_process  # noqa: F401


class InvProc:
    """An inv_* fixture (or any command printing "ready <pid> ..."); always
    reaped.  .pid is the PID xprobe is given."""

    def __init__(self, argv, env=None, ready_prefix="ready"):
        self.argv = [str(a) for a in argv]
        self.p = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1, env=env)
        line = self.p.stdout.readline()
        assert line.startswith(ready_prefix), "fixture %r printed %r" % (self.argv, line)
        self.ready = line.split()
        self.pid = self.p.pid

    def send(self, line="go"):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def line(self):
        return self.p.stdout.readline()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        stop_process(self.p)


class Background:
    """`xprobe measure ... --json` in the background."""

    def __init__(self, xprobe, *args, json_mode=True):
        self.argv = [xprobe.binary, "measure"] + [str(a) for a in args]
        if json_mode:
            self.argv += ["--json", "--non-interactive", "--no-color"]
        self.json_mode = json_mode
        self.p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)

    def wait_perf(self, nfds, timeout=10.0):
        """Wait until the run holds @nfds perf event descriptors."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.p.poll() is None, self.p.communicate()
            if perf_fds(self.p.pid) >= nfds:
                return
            time.sleep(0.005)
        raise AssertionError("xprobe opened no %d perf events in %.1fs" % (nfds, timeout))

    def finish(self, schema_name, timeout=120):
        out, err = self.p.communicate(timeout=timeout)
        doc = None
        if self.json_mode:
            doc = xprobe_test.check_document(self.argv, self.p.returncode, out, schema_name)
            if doc.get("ok") is not False:
                assert err == "", err
        return xprobe_test.Result(self.argv, self.p.returncode, out, err, doc)


def warning_codes(doc):
    return [w["code"] for w in doc["warnings"]]


def validate_selectors(xprobe, pid, start, end, match):
    """Run `xprobe validate` on a hint pair; return its document."""
    res = xprobe.run("validate", "--pid", pid, "--from", start, "--to", end, "--match", match)
    assert res.rc == 0, res
    return res.doc
