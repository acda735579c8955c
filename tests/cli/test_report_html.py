# SPDX-License-Identifier: Apache-2.0
"""`measure --input ... --report PATH.html`: the self-contained HTML report
(docs/output.md, "The HTML report"), checked in a real browser.

Each page is loaded from file:// in Debian's headless Chromium
(tests/pylib/browser.py, over the DevTools pipe) and read back from the
rendered DOM: the histogram has one bar per non-empty log2 bucket with the
counts of every pair, the figures shown are the --json document's, the
timeline has one bar per evidence pair (or per sampled pair, with the
sampling note and rule), and the page logged no error and requested
nothing.  Screenshots are kept in <build>/test-artifacts.  The file itself
is written like --events-out: atomically, mode 0600, refusing anything
but a regular file, and a failure to write it is TRACE_EXPORT_FAILED
(keeping a failed measurement's code).
"""
import json
import os
import re
import shutil

import pytest

import report_html as rh
import xpcap
from browser import Browser

UPROBE = ("--from", "uprobe:%s:handle_request:entry" % xpcap.APP,
          "--to", "uprobe:%s:handle_request:return" % xpcap.APP, "--match", "stack-nested")
MMAP = ("--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact")


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def request_pairs(n, threads=3, base=1_000_000, spread=None, symbol="handle_request"):
    """@n entry/return pairs spread over @threads threads, latencies over
    several powers of two (pair i: 300 ns * 1.37^(i mod 23), deterministic)."""
    events, t = [], base
    lat = spread or (lambda i: int(300 * 1.37 ** (i % 23)) + i % 7)
    for i in range(n):
        tid = 5000 + i % threads
        events.append(xpcap.uprobe_entry(tid, t, symbol=symbol))
        events.append(xpcap.uprobe_return(tid, t + lat(i), symbol=symbol))
        t += lat(i) + 50
    return events, [lat(i) for i in range(n)]


def without_session(doc):
    """The document with its session id (the pid of xprobe) blanked, so
    two runs compare."""
    s = json.dumps(doc)
    sid = doc.get("session_id")
    return json.loads(s.replace(sid, "SID")) if sid else doc


def check_numbers(view, doc):
    """Every figure of the page that stands for a document field equals it,
    as data-value and as the text shown."""
    m = doc["measurement"]
    fields = view["fields"]
    unit = rh.row_unit(m["latency_ns"].values())  # one unit for the row
    for k, v in m["latency_ns"].items():
        f = fields["measurement.latency_ns." + k]
        assert rh.same_value(f["value"], v), (k, f, v)
        assert f["text"] == rh.fmt_ns_in(v, unit), (k, f, v)
    for k, v in m["samples"].items():
        f = fields["measurement.samples." + k]
        assert rh.same_value(f["value"], v) and f["text"] == rh.fmt_int(v), (k, f, v)
    for k in ("method", "confidence"):
        f = fields["correlation." + k]
        assert f["value"] == doc["correlation"][k] == f["text"], (k, f)
    f = fields["correlation.score"]
    assert rh.same_value(f["value"], doc["correlation"]["score"])
    assert f["text"] == rh._fixed(doc["correlation"]["score"], 3)
    assert fields["clock.alignment"]["text"] == doc["clock"]["alignment"]
    assert rh.same_value(fields["clock.estimated_error_ns"]["value"], doc["clock"]["estimated_error_ns"])
    assert fields["status"]["text"] == doc["status"]
    for k in ("host_events", "cuda_events", "dropped_events"):
        f = fields["collection." + k]
        assert rh.same_value(f["value"], doc["collection"][k]), (k, f)
    assert view["warnings"] == [w["code"] for w in doc["warnings"]]


def check_histogram(view, latencies):
    want = rh.log2_buckets(latencies)
    got = {(int(b["lower"]), int(b["upper"])): int(b["count"]) for b in view["hbars"]}
    assert len(view["hbars"]) == len(want), (view["hbars"], want)
    assert got == want


