# SPDX-License-Identifier: Apache-2.0
"""measure --input: completed captures written by the tests themselves,
with answers worked out by hand from the pairing rules (docs/correlation.md):
one case per policy, merging, every error class a completed input can
reach, and the --events-out artifacts.

Timestamps are small nanosecond values so every expected latency can be
read off the capture.
"""
import json
import math
import os
import stat

import pytest

import xprobe_test
import xpcap
from xpcap import (gc, kernel, cuda_api, nvtx, syscall_entry, syscall_exit, uprobe_entry,
                   uprobe_return)

MMAP = ("syscall:mmap:entry", "syscall:mmap:exit")


def measure(xprobe, inputs, sel, match, *extra, **kw):
    args = ["measure"]
    for path in inputs:
        args += ["--input", str(path)]
    args += ["--from", sel[0], "--to", sel[1], "--match", match]
    args += [str(a) for a in extra]
    return xprobe.run(*args, **kw)


def nearest_rank(values, p):
    s = sorted(values)
    return s[max(math.ceil(p * len(s) / 100), 1) - 1]


def check_latency(doc, latencies):
    """latency_ns and evidence against the expected per-pair latencies,
    given in start-timestamp order."""
    lat = doc["measurement"]["latency_ns"]
    assert lat["min"] == min(latencies)
    assert lat["max"] == max(latencies)
    assert lat["mean"] == pytest.approx(sum(latencies) / len(latencies), rel=1e-12)
    for p in (50, 90, 95, 99):
        assert lat["p%d" % p] == nearest_rank(latencies, p), p
    ev = doc["evidence"]
    assert [p["latency_ns"] for p in ev] == latencies
    starts = [p["start"]["timestamp_ns"] for p in ev]
    assert starts == sorted(starts), "evidence is ordered by start timestamp"
    for p in ev:
        assert p["end"]["timestamp_ns"] - p["start"]["timestamp_ns"] == p["latency_ns"] or \
            doc["correlation"]["method"] == "nearest"
        for side in ("start", "end"):
            assert p[side]["session_id"] == doc["session_id"]
            assert p[side]["event_id"] == "evt_%d" % p[side]["sequence"]


def check_samples(doc, matched, unmatched_start, unmatched_end, ambiguous):
    assert doc["measurement"]["samples"] == {
        "matched": matched, "unmatched_start": unmatched_start,
        "unmatched_end": unmatched_end, "ambiguous": ambiguous, "dropped": 0}
    total = matched + unmatched_start + unmatched_end + ambiguous
    assert doc["correlation"]["score"] == pytest.approx(matched / total, rel=1e-12)


def warning_codes(doc):
    return [w["code"] for w in doc["warnings"]]


def ok(r):
    assert r.rc == 0, r
    assert r.doc["ok"] is True, r
    assert r.doc["status"] == "completed"
    assert r.stderr == "", r
    return r.doc


# --- exact: syscall lifecycle ---------------------------------------------

def mmap_capture():
    """Three threads.  tid 101's first exit has no entry (the capture began
    inside the call), tid 102's last entry no exit; read() calls are not
    selected.  Pairs by start: 1000->1500 (500), 1200->2200 (1000),
    3000->3800 (800)."""
    return [
        syscall_exit(101, 100),
        syscall_entry(100, 500, name="read", args=[3, 0, 4096, 0, 0, 0]),
        syscall_exit(100, 600, name="read", ret=4096),
        syscall_entry(100, 1000),
        syscall_entry(101, 1200),
        syscall_exit(100, 1500),
        syscall_exit(101, 2200),
        syscall_entry(100, 3000),
        syscall_exit(100, 3800),
        syscall_entry(102, 5000),
    ]


def test_exact_syscall_lifecycle(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 100, "--name", "mmap_duration"))
    assert doc["session_id"].startswith("xp_measure_")
    assert doc["measurement"]["name"] == "mmap_duration"
    check_samples(doc, 3, 1, 1, 0)
    check_latency(doc, [500, 1000, 800])
    assert doc["correlation"]["method"] == "exact_syscall_tid_lifecycle"
    assert doc["correlation"]["confidence"] == "exact"
    assert doc["correlation"]["score"] == 0.6
    assert doc["clock"] == {"alignment": "host_monotonic", "estimated_error_ns": 0}
    assert doc["collection"] == {"completeness": "complete", "host_events": 10,
                                 "cuda_events": 0, "dropped_events": 0, "cupti": None}
    assert doc["warnings"] == []
    first = doc["evidence"][0]
    assert first["start"]["tid"] == first["end"]["tid"] == 100
    assert first["start"]["event_type"] == "syscall_entry"
    assert first["end"]["event_type"] == "syscall_exit"
    assert [a["value"] for a in first["start"]["host"]["arguments"]] == xpcap.MMAP_ARGS
    assert first["end"]["host"]["return_value"] == 0x7F0000000000
    assert first["start"]["process_start_time"] == xpcap.START_TIME
    # evidence events keep everything the capture had
    assert xpcap.strip_identity(first["start"]) == xpcap.strip_identity(syscall_entry(100, 1000))


def test_exact_syscall_samples_truncate(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 2))
    # the first two pairs by start; the policy's counters are not reduced
    check_samples(doc, 2, 1, 1, 0)
    check_latency(doc, [500, 1000])


def test_exact_syscall_ambiguous_restart(xprobe, tmp_path):
    # Two entries on one thread without an exit between them: the first
    # is replaced and counted ambiguous; the second pairs.
    path = xpcap.write_jsonl(tmp_path / "amb.jsonl", [
        syscall_entry(100, 1000), syscall_entry(100, 1100), syscall_exit(100, 1500)])
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 10))
    check_samples(doc, 1, 0, 0, 1)
    check_latency(doc, [400])
    assert doc["correlation"]["score"] == 0.5


