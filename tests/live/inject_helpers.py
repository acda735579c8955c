# SPDX-License-Identifier: Apache-2.0
"""What the injection tests share (test_inject.py, test_inject_kill.py):
the fixture tests/fixtures/inject_target as a Target (its tids, its
self-check, its stderr), the unit test binary's driver mode that injects
through src/agent/agent_inject.c (drive), and one HELLO on the socket
the Agent serves, packed by hand (hello).
"""
import os
import socket
import struct
import subprocess
import tempfile
import time

import xprobe_test
from proc_helpers import fixture_path, start_time

THIRD_UID = 65533  # neither root nor nobody: the injector that may not ptrace
F_HOST_MONOTONIC = 0x4
F_INJECTED = 0x8
REQ = struct.Struct("<8sIIIIQQII304s")
REPLY = struct.Struct("<8sIIIiIIIIQIIQQQQQQQQQII256s")
assert REQ.size == 352 and REPLY.size == 392


def driver():
    return os.path.join(xprobe_test.build_dir(), "tests", "test_agent_inject")


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
