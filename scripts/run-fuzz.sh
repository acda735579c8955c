#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run every libFuzzer target in $1 for $2 seconds each, starting from its
# seed corpus tests/fuzz/corpus/<name>/ (copied to a scratch directory so
# the repository's corpus is not modified).  A crash fails the run.
set -eu
dir=$1
secs=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
found=0
for f in "$dir"/fuzz_*; do
	[ -x "$f" ] || continue
	found=1
	name=$(basename "$f")
	seed="$root/tests/fuzz/corpus/$name"
	work=$(mktemp -d)
	if [ -d "$seed" ]; then cp -r "$seed"/. "$work"/; fi
	echo "fuzz: $name for ${secs}s"
	# halt_on_error: a UBSan report fails the target (the build also has
	# -fno-sanitize-recover=undefined; this covers a build without it)
	UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1 \
	"$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
		"$work" >"$work.log" 2>&1 || {
		tail -n 60 "$work.log" >&2
		echo "fuzz: $name FAILED" >&2
		exit 1
	}
	grep -E '^#[0-9]+.*DONE' "$work.log" | tail -n 1 || true
	rm -rf "$work" "$work.log"
done
if [ "$found" = 0 ]; then
	echo "fuzz: no fuzz targets in $dir" >&2
	exit 1
fi