def test_result_page_shows_the_json_document(xprobe, tmp_path, browser):
    events, lats = request_pairs(60)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "report.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 1000, "--name", "handle",
                   "--report", out)
    assert r.rc == 0, r
    doc = r.doc
    rh.check_file(out)
    # the embedded document is the one --json printed, every pair included
    embedded, rep = rh.blocks(out)
    assert embedded == doc
    assert rep["kind"] == "measurement" and rep["evidence"] == {"total": 60, "embedded": 60}
    assert rep["command"][:2] == ["xprobe", "measure"] and str(out) in rep["command"]
    assert rep["target"] == {"pid": xpcap.PID, "process_start_time": xpcap.START_TIME,
                             "source": "input"}
    assert sorted(lats) == sorted(p["latency_ns"] for p in doc["evidence"])

    view = rh.load(browser, out, os.path.join(rh.artifact_dir(), "report-result.png"))
    check_numbers(view, doc)
    check_histogram(view, [p["latency_ns"] for p in doc["evidence"]])
    assert view["pairs"] == len(doc["evidence"]) == 60
    assert sorted(view["pair_ids"]) == list(range(60))
    assert view["sampling"]["sampled"] == "false" and view["sampling"]["total"] == 60
    assert len(view["lanes"]) == 3 and all("20 pairs" in x for x in view["lanes"]), view["lanes"]
    assert view["h1"] == "xprobe latency measurement: handle"
    assert "--report" in view["command"] and "target: PID %d" % xpcap.PID in view["target"]
    assert os.path.getsize(os.path.join(rh.artifact_dir(), "report-result.png")) > 10000


INTERACT = r"""
(() => {
  const bars = Array.from(document.querySelectorAll('rect.pair'));
  const svg = document.querySelector('#timeline svg');
  const tip = document.getElementById('tooltip');
  const geo = () => bars.map(r => [+r.getAttribute('x'), +r.getAttribute('width')]);
  const out = {};
  const r = bars[%d], box = r.getBoundingClientRect();
  r.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: box.x + 1, clientY: box.y + 2}));
  out.tip = tip.hidden ? null : tip.textContent;
  svg.dispatchEvent(new MouseEvent('mouseleave', {bubbles: false}));
  out.tip_after = tip.hidden;
  const before = geo();
  const btn = t => Array.from(document.querySelectorAll('#timeline button')).find(b => b.textContent === t);
  btn('zoom in').click();
  out.zoom_in = geo();
  btn('reset').click();
  out.reset = geo();
  const sb = svg.getBoundingClientRect();
  svg.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, deltaY: -100,
    clientX: sb.x + sb.width - 20, clientY: sb.y + 30}));
  out.wheel = geo();
  btn('reset').click();
  svg.dispatchEvent(new MouseEvent('mousedown', {bubbles: true, clientX: sb.x + 400, clientY: sb.y + 30}));
  window.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: sb.x + 300, clientY: sb.y + 30}));
  window.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
  out.drag = geo();
  out.before = before;
  return out;
})()
"""


def test_timeline_hover_shows_both_events_and_zooms(xprobe, tmp_path, browser):
    events, _ = request_pairs(30)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "r.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report", out)
    assert r.rc == 0, r
    view = rh.load(browser, out)
    k = 7
    j = view["pair_ids"][k]  # the k-th bar stands for timeline entry j = pair j
    got = view["page"].evaluate(INTERACT % k)
    pair = r.doc["evidence"][j]
    tip = got["tip"]
    assert tip is not None and tip.startswith("pair #%d " % j), tip
    assert "evt_%d" % pair["start"]["sequence"] in tip and "evt_%d" % pair["end"]["sequence"] in tip
    assert "(%d ns)" % pair["latency_ns"] in tip
    assert str(pair["start"]["timestamp_ns"]) in tip and str(pair["end"]["timestamp_ns"]) in tip
    assert "tid %d" % pair["start"]["tid"] in tip and "host_function_entry" in tip
    assert got["tip_after"] is True
    before = got["before"]
    # zoom in: every bar twice as wide (about the middle)
    for (x0, w0), (x1, w1) in zip(before, got["zoom_in"]):
        if w0 > 1:
            assert abs(w1 - 2 * w0) < 0.05, (w0, w1)
    assert got["reset"] == before
    # the wheel zooms at the pointer (near the right end: bars there stay put)
    assert max(w for _, w in got["wheel"]) > max(w for _, w in before)
    last = max(range(len(before)), key=lambda i: before[i][0])
    assert abs(got["wheel"][last][0] - before[last][0]) < 0.25 * before[last][1] + 30
    # dragging 100 px to the left moves every bar 100 px to the left
    for (x0, _), (x1, _) in zip(before, got["drag"]):
        assert abs((x0 - x1) - 100) < 0.05, (x0, x1)


def test_json_document_is_the_same_with_and_without_report(xprobe, tmp_path):
    events, _ = request_pairs(20)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    a = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100)
    b = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100,
                   "--report", tmp_path / "r.html")
    assert a.rc == b.rc == 0
    assert without_session(a.doc) == without_session(b.doc)
    # human mode: the report changes nothing on stdout either
    h1 = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, json_mode=False)
    h2 = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report",
                    tmp_path / "r2.html", json_mode=False)
    # (but for its last line, which names the page written)
    assert h1.rc == h2.rc == 0 and h2.stderr == ""
    assert h2.stdout.rstrip("\n").endswith("report written: %s" % str(tmp_path / "r2.html"))
    assert h1.stdout.rstrip("\n") == h2.stdout.rsplit("\n\nreport written:", 1)[0]


