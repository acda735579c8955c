# SPDX-License-Identifier: Apache-2.0
"""Helpers of the live CUDA measurement tests (tests/live/test_measure_cuda.py,
bench/bench_cuda.sh's time-to-armed rows).

CuptiFixture: the CUPTI TEST DOUBLE's "CUDA program"
(tests/fixtures/cupti_double/cupti_fixture, README.md there): it dlopens the
fake libcudart.so.<major> through LD_LIBRARY_PATH as a real program would,
and runs one stdin command per line, answering one line each ("DONE launch
5", "READY <pid> <socket>", "STATS ...").  mode "preload" starts it with
LD_PRELOAD=<build>/lib/libxprobe.so (the Agent is there: already_loaded);
mode "inject" with no xprobe variable at all (measure must inject it).
Either way the Agent's CUPTI backend finds the fake runtime mapped and
loads the double's libcupti.so.<major> from the same directory, which
replays what CUPTI would make of each fake call.

CudaRun: `xprobe measure` in the background, waited on until the target's
Agent reports the capture armed (a HELLO as a second client), then driven
through the fixture; its document is checked as every test document is
(xprobe_test.check_document: ours and the reference schemas).  Unlike
measure_live_helpers.LiveRun it allows a stderr: online injection's
warning belongs there.
"""
import os
import subprocess
import time

import xprobe_test
from agent_helpers import libxprobe, wait_state
from measure_live_helpers import target_link_ids

STRIPPED = ("LD_PRELOAD", "LD_LIBRARY_PATH", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")


def double_dir(major=None):
    d = os.path.join(xprobe_test.build_dir(), "tests", "cupti_double")
    return d if major is None else os.path.join(d, str(major))


def cudart(major=13):
    """The fake runtime's path (what a uprobe selector names)."""
    return os.path.realpath(os.path.join(double_dir(major), "libcudart.so.%d" % major))


class CuptiFixture:
    """cupti_fixture, initialized (its runtime loaded); a context manager."""

    def __init__(self, mode="preload", major=13, env=None, init=True):
        assert mode in ("preload", "inject")
        e = {k: v for k, v in os.environ.items()
             if k not in STRIPPED and not k.startswith("XPROBE_") and not k.startswith("XPD_")}
        e["LD_LIBRARY_PATH"] = double_dir(major)
        e["CUPTI_FIXTURE_MAJOR"] = str(major)
        if mode == "preload":
            e["LD_PRELOAD"] = libxprobe()
        e.update(env or {})
        self.mode = mode
        exe = os.path.join(double_dir(), "cupti_fixture")
        assert os.path.exists(exe), (
            "%s is missing: build target cupti_double (the CUPTI test double, "
            "tests/fixtures/cupti_double; no CUDA toolkit needed)" % exe)
        self.p = subprocess.Popen([exe],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1, env=e)
        self.pid = self.p.pid
        self.socket = None
        if init:
            self.init()

    def cmd(self, line):
        """One command, its answer line."""
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        ans = self.p.stdout.readline().strip()
        assert ans, "cupti_fixture gave no answer to %r (exit %s)" % (line, self.p.poll())
        return ans

    def init(self):
        ready, pid, sock = self.cmd("init").split()
        assert ready == "READY" and int(pid) == self.pid
        self.socket = None if sock == "-" else sock

    def do(self, line):
        """A command that calls the runtime: the calls it made (its DONE)."""
        ans = self.cmd(line).split()
        assert ans[0] == "DONE" and ans[1] == line.split()[0], (line, ans)
        return int(ans[2])

    def stats(self):
        """The double's own counters (None before CUPTI is loaded)."""
        f = self.cmd("stats").split()
        assert f[0] == "STATS"
        if f[1] == "-":
            return None
        keys = ("subscribed", "callbacks", "records", "dropped", "requested", "refused",
                "completed", "kinds", "flushes", "tscb")
        return dict(zip(keys, (int(x) for x in f[1:])))

    def cupti_mapped(self):
        return self.cmd("maps") == "MAPS 1"

    def quit(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
                self.p.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except Exception:
                pass


class CudaRun:
    """`xprobe measure --json ...` in the background."""

    def __init__(self, xprobe, *args, env=None):
        self.argv = [xprobe.binary, "measure"] + [str(a) for a in args] + [
            "--json", "--non-interactive", "--no-color"]
        self.p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env)

    def wait_armed(self, pid, nlinks=0, timeout=20.0):
        """The Agent of @pid armed (and @nlinks BPF links held: a host
        endpoint's probes attach before the sources arm back to back)."""
        wait_state(pid, "active", timeout=timeout, run=self)
        deadline = time.monotonic() + timeout
        while nlinks and len(target_link_ids(self.p.pid)) < nlinks:
            assert time.monotonic() < deadline, "no %d BPF links" % nlinks
            assert self.p.poll() is None, self.p.stderr.read()
            time.sleep(0.005)
        if nlinks:
            time.sleep(0.05)  # the eBPF source arms right after the Agent

    def finish(self, timeout=60, schema_name=None):
        out, err = self.p.communicate(timeout=timeout)
        name = schema_name or xprobe_test.success_schema(self.argv[1:])
        doc = xprobe_test.check_document(self.argv, self.p.returncode, out, name)
        return xprobe_test.Result(self.argv, self.p.returncode, out, err, doc)


def measure_cuda(xprobe, fx, args, work, nlinks=0, env=None, timeout=60, schema_name=None):
    """Measure @fx with @args, running the fixture commands @work once the
    capture is armed.  Returns (Result, {command: calls made})."""
    run = CudaRun(xprobe, "--pid", fx.pid, *args, env=env)
    run.wait_armed(fx.pid, nlinks=nlinks)
    done = {}
    for line in work:
        done[line] = fx.do(line)
    return run.finish(timeout=timeout, schema_name=schema_name), done
