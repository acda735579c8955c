# SPDX-License-Identifier: Apache-2.0
"""A stop request that arrives before a live window opens (common/cancel.h).

main() installs the handler first and unblocks SIGINT/SIGTERM/SIGHUP; a
signal that came while xprobe validated and resolved makes the live
capture end before anything is attached (NO_MATCHED_SAMPLES with
details.cancelled, as a signal inside the window without pairs does) and
an inventory window end at once (status "cancelled").

The signal is sent right after the spawn while the launcher keeps it
blocked, so it is pending from the first instruction on, whatever the
timing: xprobe used never to unblock it, and ran to its timeout or full
duration.
"""
import json
import os
import signal
import subprocess
import time

from measure_live_helpers import Fixture, fixture_path, target_link_ids

import xprobe_test


def spawn_with_pending(argv, signo):
    """Start argv with @signo already pending: blocked and raised in the
    child before exec (a pending signal survives execve), so it is there
    when xprobe's main() unblocks it, however late this process gets to
    run.  (Sending it after Popen returned raced with xprobe's start: under
    load xprobe could reach validate's BPF probe first.)"""
    def block_and_raise():
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM])
        os.kill(os.getpid(), signo)

    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=block_and_raise)


def test_live_measure_cancelled_before_the_window(xprobe):
    with Fixture([fixture_path("live_sleeper"), "--calls", "3", "--sleep-ms", "1"]) as fx:
        exe = fixture_path("live_sleeper")
        t0 = time.monotonic()
        p = spawn_with_pending([xprobe.binary, "measure", "--pid", str(fx.pid),
                                "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                                "--to", "uprobe:%s:xp_fx_sleep:return" % exe,
                                "--match", "stack-nested", "--samples", "3",
                                "--timeout-ms", "20000", "--json"], signal.SIGTERM)
        links = set()
        while p.poll() is None:
            links |= target_link_ids(p.pid)
            time.sleep(0.001)
        out, err = p.communicate()
        elapsed = time.monotonic() - t0
    assert err == "", err
    doc = json.loads(out)
    xprobe_test.validate(doc, "error")
    assert p.returncode == 1, (p.returncode, out)
    e = doc["error"]
    assert e["code"] == "NO_MATCHED_SAMPLES", e
    assert e["details"]["cancelled"] is True
    assert e["details"]["signal"] == "Terminated"
    assert e["details"]["captured_events"] == 0
    assert links == set(), "nothing is attached once a stop was requested"
    assert elapsed < 10, elapsed


def test_cpu_sample_window_cancelled_at_once(xprobe):
    with Fixture([fixture_path("live_sleeper"), "--tick-us", "1000"]) as fx:
        fx.go()
        t0 = time.monotonic()
        p = spawn_with_pending([xprobe.binary, "measure", "--pid", str(fx.pid),
                                "--cpu-sample", "--duration-ms", "8000",
                                "--timeout-ms", "10000", "--json"], signal.SIGINT)
        out, err = p.communicate(timeout=60)
        elapsed = time.monotonic() - t0
    assert err == "", err
    doc = json.loads(out)
    xprobe_test.validate(doc, "cpu-sample-inventory-result")
    assert p.returncode == 0, (p.returncode, out)
    assert doc["status"] == "cancelled", doc["status"]
    assert elapsed < 4, elapsed
