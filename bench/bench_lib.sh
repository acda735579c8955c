#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench_lib.sh - libxprobe's recording hot path and its stop/serialize,
# side by side in one run with LTTng-UST (the in-process tracer a user would
# reach for instead) and with no tracing at all.
#
# Cost per recorded event, ns (median of RUNS processes each):
#   direct record   xprobe_trace_record(u32, u64, u64) with a session active
#                   (bench/lib/bench_record.c)  vs  an LTTng-UST tracepoint
#                   with the same payload in an active `lttng` session
#                   (bench/lib/bench_lttng.c)  vs  no session (the call when
#                   not tracing) and an empty non-inlined call;
#   floor           a bare 40-byte write with rdtsc into a prefaulted buffer,
#                   and rdtsc alone: what no recorder can beat on this host
#                   (docs/libxprobe.md, "Performance");
#   NVTX pair       nvtxRangePushA("bench") + nvtxRangePop() in an ordinary
#                   NVTX program under NVTX_INJECTION64_PATH=libxprobe.so
#                   with an XPROBE_INSPECT_* session (bench/lib/bench_nvtx.c)
#                   vs  two LTTng-UST tracepoints with the same payloads
#                   vs  the same program without injection (NVTX's no-op);
#   Agent pair      the same pair while the program's Agent has a capture
#                   armed over its control socket (bench/lib/
#                   bench_agent_nvtx.c drives it like `xprobe measure`): a
#                   name rule that matches (two records a pair), one that
#                   rejects (the hot-path filter refuses both calls), and
#                   nothing armed (the injected library's idle cost).
# LTTng runs with its channel in overwrite mode (every event is written,
# none discarded), 8 x 4 MiB sub-buffers, per-UID buffers.
#
# Stop/serialize: NSER events recorded by one thread, then the time of
# xprobe_inspect_stop() (quiesce, TSC -> ns conversion, CRC32C, write of
# ntrace.pb and trace_info.pb), as MB/s of ntrace.pb and events/s.
#
# Goals (issue #5): direct record <= 20 ns, NVTX pair <= 60 ns, both below
# LTTng-UST measured in this run; (issue #10) an Agent pair <= 60 ns when
# its rule matches and <= 25 ns when it rejects, where the TSC is trusted
# (the "TSC forced" rows elsewhere); each printed as met or MISSED (the exit
# status says whether the benchmark ran, not whether a goal was met: the
# floor line says what the host allows).
#
# A row fails (printed FAILED, exit status 1 at the end) when one of its
# runs fails: bench_record exits 1 when a record was dropped, bench_nvtx
# when its session's trace_info.pb counts a dropped record (it stops the
# injected session itself and reads host_dropped), bench_agent_nvtx when
# its capture does not hold exactly the records of its loop, a
# stop/serialize run when a record dropped or the stop failed.  A drop's
# cost is not a record's.
#
# The NVTX program is built against NVIDIA's headers where the CUDA toolkit
# is installed (XPL_NVTX_INCLUDE, default /usr/local/cuda/include), else
# against tests/lib/nvtx_loader.c, our implementation of the protocol (its
# no-injection call is a function call, not NVTX's inlined NULL check).
#
# Usage: bench/bench_lib.sh [BUILD_DIR] [RUNS]   (defaults: ./build, 5)
# Env:   NDIRECT (2000000), NPAIR (1000000), NSER (10000000)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
ndirect=${NDIRECT:-2000000}
npair=${NPAIR:-1000000}
nser=${NSER:-10000000}
lib="$build/lib/libxprobe.so"
nvtxinc=${XPL_NVTX_INCLUDE:-/usr/local/cuda/include}

[ -e "$lib" ] || { echo "bench_lib: $lib missing; build libxprobe in $build first" >&2; exit 1; }
command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null ||
	{ echo "bench_lib: lttng-tools is not installed" >&2; exit 1; }
[ -e /usr/include/x86_64-linux-gnu/lttng/tracepoint.h ] || [ -e /usr/include/lttng/tracepoint.h ] ||
	{ echo "bench_lib: liblttng-ust-dev is not installed" >&2; exit 1; }

