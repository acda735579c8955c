# SPDX-License-Identifier: Apache-2.0
"""The target never dies of us: kill storms against online injection
(src/agent/agent_inject.c, "Safe if we vanish"; docs/agent.md).

The injector is stopped at every kind of instant of an injection -- the
thread seized and stopped, its frame half written, mmap of the stub's page
running, the stub running dlopen or the Agent's start, rt_sigreturn under
way, munmap, the last detach -- by the test hook XPROBE_TEST_INJECT_SIGNAL_AT
=STEP:SIG[:COUNT], which sends SIG to the injector itself just before its
step number STEP (a ptrace request, or a look at the running stub; test
builds only).  A first clean injection of the same kind counts the steps;
the kills are drawn from them.  Then
the wall clock instead: the real CLI (`measure` with CUDA endpoints, which
injects) killed at random delays after the target's TracerPid turns
non-zero.

After each kill the target must be alive, untraced, and pass its own
self-check (tests/fixtures/inject_target: every thread progresses, no
syscall saw EINTR where the kernel restarts it, registers, SSE/YMM, MXCSR
and errno of running loops intact; the CUPTI double's fixture: it still
runs the fake CUDA runtime and answers), with nothing on its stderr.

Before the sigreturn design (the thread returned to address 0 and only the
injector's SIGSEGV stop brought it back), 28 of 40 such SIGKILLs killed the
target.
"""
import os
import random
import signal
import subprocess
import time

import pytest

import xprobe_test
from cuda_helpers import CuptiFixture
from inject_helpers import Target, agent, driver

SEED = int(os.environ.get("XPROBE_KILL_SEED", "20261206"))


def tracer_pids(pid):
    """TracerPid of every live thread of @pid."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except FileNotFoundError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                for line in f:
                    if line.startswith("TracerPid:"):
                        out.append(int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def untraced(pid, timeout=5.0):
    """Every thread's TracerPid is 0 (the kernel detaches a dead tracer's tracees)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(tracer_pids(pid)):
            return True
        time.sleep(0.005)
    return False


def inject(pid, hook=None, *extra):
    """The driver (test_agent_inject --inject); (returncode, stdout+stderr, {k: v})."""
    env = dict(os.environ)
    env.pop("XPROBE_TEST_INJECT_SIGNAL_AT", None)
    if hook:
        env["XPROBE_TEST_INJECT_SIGNAL_AT"] = hook
    p = subprocess.run([driver(), "--inject", str(pid), agent()] + [str(e) for e in extra],
                       capture_output=True, text=True, timeout=60, env=env)
    kv = dict(w.split("=", 1) for w in p.stdout.split() if "=" in w)
    return p.returncode, p.stdout + p.stderr, kv


def missed_or_landed(rc, kv, step, sig, out):
    """1 when the signal landed (the driver died of it); 0 when the run
    ended before its step came, which it may: the looks at the running
    stub are steps too, as many as the stub takes (a loaded machine, a
    slower dlopen), so a clean run's count is not every run's.  Anything
    else fails."""
    if rc == -sig:
        return 1
    assert rc == 0 and int(kv["steps"]) < step, (
        "neither killed at step %d nor done before it: %s" % (step, out))
    return 0


def steps_of(pid):
    """A clean injection into @pid: its step count."""
    rc, out, kv = inject(pid)
    assert rc == 0, out
    return int(kv["steps"])


def storm(target_factory, n_fresh, n_again, check, sig=signal.SIGKILL):
    """@n_fresh targets killed once each during their first injection (dlopen),
    then one target killed @n_again times during re-injections (the Agent
    mapped: only its start).  Returns the kills that landed."""
    rnd = random.Random(SEED + n_fresh * 7 + n_again)
    with target_factory() as t:
        fresh_steps = steps_of(t.pid)
        again_steps = steps_of(t.pid)
    landed = 0
    for i in range(n_fresh):
        step = rnd.randint(1, fresh_steps)
        with target_factory() as t:
            rc, out, kv = inject(t.pid, "%d:%d" % (step, sig))
            landed += missed_or_landed(rc, kv, step, sig, out)
            assert t.alive(), "target died after %s at step %d of %d: %s" % (
                signal.Signals(sig).name, step, fresh_steps, out)
            assert untraced(t.pid), "still traced after the kill at step %d" % step
            check(t, "fresh, %s at step %d of %d" % (signal.Signals(sig).name, step, fresh_steps))
    with target_factory() as t:
        steps_of(t.pid)
        for i in range(n_again):
            step = 1 + (i * 7919 + rnd.randint(0, again_steps)) % again_steps
            rc, out, kv = inject(t.pid, "%d:%d" % (step, sig))
            landed += missed_or_landed(rc, kv, step, sig, out)
            assert t.alive(), "target died after %s at step %d of %d (re-injection): %s" % (
                signal.Signals(sig).name, step, again_steps, out)
            assert untraced(t.pid)
            if i % 10 == 9 or i == n_again - 1:
                check(t, "re-injection, %s at step %d of %d" % (
                    signal.Signals(sig).name, step, again_steps))
    return landed


class PlainTarget(Target):
    def alive(self):
        return self.p.poll() is None


def plain(mode):
    return lambda: PlainTarget(mode)


def plain_check(t, what):
    t.p.stdin.write("check\n")
    t.p.stdin.flush()
    line = t.p.stdout.readline().strip()
    assert line.startswith("check ok"), "%s: %s" % (what, line)
    assert t.stderr() == "", "%s: %s" % (what, t.stderr())


class DoubleTarget(CuptiFixture):
    """The CUPTI double's fixture, injected into (no Agent at start)."""

    def __init__(self):
        super().__init__(mode="inject")

    def alive(self):
        return self.p.poll() is None


