#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_decode.sh - completed-capture decoding, side by side with the tools a
# user would reach for instead (jq to parse the JSONL, wc -l to merely read
# it), on one machine in one run.
#
# Generates Event JSONL captures of EVENTS events with bench/gen_events.py
# (a uprobe entry/return pair and a read(2) syscall entry/exit pair, several
# threads, every field present, one canonical line per event as our
# exporter writes them; and the syscall capture again with spaces after
# ',' and ':', which the decoder's fast path declines), then times, RUNS
# times each (medians):
#   decode    bench/decode_bench.c (built here against BUILD_DIR's static
#             libraries): xp_inputs_load() alone -- detection, decode, sort;
#             on the canonical captures, on the syscall one with the fast
#             path off (XPROBE_DECODE_NO_FASTPATH=1: simdjson alone), and on
#             the spaced one (the fast path declines, simdjson decodes);
#   measure   build/bin/xprobe measure --input ... --json: decode + correlate
#             + render (exact on the syscall capture: uprobe pairs have no
#             exact key; first-after and stack-nested on the uprobe one);
#   jq        jq -c . FILE >/dev/null (skipped with BENCH_DECODE_JQ=0: it
#             takes minutes);
#   wc        wc -l FILE.
# Prints events/s, MB/s, peak RSS in bytes per event (wait4's ru_maxrss of
# each child), the ratios ours/jq and ours/wc (throughput), and the goals:
# decode + exact >= 2,000,000 events/s, >= 3x jq, < 300 bytes per event.
#
# Usage: bench/bench_decode.sh [BUILD_DIR] [EVENTS] [RUNS]
#        (defaults: ./build, 1000000, 3)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
events=${2:-1000000}
runs=${3:-3}
py=/usr/bin/python3

for f in "$build/bin/xprobe" "$build/libxp_capture.a" "$build/libxp_capture_json.a" \
	"$build/libxp_model.a" "$build/libxpc.a"; do
	if [ ! -e "$f" ]; then
		echo "bench_decode: $f missing; build xprobe in $build first" >&2
		exit 1
	fi
done
jq=${BENCH_DECODE_JQ:-1}
if [ "$jq" != 0 ]; then
	command -v jq >/dev/null || { echo "bench_decode: jq is not installed" >&2; exit 1; }
fi

