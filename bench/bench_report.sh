#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_report.sh - what the two views of a measurement cost: the terminal
# view (the histogram and per-thread lines under the summary) and the HTML
# report (--report), against `measure --input` with the summary alone, for
# 100, 10,000 and 1,000,000 matched pairs; and the report's load time in
# headless Chromium.
#
# Generates Event JSONL captures with bench/gen_events.py (uprobe entry and
# return of one function, 8 threads, 2 events per pair), then times, RUNS
# times each, interleaved (medians; peak RSS from wait4's ru_maxrss):
#   summary   measure --input F ... --hist none      (the baseline)
#   terminal  measure --input F ...                  (the default view)
#   html      measure --input F ... --hist none --report F.html
# (a binary without --hist: the baseline is the default view and the
# terminal row is skipped).  Then loads each report RUNS times in headless
# Chromium (tests/pylib/browser.py): navigation to the load event (the
# renderer runs before it) and the renderer's own time.
# Prints the table, the ratios to the baseline and the goals: the report
# adds under 10% at 1,000,000 pairs, the file stays under 2 MB, the page of
# 10,000 pairs loads in under a second.
#
# Usage: bench/bench_report.sh [BUILD_DIR] [RUNS] [PAIRS...]
#        (defaults: ./build, 5, 100 10000 1000000)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
sizes=${*:-100 10000 1000000}
py=/usr/bin/python3

if [ ! -x "$build/bin/xprobe" ]; then
	echo "bench_report: $build/bin/xprobe missing; build xprobe in $build first" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/xp-bench-report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

for n in $sizes; do
	echo "bench_report: generating $n pairs" >&2
	$py "$root/bench/gen_events.py" --events $((n * 2)) --kind uprobe \
		--out "$tmp/p$n.jsonl" 2>/dev/null
done

$py - "$root" "$tmp" "$build/bin/xprobe" "$runs" $sizes <<'EOF'
import os, statistics, subprocess, sys, time

root, tmp, xprobe, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sizes = [int(x) for x in sys.argv[5:]]
sys.path.insert(0, os.path.join(root, "tests", "pylib"))
from browser import Browser  # noqa: E402

sym = "_ZN3app6Server14handle_requestERKNS_7RequestE"
sel = ["--from", "uprobe:/srv/app/bin/server:%s:entry" % sym,
       "--to", "uprobe:/srv/app/bin/server:%s:return" % sym, "--match", "stack-nested"]
has_hist = "--hist " in subprocess.run([xprobe, "measure", "--help"], capture_output=True,
                                       text=True).stdout


def run(argv):
    """Wall seconds and peak RSS (bytes) of one run, stdout discarded."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.monotonic() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench_report: %s failed (%d): %s" % (" ".join(argv), p.returncode, err[-2000:]))
    return dt, ru.ru_maxrss * 1024


rows = []
for n in sizes:
    f = os.path.join(tmp, "p%d.jsonl" % n)
    html = os.path.join(tmp, "p%d.html" % n)
    base = [xprobe, "measure", "--input", f] + sel + ["--samples", str(n), "--max-events",
                                                      str(2 * n + 10)]
    modes = {"summary": base + (["--hist", "none"] if has_hist else [])}
    if has_hist:
        modes["terminal"] = base
    modes["html"] = modes["summary"] + ["--report", html]
    res = {m: [] for m in modes}
    run(modes["summary"])  # warm the page cache
    for _ in range(runs):
        for m, argv in modes.items():
            res[m].append(run(argv))
    size = os.path.getsize(html)
    loads, renders = [], []
    with Browser() as b:
        for _ in range(runs):
            page = b.load(html, timeout=120)
            assert not page.errors, page.errors
            loads.append(page.load_s)
            renders.append(page.evaluate("window.xprobeReport.renderMs") / 1000)
    med = {m: (statistics.median(x[0] for x in v), max(x[1] for x in v)) for m, v in res.items()}
    rows.append((n, med, size, statistics.median(loads), statistics.median(renders)))

print()
print("measure --input, %d runs each (medians; peak RSS: the largest)%s" % (
    runs, "" if has_hist else "; this binary has no --hist: summary = the default view"))
print("%10s  %-9s %9s %9s %10s" % ("pairs", "view", "time", "vs summ.", "peak RSS"))
for n, med, size, load, render in rows:
    b = med["summary"][0]
    for m, (t, rss) in med.items():
        print("%10s  %-9s %8.3fs %+8.1f%% %8.1f MB" % (
            "{:,}".format(n) if m == "summary" else "", m, t, 100 * (t - b) / b, rss / 2**20))
print()
print("the HTML report")
print("%10s %10s %12s %12s" % ("pairs", "file", "page load", "renderer"))
for n, med, size, load, render in rows:
    print("%10s %8.2f MB %10.0f ms %10.0f ms" % ("{:,}".format(n), size / 2**20, load * 1e3,
                                                 render * 1e3))
print()
big = [r for r in rows if r[0] >= 1000000]
mid = [r for r in rows if r[0] == 10000]
goals = []
for n, med, size, load, render in big:
    add = (med["html"][0] - med["summary"][0]) / med["summary"][0]
    goals.append(("report adds < 10%% at %s pairs: %+.1f%%" % ("{:,}".format(n), 100 * add),
                  add < 0.10))
    goals.append(("file < 2 MB at %s pairs: %.2f MB" % ("{:,}".format(n), size / 2**20),
                  size < 2 * 2**20))
for n, med, size, load, render in mid:
    goals.append(("page of 10,000 pairs loads in < 1 s: %.0f ms" % (load * 1e3), load < 1.0))
for text, ok in goals:
    print("goal: %-55s %s" % (text, "met" if ok else "MISSED"))
EOF
