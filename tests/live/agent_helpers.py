# SPDX-License-Identifier: Apache-2.0
"""Helpers of the live Agent tests (tests/live/test_measure_nvtx.py,
test_measure_cuda_agent.py).

NvtxFixture: tests/fixtures/live_nvtx (an ordinary NVTX program) started
under NVTX_INJECTION64_PATH=<build>/lib/libxprobe.so, so NVTX's first call
loads libxprobe and its Agent serves a control socket.

agent_hello(pid): one HELLO over the target's control socket, as a second
client (tests/pylib/agent_wire.py, include/xprobe/agent.h's layout): how a
test learns that a measure running in the background has armed (state
ACTIVE), without a BPF link to wait for.
"""
import os
import time

import xprobe_test
from agent_wire import REPLY, REPLY_SIZE, STATE, hello_bytes, socket_path
from measure_live_helpers import Fixture, LiveRun
from proc_helpers import fixture_path

F_NVTX_ROUTED, F_DEVICE_BACKEND, F_HOST_MONOTONIC, F_INJECTED = 1, 2, 4, 8


def libxprobe():
    return os.path.join(xprobe_test.build_dir(), "lib", "libxprobe.so")


def agent_hello(pid, path=None, timeout=2.0):
    """The HELLO reply of @pid's Agent as a dict (state as a word)."""
    data = hello_bytes(path or socket_path(pid), timeout)
    assert len(data) == REPLY_SIZE, len(data)
    f = REPLY.unpack(data)
    assert f[0] == b"XPAGREP\0", f[0]
    return {"status": f[4], "features": f[5], "state": STATE.get(f[6], f[6]),
            "stop_reason": f[7], "pid": f[8], "start_time": f[9], "capacity": f[13],
            "observed": f[14], "retained": f[15], "dropped": f[16],
            "message": f[23].split(b"\0")[0].decode()}


def wait_state(pid, want, timeout=10.0, run=None):
    """Poll HELLO until the Agent's state is @want ("active", "idle")."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if run is not None and run.p.poll() is not None:
            raise AssertionError("xprobe exited before the Agent was %s: rc=%s out=%s err=%s"
                                 % (want, run.p.returncode, run.p.stdout.read(),
                                    run.p.stderr.read()))
        try:
            last = agent_hello(pid)
            if last["state"] == want:
                return last
        except OSError as e:
            last = e
        time.sleep(0.002)
    raise AssertionError("the Agent of %d never became %s (last: %r)" % (pid, want, last))


def nvtx_env(extra=None):
    env = dict(os.environ)
    env["NVTX_INJECTION64_PATH"] = libxprobe()
    env.update(extra or {})
    return env


class NvtxFixture(Fixture):
    """live_nvtx in @mode, with the Agent injected by NVTX (or not)."""

    def __init__(self, mode, iters=50, work_us=200, extra=(), inject=True, env=None):
        argv = [fixture_path("live_nvtx"), "--mode", mode, "--iters", iters,
                "--work-us", work_us] + list(extra)
        e = env if env is not None else (nvtx_env() if inject else
                                         {k: v for k, v in os.environ.items()
                                          if k != "NVTX_INJECTION64_PATH"})
        super().__init__(argv, env=e)


def nvtx_sel(kind, regex="^step$"):
    return "cuda:nvtx_range_%s:name~%s" % (kind, regex)


STEP = ["--from", nvtx_sel("start"), "--to", nvtx_sel("end")]


def measure_armed(xprobe, fx, args, timeout=60, go=True):
    """Start measure in the background, wait until the Agent is armed, let
    the fixture work once.  Returns (Result, the fixture's done line)."""
    run = LiveRun(xprobe, *args)
    wait_state(fx.pid, "active", run=run)
    done = None
    if go:
        fx.go()
        done = fx.done()
    return run.finish(timeout=timeout), done