def test_exact_syscall_human_mode(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    r = measure(xprobe, [path], MMAP, "exact", "--samples", 100, json_mode=False)
    assert r.rc == 0, r
    assert r.stderr == ""
    assert "syscall:mmap:entry -> syscall:mmap:exit" in r.stdout
    assert "exact_syscall_tid_lifecycle" in r.stdout
    assert "3 pairs matched" in r.stdout
    assert not r.stdout.lstrip().startswith("{")


def test_duration_window(xprobe, tmp_path):
    # --duration-ms bounds correlation to events within the window from the
    # first selected event (inclusive): 1 ms from t=100 keeps everything
    # up to 1,000,100 ns.
    events = mmap_capture() + [syscall_entry(100, 1_000_000), syscall_exit(100, 1_000_100),
                               syscall_entry(100, 2_000_000), syscall_exit(100, 2_000_500)]
    path = xpcap.write_jsonl(tmp_path / "win.jsonl", events)
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--duration-ms", 1))
    check_latency(doc, [500, 1000, 800, 100])


# --- exact: CPython GC (USDT) ---------------------------------------------

def test_exact_python_gc(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "gc.jsonl", [
        gc("end", 7, 50),           # collection already running when armed
        gc("start", 7, 1000), gc("end", 7, 4000),
        gc("start", 8, 2000), gc("end", 8, 2600),
        gc("start", 7, 9000)])
    doc = ok(measure(xprobe, [path], ("python:gc_start", "python:gc_end"), "exact",
                     "--samples", 10))
    check_samples(doc, 2, 1, 1, 0)
    check_latency(doc, [3000, 600])
    assert doc["correlation"]["method"] == "exact_python_gc_tid_lifecycle"
    assert doc["correlation"]["confidence"] == "exact"
    assert doc["evidence"][0]["start"]["event_type"] == "marker"
    assert doc["evidence"][0]["start"]["host"]["probe_kind"] == "usdt"


# --- exact: NVTX range id ---------------------------------------------------

def test_exact_nvtx(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "nvtx.jsonl", [
        nvtx("start", 10, 1000, range_id=1),
        nvtx("start", 10, 2000, range_id=2),
        nvtx("start", 10, 2100, name="backward", range_id=3),
        nvtx("end", 10, 2500, range_id=2),
        nvtx("end", 10, 2550, name="backward", range_id=3),
        nvtx("end", 10, 4000, range_id=1),
        # a process range ends on another thread; start_tid names the first
        nvtx("start", 10, 7000, range_id=5, kind="process"),
        nvtx("end", 11, 7600, range_id=5, kind="process", start_tid=10),
        nvtx("start", 10, 9000, range_id=4),     # still open
    ])
    doc = ok(measure(xprobe, [path], ("cuda:nvtx_range_start:name~^forward$",
                                      "cuda:nvtx_range_end:name~^forward$"),
                     "exact", "--samples", 10))
    check_samples(doc, 3, 1, 0, 0)
    check_latency(doc, [3000, 500, 600])
    assert doc["correlation"]["method"] == "exact_nvtx_range_id"
    assert doc["clock"] == {"alignment": "host_monotonic", "estimated_error_ns": 0}
    last = doc["evidence"][2]
    assert last["end"]["tid"] == 11 and last["end"]["nvtx"]["start_tid"] == 10
    assert doc["collection"]["host_events"] == 0
    assert doc["collection"]["cuda_events"] == 9


# --- exact: CUPTI correlation id -------------------------------------------

def launch_capture(ts_error=None):
    """cudaLaunchKernel exits and flash kernel starts, keyed by (context,
    correlation id).  corr 3 launched a gemm kernel (not selected), corr 9
    is a kernel whose launch was not captured."""
    return [
        cuda_api("entry", 20, 900, corr=1),
        cuda_api("exit", 20, 1000, corr=1),
        kernel("start", 1800, corr=1, ts_error=ts_error),
        kernel("end", 5800, corr=1, ts_error=ts_error),
        cuda_api("exit", 20, 2000, corr=2),
        kernel("start", 2300, corr=2, ts_error=ts_error),
        cuda_api("exit", 20, 3000, corr=3),
        kernel("start", 3100, name="gemm_kernel", corr=3, ts_error=ts_error),
        kernel("start", 4000, corr=9, ts_error=ts_error),
    ]


LAUNCH = ("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start:name~flash.*")


def test_exact_cupti_correlation(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "cuda.jsonl", launch_capture())
    doc = ok(measure(xprobe, [path], LAUNCH, "exact", "--samples", 10))
    check_samples(doc, 2, 1, 1, 0)
    check_latency(doc, [800, 300])
    assert doc["correlation"]["method"] == "exact_cupti_correlation_id"
    assert doc["correlation"]["confidence"] == "exact"
    # CUPTI-normalized timestamps without an error bound: estimated error
    # unknown, and said so
    assert doc["clock"] == {"alignment": "cupti_normalized_to_host_monotonic",
                            "estimated_error_ns": None}
    assert warning_codes(doc) == ["CLOCK_ERROR_UNAVAILABLE"]
    assert doc["collection"]["host_events"] == 0
    assert doc["collection"]["cuda_events"] == 9
    pair = doc["evidence"][0]
    assert pair["start"]["cuda"]["correlation_id"] == pair["end"]["cuda"]["correlation_id"] == 1
    assert pair["end"]["cuda"]["kernel_name"] == "flash_fwd_kernel"


def two_context_capture(n, drop_context=False):
    """Launches in two CUDA contexts whose correlation ids repeat (1..n in
    each), as a capture built to the contract's key (pid, context_id,
    correlation_id) may hold.  Context 2's kernels run 50 ns after their
    launch, context 1's 100 ns; the first of context 1's launches runs
    twice (a second kernel under its id: ambiguous)."""
    evs = []
    for ctx, lat, base in ((1, 100, 10000), (2, 50, 10020)):
        for i in range(1, n + 1):
            t = base + 1000 * i
            evs.append(cuda_api("exit", 20 + ctx, t, corr=i, ctx=ctx))
            evs.append(kernel("start", t + lat, corr=i, ctx=ctx))
    evs.append(kernel("start", 10000 + 1000 + 500, corr=1, ctx=1))
    if drop_context:
        evs[0]["cuda"]["context_id"] = None
    return sorted(evs, key=lambda e: e["timestamp_ns"])


def test_exact_cupti_key_holds_the_context(xprobe, tmp_path):
    """The exact CUDA key is (pid, context_id, correlation_id): 25 launches
    in each of two contexts pair with their own kernels (49 pairs, the
    doubled one ambiguous: 2).  Keyed by (pid, correlation_id) as before,
    the contexts' equal ids collided (43 pairs, 15 ambiguous in the
    capture that showed it)."""
    path = xpcap.write_jsonl(tmp_path / "two.jsonl", two_context_capture(25))
    doc = ok(measure(xprobe, [path], LAUNCH, "exact", "--samples", 100))
    check_samples(doc, 49, 0, 0, 2)
    lat = sorted({p["latency_ns"] for p in doc["evidence"]})
    assert lat == [50, 100]
    for p in doc["evidence"]:
        s, e = p["start"]["cuda"], p["end"]["cuda"]
        assert (s["context_id"], s["correlation_id"]) == (e["context_id"], e["correlation_id"])
        assert p["latency_ns"] == (100 if s["context_id"] == 1 else 50)
    assert "EXACT_KEY_WITHOUT_CONTEXT" not in warning_codes(doc)


def test_exact_cupti_key_without_a_context_says_so(xprobe, tmp_path):
    """One event without a context id: the whole capture is keyed by (pid,
    correlation_id), and a warning says so with the count."""
    path = xpcap.write_jsonl(tmp_path / "two.jsonl", two_context_capture(25, drop_context=True))
    doc = ok(measure(xprobe, [path], LAUNCH, "exact", "--samples", 100))
    (w,) = [w for w in doc["warnings"] if w["code"] == "EXACT_KEY_WITHOUT_CONTEXT"]
    assert w["details"] == {"events_without_context": 1}
    assert "(pid, correlation_id)" in w["message"]
    # every id now holds two launches and two kernels (id 1: three, all
    # ambiguous), zipped in time order across the contexts: context 1's
    # launch takes context 2's kernel (70 ns), and the other way (80 ns)
    check_samples(doc, 48, 0, 0, 3)
    assert sorted({p["latency_ns"] for p in doc["evidence"]}) == [70, 80]


def test_exact_cupti_with_error_bound(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "cuda.jsonl", launch_capture(ts_error=250))
    doc = ok(measure(xprobe, [path], LAUNCH, "exact", "--samples", 10))
    assert doc["clock"] == {"alignment": "cupti_normalized_to_host_monotonic",
                            "estimated_error_ns": 250}
    assert "CLOCK_ERROR_UNAVAILABLE" not in warning_codes(doc)


# --- first-after and nearest -----------------------------------------------

REQ_TO_WRITE = ("uprobe:%s:handle_request:entry" % xpcap.APP, "syscall:write:entry")


def temporal_capture(ends):
    return [uprobe_entry(100, 1000), uprobe_entry(100, 5000)] + [
        syscall_entry(100, ts, name="write", args=[1, 0, 64, 0, 0, 0]) for ts in ends]


def test_first_after(xprobe, tmp_path):
    # start 1000: skips the end at 500, takes 1300; start 5000: skips 2000,
    # takes 6000.
    path = xpcap.write_jsonl(tmp_path / "fa.jsonl", temporal_capture([500, 1300, 2000, 6000]))
    doc = ok(measure(xprobe, [path], REQ_TO_WRITE, "first-after", "--samples", 10))
    check_samples(doc, 2, 0, 2, 0)
    check_latency(doc, [300, 1000])
    assert doc["correlation"]["method"] == "first_after"
    assert doc["correlation"]["confidence"] == "heuristic"
    assert warning_codes(doc) == ["HEURISTIC_CORRELATION"]
    assert doc["warnings"][0]["message"] == \
        "temporal matching does not prove request-level causality"
    assert doc["clock"] == {"alignment": "host_monotonic", "estimated_error_ns": 0}


def test_samples_bound_changes_score_and_temporal_counters(xprobe, tmp_path):
    """What --samples does (docs/correlation.md, docs/output.md): matched is
    cut to N and the score uses the cut matched, so the score changes; the
    keyed and stack policies keep counting over the whole capture, while
    first-after and nearest stop pairing at the N-th pair and count nothing
    after it."""
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    whole = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 10))
    cut = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 1))
    check_samples(whole, 3, 1, 1, 0)
    check_samples(cut, 1, 1, 1, 0)     # counters not reduced ...
    assert whole["correlation"]["score"] == 0.6
    assert cut["correlation"]["score"] == pytest.approx(1 / 3)   # ... the score is
    path = xpcap.write_jsonl(tmp_path / "fa.jsonl", temporal_capture([500, 1300, 2000, 6000]))
    whole = ok(measure(xprobe, [path], REQ_TO_WRITE, "first-after", "--samples", 10))
    cut = ok(measure(xprobe, [path], REQ_TO_WRITE, "first-after", "--samples", 1))
    check_samples(whole, 2, 0, 2, 0)
    check_samples(cut, 1, 0, 1, 0)     # the end at 500 only: pairing stopped at 1300
    assert cut["correlation"]["score"] == 0.5 and whole["correlation"]["score"] == 0.5
    path = xpcap.write_jsonl(tmp_path / "near.jsonl", temporal_capture([900, 1200, 5300, 9000]))
    whole = ok(measure(xprobe, [path], REQ_TO_WRITE, "nearest", "--samples", 10))
    cut = ok(measure(xprobe, [path], REQ_TO_WRITE, "nearest", "--samples", 1))
    check_samples(whole, 2, 0, 2, 0)
    check_samples(cut, 1, 0, 0, 0)     # leftover ends are not counted once the bound is met
    assert cut["correlation"]["score"] == 1.0


