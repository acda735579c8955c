# SPDX-License-Identifier: Apache-2.0
"""`measure --histogram` on live fixtures (root, eBPF; no skips).

live_hist makes known numbers of calls with known sleeps and prints every
duration it measured itself; live_hist_gc.py makes known numbers of
collections of each generation.  The figures are the fixtures':

- counts are exact (pairs, starts, ends, per group);
- min and max lie within the probe cost below the fixture's own (the
  kernel's clock reads sit inside the fixture's, by at most the two probe
  hits: PROBE_NS allows for them and a little scheduling);
- each percentile lies within its reported relative error bound (itself
  below the scheme's 1/32) of the fixture's nearest-rank value, after the
  same probe allowance.

Every document is validated against latency-histogram-result (or
inventory-validation for validate), and every run's BPF programs and
links are gone afterwards.
"""
import json
import os
import signal
import time

import pytest

from measure_live_helpers import (FIXTURE_SRC, PY311, Fixture, LiveRun, assert_released,
                                  fixture_path, hist_nlinks, link_env, uprobe_session)

SCHEMA = "latency-histogram-result"
PROBE_NS = 300_000  # the two probes' cost and a little scheduling, far above both
PCTS = [50.0, 90.0, 95.0, 99.0, 99.9]
PLAN = "1000:40,2000:30,5000:20,10000:8,20000:2"  # us:calls, 100 calls


def hist_fixture(*args):
    return Fixture([fixture_path("live_hist")] + [str(a) for a in args])


def sel(fx, fn, end):
    return "uprobe:%s:%s:%s" % (fx.ready["exe"], fn, "return" if end else "entry")


def nested_args(fx, fn="xp_hist_call"):
    return ["--from", sel(fx, fn, False), "--to", sel(fx, fn, True), "--match",
            "stack-nested"]


def run_hist(xprobe, fx, args, duration=3000, go=True, json_mode=True, env=None):
    """measure --histogram in the background, armed, then one round of the
    fixture; returns (Result, the fixture's done line, the run)."""
    argv = ["--pid", fx.pid, "--histogram"] + list(args)
    if duration:
        argv += ["--duration-ms", duration]
    run = LiveRun(xprobe, *argv, json_mode=json_mode, env=env)
    run.wait_armed(hist_nlinks(argv, env))
    done = None
    if go:
        fx.go()
        done = fx.done()
    res = run.finish(schema_name=SCHEMA)
    return res, done, run


