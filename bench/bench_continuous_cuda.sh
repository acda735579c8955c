#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_continuous_cuda.sh - issue 20's bench for the in-target histograms
# (`measure --histogram` with cuda: endpoints; include/xprobe/agent.h,
# MODE_HISTOGRAM).  Two tables, medians of RUNS runs:
#
#   NVTX       ns per push/pop pair in an ordinary NVTX program (NVIDIA's
#              nvtx3 headers where the toolkit is installed, else
#              tests/lib/nvtx_loader.c) with libxprobe injected by
#              NVTX_INJECTION64_PATH, while its Agent has armed
#              (bench/lib/bench_agent_nvtx.c drives the real socket):
#                hist    a HISTOGRAM capture: each pair paired in the
#                        target and counted into the buckets, no record
#                match   the exact mode: two records a pair
#                off     nothing armed (the injected library idle)
#              and LTTng-UST's pair (bench/lib/bench_lttng.c, the same
#              payload in an active session) when lttng is installed.
#              Goal: hist <= match.
#   kernels    activity records per second the CUPTI backend folds on the
#              CUPTI TEST DOUBLE (bench/lib/bench_cupti.c, XPD_HOLD=1, only
#              cuptiActivityFlushAll timed): into the histograms (--by
#              name, 8 names), into the exact capture, into the aggregate
#              groups, and the double's own walk.  Goal: hist >= 20 M/s.
#
# The third part of the issue's bench (the collector's CPU and RSS over a
# 10-minute interval capture on redis with --metrics-out) is
# bench/bench_continuous.sh's.
#
# A run whose capture does not hold what its loop did fails the row
# (FAILED, exit 1 at the end): bench_agent_nvtx hist checks that the Agent
# counted exactly the loop's pairs, bench_cupti that every record was
# counted and none dropped.
#
# Usage: bench/bench_continuous_cuda.sh [BUILD_DIR] [RUNS]   (defaults: ./build, 5)
# Env:   NPAIR (1000000), NACT (200000)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
npair=${NPAIR:-1000000}
nact=${NACT:-200000}
lib="$build/lib/libxprobe.so"
dd="$build/tests/cupti_double/13"
nvtxinc=${XPL_NVTX_INCLUDE:-/usr/local/cuda/include}
status=0

[ -e "$lib" ] || { echo "bench_continuous_cuda: $lib missing; build libxprobe in $build" >&2; exit 1; }
tmp=$(mktemp -d /tmp/xp-bench-cont.XXXXXX)
session="xpcont$$"
have_lttng=0
cleanup() {
	[ "$have_lttng" = 1 ] && lttng destroy "$session" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cc=${CC:-cc}
if [ -e "$nvtxinc/nvtx3/nvToolsExt.h" ]; then
	nvtx_side="NVIDIA's nvtx3 headers ($nvtxinc)"
	$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -isystem "$nvtxinc" \
		-o "$tmp/bench_agent_nvtx" "$root/bench/lib/bench_agent_nvtx.c" -ldl
else
	nvtx_side="tests/lib/nvtx_loader.c (no NVTX headers under $nvtxinc)"
	$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -DXPL_OWN_NVTX_LOADER \
		-o "$tmp/bench_agent_nvtx" "$root/bench/lib/bench_agent_nvtx.c" \
		"$root/tests/lib/nvtx_loader.c" -ldl -lpthread
fi
$cc -O2 -g -I"$root/include" -I"$root/tests/lib" -I"$root/bench/lib" \
	-o "$tmp/bench_cupti" "$root/bench/lib/bench_cupti.c" -ldl

# the median of the first (or $2-th) field of $1's lines
median() {
	awk -v f="${2:-1}" '{print $f}' "$1" | sort -g |
		awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "FAILED"}'
}

