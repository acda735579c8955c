# SPDX-License-Identifier: Apache-2.0
"""How a live measurement's uprobes are attached (src/live/uprobe_link.h):
uprobe_multi links where the kernel has them, one per binary and
direction, and perf-event links when XPROBE_TEST_UPROBE_LINK=perf forces
the fallback; both paths measure the same pairs and release everything.
The result is written before the probes are detached: the document is on
stdout while the process still tears down."""
import json
import os
import select
import time

import xprobe_test
from measure_live_helpers import (Fixture, LiveRun, assert_released, fd_targets, fixture_path,
                                  measure_fixture)
from test_measure_uprobe import check_pairs


def sleeper(calls, sleep_ms):
    return Fixture([fixture_path("live_sleeper"), "--calls", calls, "--sleep-ms", sleep_ms])


def link_info(pid, own=None):
    """fdinfo of every BPF link the process holds into another process: a
    list of dicts (its links into itself, the uprobe warm-up, go to @own)."""
    out = []
    for fd, target in fd_targets(pid).items():
        if "bpf_link" not in target:
            continue
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                text = f.read()
        except OSError:
            continue
        info = {}
        for line in text.splitlines():
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
        info["_text"] = text
        if info.get("pid") == str(pid):
            if own is not None:
                own.append(info)
            continue
        out.append(info)
    return out


def hook_env(kind):
    env = dict(os.environ)
    env.pop("XPROBE_TEST_UPROBE_LINK", None)
    if kind:
        env["XPROBE_TEST_UPROBE_LINK"] = kind
    return env


def run_pair(xprobe, kind, expect_type):
    with sleeper(5, 20) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                      "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
                      "--samples", 5, "--timeout-ms", 20000, env=hook_env(kind))
        run.wait_armed(2)
        own = []
        links = link_info(run.p.pid, own)
        fx.go()
        done = fx.done()
        res = run.finish(timeout=60)
        assert res.rc == 0, res
        assert res.stderr == ""
        check_pairs(res.doc, fx, done, 5, "xp_fx_sleep", exe)
        fx.quit()
    # the entry and the return: two links of the expected kind
    if expect_type == "uprobe_multi":
        assert sorted(l.get("link_type") for l in links) == ["uprobe_multi",
                                                             "uretprobe_multi"], links
        assert all(l.get("uprobe_cnt") == "1" for l in links), links
        # the warm-up: one probe in xprobe's own executable, nowhere else
        assert len(own) == 1 and own[0].get("uprobe_cnt") == "1", own
        assert os.path.realpath(own[0]["path"]) == os.path.realpath(xprobe.binary), own
    else:
        assert [l.get("link_type") for l in links] == [expect_type, expect_type], links
        assert own == [], own  # no uprobe_multi: no warm-up either
    # every link, the warm-up's too, is gone soon after the exit
    assert_released(run.progs, run.links)


def test_uprobe_multi_links(xprobe):
    # the kernel under test (6.6+) has uprobe_multi links: they are used
    run_pair(xprobe, None, "uprobe_multi")
    run_pair(xprobe, "multi", "uprobe_multi")


def test_perf_event_fallback(xprobe):
    run_pair(xprobe, "perf", "perf")


def test_one_link_per_binary_and_direction(xprobe):
    """Two entries of one binary share one link, each offset with its
    endpoint's cookie."""
    with sleeper(3, 5) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                      "--to", "uprobe:%s:xp_fx_hot:entry" % exe, "--match", "first-after",
                      "--duration-ms", 300, env=hook_env(None))
        run.wait_armed(1)
        links = link_info(run.p.pid)
        fx.go()
        fx.done()
        res = run.finish(timeout=60)
        assert res.doc is not None
        fx.quit()
    assert len(links) == 1, links
    assert links[0].get("link_type") == "uprobe_multi"
    assert links[0].get("uprobe_cnt") == "2"
    # the offsets table: "<cookie> <offset> <ref_ctr_offset>" rows, cookies
    # 0 and 1 (the endpoints)
    rows = [l.split() for l in links[0]["_text"].splitlines()
            if len(l.split()) == 3 and l.split()[1].startswith("0x")]
    assert sorted(int(r[0]) for r in rows) == [0, 1], links[0]["_text"]
    assert_released(run.progs, run.links)