def test_first_after_runs_out_of_ends(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "fa.jsonl", temporal_capture([1300]))
    doc = ok(measure(xprobe, [path], REQ_TO_WRITE, "first_after", "--samples", 10))
    check_samples(doc, 1, 1, 0, 0)
    check_latency(doc, [300])


def test_nearest(xprobe, tmp_path):
    # start 1000: 900 is closer (100) than 1200 (200); start 5000: 5300
    # (300) beats 1200 (3800); 1200 and 9000 are left over.
    path = xpcap.write_jsonl(tmp_path / "near.jsonl", temporal_capture([900, 1200, 5300, 9000]))
    doc = ok(measure(xprobe, [path], REQ_TO_WRITE, "nearest", "--samples", 10))
    check_samples(doc, 2, 0, 2, 0)
    check_latency(doc, [100, 300])
    assert doc["correlation"]["method"] == "nearest"
    assert doc["correlation"]["confidence"] == "heuristic"
    assert warning_codes(doc) == ["HEURISTIC_CORRELATION"]
    # nearest may pair an end before its start; the latency is absolute
    first = doc["evidence"][0]
    assert first["end"]["timestamp_ns"] == 900 and first["start"]["timestamp_ns"] == 1000


# --- stack-nested -----------------------------------------------------------

HANDLER = ("uprobe:%s:handle_request:entry" % xpcap.APP,
           "uprobe:%s:handle_request:return" % xpcap.APP)


