# SPDX-License-Identifier: Apache-2.0
"""Cleanup on every exit path of a live measurement: normal end, an error
after attaching, SIGTERM, SIGINT and SIGKILL of xprobe.  Afterwards none of
the BPF programs or links the run held exist (ids read from its fdinfo),
the target's code has no breakpoint left, and the target keeps working."""
import signal

from measure_live_helpers import Fixture, LiveRun, assert_released, fixture_path


def runtime_address(pid, path, file_offset):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6 or parts[5] != path:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            off = int(parts[2], 16)
            if off <= file_offset < off + (end - start):
                return start + file_offset - off
    raise AssertionError("%s+0x%x is not mapped" % (path, file_offset))


def code_byte(pid, addr):
    with open("/proc/%d/mem" % pid, "rb") as f:
        f.seek(addr)
        return f.read(1)[0]


def start_hot_run(xprobe, fx, *extra):
    exe = fx.ready["exe"]
    run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_hot:entry" % exe,
                  "--to", "uprobe:%s:xp_fx_hot:return" % exe, "--match", "stack-nested",
                  *extra)
    run.wait_armed(2)
    assert run.progs and run.links
    return run


def target_still_works(fx):
    fx.go()
    done = fx.done()
    assert done["hot_calls"] > 0
    fx.quit()
    assert fx.p.returncode == 0


def check_signal(xprobe, signo):
    with Fixture([fixture_path("live_sleeper"), "--hot-calls", 3000]) as fx:
        addr = runtime_address(fx.pid, fx.ready["exe"], int(fx.ready["hot_offset"], 16))
        before = code_byte(fx.pid, addr)
        assert before == 0x55  # push %rbp
        run = start_hot_run(xprobe, fx, "--samples", 1000000, "--max-events", 200000,
                            "--timeout-ms", 60000)
        assert code_byte(fx.pid, addr) == 0xCC  # the uprobe's breakpoint
        fx.go()
        fx.done()
        run.signal(signo)
        res = run.finish(timeout=30)
        if signo == signal.SIGKILL:
            assert res.rc == -signal.SIGKILL
        else:
            # interrupted with pairs captured: a "cancelled" result
            assert res.rc == 0, res
            assert res.doc["status"] == "cancelled"
            assert res.doc["measurement"]["samples"]["matched"] > 0
        assert_released(run.progs, run.links)
        assert code_byte(fx.pid, addr) == before
        target_still_works(fx)


def test_cleanup_after_sigterm(xprobe):
    check_signal(xprobe, signal.SIGTERM)


def test_cleanup_after_sigint(xprobe):
    check_signal(xprobe, signal.SIGINT)


def test_cleanup_after_sigkill(xprobe):
    check_signal(xprobe, signal.SIGKILL)


def test_sigterm_before_any_pair(xprobe):
    with Fixture([fixture_path("live_sleeper"), "--calls", 0]) as fx:
        run = start_hot_run(xprobe, fx, "--samples", 5, "--timeout-ms", 60000)
        run.signal(signal.SIGTERM)
        res = run.finish(timeout=30)
        assert res.rc == 1
        assert res.code == "NO_MATCHED_SAMPLES"
        assert res.error["details"]["cancelled"] is True
        assert_released(run.progs, run.links)
        fx.quit()


def test_cleanup_after_normal_end_and_error(xprobe):
    with Fixture([fixture_path("live_sleeper"), "--hot-calls", 1000]) as fx:
        # normal end
        run = start_hot_run(xprobe, fx, "--samples", 10, "--timeout-ms", 20000)
        fx.go()
        fx.done()
        res = run.finish()
        assert res.rc == 0, res
        assert_released(run.progs, run.links)
        # an error after attaching: the capture fills in duration mode
        run = start_hot_run(xprobe, fx, "--duration-ms", 2000, "--max-events", 10)
        fx.go()
        fx.done()
        res = run.finish()
        assert res.code == "EVENT_RATE_TOO_HIGH", res
        assert_released(run.progs, run.links)
        target_still_works(fx)
