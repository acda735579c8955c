# SPDX-License-Identifier: Apache-2.0
"""Syscall pairs that signals, restarts and made-up syscall numbers cannot
fool (bpf/syscall_restart.bpf.h), in the exact mode, --histogram and
--syscall-aggregate alike.

The fixture (tests/fixtures/live_signals) reads one byte at a time from a
pipe while a SIGALRM handler with SA_RESTART fires at 1 kHz on that thread
(reads exit with -ERESTARTSYS and run again) and a SIGUSR2 handler without
it makes some reads return EINTR; another thread calls syscall(-1) every
200 us and never getppid.  It times each of its reads itself, from the
call to the return.  Every answer must be the program's own view: one
pair per read() call, ending in a byte or in EINTR, never in a restart
code; no getppid out of syscall(-1) or rt_sigreturn's exit (orig_ax -1).

Before: unused endpoint slots held -1, which rt_sigreturn's exit and
syscall(-1) carry: `syscall:read` on this program ended in INTERNAL
"records this collector cannot decode", `syscall:getppid` produced entry
events for a program that never calls it, and a restarted read counted
twice with an error of -512.
"""
import pytest

from measure_live_helpers import Fixture, LiveRun, fixture_path, measure_fixture

CALLS = 150
RESTARTS = (-512, -513, -514, -516)


def signals_fixture():
    return Fixture([fixture_path("live_signals"), "--calls", CALLS])


def test_exact_read_pairs_are_the_programs_calls(xprobe):
    with signals_fixture() as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "syscall:read:entry", "--to", "syscall:read:exit",
            "--match", "exact", "--duration-ms", 2500, "--max-events", 20000], nlinks=2)
        fx.quit()
    assert res.rc == 0, res
    assert done["alarms"] > CALLS and done["eintr"] > 0, done  # the signals did land
    pairs = [p for p in res.doc["evidence"] if p["start"]["tid"] == fx.ready["reader_tid"]]
    assert len(pairs) == CALLS, (len(pairs), done)
    rets = [p["end"]["host"]["return_value"] for p in pairs]
    assert not any(r in RESTARTS for r in rets), rets
    assert rets.count(1) == done["reads"] and rets.count(-4) == done["eintr"], (rets, done)
    # the same calls the program timed: its total, within 2% and 100 us a call
    total = sum(p["latency_ns"] for p in pairs)
    assert abs(total - done["read_ns"]) <= max(0.02 * done["read_ns"], 100000 * CALLS), (
        total, done["read_ns"])


def test_exact_getppid_never_called(xprobe):
    """syscall(-1) and rt_sigreturn's exit (orig_ax -1) are no getppid."""
    with signals_fixture() as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "syscall:getppid:entry", "--to", "syscall:getppid:exit",
            "--match", "exact", "--duration-ms", 2000, "--max-events", 20000], nlinks=2)
        fx.quit()
    assert done["enosys"] > 100, done
    assert res.rc == 1 and res.error["code"] == "NO_MATCHED_SAMPLES", res
    assert res.error["details"]["host_events"] == 0, res.error


def test_histogram_counts_the_programs_calls(xprobe):
    with signals_fixture() as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from", "syscall:read:entry",
                      "--to", "syscall:read:exit", "--match", "exact", "--by", "thread",
                      "--duration-ms", 2500)
        run.wait_armed(2)
        fx.go()
        done = fx.done()
        res = run.finish(schema_name="latency-histogram-result")
        fx.quit()
    assert res.rc == 0, res
    groups = {g["key"]: g["stats"] for g in res.doc["histogram"]["groups"]}
    reader = groups[fx.ready["reader_tid"]]
    assert reader["count"] == CALLS, (reader, done)
    assert abs(reader["sum_ns"] - done["read_ns"]) <= max(0.02 * done["read_ns"],
                                                          100000 * CALLS)


def test_syscall_aggregate_counts_the_programs_calls(xprobe):
    with signals_fixture() as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 2500)
        run.wait_armed(2)
        fx.go()
        done = fx.done()
        res = run.finish(schema_name="syscall-aggregate-result")
        fx.quit()
    assert res.rc == 0, res
    rows = {g["name"]: g for g in res.doc["inventory"]["groups"]}
    read = rows["read"]
    # the reader's calls, plus the main thread's read of stdin left open
    assert CALLS <= read["entries"] <= CALLS + 2, (read, done)
    assert read["matched_exits"] == CALLS, (read, done)
    assert read["errors"] == done["eintr"], (read, done)  # EINTR, never a restart code
    assert "getppid" not in rows


@pytest.mark.parametrize("mode", ["exact", "histogram"])
def test_restart_block_sleep_is_one_call(xprobe, mode):
    """nanosleep interrupted without a handler (SIGSTOP, SIGCONT) goes on as
    restart_syscall: one call from nanosleep's entry to restart_syscall's exit."""
    import os
    import signal
    import time
    with Fixture([fixture_path("live_sleeper"), "--calls", 1, "--sleep-ms", 300]) as fx:
        if mode == "exact":
            run = LiveRun(xprobe, "--pid", fx.pid, "--from", "syscall:clock_nanosleep:entry",
                          "--to", "syscall:clock_nanosleep:exit", "--match", "exact",
                          "--duration-ms", 2000)
        else:
            run = LiveRun(xprobe, "--pid", fx.pid, "--histogram",
                          "--from", "syscall:clock_nanosleep:entry",
                          "--to", "syscall:clock_nanosleep:exit", "--match", "exact",
                          "--duration-ms", 2000)
        run.wait_armed(2)
        fx.go()
        time.sleep(0.1)
        os.kill(fx.pid, signal.SIGSTOP)
        time.sleep(0.05)
        os.kill(fx.pid, signal.SIGCONT)
        done = fx.done()
        res = run.finish(schema_name="measurement-result" if mode == "exact"
                         else "latency-histogram-result")
        fx.quit()
    assert res.rc == 0, res
    if mode == "exact":
        assert res.doc["measurement"]["samples"]["matched"] == 1, res.doc
        lat = res.doc["evidence"][0]["latency_ns"]
        assert res.doc["evidence"][0]["end"]["host"]["return_value"] == 0
    else:
        assert res.doc["histogram"]["stats"]["count"] == 1, res.doc
        lat = res.doc["histogram"]["stats"]["sum_ns"]
    assert lat >= 300e6, (lat, done)