def nearest_rank(sorted_vals, pct):
    n = len(sorted_vals)
    rank = max(1, -(-int(round(pct * 10)) * n // 1000))
    return sorted_vals[rank - 1]


def check_stats(h, durations):
    """Exact count; extremes and percentiles against the fixture's own."""
    st = h["stats"]
    vals = sorted(durations)
    assert st["count"] == len(vals)
    assert sum(b["count"] for b in h["buckets"]) == st["count"]
    assert vals[0] - PROBE_NS <= st["min_ns"] <= vals[0], (st, vals[0])
    assert vals[-1] - PROBE_NS <= st["max_ns"] <= vals[-1], (st, vals[-1])
    assert sum(vals) - PROBE_NS * len(vals) <= st["sum_ns"] <= sum(vals)
    assert st["mean_ns"] == st["sum_ns"] / st["count"]
    for b in h["buckets"]:
        assert b["lower_ns"] < b["upper_ns"] and b["count"] > 0
        assert b["upper_ns"] - b["lower_ns"] <= max(1, b["lower_ns"] / 16)
    assert [p["percentile"] for p in h["percentiles"]] == PCTS
    for p in h["percentiles"]:
        truth = nearest_rank(vals, p["percentile"])
        e = p["relative_error_bound"]
        assert e < 1 / 32
        assert (truth - PROBE_NS) * (1 - e) <= p["value_ns"] <= truth * (1 + e), (p, truth)
        assert p["bucket_lower_ns"] <= p["value_ns"] < p["bucket_upper_ns"] or \
            p["value_ns"] in (st["min_ns"], st["max_ns"])


def check_accounting(doc):
    c = doc["collection"]
    assert c["pairs"] == doc["histogram"]["stats"]["count"]
    assert c["unpaired_starts"] == c["superseded"] + c["open_at_end"] + c["thread_exit_open"]
    assert c["starts"] == (c["pairs"] + c["unpaired_starts"] + c["inflight_overflow"]
                           + c["depth_overflow"])
    assert c["ends"] == c["pairs"] + c["unpaired_ends"]
    groups = doc["histogram"]["groups"]
    if doc["histogram"]["group_by"] != "none":
        assert sum(g["stats"]["count"] for g in groups) + c["group_overflow"] + \
            c["key_unreadable"] == c["pairs"]
        counts = [(-g["stats"]["count"], g["key"]) for g in groups]
        assert counts == sorted(counts)
        assert c["groups"] == len(groups) <= c["group_capacity"]
    else:
        assert groups == [] and c["group_capacity"] is None
    lost = c["inflight_overflow"] + c["depth_overflow"] + c["group_overflow"] + \
        c["key_unreadable"] + c["minmax_contended"]
    assert c["completeness"] == ("partial" if lost else "complete")
    assert c["inflight_occupied"] <= c["inflight_capacity"]


def test_uprobe_counts_extremes_and_percentiles(xprobe):
    with hist_fixture("--plan", PLAN) as fx:
        res, done, run = run_hist(xprobe, fx, nested_args(fx))
        assert res.rc == 0, res
        doc = res.doc
        assert done["calls"] == 100
        assert doc["status"] == "completed"
        h, c = doc["histogram"], doc["collection"]
        assert h["target"]["pid"] == fx.pid
        assert h["match_policy"] == "stack_nested" and h["pairing"] == "per_thread_stack"
        assert [e["attachment"] for e in h["endpoints"]] == ["uprobe", "uretprobe"]
        assert h["endpoints"][0]["file_offset"] == int(fx.ready["call_offset"], 16)
        assert h["endpoints"][0]["binary_path"] == fx.ready["exe"]
        assert h["bucket_scheme"]["percentile_error_bound"] == 1 / 32
        check_stats(h, done["durations_ns"])
        check_accounting(doc)
        assert (c["starts"], c["ends"], c["pairs"]) == (100, 100, 100)
        assert c["unpaired_starts"] == 0 and c["unpaired_ends"] == 0
        assert c["stop_reason"] == "duration" and c["duration_ms"] == 3000
        assert c["timeout_ms"] is None and c["max_depth"] == 32
        assert c["completeness"] == "complete" and doc["warnings"] == []
        assert 2.9e9 < c["window_ns"] < 4e9
        # rank 100 of 100 is the maximum, exactly; the 20 ms calls are there
        p = {x["percentile"]: x["value_ns"] for x in h["percentiles"]}
        assert p[99.9] == h["stats"]["max_ns"] > 20e6
        fx.quit()
    assert_released(run.progs, run.links)


def test_recursion_pairs_innermost_first(xprobe):
    with hist_fixture("--recurse", 4, "--recurse-calls", 20, "--recurse-us", 1000) as fx:
        res, done, run = run_hist(xprobe, fx, nested_args(fx, "xp_hist_rec"))
        assert res.rc == 0, res
        # 5 levels per call, each level ~1 ms longer than the one it calls:
        # a pairing that crossed levels would not reproduce the durations
        assert done["calls"] == 100
        check_stats(res.doc["histogram"], done["durations_ns"])
        check_accounting(res.doc)
        assert res.doc["collection"]["depth_overflow"] == 0
        fx.quit()
    assert_released(run.progs, run.links)


def test_depth_bound_keeps_the_outer_calls(xprobe):
    # the per-thread stack's bound (the uprobe_multi path: a session link
    # keeps no stack, below)
    with hist_fixture("--recurse", 4, "--recurse-calls", 20, "--recurse-us", 1000) as fx:
        res, done, _ = run_hist(xprobe, fx, nested_args(fx, "xp_hist_rec") +
                                ["--max-depth", 3], env=link_env("multi"))
        assert res.doc["collection"]["uprobe_link"] == "uprobe_multi"
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        check_accounting(doc)
        # levels 4, 3, 2 are kept (~5, 4, 3 ms); the two innermost are not
        assert c["pairs"] == 60 and c["depth_overflow"] == 40 and c["unpaired_ends"] == 40
        assert c["max_depth"] == 3 and c["completeness"] == "partial"
        levels = done["levels_ns"]
        assert [len(x) for x in levels] == [20] * 5
        check_stats(doc["histogram"], levels[2] + levels[3] + levels[4])
        assert [w["code"] for w in doc["warnings"]] == ["NESTING_DEPTH_EXCEEDED"]
        assert doc["warnings"][0]["details"] == {"depth_overflow": 40, "max_depth": 3}
        fx.quit()


def test_threads_coming_and_going_by_thread(xprobe):
    # 40 threads, 4 alive at a time: 8 slots suffice only because each
    # thread's slot goes when the thread ends
    with hist_fixture("--threads", 40, "--concurrency", 4, "--thread-calls", 5,
                      "--thread-us", 1000) as fx:
        res, done, run = run_hist(xprobe, fx, nested_args(fx) +
                                  ["--by", "thread", "--max-inflight", 8, "--max-groups", 64])
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        check_accounting(doc)
        assert c["pairs"] == 200 and c["inflight_overflow"] == 0
        assert c["thread_exit_open"] == 0 and c["inflight_occupied"] == 0
        groups = doc["histogram"]["groups"]
        assert sorted(g["key"] for g in groups) == sorted(done["tids"])
        assert len(groups) == 40
        for g in groups:
            assert g["stats"]["count"] == 5 and g["label"] == "tid %d" % g["key"]
            assert len(g["percentiles"]) == 5
        assert doc["histogram"]["group_key"]["kind"] == "thread_id"
        check_stats(doc["histogram"], done["durations_ns"])
        fx.quit()
    assert_released(run.progs, run.links)


def test_session_pairs_every_depth_and_thread(xprobe):
    """A session link pairs each return with its own call's entry (the
    cookie): recursion deeper than --max-depth and more threads inside
    the function than --max-inflight are all paired, and nothing is
    unpaired (docs/histograms.md, "Session uprobes")."""
    assert uprobe_session(link_env(None)), "this kernel (6.13+) has session uprobes"
    with hist_fixture("--recurse", 4, "--recurse-calls", 20, "--recurse-us", 1000) as fx:
        res, done, _ = run_hist(xprobe, fx, nested_args(fx, "xp_hist_rec") +
                                ["--max-depth", 3], env=link_env(None))
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        assert c["uprobe_link"] == "uprobe_session"
        check_accounting(doc)
        assert (c["starts"], c["pairs"]) == (100, 100)
        assert c["depth_overflow"] == 0 and c["unpaired_ends"] == 0 and c["open_at_end"] == 0
        assert c["completeness"] == "complete" and doc["warnings"] == []
        levels = done["levels_ns"]
        check_stats(doc["histogram"], [x for lv in levels for x in lv])
        fx.quit()
    with hist_fixture("--block", 6, "--block-ms", 300) as fx:
        res, done, _ = run_hist(xprobe, fx, nested_args(fx) + ["--max-inflight", 2],
                                env=link_env(None))
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        assert c["uprobe_link"] == "uprobe_session"
        check_accounting(doc)
        assert done["calls"] == 6
        assert c["pairs"] == 6 and c["inflight_overflow"] == 0 and c["unpaired_ends"] == 0
        assert c["inflight_occupied"] == 0 and c["completeness"] == "complete"
        fx.quit()


def test_inflight_overflow_is_counted(xprobe):
    # six threads inside the function at once, two slots (the per-thread
    # map of the uprobe_multi path)
    with hist_fixture("--block", 6, "--block-ms", 300) as fx:
        res, done, _ = run_hist(xprobe, fx, nested_args(fx) + ["--max-inflight", 2],
                                env=link_env("multi"))
        assert res.doc["collection"]["uprobe_link"] == "uprobe_multi"
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        check_accounting(doc)
        assert done["calls"] == 6
        assert c["pairs"] == 2 and c["inflight_overflow"] == 4 and c["unpaired_ends"] == 4
        assert c["completeness"] == "partial"
        w = [x for x in doc["warnings"] if x["code"] == "INFLIGHT_TABLE_FULL"]
        assert w and w[0]["details"] == {"inflight_capacity": 2, "inflight_overflow": 4}
        fx.quit()


def test_target_exit_mid_window_is_a_result(xprobe):
    with hist_fixture("--plan", "2000:25", "--exit-after-go") as fx:
        t0 = time.monotonic()
        res, done, run = run_hist(xprobe, fx, nested_args(fx), duration=20000)
        assert time.monotonic() - t0 < 10, "the exit ends the window"
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        assert doc["status"] == "target_exited" and c["stop_reason"] == "target_exited"
        assert c["pairs"] == 25 and c["window_ns"] < 10e9
        check_stats(doc["histogram"], done["durations_ns"])
        check_accounting(doc)
        fx.p.wait(timeout=5)
    assert_released(run.progs, run.links)


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_stop_request_without_duration_is_a_result(xprobe, signo):
    with hist_fixture("--plan", "1000:5", "--tick-us", 2000) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", *nested_args(fx))
        run.wait_armed(hist_nlinks(nested_args(fx)))
        fx.go()
        fx.done()
        time.sleep(1.0)
        run.signal(signo)
        res = run.finish(schema_name=SCHEMA)
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        assert doc["status"] == "cancelled" and c["stop_reason"] == "cancelled"
        assert c["duration_ms"] is None
        assert c["pairs"] >= 50, c  # 5 + ~1 s of 2 ms calls
        # the call in progress at the signal is open, or its end came after
        assert c["open_at_end"] <= 1 and c["unpaired_ends"] == 0
        check_accounting(doc)
    assert_released(run.progs, run.links)


def test_timeout_bounds_an_open_window(xprobe):
    with hist_fixture("--tick-us", 2000) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", *nested_args(fx),
                      "--timeout-ms", 1500)
        run.wait_armed(hist_nlinks(nested_args(fx)))
        fx.go()
        res = run.finish(schema_name=SCHEMA)
        assert res.rc == 0, res
        assert res.doc["status"] == "timed_out"
        assert res.doc["collection"]["stop_reason"] == "timeout"
        assert res.doc["collection"]["timeout_ms"] == 1500
        assert res.doc["collection"]["pairs"] > 10


def test_syscall_by_arg0_counts_each_fd(xprobe):
    with hist_fixture("--writes", "300:200") as fx:
        res, done, run = run_hist(xprobe, fx, [
            "--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact",
            "--by", "arg0"], duration=2000)
        assert res.rc == 0, res
        doc, h = res.doc, res.doc["histogram"]
        check_accounting(doc)
        assert h["match_policy"] == "exact" and h["pairing"] == "per_thread_lifecycle"
        assert [e["attachment"] for e in h["endpoints"]] == ["raw_tracepoint_sys_enter",
                                                              "raw_tracepoint_sys_exit"]
        assert [e["syscall_nr"] for e in h["endpoints"]] == [1, 1]
        assert h["group_key"]["kind"] == "syscall_arg0"
        g = {x["key"]: x for x in h["groups"]}
        assert done["writes"] == [300, 200]
        assert g[40]["stats"]["count"] == 300 and g[40]["label"] == "arg0 40"
        assert g[41]["stats"]["count"] == 200
        # anything else is the fixture's done line on stdout (fd 1)
        assert set(g) <= {40, 41, 1}
        assert sum(x["stats"]["count"] for x in h["groups"]) == h["stats"]["count"]
        assert doc["collection"]["max_depth"] is None
        fx.quit()
    assert_released(run.progs, run.links)


def test_group_table_full_is_counted(xprobe):
    with hist_fixture("--writes", "30:20") as fx:
        res, done, _ = run_hist(xprobe, fx, [
            "--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact",
            "--by", "arg0", "--max-groups", 1], duration=2000)
        assert res.rc == 0, res
        doc, c = res.doc, res.doc["collection"]
        check_accounting(doc)
        g = doc["histogram"]["groups"]
        assert len(g) == 1 and g[0]["key"] == 40 and g[0]["stats"]["count"] == 30
        assert c["group_overflow"] >= 20 and c["completeness"] == "partial"
        assert "HISTOGRAM_GROUPS_FULL" in [w["code"] for w in doc["warnings"]]
        assert doc["histogram"]["stats"]["count"] >= 50
        fx.quit()


def gc_fixture(gens="7,5,3"):
    return Fixture([PY311, os.path.join(FIXTURE_SRC, "live_hist_gc.py"), "--gens", gens])


def test_gc_pauses_by_generation(xprobe):
    with gc_fixture() as fx:
        res, done, run = run_hist(xprobe, fx, [
            "--from", "python:gc_start", "--to", "python:gc_end", "--match", "exact",
            "--by", "arg0"], duration=3000)
        assert res.rc == 0, res
        doc, h = res.doc, res.doc["histogram"]
        check_accounting(doc)
        assert [e["attachment"] for e in h["endpoints"]] == ["usdt", "usdt"]
        assert [e["symbol"] for e in h["endpoints"]] == ["gc__start", "gc__done"]
        assert h["group_key"]["kind"] == "usdt_arg1"
        by_gen = {g["key"]: g for g in h["groups"]}
        assert sorted(by_gen) == [0, 1, 2]
        for gen, n in done["collections"].items():
            g = by_gen[int(gen)]
            assert g["stats"]["count"] == n and g["label"] == "generation %s" % gen
            check_stats(g, done["durations_ns"][gen])
        assert h["stats"]["count"] == 15 and doc["collection"]["key_unreadable"] == 0
        fx.quit()
    assert_released(run.progs, run.links)


def test_gc_exact_events_still_carry_no_generation(xprobe, tmp_path):
    out = tmp_path / "gc.jsonl"
    with gc_fixture("2,2,2") as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "python:gc_start", "--to",
                      "python:gc_end", "--match", "exact", "--samples", 6,
                      "--events-out", out)
        run.wait_armed(2)
        fx.go()
        fx.done()
        res = run.finish()
        assert res.rc == 0, res
        events = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(events) == 12
        for e in events:
            assert e["host"]["arguments"] == [] and "generation" not in json.dumps(e)
        fx.quit()


