# SPDX-License-Identifier: Apache-2.0
"""`measure --pid ... --report PATH.html` on live fixtures (root, eBPF,
perf, the CUPTI double; no skips), each page loaded in headless Chromium
(tests/pylib/browser.py) and read back from the rendered DOM.

- an exact syscall measurement of four threads: the embedded document is
  the one --json printed, the page names the live target (PID and start
  time) and its eBPF ring, one histogram bar per non-empty bucket, one
  timeline bar per pair in one lane per thread; its screenshot is the
  README's (docs/img/report.png, written when XPROBE_UPDATE_SCREENSHOT=1);
- a live failure with a capture (a timeout with starts but no pair);
- the inventories: --syscall-aggregate, --cpu-sample, --histogram and
  --aggregate, each a sorted bar chart with its selector hints, one bar
  per group, in the documented order.
"""
import os
import shutil

import pytest

import report_html as rh
from browser import Browser
from cuda_helpers import CuptiFixture, measure_cuda
from inv_helpers import InvProc
from measure_live_helpers import (Fixture, LiveRun, fixture_path, hist_nlinks, measure_fixture,
                                  start_time)

SCREENSHOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "docs", "img", "report.png")


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def test_live_syscall_measurement(xprobe, tmp_path, browser):
    out = tmp_path / "munmap.html"
    with Fixture([fixture_path("live_mmap"), "--calls", 150, "--threads", 4]) as fx:
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", "syscall:munmap:entry", "--to", "syscall:munmap:exit",
            "--match", "exact", "--duration-ms", 2000, "--name", "munmap", "--report", out],
            nlinks=2)
        assert res.rc == 0, res
        doc = res.doc
        assert doc["measurement"]["samples"]["matched"] == 600
        rh.check_file(out)
        embedded, rep = rh.blocks(out)
        # the document --json printed, its evidence cut to the first 256 pairs
        assert embedded == dict(doc, evidence=doc["evidence"][:rh.EVIDENCE_MAX])
        assert rep["evidence"] == {"total": 600, "embedded": rh.EVIDENCE_MAX}
        assert rep["target"] == {"pid": fx.pid, "process_start_time": start_time(fx.pid),
                                 "source": "live"}
        assert rep["host_ring"]["retained_records"] == 1200
        shot = os.path.join(rh.artifact_dir(), "report-live.png")
        view = rh.load(browser, out, shot)
        fx.quit()
    lat = [p["latency_ns"] for p in doc["evidence"]]
    want = rh.log2_buckets(lat)
    assert {(int(b["lower"]), int(b["upper"])): int(b["count"]) for b in view["hbars"]} == want
    assert view["pairs"] == 600 and len(view["lanes"]) == 4
    unit = rh.row_unit(doc["measurement"]["latency_ns"].values())  # one unit for the row
    for k, v in doc["measurement"]["latency_ns"].items():
        f = view["fields"]["measurement.latency_ns." + k]
        assert rh.same_value(f["value"], v) and f["text"] == rh.fmt_ns_in(v, unit), (k, f, v)
    assert view["fields"]["correlation.method"]["text"] == "exact_syscall_tid_lifecycle"
    assert "(live)" in view["target"] and "PID %d" % fx.pid in view["target"]
    assert "1,200 of" in view["fields"]["host_ring"]["text"]
    assert view["load_s"] < 5
    if os.environ.get("XPROBE_UPDATE_SCREENSHOT") == "1":
        shutil.copy(shot, SCREENSHOT)


def test_live_failure_with_a_capture(xprobe, tmp_path, browser):
    """A timeout with captured starts and no pair: NO_MATCHED_SAMPLES, and
    the page shows the error and the events captured."""
    out = tmp_path / "timeout.html"
    with Fixture([fixture_path("live_mmap"), "--calls", 5]) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "syscall:mmap:entry", "--to",
                      "syscall:sched_yield:exit", "--match", "first-after", "--samples", 3,
                      "--timeout-ms", 1500, "--report", out)
        run.wait_armed(2)
        fx.go()
        fx.done()
        res = run.finish()
        fx.quit()
    assert res.code == "NO_MATCHED_SAMPLES", res
    assert res.error["details"]["report_path"] == str(out)
    embedded, rep = rh.blocks(out)
    assert embedded == res.doc
    assert rep["capture"]["events"] == res.error["details"]["captured_events"] >= 5
    view = rh.load(browser, out)
    assert view["fields"]["error.code"]["text"] == "NO_MATCHED_SAMPLES"
    assert view["events"] == rep["capture"]["events"]


