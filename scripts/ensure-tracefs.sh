#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Named tracepoints need tracefs.  Mount it when it is missing and we are
# root; otherwise say what to run.  Never fails the caller: xprobe itself
# reports a missing tracefs as an explicit error with the mount hint.
if [ -d /sys/kernel/tracing/events ]; then
	exit 0
fi
if [ "$(id -u)" = 0 ]; then
	mount -t tracefs none /sys/kernel/tracing 2>/dev/null && exit 0
fi
echo "ensure-tracefs: tracefs is not mounted; run: mount -t tracefs none /sys/kernel/tracing" >&2
exit 0
