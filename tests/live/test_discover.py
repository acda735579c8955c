# SPDX-License-Identifier: Apache-2.0
"""discover (issue #3): on this machine NVML is absent, so discover must
fail explicitly; the real NVML code path (dlopen, our prototypes, the
size-query protocol, per-PID UUID grouping, the process-tree filter,
identity, bounds) runs against the fake NVML library fixture with a real
process tree."""
import os
import subprocess
import time

import pytest

from target_helpers import fx, start_time


def fake_env(procs, fail=None):
    env = dict(os.environ, XPROBE_NVML_LIBRARY=fx("libtarget_fakenvml.so"),
               XPROBE_FAKE_NVML_PROCS=",".join("%d@%s" % p for p in procs))
    if fail:
        env["XPROBE_FAKE_NVML_FAIL"] = fail
    return env


class Tree:
    """root (sh) -> child (sh) -> grandchild (sleep); plus an unrelated sleep."""

    def __init__(self):
        self.root = subprocess.Popen(
            ["sh", "-c", "sh -c 'sleep 60 & echo g $!; wait' & echo c $!; wait"],
            stdout=subprocess.PIPE, text=True)
        got = dict(self.root.stdout.readline().split() for _ in range(2))
        self.child = int(got["c"])
        self.grandchild = int(got["g"])
        self.other = subprocess.Popen(["sleep", "60"])
        # wait until the grandchild exec'd sleep (a forked shell is dash
        # until then): by time, not by a count of reads, which a loaded
        # machine finishes first (CI saw /usr/bin/dash)
        sleep_exe = os.path.realpath("/bin/sleep")
        deadline = time.monotonic() + 10
        while True:
            try:
                if os.readlink("/proc/%d/exe" % self.grandchild) == sleep_exe:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the grandchild never ran sleep"
            time.sleep(0.005)

    def close(self):
        for pid in (self.grandchild, self.child):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        self.other.kill()
        self.other.wait()
        self.root.kill()
        self.root.wait()


@pytest.fixture
def tree():
    t = Tree()
    yield t
    t.close()


def test_no_nvml_is_an_error_not_an_empty_list(xprobe):
    env = dict(os.environ)
    env.pop("XPROBE_NVML_LIBRARY", None)
    r = xprobe.run("discover", "--pid", os.getpid(), env=env)
    assert r.rc == 1 and r.code == "CUPTI_NOT_AVAILABLE", r
    e = r.error
    assert "NVML is not available" in e["message"]
    assert e["details"]["nvml_library"] == "libnvidia-ml.so.1"
    assert e["recoverable"] is True
    assert any("doctor" in h for h in e["hints"])
    assert any("validate --pid" in h for h in e["hints"])
    r = xprobe.run("discover", "--pid", os.getpid(), json_mode=False, env=env)
    assert r.rc == 1 and r.stdout == ""
    assert r.stderr.startswith("CUPTI_NOT_AVAILABLE: NVML is not available")


def test_candidates_are_the_tree(xprobe, tree):
    procs = [(tree.grandchild, "GPU-b"), (tree.child, "GPU-a"), (tree.grandchild, "GPU-a"),
             (tree.other.pid, "GPU-a"), (tree.grandchild, "GPU-b")]
    r = xprobe.run("discover", "--pid", tree.root.pid, env=fake_env(procs))
    assert r.rc == 0, r
    d = r.doc
    assert d["root"] == {"pid": tree.root.pid, "process_start_time": start_time(tree.root.pid)}
    assert d["limit"] == 200 and d["total_candidates"] == 2 and d["truncated"] is False
    c = d["candidates"]
    assert [x["target"]["pid"] for x in c] == sorted([tree.child, tree.grandchild])
    by = {x["target"]["pid"]: x for x in c}
    g = by[tree.grandchild]
    assert g["target"]["process_start_time"] == start_time(tree.grandchild)
    assert g["parent_pid"] == tree.child
    assert g["executable"] == os.path.realpath("/bin/sleep")
    assert g["command_line"] == ["sleep", "60"]
    assert g["gpu_uuids"] == ["GPU-a", "GPU-b"]
    assert by[tree.child]["parent_pid"] == tree.root.pid
    assert by[tree.child]["gpu_uuids"] == ["GPU-a"]
    assert d["warnings"] == []


