# SPDX-License-Identifier: Apache-2.0
"""Helpers of the live measure tests (tests/live/test_measure_*.py).

Fixture: a live_* fixture process speaking the protocol of
tests/fixtures/live_fixture.h (ready line, "go", done line, "quit").

LiveRun: an `xprobe measure` started in the background, so a test can wait
until its probes are attached (its bpf_link file descriptors exist), then
tell the fixture to go, then collect and schema-validate the document.
The BPF program and link ids the run held are read from its fdinfo, so
cleanup checks look for exactly those ids afterwards, whatever else runs
on the machine.
"""
import json
import os
import signal
import subprocess
import time

import xprobe_test
from proc_helpers import PY311, fd_targets, fixture_path, start_time  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_SRC = os.path.join(os.path.dirname(HERE), "fixtures")


class Fixture:
    """A fixture process; use as a context manager (always reaped)."""

    def __init__(self, argv, env=None):
        self.argv = [str(a) for a in argv]
        self.p = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1, env=env)
        line = self.p.stdout.readline()
        assert line, "fixture %r printed no ready line" % (self.argv,)
        self.ready = json.loads(line)
        assert self.ready.get("ready") is True

    @property
    def pid(self):
        """The PID as xprobe sees it (first NSpid entry: the global one)."""
        ns = self.ready.get("nspid") or []
        return ns[0] if ns else self.ready["pid"]

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def done(self, timeout=30):
        deadline = time.monotonic() + timeout
        line = self.p.stdout.readline()
        assert line, "fixture ended without a done line"
        assert time.monotonic() <= deadline + 1
        doc = json.loads(line)
        assert doc.get("done") is True
        return doc

    def quit(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except Exception:
                pass


def bpf_fdinfo(pid):
    """The fdinfo of every BPF program and link descriptor a process
    holds: a list of dicts, each field's first value (keys and values
    stripped), "_text" the whole file."""
    out = []
    for fd, target in fd_targets(pid).items():
        if "bpf-prog" not in target and "bpf_link" not in target:
            continue
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                text = f.read()
        except OSError:
            continue
        info = {"_text": text}
        for line in text.splitlines():
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
        out.append(info)
    return out


def bpf_ids(pid, own=None):
    """(prog ids, link ids) a process holds, from its fdinfo.  With a set
    @own, the ids of its links into its own memory (the uprobe warm-up
    link, src/live/uprobe_link.h) are added to it too."""
    progs, links = set(), set()
    for info in bpf_fdinfo(pid):
        if "prog_id" in info:
            progs.add(int(info["prog_id"]))
        if "link_id" in info:
            links.add(int(info["link_id"]))
            if own is not None and info.get("pid") == str(pid):
                own.add(int(info["link_id"]))
    return progs, links


def link_info(pid, own=None):
    """fdinfo of every BPF link the process holds into another process: a
    list of dicts (its links into itself, the uprobe warm-up, go to @own)."""
    out = []
    for info in bpf_fdinfo(pid):
        if "link_id" not in info:
            continue
        if info.get("pid") == str(pid):
            if own is not None:
                own.append(info)
            continue
        out.append(info)
    return out


def target_link_ids(pid):
    """The link ids a process holds into other processes: its links but
    the uprobe warm-up into its own executable (src/live/uprobe_link.h),
    which attaches nothing to a target."""
    own = set()
    links = bpf_ids(pid, own)[1]
    return links - own


def link_env(kind):
    """The environment with XPROBE_TEST_UPROBE_LINK=@kind (None: unset):
    the uprobe link kind a test-hook build uses (src/live/uprobe_link.h)."""
    env = dict(os.environ)
    env.pop("XPROBE_TEST_UPROBE_LINK", None)
    if kind:
        env["XPROBE_TEST_UPROBE_LINK"] = kind
    return env


def bpftool_ids():
    """(prog ids, link ids) the kernel lists now."""
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                      capture_output=True, text=True).stdout or "[]")
    links = json.loads(subprocess.run(["bpftool", "-j", "link", "show"], check=True,
                                      capture_output=True, text=True).stdout or "[]")
    return {p["id"] for p in progs}, {l["id"] for l in links}


def xp_program_names():
    """Names of loaded programs that are xprobe's (xp_ prefix)."""
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                      capture_output=True, text=True).stdout or "[]")
    return [p.get("name", "") for p in progs if p.get("name", "").startswith("xp_")]


