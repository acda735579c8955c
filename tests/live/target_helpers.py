# SPDX-License-Identifier: Apache-2.0
"""Helpers of the target tests (test_validate.py, test_doctor.py,
test_discover.py): start a fixture that prints its own addresses
("addr <name> 0x<hex>" ... "ready"), run xprobe as another user, make a
private tracefs mount, spawn a process at a chosen PID (ns_last_pid).
"""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time

import xprobe_test

PY311 = "/usr/bin/python3.11"
NOBODY = 65534


def fx(name):
    return os.path.join(xprobe_test.fixtures_dir(), name)


def canonical(path):
    return os.path.realpath(path)


def start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


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
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def python_target(user=None, extra=""):
    """Debian's CPython (GC USDT markers), waiting on stdin."""
    code = "import sys%s; print('ready', flush=True); sys.stdin.read()" % extra
    return Target([PY311, "-c", code], user=user)


def run_as(xprobe, uid, *args, env=None, schema_name=None):
    """xprobe as another user, JSON validated like Xprobe.run."""
    argv = [xprobe.binary] + [str(a) for a in args] + ["--json", "--non-interactive", "--no-color"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, user=uid, group=uid,
                       extra_groups=[], env=env)
    doc = json.loads(p.stdout)
    if doc.get("ok") is False:
        xprobe_test.validate(doc, "error")
    else:
        xprobe_test.validate(doc, schema_name or xprobe_test.SUCCESS_SCHEMA[args[0]])
    return xprobe_test.Result(argv, p.returncode, p.stdout, p.stderr, doc)


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
    d = tempfile.mkdtemp(prefix="xp-cudalibs-")
    os.chmod(d, 0o755)
    paths = []
    for n in names:
        p = os.path.join(d, n)
        shutil.copy(fx("libtarget_shlib.so"), p)
        paths.append(p)
    try:
        yield paths
    finally:
        shutil.rmtree(d)


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