def test_stack_nested(xprobe, tmp_path):
    # tid 100 recurses: the inner return pairs with the inner entry.
    path = xpcap.write_jsonl(tmp_path / "stack.jsonl", [
        uprobe_return(101, 50),
        uprobe_entry(100, 1000), uprobe_entry(100, 1100),
        uprobe_return(100, 1400), uprobe_return(100, 2000),
        uprobe_entry(101, 3000),
        uprobe_entry(100, 3500, symbol="other_function"),
    ])
    doc = ok(measure(xprobe, [path], HANDLER, "stack-nested", "--samples", 10))
    check_samples(doc, 2, 1, 1, 0)
    check_latency(doc, [1000, 300])
    assert doc["correlation"]["method"] == "stack_nested_tid_lifo"
    assert doc["correlation"]["confidence"] == "high"
    assert doc["warnings"] == []
    assert doc["evidence"][0]["end"]["host"]["probe_kind"] == "uretprobe"


# --- stream-order -----------------------------------------------------------

def test_stream_order(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "stream.jsonl", [
        kernel("end", 100, stream=9, clock="cupti", corr=40),
        kernel("start", 1000, stream=7, clock="cupti", corr=41),
        kernel("start", 1200, stream=8, clock="cupti", corr=42),
        kernel("end", 1500, stream=7, clock="cupti", corr=41),
        kernel("end", 2200, stream=8, clock="cupti", corr=42),
        kernel("start", 3000, stream=7, clock="cupti", corr=43),
        kernel("end", 3600, stream=7, clock="cupti", corr=43),
        kernel("start", 5000, stream=7, clock="cupti", corr=44),
    ])
    doc = ok(measure(xprobe, [path], ("cuda:kernel_start", "cuda:kernel_end"), "stream-order",
                     "--samples", 10))
    check_samples(doc, 3, 1, 1, 0)
    check_latency(doc, [500, 1000, 600])
    assert doc["correlation"]["method"] == "cuda_stream_order"
    assert doc["correlation"]["confidence"] == "high"
    assert doc["clock"] == {"alignment": "cupti_same_domain", "estimated_error_ns": 0}
    assert doc["warnings"] == []
    for p in doc["evidence"]:
        assert p["start"]["cuda"]["stream_id"] == p["end"]["cuda"]["stream_id"]


# --- merging inputs ---------------------------------------------------------

def test_repeated_inputs_are_merged(xprobe, tmp_path):
    events = mmap_capture()
    # split across an Event JSONL file and a host-capture document, each
    # in its own order: the merge sorts by timestamp and renumbers
    a = xpcap.write_jsonl(tmp_path / "a.jsonl", list(reversed(events[::2])))
    b = xpcap.write_host_capture(tmp_path / "b.json", events[1::2])
    one = xpcap.write_jsonl(tmp_path / "all.jsonl", events)
    merged = ok(measure(xprobe, [a, b], MMAP, "exact", "--samples", 100))
    single = ok(measure(xprobe, [one], MMAP, "exact", "--samples", 100))
    for key in ("measurement", "correlation", "clock", "collection", "warnings"):
        assert merged[key] == single[key], key
    assert merged["collection"]["host_events"] == len(events)
    strip = lambda doc: [(xpcap.strip_identity(p["start"]), xpcap.strip_identity(p["end"]))
                         for p in doc["evidence"]]
    assert strip(merged) == strip(single)
    # sequence numbers are the merged capture's timestamp order
    seqs = [p["start"]["sequence"] for p in merged["evidence"]]
    assert seqs == [3, 4, 7]


def test_host_capture_input(xprobe, tmp_path):
    path = xpcap.write_host_capture(tmp_path / "host.json", mmap_capture())
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 100))
    check_samples(doc, 3, 1, 1, 0)


# --- errors -----------------------------------------------------------------

def fail(r, code, rc=1):
    assert r.rc == rc, r
    assert r.code == code, r
    assert r.stderr == "", r
    return r.error


def test_no_matched_samples_nothing_selected(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "reads.jsonl", [
        syscall_entry(100, 500, name="read"), syscall_exit(100, 600, name="read")])
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "NO_MATCHED_SAMPLES")
    assert e["recoverable"] is True
    d = e["details"]
    assert d["start_selector"] == MMAP[0] and d["end_selector"] == MMAP[1]
    assert d["match_policy"] == "exact"
    assert d["captured_events"] == 2 and d["host_events"] == 2 and d["cuda_events"] == 0
    assert e["hints"]


def test_no_matched_samples_only_entries(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "entries.jsonl", [
        syscall_entry(100, 500), syscall_entry(101, 600)])
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "NO_MATCHED_SAMPLES")
    assert e["details"]["match_policy"] == "exact"


def test_events_dropped(xprobe, tmp_path):
    path = xpcap.write_host_capture(tmp_path / "dropped.json", mmap_capture(), dropped=3)
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "EVENTS_DROPPED")
    assert e["details"]["dropped_events"] == 3
    assert e["hints"]


