# SPDX-License-Identifier: Apache-2.0
"""`measure --explain` (exact mode) against the tools users already trust,
on the same thread and the same windows (issue 19: "per-switch wait and
run times agree with `perf sched timehist -p PID`; blocked stacks match
libbpf-tools `offcputime` for the same interval").

The target is tests/fixtures/live_explain (see test_explain_exact.py):
each call of xp_explain_call on the main thread spins, is preempted by a
SCHED_FIFO hog, sleeps in nanosleep and waits on a futex xp-waker
releases.

- perf sched: `perf sched record -k CLOCK_MONOTONIC` (system-wide; the
  clock of xprobe's timestamp_ns: by perf's record the main thread is
  running at every pair's start and end) records beside xprobe.  From
  perf's records alone, the main thread's time inside each evidence pair
  is split the same way: run queue from a switch out still runnable (R),
  or from the wakeup of a block, to the next switch in; blocked from any
  other switch out to the wakeup.  Per pair, run queue and blocked agree
  within max(250 us, 5%) of perf's (on CPU follows: both sides add up to
  the pair's latency) and the switches out, voluntary and not, are
  counted alike.  The bound: both tools' programs run on the same
  tracepoints, perf's first, so xprobe stamps each switch and wakeup a
  few us later (median -4 us run queue, +5 us blocked per pair here,
  idle or loaded), and now and then 30-45 us later where the VM stalls
  between the two (at most 42 us run queue, 71 us blocked per pair seen
  in 300 pairs, and once a 150 us stall); 250 us keeps a margin for a
  vCPU stolen between the two handlers under the suite's parallel load.  sched_wakeup is added to perf's events: perf sched records
  sched_waking on this kernel, which comes earlier by the time a remote
  wakeup takes to reach its CPU (about 30 us here), and xprobe ends a
  block at the wakeup.  Rarely a switch in reaches neither tool (a switch
  out follows a switch out): perf's sched_stat_runtime dates it, as
  xprobe's repair does by the task's last arrival (see repaired()).
- offcputime: `offcputime -t TID` (libbpf-tools has no folded output)
  on the main thread over the same round as an exact --explain.  The
  kernel frames of the slowest pairs' longest blocks (at least one: under
  load offcputime's own stack map drops some) (innermost first;
  xprobe drops the tracing's own frames above __schedule) are a run of
  frames of a stack offcputime printed for that thread, with the same
  caller, for the futex wait (futex_wait; xp_explain_call) and, in a round
  whose sleep is the longest block, for the nanosleep (do_nanosleep,
  hrtimer_nanosleep; main: libc's clock_nanosleep keeps no frame pointer,
  so both tools walk past xp_explain_call).  offcputime's time on those
  stacks is at least xprobe's blocked time in that syscall (less the same
  bound) and at most that plus the pairs' run queue: offcputime counts
  from the switch out to the switch in, xprobe's block ends at the
  wakeup.
perf and offcputime are required (scripts/install-deps.sh, test set): a
test without them fails.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager

import pytest
from measure_live_helpers import Fixture, LiveRun, bpf_ids, fixture_path

SCHEMA = "explained-measurement-result"
CALLS = 20
UPROBE_LINKS = 6  # entry, return, four scheduler programs
SWITCH = re.compile(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+) ")
PERF_LINE = re.compile(r"\s*(\d+)\.(\d{9}):\s+sched:(\w+):\s(.*)")


def tol(ns):
    return max(250_000, 0.05 * ns)


def explain(xprobe, fx):
    """An exact --explain of CALLS calls of xp_explain_call."""
    exe = fx.ready["exe"]
    r = LiveRun(xprobe, "--pid", fx.pid, "--explain", "--from",
                "uprobe:%s:xp_explain_call:entry" % exe, "--to",
                "uprobe:%s:xp_explain_call:return" % exe, "--match", "stack-nested",
                "--samples", CALLS)
    r.wait_armed(UPROBE_LINKS)
    fx.go()
    done = fx.done()
    res = r.finish(schema_name=SCHEMA)
    assert res.rc == 0, res
    ex = res.doc["explain"]
    assert ex["total"]["pairs"] == CALLS and ex["scheduler"]["lost"] == 0, ex
    return res.doc, done


@contextmanager
def tool(argv):
    """A tracing tool in the background, killed if still running."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate()


