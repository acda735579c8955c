# SPDX-License-Identifier: Apache-2.0
"""A process whose main thread exited (pthread_exit) while another thread
runs on is a live target for every command: its identity, maps, exe, root
and namespaces are read through a live thread (src/process/procfs.h, "A
zombie leader"), its uprobes opened on one; only a process with no live
thread left is TARGET_EXITED.

Before, every command refused it: "target process P has exited (it is a
zombie)".  The fixture (tests/fixtures/live_zombie_leader) calls
xp_fx_zl_work() (2 ms each) and getppid() N times after "go", timing them.
"""
from measure_live_helpers import Fixture, LiveRun, fixture_path, measure_fixture

CALLS = 20


def zombie_leader():
    fx = Fixture([fixture_path("live_zombie_leader"), "--calls", CALLS])
    with open("/proc/%d/stat" % fx.pid) as f:
        assert f.read().rsplit(")", 1)[1].split()[0] == "Z"  # the leader is gone
    return fx


def work_sel(fx, end):
    return "uprobe:%s:xp_fx_zl_work:%s" % (fx.ready["exe"], "return" if end else "entry")


def test_validate_and_measure_a_uprobe(xprobe):
    with zombie_leader() as fx:
        res = xprobe.run("validate", "--pid", fx.pid, "--from", work_sel(fx, 0),
                         "--to", work_sel(fx, 1), "--match", "stack-nested")
        assert res.rc == 0 and res.doc["valid"] is True, res
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", work_sel(fx, 0), "--to", work_sel(fx, 1),
            "--match", "stack-nested", "--samples", CALLS, "--timeout-ms", 10000], nlinks=2)
        fx.quit()
    assert res.rc == 0, res
    assert res.doc["measurement"]["samples"]["matched"] == CALLS
    assert all(p["start"]["tid"] == fx.ready["worker_tid"] for p in res.doc["evidence"])


def test_measure_a_syscall_and_its_histogram(xprobe):
    with zombie_leader() as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "syscall:getppid:entry", "--to", "syscall:getppid:exit",
            "--match", "exact", "--samples", CALLS, "--timeout-ms", 10000], nlinks=2)
        assert res.rc == 0, res
        assert res.doc["measurement"]["samples"]["matched"] == CALLS
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from", work_sel(fx, 0),
                      "--to", work_sel(fx, 1), "--match", "stack-nested", "--duration-ms", 1500)
        run.wait_armed(2)
        fx.go()
        done = fx.done()
        res = run.finish(schema_name="latency-histogram-result")
        fx.quit()
    assert res.rc == 0, res
    assert res.doc["histogram"]["stats"]["count"] == CALLS, res.doc
    assert abs(res.doc["histogram"]["stats"]["sum_ns"] - done["work_ns"]) < 0.05 * done["work_ns"]


def test_inventories(xprobe):
    with zombie_leader() as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 1500)
        run.wait_armed(2)
        fx.go()
        fx.done()
        res = run.finish(schema_name="syscall-aggregate-result")
        assert res.rc == 0, res
        rows = {g["name"]: g for g in res.doc["inventory"]["groups"]}
        assert rows["getppid"]["matched_exits"] == CALLS
        res = xprobe.run("validate", "--pid", fx.pid, "--cpu-sample",
                         schema_name="inventory-validation")
        assert res.rc == 0, res
        fx.quit()


def test_exited_once_no_thread_is_left(xprobe):
    with zombie_leader() as fx:
        fx.quit()
        fx.p.wait()
        res = xprobe.run("validate", "--pid", fx.pid, "--from", "syscall:getppid:entry",
                         "--to", "syscall:getppid:exit", "--match", "exact")
        assert res.rc == 3, res
        assert res.error["code"] in ("TARGET_NOT_FOUND", "TARGET_EXITED"), res
