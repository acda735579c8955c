#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The libxprobe half of bench/bench_cuda.sh: what the CUPTI backend costs,
# on the CUPTI test double (tests/fixtures/cupti_double; no GPU), each row
# side by side with the same loop and no Agent (bench/lib/bench_cupti.c
# says what each mode times).  Medians of RUNS processes each.
#
#   ns per API callback        the double delivering to an empty callback
#                              (no libxprobe) vs libxprobe's callback
#                              refusing it (filtered out, goal < 30 ns of
#                              our own) vs recording it (retained)
#   activity records per s     the double's buffers walked by an empty
#                              consumer vs harvested into an exact capture
#                              (goal >= 20 M/s) and into an aggregate one
#   ARM ms                     the first CUDA ARM (loads CUPTI) and later ones
#
# Sourced (bench/bench_cuda.sh): defines bench_cupti_rows BUILD RUNS.  Run:
#   bench/lib/bench_cupti.sh [BUILD_DIR] [RUNS]   (defaults ./build, 5)
# Env: NCB (100000 calls: 200000 records of 64 bytes), NACT (200000
# records of 112 bytes): within the 32 MiB the Agent prefaults ahead.

bench_cupti_rows() {
	bc_root=$(cd "$(dirname "$0")" && cd "$(git rev-parse --show-toplevel 2>/dev/null || echo ..)" && pwd)
	[ -e "$bc_root/bench/lib/bench_cupti.c" ] || bc_root=$(cd "$(dirname "$0")/../.." && pwd)
	bc_build=${1:-$bc_root/build}
	bc_runs=${2:-5}
	bc_ncb=${NCB:-100000}
	bc_nact=${NACT:-200000}
	bc_lib="$bc_build/lib/libxprobe.so"
	bc_dd="$bc_build/tests/cupti_double/13"
	if [ ! -e "$bc_lib" ] || [ ! -e "$bc_dd/libcupti.so.13" ]; then
		echo "bench_cupti: $bc_lib or the CUPTI test double ($bc_dd) missing:" \
			"build libxprobe and cupti_double in $bc_build (needs the CUPTI headers)" >&2
		return 1
	fi
	bc_tmp=$(mktemp -d /tmp/xp-bench-cupti.XXXXXX)
	${CC:-cc} -O2 -g -I"$bc_root/include" -I"$bc_root/tests/lib" -I"$bc_root/bench/lib" \
		-o "$bc_tmp/bench_cupti" "$bc_root/bench/lib/bench_cupti.c" -ldl || {
		rm -rf "$bc_tmp"
		return 1
	}
	# MODE N [ENV...]: the median of the first field over RUNS runs; the
	# second field's median (records/s, ms) goes to $bc_tmp/second
	bc_run() {
		bc_mode=$1
		bc_n=$2
		shift 2
		: >"$bc_tmp/runs"
		: >"$bc_tmp/runs2"
		i=0
		while [ "$i" -lt "$bc_runs" ]; do
			out=$(env LD_LIBRARY_PATH="$bc_dd" "$@" "$bc_tmp/bench_cupti" "$bc_mode" "$bc_n") || {
				echo "bench_cupti: $bc_mode failed (status $?): the capture did not hold what the loop did" >&2
				return 1
			}
			echo "$out" | awk '{print $1}' >>"$bc_tmp/runs"
			echo "$out" | awk '{print $2}' >>"$bc_tmp/runs2"
			i=$((i + 1))
		done
		sort -g "$bc_tmp/runs2" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}' >"$bc_tmp/second"
		sort -g "$bc_tmp/runs" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
	}
	pre="LD_PRELOAD=$bc_lib"
	all="XPD_DELIVER_ALL=1"
	hold="XPD_HOLD=1"
	cb_base=$(bc_run cb_base "$bc_ncb" "$all") || return 1
	cb_filt=$(bc_run cb_filtered "$bc_ncb" "$all" "$pre" XPROBE_INSPECT_CLOCK=tsc) || return 1
	cb_keep=$(bc_run cb_retained "$bc_ncb" "$all" "$pre" XPROBE_INSPECT_CLOCK=tsc) || return 1
	cb_keep_m=$(bc_run cb_retained "$bc_ncb" "$all" "$pre" XPROBE_INSPECT_CLOCK=monotonic) || return 1
	act_base=$(bc_run act_base "$bc_nact" "$hold") || return 1
	act_base_r=$(cat "$bc_tmp/second")
	act_exact=$(bc_run act_exact "$bc_nact" "$hold" "$pre") || return 1
	act_exact_r=$(cat "$bc_tmp/second")
	act_agg=$(bc_run act_agg "$bc_nact" "$hold" "$pre") || return 1
	act_agg_r=$(cat "$bc_tmp/second")
	arm_first=$(bc_run arm 21 "$pre") || return 1
	arm_later=$(cat "$bc_tmp/second")
	awk -v b="$cb_base" -v f="$cb_filt" -v k="$cb_keep" -v km="$cb_keep_m" \
		-v ab="$act_base" -v abr="$act_base_r" -v ae="$act_exact" -v aer="$act_exact_r" \
		-v ag="$act_agg" -v agr="$act_agg_r" -v a1="$arm_first" -v a2="$arm_later" 'BEGIN {
		printf "%-58s %10s %10s %8s\n", "CUPTI backend (test double)", "xprobe", "no Agent", "ratio"
		printf "%-58s %10.2f %10.2f %8.2f\n", "ns per API callback, filtered out (before the clock)", f, b, f / b
		printf "%-58s %10.2f %10s %8s\n", "  of which libxprobe (goal < 30 ns)", f - b, "", ""
		printf "%-58s %10.2f %10.2f %8.2f\n", "ns per API callback, retained (TSC)", k, b, k / b
		printf "%-58s %10.2f %10s %8s\n", "  of which libxprobe", k - b, "", ""
		printf "%-58s %10.2f %10.2f %8.2f\n", "ns per API callback, retained (clock_gettime)", km, b, km / b
		printf "%-58s %10.2f %10.2f %8.2f\n", "ns per activity record at harvest, exact capture", ae, ab, ae / ab
		printf "%-58s %10.1f %10.1f %8.2f\n", "  M records/s (goal >= 20)", aer / 1e6, abr / 1e6, aer / abr
		printf "%-58s %10.2f %10.2f %8.2f\n", "ns per activity record at harvest, aggregate (8 groups)", ag, ab, ag / ab
		printf "%-58s %10.1f %10.1f %8.2f\n", "  M records/s", agr / 1e6, abr / 1e6, agr / abr
		printf "%-58s %10.3f %10s %8s\n", "ms to the first CUDA ARM (loads CUPTI)", a1, "", ""
		printf "%-58s %10.3f %10s %8s\n", "ms to a later CUDA ARM (median of 21)", a2, "", ""
	}'
	rm -rf "$bc_tmp"
}

case "$0" in
*bench_cupti.sh)
	set -eu
	bench_cupti_rows "$@"
	;;
esac
