# SPDX-License-Identifier: Apache-2.0
"""Online injection of the real Agent (build/lib/libxprobe.so) into live
targets, through src/agent/agent_inject.c, driven by the driver mode of the
unit test binary (test_agent_inject --inject PID AGENT ...; measure's
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
import tempfile
import time

import pytest

from inject_helpers import (F_HOST_MONOTONIC, F_INJECTED, REPLY, REQ, THIRD_UID, Target, agent,
                            drive, driver, hello)
from proc_helpers import NOBODY, copy_for_other_users, fixture_path, other_user_dir, start_time

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
        assert rc == 0 and kv["injected"] == "0" and kv["remote_calls"] == "3", line
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
        # how long the target stood still is bench/bench_inject.sh's to
        # measure (a timed assertion fails on a loaded machine): here only
        # that every cycle reported a stop
        assert int(kv["stopped_median_ns"]) > 0, line


def test_refused_connections_do_not_flood_the_programs_stderr():
    """The Agent writes into the traced program's stderr: of each reason a
    refused connection has (too many open, another user), the first line,
    then at most one a minute with the count held back.  Before: one line
    per refusal (5,000 lines, 430 KB in 0.6 s from a same-user flood)."""
    import socket as socketmod
    with Target("blocked") as t:
        rc, kv, line = drive(t.pid)
        assert rc == 0, line
        path = hello(t.pid)["path"]
        held = []
        for _ in range(8):  # the Agent's connection table, full
            s = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_SEQPACKET)
            s.settimeout(5)
            s.connect(path)
            # a HELLO answered: this one holds a slot (and the first
            # HELLO's connection has surely been closed by now)
            s.send(REQ.pack(b"XPAGREQ\0", 1, 1, REQ.size, 0, 0, 0, 0, 0, bytes(304)))
            assert len(s.recv(4096)) == REPLY.size
            held.append(s)
        for _ in range(2000):
            s = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_SEQPACKET)
            try:
                s.connect(path)
                s.settimeout(2)
                assert s.recv(16) == b""  # refused: closed by the Agent
            except OSError:
                pass
            s.close()
        # another user, through a socket someone made reachable
        d = os.path.dirname(path)
        os.chmod(d, 0o755)
        os.chmod(path, 0o777)
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                try:
                    os.setgid(NOBODY)
                    os.setuid(NOBODY)
                    for _ in range(500):
                        s = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_SEQPACKET)
                        try:
                            s.connect(path)
                            s.settimeout(2)
                            s.recv(16)
                        except OSError:
                            pass
                        s.close()
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        os.chmod(d, 0o700)
        for s in held:
            s.close()
        time.sleep(0.2)
        lines = t.stderr().splitlines()
        full = [x for x in lines if "connections are open" in x]
        other = [x for x in lines if "only uid" in x]
        assert len(full) == 1 and len(other) == 1, lines
        assert len(lines) == 2, lines
        t.check()


def test_the_agents_refusal_reaches_the_cli():
    """Why the Agent would not serve reaches the CLI: a runtime directory
    it would refuse is refused before anything stops (the CLI checks it
    as the Agent would), and the Agent's own refusal is read back from its
    xprobe_last_error().  Before: "AT_SECURE, or XPROBE_AGENT=0" whatever
    the reason, the real one only in the target's stderr."""
    uid = THIRD_UID
    with other_user_dir() as d:
        prog = copy_for_other_users(d, fixture_path("inject_target"))
        lib = copy_for_other_users(d, agent())
        rdir = "/tmp/xprobe-agent-%d" % uid
        shutil.rmtree(rdir, ignore_errors=True)
        os.mkdir(rdir, 0o700)
        os.chown(rdir, NOBODY, NOBODY)  # someone else's
        try:
            with Target("blocked", prog=prog, user=uid) as t:
                rc, kv, line = drive(t.pid, agent_path=lib)
                assert rc == 4 and kv["reason"] == '"runtime_directory"', line
                assert "is owned by uid %d, not by the target's uid %d" % (NOBODY, uid) in line
                assert t.agent_files() == 0  # nothing was stopped or loaded
                t.check()
        finally:
            shutil.rmtree(rdir, ignore_errors=True)
        with Target("blocked", prefix=["env", "XPROBE_AGENT=0"], prog=prog, user=uid) as t:
            rc, kv, line = drive(t.pid, agent_path=lib)
            assert rc == 4 and kv["reason"] == '"agent_refused"', line
            assert "XPROBE_AGENT=0: the control socket is switched off" in line, line
            t.check()


def test_an_agent_the_targets_user_cannot_read_is_refused_before_any_stop():
    """The Agent must be readable (and every directory above it searchable)
    by the target's user: checked before a thread is stopped.  Before, a
    thread was stopped and the remote dlopen failed with "Permission
    denied"."""
    uid = THIRD_UID
    with other_user_dir() as d:
        prog = copy_for_other_users(d, fixture_path("inject_target"))
        private = os.path.join(d, "private")
        os.mkdir(private, 0o700)  # root's, not searchable by the target's user
        lib = os.path.join(private, "libxprobe.so")
        shutil.copy(agent(), lib)
        os.chmod(lib, 0o755)
        unreadable = os.path.join(d, "libxprobe-0600.so")
        shutil.copy(agent(), unreadable)
        os.chmod(unreadable, 0o600)
        with Target("blocked", prog=prog, user=uid) as t:
            for path, what in ((lib, "cannot search the directory %s" % private),
                               (unreadable, "cannot read %s" % unreadable)):
                rc, kv, line = drive(t.pid, agent_path=path)
                assert rc == 4 and kv["reason"] == '"agent_unreadable"', line
                assert what in line, line
                assert kv.get("stopped_ns") in (None, "0"), line
            assert t.agent_files() == 0
            t.check()
