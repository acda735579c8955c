#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""contract-conformance.py - run many xprobe commands and check every JSON
document they print against schemas/ and against the reference 0.4 schemas.

Why: the contract's schemas are closed (additionalProperties: false), so a
field we add, or an enum value the contract lacks, breaks its strict
readers.  The pytest oracle (tests/pylib/xprobe_test.py) does the same for
every test; this script is the broad sweep that finds what no test covers
yet: doctor, discover, validate of every selector family, inventories,
measure live and --input (with --events-out), and an error of every kind.

Usage (root, fixtures built):
  scripts/contract-conformance.py [--bin B] [--build D] [--reference DIR] [-v]
Exit 1 when any document fails a schema (ours, or the reference for a
contract type); one line per document either way.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))

PY311 = "/usr/bin/python3.11"


def load_dir(d):
    out = {}
    if not os.path.isdir(d):
        return out
    for f in sorted(os.listdir(d)):
        if f.endswith(".schema.json"):
            with open(os.path.join(d, f)) as fh:
                out[f[:-len(".schema.json")]] = json.load(fh)
    return out


def errors(schema, doc):
    v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(root)", e.message[:160])
            for e in v.iter_errors(doc)]


class Sweep:
    def __init__(self, args):
        self.bin = args.bin
        self.ours = load_dir(os.path.join(ROOT, "schemas"))
        self.ref = load_dir(args.reference)
        self.verbose = args.verbose
        self.failed = 0
        self.count = 0

    def problems(self, doc, kind):
        out = []
        if kind in self.ours:
            out += errors(self.ours[kind], doc)
        if kind in self.ref:
            out += errors(self.ref[kind], doc)
        return out

    def check(self, label, doc, kind):
        self.count += 1
        problems = []
        if kind in self.ours:
            problems += ["ours: " + e for e in errors(self.ours[kind], doc)]
        else:
            problems.append("ours: no schema %s" % kind)
        if kind in self.ref:
            problems += ["reference: " + e for e in errors(self.ref[kind], doc)]
        tag = "ref" if kind in self.ref else "own"
        if problems:
            self.failed += 1
            print("FAIL %-44s %-28s %s" % (label[:44], kind, tag))
            for p in problems[:12]:
                print("       " + p)
        elif self.verbose:
            print("ok   %-44s %-28s %s" % (label[:44], kind, tag))

    def run(self, label, *argv, kind=None, env=None, user=None, events_out=None):
        cmd = [self.bin] + [str(a) for a in argv] + ["--json", "--non-interactive", "--no-color"]
        kw = {}
        if user is not None:
            kw = {"user": user, "group": user, "extra_groups": []}
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, **kw)
        if p.returncode == 2:
            print("USAGE %s: %s" % (label, p.stderr.splitlines()[0] if p.stderr else ""))
            return None
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            self.failed += 1
            print("FAIL %s: not JSON (rc %d): %r" % (label, p.returncode, p.stdout[:200]))
            return None
        if doc.get("ok") is False:
            k = "error"
            label = "%s [%s]" % (label, doc["error"]["code"])
        else:
            k = kind or {"doctor": "capability", "discover": "discover",
                         "validate": "validate", "measure": "measurement-result"}[argv[0]]
        self.check(label, doc, k)
        if events_out and os.path.exists(events_out):
            if events_out.endswith(".json"):
                with open(events_out) as f:
                    json.load(f)  # chrome trace: no contract schema
            else:
                with open(events_out) as f:
                    events = [json.loads(line) for line in f]
                # one row per artifact: the first event that fails, else the last
                bad = [e for e in events if self.problems(e, "event")]
                if events:
                    self.check("%s events-out (%d)" % (label, len(events)),
                               (bad or events)[-1 if not bad else 0], "event")
            os.unlink(events_out)
        return doc


