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
                                  link_env, link_info)
from measure_live_helpers import bpf_ids as bpf_ids_of
from measure_live_helpers import bpftool_ids
from test_measure_uprobe import check_pairs


def sleeper(calls, sleep_ms):
    return Fixture([fixture_path("live_sleeper"), "--calls", calls, "--sleep-ms", sleep_ms])


def run_pair(xprobe, kind, expect_type):
    with sleeper(5, 20) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                      "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
                      "--samples", 5, "--timeout-ms", 20000, env=link_env(kind))
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
                      "--duration-ms", 300, env=link_env(None))
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


def read_document(run):
    """Read the document from @run's stdout as it comes; (bytes, document,
    the target's link ids the kernel still listed when it was complete)."""
    fd = run.p.stdout.fileno()
    os.set_blocking(fd, False)
    buf, doc, listed = b"", None, None
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
            listed = bpftool_ids()[1]
        except ValueError:
            pass
    return buf, doc, listed


def hold_env(kind):
    """The hook env, with the release child holding the probes 3 s."""
    env = link_env(kind)
    env["XPROBE_TEST_RELEASE_HOLD_MS"] = "3000"
    return env


def test_result_written_before_teardown(xprobe):
    """The document is complete on stdout while the probes are still
    attached: the detach comes after the answer (held by the release
    child, XPROBE_TEST_RELEASE_HOLD_MS, so the order shows)."""
    for kind in ("perf", None):
        with sleeper(3, 5) as fx:
            exe = fx.ready["exe"]
            run = LiveRun(xprobe, "--pid", fx.pid, "--from",
                          "uprobe:%s:xp_fx_sleep:entry" % exe, "--to",
                          "uprobe:%s:xp_fx_sleep:return" % exe, "--match", "stack-nested",
                          "--samples", 1, "--timeout-ms", 20000, env=hold_env(kind))
            run.wait_armed(2)
            fx.go()
            buf, doc, listed = read_document(run)
            run.p.wait(timeout=30)
            fx.done()
            fx.quit()
        assert doc is not None and doc["status"] == "completed", buf
        assert run.p.returncode == 0
        target_links = run.links - run.own_links
        assert target_links and target_links <= listed, (target_links, listed)
        assert_released(run.progs, run.links, timeout=10)


