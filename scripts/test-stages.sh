#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make test`: each stage in turn (the first failure stops the run), then
# how long each took and the whole, so a change that slows the suite is
# seen where it does.
set -eu
MAKE=${MAKE:-make}
start=$(date +%s)
report=""
for stage in check-layering test-unit test-tsan test-cli test-fuzz; do
	t0=$(date +%s)
	"$MAKE" --no-print-directory "$stage"
	t1=$(date +%s)
	report="$report$(printf '  %-16s %4d s' "$stage" $((t1 - t0)))
"
done
end=$(date +%s)
echo "xprobe: all tests passed"
printf 'make test stages (builds included in the first stage that needs them):\n%s' "$report"
printf '  %-16s %4d s (%d min %02d s)\n' total $((end - start)) $(((end - start) / 60)) \
	$(((end - start) % 60))