tmp=$(mktemp -d /tmp/xp-bench-decode.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# the capture library reaches the .xtf reader (lib/) and protobuf-c
xtf=
if [ -e "$build/lib/libxtf_reader.a" ]; then
	xtf="$build/lib/libxtf_reader.a $(pkg-config --libs libprotobuf-c)"
fi
# shellcheck disable=SC2086
${CC:-cc} -O2 -I"$root/src" -I"$root/include" -o "$tmp/decode_bench" "$root/bench/decode_bench.c" \
	"$build/libxp_capture.a" "$build/libxp_capture_json.a" "$build/libxp_model.a" $xtf \
	"$build/libxpc.a" -lsimdjson -lstdc++ -lpthread -ldl

echo "bench_decode: generating $events-event captures in $tmp"
$py "$root/bench/gen_events.py" --events "$events" --kind uprobe --out "$tmp/uprobe.jsonl" 2>/dev/null
$py "$root/bench/gen_events.py" --events "$events" --kind syscall --out "$tmp/syscall.jsonl" 2>/dev/null
$py "$root/bench/gen_events.py" --events "$events" --kind syscall --style spaced \
	--out "$tmp/syscall-spaced.jsonl" 2>/dev/null

$py - "$tmp" "$build/bin/xprobe" "$events" "$runs" "$jq" <<'EOF'
import os, statistics, subprocess, sys, time

tmp, xprobe, events, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with_jq = sys.argv[5] != "0"
up, sc = os.path.join(tmp, "uprobe.jsonl"), os.path.join(tmp, "syscall.jsonl")
sp = os.path.join(tmp, "syscall-spaced.jsonl")
slow = dict(os.environ, XPROBE_DECODE_NO_FASTPATH="1")
sym = "_ZN3app6Server14handle_requestERKNS_7RequestE"
ufrom = "uprobe:/srv/app/bin/server:%s:entry" % sym
uto = "uprobe:/srv/app/bin/server:%s:return" % sym


def measure(path, frm, to, policy):
    return [xprobe, "measure", "--input", path, "--from", frm, "--to", to, "--match", policy,
            "--samples", "100", "--max-events", str(events), "--json"]


decode = os.path.join(tmp, "decode_bench")
cases = [
    # name, argv, file, environment
    ("decode uprobe", [decode, str(events), up], up, None),
    ("decode syscall", [decode, str(events), sc], sc, None),
    ("decode syscall, fast path off", [decode, str(events), sc], sc, slow),
    ("decode syscall, spaced", [decode, str(events), sp], sp, None),
    ("measure exact (syscall)", measure(sc, "syscall:read:entry", "syscall:read:exit", "exact"),
     sc, None),
    ("measure exact, fast path off", measure(sc, "syscall:read:entry", "syscall:read:exit",
                                             "exact"), sc, slow),
    ("measure first-after (uprobe)", measure(up, ufrom, uto, "first-after"), up, None),
    ("measure stack-nested (uprobe)", measure(up, ufrom, uto, "stack-nested"), up, None),
]
if with_jq:
    cases += [
        ("jq -c . (uprobe)", ["jq", "-c", ".", up], up, None),
        ("jq -c . (syscall)", ["jq", "-c", ".", sc], sc, None),
    ]
cases += [
    ("wc -l (uprobe)", ["wc", "-l", up], up, None),
    ("wc -l (syscall)", ["wc", "-l", sc], sc, None),
]


def run_once(argv, env):
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read().decode(errors="replace")
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench_decode: %s failed (%d): %s" % (" ".join(argv[:4]), p.returncode, err))
    return wall, ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime


res = {}
for name, argv, path, env in cases:
    walls, rss, cpus = [], [], []
    for _ in range(runs):
        w, r, c = run_once(argv, env)
        walls.append(w)
        rss.append(r)
        cpus.append(c)
    res[name] = (statistics.median(walls), statistics.median(rss), os.path.getsize(path),
                 statistics.median(cpus))

with open("/proc/loadavg") as f:
    load = f.read().split()[0]
print("\n(%d CPUs, load average %s: the machine is shared, so CPU seconds are shown too)"
      % (os.cpu_count(), load))
print("%-32s %8s %8s %12s %14s %9s %9s %13s" % (
    "median of %d runs" % runs, "wall s", "cpu s", "events/s", "events/cpu-s", "MB/s",
    "B/event", "peak RSS B/ev"))
for name, (wall, rss, size, cpu) in res.items():
    print("%-32s %8.3f %8.3f %12.0f %14.0f %9.1f %9.1f %13.1f" % (
        name, wall, cpu, events / wall, events / cpu if cpu else 0, size / wall / 1e6,
        size / events, rss / events))


def ratio(a, b):
    return res[b][0] / res[a][0]


print("\nratios (throughput, ours / theirs)")
for ours, kind in (("decode uprobe", "uprobe"), ("decode syscall", "syscall"),
                   ("decode syscall, fast path off", "syscall"),
                   ("measure exact (syscall)", "syscall"),
                   ("measure first-after (uprobe)", "uprobe")):
    print("  %-30s / jq: %7s   / wc -l: %5.3fx" % (
        ours, "%.2fx" % ratio(ours, "jq -c . (%s)" % kind) if with_jq else "-",
        ratio(ours, "wc -l (%s)" % kind)))
print("  %-30s %.2fx" % ("fast path on / off (decode)",
                          ratio("decode syscall", "decode syscall, fast path off")))

ex = res["measure exact (syscall)"]
goals = [
    ("decode + exact correlation >= 2,000,000 events/s", events / ex[0] >= 2e6,
     "%.0f events/s" % (events / ex[0])),
]
if with_jq:
    goals.append(
        ("decode >= 3x faster than jq parsing", ratio("decode uprobe", "jq -c . (uprobe)") >= 3
         and ratio("decode syscall", "jq -c . (syscall)") >= 3,
         "%.1fx / %.1fx" % (ratio("decode uprobe", "jq -c . (uprobe)"),
                            ratio("decode syscall", "jq -c . (syscall)"))))
goals += [
    ("peak RSS < 300 bytes per retained event",
     max(res["decode uprobe"][1], res["decode syscall"][1], ex[1]) / events < 300,
     "decode %.0f / %.0f, measure exact %.0f B/event" % (
         res["decode uprobe"][1] / events, res["decode syscall"][1] / events, ex[1] / events)),
]
print("\ngoals")
for text, ok, got in goals:
    print("  [%s] %s (%s)" % ("met" if ok else "MISSED", text, got))
EOF
