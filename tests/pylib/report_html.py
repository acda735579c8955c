# SPDX-License-Identifier: Apache-2.0
"""report_html.py - oracles of `measure --report PATH.html` (the HTML
report, src/report/html_report.h), shared by tests/cli/test_report_html.py
and tests/live/test_report_live.py.

blocks(path) reads the two JSON blocks of a page as the browser would
(and checks that no "<" is left in them); load(browser, path) opens it in
headless Chromium (tests/pylib/browser.py) and returns what the rendered
DOM shows, after checking that the page drew itself, logged no error and
requested nothing.  The helpers that compute expectations (log2 buckets,
the sampling rule, the page's number formats) are written here from the
documented rules, not taken from the page.
"""
import decimal
import json
import math
import os
import re
import stat

import xprobe_test

TIMELINE_MAX = 10000
EVIDENCE_MAX = 256

_BLOCK = re.compile(r'<script type="application/json" id="(xprobe-[a-z]+)">(.*?)</script>', re.S)

# What the page shows, read from the rendered DOM (never from the JSON).
INSPECT = r"""
(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const note = document.getElementById('sampling-note');
  const fields = {};
  q('[data-field]').forEach(e => { fields[e.getAttribute('data-field')] =
    {value: e.getAttribute('data-value'), text: e.textContent}; });
  return {
    rendered: document.body.getAttribute('data-rendered'),
    errors: q('#xprobe-errors li').map(e => e.textContent),
    title: document.title,
    h1: (document.querySelector('h1') || {}).textContent,
    command: (document.getElementById('command') || {}).textContent,
    target: (document.getElementById('target') || {}).textContent,
    hbars: q('rect.hbar').map(r => ({lower: r.getAttribute('data-lower'),
      upper: r.getAttribute('data-upper'), count: r.getAttribute('data-count')})),
    pairs: q('rect.pair').length,
    pair_ids: q('rect.pair').map(r => +r.getAttribute('data-i')),
    events: q('rect.event').length,
    lanes: q('text.lane-label').map(t => t.textContent),
    ibars: q('rect.ibar').map(r => r.getAttribute('data-count')),
    rows: q('#inventory tbody tr').map(tr => tr.cells[0].textContent),
    hints: q('#inventory .hint').map(e => e.textContent),
    warnings: q('#warnings li').map(e => e.getAttribute('data-code')),
    sampling: note ? {sampled: note.getAttribute('data-sampled'), drawn: +note.getAttribute('data-drawn'),
      total: +note.getAttribute('data-total'), text: note.textContent} : null,
    fields: fields,
    body: document.body.innerText,
    render_ms: window.xprobeReport ? window.xprobeReport.renderMs : null,
  };
})()
"""


def blocks(path):
    """(document, report) embedded in the page at @path."""
    with open(path, encoding="utf-8") as f:
        html = f.read()
    found = dict(_BLOCK.findall(html))
    assert set(found) == {"xprobe-document", "xprobe-report"}, sorted(found)
    for name, text in found.items():
        # nothing in a block can end it or open a comment
        assert "<" not in text and ">" not in text and "&" not in text, name
    return json.loads(found["xprobe-document"]), json.loads(found["xprobe-report"])


def check_file(path):
    """The report is a regular file, mode 0600, with no temporary beside it."""
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    d = os.path.dirname(os.path.abspath(path))
    assert not [n for n in os.listdir(d) if n.endswith(".tmp")], os.listdir(d)


def load(browser, path, screenshot=None):
    """Open @path; check it drew itself, without an error or a request;
    return the DOM's view (INSPECT) with the load time."""
    page = browser.load(path)
    view = page.evaluate(INSPECT)
    browser.collect(page)
    assert view["rendered"] == "true", view["errors"]
    assert view["errors"] == [], view["errors"]
    assert page.errors == [], page.errors
    assert page.requests == [], page.requests
    if screenshot:
        page.screenshot(screenshot)
    view["load_s"] = page.load_s
    view["page"] = page
    return view


def artifact_dir():
    """Where the tests keep their screenshots: <build>/test-artifacts."""
    d = os.path.join(xprobe_test.build_dir(), "test-artifacts")
    os.makedirs(d, exist_ok=True)
    return d


def log2_bucket(ns):
    return ns.bit_length()  # 0 -> 0; [2^(k-1), 2^k) -> k


def log2_buckets(latencies):
    """{(lower, upper): count} of the non-empty buckets."""
    out = {}
    for v in latencies:
        k = log2_bucket(v)
        key = (0 if k == 0 else 1 << (k - 1), 1 if k == 0 else (1 << k if k < 64 else 2 ** 64 - 1))
        out[key] = out.get(key, 0) + 1
    return out


def drawn(total):
    """The indices the timeline draws of @total items (the sampling rule)."""
    if total <= TIMELINE_MAX:
        return list(range(total))
    return [j * total // TIMELINE_MAX for j in range(TIMELINE_MAX)]


def _fixed(v, places):
    """JavaScript's Number.prototype.toFixed: the exact binary value,
    ties away from zero."""
    q = decimal.Decimal(1).scaleb(-places)
    return str(decimal.Decimal(v).quantize(q, rounding=decimal.ROUND_HALF_UP))


def fmt_ns(ns):
    """The page's (and the human summary's) latency format."""
    if ns is None:
        return "n/a"
    if ns >= 1e9:
        return _fixed(ns / 1e9, 3) + " s"
    if ns >= 1e6:
        return _fixed(ns / 1e6, 3) + " ms"
    if ns >= 1e3:
        return _fixed(ns / 1e3, 3) + " us"
    return "%d ns" % round(ns)


UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1, "ns"))


def row_unit(values):
    """The unit of a row of latencies: the one fmt_ns gives the largest."""
    top = max((v for v in values if v is not None), default=0)
    return next((u for u in UNITS if top >= u[0]), UNITS[-1])


def fmt_ns_in(ns, unit):
    """@ns in @unit (a UNITS entry), as the page writes a row's values:
    three decimals, more for a value under 0.1 of the unit (three
    significant digits, down to the nanosecond); whole nanoseconds."""
    if ns is None:
        return "n/a"
    div, name = unit
    if div == 1:
        return "%d ns" % round(ns)
    v, places = ns / div, 3
    if 0 < v < 0.1:
        places = min(round(math.log10(div)), 2 - math.floor(math.log10(v)))
    return _fixed(v, places) + " " + name


def fmt_int(n):
    return "{:,}".format(n)


def same_value(shown, value):
    """A data-value attribute against the JSON value it stands for."""
    if value is None:
        return shown == "null"
    if isinstance(value, bool):
        return shown == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return float(shown) == float(value) and (not isinstance(value, int) or shown == str(value))
    return shown == str(value)