tmp=$(mktemp -d /tmp/xp-bench-lib.XXXXXX)
session="xpbench$$"
started_pid=
cleanup() {
	lttng destroy "$session" >/dev/null 2>&1 || true
	if [ -n "$started_pid" ]; then
		kill "$started_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cc=${CC:-cc}
$cc -O2 -g -I"$root/include" -o "$tmp/bench_record" "$root/bench/lib/bench_record.c" \
	-L"$build/lib" -lxprobe -Wl,-rpath,"$build/lib"
# the NVTX program: NVIDIA's headers where the toolkit is installed, else
# our own implementation of the protocol's application side
if [ -e "$nvtxinc/nvtx3/nvToolsExt.h" ]; then
	nvtx_side="NVTX headers of $nvtxinc"
	$cc -O2 -g -I"$root/include" -isystem "$nvtxinc" -o "$tmp/bench_nvtx" \
		"$root/bench/lib/bench_nvtx.c" -ldl
	# tests/lib for agent_peer.h, the socket client
	$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -isystem "$nvtxinc" \
		-o "$tmp/bench_agent_nvtx" "$root/bench/lib/bench_agent_nvtx.c" -ldl
else
	nvtx_side="tests/lib/nvtx_loader.c (no NVTX headers under $nvtxinc)"
	$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -DXPL_OWN_NVTX_LOADER \
		-o "$tmp/bench_nvtx" "$root/bench/lib/bench_nvtx.c" \
		"$root/tests/lib/nvtx_loader.c" -ldl -lpthread
	$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -DXPL_OWN_NVTX_LOADER \
		-o "$tmp/bench_agent_nvtx" "$root/bench/lib/bench_agent_nvtx.c" \
		"$root/tests/lib/nvtx_loader.c" -ldl -lpthread
fi
$cc -O2 -g -I"$root/bench/lib" -o "$tmp/bench_lttng" "$root/bench/lib/bench_lttng.c" \
	-llttng-ust -ldl

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# runs of one command (its first field on stdout each): the median, or
# FAILED when a run fails (bench_record exits 1 when a record was dropped,
# bench_nvtx when its session dropped one: the cost of a drop is not the
# cost of a record); a failed row makes the benchmark's exit status 1.
# Usage: run_median ROW-NAME COMMAND...
run_median() {
	row=$1
	shift
	: >"$tmp/runs"
	i=0
	while [ "$i" -lt "$runs" ]; do
		if ! "$@" >"$tmp/run.out"; then
			echo "bench_lib: $row: run $((i + 1)) failed: $(cat "$tmp/run.out")" >&2
			echo "$row" >>"$tmp/failed"
			echo FAILED
			return 0
		fi
		cut -d' ' -f1 "$tmp/run.out" >>"$tmp/runs"
		i=$((i + 1))
	done
	median <"$tmp/runs"
}

echo "bench_lib: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "bench_lib: clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
	"runs=$runs, direct=$ndirect, pairs=$npair; the NVTX program uses $nvtx_side"

# --- libxprobe, no tracing ----------------------------------------------------
export BENCH_OUT="$tmp/out"
x_direct=$(run_median "direct record" "$tmp/bench_record" direct "$ndirect")
x_off=$(run_median "direct record, off" "$tmp/bench_record" off "$ndirect")
x_empty=$(run_median "empty call" "$tmp/bench_record" empty "$ndirect")
x_rdtsc=$(run_median "rdtsc" "$tmp/bench_record" rdtsc "$ndirect")
x_floor=$(run_median "floor" "$tmp/bench_record" floor "$ndirect")
x_mono=$(run_median "clock_gettime" "$tmp/bench_record" mono "$ndirect")
# the recorder where the TSC is usable (the default picks it only when the
# kernel's clocksource is tsc; XPROBE_INSPECT_CLOCK=tsc forces it)
x_direct_tsc=$(run_median "direct record, TSC forced" env XPROBE_INSPECT_CLOCK=tsc \
	"$tmp/bench_record" direct "$ndirect")
n_none=$(run_median "NVTX pair, no injection" env -u NVTX_INJECTION64_PATH \
	"$tmp/bench_nvtx" "$npair")
# bench_nvtx reads its own session's drop count (a non-zero one fails the row)
x_nvtx=$(run_median "NVTX pair" env NVTX_INJECTION64_PATH="$lib" XPROBE_INSPECT_ENABLE=1 \
	XPROBE_INSPECT_OUTPUT_DIR="$tmp/nvtx" XPROBE_INSPECT_ACTIVITIES=system_profile \
	XPROBE_INSPECT_RING_EVENTS=4194304 "$tmp/bench_nvtx" "$npair")
x_nvtx_tsc=$(run_median "NVTX pair, TSC forced" env NVTX_INJECTION64_PATH="$lib" \
	XPROBE_INSPECT_ENABLE=1 XPROBE_INSPECT_OUTPUT_DIR="$tmp/nvtx" \
	XPROBE_INSPECT_ACTIVITIES=system_profile XPROBE_INSPECT_RING_EVENTS=4194304 \
	XPROBE_INSPECT_CLOCK=tsc "$tmp/bench_nvtx" "$npair")

# the Agent: a capture armed over the socket (bench_agent_nvtx checks its
# own capture: a row fails when it does not hold exactly the loop's records)
a_match=$(run_median "Agent pair, rule matches" env NVTX_INJECTION64_PATH="$lib" \
	"$tmp/bench_agent_nvtx" match "$npair")
a_reject=$(run_median "Agent pair, rule rejects" env NVTX_INJECTION64_PATH="$lib" \
	"$tmp/bench_agent_nvtx" reject "$npair")
a_off=$(run_median "Agent pair, nothing armed" env NVTX_INJECTION64_PATH="$lib" \
	"$tmp/bench_agent_nvtx" off "$npair")
a_match_tsc=$(run_median "Agent pair, rule matches, TSC forced" env \
	NVTX_INJECTION64_PATH="$lib" XPROBE_INSPECT_CLOCK=tsc "$tmp/bench_agent_nvtx" match "$npair")
a_reject_tsc=$(run_median "Agent pair, rule rejects, TSC forced" env \
	NVTX_INJECTION64_PATH="$lib" XPROBE_INSPECT_CLOCK=tsc "$tmp/bench_agent_nvtx" reject "$npair")

# --- LTTng-UST, session active -------------------------------------------------
if ! lttng list >/dev/null 2>&1; then
	lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
	for f in /var/run/lttng/lttng-sessiond.pid "$HOME/.lttng/lttng-sessiond.pid"; do
		if [ -e "$f" ]; then
			started_pid=$(cat "$f")
			break
		fi
	done
fi
lttng create "$session" --output="$tmp/lttng" >/dev/null
lttng enable-channel -u --session="$session" --overwrite --subbuf-size=4M --num-subbuf=8 \
	xpch >/dev/null
lttng enable-event -u --session="$session" --channel=xpch 'xpbench:*' >/dev/null
lttng start "$session" >/dev/null
l_record=$(run_median "LTTng record" "$tmp/bench_lttng" record "$ndirect")
l_pair=$(run_median "LTTng pair" "$tmp/bench_lttng" pair "$npair")
lttng stop "$session" >/dev/null
recorded=$(du -sk "$tmp/lttng" | cut -f1)
lttng destroy "$session" >/dev/null
[ "$recorded" -gt 0 ] || { echo "bench_lib: LTTng recorded nothing" >&2; exit 1; }

# --- stop / serialize -------------------------------------------------------------
: >"$tmp/ser"
i=0
while [ "$i" -lt 3 ]; do
	"$tmp/bench_record" serialize "$nser" >>"$tmp/ser" || {
		echo "bench_lib: stop/serialize: run $((i + 1)) failed (a record dropped, or" \
			"the stop failed)" >&2
		exit 1
	}
	rm -rf "$tmp/out"
	i=$((i + 1))
done
ser=$(awk '{ print $1 / ($2 / 1e9) / 1e6, $1, $2 }' "$tmp/ser" | sort -n | sed -n 2p)
ser_mbs=$(echo "$ser" | awk '{ printf "%.0f", $1 }')
ser_mb=$(echo "$ser" | awk '{ printf "%.0f", $2 / 1e6 }')
ser_ms=$(echo "$ser" | awk '{ printf "%.0f", $3 / 1e6 }')
ser_evs=$(echo "$ser" | awk -v n="$nser" '{ printf "%.1f", n / ($3 / 1e9) / 1e6 }')

ratio() {
	case "$1$2" in
	*FAILED*) echo - ;;
	*) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;;
	esac
}