# ROW-NAME CMD...: RUNS runs, every output line kept in $tmp/out
runs_of() {
	name=$1
	shift
	: >"$tmp/out"
	i=0
	while [ "$i" -lt "$runs" ]; do
		if ! "$@" >>"$tmp/out" 2>"$tmp/err"; then
			echo "bench_continuous_cuda: $name failed: $(cat "$tmp/err")" >&2
			status=1
			: >"$tmp/out"
			return 0
		fi
		i=$((i + 1))
	done
}

nvtx_row() {
	runs_of "NVTX $1" env NVTX_INJECTION64_PATH="$lib" "$tmp/bench_agent_nvtx" "$1" "$npair"
	median "$tmp/out"
}
hist=$(nvtx_row hist)
match=$(nvtx_row match)
off=$(nvtx_row off)
lttng_pair="-"
if command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null &&
	{ [ -e /usr/include/x86_64-linux-gnu/lttng/tracepoint.h ] ||
		[ -e /usr/include/lttng/tracepoint.h ]; } &&
	$cc -O2 -g -I"$root/bench/lib" -o "$tmp/bench_lttng" "$root/bench/lib/bench_lttng.c" \
		-llttng-ust -ldl 2>/dev/null; then
	lttng list >/dev/null 2>&1 || lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || true
	if lttng create "$session" --output="$tmp/lttng" >/dev/null 2>&1; then
		have_lttng=1
		lttng enable-channel -u --session="$session" --overwrite --subbuf-size=4M \
			--num-subbuf=8 xpch >/dev/null
		lttng enable-event -u --session="$session" --channel=xpch 'xpbench:*' >/dev/null
		lttng start "$session" >/dev/null
		runs_of "LTTng pair" "$tmp/bench_lttng" pair "$npair"
		lttng_pair=$(median "$tmp/out")
		lttng stop "$session" >/dev/null
	fi
fi

if [ -e "$dd/libcupti.so.13" ]; then
	act() {
		if [ "$1" = act_base ]; then
			runs_of "$1" env LD_LIBRARY_PATH="$dd" XPD_HOLD=1 "$tmp/bench_cupti" "$1" "$nact"
		else
			runs_of "$1" env LD_LIBRARY_PATH="$dd" XPD_HOLD=1 LD_PRELOAD="$lib" \
				"$tmp/bench_cupti" "$1" "$nact"
		fi
		echo "$(median "$tmp/out") $(median "$tmp/out" 2)"
	}
	a_hist=$(act act_hist)
	a_exact=$(act act_exact)
	a_agg=$(act act_agg)
	a_base=$(act act_base)
else
	echo "bench_continuous_cuda: the CUPTI test double ($dd) is missing: build cupti_double" >&2
	a_hist="- -" a_exact="- -" a_agg="- -" a_base="- -"
	status=1
fi

echo "NVTX ($nvtx_side), ns per push/pop pair, median of $runs x $npair"
printf '  %-44s %10s\n' "HISTOGRAM capture armed (paired in the target)" "$hist" \
	"exact capture armed (two records)" "$match" "injected, nothing armed" "$off" \
	"LTTng-UST pair (active session)" "$lttng_pair"
awk -v h="$hist" -v m="$match" 'BEGIN { if (h + 0 > 0 && m + 0 > 0)
	printf "  goal hist <= exact: %s (%.2fx)\n", (h <= m ? "met" : "NOT met"), h / m }'
echo "kernels on the CUPTI test double, median of $runs x $nact records (ns/record, records/s)"
for r in "histogram (--by name, 8 names):$a_hist" "exact capture:$a_exact" \
	"aggregate groups:$a_agg" "the double's own walk (no Agent):$a_base"; do
	printf '  %-44s %10s %14s\n' "${r%%:*}" ${r#*:}
done
awk -v r="$(echo "$a_hist" | awk '{print $2}')" 'BEGIN { if (r + 0 > 0)
	printf "  goal hist >= 20 M records/s: %s (%.1f M/s)\n", (r >= 2e7 ? "met" : "NOT met"), r / 1e6 }'
exit $status
