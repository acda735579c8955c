#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make test`: the stages in turn (the first failure stops the run), then
# how long each took and the whole, so a change that slows the suite is
# seen where it does.
#
# The live suite mostly waits on its fixtures (windows, timeouts, the
# targets' own sleeps) and leaves a core idle, so it runs beside the
# CPU-bound rest (the offline CLI suite, plain and under ASan, then the
# fuzz targets), whose output is held in a log and printed after it; both
# must pass.
set -eu
MAKE=${MAKE:-make}
start=$(date +%s)
report=""

stage() {
	t0=$(date +%s)
	"$MAKE" --no-print-directory "$@"
	t1=$(date +%s)
	report="$report$(printf '  %-26s %4d s' "$*" $((t1 - t0)))
"
}

stage check-layering
stage build-all
stage test-unit
stage test-tsan
stage tracefs

# test-live beside test-cli + test-fuzz
log=$(mktemp)
trap 'rm -f "$log"' EXIT
t0=$(date +%s)
(
	s=$(date +%s)
	"$MAKE" --no-print-directory test-cli test-fuzz >"$log" 2>&1
	echo "$(($(date +%s) - s))" >"$log.time"
) &
side=$!
live_rc=0
"$MAKE" --no-print-directory test-live || live_rc=$?
t1=$(date +%s)
side_rc=0
wait "$side" || side_rc=$?
t2=$(date +%s)
echo "--- test-cli, test-fuzz (run beside test-live) ---"
cat "$log"
side_time=$(cat "$log.time" 2>/dev/null || echo $((t2 - t0)))
rm -f "$log.time"
if [ "$live_rc" -ne 0 ] || [ "$side_rc" -ne 0 ]; then
	echo "xprobe: tests FAILED (test-live exit $live_rc, test-cli/test-fuzz exit $side_rc)" >&2
	exit 1
fi
report="$report$(printf '  %-26s %4d s' "test-live" $((t1 - t0)))
$(printf '  %-26s %4d s  (beside test-live)' "test-cli test-fuzz" "$side_time")
$(printf '  %-26s %4d s' "  the two together" $((t2 - t0)))
"
end=$(date +%s)
echo "xprobe: all tests passed"
printf 'make test stages (builds in build-all):\n%s' "$report"
printf '  %-26s %4d s (%d min %02d s)\n' total $((end - start)) $(((end - start) / 60)) \
	$(((end - start) % 60))
