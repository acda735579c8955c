# SPDX-License-Identifier: Apache-2.0
"""Helpers of the target tests (test_validate.py, test_doctor.py,
test_discover.py): start a fixture that prints its own addresses
("addr <name> 0x<hex>" ... "ready"), run xprobe as another user, make a
private tracefs mount, spawn a process at a chosen PID (ns_last_pid).
The process helpers all test families share are tests/pylib/proc_helpers.py.
"""
import contextlib
import os
import subprocess
import tempfile
import time

from proc_helpers import (NOBODY, PY311, copy_for_other_users, other_user_dir,  # noqa: F401
                          start_time, stop_process)
from proc_helpers import fixture_path as fx


def canonical(path):
    return os.path.realpath(path)


class Target:
    """A fixture process; .addrs maps the names it printed to addresses."""

    def __init__(self, argv, user=None, env=None, ready="ready"):
        self.argv = [str(a) for a in argv]
        kw = {}
        if user is not None:
            kw = {"user": user, "group": user, "extra_groups": []}
        self.p = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1, env=env, **kw)
        self.pid = self.p.pid
        self.addrs = {}
        self.lines = []
        while True:
            line = self.p.stdout.readline()
            assert line, "fixture %r ended before %r: %r" % (self.argv, ready, self.lines)
            self.lines.append(line)
            if line.strip() == ready:
                break
            if line.startswith("addr "):
                body = line[5:].rstrip("\n")
                sep = "\t" if "\t" in body else " "
                name, addr = body.rsplit(sep, 1)
                self.addrs[name] = int(addr, 16)

    def stop(self):
        stop_process(self.p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def python_target(user=None, extra=""):
    """Debian's CPython (GC USDT markers), waiting on stdin."""
    code = "import sys%s; print('ready', flush=True); sys.stdin.read()" % extra
    return Target([PY311, "-c", code], user=user)


def run_as(xprobe, uid, *args, env=None, schema_name=None):
    """xprobe as another user, JSON validated like Xprobe.run.  @xprobe is
    one that user can run (proc_helpers.other_user_xprobe)."""
    return xprobe.run(*args, env=env, schema_name=schema_name, timeout=60, user=uid)


@contextlib.contextmanager
def private_tracefs():
    """A tracefs instance mounted on a temporary directory (root)."""
    d = tempfile.mkdtemp(prefix="xp-tracefs-")
    subprocess.run(["mount", "-t", "tracefs", "none", d], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", d], check=True)
        os.rmdir(d)


@contextlib.contextmanager
def cuda_named_libs(*names):
    """Copies of a fixture library under CUDA-like names (libcudart.so.12,
    libcupti.so.13, libxprobe.so.0 ...) for a target to dlopen."""
    with other_user_dir() as d:
        yield [copy_for_other_users(d, fx("libtarget_shlib.so"), n) for n in names]


def spawn_at_pid(pid, argv, attempts=50):
    """Start argv so that it gets PID pid (ns_last_pid, root); None when
    other processes keep taking the PID first."""
    for _ in range(attempts):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
        time.sleep(0.01)
    return None
