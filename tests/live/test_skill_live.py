# SPDX-License-Identifier: Apache-2.0
"""The agent Skill's examples, run: every command of
skills/xprobe/examples/commands.md against the bundled fixtures, checked
against its Expect: line (tests/pylib/skill_examples.py reads the file),
and every example spec of examples/specs/ through measure --spec with its
target filled in.  Each document is schema-checked as every test's is
(xprobe_test.check_document: ours and the reference schemas, and the
--events-out artifact).

The placeholders become:
  <PID>, <BINARY>, <FUNCTION>  tests/fixtures/live_service (two threads
                               handling requests: handle_request(), mmap)
  <PY_PID>                     Debian's python3.11 collecting garbage in a loop
  <CUDA_PID>                   the CUPTI test double's cupti_fixture, no
                               Agent at start (measure injects it), launching
                               gemm_kernel on a background thread
  <NVTX_PID>                   tests/fixtures/live_nvtx under
                               NVTX_INJECTION64_PATH, ranging "step" in a loop
  <ROOT_PID>                   this test process, with the fake NVML
                               (XPROBE_NVML_LIBRARY) reporting <CUDA_PID>
  <CAPTURE>, <REPORT>, <SPEC>  files in a temporary directory
"""
import json
import os
import shlex
import subprocess
import threading
import time

import pytest

import skill_examples as sk
import xprobe_test
from agent_helpers import NvtxFixture
from cuda_helpers import CuptiFixture
from measure_live_helpers import Fixture
from proc_helpers import PY311, fixture_path, start_time, stop_process

GC_LOOP = r"""
import gc, json, os, sys, time
gc.disable()
print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
while True:
    junk = [[] for _ in range(200)]
    for j in junk:
        j.append(j)
    del junk
    gc.collect()
    time.sleep(0.01)
"""


class Loop:
    """@step called over and over on a thread until stop()."""

    def __init__(self, step, pause):
        self.stopping = threading.Event()
        self.error = None

        def run():
            try:
                while not self.stopping.is_set():
                    step()
                    time.sleep(pause)
            except Exception as e:  # reported by stop()
                self.error = e

        self.t = threading.Thread(target=run, daemon=True)
        self.t.start()

    def stop(self):
        self.stopping.set()
        self.t.join(timeout=30)
        assert self.error is None, "fixture driver failed: %r" % self.error


