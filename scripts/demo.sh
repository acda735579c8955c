#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh - what `make demo` runs: xprobe measures mmap latency in the
# bundled capture demo/mmap.jsonl (one process, three threads, 150 mmap
# calls recorded by the eBPF syscall collector; demo/make_demo_capture.py
# says how it was made), first as a person reads it, then as a script
# reads it (--json), then exports the capture as a Chrome trace.
#
# Usage: scripts/demo.sh [path/to/xprobe]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
xprobe=${1:-$root/build/bin/xprobe}
capture=$root/demo/mmap.jsonl
py=/usr/bin/python3

if [ ! -x "$xprobe" ]; then
	echo "demo: $xprobe is not built (run make build)" >&2
	exit 1
fi

set -- measure --input "$capture" \
	--from syscall:mmap:entry --to syscall:mmap:exit --match exact --samples 100

echo "\$ xprobe measure --input demo/mmap.jsonl --from syscall:mmap:entry" \
	"--to syscall:mmap:exit --match exact --samples 100"
"$xprobe" "$@"

echo
echo "\$ xprobe measure ... --json | (summary of the JSON document)"
"$xprobe" "$@" --json --non-interactive --no-color | "$py" -c '
import json, sys

d = json.load(sys.stdin)
if not d["ok"]:
    e = d["error"]
    sys.exit("%s: %s" % (e["code"], e["message"]))
m, c = d["measurement"], d["correlation"]
s, l = m["samples"], m["latency_ns"]
us = lambda ns: "%.1f us" % (ns / 1000.0)
print("pairs: %d matched, %d unmatched start, %d unmatched end, %d ambiguous"
      % (s["matched"], s["unmatched_start"], s["unmatched_end"], s["ambiguous"]))
print("method: %s (confidence %s, score %.3f), clock %s"
      % (c["method"], c["confidence"], c["score"], d["clock"]["alignment"]))
print("latency: p50 %s, p90 %s, p99 %s, max %s"
      % (us(l["p50"]), us(l["p90"]), us(l["p99"]), us(l["max"])))
slow = max(d["evidence"], key=lambda p: p["latency_ns"])
args = [a["value"] for a in slow["start"]["host"]["arguments"]]
print("slowest call: tid %d, mmap(length=%d, prot=%d, flags=0x%x) took %s"
      % (slow["start"]["tid"], args[1], args[2], args[3], us(slow["latency_ns"])))
failed = [p for p in d["evidence"] if p["end"]["host"]["return_value"] < 0]
for p in failed:
    print("failed call: tid %d, mmap(length=%d) returned %d"
          % (p["start"]["tid"], p["start"]["host"]["arguments"][1]["value"],
             p["end"]["host"]["return_value"]))
print("collection: %s, %d host events, %d dropped"
      % (d["collection"]["completeness"], d["collection"]["host_events"],
         d["collection"]["dropped_events"]))
'

out=$(mktemp -d "${TMPDIR:-/tmp}/xprobe-demo.XXXXXX")
trace=$out/mmap-trace.json
echo
echo "\$ xprobe measure ... --events-out $trace --format chrome"
"$xprobe" "$@" --events-out "$trace" --format chrome >/dev/null
echo "Chrome trace of all $(grep -c '"ph": "i"' "$trace") events: $trace"
echo "(open it in https://ui.perfetto.dev or chrome://tracing)"