def assert_released(progs, links, timeout=5.0):
    """The kernel no longer lists any of these program or link ids."""
    deadline = time.monotonic() + timeout
    while True:
        kp, kl = bpftool_ids()
        left_p, left_l = progs & kp, links & kl
        if not left_p and not left_l:
            return
        if time.monotonic() > deadline:
            raise AssertionError("BPF objects left behind: programs %s links %s"
                                 % (sorted(left_p), sorted(left_l)))
        time.sleep(0.05)


class LiveRun:
    """`xprobe measure ... --json` in the background."""

    def __init__(self, xprobe, *args, env=None, json_mode=True):
        self.argv = [xprobe.binary, "measure"] + [str(a) for a in args]
        if json_mode:
            self.argv += ["--json", "--non-interactive", "--no-color"]
        self.json_mode = json_mode
        self.p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env)
        self.progs, self.links = set(), set()
        self.own_links = set()  # links into xprobe's own memory (the warm-up)

    def wait_armed(self, nlinks, timeout=10.0, settle=0.1):
        """Wait until the run holds @nlinks BPF links (then it arms within
        microseconds: one identity check and one store)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise AssertionError("xprobe exited before arming: rc=%s out=%s err=%s" % (
                    self.p.returncode, self.p.stdout.read(), self.p.stderr.read()))
            own = set()
            progs, links = bpf_ids(self.p.pid, own)
            self.progs |= progs
            self.links |= links
            self.own_links |= own
            # the warm-up link into xprobe itself comes first: not the target's
            if len(links - own) >= nlinks:
                time.sleep(settle)
                progs, links = bpf_ids(self.p.pid, own)
                self.progs |= progs
                self.links |= links
                self.own_links |= own
                return
            time.sleep(0.005)
        raise AssertionError("xprobe did not attach %d links in %.1fs" % (nlinks, timeout))

    def signal(self, signo):
        self.p.send_signal(signo)

    def finish(self, timeout=60, schema_name="measurement-result"):
        out, err = self.p.communicate(timeout=timeout)
        doc = None
        if self.json_mode and self.p.returncode != -signal.SIGKILL:
            # --json: one document on stdout, nothing on stderr (sanitizer
            # reports included)
            assert err == "", err
            doc = xprobe_test.check_document(self.argv, self.p.returncode, out, schema_name)
        return xprobe_test.Result(self.argv, self.p.returncode, out, err, doc)


def events_of(doc, side):
    return [pair[side] for pair in doc["evidence"]]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def measure_fixture(xprobe, fx, args, nlinks, env=None, timeout=60):
    """Start measure, wait for its links, let the fixture work once.
    Returns (Result, the fixture's done line)."""
    run = LiveRun(xprobe, *args, env=env)
    run.wait_armed(nlinks)
    fx.go()
    done = fx.done()
    res = run.finish(timeout=timeout)
    return res, done, run


def uprobe_session(env=None):
    """Whether uprobes may attach as session links here (src/live/
    uprobe_link.h): BPF_TRACE_UPROBE_SESSION came in Linux 6.13, and
    XPROBE_TEST_UPROBE_LINK=multi or perf forces a lesser kind."""
    env = os.environ if env is None else env
    if env.get("XPROBE_TEST_UPROBE_LINK") in ("multi", "perf"):
        return False
    major, minor = os.uname().release.split("-")[0].split(".")[:2]
    return (int(major), int(minor)) >= (6, 13)


def hist_nlinks(args, env=None):
    """BPF links a `measure --histogram` run with @args holds once armed:
    the thread-exit raw tracepoint, its endpoints' links -- one session
    link for a stack-nested pair of one function's entry and return
    without --by arg0 or --explain (src/inventory/latency_histogram.c,
    lh_ukind), else two -- and four scheduler programs with --explain."""
    a = [str(x) for x in args]
    explain = "--explain" in a
    by = a[a.index("--by") + 1] if "--by" in a else None
    nested = "--match" in a and a[a.index("--match") + 1] == "stack-nested"
    up = sum(1 for x in a if x.startswith("uprobe:")) == 2
    one = up and nested and by != "arg0" and not explain and uprobe_session(env)
    return 1 + (1 if one else 2) + (4 if explain else 0)