def test_result_written_before_teardown(xprobe):
    """The document is complete on stdout while xprobe still detaches (the
    perf-event fallback waits a grace period per probe, about 100 ms each
    on kernels since 6.13, so the gap is wide)."""
    with sleeper(3, 5) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                      "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
                      "--samples", 1, "--timeout-ms", 20000, env=hook_env("perf"))
        run.wait_armed(2)
        fx.go()
        fd = run.p.stdout.fileno()
        os.set_blocking(fd, False)
        buf, doc, alive = b"", None, None
        deadline = time.monotonic() + 30
        while doc is None and time.monotonic() < deadline:
            select.select([fd], [], [], 1.0)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            buf += chunk
            try:
                doc = json.loads(buf)
                alive = run.p.poll() is None
            except ValueError:
                pass
        run.p.wait(timeout=30)
        fx.done()
        fx.quit()
    assert doc is not None and doc["status"] == "completed", buf
    assert run.p.returncode == 0
    assert alive, "xprobe exited before its document was complete on stdout"


def test_histogram_result_written_before_teardown(xprobe):
    """--histogram writes its document while its disarmed probes are still
    attached, and detaches after (perf-event links wait a grace period
    each, so the gap is wide); the result is whole all the same."""
    with Fixture([fixture_path("live_hist"), "--plan", "1000:20"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from",
                      "uprobe:%s:xp_hist_call:entry" % exe, "--to",
                      "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                      "--duration-ms", 1500, env=hook_env("perf"))
        run.wait_armed(3)
        fx.go()
        done = fx.done()
        fd = run.p.stdout.fileno()
        os.set_blocking(fd, False)
        buf, doc, links_then = b"", None, None
        deadline = time.monotonic() + 30
        while doc is None and time.monotonic() < deadline:
            select.select([fd], [], [], 1.0)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            buf += chunk
            try:
                doc = json.loads(buf)
                links_then = link_info(run.p.pid) if run.p.poll() is None else None
            except ValueError:
                pass
        run.p.wait(timeout=30)
        err = run.p.stderr.read()
        fx.quit()
    assert doc is not None and doc["status"] == "completed", buf
    assert run.p.returncode == 0 and err == "", err
    doc = xprobe_test.check_document(run.argv, run.p.returncode, buf.decode(),
                                     "latency-histogram-result")
    assert done["calls"] == 20
    c = doc["collection"]
    assert (c["starts"], c["ends"], c["pairs"]) == (20, 20, 20) and c["uprobe_link"] == "perf_event"
    # the document was complete while the process still held its links
    assert links_then, "xprobe had detached (or exited) before its document was complete"
    assert_released(run.progs, run.links)


def hist_pair(xprobe, kind, expect, link):
    """--histogram: its uprobe endpoints take the same link kinds, and a
    session link (one for both) where the kernel has it."""
    with Fixture([fixture_path("live_hist"), "--plan", "1000:20"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from",
                      "uprobe:%s:xp_hist_call:entry" % exe, "--to",
                      "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                      "--duration-ms", 1500, env=hook_env(kind))
        run.wait_armed(len(expect))  # the endpoints', the thread-exit raw tracepoint
        links = link_info(run.p.pid)
        fx.go()
        done = fx.done()
        res = run.finish(schema_name="latency-histogram-result")
        assert res.rc == 0, res
        fx.quit()
    assert done["calls"] == 20
    c = res.doc["collection"]
    assert (c["starts"], c["ends"], c["pairs"]) == (20, 20, 20)
    assert c["uprobe_link"] == link
    types = sorted(l.get("link_type") for l in links)
    assert types == expect, links
    assert all(l.get("uprobe_cnt") == "1" for l in links if l.get("link_type") != "perf" and
               l.get("link_type") != "raw_tracepoint"), links
    assert_released(run.progs, run.links)


def test_histogram_uprobe_session_link(xprobe):
    # the kernel under test (6.13+) has session uprobes: one uprobe_multi
    # link (its fdinfo names no direction) runs one program at the entry
    # and the return, and the returns pair
    hist_pair(xprobe, None, ["raw_tracepoint", "uprobe_multi"], "uprobe_session")


def test_histogram_uprobe_multi_links(xprobe):
    hist_pair(xprobe, "multi", ["raw_tracepoint", "uprobe_multi", "uretprobe_multi"],
              "uprobe_multi")


def test_histogram_perf_event_fallback(xprobe):
    hist_pair(xprobe, "perf", ["perf", "perf", "raw_tracepoint"], "perf_event")
