# SPDX-License-Identifier: Apache-2.0
"""Process helpers every test family shares (tests/live/*_helpers.py,
tests/cli, bench/bench_inventory.sh): fixture paths, a process's start
time and descriptors, reaping a fixture, and what a test needs to run
something as another user.

Why copies for another user: the build tree may sit where other users
cannot enter (a checkout under root's 0700 home is the usual case), so
whatever an unprivileged test executes or reads (the xprobe binary and
its JSON plugin, a fixture, an input file) is copied into a fresh
world-readable temporary directory first, and the directory is removed
afterwards (other_user_dir, other_user_xprobe).

Standard library only (the benchmarks import it too); xprobe_test is
imported where a function needs it.
"""
import contextlib
import os
import shutil
import subprocess
import tempfile

PY311 = "/usr/bin/python3.11"
NOBODY = 65534  # the unprivileged user (and group) of Debian


def fixture_path(name):
    """A fixture program of the build under test ($XPROBE_BUILD)."""
    import xprobe_test
    return os.path.join(xprobe_test.fixtures_dir(), name)


def start_time(pid):
    """Field 22 of /proc/<pid>/stat (after the last ')'), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    return int(text[text.rindex(")") + 2:].split()[19])


def fd_targets(pid):
    """{fd: link target} of a process's descriptors ({} once it is gone)."""
    out = {}
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                out[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                pass
    except OSError:
        pass
    return out


def perf_fds(pid):
    """How many perf event descriptors a process holds."""
    return sum(1 for t in fd_targets(pid).values() if t == "anon_inode:[perf_event]")


def stop_process(p, timeout=5):
    """Reap a Popen: SIGTERM, then SIGKILL after @timeout s; close its pipes."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for f in (p.stdin, p.stdout, p.stderr):
        try:
            if f is not None:
                f.close()
        except Exception:
            pass


def _install(src, dst):
    os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
    shutil.copy2(src, dst)
    os.chmod(dst, 0o755)
    return dst


@contextlib.contextmanager
def other_user_dir():
    """A fresh directory every user can enter and read (0755, root's), under
    the system's temporary directory; removed with what it holds."""
    d = tempfile.mkdtemp(prefix="xp-other-user-")
    try:
        os.chmod(d, 0o755)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def copy_for_other_users(d, src, name=None):
    """A 0755 copy of file @src in @d (from other_user_dir), as @name."""
    return _install(src, os.path.join(d, name or os.path.basename(src)))


@contextlib.contextmanager
def other_user_xprobe(xprobe, *files):
    """(an Xprobe whose binary another user can run, [copies of @files]):
    the binary and its JSON plugin keep their layout (bin/xprobe,
    lib/xprobe/xprobe-json.so), so the copy loads its own plugin."""
    import xprobe_test
    with other_user_dir() as d:
        binary = _install(xprobe.binary, os.path.join(d, "bin", "xprobe"))
        plugin = os.path.join(os.path.dirname(os.path.dirname(xprobe.binary)), "lib", "xprobe",
                              "xprobe-json.so")
        if os.path.exists(plugin):
            _install(plugin, os.path.join(d, "lib", "xprobe", "xprobe-json.so"))
        yield xprobe_test.Xprobe(binary), [copy_for_other_users(d, f) for f in files]
