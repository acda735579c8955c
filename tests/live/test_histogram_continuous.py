# SPDX-License-Identifier: Apache-2.0
"""`measure --histogram --interval-ms N` and `--metrics-out PATH.prom`
(issue 20, sections 1 and 2; docs/histograms.md "Intervals", docs/fleet.md).

The target is tests/fixtures/live_hist with --gap-us: its plan's calls are
spaced out and the fixture prints when each one returned (CLOCK_MONOTONIC,
the clock of the interval documents), so the test knows how many pairs
completed in every interval.  Checked:

- each interval counts exactly the calls that returned inside it (a call
  returning within 200 us of a boundary may fall on either side: its
  return probe fires microseconds before the fixture's clock read), the
  intervals add up to the final result exactly (the kernel's counters are
  read, never reset: nothing lost, nothing twice), and every line is a
  LatencyHistogramInterval, the last the LatencyHistogramResult (the
  harness validates the JSON Lines);
- the terminal view prints each interval under a time header;
- the metrics file: the Prometheus text format (promtool check metrics),
  mode 0644, cumulative buckets ending in the final count, and Debian's
  real node_exporter (textfile collector) and Prometheus, started here on
  loopback ports, scrape it: Prometheus's histogram_quantile over the
  scraped series lands in the power-of-two bucket of xprobe's own p99;
- a bad --metrics-out is refused before anything attaches.
"""
import json
import math
import os
import shutil
import socket
import stat
import subprocess
import time
import urllib.parse
import urllib.request

from measure_live_helpers import Fixture, LiveRun, assert_released, fixture_path, hist_nlinks

SCHEMA = "latency-histogram-result"
EDGE_NS = 200_000


def hist_fixture(*args):
    return Fixture([fixture_path("live_hist")] + [str(a) for a in args])


def run_hist(xprobe, fx, *extra, json_mode=True):
    exe = fx.ready["exe"]
    args = ["--from", "uprobe:%s:xp_hist_call:entry" % exe,
            "--to", "uprobe:%s:xp_hist_call:return" % exe,
            "--match", "stack-nested", *extra]
    run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", *args, json_mode=json_mode)
    run.wait_armed(hist_nlinks(args))
    fx.go()
    done = fx.done()
    return run.finish(schema_name=SCHEMA), done, run


def test_intervals_count_what_completed_in_them(xprobe):
    with hist_fixture("--plan", "1000:40", "--gap-us", 20000) as fx:
        res, done, run = run_hist(xprobe, fx, "--interval-ms", 100, "--duration-ms", 1500)
        assert res.rc == 0, res
        fx.quit()
    assert_released(run.progs, run.links)
    final = res.doc
    ivs = final["_intervals"]
    ends = done["plan_ends_ns"]
    assert len(ends) == done["calls"] == 40
    assert final["histogram"]["stats"]["count"] == 40
    # 1.5 s in 100 ms steps: 15 intervals, back to back from arming, the
    # last ending with the window (a collector woken late by a loaded
    # machine makes one interval longer, on the same grid: fewer of them)
    assert 8 <= len(ivs) <= 15, [i["interval"] for i in ivs]
    assert ivs[0]["interval"]["start_offset_ns"] == 0
    for a, b in zip(ivs, ivs[1:]):
        assert a["interval"]["end_ns"] == b["interval"]["start_ns"]
    for d in ivs[:-1]:
        assert 100_000_000 <= d["interval"]["start_offset_ns"] + d["interval"]["duration_ns"], d
        assert d["interval"]["duration_ns"] >= 50_000_000, d["interval"]
    # nothing lost, nothing counted twice
    assert sum(d["histogram"]["stats"]["count"] for d in ivs) == 40
    assert sum(d["histogram"]["stats"]["sum_ns"] for d in ivs) == \
        final["histogram"]["stats"]["sum_ns"]
    # each interval: the calls that returned inside it
    for d in ivs:
        s, e = d["interval"]["start_ns"], d["interval"]["end_ns"]
        surely = sum(1 for t in ends if s + EDGE_NS <= t < e)
        maybe = sum(1 for t in ends if s <= t < e + EDGE_NS)
        n = d["histogram"]["stats"]["count"]
        assert surely <= n <= maybe, (d["interval"], n, surely, maybe)
        if n:
            st = d["histogram"]["stats"]
            durs = done["durations_ns"]
            assert st["min_bucket_lower_ns"] <= max(durs) and st["max_bucket_upper_ns"] > min(durs)
            assert st["min_bucket_lower_ns"] < st["max_bucket_upper_ns"]
            assert [p["percentile"] for p in d["histogram"]["percentiles"]] == \
                [50.0, 90.0, 95.0, 99.0, 99.9]
        assert d["histogram"]["target"]["pid"] == fx.pid
    assert sum(1 for d in ivs if d["histogram"]["stats"]["count"]) >= 5


def test_intervals_in_the_terminal(xprobe):
    with hist_fixture("--plan", "1000:20", "--gap-us", 20000) as fx:
        res, done, run = run_hist(xprobe, fx, "--interval-ms", 200, "--duration-ms", 1000,
                                  json_mode=False)
        fx.quit()
    assert res.rc == 0, res
    heads = [l for l in res.stdout.splitlines() if " interval " in l and "pairs" in l]
    assert 3 <= len(heads) <= 5, res.stdout
    for i, h in enumerate(heads):
        assert h[2] == ":" and h[5] == ":" and (" interval %d (" % i) in h, h
    assert sum(int(h.rsplit(": ", 1)[1].split()[0]) for h in heads) == 20
    assert "latency histogram of pid %d" % fx.pid in res.stdout  # then the result