def test_root_itself_and_limit(xprobe, tree):
    procs = [(tree.root.pid, "GPU-a"), (tree.child, "GPU-a"), (tree.grandchild, "GPU-a")]
    r = xprobe.run("discover", "--pid", tree.root.pid, "--limit", 2, env=fake_env(procs))
    assert r.rc == 0, r
    d = r.doc
    assert d["total_candidates"] == 3 and d["truncated"] is True and d["limit"] == 2
    assert [x["target"]["pid"] for x in d["candidates"]] == sorted(
        [tree.root.pid, tree.child, tree.grandchild])[:2]
    r = xprobe.run("discover", "--pid", tree.child, env=fake_env(procs))
    assert [x["target"]["pid"] for x in r.doc["candidates"]] == sorted([tree.child, tree.grandchild])


def test_vanished_process_is_a_warning(xprobe, tree):
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = xprobe.run("discover", "--pid", tree.root.pid,
                   env=fake_env([(tree.child, "GPU-a"), (gone.pid, "GPU-a")]))
    assert r.rc == 0, r
    assert [x["target"]["pid"] for x in r.doc["candidates"]] == [tree.child]
    assert r.doc["warnings"][0]["code"] == "CANDIDATE_EXITED"
    assert r.doc["warnings"][0]["details"] == {"pid": gone.pid}


def test_no_gpu_processes_in_the_tree(xprobe, tree):
    r = xprobe.run("discover", "--pid", tree.root.pid, env=fake_env([(tree.other.pid, "GPU-a")]))
    assert r.rc == 0, r
    assert r.doc["candidates"] == [] and r.doc["total_candidates"] == 0


@pytest.mark.parametrize("fail,code,rc", [("init", "CUPTI_NOT_AVAILABLE", 1),
                                          ("count", "CUPTI_NOT_AVAILABLE", 1),
                                          ("procs", "CUPTI_NOT_AVAILABLE", 1),
                                          ("noperm", "PERMISSION_DENIED", 4)])
def test_nvml_failures(xprobe, tree, fail, code, rc):
    r = xprobe.run("discover", "--pid", tree.root.pid,
                   env=fake_env([(tree.child, "GPU-a")], fail=fail))
    assert r.rc == rc and r.code == code, r
    assert r.error["details"]["nvml_library"] == fx("libtarget_fakenvml.so")


def test_limit_zero_and_missing_root(xprobe, tree):
    env = fake_env([(tree.child, "GPU-a")])
    r = xprobe.run("discover", "--pid", tree.root.pid, "--limit", 0, env=env)
    assert r.rc == 1 and r.code == "SESSION_LIMIT_EXCEEDED", r
    assert r.error["message"] == "discover limit must be greater than zero"
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = xprobe.run("discover", "--pid", gone.pid, env=env)
    assert r.rc == 3 and r.code == "TARGET_NOT_FOUND", r
    r = xprobe.run("discover", "--pid", tree.root.pid, "--limit", "x", env=env)
    assert r.rc == 2
    r = xprobe.run("discover", env=env)
    assert r.rc == 2


def test_human_summary(xprobe, tree):
    r = xprobe.run("discover", "--pid", tree.root.pid, json_mode=False,
                   env=fake_env([(tree.child, "GPU-a")]))
    assert r.rc == 0 and r.stderr == ""
    assert r.stdout.startswith("1 CUDA process under pid %d" % tree.root.pid)
    assert "pid %d (parent %d)" % (tree.child, tree.root.pid) in r.stdout
