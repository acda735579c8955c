#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_continuous.sh - what continuous latency costs (issue 20): a long
# `measure --histogram --interval-ms 1000 --metrics-out` capture on
# redis-server's processCommand under continuous redis-benchmark load,
# with the collector's RSS sampled every BENCH_SAMPLE_S seconds and its CPU
# time at the end.
#
# Goals: RSS flat over the capture (after the first sample it moves by at
# most 256 KiB), collector CPU under 1% of a core (its CPU seconds over the
# window).  Printed beside them: the pairs counted, the intervals printed,
# the metrics file's last write (promtool check metrics when installed).
#
# Usage: [XPROBE_BUILD=dir] [BENCH_MS=600000] [BENCH_SAMPLE_S=30]
#        bench/bench_continuous.sh      (root; redis-server, redis-tools:
#        scripts/install-deps.sh bench)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${XPROBE_BUILD:-$ROOT/build}
for t in redis-server redis-benchmark redis-cli; do
	if ! command -v "$t" >/dev/null 2>&1; then
		"$ROOT/scripts/install-deps.sh" bench
		break
	fi
done
exec /usr/bin/python3 - "$BUILD" <<'PY'
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1])
XPROBE = os.path.join(BUILD, "bin", "xprobe")
MS = int(os.environ.get("BENCH_MS", "600000"))
SAMPLE_S = float(os.environ.get("BENCH_SAMPLE_S", "30"))
PORT = int(os.environ.get("REDIS_PORT", "6391"))
NCPU = os.cpu_count() or 1
REDIS_CPU, BENCH_CPU = ("0", "1") if NCPU > 1 else ("0", "0")
REDIS = shutil.which("redis-server")
REDIS_BIN = os.path.realpath(REDIS)
TMP = tempfile.mkdtemp(prefix="xp-bench-cont-")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


redis = subprocess.Popen(["taskset", "-c", REDIS_CPU, REDIS, "--port", str(PORT), "--save", "",
                          "--appendonly", "no", "--daemonize", "no"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
load = xp = None
try:
    for _ in range(500):
        if subprocess.run(["redis-cli", "-p", str(PORT), "ping"], capture_output=True,
                          text=True).stdout.strip() == "PONG":
            break
        time.sleep(0.02)
    prom = os.path.join(TMP, "xprobe.prom")
    # its JSON Lines into a file: a pipe nobody reads would stop it once full
    outf = open(os.path.join(TMP, "out.jsonl"), "w+")
    xp = subprocess.Popen([XPROBE, "measure", "--pid", str(redis.pid), "--histogram", "--json",
                           "--from", "uprobe:%s:processCommand:entry" % REDIS_BIN,
                           "--to", "uprobe:%s:processCommand:return" % REDIS_BIN,
                           "--match", "stack-nested", "--interval-ms", "1000",
                           "--metrics-out", prom, "--duration-ms", str(MS)],
                          stdout=outf, stderr=subprocess.DEVNULL, text=True)
    load = subprocess.Popen(
        ["sh", "-c", "while :; do taskset -c %s redis-benchmark -p %d -n 1000000 -c 4 -P 16 "
         "-t get,set -q >/dev/null 2>&1 || exit; done" % (BENCH_CPU, PORT)],
        start_new_session=True)
    print("bench_continuous: %s, %d CPUs; --histogram --interval-ms 1000 --metrics-out on redis "
          "processCommand for %d s under continuous redis-benchmark -P 16"
          % (os.uname().release, NCPU, MS // 1000))
    print("%8s %12s %12s" % ("t (s)", "VmRSS KiB", "CPU s"))
    t0 = time.monotonic()
    samples = []
    while xp.poll() is None:
        try:
            samples.append((time.monotonic() - t0, rss_kib(xp.pid), cpu_s(xp.pid)))
        except OSError:
            break
        print("%8.0f %12d %12.2f" % samples[-1])
        sys.stdout.flush()
        end = time.monotonic() + SAMPLE_S
        while time.monotonic() < end and xp.poll() is None:
            time.sleep(0.2)
    # its whole CPU time: the only child reaped so far (redis and the load
    # are reaped in the end)
    xp.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    outf.seek(0)
    out = outf.read()
    lines = out.splitlines()
    final = json.loads(lines[-1])
    window_s = final["collection"]["window_ns"] / 1e9
    cpu = ru.ru_utime + ru.ru_stime
    rs = [s[1] for s in samples[1:]] or [s[1] for s in samples]
    growth = max(rs) - min(rs) if rs else 0
    print("pairs %d in %.0f s, %d intervals printed, metrics file %d bytes"
          % (final["histogram"]["stats"]["count"], window_s, len(lines) - 1,
             os.path.getsize(prom)))
    if shutil.which("promtool"):
        with open(prom) as f:
            chk = subprocess.run(["promtool", "check", "metrics"], stdin=f, capture_output=True,
                                 text=True)
        print("promtool check metrics: %s" % ("ok" if chk.returncode == 0 else
                                              (chk.stdout + chk.stderr).strip()))
    share = cpu / window_s * 100 if window_s else 0.0
    print("  goal %-44s %-7s (RSS after the first sample moved by %d KiB: %d..%d)" % (
        "flat memory over the capture", "met" if growth <= 256 else "MISSED", growth,
        min(rs) if rs else 0, max(rs) if rs else 0))
    print("  goal %-44s %-7s (%.2f CPU s over %.0f s: %.3f%% of a core)" % (
        "collector CPU under 1% of a core", "met" if share < 1.0 else "MISSED", cpu, window_s,
        share))
finally:
    if load is not None:
        os.killpg(load.pid, signal.SIGTERM)
        load.wait()
    if xp is not None and xp.poll() is None:
        xp.send_signal(signal.SIGINT)
        xp.wait()
    redis.terminate()
    redis.wait()
    shutil.rmtree(TMP, ignore_errors=True)
PY