def test_clock_alignment_failed(xprobe, tmp_path):
    # host CLOCK_MONOTONIC start, raw CUPTI clock end: not subtractable
    path = xpcap.write_jsonl(tmp_path / "clocks.jsonl", [
        uprobe_entry(100, 1000), kernel("start", 1500, clock="cupti")])
    e = fail(measure(xprobe, [path], ("uprobe:%s:handle_request:entry" % xpcap.APP,
                                      "cuda:kernel_start"), "first-after", "--samples", 5),
             "CLOCK_ALIGNMENT_FAILED")
    assert e["details"]["start_clock"] == "host_monotonic"
    assert e["details"]["end_clock"] == "cupti"
    assert e["details"]["match_policy"] == "first-after"


def test_event_rate_too_high_max_events(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5, "--max-events", 5),
             "EVENT_RATE_TOO_HIGH")
    assert "max-events" in " ".join(e["hints"])
    # exactly at the bound is fine
    ok(measure(xprobe, [path], MMAP, "exact", "--samples", 5, "--max-events", 10))


def test_event_rate_too_high_record_limit(xprobe, tmp_path):
    path = xpcap.write_host_capture(tmp_path / "full.json", mmap_capture(),
                                    record_limit_reached=True)
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "EVENT_RATE_TOO_HIGH")
    assert e["details"]["record_capacity"] == 10


@pytest.mark.parametrize("sel", [
    ("syscall:mmap:entry", "uprobe:%s:handle_request:return" % xpcap.APP),
    ("uprobe:%s:handle_request:entry" % xpcap.APP, "uprobe:%s:other:return" % xpcap.APP),
], ids=["syscall-uprobe", "different-functions"])
def test_invalid_correlation_policy_stack_nested(xprobe, tmp_path, sel):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], sel, "stack-nested", "--samples", 5),
             "INVALID_CORRELATION_POLICY")
    compat = e["details"]["compatible_policies"]
    assert "stack_nested" not in compat
    assert compat[-2:] == ["first_after", "nearest"]
    assert e["details"]["match_policy"] == "stack-nested"


def test_invalid_correlation_policy_names_compatible(xprobe, tmp_path):
    # exact needs a deterministic key; uprobe entry -> syscall has none
    path = xpcap.write_jsonl(tmp_path / "t.jsonl", temporal_capture([1300]))
    e = fail(measure(xprobe, [path], REQ_TO_WRITE, "exact", "--samples", 5),
             "INVALID_CORRELATION_POLICY")
    assert e["details"]["compatible_policies"] == ["first_after", "nearest"]
    e = fail(measure(xprobe, [path], REQ_TO_WRITE, "stream-order", "--samples", 5),
             "INVALID_CORRELATION_POLICY")
    assert e["details"]["compatible_policies"] == ["first_after", "nearest"]


def test_compatible_policies_of_a_syscall_pair(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "stream-order", "--samples", 5),
             "INVALID_CORRELATION_POLICY")
    assert e["details"]["compatible_policies"] == ["exact", "first_after", "nearest"]


def test_unknown_policy(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "closest", "--samples", 5),
             "INVALID_CORRELATION_POLICY")
    assert "closest" in e["message"]


@pytest.mark.parametrize("sel", [
    ("syscall:nosuchcall:entry", "syscall:nosuchcall:exit"),
    ("syscall:mmap:begin", "syscall:mmap:exit"),
    ("cuda:kernel_start:name~(", "cuda:kernel_end"),
    ("cuda:nvtx_range_start", "cuda:nvtx_range_end"),
    ("bogus:thing", "syscall:mmap:exit"),
    ("", "syscall:mmap:exit"),
    ("uprobe:/usr/bin/app:f:entry", "uprobe:/usr/bin/app:+0xzz:return"),
], ids=["unknown-syscall", "bad-boundary", "bad-regex", "nvtx-without-name", "prefix", "empty",
        "bad-offset"])
def test_invalid_event_selector(xprobe, tmp_path, sel):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], sel, "first-after", "--samples", 5),
             "INVALID_EVENT_SELECTOR")
    assert e["recoverable"] is True
    assert e["hints"]


@pytest.mark.parametrize("extra", [
    ["--samples", 0],
    ["--duration-ms", 0],
    [],
    ["--samples", 5, "--max-events", 0],
    ["--samples", 5, "--timeout-ms", 0],
], ids=["samples-0", "duration-0", "no-bound", "max-events-0", "timeout-0"])
def test_session_limit_exceeded(xprobe, tmp_path, extra):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "exact", *extra), "SESSION_LIMIT_EXCEEDED")
    assert e["hints"]


@pytest.mark.parametrize("flag", ["--agent", "--cupti-socket"])
def test_live_only_flags(xprobe, tmp_path, flag):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5, flag, "/tmp/x"),
             "INVALID_EVENT_SELECTOR")
    assert e["message"] == "%s requires --pid" % flag


# --- decode errors: TRACE_EXPORT_FAILED ------------------------------------

def test_missing_input(xprobe, tmp_path):
    path = tmp_path / "nope.jsonl"
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")
    assert e["recoverable"] is False
    assert str(path) in e["message"]
    assert e["details"]["path"] == str(path)


def lines_of(events):
    return [json.dumps(e, separators=(",", ":")) for e in xpcap.numbered(events)]


def test_malformed_line_names_its_line(xprobe, tmp_path):
    lines = lines_of(mmap_capture()[:4])
    lines[2] = lines[2][:40]          # truncated third document
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")
    assert e["recoverable"] is False
    assert e["details"]["path"] == str(path)
    assert e["details"]["line"] == 3


@pytest.mark.parametrize("mutate,where", [
    (lambda e: e.update(surprise=1), "surprise"),
    (lambda e: e["host"].update(colour="red"), "colour"),
    (lambda e: e.update(schema_version="1.0"), "schema_version"),
    (lambda e: e.update(event_type="syscall_middle"), "event_type"),
    (lambda e: e.update(pid=-1), "pid"),
    (lambda e: e.update(timestamp_ns="1000"), "timestamp_ns"),
    (lambda e: e.pop("timestamp_ns"), "timestamp_ns"),
    # not in the contract's EventType enum (USDT hits are "marker" events)
    (lambda e: e.update(event_type="usdt"), "event_type"),
], ids=["unknown-field", "unknown-nested-field", "schema-version", "event-type",
        "negative-pid", "string-timestamp", "missing-timestamp", "usdt-event-type"])
