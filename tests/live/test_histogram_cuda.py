# SPDX-License-Identifier: Apache-2.0
"""`measure --histogram` with cuda: activity endpoints (issue 20, section
3): one kernel, memcpy or memset activity record is one pair (end -
start), counted by the CUPTI backend into the Agent's histograms inside
the target (include/xprobe/agent.h, MODE_HISTOGRAM); no record leaves it.

The target is the CUPTI TEST DOUBLE's program (tests/fixtures/
cupti_double), libxprobe preloaded or injected by measure.  The double's
durations are exact (end = start + DUR), so every figure is the fixture's
own: the calls its DONE lines report and the durations it asked for.
What real CUDA reports is tests/gpu/run.sh's to check, on a GPU.
"""
import pytest

from cuda_helpers import CuptiFixture, measure_cuda

SCHEMA = "latency-histogram-result"
WINDOW = ["--match", "exact", "--histogram", "--duration-ms", 1500]
KERNELS = ["--from", "cuda:kernel_start", "--to", "cuda:kernel_end"]


def run(xprobe, fx, args, work):
    return measure_cuda(xprobe, fx, args + WINDOW, work, schema_name=SCHEMA)


def exact(h, count, dur):
    """@count pairs of exactly @dur ns, in one bucket."""
    st = h["stats"]
    assert (st["count"], st["min_ns"], st["max_ns"], st["sum_ns"]) == (count, dur, dur,
                                                                      count * dur), st
    (b,) = h["buckets"]
    assert b["count"] == count and b["lower_ns"] <= dur < b["upper_ns"]


def groups(doc):
    return {g["label"]: g for g in doc["histogram"]["groups"]}


@pytest.mark.parametrize("mode", ["preload", "inject"])
def test_kernels_by_name(xprobe, mode):
    """Kernels grouped by name in the target: runtime and driver launches
    alike, a 188-byte name kept as its 127-byte prefix (name_complete
    false, the label ends in "...")."""
    longname = "k_" + "x" * 186
    work = ["launch 5 gemm 20000", "drv 3 flash 5000", "launch 2 %s 100" % longname]
    with CuptiFixture(mode) as fx:
        res, done = run(xprobe, fx, KERNELS + ["--by", "name"], work)
        assert res.rc == 0, res
        h = res.doc["histogram"]
        assert h["pairing"] == "cuda_activity_record" and h["group_by"] == "name"
        assert h["stats"]["count"] == 10 == sum(done.values())
        g = groups(res.doc)
        exact(g["gemm"], 5, 20000)
        exact(g["flash"], 3, 5000)
        cut = g[longname[:127] + "..."]
        assert cut["name"] == longname[:127] and cut["name_complete"] is False
        exact(cut, 2, 100)
        assert [x["stats"]["count"] for x in h["groups"]] == [5, 3, 2]
        col = res.doc["collection"]
        assert col["completeness"] == "complete" and col["pairs"] == 10
        fx.quit()


def test_kernel_filter_and_devices(xprobe):
    """The name rule runs in the target (flash never counted); --by device."""
    work = ["launch 4 gemm 1000", "launch 6 flash 9", "device 1", "launch 3 gemm 3000"]
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, ["--from", "cuda:kernel_start:name~^gemm$",
                                  "--to", "cuda:kernel_end:name~^gemm$", "--by", "device"],
                     work)
        assert res.rc == 0, res
        assert res.doc["histogram"]["stats"]["count"] == 7
        g = groups(res.doc)
        assert sorted(g) == ["device 0", "device 1"]
        exact(g["device 0"], 4, 1000)
        exact(g["device 1"], 3, 3000)
        assert g["device 1"]["key"] == 1
        fx.quit()


def test_kernels_by_stream(xprobe):
    work = ["launch 3 gemm 1000 1 1 1 1 1 1 7", "launch 2 gemm 4000 1 1 1 1 1 1 9"]
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, KERNELS + ["--by", "stream"], work)
        assert res.rc == 0, res
        g = groups(res.doc)
        assert sorted(g) == ["stream 7", "stream 9"], sorted(g)
        exact(g["stream 7"], 3, 1000)
        exact(g["stream 9"], 2, 4000)
        fx.quit()


