# SPDX-License-Identifier: Apache-2.0
"""Online injection of the real Agent (build/lib/libxprobe.so) into live
targets, through src/collect/agent_inject.c, driven by the driver mode of the
unit test binary (test_collect_inject --inject PID AGENT ...; measure's
own use of it is tested with measure).

The target is tests/fixtures/inject_target, which checks itself on
"check": every thread progresses, no syscall saw EINTR where the kernel
restarts it, sleeps lasted their length, registers / SSE / YMM / MXCSR /
errno of running loops kept their values.  Its stderr must stay empty.

The socket is checked here independently of the CLI's client: the path
agent.h prescribes, one SOCK_SEQPACKET HELLO packed by hand, the reply's
magic, status, pid, start time and the INJECTED feature.
"""
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest

import xprobe_test
from proc_helpers import NOBODY, copy_for_other_users, fixture_path, other_user_dir, start_time

THIRD_UID = 65533  # neither root nor nobody: the injector that may not ptrace
F_HOST_MONOTONIC = 0x4
F_INJECTED = 0x8
REQ = struct.Struct("<8sIIIIQQII304s")
REPLY = struct.Struct("<8sIIIiIIIIQIIQQQQQQQQQII256s")
assert REQ.size == 352 and REPLY.size == 392


def driver():
    return os.path.join(xprobe_test.build_dir(), "tests", "test_collect_inject")


def agent():
    return os.path.join(xprobe_test.build_dir(), "lib", "libxprobe.so")