echo
printf '%-34s %12s %12s %14s %10s\n' "ns per event (median of $runs)" libxprobe lttng-ust "no tracing" "ours/lttng"
printf '%-34s %12s %12s %14s %10s\n' "direct record (u32 + 2 x u64)" "$x_direct" "$l_record" \
	"$x_off (off)" "$(ratio "$x_direct" "$l_record")"
printf '%-34s %12s %12s %14s %10s\n' "  empty call" "" "" "$x_empty" ""
printf '%-34s %12s %12s %14s %10s\n' "  floor: 40-byte write + rdtsc" "" "" "$x_floor" ""
printf '%-34s %12s %12s %14s %10s\n' "  rdtsc alone" "" "" "$x_rdtsc" ""
printf '%-34s %12s %12s %14s %10s\n' "  clock_gettime(MONOTONIC) alone" "" "" "$x_mono" ""
printf '%-34s %12s %12s %14s %10s\n' "  direct record, TSC forced" "$x_direct_tsc" "" "" \
	"$(ratio "$x_direct_tsc" "$l_record")"
printf '%-34s %12s %12s %14s %10s\n' "NVTX push+pop pair (injection)" "$x_nvtx" "$l_pair" \
	"$n_none (nvtx)" "$(ratio "$x_nvtx" "$l_pair")"