def test_memcpy_kind_and_memset(xprobe):
    """A copy filter of one direction counts only those copies; memsets
    have their own histogram."""
    work = ["memcpy 4 1 4096 8000", "memcpy 2 2 64 500", "memset 3 0 512 3000"]
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, ["--from", "cuda:memcpy_start:kind=HtoD",
                                  "--to", "cuda:memcpy_end:kind=HtoD"], work)
        assert res.rc == 0, res
        exact(res.doc["histogram"], 4, 8000)
        fx.quit()
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, ["--from", "cuda:memset_start", "--to", "cuda:memset_end",
                                  "--by", "device"], work)
        assert res.rc == 0, res
        exact(res.doc["histogram"], 3, 3000)
        exact(groups(res.doc)["device 0"], 3, 3000)
        fx.quit()


def test_group_table_full(xprobe):
    """--max-groups 2 with three kernel names: the third name's pairs are
    in the total, counted in group_overflow, the result partial."""
    work = ["launch 2 a 100", "launch 2 b 100", "launch 3 c 100"]
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, KERNELS + ["--by", "name", "--max-groups", 2], work)
        assert res.rc == 0, res
        assert res.doc["histogram"]["stats"]["count"] == 7
        assert len(res.doc["histogram"]["groups"]) == 2
        col = res.doc["collection"]
        assert col["group_overflow"] == 3 and col["completeness"] == "partial"
        assert "HISTOGRAM_GROUPS_FULL" in [w["code"] for w in res.doc["warnings"]]
        fx.quit()


def test_api_calls_by_thread(xprobe):
    """cudaDeviceSynchronize entry -> exit paired per call on its thread
    (CUPTI's per-call correlation word): one slow call on another thread
    (30 ms between its entry and exit) and 5 quick ones on the main
    thread, each thread its own group."""
    work = ["bg_slow_sync 30", "join", "sync 5"]
    api = "cuda:runtime_api:cudaDeviceSynchronize"
    with CuptiFixture() as fx:
        res, done = run(xprobe, fx, ["--from", api + ":entry", "--to", api + ":exit",
                                     "--by", "thread"], work)
        assert res.rc == 0, res
        h = res.doc["histogram"]
        assert h["pairing"] == "cuda_api_call"
        assert h["stats"]["count"] == 6, h["stats"]
        assert 30e6 <= h["stats"]["max_ns"] < 1e9
        counts = sorted(g["stats"]["count"] for g in h["groups"])
        assert counts == [1, 5], counts
        (slow,) = [g for g in h["groups"] if g["stats"]["count"] == 1]
        assert slow["stats"]["min_ns"] >= 30e6
        assert slow["key"] != fx.pid  # the background thread, not the main one
        fx.quit()


def test_api_calls_by_name(xprobe):
    work = ["sync 4"]
    api = "cuda:runtime_api:cudaDeviceSynchronize"
    with CuptiFixture() as fx:
        res, _ = run(xprobe, fx, ["--from", api + ":entry", "--to", api + ":exit",
                                  "--by", "name"], work)
        assert res.rc == 0, res
        (g,) = res.doc["histogram"]["groups"]
        assert g["name"] == "cudaDeviceSynchronize" and g["stats"]["count"] == 4
        fx.quit()


def test_dropped_records_are_said(xprobe):
    """CUPTI drops records when its buffers run dry (the double's
    XPD_HOLD): the histogram is still a result, partial, with an
    EVENTS_DROPPED warning naming as many pairs as the double dropped."""
    env = {"XPD_HOLD": "1", "XPD_RECS_PER_BUFFER": "10"}
    with CuptiFixture("preload", env=env) as fx:
        res, _ = run(xprobe, fx, KERNELS, ["launch 300 k 100"])
        assert res.rc == 0, res
        st = fx.stats()
        assert st["dropped"] > 0
        assert res.doc["histogram"]["stats"]["count"] == 300 - st["dropped"]
        assert res.doc["collection"]["completeness"] == "partial"
        (w,) = [w for w in res.doc["warnings"] if w["code"] == "EVENTS_DROPPED"]
        assert w["details"]["dropped"] == st["dropped"]
        fx.quit()
