# SPDX-License-Identifier: Apache-2.0
"""A target in its own PID namespace (unshare --pid --fork): xprobe is given
the PID it sees (the global one); BPF filters and numbers the target in its
own namespace (bpf_get_ns_current_pid_tgid), so events carry the ids the
target sees itself (pid 1 here), as the event model prescribes."""
from measure_live_helpers import Fixture, assert_released, fixture_path, measure_fixture


def in_pidns(argv):
    return Fixture(["unshare", "--pid", "--fork", "--kill-child"] + argv)


def test_uprobe_in_pid_namespace(xprobe):
    with in_pidns([fixture_path("live_sleeper"), "--calls", 3, "--sleep-ms", 10]) as fx:
        nspid = fx.ready["nspid"]
        assert len(nspid) == 2 and nspid[1] == 1 and fx.ready["pid"] == 1
        exe = fx.ready["exe"]
        res, done, run = measure_fixture(xprobe, fx, [
            "--pid", nspid[0], "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
            "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
            "--samples", 3, "--timeout-ms", 20000], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["measurement"]["samples"]["matched"] == 3
        assert doc["collection"]["host_events"] == 6
        for pair in doc["evidence"]:
            for side in ("start", "end"):
                assert pair[side]["pid"] == 1
                assert pair[side]["tid"] == fx.ready["tid"] == 1
            assert pair["latency_ns"] >= fx.ready["sleep_ns"]
        fx.quit()
    assert_released(run.progs, run.links)


def test_syscalls_in_pid_namespace(xprobe):
    with in_pidns([fixture_path("live_mmap"), "--calls", 9]) as fx:
        nspid = fx.ready["nspid"]
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", nspid[0], "--from", "syscall:munmap:entry", "--to", "syscall:munmap:exit",
            "--match", "exact", "--duration-ms", 1500], nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["measurement"]["samples"]["matched"] == 9
        assert doc["collection"]["host_events"] == 18
        addrs = done["workers"][0]["addresses"]
        for i, pair in enumerate(doc["evidence"]):
            assert pair["start"]["pid"] == 1 and pair["start"]["tid"] == 1
            assert pair["start"]["host"]["arguments"][0]["value"] == addrs[i]
        fx.quit()
