#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh - what `make demo` runs: xprobe measures a running process live.
# The bundled target (tests/fixtures/live_service.c, built with xprobe) is a
# small service whose two threads handle requests forever: each maps a
# buffer and waits 1-4 ms.  xprobe attaches PID-scoped eBPF probes to it,
# collects a bounded capture, pairs it and reports latency with evidence:
#   1. handle_request() latency, entry to return (uprobe + uretprobe), as a
#      person reads it;
#   2. mmap() latency (raw syscall tracepoints, exact per-thread pairs), as
#      a script reads it (--json), with the capture exported as a Chrome
#      trace.
# Live measurement needs root (eBPF).  The completed-capture path is shown
# by demo/mmap.jsonl: xprobe measure --input demo/mmap.jsonl ...
#
# Usage: scripts/demo.sh [path/to/xprobe]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
xprobe=${1:-$root/build/bin/xprobe}
build=$(cd "$(dirname "$xprobe")/.." && pwd)
target=$build/tests/fixtures/live_service
py=/usr/bin/python3

if [ ! -x "$xprobe" ] || [ ! -x "$target" ]; then
	echo "demo: $xprobe or $target is not built (run make build)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "demo: live measurement attaches eBPF probes: run it as root" >&2
	exit 1
fi

"$target" --seconds 60 >/dev/null &
pid=$!
out=$(mktemp -d "${TMPDIR:-/tmp}/xprobe-demo.XXXXXX")
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT INT TERM
sleep 0.2
echo "target: $target running as PID $pid"

echo
echo "\$ xprobe measure --pid $pid --from 'uprobe:$target:handle_request:entry' \\"
echo "    --to 'uprobe:$target:handle_request:return' --match stack-nested --samples 40"
"$xprobe" measure --pid "$pid" \
	--from "uprobe:$target:handle_request:entry" \
	--to "uprobe:$target:handle_request:return" --match stack-nested --samples 40

trace=$out/mmap-trace.json
echo
echo "\$ xprobe measure --pid $pid --from syscall:mmap:entry --to syscall:mmap:exit \\"
echo "    --match exact --samples 40 --events-out $trace --format chrome --json | (summary)"
"$xprobe" measure --pid "$pid" --from syscall:mmap:entry --to syscall:mmap:exit \
	--match exact --samples 40 --events-out "$trace" --format chrome \
	--json --non-interactive --no-color | "$py" -c '
import json, sys

d = json.load(sys.stdin)
if not d["ok"]:
    e = d["error"]
    sys.exit("%s: %s" % (e["code"], e["message"]))
m, c, col = d["measurement"], d["correlation"], d["collection"]
# ring losses after the stopping point are a warning (the contract has no
# field for the ring); losses inside the capture would be EVENTS_DROPPED
lost = sum(w["details"]["dropped_records"] for w in d["warnings"]
           if w["code"] == "HOST_RECORDS_LOST_AFTER_STOP")
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
print("slowest call: tid %d, mmap(length=%d, prot=%d, flags=0x%x) = 0x%x took %s"
      % (slow["start"]["tid"], args[1], args[2], args[3],
         slow["end"]["host"]["return_value"], us(slow["latency_ns"])))
print("threads: %s" % sorted({p["start"]["tid"] for p in d["evidence"]}))
print("collection: %d host events, %d dropped, %d ring records lost after the stopping point"
      % (col["host_events"], col["dropped_events"], lost))
'
echo "Chrome trace of the capture: $trace"
echo "(open it in https://ui.perfetto.dev or chrome://tracing)"