def interrupt(p):
    """SIGINT, then its output once it has written it (perf ends by the
    signal, once its file is written)."""
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode in (0, -signal.SIGINT), (p.args, p.returncode, err)
    return out, err


def wait_enabled(p, ctl, ack, timeout=30):
    """perf record starts with its events disabled (-D -1): enable them
    through its control FIFO and wait for its ack (then it records)."""
    os.write(ctl, b"enable\n")
    deadline = time.monotonic() + timeout
    while not select.select([ack], [], [], 0.1)[0]:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "perf did not ack 'enable' in %d s" % timeout
    assert os.read(ack, 16).startswith(b"ack")


def perf_timeline(data, tid):
    """[(ns, what)] of @tid from perf's records, in time order: 'run'
    (switched in), 'rq' (out, runnable), 'blocked' (out, any other state),
    'wake'; and 'arrive', where its CPU time last started by a
    sched_stat_runtime (the record minus its runtime)."""
    r = subprocess.run(["perf", "script", "-i", data, "--ns", "-F", "trace:time,event,trace"],
                       capture_output=True, text=True, check=True)
    assert "lost" not in r.stderr.lower(), r.stderr
    out = []
    for line in r.stdout.splitlines():
        m = PERF_LINE.match(line)
        if not m:
            continue
        t, name, rest = int(m.group(1)) * 10**9 + int(m.group(2)), m.group(3), m.group(4)
        if name == "sched_switch":
            prev, state, nxt = SWITCH.search(rest).groups()
            if int(prev) == tid:
                out.append((t, "rq" if state.startswith("R") else "blocked"))
            if int(nxt) == tid:
                out.append((t, "run"))
        elif name == "sched_wakeup" and re.search(r" pid=%d prio=" % tid, rest):
            out.append((t, "wake"))
        elif name == "sched_stat_runtime":
            m = re.search(r" pid=%d runtime=(\d+)" % tid, rest)
            if m:
                out.append((t - int(m.group(1)), "arrive"))
    return repaired(sorted(out, key=lambda e: e[0]))


def repaired(timeline):
    """The timeline with the switches in that no record shows put back: a
    switch out of a thread not switched in since its last switch out (rare:
    neither perf nor xprobe saw that switch in).  The thread arrived where
    its first sched_stat_runtime since dates the start of its CPU time
    (xprobe dates it by the task's sched_info.last_arrival)."""
    out, state, arrived = [], None, None
    for t, what in timeline:
        if what == "arrive":
            if state in ("rq", "blocked") and arrived is None:
                arrived = t
            continue
        if what in ("rq", "blocked") and state in ("rq", "blocked") and arrived is not None:
            out.append((arrived, "run"))
        out.append((t, what))
        if what != "wake":
            state, arrived = what, None
        elif state == "blocked":
            state = "rq"
    return out


def split(timeline, a, b):
    """The thread's time in [a, b] by state, its switches out in it, and
    its state at a and at b."""
    ns = {"run": 0, "rq": 0, "blocked": 0}
    outs = {"rq": 0, "blocked": 0}
    state, last, at_a = None, a, None
    for t, what in timeline:
        if t > b:
            break
        if what == "wake":
            what = "rq" if state == "blocked" else state
        if t <= a:
            state = at_a = what
            continue
        ns[state] += t - last
        if what in outs and state == "run":
            outs[what] += 1
        state, last = what, t
    ns[state] += b - last
    return ns, outs, at_a, state