def double_check(t, what):
    assert t.do("launch 3 kill_check 1000") == 3, what
    assert t.cmd("maps") in ("MAPS 0", "MAPS 1"), what


@pytest.mark.parametrize("mode,n_fresh,n_again", [("blocked", 60, 60), ("spin", 30, 30)])
def test_sigkill_at_every_instant_plain_target(mode, n_fresh, n_again):
    landed = storm(plain(mode), n_fresh, n_again, plain_check)
    # the steps are drawn from a clean run's count: most land, and a run
    # that ended before its step is checked to have (missed_or_landed)
    assert landed >= (n_fresh + n_again) * 0.6, landed


def test_sigkill_at_every_instant_cupti_double():
    landed = storm(DoubleTarget, 40, 30, double_check)
    assert landed >= 70 * 0.6, landed


def test_sweep_every_step_once():
    """Not drawn: each step of a fresh injection in turn, on the CUPTI
    double's fixture (it starts and checks in milliseconds)."""
    with DoubleTarget() as t:
        n = steps_of(t.pid)
    landed = 0
    for step in range(1, n + 1):
        with DoubleTarget() as t:
            rc, out, kv = inject(t.pid, "%d:%d" % (step, signal.SIGKILL))
            landed += missed_or_landed(rc, kv, step, signal.SIGKILL, out)
            assert t.alive() and untraced(t.pid), (step, n, out)
            double_check(t, "sweep, step %d of %d" % (step, n))
    # the steps past the last look of a slower run do not exist in it
    assert landed >= n * 0.6, (landed, n)


@pytest.mark.parametrize("sig,count", [(signal.SIGQUIT, 1), (signal.SIGINT, 2),
                                       (signal.SIGHUP, 1), (signal.SIGPIPE, 1)])
def test_signals_wait_until_the_thread_is_back(sig, count):
    """SIGQUIT, a double SIGINT, SIGHUP, SIGPIPE mid-injection: deferred.
    The injection completes (the Agent serves), then the signal ends the
    injector."""
    rnd = random.Random(SEED + sig)
    with PlainTarget("blocked") as t:
        rc, out, kv = inject(t.pid)
        assert rc == 0, out
        # the ptrace requests are as many every run; the looks at the stub vary
        n = int(kv["requests"]) - 2
    for _ in range(10):
        step = rnd.randint(1, n)
        with PlainTarget("blocked") as t:
            rc, out, kv = inject(t.pid, "%d:%d:%d" % (step, sig, count))
            assert rc == -sig, "the injector should end by %s after the injection: %s" % (
                signal.Signals(sig).name, out)
            assert t.alive() and untraced(t.pid)
            assert t.agent_files() == 1, "the injection did not complete: %s" % out
            plain_check(t, "%s at step %d" % (signal.Signals(sig).name, step))


def test_cli_killed_by_the_clock(xprobe):
    """The real CLI, killed 0-3 ms after TracerPid turns non-zero (no hook)."""
    rnd = random.Random(SEED)
    hits = 0
    for i in range(40):
        with DoubleTarget() as t:
            p = subprocess.Popen(
                [xprobe.binary, "measure", "--pid", str(t.pid), "--from", "cuda:kernel_start",
                 "--to", "cuda:kernel_end", "--match", "exact", "--samples", "5",
                 "--timeout-ms", "3000", "--json", "--non-interactive", "--no-color"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            end = time.monotonic() + 10
            while time.monotonic() < end and p.poll() is None and not any(tracer_pids(t.pid)):
                pass
            if p.poll() is None and any(tracer_pids(t.pid)):
                hits += 1
                time.sleep(rnd.uniform(0, 0.003))
            p.kill()
            p.wait()
            assert t.alive(), "the target died when the CLI was killed (run %d)" % i
            assert untraced(t.pid)
            double_check(t, "CLI killed by the clock, run %d" % i)
    assert hits >= 20, "the CLI was caught with a thread in hand only %d times of 40" % hits


@pytest.mark.parametrize("kind", ["double", "aggregate"])
def test_target_killed_at_any_stage_is_target_exited(xprobe, kind):
    """The target dies at a drawn instant of an Agent measurement (checks,
    injection, connect, ARM, the window): always TARGET_EXITED, exit 3.
    Before: CUPTI_NOT_AVAILABLE "Connection reset by peer" (exit 1),
    PERMISSION_DENIED "PTRACE_SEIZE refused" (exit 4), or
    CUPTI_AGENT_NOT_LOADED, depending on the instant."""
    import json
    rnd = random.Random(SEED + len(kind))
    codes = {}
    for i in range(12):
        t = DoubleTarget()
        try:
            args = [xprobe.binary, "measure", "--pid", str(t.pid), "--from", "cuda:kernel_start",
                    "--to", "cuda:kernel_end", "--match", "exact", "--json",
                    "--non-interactive", "--no-color"]
            args += (["--aggregate", "--duration-ms", "3000"] if kind == "aggregate"
                     else ["--samples", "5", "--timeout-ms", "3000"])
            p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)
            time.sleep(rnd.uniform(0, 0.06))
            before = p.poll() is not None  # it ended on its own first
            t.p.kill()
            out, _ = p.communicate(timeout=30)
        finally:
            t.p.kill()
            t.p.wait()
        if before:
            continue
        doc = json.loads(out)
        xprobe_test.validate(doc, "error")
        codes[doc["error"]["code"]] = codes.get(doc["error"]["code"], 0) + 1
        assert p.returncode == 3 and doc["error"]["code"] in ("TARGET_EXITED",
                                                             "TARGET_NOT_FOUND"), doc
    assert codes.get("TARGET_EXITED", 0) >= 6, codes
