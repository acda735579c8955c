# SPDX-License-Identifier: Apache-2.0
"""`measure --histogram` with cuda: NVTX endpoints (issue 20, section 3):
the Agent pairs the ranges inside the target and counts each latency into
the log-linear buckets (include/xprobe/agent.h, MODE_HISTOGRAM); no record
leaves the target.

The target is tests/fixtures/live_nvtx under NVTX_INJECTION64_PATH (the
Agent loaded by NVTX's own injection protocol).  Every figure checked
comes from the fixture's own account (its done line): the "step" ranges it
made, the other names it made (which must not be counted), the shortest
and longest interval it timed around each range, its threads.  Every
document is validated against schemas/ (the xprobe fixture and LiveRun
do it).
"""
import json
import os
import subprocess

import pytest

from agent_helpers import STEP, NvtxFixture, nvtx_env, wait_state
from measure_live_helpers import LiveRun

US = 1000
SCHEMA = "latency-histogram-result"


def measure_armed(xprobe, fx, args, timeout=60):
    """measure in the background, the fixture's work once the Agent is
    armed; (Result, the fixture's done line)."""
    run = LiveRun(xprobe, *args)
    wait_state(fx.pid, "active", run=run)
    fx.go()
    done = fx.done()
    return run.finish(timeout=timeout, schema_name=SCHEMA), done


def args(fx, *extra):
    return ["--pid", fx.pid, "--histogram"] + STEP + ["--match", "exact"] + [str(a)
                                                                            for a in extra]


def check_dist(h, done, work_us, count):
    """count pairs, each inside the interval the fixture timed around it."""
    st = h["stats"]
    assert st["count"] == count, (st, done)
    assert st["min_ns"] >= work_us * US, (st, done)
    assert st["max_ns"] <= done["max_ns"], (st, done)
    assert work_us * US * count <= st["sum_ns"] <= done["max_ns"] * count
    assert sum(b["count"] for b in h["buckets"]) == count
    lo, hi = h["buckets"][0], h["buckets"][-1]
    assert lo["lower_ns"] <= st["min_ns"] < lo["upper_ns"]
    assert hi["lower_ns"] <= st["max_ns"] < hi["upper_ns"]
    p = {x["percentile"]: x for x in h["percentiles"]}
    assert st["min_ns"] <= p[50.0]["value_ns"] <= st["max_ns"]


@pytest.mark.parametrize("clock", ["tsc", "monotonic"])
def test_thread_ranges_by_name(xprobe, clock):
    """push/pop "step" on the main thread, with 150 ranges of other names
    the name rule rejects in the target: the total and the one "step"
    group hold exactly the fixture's ranges.  Timed with the TSC (its rate
    measured at ARM) or, with XPROBE_INSPECT_CLOCK=monotonic,
    clock_gettime."""
    env = nvtx_env({"XPROBE_INSPECT_CLOCK": clock})
    with NvtxFixture("thread", iters=50, env=env) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1500, "--by", "name"))
        assert res.rc == 0, res
        assert done["ranges"] == 50 and done["rejected"] == 150
        h = res.doc["histogram"]
        assert h["pairing"] == "nvtx_range" and h["group_by"] == "name"
        assert h["group_key"]["kind"] == "name"
        assert [e["attachment"] for e in h["endpoints"]] == ["agent", "agent"]
        check_dist(h, done, 200, 50)
        assert len(h["groups"]) == 1
        g = h["groups"][0]
        assert g["name"] == "step" and g["name_complete"] is True and g["label"] == "step"
        check_dist(g, done, 200, 50)
        col = res.doc["collection"]
        assert col["completeness"] == "complete" and col["pairs"] == 50
        assert col["inflight_overflow"] == 0 and col["group_overflow"] == 0
        assert col["inflight_occupied"] == 1  # one thread pushed
        fx.quit()


def test_nested_two_threads_by_thread(xprobe):
    """"step" at level 1 inside "outer" on two threads at once: paired by
    thread and level; --by thread gives each thread its 40 ranges."""
    with NvtxFixture("nested", iters=40, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1500,
                                                   "--by", "thread"))
        assert res.rc == 0, res
        assert done["ranges"] == 80 and done["levels_ok"] is True
        h = res.doc["histogram"]
        check_dist(h, done, 300, 80)
        assert sorted(g["stats"]["count"] for g in h["groups"]) == [40, 40]
        assert len({g["key"] for g in h["groups"]}) == 2
        assert all(g["label"] == "tid %d" % g["key"] for g in h["groups"])
        fx.quit()


def test_process_ranges_across_threads(xprobe):
    """Ranges started on thread B and ended on the main thread: paired by
    range id; --by thread groups them under the starting thread."""
    with NvtxFixture("process", iters=30, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1500,
                                                   "--by", "thread"))
        assert res.rc == 0, res
        assert done["ranges"] == 30
        h = res.doc["histogram"]
        check_dist(h, done, 300, 30)
        assert [g["key"] for g in h["groups"]] == [done["tid_b"]]
        assert res.doc["collection"]["open_at_end"] == 0
        fx.quit()