def test_rejected_event_documents(xprobe, tmp_path, mutate, where):
    events = xpcap.numbered(mmap_capture())
    mutate(events[1])
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")
    assert e["details"]["path"] == str(path)
    assert e["details"]["line"] == 2
    assert where in e["message"], e["message"]


def test_duplicate_key_rejected(xprobe, tmp_path):
    line = lines_of([syscall_entry(100, 1000)])[0]
    line = line[:-1] + ',"tid":101}'
    path = tmp_path / "dup.jsonl"
    path.write_text(line + "\n")
    fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")


def test_host_capture_unknown_field(xprobe, tmp_path):
    path = xpcap.write_host_capture(tmp_path / "h.json", mmap_capture())
    doc = json.load(open(path))
    doc["extra"] = True
    with open(path, "w") as f:
        json.dump(doc, f)
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")
    assert "extra" in e["message"]


def test_mixed_pids(xprobe, tmp_path):
    a = xpcap.write_jsonl(tmp_path / "a.jsonl", mmap_capture())
    b = xpcap.write_jsonl(tmp_path / "b.jsonl", [syscall_entry(9, 7000, pid=999),
                                                syscall_exit(9, 7100, pid=999)])
    e = fail(measure(xprobe, [a, b], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")
    assert "4242" in e["message"] and "999" in e["message"]


def test_mixed_pids_in_one_file(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "m.jsonl", mmap_capture() + [
        syscall_entry(9, 7000, pid=999)])
    fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5), "TRACE_EXPORT_FAILED")


def test_format_without_events_out(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    e = fail(measure(xprobe, [path], MMAP, "exact", "--samples", 5, "--format", "chrome"),
             "TRACE_EXPORT_FAILED")
    assert e["message"] == "--format requires --events-out"


# --- --events-out -----------------------------------------------------------

def no_temporaries(directory):
    left = [n for n in os.listdir(directory) if n.endswith(".tmp")]
    assert left == [], left


def read_jsonl(path):
    with open(path) as f:
        text = f.read()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_events_out_jsonl(xprobe, tmp_path):
    events = mmap_capture()
    a = xpcap.write_jsonl(tmp_path / "a.jsonl", list(reversed(events[:5])))
    b = xpcap.write_host_capture(tmp_path / "b.json", events[5:])
    out = tmp_path / "out" / "capture.jsonl"
    out.parent.mkdir()
    old = os.umask(0)
    try:
        doc = ok(measure(xprobe, [a, b], MMAP, "exact", "--samples", 100, "--events-out", out))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    written = read_jsonl(out)
    # the whole merged capture, not only the evidence, resequenced
    assert len(written) == len(events)
    for i, e in enumerate(written):
        xprobe_test.validate(e, "event")
        assert e["sequence"] == i
        assert e["event_id"] == "evt_%d" % i
        assert e["session_id"] == doc["session_id"]
    by_ts = sorted(events, key=lambda e: e["timestamp_ns"])
    assert [xpcap.strip_identity(e) for e in written] == \
        [xpcap.strip_identity(e) for e in by_ts]
    # evidence events are the artifact's events
    for p in doc["evidence"]:
        assert written[p["start"]["sequence"]] == p["start"]
        assert written[p["end"]["sequence"]] == p["end"]
    no_temporaries(out.parent)


def test_events_out_reads_back(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    out = tmp_path / "again.jsonl"
    first = ok(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out))
    second = ok(measure(xprobe, [out], MMAP, "exact", "--samples", 100))
    for key in ("measurement", "correlation", "clock", "collection", "warnings"):
        assert first[key] == second[key], key


def test_events_out_chrome(xprobe, tmp_path):
    events = mmap_capture() + launch_capture()[:3]
    src = xpcap.write_jsonl(tmp_path / "mixed.jsonl", events)
    out = tmp_path / "trace.json"
    ok(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out,
               "--format", "chrome"))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    with open(out) as f:
        trace = json.load(f)
    assert list(trace) == ["displayTimeUnit", "traceEvents"]
    assert trace["displayTimeUnit"] == "ns"
    instants = [t for t in trace["traceEvents"] if t["ph"] == "i"]
    meta = [t for t in trace["traceEvents"] if t["ph"] == "M"]
    assert len(instants) == len(events)
    # the 3 pairs as spans, corr 1's three events as flow arrows
    # (tests/cli/test_export_chrome.py checks both)
    spans = [t for t in trace["traceEvents"] if t["ph"] == "X"]
    flows = [t for t in trace["traceEvents"] if t["ph"] in ("s", "t", "f")]
    assert (len(spans), len(flows)) == (3, 3)
    assert len(trace["traceEvents"]) == len(instants) + len(meta) + len(spans) + len(flows)
    assert [(m["name"], m["pid"]) for m in meta] == [("process_name", xpcap.PID)]
    for t in trace["traceEvents"]:
        # What Perfetto's legacy JSON tokenizer needs: ph always, ts except
        # on metadata, and no array directly under an event (it extracts
        # ts/dur by scanning top-level keys and rejects array values there).
        assert t["ph"] in ("i", "M", "X", "s", "t", "f")
        assert ("ts" in t) == (t["ph"] != "M")
        assert isinstance(t["pid"], int) and isinstance(t["tid"], int)
        assert not any(isinstance(v, list) for v in t.values())
    assert isinstance(meta[0]["args"]["name"], str)
    by_ts = sorted(events, key=lambda e: e["timestamp_ns"])
    for i, (t, e) in enumerate(zip(instants, by_ts)):
        assert list(t) == sorted(t), "keys alphabetical"
        assert list(t["args"]) == sorted(t["args"])
        assert t["s"] == "t"
        assert t["pid"] == e["pid"]
        assert t["ts"] == e["timestamp_ns"] // 1000
        assert isinstance(t["ts"], int)
        assert t["args"]["timestamp_ns"] == e["timestamp_ns"]
        assert t["args"]["event_id"] == "evt_%d" % i
        assert t["args"]["event_type"] == e["event_type"]
        assert t["args"]["clock_domain"] == e["clock_domain"]
        assert t["args"]["attributes"] == e["attributes"]
        if e["source"] == "ebpf":
            assert (t["cat"], t["name"], t["tid"]) == ("host", e["host"]["symbol"], e["tid"])
            assert t["args"]["stream_id"] is None
        elif e["source"] == "cupti_callback":
            assert (t["cat"], t["name"], t["tid"]) == ("cuda.api", "cudaLaunchKernel", e["tid"])
            assert t["args"]["correlation_id"] == e["cuda"]["correlation_id"]
        else:
            assert (t["cat"], t["name"], t["tid"]) == ("cuda.activity", "flash_fwd_kernel", 7)
            assert t["args"]["stream_id"] == 7
            assert t["args"]["context_id"] == 1