def nvtx_round(fx):
    fx.go()
    fx.done()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The placeholders' values, the fixtures behind them, and the env of
    each kind of command."""
    tmp = tmp_path_factory.mktemp("skill")
    stack = []
    try:
        service = Fixture([fixture_path("live_service"), "--seconds", "600"])
        stack.append(service)
        py = subprocess.Popen([PY311, "-c", GC_LOOP], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, text=True)
        stack.append(py)
        assert json.loads(py.stdout.readline())["ready"]
        cuda = CuptiFixture(mode="inject")
        stack.append(cuda)
        stack.append(Loop(lambda: cuda.do("launch 2 gemm_kernel 20000"), 0.02))
        nvtx = NvtxFixture("thread", iters=20, work_us=200)
        stack.append(nvtx)
        stack.append(Loop(lambda: nvtx_round(nvtx), 0.005))
        values = {
            "PID": str(service.pid),
            "BINARY": os.path.realpath(fixture_path("live_service")),
            "FUNCTION": "handle_request",
            "PY_PID": str(py.pid),
            "CUDA_PID": str(cuda.pid),
            "NVTX_PID": str(nvtx.pid),
            "ROOT_PID": str(os.getpid()),
            "CAPTURE": str(tmp / "capture.jsonl"),
            "REPORT": str(tmp / "report.html"),
            "SPEC": str(tmp / "spec.json"),
        }
        targets = {"host": service.pid, "python": py.pid, "cuda": cuda.pid}
        # <SPEC> is the syscall example spec, filled
        filled = fill_spec(sk.load_spec(os.path.join(sk.SPECS, "syscall-mmap.json")),
                           values, targets)
        (tmp / "spec.json").write_text(json.dumps(filled))
        nvml = dict(os.environ, XPROBE_NVML_LIBRARY=fixture_path("libtarget_fakenvml.so"),
                    XPROBE_FAKE_NVML_PROCS="%d@GPU-5e1f0000-0000-4000-8000-000000000001"
                    % cuda.pid)
        yield {"values": values, "targets": targets, "nvml_env": nvml, "tmp": tmp}
    finally:
        for thing in reversed(stack):
            if isinstance(thing, Loop):
                thing.stop()
            elif isinstance(thing, subprocess.Popen):
                stop_process(thing)
            else:
                thing.__exit__(None, None, None)


def fill_spec(doc, values, targets):
    """@doc with its target made the fixture its selectors need."""
    doc = json.loads(sk.fill(json.dumps(doc), values))
    pid = targets[sk.spec_kind(doc)]
    doc["target"] = {"pid": pid, "process_start_time": start_time(pid)}
    return doc


def run_example(xprobe, argv, env=None, schema_name=None):
    p = subprocess.run([xprobe.binary] + argv[1:], capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode != 2, "syntax error: %s" % p.stderr
    name = schema_name or xprobe_test.success_schema(argv[1:])
    doc = xprobe_test.check_document([xprobe.binary] + argv[1:], p.returncode, p.stdout, name)
    return xprobe_test.Result(argv, p.returncode, p.stdout, p.stderr, doc)


def check_stderr(r, injecting):
    """stderr stays empty in --json mode but for online injection's
    documented warning."""
    for line in r.stderr.splitlines():
        assert injecting and line.startswith(
            "xprobe: warning: activating the CUPTI agent modifies target PID "), r


EXAMPLES = sk.examples()


def test_every_placeholder_has_a_fixture(world):
    assert sk.placeholder_table() == set(world["values"])


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e.id() for e in EXAMPLES])
def test_example(xprobe, world, ex):
    """One example, in file order (<CAPTURE> is written by the example
    before the one that reads it)."""
    argv = shlex.split(sk.fill(ex.command, world["values"]))
    env = world["nvml_env"] if argv[1] == "discover" else None
    r = run_example(xprobe, argv, env=env)
    check_stderr(r, "CUDA_PID" in ex.placeholders)
    doc = r.doc
    if ex.outcome == "error":
        assert doc["ok"] is False and r.code == ex.code, r
        return
    assert doc["ok"] is True and r.rc == 0, r
    if ex.outcome == "valid":
        assert doc["valid"] is True and doc["issues"] == [], r
    elif ex.outcome == "not_valid":
        assert doc["valid"] is False, r
        assert ex.code in [i["code"] for i in doc["issues"]], r
    elif argv[1] == "measure" and "measurement" in doc:
        # a result is what the Skill says to trust only after its quality
        assert doc["collection"]["completeness"] == "complete", r
        assert doc["measurement"]["samples"]["matched"] > 0, r
    for flag in ("--events-out", "--report"):
        if flag in argv:
            path = argv[argv.index(flag) + 1]
            assert os.path.getsize(path) > 0 and os.stat(path).st_mode & 0o777 == 0o600, flag
    if "--report" in argv:
        with open(argv[argv.index("--report") + 1]) as f:
            assert f.read(64).lstrip().lower().startswith("<!doctype html")


@pytest.mark.parametrize("spec", sk.spec_files(), ids=os.path.basename)
def test_example_spec(xprobe, world, spec):
    """Every example spec, its target filled in, measured live."""
    doc = fill_spec(sk.load_spec(spec), world["values"], world["targets"])
    xprobe_test.validate(doc, "measurement-spec")
    path = world["tmp"] / ("filled-" + os.path.basename(spec))
    path.write_text(json.dumps(doc))
    aggregate = doc.get("measurement_mode") == "aggregate"
    argv = ["xprobe", "measure", "--spec", str(path)] + list(sk.COMMON_FLAGS)
    r = run_example(xprobe, argv,
                    schema_name="aggregate-inventory-result" if aggregate else None)
    check_stderr(r, sk.spec_kind(doc) == "cuda")
    assert r.rc == 0 and r.doc["ok"] is True, r
    if aggregate:
        assert any(g["name"] == "gemm_kernel" for g in r.doc["inventory"]["groups"]), r
    else:
        assert r.doc["measurement"]["samples"]["matched"] == doc["samples"], r


def test_expectations_are_checked(xprobe, world):
    """The oracle: an example whose Expect: is wrong fails the checks
    above (a valid pair expected invalid, an ok run expected to fail)."""
    ex = [e for e in EXAMPLES if e.outcome == "valid" and "syscall:mmap" in e.command][0]
    argv = shlex.split(sk.fill(ex.command, world["values"]))
    r = run_example(xprobe, argv)
    assert r.doc["valid"] is True
    wrong = sk.Example(ex.line, ex.command, "error", "NO_MATCHED_SAMPLES", ex.section)
    with pytest.raises(AssertionError):
        test_example(xprobe, world, wrong)
    wrong = sk.Example(ex.line, ex.command, "not_valid", "CUPTI_AGENT_NOT_LOADED", ex.section)
    with pytest.raises(AssertionError):
        test_example(xprobe, world, wrong)