def test_waits_agree_with_perf_sched(xprobe, tmp_path):
    perf = shutil.which("perf")
    assert perf, "perf (Debian's linux-perf) is installed for the tests"
    data, ctl, ack = (str(tmp_path / n) for n in ("perf.data", "ctl", "ack"))
    os.mkfifo(ctl)
    os.mkfifo(ack)
    # read-write: opening either end never waits for perf
    fds = [os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)]
    try:
        with Fixture([fixture_path("live_explain"), "--calls", CALLS]) as fx, \
                tool([perf, "sched", "record", "-k", "CLOCK_MONOTONIC", "-o", data,
                      "-e", "sched:sched_wakeup", "-D", "-1",
                      "--control", "fifo:%s,%s" % (ctl, ack)]) as p:
            assert fx.ready["fifo"], "SCHED_FIFO refused: the preemption part cannot be made"
            wait_enabled(p, *fds)
            doc, done = explain(xprobe, fx)
            interrupt(p)
            fx.quit()
    finally:
        for fd in fds:
            os.close(fd)
    timeline = perf_timeline(data, done["tid"])
    for i, (e, pair) in enumerate(zip(doc["result"]["evidence"], doc["explain"]["pairs"])):
        assert pair["status"] == "explained" and pair["tid"] == done["tid"], pair
        ns, outs, at_a, at_b = split(timeline, e["start"]["timestamp_ns"],
                                     e["end"]["timestamp_ns"])
        assert at_a == at_b == "run", (i, e, at_a, at_b)  # one clock
        q = pair["parts"]
        for k, pk in (("runqueue_ns", "rq"), ("blocked_ns", "blocked")):
            assert abs(q[k] - ns[pk]) <= tol(ns[pk]), (i, k, q, ns)
        assert (q["involuntary_switches"], q["voluntary_switches"]) == \
            (outs["rq"], outs["blocked"]), (i, q, outs)


def offcpu_stacks(out, tid):
    """offcputime's stacks: [(frames innermost first, us)], all of @tid."""
    stacks = []
    for block in filter(str.strip, out.split("\n\n")):
        lines = [x.strip() for x in block.strip().splitlines()]
        m = re.fullmatch(r"-\s+.* \((\d+)\)", lines[-2])
        assert m and int(m.group(1)) == tid, block
        stacks.append((lines[:-2], int(lines[-1])))
    return stacks


def runs_in(frames, stack):
    n = len(frames)
    return any(stack[i:i + n] == frames for i in range(len(stack) - n + 1))


@pytest.mark.parametrize("syscall,args,kernel,caller", [
    ("futex", [], ["schedule", "futex_wait"], "xp_explain_call"),
    ("clock_nanosleep", ["--sleep-us", 8000, "--futex-us", 1000],
     ["schedule", "do_nanosleep", "hrtimer_nanosleep"], "main"),
])
def test_blocked_stacks_agree_with_offcputime(xprobe, syscall, args, kernel, caller):
    offcputime = shutil.which("offcputime")
    assert offcputime, "offcputime (Debian's libbpf-tools) is installed for the tests"
    with Fixture([fixture_path("live_explain")] + args + ["--calls", CALLS]) as fx, \
            tool([offcputime, "-t", str(fx.pid)]) as p:
        deadline = time.monotonic() + 30
        while not bpf_ids(p.pid)[1]:  # attached: it holds its bpf_link
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "offcputime did not attach in 30 s"
            time.sleep(0.01)
        doc, done = explain(xprobe, fx)
        out, _ = interrupt(p)
        fx.quit()
    assert done["tid"] == fx.pid  # the thread offcputime followed
    stacks = offcpu_stacks(out, done["tid"])
    ex = doc["explain"]
    blocks = [s["longest_block"] for s in ex["slowest"]
              if s["longest_block"]["syscall"] == syscall]
    assert blocks, ex["slowest"]
    for b in blocks:
        frames = b["kernel_stack"]
        assert frames and all(f in frames for f in kernel), b
        assert caller in (b["user_stack"] or []), b
    # offcputime's own stack map drops some stacks under load (a collision
    # without BPF_F_REUSE_STACKID), so each of ours need not be there: at
    # least one is, and the time on the ones found is bounded by ours
    found = [b for b in blocks if any(runs_in(b["kernel_stack"], s) and caller in s
                                      for s, _ in stacks)]
    assert found, ([b["kernel_stack"] for b in blocks], out)
    # the same interval: the time offcputime counts on those stacks
    kstacks = {tuple(b["kernel_stack"]) for b in found}
    off_ns = 1000 * sum(us for s, us in stacks if any(runs_in(list(k), s) for k in kstacks))
    blocked, = [x["ns"] for x in ex["blocked_by_syscall"] if x["syscall"] == syscall]
    rq = ex["total"]["runqueue_ns"]
    assert off_ns <= blocked + rq + tol(blocked), (off_ns, blocked, rq, out)
    if len(found) == len(blocks):
        assert blocked - tol(blocked) <= off_ns, (off_ns, blocked, rq, out)
