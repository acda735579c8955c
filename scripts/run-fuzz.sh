#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-fuzz.sh DIR [SECONDS] - every libFuzzer target in DIR: first its
# whole seed corpus tests/fuzz/corpus/<target>/ replayed, each input once
# (a crash or sanitizer report on a known input fails at once), then
# SECONDS of fuzzing from that corpus (0: replay only), in a scratch copy
# so the repository's corpus is not modified.  XPROBE_FUZZ_MERGE=1 merges
# the inputs that reached new code back into the repository's corpus
# (libFuzzer -merge=1: a minimal set, each input kept for its coverage).
# A crash fails the run and prints the input's path.
set -eu
dir=$1
secs=${2:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
found=0
# halt_on_error: a UBSan report fails the target (the build also has
# -fno-sanitize-recover=undefined; this covers a build without it)
UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1
export UBSAN_OPTIONS
for f in "$dir"/fuzz_*; do
	[ -x "$f" ] || continue
	found=1
	name=$(basename "$f")
	seed="$root/tests/fuzz/corpus/$name"
	work=$(mktemp -d)
	if [ -d "$seed" ]; then
		cp -r "$seed"/. "$work"/
		n=$(find "$seed" -type f | wc -l)
		echo "fuzz: $name: replaying $n corpus inputs"
		find "$seed" -type f -print0 | xargs -0 -r "$f" -timeout=10 -rss_limit_mb=2048 \
			>"$work.log" 2>&1 || {
			tail -n 60 "$work.log" >&2
			echo "fuzz: $name FAILED on its corpus" >&2
			exit 1
		}
	fi
	if [ "$secs" -gt 0 ]; then
		echo "fuzz: $name for ${secs}s"
		# a crashing input goes beside the log (named in the failure), not
		# into the current directory, where it would end up in a commit
		"$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
			-artifact_prefix="$work.crash-" "$work" >"$work.log" 2>&1 || {
			tail -n 60 "$work.log" >&2
			echo "fuzz: $name FAILED; the input: $(ls "$work".crash-* 2>/dev/null)" >&2
			exit 1
		}
		grep -E '^#[0-9]+.*DONE' "$work.log" | tail -n 1 || true
		if [ "${XPROBE_FUZZ_MERGE:-0}" = 1 ]; then
			mkdir -p "$seed"
			"$f" -merge=1 "$seed" "$work" >"$work.log" 2>&1 || true
			echo "fuzz: $name: corpus now $(find "$seed" -type f | wc -l) inputs"
		fi
	fi
	rm -rf "$work" "$work.log"
done
if [ "$found" = 0 ]; then
	echo "fuzz: no fuzz targets in $dir" >&2
	exit 1
fi