def test_events_out_replaces_existing_file(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    out = tmp_path / "out.jsonl"
    out.write_text("old content\n")
    os.chmod(out, 0o644)
    ok(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out))
    assert len(read_jsonl(out)) == 10
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    no_temporaries(tmp_path)


def test_events_out_missing_directory(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    out = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out),
             "TRACE_EXPORT_FAILED")
    assert e["recoverable"] is False
    assert e["message"].startswith("failed to write %s: " % out)
    assert e["details"]["path"] == str(out)
    assert "original_error_code" not in e["details"]
    assert not out.parent.exists()
    no_temporaries(tmp_path)


def test_events_out_onto_a_directory_leaves_no_temporary(xprobe, tmp_path):
    # The temporary is created and filled beside the target; the rename
    # onto a directory fails; the temporary must be gone afterwards.
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    out = tmp_path / "adir"
    out.mkdir()
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out),
             "TRACE_EXPORT_FAILED")
    assert e["details"]["path"] == str(out)
    assert os.path.isdir(out) and os.listdir(out) == []
    no_temporaries(tmp_path)


def test_events_out_parent_is_a_file(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    out = tmp_path / "mmap.jsonl" / "out.jsonl"
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 100, "--events-out", out),
             "TRACE_EXPORT_FAILED")
    assert "Not a directory" in e["message"]
    no_temporaries(tmp_path)


@pytest.mark.parametrize("fmt", ["jsonl", "chrome"])
def test_artifact_written_when_correlation_fails(xprobe, tmp_path, fmt):
    src = xpcap.write_jsonl(tmp_path / "reads.jsonl", [
        syscall_entry(100, 500, name="read"), syscall_exit(100, 600, name="read"),
        syscall_entry(100, 700)])
    out = tmp_path / ("evidence." + fmt)
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 5, "--events-out", out,
                     "--format", fmt), "NO_MATCHED_SAMPLES")
    d = e["details"]
    assert d["artifact_path"] == str(out)
    assert d["artifact_format"] == fmt
    assert d["artifact_event_count"] == 3
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    if fmt == "jsonl":
        assert len(read_jsonl(out)) == 3
    else:
        with open(out) as f:
            trace = json.load(f)
        assert len([t for t in trace["traceEvents"] if t["ph"] == "i"]) == 3


def test_artifact_written_when_events_dropped(xprobe, tmp_path):
    src = xpcap.write_host_capture(tmp_path / "d.json", mmap_capture(), dropped=1)
    out = tmp_path / "dropped.jsonl"
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 5, "--events-out", out),
             "EVENTS_DROPPED")
    assert e["details"]["artifact_event_count"] == 10
    assert len(read_jsonl(out)) == 10


def test_artifact_written_when_record_limit_reached(xprobe, tmp_path):
    src = xpcap.write_host_capture(tmp_path / "f.json", mmap_capture(), record_limit_reached=True)
    out = tmp_path / "full.jsonl"
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 5, "--events-out", out),
             "EVENT_RATE_TOO_HIGH")
    assert e["details"]["artifact_path"] == str(out)
    assert len(read_jsonl(out)) == 10


def test_artifact_failure_keeps_original_code(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "reads.jsonl", [
        syscall_entry(100, 500, name="read"), syscall_exit(100, 600, name="read")])
    # a missing directory: refused before anything is read
    out = tmp_path / "missing" / "out.jsonl"
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 5, "--events-out", out),
             "TRACE_EXPORT_FAILED")
    assert e["message"] == "failed to write %s: No such file or directory" % out
    assert e["details"]["checked"] == "before measuring"
    assert e["details"]["directory"] == str(tmp_path / "missing")
    assert "original_error_code" not in e["details"]
    # a write that fails at its end (the test hook): the measurement's code stays
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, XPROBE_TEST_WRITE_FAULT="1")
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 5, "--events-out", out,
                     env=env), "TRACE_EXPORT_FAILED")
    assert e["details"]["original_error_code"] == "NO_MATCHED_SAMPLES"
    assert e["details"]["path"] == str(out)
    assert e["message"].startswith("failed to write %s: " % out)
    assert "the measurement also failed; rerun after fixing artifact output" in e["hints"]
    assert "artifact_path" not in e["details"]
    no_temporaries(tmp_path)


def test_a_result_whose_artifact_fails_is_still_printed(xprobe, tmp_path):
    """The measurement succeeded, its artifact could not be saved at the
    end: TRACE_EXPORT_FAILED with the whole result in details.result
    (--json), or the result printed before the error (terminal)."""
    src = xpcap.write_jsonl(tmp_path / "mmap.jsonl", [
        syscall_entry(100, 1000), syscall_exit(100, 1500),
        syscall_entry(100, 2000), syscall_exit(100, 2600)])
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, XPROBE_TEST_WRITE_FAULT="1")
    e = fail(measure(xprobe, [src], MMAP, "exact", "--samples", 2, "--events-out", out,
                     env=env), "TRACE_EXPORT_FAILED")
    result = e["details"]["result"]
    xprobe_test.validate(result, "measurement-result")
    assert result["measurement"]["samples"]["matched"] == 2
    assert [p["latency_ns"] for p in result["evidence"]] == [500, 600]
    assert any("its result is in details.result" in h for h in e["hints"]), e
    r = measure(xprobe, [src], MMAP, "exact", "--samples", 2, "--events-out", out, env=env,
                json_mode=False)
    assert r.rc == 1
    assert "matched" in r.stdout and "2" in r.stdout, r.stdout
    assert r.stderr.startswith("TRACE_EXPORT_FAILED: failed to write"), r.stderr
    assert not out.exists()
    no_temporaries(tmp_path)