class Proc:
    def __init__(self, argv, ready=None):
        self.p = subprocess.Popen([str(a) for a in argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if ready:
            while ready not in self.p.stdout.readline():
                pass
        else:
            time.sleep(0.3)
        self.pid = self.p.pid

    def stop(self):
        self.p.kill()
        self.p.wait()


def main():
    ap = argparse.ArgumentParser()
    build = os.environ.get("XPROBE_BUILD", os.path.join(ROOT, "build"))
    ap.add_argument("--bin", default=os.environ.get("XPROBE_BIN",
                                                    os.path.join(build, "bin", "xprobe")))
    ap.add_argument("--build", default=build)
    ap.add_argument("--reference", default=os.path.join(
        os.path.dirname(ROOT), "shared", "reference", "xprobe-0.4-schemas"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    os.environ["XPROBE_BUILD"] = args.build
    import xpcap  # noqa: E402 (needs XPROBE_BUILD for its schema helper)

    s = Sweep(args)
    if not s.ref:
        print("no reference schemas at %s" % args.reference)
        return 1
    fx = os.path.join(args.build, "tests", "fixtures")
    tmp = tempfile.mkdtemp(prefix="xp-conformance-")
    os.chmod(tmp, 0o755)

    # ---- doctor, discover ----
    s.run("doctor", "doctor")
    s.run("doctor (no tracefs)", "doctor", env=dict(os.environ, XPROBE_TRACEFS_ROOT=tmp))
    s.run("doctor (fake NVML)", "doctor",
          env=dict(os.environ, XPROBE_NVML_LIBRARY=os.path.join(fx, "libtarget_fakenvml.so")))
    s.run("doctor (nobody)", "doctor", user=65534)
    s.run("discover (no NVML)", "discover", "--pid", os.getpid())
    s.run("discover (fake NVML)", "discover", "--pid", 1,
          env=dict(os.environ, XPROBE_NVML_LIBRARY=os.path.join(fx, "libtarget_fakenvml.so")))
    s.run("discover --limit 0", "discover", "--pid", 1, "--limit", 0)

    # ---- targets ----
    sleeper_exe = os.path.realpath(os.path.join(fx, "live_sleeper"))
    sleeper = Proc([sleeper_exe, "--tick-us", 2000], ready="ready")
    sleeper.p.stdin.write("go\n")
    sleeper.p.stdin.flush()
    py = Proc([PY311, "-c", "import gc, mmap, time\n"
               "while True:\n gc.collect(); m = mmap.mmap(-1, 4096); m.close(); "
               "time.sleep(0.002)"])
    funcs_exe = os.path.realpath(os.path.join(fx, "target_funcs"))
    funcs = Proc([funcs_exe], ready="ready")
    pid, ppid, fpid = sleeper.pid, py.pid, funcs.pid

    def up(exe, sym, end=False):
        return "uprobe:%s:%s:%s" % (exe, sym, "return" if end else "entry")

    try:
        pairs = [
            ("uprobe stack-nested", pid, up(sleeper_exe, "xp_fx_hot"),
             up(sleeper_exe, "xp_fx_hot", True), "stack-nested"),
            ("uprobe first-after", pid, up(sleeper_exe, "xp_fx_hot"),
             up(sleeper_exe, "xp_fx_hot", True), "first-after"),
            ("uprobe nearest", fpid, up(funcs_exe, "fx_add"), up(funcs_exe, "fx_work"), "nearest"),
            ("uprobe offset", fpid, "uprobe:%s:+0x0:entry" % funcs_exe,
             up(funcs_exe, "fx_add", True), "first-after"),
            ("syscall exact", ppid, "syscall:mmap:entry", "syscall:mmap:exit", "exact"),
            ("syscall stream-order (invalid)", ppid, "syscall:mmap:entry", "syscall:mmap:exit",
             "stream-order"),
            ("tracepoint", pid, "tracepoint:syscalls:sys_enter_getppid",
             "tracepoint:syscalls:sys_exit_getppid", "first-after"),
            ("tracepoint missing", pid, "tracepoint:syscalls:sys_enter_nope",
             "tracepoint:syscalls:sys_exit_getppid", "first-after"),
            ("python gc", ppid, "python:gc_start", "python:gc_end", "exact"),
            ("python gc on C target", pid, "python:gc_start", "python:gc_end", "exact"),
            ("cuda api -> kernel", pid, "cuda:runtime_api:cudaLaunchKernel:exit",
             "cuda:kernel_start:name~flash.*", "exact"),
            ("cuda kernel broad", pid, "cuda:kernel_start", "cuda:kernel_end", "stream-order"),
            ("cuda memcpy", pid, "cuda:memcpy_start:kind=HtoD", "cuda:memcpy_end:kind=HtoD",
             "exact"),
            ("nvtx", pid, "cuda:nvtx_range_start:name~^forward$",
             "cuda:nvtx_range_end:name~^forward$", "exact"),
            ("symbol missing", fpid, up(funcs_exe, "no_such_fn"), up(funcs_exe, "fx_add"),
             "first-after"),
            ("binary not mapped", fpid, up("/usr/bin/true", "main"), up(funcs_exe, "fx_add"),
             "first-after"),
            ("bad selector", fpid, "bogus:thing", up(funcs_exe, "fx_add"), "first-after"),
            ("bad policy", fpid, up(funcs_exe, "fx_add"), up(funcs_exe, "fx_add", True), "best"),
            ("no such pid", 4194303, "syscall:mmap:entry", "syscall:mmap:exit", "exact"),
        ]
        for label, p, a, b, m in pairs:
            s.run("validate " + label, "validate", "--pid", p, "--from", a, "--to", b,
                  "--match", m)
        s.run("validate ambiguous", "validate", "--pid", fpid, "--from",
              up(funcs_exe, "target_dup_helper"), "--to", up(funcs_exe, "fx_add"),
              "--match", "first-after")
        s.run("validate uprobe as nobody", "validate", "--pid", fpid, "--from",
              up(funcs_exe, "fx_add"), "--to", up(funcs_exe, "fx_add", True), "--match",
              "stack-nested", user=65534)
        s.run("validate as nobody", "validate", "--pid", ppid, "--from", "syscall:mmap:entry",
              "--to", "syscall:mmap:exit", "--match", "exact", user=65534)
        s.run("validate --cpu-sample", "validate", "--pid", ppid, "--cpu-sample",
              kind="inventory-validation")
        s.run("validate --syscall-aggregate", "validate", "--pid", ppid, "--syscall-aggregate",
              kind="inventory-validation")
        s.run("validate --list", "validate", "--pid", fpid, "--list", "uprobe:*:*fx_*",
              kind="endpoint-list")

        # ---- measure live ----
        ev = os.path.join(tmp, "ev.jsonl")
        s.run("measure uprobe samples", "measure", "--pid", pid, "--from",
              up(sleeper_exe, "xp_fx_hot"), "--to", up(sleeper_exe, "xp_fx_hot", True),
              "--match", "stack-nested", "--samples", 5, "--events-out", ev, events_out=ev)
        s.run("measure syscall duration", "measure", "--pid", ppid, "--from",
              "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact",
              "--duration-ms", 300, "--events-out", ev, events_out=ev)
        s.run("measure tracepoint", "measure", "--pid", pid, "--from",
              "tracepoint:syscalls:sys_enter_getppid", "--to",
              "tracepoint:syscalls:sys_exit_getppid", "--match", "first-after", "--samples", 5,
              "--events-out", ev, events_out=ev)
        s.run("measure python gc", "measure", "--pid", ppid, "--from", "python:gc_start",
              "--to", "python:gc_end", "--match", "exact", "--samples", 5, "--events-out", ev,
              events_out=ev)
        chrome = os.path.join(tmp, "ev.json")
        s.run("measure python gc chrome", "measure", "--pid", ppid, "--from", "python:gc_start",
              "--to", "python:gc_end", "--match", "exact", "--samples", 3, "--events-out",
              chrome, "--format", "chrome", events_out=chrome)
        s.run("measure full", "measure", "--pid", pid, "--from", up(sleeper_exe, "xp_fx_hot"),
              "--to", up(sleeper_exe, "xp_fx_hot", True), "--match", "stack-nested",
              "--duration-ms", 500, "--max-events", 4, "--events-out", ev, events_out=ev)
        s.run("measure timeout", "measure", "--pid", fpid, "--from", up(funcs_exe, "fx_add"),
              "--to", up(funcs_exe, "fx_add", True), "--match", "stack-nested", "--samples", 1,
              "--timeout-ms", 200)
        s.run("measure cuda", "measure", "--pid", pid, "--from",
              "cuda:runtime_api:cudaLaunchKernel:exit", "--to", "cuda:kernel_start",
              "--match", "exact", "--samples", 1)
        s.run("measure --cpu-sample", "measure", "--pid", ppid, "--cpu-sample",
              "--duration-ms", 300, kind="cpu-sample-inventory-result")
        s.run("measure --syscall-aggregate", "measure", "--pid", ppid, "--syscall-aggregate",
              "--duration-ms", 300, kind="syscall-aggregate-result")
        s.run("measure --aggregate", "measure", "--pid", pid, "--from", "cuda:kernel_start",
              "--to", "cuda:kernel_end", "--match", "exact", "--aggregate", "--duration-ms", 100)
        s.run("measure --agent", "measure", "--pid", ppid, "--from", "syscall:mmap:entry",
              "--to", "syscall:mmap:exit", "--match", "exact", "--samples", 1, "--agent",
              "/nonexistent.so")
        s.run("measure --pid --input", "measure", "--pid", ppid, "--input", "/dev/null",
              "--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact",
              "--samples", 1)
        # CUDA libraries as the target maps them (copies of a fixture library)
        libs = {}
        for name in ("libxprobe.so.0", "libcudart.so.12", "libcupti.so.13"):
            libs[name] = os.path.join(tmp, name)
            shutil.copy(os.path.join(fx, "libtarget_shlib.so"), libs[name])
        for label, names in (("agent loaded", ("libxprobe.so.0", "libcudart.so.12")),
                             ("cuda conflict", ("libcudart.so.12", "libcupti.so.13"))):
            argv = [funcs_exe]
            for n in names:
                argv += ["--dlopen", libs[n]]
            t = Proc(argv, ready="ready")
            try:
                s.run("validate " + label, "validate", "--pid", t.pid, "--from",
                      "cuda:memcpy_start:kind=HtoD", "--to", "cuda:kernel_end:name~flash",
                      "--match", "stream-order")
            finally:
                t.stop()
    finally:
        for p in (sleeper, py, funcs):
            p.stop()

    # ---- measure --input ----
    X = xpcap
    cap = xpcap.write_jsonl(os.path.join(tmp, "sys.jsonl"), [
        X.syscall_entry(1, 100), X.syscall_exit(1, 150), X.syscall_entry(2, 200),
        X.syscall_exit(2, 290), X.syscall_entry(1, 300)], check=False)
    gcap = xpcap.write_jsonl(os.path.join(tmp, "gc.jsonl"), [
        X.gc("start", 1, 100), X.gc("end", 1, 180)], check=False)
    ccap = xpcap.write_jsonl(os.path.join(tmp, "cuda.jsonl"), [
        X.cuda_api("exit", 1, 100), X.kernel("start", 150), X.kernel("end", 400),
        X.nvtx("start", 1, 90), X.nvtx("end", 1, 500)], check=False)
    ucap = xpcap.write_jsonl(os.path.join(tmp, "up.jsonl"), [
        X.uprobe_entry(1, 10), X.uprobe_return(1, 30), X.uprobe_entry(1, 40)], check=False)
    hcap = xpcap.write_host_capture(os.path.join(tmp, "host.json"), [
        X.syscall_entry(1, 100), X.syscall_exit(1, 150)])
    dcap = xpcap.write_host_capture(os.path.join(tmp, "drop.json"), [
        X.syscall_entry(1, 100), X.syscall_exit(1, 150)], dropped=3)
    lcap = xpcap.write_host_capture(os.path.join(tmp, "limit.json"), [
        X.syscall_entry(1, 100), X.syscall_exit(1, 150)], record_limit_reached=True)
    sys_pair = ["--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit"]
    inputs = [
        ("input syscall exact", [cap] , sys_pair + ["--match", "exact", "--samples", 10]),
        ("input syscall first-after", [cap], sys_pair + ["--match", "first-after",
                                                         "--samples", 1]),
        ("input host-capture", [hcap], sys_pair + ["--match", "exact", "--samples", 1]),
        ("input gc", [gcap], ["--from", "python:gc_start", "--to", "python:gc_end",
                              "--match", "exact", "--samples", 1]),
        ("input cuda exact", [ccap], ["--from", "cuda:runtime_api:cudaLaunchKernel:exit",
                                      "--to", "cuda:kernel_start", "--match", "exact",
                                      "--samples", 1]),
        ("input kernel stream-order", [ccap], ["--from", "cuda:kernel_start", "--to",
                                               "cuda:kernel_end", "--match", "stream-order",
                                               "--samples", 1]),
        ("input nvtx", [ccap], ["--from", "cuda:nvtx_range_start:name~^forward$", "--to",
                                "cuda:nvtx_range_end:name~^forward$", "--match", "exact",
                                "--samples", 1]),
        ("input uprobe nearest", [ucap], ["--from", "uprobe:/usr/bin/app:handle_request:entry",
                                          "--to", "uprobe:/usr/bin/app:handle_request:return",
                                          "--match", "nearest", "--samples", 5]),
        ("input clock mix", [ccap], ["--from", "cuda:runtime_api:cudaLaunchKernel:exit",
                                     "--to", "cuda:kernel_start", "--match", "first-after",
                                     "--samples", 1]),
        ("input drops", [dcap], sys_pair + ["--match", "exact", "--samples", 1]),
        ("input limit", [lcap], sys_pair + ["--match", "exact", "--samples", 1]),
        ("input no match", [cap], ["--from", "syscall:read:entry", "--to", "syscall:read:exit",
                                   "--match", "exact", "--samples", 1]),
        ("input missing", ["/nonexistent.jsonl"], sys_pair + ["--match", "exact",
                                                               "--samples", 1]),
        ("input no bound", [cap], sys_pair + ["--match", "exact"]),
        ("input no match flag", [cap], sys_pair),
        ("input --format only", [cap], sys_pair + ["--match", "exact", "--samples", 1,
                                                   "--format", "chrome"]),
        ("input policy", [cap], sys_pair + ["--match", "stack-nested", "--samples", 1]),
    ]
    for label, files, rest in inputs:
        argv = ["measure"]
        for f in files:
            argv += ["--input", f]
        ev = os.path.join(tmp, "in.jsonl")
        if "--format" not in rest:
            argv += ["--events-out", ev]
        s.run(label, *(argv + rest), events_out=ev)
    s.run("measure no source", "measure", *sys_pair, "--match", "exact", "--samples", 1)
    s.run("measure --agent --input", "measure", "--input", cap, *sys_pair, "--match", "exact",
          "--samples", 1, "--agent", "/x.so")
    s.run("measure --spec missing", "measure", "--spec", "/nonexistent.json")
    s.run("measure --spec stale", "measure", "--spec", write_spec(tmp))
    s.run("measure --cpu-sample no pid", "measure", "--cpu-sample", "--duration-ms", 10)

    print("%d documents, %d failed" % (s.count, s.failed))
    return 1 if s.failed else 0


def write_spec(tmp):
    path = os.path.join(tmp, "spec.json")
    with open(path, "w") as f:
        json.dump({"schema_version": "2.0", "name": None,
                   "target": {"pid": 1, "process_start_time": 1},
                   "start_selector": "syscall:mmap:entry", "end_selector": "syscall:mmap:exit",
                   "match_policy": "exact", "samples": 1, "duration_ms": None,
                   "timeout_ms": 1000, "max_events": 10}, f)
    return path


if __name__ == "__main__":
    sys.exit(main())