def test_histogram_result_written_before_teardown(xprobe):
    """--histogram writes its document while its disarmed probes are still
    attached, and detaches after; the result is whole all the same."""
    with Fixture([fixture_path("live_hist"), "--plan", "1000:20"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from",
                      "uprobe:%s:xp_hist_call:entry" % exe, "--to",
                      "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                      "--duration-ms", 1500, env=hold_env("perf"))
        run.wait_armed(3)
        fx.go()
        done = fx.done()
        buf, doc, listed = read_document(run)
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
    # the document was complete while the probes were still attached
    target_links = run.links - run.own_links
    assert target_links and target_links <= listed, (target_links, listed)
    assert_released(run.progs, run.links, timeout=10)


def hist_pair(xprobe, kind, expect, link):
    """--histogram: its uprobe endpoints take the same link kinds, and a
    session link (one for both) where the kernel has it."""
    with Fixture([fixture_path("live_hist"), "--plan", "1000:20"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from",
                      "uprobe:%s:xp_hist_call:entry" % exe, "--to",
                      "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                      "--duration-ms", 1500, env=link_env(kind))
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


def release_children(mark):
    """pids of the xprobe-release children whose environment holds @mark."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() != "xprobe-release":
                    continue
            with open("/proc/%s/environ" % d, "rb") as f:
                if mark.encode() not in f.read().split(b"\0"):
                    continue
        except OSError:
            continue
        out.append(int(d))
    return out


def test_release_child_holds_only_the_probes(xprobe):
    """Once the answer is out, a child keeps the probe holders (links,
    perf events) and nothing else: its standard streams are /dev/null, so
    the caller's pipes end when xprobe exits; the links go when the child
    closes them.  XPROBE_TEST_RELEASE_HOLD_MS keeps the child waiting long
    enough to look at it.  On both link kinds (the perf-event fallback
    holds perf events)."""
    for kind in (None, "perf"):
        mark = "XP_RELEASE_TEST=%d_%s" % (os.getpid(), kind)
        env = link_env(kind)
        env["XPROBE_TEST_RELEASE_HOLD_MS"] = "3000"
        env[mark.split("=")[0]] = mark.split("=")[1]
        with sleeper(3, 5) as fx:
            exe = fx.ready["exe"]
            run = LiveRun(xprobe, "--pid", fx.pid, "--from", "uprobe:%s:xp_fx_sleep:entry" % exe,
                          "--to", "uprobe:%s:xp_fx_sleep:return" % exe, "--match",
                          "stack-nested", "--samples", 1, "--timeout-ms", 20000, env=env)
            run.wait_armed(2)
            fx.go()
            t0 = time.monotonic()
            res = run.finish(timeout=60)  # stdout and stderr reached their end
            assert res.rc == 0, res
            assert time.monotonic() - t0 < 2.5  # not the child's 3 s hold
            kids = release_children(mark)
            assert len(kids) == 1, kids
            kid = kids[0]
            targets = fd_targets(kid)
            for fd in ("0", "1", "2"):
                assert targets[fd] == "/dev/null", targets
            others = {fd: t for fd, t in targets.items() if fd not in ("0", "1", "2")}
            assert others, targets
            assert all(t in ("anon_inode:bpf_link", "anon_inode:[perf_event]")
                       for t in others.values()), others
            # the target's probes are still there while the child holds them
            _, kl = bpf_ids_of(kid)
            assert (run.links - run.own_links) <= kl, (run.links, kl)
            fx.done()
            fx.quit()
        assert_released(run.progs, run.links, timeout=10)
        deadline = time.monotonic() + 5
        while release_children(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert release_children(mark) == []


def rchar_when_armed(xprobe, *extra, kind=None):
    """Bytes a --histogram run has read (/proc/PID/io rchar) once armed."""
    with Fixture([fixture_path("live_hist"), "--plan", "1000:5"]) as fx:
        exe = fx.ready["exe"]
        run = LiveRun(xprobe, "--pid", fx.pid, "--histogram", "--from",
                      "uprobe:%s:xp_hist_call:entry" % exe, "--to",
                      "uprobe:%s:xp_hist_call:return" % exe, "--match", "stack-nested",
                      "--duration-ms", 1000, *extra, env=link_env(kind))
        run.wait_armed(2)
        with open("/proc/%d/io" % run.p.pid) as f:
            io = dict(l.split(": ") for l in f.read().splitlines())
        fx.go()
        fx.done()
        res = run.finish(schema_name="latency-histogram-result")
        assert res.rc == 0, res
        fx.quit()
    return int(io["rchar"])


def test_histogram_lean_object_reads_no_kernel_btf(xprobe):
    """A --histogram run with neither a session link nor --explain opens
    the lean object, which libbpf loads without parsing the kernel's BTF
    (bpf/latency_hist.bpf.c, "CO-RE"); --explain (CO-RE task reads) and a
    session link (kfuncs) need it.  The difference shows in the bytes the
    process read: the whole /sys/kernel/btf/vmlinux, or none of it."""
    btf = os.path.getsize("/sys/kernel/btf/vmlinux") or len(open("/sys/kernel/btf/vmlinux",
                                                                  "rb").read())
    lean = rchar_when_armed(xprobe, kind="multi")
    explain = rchar_when_armed(xprobe, "--explain", kind="multi")
    session = rchar_when_armed(xprobe)
    assert lean < btf, (lean, btf)
    assert explain - lean >= 0.9 * btf, (lean, explain, btf)
    assert session - lean >= 0.9 * btf, (lean, session, btf)