printf '%-34s %12s %12s %14s %10s\n' "  NVTX pair, TSC forced" "$x_nvtx_tsc" "" "" \
	"$(ratio "$x_nvtx_tsc" "$l_pair")"
printf '%-34s %12s %12s %14s %10s\n' "Agent pair, capture armed, matches" "$a_match" "$l_pair" \
	"$a_off (idle)" "$(ratio "$a_match" "$l_pair")"
printf '%-34s %12s %12s %14s %10s\n' "  Agent pair, rule rejects" "$a_reject" "$l_pair" "" \
	"$(ratio "$a_reject" "$l_pair")"
printf '%-34s %12s %12s %14s %10s\n' "  Agent matches, TSC forced" "$a_match_tsc" "" "" \
	"$(ratio "$a_match_tsc" "$l_pair")"
printf '%-34s %12s %12s %14s %10s\n' "  Agent rejects, TSC forced" "$a_reject_tsc" "" "" \
	"$(ratio "$a_reject_tsc" "$l_pair")"
echo
echo "stop/serialize: $nser events, ntrace.pb ${ser_mb} MB in ${ser_ms} ms:" \
	"${ser_mbs} MB/s, ${ser_evs} M events/s (median of 3)"
echo

goal() { # name value op bound
	if [ "$2" = FAILED ] || [ "$4" = FAILED ]; then
		echo "goal: $1: FAILED (a run of the row failed)"
	elif awk -v v="$2" -v b="$4" -v op="$3" 'BEGIN { exit !(op == "<=" ? v <= b : v < b) }'; then
		echo "goal: $1: $2 $3 $4: met"
	else
		echo "goal: $1: $2 $3 $4: MISSED"
	fi
}
echo "floor of this host: a bare 40-byte ring write with rdtsc costs $x_floor ns" \
	"(rdtsc alone $x_rdtsc ns); libxprobe's direct record is $(ratio "$x_direct" "$x_floor")x it"
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
if [ "$cs" = tsc ]; then
	echo "sessions here timestamp with the TSC (kernel clocksource tsc)"
else
	echo "sessions here timestamp with clock_gettime ($x_mono ns alone): the kernel's" \
		"clocksource is $cs, so the TSC is not trusted; the 'TSC forced' rows are the" \
		"recorder's cost on hosts where it is (LTTng-UST reads CLOCK_MONOTONIC either way)"
fi
goal "direct record ns <= 20" "$x_direct" "<=" 20
goal "NVTX pair ns <= 60" "$x_nvtx" "<=" 60
goal "direct record ns <= 20, TSC forced" "$x_direct_tsc" "<=" 20
goal "NVTX pair ns <= 60, TSC forced" "$x_nvtx_tsc" "<=" 60
goal "direct record below LTTng-UST" "$x_direct" "<" "$l_record"
goal "NVTX pair below LTTng-UST" "$x_nvtx" "<" "$l_pair"
goal "Agent matched pair ns <= 60" "$a_match" "<=" 60
goal "Agent rejected pair ns <= 25" "$a_reject" "<=" 25
goal "Agent matched pair ns <= 60, TSC forced" "$a_match_tsc" "<=" 60
goal "Agent rejected pair ns <= 25, TSC forced" "$a_reject_tsc" "<=" 25
goal "Agent matched pair below LTTng-UST" "$a_match" "<" "$l_pair"
if [ -s "$tmp/failed" ]; then
	echo "bench_lib: rows FAILED: $(tr '\n' ';' <"$tmp/failed")" >&2
	exit 1
fi