def test_terminal_view(xprobe):
    with hist_fixture("--plan", PLAN) as fx:
        res, done, _ = run_hist(xprobe, fx, nested_args(fx), json_mode=False)
        assert res.rc == 0 and res.stderr == "", res
        lines = res.stdout.splitlines()
        assert lines[0].startswith("latency histogram of pid %d: " % fx.pid)
        assert "100 pairs in 3." in lines[1] and "stopped by duration, complete" in lines[1]
        bars = [x for x in lines if x.startswith("[") and x.endswith("|")]
        assert bars, res.stdout
        # power-of-two rows, first and last non-empty, counts summing to 100
        counts = [int(x.split("|")[0].split(")")[1]) for x in bars]
        assert counts[0] > 0 and counts[-1] > 0 and sum(counts) == 100
        assert max(x.count("@") for x in bars) == 40
        assert any(x.startswith("[1.05ms, 2.10ms)") for x in bars), bars
        assert any(x.startswith("p50 ") and "p99.9 " in x and "within" in x for x in lines)
        assert any(x.startswith("count 100  min ") for x in lines)
        fx.quit()


def test_policy_the_pair_does_not_take(xprobe):
    with hist_fixture() as fx:
        args = ["--from", sel(fx, "xp_hist_call", False), "--to",
                sel(fx, "xp_hist_call", True), "--match", "exact"]
        r = xprobe.run("measure", "--pid", fx.pid, "--histogram", *args, "--duration-ms", 100)
        assert r.rc == 1 and r.code == "INVALID_CORRELATION_POLICY", r
        assert r.error["details"]["recommended_policy"] == "stack-nested"
        v = xprobe.run("validate", "--pid", fx.pid, "--histogram", *args)
        assert v.rc == 0 and v.doc["valid"] is False
        assert v.doc["mode"] == "latency_histogram"
        assert [i["code"] for i in v.doc["issues"]] == ["INVALID_CORRELATION_POLICY"]
        assert v.doc["inventory"]["recommended_policy"] == "stack_nested"


def test_validate_histogram(xprobe):
    with hist_fixture() as fx:
        v = xprobe.run("validate", "--pid", fx.pid, "--histogram", *nested_args(fx),
                       "--by", "arg0")
        assert v.rc == 0, v
        d = v.doc
        assert d["valid"] is True and d["issues"] == [] and d["mode"] == "latency_histogram"
        inv = d["inventory"]
        assert inv["bpf"]["histogram_object_load"]["status"] == "available"
        assert inv["group_by"] == "arg0" and inv["group_key_kind"] == "uprobe_arg0"
        assert inv["endpoints"][1]["attachment"] == "uretprobe"
        assert d["requirements"] == {"needs_ebpf": True, "needs_perf_events": False,
                                     "target_mutation": False}
        v = xprobe.run("validate", "--pid", fx.pid, "--histogram", "--from",
                       "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact")
        assert v.rc == 0 and v.doc["valid"] is True, v
        assert v.doc["inventory"]["endpoints"][0]["attachment"] == "raw_tracepoint_sys_enter"
