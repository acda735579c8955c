# SPDX-License-Identifier: Apache-2.0
"""--format chrome (issue 12, section 4): each matched pair is a complete
span ("ph": "X") from its start to its end event, with ts and dur in
microseconds written as exact decimals (nanosecond precision: parsed back
with Decimal they give the events' nanoseconds), args naming the pair; the
instants stay; CUDA correlation ids become flow arrows ("s", "t", "f")
between the events that share one.  Captures are hand-made (xpcap), so
every expected figure is read off the capture."""
import json
from decimal import Decimal

import xpcap
from xpcap import cuda_api, kernel, syscall_entry, syscall_exit

MMAP = ("syscall:mmap:entry", "syscall:mmap:exit")
LAUNCH = ("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start:name~flash.*")


def measure(xprobe, src, sel, match, out, *extra):
    r = xprobe.run("measure", "--input", src, "--from", sel[0], "--to", sel[1],
                   "--match", match, "--events-out", out, "--format", "chrome",
                   *[str(a) for a in extra])
    assert r.rc == 0, r
    return r.doc


def load(path):
    """The trace with every number exact (ts/dur as Decimal)."""
    with open(path) as f:
        return json.load(f, parse_float=Decimal)


def ns(us):
    """Microseconds as written -> integer nanoseconds, exactly."""
    assert isinstance(us, Decimal), us
    v = us * 1000
    assert v == v.to_integral_value(), us
    return int(v)


def by_ph(trace, ph):
    return [e for e in trace["traceEvents"] if e["ph"] == ph]


# large odd timestamps: microseconds with a fraction, beyond 2^53 / 1000
T0 = 9_876_543_210_123_457


def odd_capture():
    return [
        syscall_entry(100, T0),
        syscall_exit(100, T0 + 1_234_567),
        syscall_entry(101, T0 + 5),
        syscall_exit(101, T0 + 5 + 999),
        syscall_entry(100, T0 + 2_000_001),
        syscall_exit(100, T0 + 2_000_002),
    ]