def parse_prom(text):
    """{(name, frozenset(labels)): value} of a text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, rest = line.split("{", 1)
        lab, value = rest.rsplit("} ", 1)
        labels = {}
        for part in lab.split('",'):
            k, v = part.split('="', 1)
            labels[k] = v.rstrip('"')
        out[(name, frozenset(labels.items()))] = float(value)
    return out


def test_metrics_file(xprobe, tmp_path):
    path = tmp_path / "xprobe.prom"
    with hist_fixture("--plan", "500:30,4000:10", "--gap-us", 1000) as fx:
        res, done, run = run_hist(xprobe, fx, "--interval-ms", 200, "--duration-ms", 1200,
                                  "--metrics-out", path, "--name", "step", "--by", "thread")
        assert res.rc == 0, res
        fx.quit()
    st = os.stat(path)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
    promtool = shutil.which("promtool")
    assert promtool, "promtool (Debian's prometheus) is installed"
    chk = subprocess.run([promtool, "check", "metrics"], input=path.read_text(),
                         capture_output=True, text=True)
    assert chk.returncode == 0, chk.stdout + chk.stderr
    m = parse_prom(path.read_text())
    total = {k: v for k, v in m.items() if k[0].startswith("xprobe_latency_seconds")}
    buckets = sorted(((float(dict(k[1])["le"]), v) for k, v in total.items()
                      if k[0] == "xprobe_latency_seconds_bucket"))
    assert len(buckets) <= 64 + 1
    assert buckets[-1][0] == math.inf and buckets[-1][1] == 40
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative
    count = [v for k, v in total.items() if k[0] == "xprobe_latency_seconds_count"]
    ssum = [v for k, v in total.items() if k[0] == "xprobe_latency_seconds_sum"]
    assert count == [40]
    assert abs(ssum[0] - res.doc["histogram"]["stats"]["sum_ns"] / 1e9) < 1e-6
    labels = dict(next(iter(total))[1])
    assert labels["pid"] == str(fx.pid) and labels["comm"] == "live_hist"
    assert labels["exe"] == fx.ready["exe"] and labels["measurement"] == "step"
    assert labels["from"].endswith(":xp_hist_call:entry")
    groups = {dict(k[1])["group"] for k in m if k[0] == "xprobe_latency_by_group_seconds_count"}
    assert groups == {"tid %d" % fx.pid}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read().decode()
        except OSError:
            assert time.monotonic() < deadline, "nothing answers on %s" % url
            time.sleep(0.2)


def prom_query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    return json.loads(wait_http(url))["data"]["result"]


def test_prometheus_scrapes_it(xprobe, tmp_path):
    """node_exporter's textfile collector serves the file, Prometheus
    scrapes it every second, and its histogram_quantile of the scraped
    buckets agrees with xprobe's own p99 within one power-of-two bucket."""
    for tool in ("prometheus", "prometheus-node-exporter"):
        assert shutil.which(tool), "%s (Debian's) is installed" % tool
    textdir = tmp_path / "textfile"
    textdir.mkdir()
    nport, pport = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n"
        "      - targets: ['127.0.0.1:%d']\n" % nport)
    procs = [subprocess.Popen(
        ["prometheus-node-exporter", "--web.listen-address=127.0.0.1:%d" % nport,
         "--collector.disable-defaults", "--collector.textfile",
         "--collector.textfile.directory=%s" % textdir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen(
            ["prometheus", "--config.file=%s" % (tmp_path / "prometheus.yml"),
             "--storage.tsdb.path=%s" % (tmp_path / "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % pport],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_http("http://127.0.0.1:%d/metrics" % nport)
        wait_http("http://127.0.0.1:%d/-/ready" % pport)
        with hist_fixture("--plan", "300:60,3000:20,20000:4", "--gap-us", 2000) as fx:
            res, done, run = run_hist(xprobe, fx, "--interval-ms", 500, "--duration-ms", 2000,
                                      "--metrics-out", textdir / "xprobe.prom")
            assert res.rc == 0, res
            fx.quit()
        want = res.doc["histogram"]["stats"]["count"]
        assert want == 84
        sel = 'xprobe_latency_seconds_count{pid="%d"}' % fx.pid
        deadline = time.monotonic() + 30
        while True:
            got = prom_query(pport, sel)
            if got and float(got[0]["value"][1]) == want:
                break
            assert time.monotonic() < deadline, got
            time.sleep(0.5)
        q = 'histogram_quantile(0.99, xprobe_latency_seconds_bucket{pid="%d"})' % fx.pid
        prom_p99 = float(prom_query(pport, q)[0]["value"][1]) * 1e9
        ours = {p["percentile"]: p["value_ns"] for p in res.doc["histogram"]["percentiles"]}[99.0]
        k = math.floor(math.log2(ours))
        assert 2 ** k <= prom_p99 <= 2 ** (k + 1), (prom_p99, ours)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_bad_metrics_path_is_refused_before_measuring(xprobe, tmp_path):
    with hist_fixture("--plan", "100:1") as fx:
        exe = fx.ready["exe"]
        r = xprobe.run("measure", "--pid", fx.pid, "--histogram",
                       "--from", "uprobe:%s:xp_hist_call:entry" % exe,
                       "--to", "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                       "--duration-ms", 100, "--metrics-out", tmp_path / "no" / "x.prom")
        assert r.rc == 1 and r.code == "TRACE_EXPORT_FAILED", r
        d = r.error["details"]
        assert d["checked"] == "before measuring" and d["path"].endswith("/no/x.prom")
        fx.quit()