def test_above_10000_pairs_the_timeline_is_sampled_and_the_histogram_exact(xprobe, tmp_path,
                                                                          browser):
    n = 12345
    # a few outliers far out, so exactness shows in sparse buckets
    events, lats = request_pairs(n, threads=4, spread=lambda i: 1000 + (i * 7919) % 90000
                                 + (50_000_000 if i % 4001 == 0 else 0))
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events, check=False)
    out = tmp_path / "big.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", n, "--report", out,
                   check_schema=False)
    assert r.rc == 0, r
    doc = r.doc
    assert len(doc["evidence"]) == n
    rh.check_file(out)
    assert os.path.getsize(out) < 2 * 1024 * 1024
    embedded, rep = rh.blocks(out)
    xprobe_schema_valid(embedded)
    # the document, its evidence cut to the first 256 pairs
    full = dict(doc, evidence=doc["evidence"][:rh.EVIDENCE_MAX])
    assert embedded == full
    assert rep["evidence"] == {"total": n, "embedded": rh.EVIDENCE_MAX}
    tl = rep["timeline"]
    assert tl["sampled"] is True and tl["drawn"] == rh.TIMELINE_MAX and tl["total"] == n
    assert tl["pair"] == rh.drawn(n)
    # each drawn pair is the evidence pair it names
    for j in (0, 1, 4999, rh.TIMELINE_MAX - 1):
        p = doc["evidence"][tl["pair"][j]]
        assert tl["latency"][j] == p["latency_ns"]
        assert tl["start"][j] + tl["t0_ns"] == p["start"]["timestamp_ns"]
        assert tl["end"][j] + tl["t0_ns"] == p["end"]["timestamp_ns"]
        assert tl["start_seq"][j] == p["start"]["sequence"]

    view = rh.load(browser, out, os.path.join(rh.artifact_dir(), "report-sampled.png"))
    check_numbers(view, doc)
    check_histogram(view, [p["latency_ns"] for p in doc["evidence"]])
    assert sum(int(b["count"]) for b in view["hbars"]) == n
    assert view["pairs"] == rh.TIMELINE_MAX
    s = view["sampling"]
    assert s["sampled"] == "true" and s["drawn"] == rh.TIMELINE_MAX and s["total"] == n
    assert "10,000 of 12,345 pairs" in s["text"] and "floor(j * 12345 / 10000)" in s["text"]
    assert "every pair" in s["text"]
    assert sum(int(x.split("\u00b7")[1].split()[0].replace(",", "")) for x in view["lanes"]) == n


def xprobe_schema_valid(doc):
    import xprobe_test
    xprobe_test.validate(doc, "measurement-result")


HOSTILE = '</script><script>window.pwned=1</script><!-- <img src=x onerror="window.pwned=2"> &amp;'


def test_hostile_names_stay_text(xprobe, tmp_path, browser):
    """A name or symbol holding markup cannot end the data block or run:
    it is shown as the text it is."""
    sym = "h</script><!--<b>x"
    events, _ = request_pairs(5, symbol=sym)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "hostile.html"
    sel = ("--from", "uprobe:%s:%s:entry" % (xpcap.APP, sym), "--to",
           "uprobe:%s:%s:return" % (xpcap.APP, sym), "--match", "stack-nested")
    r = xprobe.run("measure", "--input", src, *sel, "--samples", 10, "--name", HOSTILE,
                   "--report", out)
    assert r.rc == 0, r
    embedded, rep = rh.blocks(out)
    assert embedded == r.doc and embedded["measurement"]["name"] == HOSTILE
    view = rh.load(browser, out)
    assert view["page"].evaluate("window.pwned === undefined") is True
    assert view["h1"] == "xprobe latency measurement: " + HOSTILE
    assert view["title"] == "xprobe: " + HOSTILE
    assert view["pairs"] == 5
    assert sym in view["body"]  # the selectors, shown as text
    assert rep["kinds"][0]["name"] == sym