def test_intervals_add_up(xprobe):
    """--interval-ms: JSON Lines, one interval document per read, the
    result last; the intervals' counts add up to the result's."""
    with NvtxFixture("thread", iters=40, work_us=2000) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1600,
                                                   "--interval-ms", 200))
        assert res.rc == 0, res
        ivs = res.doc["_intervals"]
        assert len(ivs) >= 5, len(ivs)
        assert all(x["status"] == "interval" for x in ivs)
        assert res.doc["histogram"]["stats"]["count"] == done["ranges"] == 40
        # the ranges after the last read are in the result only
        assert 0 < sum(x["histogram"]["stats"]["count"] for x in ivs) <= 40
        fx.quit()


def test_inflight_bound_and_metrics(xprobe, tmp_path):
    """--max-inflight 1: the first thread to push gets the one stack, the
    other thread's pushes are not stored (INFLIGHT_TABLE_FULL, partial);
    --metrics-out writes the Prometheus file with the pairs counted."""
    prom = tmp_path / "nvtx.prom"
    with NvtxFixture("nested", iters=20, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1500,
                                                   "--max-inflight", 1,
                                                   "--metrics-out", prom))
        assert res.rc == 0, res
        assert done["ranges"] == 40
        col = res.doc["collection"]
        h = res.doc["histogram"]
        assert h["stats"]["count"] == 20  # one thread's ranges
        assert col["inflight_overflow"] >= 1 and col["completeness"] == "partial"
        assert col["inflight_capacity"] == 1 and col["inflight_occupied"] == 1
        assert "INFLIGHT_TABLE_FULL" in [w["code"] for w in res.doc["warnings"]]
        text = prom.read_text()
        assert 'xprobe_latency_seconds_count{pid="%d"' % fx.pid in text
        assert "} 20\n" in text.split("xprobe_latency_seconds_count{")[1].split("\n")[0] + "\n"
        fx.quit()


def test_thread_churn_reuses_stacks(xprobe):
    """Threads that come and go give their stack back when they exit:
    with --max-inflight 2, 30 threads one after another (each pushes,
    pops and exits before the next starts) are all counted, none
    overflows, and at most the live threads hold a stack at the end."""
    with NvtxFixture("churn", iters=30, work_us=300) as fx:
        res, done = measure_armed(xprobe, fx, args(fx, "--duration-ms", 1500,
                                                   "--max-inflight", 2))
        assert res.rc == 0, res
        assert done["ranges"] == 30
        col = res.doc["collection"]
        check_dist(res.doc["histogram"], done, 300, 30)
        assert col["inflight_overflow"] == 0 and col["completeness"] == "complete", col
        assert col["inflight_occupied"] <= 1, col  # every worker has exited
        fx.quit()


def test_validate(xprobe):
    """validate --histogram with cuda: endpoints: validate's pair check is
    the answer (the Agent serves, NVTX is routed); no BPF object."""
    with NvtxFixture("thread", iters=1) as fx:
        r = xprobe.run("validate", "--pid", fx.pid, "--histogram", *STEP, "--match", "exact",
                       "--by", "name")
        assert r.rc == 0, r
        d = r.doc
        assert d["valid"] is True, d
        inv = d["inventory"]
        assert [e["attachment"] for e in inv["endpoints"]] == ["agent", "agent"]
        assert inv["group_by"] == "name" and inv["group_key_kind"] == "name"
        assert d["requirements"]["needs_ebpf"] is False
        fx.quit()


NVTX3 = "/usr/local/cuda/include"


@pytest.mark.skipif(not os.path.exists(os.path.join(NVTX3, "nvtx3", "nvToolsExt.h")),
                    reason="NVIDIA's nvtx3 headers are not installed (CUDA toolkit)")
def test_nvidia_nvtx3_headers(xprobe, tmp_path):
    """A program built with NVIDIA's own nvtx3 headers (their injection
    loader, not ours): the Agent pairs its ranges in the target and the
    histogram holds exactly its ranges, inside the times it measured."""
    exe = str(tmp_path / "nvtx3_ranges")
    src = os.path.join(os.path.dirname(__file__), "nvtx3_ranges.c")
    subprocess.run(["cc", "-O2", "-isystem", NVTX3, "-o", exe, src, "-ldl"], check=True)
    p = subprocess.Popen([exe, "25", "500"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=nvtx_env())
    try:
        assert p.stdout.readline().strip() == "ready"
        run = LiveRun(xprobe, "--pid", p.pid, "--histogram", *STEP, "--match", "exact",
                      "--duration-ms", 1500, "--by", "name")
        wait_state(p.pid, "active", run=run)
        p.stdin.write("go\n")
        p.stdin.flush()
        done = json.loads(p.stdout.readline())
        res = run.finish(schema_name=SCHEMA)
        assert res.rc == 0, res
        h = res.doc["histogram"]
        assert h["stats"]["count"] == done["ranges"] == 25
        assert 500 * US <= h["stats"]["min_ns"] and h["stats"]["max_ns"] <= done["max_ns"]
        assert [g["label"] for g in h["groups"]] == ["step"]
    finally:
        p.kill()
        p.wait()