def test_syscall_aggregate_page(xprobe, tmp_path, browser):
    out = tmp_path / "syscalls.html"
    with InvProc([fixture_path("inv_syscalls")]) as fx:
        run = LiveRun(xprobe, "--pid", fx.pid, "--syscall-aggregate", "--duration-ms", 1500,
                      "--report", out)
        run.wait_armed(2)
        fx.send("go")
        assert fx.line().startswith("done ")
        res = run.finish(schema_name="syscall-aggregate-result")
    assert res.rc == 0, res
    embedded, rep = rh.blocks(out)
    assert embedded == res.doc and rep["kind"] == "syscall_aggregate"
    groups = res.doc["inventory"]["groups"]
    view = rh.load(browser, out, os.path.join(rh.artifact_dir(), "report-syscalls.png"))
    assert len(view["ibars"]) == len(groups) == len(view["rows"]) > 3
    want = sorted(groups, key=lambda g: (-g["duration_ns"]["total"], -g["entries"],
                                         g["syscall_nr"]))
    assert [int(c) for c in view["ibars"]] == [g["entries"] for g in want]
    assert [r.split("syscall:")[0] for r in view["rows"]] == [
        g["name"] or "syscall %d" % g["syscall_nr"] for g in want]
    hints = [h for g in want for h in (g["entry_selector_hint"], g["exit_selector_hint"]) if h]
    assert view["hints"] == hints


def test_cpu_sample_page(xprobe, tmp_path, browser):
    out = tmp_path / "cpu.html"
    with InvProc([os.path.realpath(fixture_path("inv_cpu_hot"))]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 1500,
                         "--frequency-hz", 199, "--report", out,
                         schema_name="cpu-sample-inventory-result")
    assert res.rc == 0, res
    embedded, rep = rh.blocks(out)
    assert embedded == res.doc and rep["kind"] == "cpu_sample"
    hs = res.doc["inventory"]["hotspots"]
    view = rh.load(browser, out, os.path.join(rh.artifact_dir(), "report-cpu.png"))
    assert len(view["ibars"]) == len(hs) >= 2
    want = sorted(hs, key=lambda x: (-x["exclusive_proportion"], -x["exclusive_count"],
                                     -x["inclusive_count"], x["rank"]))
    assert [int(c) for c in view["ibars"]] == [x["exclusive_count"] for x in want]
    top = want[0]
    assert view["rows"][0].startswith(top["function"] or top["symbol"])
    assert top["selector_hint"] in view["hints"]


def test_histogram_page(xprobe, tmp_path, browser):
    out = tmp_path / "hist.html"
    with Fixture([fixture_path("live_hist"), "--plan", "1000:20,3000:10,9000:4"]) as fx:
        sel = "uprobe:%s:xp_hist_call:" % fx.ready["exe"]
        args = ["--from", sel + "entry", "--to", sel + "return", "--match", "stack-nested"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", *args, "--duration-ms", 2500,
                      "--report", out)
        run.wait_armed(hist_nlinks(args))
        fx.go()
        fx.done()
        res = run.finish(schema_name="latency-histogram-result")
        fx.quit()
    assert res.rc == 0, res
    embedded, rep = rh.blocks(out)
    assert embedded == res.doc and rep["kind"] == "histogram"
    h = res.doc["histogram"]
    view = rh.load(browser, out)
    nonempty = [b for b in h["buckets"] if b["count"]]
    assert [(int(b["lower"]), int(b["count"])) for b in view["hbars"]] == [
        (b["lower_ns"], b["count"]) for b in nonempty]
    assert sum(int(b["count"]) for b in view["hbars"]) == h["stats"]["count"] == 34
    unit = rh.row_unit(p["value_ns"] for p in h["percentiles"])  # one unit for the column
    for p in h["percentiles"]:
        pct = p["percentile"]  # as JavaScript prints it: 50, 99.9
        f = view["fields"]["histogram.percentiles.%s" % (int(pct) if pct == int(pct) else pct)]
        assert rh.same_value(f["value"], p["value_ns"])
        assert f["text"] == rh.fmt_ns_in(p["value_ns"], unit), (f, p)


def test_aggregate_page(xprobe, tmp_path, browser):
    out = tmp_path / "gpu.html"
    work = ["launch 5 gemm 20000", "drv 3 flash 5000", "launch 2 tiny 100"]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, ["--from", "cuda:kernel_start", "--to",
                                              "cuda:kernel_end", "--match", "exact",
                                              "--aggregate", "--duration-ms", 1500,
                                              "--report", out], work)
        fx.quit()
    assert res.rc == 0, res
    embedded, rep = rh.blocks(out)
    assert embedded == res.doc and rep["kind"] == "aggregate"
    view = rh.load(browser, out)
    # time share first: gemm (100 us), flash (15 us), tiny (0.2 us)
    assert [r.split(" (device")[0] for r in view["rows"]] == ["kernel gemm", "kernel flash",
                                                              "kernel tiny"]
    assert [int(c) for c in view["ibars"]] == [5, 3, 2]
    assert view["hints"][:2] == ["cuda:kernel_start:name~^gemm$", "cuda:kernel_end:name~^gemm$"]