def test_failed_measurement_page_shows_the_capture(xprobe, tmp_path, browser):
    """NO_MATCHED_SAMPLES with a capture: the error document as --json
    prints it (naming the page), what was captured, every event drawn."""
    events = [xpcap.syscall_entry(100 + i % 2, 1000 + 100 * i) for i in range(7)]
    events.append(xpcap.syscall_entry(300, 5000, name="read", args=[3, 0, 10, 0, 0, 0]))
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "failed.html"
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report", out)
    assert r.rc == 1 and r.code == "NO_MATCHED_SAMPLES", r
    assert r.error["details"]["report_path"] == str(out)
    rh.check_file(out)
    embedded, rep = rh.blocks(out)
    assert embedded == r.doc
    assert rep["kind"] == "measurement_error"
    assert rep["capture"]["events"] == 8 and rep["capture"]["host_events"] == 8
    kinds = {(k["event_type"], k["name"]): k["events"] for k in rep["kinds"]}
    assert kinds == {("syscall_entry", "mmap"): 7, ("syscall_entry", "read"): 1}

    view = rh.load(browser, out, os.path.join(rh.artifact_dir(), "report-failed.png"))
    assert view["fields"]["error.code"]["text"] == "NO_MATCHED_SAMPLES"
    assert view["fields"]["error.message"]["text"] == r.error["message"]
    for k, v in r.error["details"].items():
        assert rh.same_value(view["fields"]["error.details." + k]["value"], v), k
    assert view["events"] == 8 and view["pairs"] == 0 and view["hbars"] == []
    assert view["sampling"]["sampled"] == "false" and view["sampling"]["total"] == 8
    assert len(view["lanes"]) == 3


def test_capture_at_its_limit_writes_the_page_too(xprobe, tmp_path, browser):
    """EVENT_RATE_TOO_HIGH from a capture that reached its bound (the
    other failure path with a capture)."""
    events = [xpcap.syscall_entry(100, 1000), xpcap.syscall_exit(100, 1500)]
    src = xpcap.write_host_capture(tmp_path / "cap.json", events, record_limit_reached=True)
    out = tmp_path / "limit.html"
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report", out)
    assert r.code == "EVENT_RATE_TOO_HIGH", r
    assert r.error["details"]["report_path"] == str(out)
    embedded, rep = rh.blocks(out)
    assert embedded == r.doc and rep["capture"]["events"] == 2
    assert rep["capture"]["record_limit_reached"] is True
    view = rh.load(browser, out)
    assert view["events"] == 2 and view["fields"]["error.code"]["text"] == "EVENT_RATE_TOO_HIGH"


def test_a_capture_of_many_threads_and_names_stays_bounded(xprobe, tmp_path, browser):
    """30,000 events, each of its own thread and symbol, and no pair: the
    page lists only the kinds and threads of the 10,000 drawn events (each
    with its count over all events) and says how many more there are, so
    it stays small; every event is still counted."""
    n = 30000
    events = [xpcap.uprobe_entry(10000 + i, 1000 + 10 * i, symbol="fn_%05d" % i)
              for i in range(n)]
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events, check=False)
    out = tmp_path / "many.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 5, "--report", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    assert os.path.getsize(out) < 2 * 1024 * 1024, os.path.getsize(out)
    _, rep = rh.blocks(out)
    drawn = set(rh.drawn(n))
    assert rep["kinds_total"] == rep["lanes_total"] == n
    assert len(rep["kinds"]) == len(rep["lanes"]) == len(drawn) == rh.TIMELINE_MAX
    assert [k["name"] for k in rep["kinds"]] == ["fn_%05d" % i for i in sorted(drawn)]
    assert rep["events_of_unlisted_kinds"] == rep["events_of_unlisted_lanes"] == n - len(drawn)
    assert rep["capture"]["events"] == n
    view = rh.load(browser, out)
    assert view["events"] == rh.TIMELINE_MAX
    assert "20,000 more kinds with 20,000 events" in view["body"]