class Target:
    """inject_target MODE [FLAGS], its tids, its self-check."""

    def __init__(self, mode, *flags, prefix=(), user=None, prog=None):
        self.err = tempfile.TemporaryFile()
        argv = list(prefix) + [prog or fixture_path("inject_target"), mode] + list(flags)
        pre = None
        if user is not None:
            def pre():
                os.setgroups([])
                os.setresgid(user, user, user)
                os.setresuid(user, user, user)
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True, bufsize=1, preexec_fn=pre)
        self.tids = {}
        self.pid = None
        for line in self.p.stdout:
            w = line.split()
            if w == ["ready"]:
                break
            if w[0] == "pid":
                self.pid = int(w[1])
            elif w[0] == "tid":
                self.tids[w[1]] = int(w[2])
        assert self.pid, "fixture did not start"
        time.sleep(0.05)  # every thread into its blocking call

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
        except OSError:
            pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.p.stdout.close()
        self.p.stdin.close()
        self.err.close()

    def check(self):
        """The fixture's verdict: {fact: value} when ok (asserts ok)."""
        self.p.stdin.write("check\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().strip()
        assert line.startswith("check ok"), line
        return {k: int(v) for k, v in (w.split("=") for w in line.split()[2:])}

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def agent_files(self):
        """Distinct files of libxprobe mapped (by inode)."""
        inos = set()
        with open("/proc/%d/maps" % self.pid) as f:
            for line in f:
                w = line.split()
                if len(w) >= 6 and os.path.basename(w[5]).startswith("libxprobe"):
                    inos.add(w[4])
        return len(inos)


def drive(pid, *extra, agent_path=None, argv0=None, user=None):
    """Run the driver; (exit code, {key: value} of its line, the line)."""
    pre = None
    if user is not None:
        def pre():
            os.setgroups([])
            os.setresgid(user, user, user)
            os.setresuid(user, user, user)
    p = subprocess.run([argv0 or driver(), "--inject", str(pid), agent_path or agent()]
                       + [str(e) for e in extra], capture_output=True, text=True, timeout=120,
                       preexec_fn=pre)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr
    kv = {}
    for w in line.split():
        if "=" in w:
            k, v = w.split("=", 1)
            kv[k] = v
    return p.returncode, kv, line + p.stderr


def hello(pid, uid=0):
    """HELLO on the socket agent.h names for @pid; the reply's fields."""
    path = "/tmp/xprobe-agent-%d/agent-%d-%d.sock" % (uid, pid, start_time(pid))
    st = os.lstat(os.path.dirname(path))
    assert oct(st.st_mode & 0o7777) == oct(0o700) and st.st_uid == uid
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect(path)
        s.send(REQ.pack(b"XPAGREQ\0", 1, 1, REQ.size, 0, 0, 0, 0, 0, bytes(304)))
        data = s.recv(4096)
    finally:
        s.close()
    assert len(data) == REPLY.size
    f = REPLY.unpack(data)
    return {"magic": f[0], "version": f[1], "op": f[2], "status": f[4], "features": f[5],
            "pid": f[8], "start_time": f[9], "path": path}


@pytest.mark.parametrize("mode", ["blocked", "spin", "signal"])
def test_inject_each_fixture(mode):
    with Target(mode) as t:
        rc, kv, line = drive(t.pid)
        assert rc == 0, line
        assert kv["injected"] == "1" and kv["start_status"] == "0", line
        want = {"blocked": "waiting", "spin": "running", "signal": "waiting"}[mode]
        assert kv["kind"] == want, line
        h = hello(t.pid)
        assert h["magic"] == b"XPAGREP\0" and h["status"] == 0
        assert h["features"] & F_INJECTED and h["features"] & F_HOST_MONOTONIC, h
        assert h["pid"] == t.pid and h["start_time"] == start_time(t.pid)
        facts = t.check()
        assert facts["agent_maps"] == 1
        # a second run only starts the mapped Agent
        rc, kv, line = drive(t.pid)
        assert rc == 0 and kv["injected"] == "0" and kv["remote_calls"] == "2", line
        assert t.check()["agent_maps"] == 1
        # inject / HELLO / ARM / CLOSE, the socket gone after each CLOSE
        rc, kv, line = drive(t.pid, "--cycles", 3)
        assert rc == 0 and line.startswith("cycles 3 failures 0"), line
        assert not os.path.exists(h["path"])
        t.check()
        assert t.stderr() == ""


def test_inject_into_the_thread_inside_its_signal_handler():
    with Target("signal") as t:
        for _ in range(5):
            rc, kv, line = drive(t.pid, "--tid", t.tids["handled"])
            assert rc == 0 and kv["tid"] == str(t.tids["handled"]), line
            t.check()
        assert t.agent_files() == 1
        assert t.stderr() == ""


def test_refused_in_another_mount_namespace():
    with Target("blocked", prefix=["unshare", "--mount", "--"]) as t:
        rc, kv, line = drive(t.pid)
        assert rc == 4, line
        assert line.startswith("error PERMISSION_DENIED"), line
        assert kv["reason"] == '"mount_namespace"', line
        assert t.agent_files() == 0
        t.check()


def test_refused_without_ptrace_permission():
    with other_user_dir() as d:
        prog = copy_for_other_users(d, fixture_path("inject_target"))
        drv = copy_for_other_users(d, driver())
        lib = copy_for_other_users(d, agent())
        with Target("blocked", prog=prog, user=NOBODY) as t:
            rc, kv, line = drive(t.pid, agent_path=lib, argv0=drv, user=THIRD_UID)
            assert rc == 4 and line.startswith("error PERMISSION_DENIED"), line
            assert kv["reason"] == '"uid"', line
            assert "CAP_SYS_PTRACE" in line
            assert t.agent_files() == 0
            # the target's own uid may, and its Agent serves as that uid
            rc, kv, line = drive(t.pid, agent_path=lib, argv0=drv, user=NOBODY)
            assert rc == 0 and kv["injected"] == "1", line
            assert hello(t.pid, uid=NOBODY)["features"] & F_INJECTED
            t.check()


def test_refused_untrusted_agent():
    with tempfile.TemporaryDirectory() as d, Target("blocked") as t:
        lib = os.path.join(d, "libxprobe.so")
        shutil.copy(agent(), lib)
        os.chmod(lib, 0o666)
        rc, kv, line = drive(t.pid, agent_path=lib)
        assert rc == 4 and kv["reason"] == '"agent_untrusted"', line
        assert "writable by group or others" in line
        assert t.agent_files() == 0
        t.check()


def test_200_cycles_one_target():
    with Target("blocked") as t:
        fds = t.fds()
        rc, kv, line = drive(t.pid, "--cycles", 200)
        assert rc == 0, line
        assert line.startswith("cycles 200 failures 0 injected 1 "), line
        assert int(kv["features"], 16) & F_INJECTED
        facts = t.check()
        assert facts["agent_maps"] == 1 and t.agent_files() == 1
        assert t.fds() == fds
        assert t.stderr() == ""
        # the target stood still well under 5 ms a cycle (median)
        assert int(kv["stopped_median_ns"]) < 5000000, line