def test_pairs_are_complete_spans_exact_to_the_ns(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "odd.jsonl", odd_capture())
    out = tmp_path / "trace.json"
    doc = measure(xprobe, src, MMAP, "exact", out, "--samples", 10, "--name", "mmap call")
    trace = load(out)
    instants = {e["args"]["event_id"]: e for e in by_ph(trace, "i")}
    assert len(instants) == 6  # the instants stay, one per event
    spans = by_ph(trace, "X")
    assert len(spans) == doc["measurement"]["samples"]["matched"] == 3
    for k, (span, pair) in enumerate(zip(spans, doc["evidence"])):
        assert list(span) == sorted(span) and list(span["args"]) == sorted(span["args"])
        assert span["name"] == "mmap call" and span["cat"] == "xprobe.pair"
        a = span["args"]
        assert a["pair"] == k
        assert a["start_event_id"] == pair["start"]["event_id"]
        assert a["end_event_id"] == pair["end"]["event_id"]
        assert (a["start_selector"], a["end_selector"], a["match_policy"]) == (
            MMAP[0], MMAP[1], "exact")
        assert a["latency_ns"] == pair["latency_ns"]
        # exact to the nanosecond
        assert ns(span["ts"]) == pair["start"]["timestamp_ns"]
        assert ns(span["dur"]) == pair["latency_ns"]
        assert ns(span["ts"]) + ns(span["dur"]) == pair["end"]["timestamp_ns"]
        assert (span["pid"], span["tid"]) == (pair["start"]["pid"], pair["start"]["tid"])
        # the events it spans are the instants of the same trace
        assert instants[a["start_event_id"]]["args"]["timestamp_ns"] == \
            pair["start"]["timestamp_ns"]
        assert instants[a["end_event_id"]]["args"]["timestamp_ns"] == pair["end"]["timestamp_ns"]
    assert [ns(s["dur"]) for s in spans] == [1_234_567, 999, 1]
    # written as exact decimals: three fractional digits, never a float
    text = open(out).read()
    assert '"ts": %d.%03d' % (T0 // 1000, T0 % 1000) in text
    assert '"dur": 1234.567' in text


def test_unnamed_spans_name_the_selectors(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "odd.jsonl", odd_capture())
    out = tmp_path / "trace.json"
    measure(xprobe, src, MMAP, "exact", out, "--samples", 1)
    spans = by_ph(load(out), "X")
    assert len(spans) == 1  # the evidence: --samples pairs
    assert spans[0]["name"] == "%s -> %s" % MMAP


def test_nearest_span_starts_at_the_earlier_event(xprobe, tmp_path):
    """nearest pairs an end with the closest start, before or after it: the
    span starts at the earlier of the two and lasts the latency."""
    events = [syscall_exit(100, 1_000_500), syscall_entry(100, 1_000_700)]
    src = xpcap.write_jsonl(tmp_path / "n.jsonl", events)
    out = tmp_path / "trace.json"
    doc = measure(xprobe, src, MMAP, "nearest", out, "--samples", 1)
    span, = by_ph(load(out), "X")
    pair = doc["evidence"][0]
    assert pair["latency_ns"] == 200
    assert ns(span["ts"]) == 1_000_500 and ns(span["dur"]) == 200
    assert span["args"]["start_event_id"] == pair["start"]["event_id"]


def launch_capture():
    """corr 1: API entry, API exit, kernel start, kernel end; corr 2 and 3:
    API exit then kernel start; corr 9: a kernel alone (no arrow)."""
    return [
        cuda_api("entry", 20, 900_001, corr=1),
        cuda_api("exit", 20, 1_000_002, corr=1),
        kernel("start", 1_800_003, corr=1),
        kernel("end", 5_800_004, corr=1),
        cuda_api("exit", 20, 2_000_005, corr=2),
        kernel("start", 2_300_006, corr=2),
        cuda_api("exit", 21, 3_000_007, corr=3),
        kernel("start", 3_100_008, name="gemm_kernel", corr=3, stream=9),
        kernel("start", 4_000_009, corr=9),
    ]


def test_cuda_correlation_ids_become_flows(xprobe, tmp_path):
    src = xpcap.write_jsonl(tmp_path / "cuda.jsonl", launch_capture())
    out = tmp_path / "trace.json"
    measure(xprobe, src, LAUNCH, "exact", out, "--samples", 10)
    trace = load(out)
    instants = {e["args"]["event_id"]: e for e in by_ph(trace, "i")}
    flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "t", "f")]
    by_id = {}
    for f in flows:
        assert list(f) == sorted(f)
        assert f["cat"] == "cuda.correlation" and f["name"] == "cuda correlation"
        assert f["args"]["correlation_id"] == f["id"]
        assert ("bp" in f) == (f["ph"] != "s") and f.get("bp", "e") == "e"
        inst = instants[f["args"]["event_id"]]
        # bound to its event: same track, same time, exactly
        assert (f["pid"], f["tid"]) == (inst["pid"], inst["tid"])
        assert ns(f["ts"]) == inst["args"]["timestamp_ns"]
        by_id.setdefault(f["id"], []).append((f["ph"], ns(f["ts"]), f["tid"]))
    assert by_id == {
        1: [("s", 900_001, 20), ("t", 1_000_002, 20), ("t", 1_800_003, 7), ("f", 5_800_004, 7)],
        2: [("s", 2_000_005, 20), ("f", 2_300_006, 7)],
        3: [("s", 3_000_007, 21), ("f", 3_100_008, 9)],
    }
    # and the exact pairs (API exit -> flash kernel start) are spans
    spans = by_ph(trace, "X")
    assert [(ns(s["ts"]), ns(s["dur"]), s["tid"]) for s in spans] == [
        (1_000_002, 799_999 + 2, 20), (2_000_005, 300_001, 20)]


def test_jsonl_has_no_spans(xprobe, tmp_path):
    """JSONL stays one Event per line: the spans are Chrome's only."""
    src = xpcap.write_jsonl(tmp_path / "odd.jsonl", odd_capture())
    out = tmp_path / "events.jsonl"
    r = xprobe.run("measure", "--input", src, "--from", MMAP[0], "--to", MMAP[1],
                   "--match", "exact", "--samples", 10, "--events-out", out)
    assert r.rc == 0, r
    lines = open(out).read().splitlines()
    assert len(lines) == 6