def test_no_capture_no_page(xprobe, tmp_path):
    """A failure before any capture (an undecodable input) writes nothing."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    out = tmp_path / "r.html"
    r = xprobe.run("measure", "--input", bad, *MMAP, "--samples", 5, "--report", out)
    assert r.code == "TRACE_EXPORT_FAILED" and "report_path" not in r.error["details"], r
    assert not out.exists() and os.listdir(tmp_path) == ["bad.jsonl"]


def _special(tmp_path, kind):
    p = tmp_path / ("dest-" + kind)
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "symlink":
        (tmp_path / "target.html").write_text("keep")
        os.symlink(tmp_path / "target.html", p)
    elif kind == "directory":
        p.mkdir()
    elif kind == "device":
        return "/dev/null", "character device"
    return str(p), {"fifo": "fifo", "symlink": "symlink", "directory": "directory"}[kind]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory", "device"])
def test_non_regular_destinations_are_refused(xprobe, tmp_path, kind):
    events, _ = request_pairs(4)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    dest, type_name = _special(tmp_path, kind)
    before = sorted(os.listdir(tmp_path))
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 10, "--report", dest)
    assert r.rc == 1 and r.code == "TRACE_EXPORT_FAILED", r
    e = r.error
    assert e["details"]["path"] == dest and e["details"]["file_type"] == type_name, e
    assert e["message"] == "failed to write %s: it exists and is a %s, not a regular file" % (
        dest, type_name)
    assert e["recoverable"] is False and any("--report" in h for h in e["hints"])
    assert sorted(os.listdir(tmp_path)) == before  # nothing replaced, no temporary
    if kind == "symlink":
        assert (tmp_path / "target.html").read_text() == "keep"
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_failed_measurement_with_unwritable_report_keeps_its_code(xprobe, tmp_path):
    events = [xpcap.syscall_entry(100, 1000)]
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    # a FIFO or a missing directory: refused before anything is read
    os.mkfifo(tmp_path / "fifo")
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report",
                   tmp_path / "fifo")
    assert r.code == "TRACE_EXPORT_FAILED", r
    d = r.error["details"]
    assert d["file_type"] == "fifo" and d["checked"] == "before measuring"
    assert "original_error_code" not in d and d["path"] == str(tmp_path / "fifo")
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report",
                   tmp_path / "nodir" / "r.html")
    assert r.code == "TRACE_EXPORT_FAILED", r
    assert r.error["message"].endswith("No such file or directory"), r.error
    # the write fails at its end (the test hook): the measurement's code stays
    env = dict(os.environ, XPROBE_TEST_WRITE_FAULT="1")
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report",
                   tmp_path / "r.html", env=env)
    assert r.code == "TRACE_EXPORT_FAILED", r
    d = r.error["details"]
    assert d["original_error_code"] == "NO_MATCHED_SAMPLES"
    assert "report_path" not in d and d["path"] == str(tmp_path / "r.html")
    assert d["start_selector"] == "syscall:mmap:entry"  # the failure's details stay


def test_a_regular_file_is_replaced_atomically_mode_0600(xprobe, tmp_path):
    events, _ = request_pairs(4)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "r.html"
    out.write_text("old")
    os.chmod(out, 0o644)
    old_umask = os.umask(0)
    try:
        r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 10, "--report", out)
    finally:
        os.umask(old_umask)
    assert r.rc == 0, r
    rh.check_file(out)
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "r.html"]


def test_report_is_self_contained(xprobe, tmp_path):
    """One file: no URL the browser would fetch, a policy that forbids any,
    and the page works when copied anywhere (only the file is read)."""
    events, _ = request_pairs(4)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "r.html"
    assert xprobe.run("measure", "--input", src, *UPROBE, "--samples", 10, "--report",
                      out).rc == 0
    html = out.read_text()
    assert "default-src 'none'" in html
    for needle in ("src=\"http", "href=\"http", "@import", "url(http", "<link", "<iframe",
                   "fetch(", "XMLHttpRequest", "<script src"):
        assert needle not in html, needle
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(out, moved / "copy.html")
    with Browser() as b:
        view = rh.load(b, moved / "copy.html")
        assert view["pairs"] == 4


def test_report_flag_syntax(xprobe):
    r = xprobe.run("measure", "--input", "x", "--report", json_mode=False)
    assert r.rc == 2 and "a value is required for '--report'" in r.stderr
    r = xprobe.run("validate", "--pid", "1", "--from", "a", "--to", "b", "--match", "exact",
                   "--report", "r.html", json_mode=False)
    assert r.rc == 2 and "unexpected argument '--report'" in r.stderr
    help_ = xprobe.run("measure", "--help", json_mode=False)
    assert "--report <PATH>" in help_.stdout


@pytest.mark.parametrize("flags", [
    ("--events-out", "in.jsonl"),
    ("--report", "./in.jsonl"),
    ("--events-out", "o.jsonl", "--report", "o.jsonl"),
    ("--events-out", "o.jsonl", "--report", "../{dir}/o.jsonl"),
])
def test_an_output_naming_an_input_or_the_other_output_is_refused(xprobe, tmp_path, flags,
                                                                   monkeypatch):
    """Nothing is written: the capture being measured and the other output
    would otherwise be replaced (the last write won)."""
    events, _ = request_pairs(4)
    src = tmp_path / "in.jsonl"
    xpcap.write_jsonl(src, events)
    before = src.read_bytes()
    monkeypatch.chdir(tmp_path)
    flags = [f.format(dir=tmp_path.name) for f in flags]
    r = xprobe.run("measure", "--input", "in.jsonl", *UPROBE, "--samples", 4, *flags)
    assert r.rc == 1 and r.code == "TRACE_EXPORT_FAILED", r
    flag, path = flags[-2], flags[-1]
    other = "--input" if len(flags) == 2 else "--events-out"
    assert r.error["message"] == ("%s %s names the same file as %s: writing it would replace it"
                                  % (flag, path, other)), r.error
    assert r.error["details"]["path"] == path
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"] and src.read_bytes() == before
    # different paths: both written
    r = xprobe.run("measure", "--input", "in.jsonl", *UPROBE, "--samples", 4, "--events-out",
                   "o.jsonl", "--report", "o.html")
    assert r.rc == 0, r
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "o.html", "o.jsonl"]


@pytest.mark.parametrize("threads", [7, 3])
def test_a_failed_capture_timeline_draws_every_kind(xprobe, tmp_path, browser, threads):
    """Over the bound, the failed-capture timeline draws each event kind on
    each thread in proportion to its count: 40,000 alternating entries
    and exits of threads taking turns give 5,000 of each kind, spread over
    every thread.  Before, one stride over the capture (every 4th event)
    drew only entries; then one stride per kind, with 3 threads taking
    turns, drew one thread only."""
    n = 40000
    events = []
    for i in range(n // 2):
        events += [xpcap.syscall_entry(100 + i % threads, 1000 + 100 * i),
                   xpcap.syscall_exit(100 + i % threads, 1050 + 100 * i)]
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events, check=False)
    out = tmp_path / "kinds.html"
    r = xprobe.run("measure", "--input", src, "--from", "syscall:munmap:entry", "--to",
                   "syscall:munmap:exit", "--match", "exact", "--samples", 5,
                   "--max-events", n, "--report", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    _, rep = rh.blocks(out)
    tl = rep["timeline"]
    assert tl["sampled"] is True and tl["drawn"] == rh.TIMELINE_MAX and tl["total"] == n
    assert "each event kind on each thread separately" in tl["rule"]
    names = [k["name"] for k in rep["kinds"]]
    drawn = {}
    for kind in tl["kind"]:
        drawn[kind] = drawn.get(kind, 0) + 1
    assert all(abs(v - 5000) <= 2 for v in drawn.values()), (names, drawn)
    assert sum(drawn.values()) == rh.TIMELINE_MAX
    per_lane = {}
    for lane in tl["lane"]:
        per_lane[lane] = per_lane.get(lane, 0) + 1
    assert len(per_lane) == threads, per_lane
    assert all(abs(v - rh.TIMELINE_MAX / threads) <= 2 for v in per_lane.values()), per_lane
    assert tl["event"] == sorted(tl["event"])  # capture order
    view = rh.load(browser, out)
    assert view["events"] == rh.TIMELINE_MAX
    assert "each event kind on each thread separately" in view["sampling"]["text"]


# --- the defects a new user found (issue 17, item 9) ------------------------

CAPTION = r"""
(() => {
  const s = document.querySelector('#histogram svg');
  const cap = Array.from(s.querySelectorAll('text')).find(t => t.textContent.startsWith('latency'));
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return {text: cap ? cap.textContent : null, caption: cap ? box(cap) : null, svg: box(s),
          chart: box(document.getElementById('histogram'))};
})()
"""


def inside(inner, outer, slack=0.5):
    """[left, top, right, bottom] @inner lies within @outer."""
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def test_histogram_caption_fits_however_few_buckets(xprobe, tmp_path, browser):
    """The caption under the histogram lies inside its SVG and its box for
    1 to 5 buckets (and 20).  Before, the SVG was as wide as the buckets
    alone: with 4 buckets or fewer the caption ran past its right edge and
    was cut off."""
    for n in (1, 2, 3, 4, 5, 20):
        events, _ = request_pairs(3 * n, spread=lambda i, n=n: 1100 * 2 ** (i % n))
        src = xpcap.write_jsonl(tmp_path / ("in%d.jsonl" % n), events)
        out = tmp_path / ("h%d.html" % n)
        r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report", out)
        assert r.rc == 0, r
        view = rh.load(browser, out)
        assert len(view["hbars"]) == n
        got = view["page"].evaluate(CAPTION)
        assert got["text"], got
        assert inside(got["caption"], got["svg"]), (n, got)
        assert inside(got["caption"], got["chart"]), (n, got)


LONG_CXX = ("std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
            "std::allocator<char> >, std::vector<std::shared_ptr<net::Session<tls::Stream, "
            "net::Buffer<4096ul> > > > > net::detail::Dispatcher<net::Policy<16ul, true>, "
            "net::Codec<json::Value> >::handle_request(net::Request const&, "
            "std::chrono::duration<long, std::ratio<1l, 1000000000l> >) const")

TIP_BOUNDS = r"""
(() => {
  const bar = document.querySelectorAll('rect.pair')[0];
  const tip = document.getElementById('tooltip');
  const W = window.innerWidth, H = window.innerHeight, out = [];
  const box = b => [b.left, b.top, b.right, b.bottom];
  for (const [x, y] of [[5, 5], [W - 5, 5], [5, H - 5], [W - 5, H - 5], [W / 2, H / 2]]) {
    bar.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: x, clientY: y}));
    const range = document.createRange();
    range.selectNodeContents(tip);
    out.push({at: [x, y], hidden: tip.hidden, text: tip.textContent,
              box: box(tip.getBoundingClientRect()), content: box(range.getBoundingClientRect()),
              scroll: [tip.scrollWidth, tip.clientWidth, tip.scrollHeight, tip.clientHeight]});
  }
  return {W: W, H: H, out: out};
})()
"""


def check_tooltip_fits(page, name):
    got = page.evaluate(TIP_BOUNDS)
    view = [0, 0, got["W"], got["H"]]
    for t in got["out"]:
        assert not t["hidden"] and name in t["text"], t
        assert inside(t["box"], view), (got["W"], got["H"], t)  # on the page
        assert inside(t["content"], t["box"], 1), t  # the text in its box
        assert t["scroll"][0] <= t["scroll"][1] and t["scroll"][2] <= t["scroll"][3], t


def test_tooltip_of_a_long_cxx_name_stays_in_its_box_and_the_window(xprobe, tmp_path, browser):
    """A pair whose events carry a 300-character demangled C++ signature
    (with spaces, and without: the exit's): hovered with the pointer in
    each corner of the window, the tooltip lies inside the window and its
    text inside the tooltip, at 1280 px and at 420 px wide.  Before, the
    tooltip did not wrap (white-space: pre): the name ran out of its box
    and, in a narrow window, off the page."""
    assert len(LONG_CXX) > 200
    events, _ = request_pairs(6)
    for e in events:
        e["host"]["symbol_demangled"] = (LONG_CXX if e["event_type"] == "host_function_entry"
                                         else LONG_CXX.replace(" ", ""))
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "cxx.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report", out)
    assert r.rc == 0, r
    view = rh.load(browser, out)
    page = view["page"]
    check_tooltip_fits(page, LONG_CXX)
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": 420, "height": 700, "deviceScaleFactor": 1, "mobile": False},
                 page.session)
    check_tooltip_fits(page, LONG_CXX.replace(" ", ""))


def undefined_symbols(text):
    """The one-letter symbols of @text ("a" and "I" are words) that no
    "where X is", ", X is" or "and X is" defines."""
    syms = set(re.findall(r"(?<![\w.'])([B-HJ-Zb-z])(?![\w'])", text))
    return sorted(x for x in syms if not re.search(r"(?:where|,|and) %s is\b" % x, text))


def check_note_reads(text, words):
    """The note's first sentence says in words what is drawn (no formula),
    and every symbol of the formula after it is defined."""
    first = text.split(". ")[0]
    assert not re.search(r"=|floor|\*", first), text
    for w in words:
        assert w in first, (w, text)
    assert undefined_symbols(text) == [], (undefined_symbols(text), text)


def test_sampling_notes_say_what_is_drawn_in_words(xprobe, tmp_path, browser):
    """Above 10,000 the note under the timeline's heading says what is
    drawn in a sentence, then the formula with each of its symbols
    defined.  Before, both notes read "every pair j = floor(j * N /
    10000)" (or "its event j = floor(j * C / Q)"), j never defined."""
    n = 10500
    events, _ = request_pairs(n, threads=2, spread=lambda i: 1000 + i % 50)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events, check=False)
    out = tmp_path / "pairs.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", n, "--report", out,
                   check_schema=False)
    assert r.rc == 0, r
    note = rh.load(browser, out)["sampling"]["text"]
    check_note_reads(note, ("10,000 of 10,500 pairs", "evenly", "start-time order"))
    assert "floor(j * 10500 / 10000)" in note, note

    events = []
    for i in range(10500):
        events += [xpcap.syscall_entry(100 + i % 3, 1000 + 100 * i),
                   xpcap.syscall_exit(100 + i % 3, 1050 + 100 * i)]
    src = xpcap.write_jsonl(tmp_path / "ev.jsonl", events, check=False)
    out = tmp_path / "events.html"
    r = xprobe.run("measure", "--input", src, "--from", "syscall:munmap:entry", "--to",
                   "syscall:munmap:exit", "--match", "exact", "--samples", 5,
                   "--max-events", len(events), "--report", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    note = rh.load(browser, out)["sampling"]["text"]
    check_note_reads(note, ("10,000 of 21,000 events", "each event kind on each thread separately",
                            "in proportion to its count", "evenly", "capture order"))
    assert "floor(j * C / Q)" in note, note


ORIGIN = r"""
(() => {
  const o = document.getElementById('time-origin');
  const bar = document.querySelector('#timeline rect[data-i]');
  const tip = document.getElementById('tooltip');
  bar.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: 50, clientY: 50}));
  return {controls: document.querySelector('#timeline .controls').textContent,
          origin: o ? o.textContent : null, title: o ? o.getAttribute('title') : null,
          raw: o ? o.getAttribute('data-t0-ns') : null, tip: tip.textContent};
})()
"""


def check_origin(page, t0, shown, clock):
    got = page.evaluate(ORIGIN)
    for text in (got["controls"], got["origin"]):
        assert not re.search(r"\d{10,}", text or ""), got  # no raw nanoseconds
    assert got["origin"] is not None and shown in got["origin"], got
    assert clock in got["origin"] and "t0" in got["origin"], got
    assert got["raw"] == str(t0) and str(t0) + " ns" in got["title"], got  # the raw value kept
    return got


def test_time_origin_is_a_human_time(xprobe, tmp_path, browser):
    """The timeline's origin reads as seconds of its clock, to the
    millisecond, with the exact nanoseconds in its title and data-t0-ns,
    and a tooltip's timestamps stay exact with 19 digits.  Before, the
    page printed "after 1700000000123656800 ns": raw nanoseconds, and not
    even the right ones (a JavaScript number holds about 16 digits)."""
    t0 = 1_700_000_000_123_656_789
    events, _ = request_pairs(20, base=t0)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "origin.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report", out)
    assert r.rc == 0, r
    _, rep = rh.blocks(out)
    assert rep["timeline"]["t0_ns"] == t0
    got = check_origin(rh.load(browser, out)["page"], t0, "1,700,000,000.124 s",
                       "CLOCK_MONOTONIC")
    first = r.doc["evidence"][0]
    assert "t = %d ns" % first["start"]["timestamp_ns"] in got["tip"], got["tip"]
    assert "t = %d ns" % first["end"]["timestamp_ns"] in got["tip"], got["tip"]

    # a failed capture's timeline: the same origin, its events' clock
    t0 = 18_234_567_965_978
    events = [xpcap.syscall_entry(100, t0 + 1000 * i) for i in range(5)]
    src = xpcap.write_jsonl(tmp_path / "ev.jsonl", events)
    out = tmp_path / "failed.html"
    r = xprobe.run("measure", "--input", src, *MMAP, "--samples", 5, "--report", out)
    assert r.code == "NO_MATCHED_SAMPLES", r
    got = check_origin(rh.load(browser, out)["page"], t0, "18,234.568 s", "CLOCK_MONOTONIC")
    assert "t = %d ns" % t0 in got["tip"], got["tip"]