def test_no_artifact_before_a_capture_exists(xprobe, tmp_path):
    # a decode failure means there is no capture: nothing is written
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    out = tmp_path / "out.jsonl"
    e = fail(measure(xprobe, [bad], MMAP, "exact", "--samples", 5, "--events-out", out),
             "TRACE_EXPORT_FAILED")
    assert "artifact_path" not in e["details"]
    assert not out.exists()


def test_human_mode_error(xprobe, tmp_path):
    path = xpcap.write_host_capture(tmp_path / "dropped.json", mmap_capture(), dropped=3)
    r = measure(xprobe, [path], MMAP, "exact", "--samples", 5, json_mode=False)
    assert r.rc == 1
    assert r.stdout == ""
    assert r.stderr.startswith("EVENTS_DROPPED: ")


def test_demo_capture(xprobe):
    """The bundled demo (scripts/demo.sh) measures what its generator built."""
    path = os.path.join(xprobe_test.ROOT, "demo", "mmap.jsonl")
    events = [json.loads(line) for line in open(path)]
    doc = ok(measure(xprobe, [path], MMAP, "exact", "--samples", 100))
    assert doc["collection"]["host_events"] == len(events)
    assert doc["measurement"]["samples"]["matched"] == 100
    assert doc["correlation"]["method"] == "exact_syscall_tid_lifecycle"
    # recompute the first 100 pairs from the file itself
    pending, pairs = {}, []
    for e in events:
        if e["event_type"] == "syscall_entry":
            pending[e["tid"]] = e
        elif e["tid"] in pending:
            s = pending.pop(e["tid"])
            pairs.append((s["timestamp_ns"], e["timestamp_ns"] - s["timestamp_ns"]))
    pairs.sort()
    check_latency(doc, [lat for _, lat in pairs[:100]])


# --- the JSON decoder plugin (src/capture/json_api.c) ------------------------

def env_without_plugin(tmp_path):
    return dict(os.environ, XPROBE_JSON_PLUGIN=str(tmp_path / "missing" / "xprobe-json.so"))


def test_json_plugin_missing_is_an_error(xprobe, tmp_path):
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    env = env_without_plugin(tmp_path)
    r = measure(xprobe, [path], MMAP, "exact", "--samples", 10, env=env)
    assert r.rc == 1, r
    assert r.code == "INTERNAL", r
    assert r.error["details"]["plugin"] == env["XPROBE_JSON_PLUGIN"]
    assert "cannot open shared object file" in r.error["details"]["reason"]
    assert any("XPROBE_JSON_PLUGIN" in h for h in r.error["hints"])
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    r = xprobe.run("measure", "--spec", str(spec), env=env)
    assert r.rc == 1 and r.code == "INTERNAL", r


def test_json_plugin_not_a_plugin(xprobe, tmp_path):
    """A shared object without the entry point is refused by name.  (An
    absolute path: a bare name is refused before loading, test_env_hooks.)"""
    path = xpcap.write_jsonl(tmp_path / "mmap.jsonl", mmap_capture())
    env = dict(os.environ, XPROBE_JSON_PLUGIN="/usr/lib/x86_64-linux-gnu/libm.so.6")
    r = measure(xprobe, [path], MMAP, "exact", "--samples", 10, env=env)
    assert r.code == "INTERNAL", r
    assert r.error["details"]["reason"] == "no xp_json_plugin_v1 in it"


def test_commands_without_json_need_no_plugin(xprobe, tmp_path):
    """Only reading JSON loads the decoder: the rest of xprobe starts
    without simdjson and the C++ runtime."""
    env = env_without_plugin(tmp_path)
    r = xprobe.run("--version", json_mode=False, env=env)
    assert r.rc == 0, r
    r = xprobe.run("validate", "--pid", os.getpid(), "--from", "syscall:read:entry",
                   "--to", "syscall:read:exit", "--match", "exact", env=env)
    assert r.rc == 0 and r.doc["ok"] is True, r
    # .xtf sessions are read without it too (tests/cli/test_sessions.py
    # covers them with the plugin present)


def test_the_same_capture_twice(xprobe, tmp_path):
    """One capture given twice to --input (the same path, a hard link, or a
    byte-for-byte copy) is a usage mistake naming both arguments (exit 2);
    two captures that overlap keep each shared event once, with a warning
    counting them.  Before: 151 ambiguous pairs, score 0.33, confidence
    still exact, no warning, exit 0."""
    events = []
    for i in range(10):
        events += [syscall_entry(100, 1000 + 1000 * i), syscall_exit(100, 1400 + 1000 * i)]
    src = xpcap.write_jsonl(tmp_path / "a.jsonl", events)
    os.link(src, tmp_path / "hard.jsonl")
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(open(src, "rb").read())
    for other, words in ((src, "name the same file"), (tmp_path / "hard.jsonl", "name the same file"),
                         (copy, "hold the same capture, byte for byte")):
        r = measure(xprobe, [src, other], MMAP, "exact", "--samples", 10, json_mode=False)
        assert r.rc == 2 and r.stdout == "", r
        assert "--input '%s' (input 1) and --input '%s' (input 2) %s" % (src, other, words) \
            in r.stderr, r.stderr
    # overlapping captures: the shared events once, the pairs as one capture's
    part = xpcap.write_jsonl(tmp_path / "part.jsonl", events[:6] + [
        syscall_entry(100, 50000), syscall_exit(100, 50300)])
    r = measure(xprobe, [src, part], MMAP, "exact", "--samples", 11)
    assert r.rc == 0, r
    s = r.doc["measurement"]["samples"]
    assert s["matched"] == 11 and s["ambiguous"] == 0, s
    assert r.doc["correlation"]["confidence"] == "exact"
    w = [w for w in r.doc["warnings"] if w["code"] == "DUPLICATE_EVENTS"]
    assert w and w[0]["details"] == {"dropped_events": 6, "inputs": 2}, r.doc["warnings"]