def test_percentile_row_has_one_unit(xprobe, tmp_path, browser):
    """p50 820 us and p99 1.2 ms: every value of the row is in ms, the unit
    of its largest, with the raw nanoseconds in each cell's title.  Before,
    each value had its own unit ("820.003 us" beside "1.200 ms")."""
    events, lats = request_pairs(100, spread=lambda i: 1_200_000 if i % 10 == 0
                                 else 820_000 + i % 7)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "units.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 100, "--report", out)
    assert r.rc == 0, r
    lat = r.doc["measurement"]["latency_ns"]
    assert lat["p50"] < 1_000_000 <= lat["p99"]
    view = rh.load(browser, out)
    cells = view["page"].evaluate(
        "Array.from(document.querySelectorAll('#percentiles tbody td')).map("
        "td => [td.getAttribute('data-field'), td.textContent, td.title])")
    assert len(cells) == 7
    units = {text.split()[-1] for _, text, _ in cells}
    assert units == {"ms"}, cells
    for path, text, title in cells:
        v = lat[path.rsplit(".", 1)[1]]
        assert text == rh.fmt_ns_in(v, (1e6, "ms")) and title == "%s ns" % v, (path, text, v)
    assert "0.820" in cells[1][1] and cells[4][1] == "1.200 ms", cells


SCATTER = r"""
(() => Array.from(document.querySelectorAll('#scatter circle.dot')).map(c =>
  [Number(c.getAttribute('data-pair')), Number(c.getAttribute('cy')), c.getAttribute('class')]))()
"""


def test_latency_over_time_is_one_dot_per_pair(xprobe, tmp_path, browser):
    """An exact result's page plots each pair's latency over time: one dot
    per pair (up to the timeline's bound), higher for a longer pair, in a
    single color without --explain."""
    events, lats = request_pairs(40)
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", events)
    out = tmp_path / "report.html"
    r = xprobe.run("measure", "--input", src, *UPROBE, "--samples", 1000, "--report", out)
    assert r.rc == 0, r
    view = rh.load(browser, out)
    dots = view["page"].evaluate(SCATTER)
    assert sorted(d[0] for d in dots) == list(range(40))
    lat = {i: p["latency_ns"] for i, p in enumerate(r.doc["evidence"])}
    by_lat = sorted(dots, key=lambda d: lat[d[0]])
    cys = [d[1] for d in by_lat]
    assert cys == sorted(cys, reverse=True), by_lat  # log scale: longer is higher
    assert {d[2] for d in dots} == {"dot"}
