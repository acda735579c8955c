#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""truth.py - the checks of the GPU truth check (tests/gpu/run.sh runs it
after building xprobe and the fixture; see tests/gpu/README.md).

It owns the comparison of xprobe against ground truth on a real GPU with
the real CUPTI: it starts tests/gpu/fixture.cu's xpgpu_fixture, drives
`xprobe doctor|discover|validate|measure` against it as the CLI contract
(seed 004) says, and compares every count and duration with what the
fixture printed it did.  One row per check (what, expected, got,
PASS/FAIL); the table is printed at the end and written where --table
says.  Exit 0 when every row passed, 1 otherwise.

Python 3 standard library only (the GPU machine's python has no
jsonschema necessarily); documents are validated against schemas/ when
jsonschema can be imported, and the table says whether they were.

A live measurement runs like the live tests run them: `xprobe measure
--pid P ... --duration-ms W` in the background; the Agent's HELLO
(include/xprobe/agent.h, a second client on the target's control socket)
says when the capture is armed (state ACTIVE, arm_ns after the measure
started), and for host endpoints the measure process holds a bpf_link;
then the fixture runs one step and prints its truth; the result must
arrive after the step's done line (the window covered the whole step).
"""
import argparse
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

JSON = ["--json", "--non-interactive", "--no-color"]
MIB4 = 4 << 20

# include/xprobe/agent.h: the request header (filters follow, all zero for
# HELLO) and the reply.
REQ = struct.Struct("<8sIIIIQQII")
REQ_SIZE = 352
REPLY = struct.Struct("<8sIIIiIIIIQIIQQQQQQQQQII256s")
REPLY_SIZE = 392
OP_HELLO = 1
STATE_ACTIVE = 1
F_NVTX_ROUTED, F_DEVICE_BACKEND, F_HOST_MONOTONIC, F_INJECTED = 1, 2, 4, 8


class Failure(Exception):
    """A check that could not run to its comparison (the row says why)."""


class Stopped(Exception):
    """SIGTERM: run.sh's time budget ran out; the table is still printed."""


def on_term(signo, frame):
    raise Stopped("stopped by signal %d (run.sh's time budget)" % signo)


# --------------------------------------------------------------------------
# the table


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, expected, got, ok):
        self.rows.append((what, str(expected), str(got), "PASS" if ok else "FAIL"))
        log("ROW %s | %s | %s | %s" % (self.rows[-1][3], what, expected, got))
        return ok

    def load_tsv(self, path):
        """Rows run.sh wrote before handing over (build, nvidia-smi)."""
        if not path or not os.path.exists(path):
            return
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 4:
                    self.rows.append(tuple(parts))

    def failed(self):
        return [r for r in self.rows if r[3] != "PASS"]

    def render(self, notes):
        def cell(s):
            return s.replace("|", "\\|").replace("\n", " ")

        out = ["| # | what | expected | got | result |", "| ---: | --- | --- | --- | --- |"]
        for i, r in enumerate(self.rows, 1):
            out.append("| %d | %s | %s | %s | %s |" % (i, cell(r[0]), cell(r[1]), cell(r[2]), r[3]))
        npass = len(self.rows) - len(self.failed())
        out.append("")
        out.append("%d of %d rows passed%s" % (npass, len(self.rows),
                                               "" if not self.failed() else
                                               "; FAILED: " + ", ".join(
                                                   "#%d" % (i + 1) for i, r in enumerate(self.rows)
                                                   if r[3] != "PASS")))
        out.extend(notes)
        return "\n".join(out) + "\n"


TABLE = Table()
LOG = None


def log(msg):
    if LOG:
        LOG.write("[%8.3f] %s\n" % (time.monotonic() - T0, msg))
        LOG.flush()


T0 = time.monotonic()


# --------------------------------------------------------------------------
# schemas (when jsonschema is there)


class Schemas:
    def __init__(self, root):
        self.errors = []
        self.checked = 0
        try:
            import jsonschema  # noqa: F401
            self.js = jsonschema
        except ImportError:
            self.js = None
        self.dir = os.path.join(root, "schemas")
        self.cache = {}

    def check(self, doc, name, what):
        if self.js is None or doc is None:
            return
        if doc.get("ok") is False:
            name = "error"
        if name not in self.cache:
            with open(os.path.join(self.dir, name + ".schema.json")) as f:
                self.cache[name] = self.js.Draft202012Validator(json.load(f))
        self.checked += 1
        errs = sorted(self.cache[name].iter_errors(doc), key=lambda e: list(e.path))
        for e in errs[:3]:
            self.errors.append("%s (%s): %s at %s" % (what, name, e.message[:200],
                                                      "/".join(str(p) for p in e.path)))


SCHEMAS = None


# --------------------------------------------------------------------------
# xprobe


class Res:
    def __init__(self, argv, rc, out, err, secs):
        self.argv, self.rc, self.out, self.err, self.secs = argv, rc, out, err, secs
        self.doc = None
        try:
            self.doc = json.loads(out) if out.strip() else None
        except ValueError:
            self.doc = None

    @property
    def ok(self):
        return self.rc == 0 and isinstance(self.doc, dict) and self.doc.get("ok") is True

    def why(self):
        """A short reason for a failed run, for the 'got' column."""
        if self.rc is None:
            return "timed out after %.0f s" % self.secs
        d = self.doc
        if isinstance(d, dict) and d.get("ok") is False:
            e = d.get("error") or {}
            return "rc=%s %s: %s" % (self.rc, e.get("code"), (e.get("message") or "")[:160])
        tail = (self.err or self.out or "").strip().splitlines()[-1:] or [""]
        return "rc=%s, no JSON document (%s)" % (self.rc, tail[0][:160])


def save_doc(what, res):
    if DOCS is None or res.doc is None:
        return
    d = dict(res.doc)
    if isinstance(d.get("evidence"), list) and len(d["evidence"]) > 4:
        d["evidence"] = d["evidence"][:4] + [{"truncated": len(d["evidence"]) - 4}]
    DOCS.write(json.dumps({"what": what, "argv": res.argv[1:], "rc": res.rc, "doc": d}) + "\n")
    DOCS.flush()


DOCS = None
XPROBE = None


def xp(args, schema, what, timeout=60):
    argv = [XPROBE] + [str(a) for a in args] + JSON
    log("RUN " + " ".join(argv))
    t = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        r = Res(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t)
    except subprocess.TimeoutExpired as e:
        r = Res(argv, None, e.stdout or "", e.stderr or "", time.monotonic() - t)
        if isinstance(r.out, bytes):
            r.out, r.err = r.out.decode(errors="replace"), (r.err or b"").decode(errors="replace")
    log("  rc=%s %.2fs stderr=%r" % (r.rc, r.secs, (r.err or "")[-400:]))
    SCHEMAS.check(r.doc, schema, what)
    save_doc(what, r)
    return r


# --------------------------------------------------------------------------
# the fixture


class Fixture:
    """xpgpu_fixture: ready line, then one command a line, a done line each."""

    def __init__(self, exe, env, label):
        self.label = label
        self.errf = tempfile.TemporaryFile()
        self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errf, env=env)
        self.buf = b""
        try:
            self.ready = self.read(timeout=120)
        except Failure:
            self.close()
            raise
        if self.ready.get("ready") is not True:
            self.close()
            raise Failure("%s: not ready: %r" % (label, self.ready))
        log("%s ready: %s" % (label, json.dumps(self.ready)))

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p.poll() is None

    def stderr_tail(self):
        self.errf.seek(0)
        return self.errf.read().decode(errors="replace")[-300:]

    def read(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("%s: no output in %.0f s" % (self.label, timeout))
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                try:
                    rc = self.p.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    rc = None
                raise Failure("%s exited (rc=%s): %s" % (self.label, rc,
                                                          self.stderr_tail().strip()))
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            raise Failure("%s printed %r" % (self.label, line[:200]))

    def step(self, cmd, timeout=60):
        """Run one command; returns (its lines, its done line)."""
        log("%s <- %s" % (self.label, cmd))
        try:
            self.p.stdin.write((cmd + "\n").encode())
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Failure("%s is gone (rc=%s)" % (self.label, self.p.poll()))
        lines = []
        while True:
            obj = self.read(timeout)
            if "done" in obj:
                if obj["done"] is not True:
                    raise Failure("%s: %s failed: %s" % (self.label, cmd, obj.get("error")))
                log("%s -> %s" % (self.label, json.dumps(obj)))
                return lines, obj
            lines.append(obj)

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write(b"quit\n")
                self.p.stdin.flush()
                self.p.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()


# --------------------------------------------------------------------------
# the Agent's HELLO, and when a background measure is armed


def proc_ids(pid):
    """(effective uid, start time) of @pid as the Agent names its socket."""
    uid = None
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                uid = int(line.split()[2])
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    start = int(stat[stat.rindex(")") + 2:].split()[19])
    return uid, start


def hello(pid):
    uid, start = proc_ids(pid)
    path = "/tmp/xprobe-agent-%d/agent-%d-%d.sock" % (uid, pid, start)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.settimeout(2.0)
        s.connect(path)
        req = REQ.pack(b"XPAGREQ\0", 1, OP_HELLO, REQ_SIZE, 0, 0, 0, 0, 0)
        s.send(req + b"\0" * (REQ_SIZE - len(req)))
        data = s.recv(4096)
    finally:
        s.close()
    if len(data) != REPLY_SIZE:
        raise OSError("HELLO reply of %d bytes" % len(data))
    f = REPLY.unpack(data)
    return {"status": f[4], "features": f[5], "state": f[6], "cuda_major": f[10],
            "cupti_major": f[11], "arm_ns": f[12], "capacity": f[13], "observed": f[14],
            "retained": f[15], "dropped": f[16], "unknown": f[17]}


def features_str(h):
    names = [(F_NVTX_ROUTED, "nvtx_routed"), (F_DEVICE_BACKEND, "device_backend"),
             (F_HOST_MONOTONIC, "host_monotonic"), (F_INJECTED, "injected")]
    return "+".join(n for b, n in names if h["features"] & b) or "none"


def bpf_links(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if "bpf_link" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


class Live:
    """One live measure run against a fixture step."""

    def __init__(self, fx, args, step, window_ms, schema="measurement-result", links=0,
                 step_timeout=60):
        self.fx = fx
        self.argv = [XPROBE, "measure", "--pid", str(fx.pid)] + [str(a) for a in args] + \
            ["--duration-ms", str(window_ms)] + JSON
        self.lines, self.done, self.in_window, self.hello = [], None, False, None
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        log("RUN " + " ".join(self.argv))
        since = time.monotonic_ns()
        t = time.monotonic()
        p = subprocess.Popen(self.argv, stdout=out, stderr=err)
        self.armed = self.wait_armed(p, since, links)
        if not self.armed and p.poll() is None:
            p.kill()
        try:
            if self.armed:
                self.lines, self.done = fx.step(step, timeout=step_timeout)
                self.in_window = p.poll() is None
            p.wait(timeout=window_ms / 1000.0 + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        except BaseException:
            p.kill()
            p.wait()
            raise
        finally:
            out.seek(0)
            err.seek(0)
            self.res = Res(self.argv, p.returncode, out.read().decode(errors="replace"),
                           err.read().decode(errors="replace"), time.monotonic() - t)
        log("  rc=%s %.2fs armed=%s in_window=%s hello=%s stderr=%r" % (
            self.res.rc, self.res.secs, self.armed, self.in_window, self.hello,
            self.res.err[-400:]))
        SCHEMAS.check(self.res.doc, schema, " ".join(map(str, args)))
        save_doc(step, self.res)
        self.doc = self.res.doc if self.res.ok else None

    def wait_armed(self, p, since, links, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                return False
            try:
                h = hello(self.fx.pid)
                if h["state"] == STATE_ACTIVE and h["arm_ns"] >= since and \
                        bpf_links(p.pid) >= links:
                    self.hello = h
                    if links:
                        time.sleep(0.1)
                    return True
            except (OSError, ValueError):
                pass
            time.sleep(0.003)
        return False

    def why(self):
        """Why there is no result document to compare, or None."""
        if not self.armed and self.res.rc is not None and self.res.rc != 0:
            return "never armed; " + self.res.why()
        if not self.armed:
            return "the Agent never reported an armed capture (HELLO) within 20 s; " + \
                self.res.why()
        if self.doc is None:
            return self.res.why()
        if not self.in_window:
            return "the window closed before the fixture's step finished (result not comparable)"
        return None


def samples(doc):
    s = doc["measurement"]["samples"]
    return s["matched"], s["unmatched_start"], s["unmatched_end"], s["ambiguous"]


def counts_str(doc):
    m, us, ue, a = samples(doc)
    c = doc["collection"].get("cupti") or {}
    return "matched=%d unmatched=%d/%d ambiguous=%d method=%s cupti_dropped=%s" % (
        m, us, ue, a, doc["correlation"]["method"], c.get("dropped_records", "null"))


def exact_counts(what, run, n, method, extra_ok=True, extra=""):
    """A row: matched == n, nothing unmatched or ambiguous, the method,
    CUPTI counters present with no drop."""
    exp = "matched=%d unmatched=0/0 ambiguous=0 method=%s cupti_dropped=0" % (n, method)
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    d = run.doc
    m, us, ue, a = samples(d)
    c = d["collection"].get("cupti") or {}
    ok = (m == n and us == 0 and ue == 0 and a == 0 and d["correlation"]["method"] == method
          and c.get("dropped_records") == 0 and extra_ok)
    return TABLE.add(what, exp, counts_str(d) + extra, ok)


def durations_vs_events(what, run, lines, planned):
    """Per-kernel durations (by order) within max(10 us, 1%) of the
    fixture's cudaEvent elapsed times."""
    exp = "each of %d within max(10 us, 1%%) of its cudaEvent time (by order)" % planned
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    ev = run.doc["evidence"]
    if not lines or len(ev) != len(lines):
        return TABLE.add(what, exp, "%d pairs for %d launches" % (len(ev), len(lines)), False)
    worst, worst_i, diffs, bad, names = 0.0, -1, [], 0, set()
    for i, (pair, line) in enumerate(zip(ev, lines)):
        x_us = pair["latency_ns"] / 1000.0
        e_us = line["event_ms"] * 1000.0
        d = x_us - e_us
        diffs.append(d)
        tol = max(10.0, 0.01 * e_us)
        if abs(d) > tol:
            bad += 1
        if abs(d) / tol > worst:
            worst, worst_i = abs(d) / tol, i
        names.add((pair["start"].get("cuda") or {}).get("kernel_name"))
    diffs_sorted = sorted(diffs)
    wl = lines[worst_i]
    got = ("%d outside; worst %+.2f us at launch %d (event %.1f us, xprobe %.1f us); "
           "median diff %+.2f us; names %s" % (
               bad, diffs[worst_i], worst_i, wl["event_ms"] * 1000.0,
               ev[worst_i]["latency_ns"] / 1000.0, diffs_sorted[len(diffs) // 2],
               ",".join(sorted(str(n) for n in names))))
    ok = bad == 0 and names == {lines[0]["kernel"]}
    return TABLE.add(what, exp, got, ok)


def latencies_in(run, lo_ns, hi_ns):
    lat = [p["latency_ns"] for p in run.doc["evidence"]]
    return (all(lo_ns < x < hi_ns for x in lat), min(lat) if lat else None,
            max(lat) if lat else None)


# --------------------------------------------------------------------------
# the checks


class Ctx:
    pass


def check_doctor(c):
    r = xp(["doctor"], "capability", "doctor")
    exp = "nvidia_driver, cuda_driver, cupti available; cuda_callback, cuda_activity true"
    if not r.ok:
        return TABLE.add("doctor: NVIDIA driver, CUDA driver, CUPTI", exp, r.why(), False)
    ch, cap = r.doc["checks"], r.doc["capabilities"]
    st = {k: ch[k]["status"] for k in ("nvidia_driver", "cuda_driver", "cuda_toolkit", "cupti")}
    ok = (st["nvidia_driver"] == st["cuda_driver"] == st["cupti"] == "available"
          and cap["cuda_callback"] and cap["cuda_activity"])
    got = "%s; cuda_callback=%s cuda_activity=%s runtime_injection=%s; cupti: %s" % (
        " ".join("%s=%s" % kv for kv in st.items()), cap["cuda_callback"],
        cap["cuda_activity"], cap["runtime_injection"], (ch["cupti"]["detail"] or "")[:160])
    TABLE.add("doctor: NVIDIA driver, CUDA driver, CUPTI", exp, got, ok)


def check_discover(c):
    root = c.root_pid
    r = xp(["discover", "--pid", root], "discover", "discover")
    uuids = c.gpu_uuids
    exp = "a candidate pid=%d (fixture, under root %d) on GPU %s" % (
        c.a.pid, root, ",".join(uuids) or "(nvidia-smi gave no UUID)")
    if not r.ok:
        return TABLE.add("discover --pid <parent> finds the fixture (NVML)", exp, r.why(), False)
    cands = r.doc["candidates"]
    mine = [x for x in cands if x["target"]["pid"] == c.a.pid]
    got = "candidates=%s" % ([(x["target"]["pid"], x["gpu_uuids"]) for x in cands][:6])
    ok = len(mine) == 1 and bool(mine[0]["gpu_uuids"]) and \
        (not uuids or set(mine[0]["gpu_uuids"]) <= set(uuids)) and bool(uuids)
    TABLE.add("discover --pid <parent> finds the fixture (NVML)", exp, got, ok)


def validate_rows(c, fx, cases, activation, label):
    for name, frm, to, match in cases:
        r = xp(["validate", "--pid", fx.pid, "--from", frm, "--to", to, "--match", match],
               "validate", "validate " + name)
        exp = "valid=true activation=%s" % activation
        what = "validate %s: %s -> %s (%s)%s" % (name, frm, to, match, label)
        if not r.ok:
            TABLE.add(what, exp, r.why(), False)
            continue
        d = r.doc
        req = d["requirements"]
        issues = ",".join(i["code"] for i in d["issues"])
        got = "valid=%s activation=%s mutation=%s%s" % (
            str(d["valid"]).lower(), req["agent_activation"], str(req["target_mutation"]).lower(),
            (" issues=" + issues) if issues else "")
        ok = d["valid"] is True and req["agent_activation"] == activation
        if activation == "injection_required":
            ok = ok and req["target_mutation"] is True
        TABLE.add(what, exp, got, ok)


def kernel_sel(name):
    return "name~^%s$" % name


def check_validate(c):
    exe = c.a.ready["exe"]
    spin = kernel_sel("xpgpu_spin")
    cases = [
        ("runtime API", "cuda:runtime_api:cudaLaunchKernel:entry",
         "cuda:kernel_start:" + spin, "exact"),
        ("driver API", "cuda:driver_api:cuLaunchKernel:entry",
         "cuda:kernel_start:" + kernel_sel("xpgpu_drv"), "exact"),
        ("kernel", "cuda:kernel_start:" + spin, "cuda:kernel_end:" + spin, "exact"),
        ("memcpy", "cuda:memcpy_start:kind=HtoD", "cuda:memcpy_end:kind=HtoD", "exact"),
        ("memset", "cuda:memset_start", "cuda:memset_end", "exact"),
        ("NVTX", "cuda:nvtx_range_start:name~^xpgpu_step$",
         "cuda:nvtx_range_end:name~^xpgpu_step$", "exact"),
        ("stream order", "cuda:kernel_end:" + spin, "cuda:kernel_start:" + spin,
         "stream-order"),
        ("host+CUDA", "uprobe:%s:xpgpu_request:entry" % exe,
         "cuda:kernel_start:" + kernel_sel("xpgpu_touch"), "first-after"),
    ]
    validate_rows(c, c.a, cases, "already_loaded", "")


def check_kernel_exact(c):
    spin = "cuda:kernel_start:" + kernel_sel("xpgpu_spin")
    run = Live(c.a, ["--from", spin, "--to", spin.replace("kernel_start", "kernel_end"),
                     "--match", "exact"], "kernels 20,100,500,2000 10", 2500)
    n = run.done["launches"] if run.done else 40
    extra = ""
    if run.hello:
        extra = "; agent %s cuda=%d cupti=%d" % (features_str(run.hello), run.hello["cuda_major"],
                                                 run.hello["cupti_major"])
    exact_counts("kernel_start->kernel_end exact (40 kernels, 20-2000 us): counts", run, n,
                 "exact_cupti_correlation_id", extra=extra)
    durations_vs_events("kernel durations vs cudaEventElapsedTime", run, run.lines, 40)


def check_api(c):
    run = Live(c.a, ["--from", "cuda:runtime_api:cudaLaunchKernel:entry",
                     "--to", "cuda:kernel_start:" + kernel_sel("xpgpu_spin"), "--match", "exact"],
               "kernels 50 30", 2000)
    ok, extra = True, ""
    if run.doc:
        ok, lo, hi = latencies_in(run, 0, 20_000_000)
        extra = "; latency %s..%s ns (want 0 < x < 20 ms) clock=%s" % (
            lo, hi, run.doc["clock"]["alignment"])
        ok = ok and run.doc["clock"]["alignment"] == "cupti_normalized_to_host_monotonic"
    exact_counts("runtime cudaLaunchKernel:entry -> kernel_start exact: pairs = launches", run,
                 run.done["launches"] if run.done else 30, "exact_cupti_correlation_id",
                 ok, extra)


def check_chevron(c):
    """<<<>>> compiles to __cudaLaunchKernel with CUDA 13 (its own CUPTI
    callback id): which runtime API name measures such launches?"""
    what = "<<<>>> launches (CUDA 13: __cudaLaunchKernel): runtime API entry -> kernel_start exact"
    exp = "all 20 paired under runtime_api cudaLaunchKernel or __cudaLaunchKernel (got says which)"
    tried = []
    for api in ("cudaLaunchKernel", "__cudaLaunchKernel"):
        run = Live(c.a, ["--from", "cuda:runtime_api:%s:entry" % api,
                         "--to", "cuda:kernel_start:" + kernel_sel("xpgpu_spin"),
                         "--match", "exact"], "chevron 20 50", 2000)
        if run.doc:
            m, us, ue, a = samples(run.doc)
            if m == 20 and us == ue == a == 0:
                return TABLE.add(what, exp, "%s: %s" % (api, counts_str(run.doc)), True)
            tried.append("%s: %s" % (api, counts_str(run.doc)))
        else:
            tried.append("%s: %s" % (api, run.why()))
    TABLE.add(what, exp, "; ".join(tried), False)


def check_driver(c):
    run = Live(c.a, ["--from", "cuda:driver_api:cuLaunchKernel:entry",
                     "--to", "cuda:kernel_start:" + kernel_sel("xpgpu_drv"), "--match", "exact"],
               "driver 30 50", 2000)
    ok, extra = True, ""
    if run.doc:
        ok, lo, hi = latencies_in(run, 0, 20_000_000)
        extra = "; latency %s..%s ns" % (lo, hi)
    exact_counts("driver cuLaunchKernel:entry -> kernel_start exact (cuLaunchKernel launches)",
                 run, run.done["launches"] if run.done else 30, "exact_cupti_correlation_id",
                 ok, extra)
    # runtime <<<>>> launches: does the runtime call cuLaunchKernel (a
    # driver callback CUPTI reports)?  Either all of them pair or none does.
    run = Live(c.a, ["--from", "cuda:driver_api:cuLaunchKernel:entry",
                     "--to", "cuda:kernel_start:" + kernel_sel("xpgpu_spin"), "--match", "exact"],
               "kernels 50 20", 2000)
    what = "driver cuLaunchKernel:entry -> runtime-launched kernels (does cudaLaunchKernel use it)"
    exp = "all 20 paired (runtime uses cuLaunchKernel) or NO_MATCHED_SAMPLES (it does not)"
    if run.doc:
        m, us, ue, a = samples(run.doc)
        TABLE.add(what, exp, "yes: " + counts_str(run.doc),
                  m == 20 and us == 0 and ue == 0 and a == 0)
    elif run.armed and run.in_window and isinstance(run.res.doc, dict) and \
            (run.res.doc.get("error") or {}).get("code") == "NO_MATCHED_SAMPLES":
        TABLE.add(what, exp, "no: NO_MATCHED_SAMPLES (the runtime does not call cuLaunchKernel)",
                  True)
    else:
        TABLE.add(what, exp, run.why() or run.res.why(), False)


def bytes_ok(run, want):
    bad = [p for p in run.doc["evidence"]
           if (p["start"].get("cuda") or {}).get("bytes") not in (want, None)
           or (p["end"].get("cuda") or {}).get("bytes") not in (want, None)]
    seen = {(p["start"].get("cuda") or {}).get("bytes") for p in run.doc["evidence"]} | \
        {(p["end"].get("cuda") or {}).get("bytes") for p in run.doc["evidence"]}
    return not bad and want in seen, seen


def check_copies(c):
    c.raw_memcpy = {}
    for kind, per in (("HtoD", 2), ("DtoH", 1)):
        run = Live(c.a, ["--from", "cuda:memcpy_start:kind=" + kind,
                         "--to", "cuda:memcpy_end:kind=" + kind, "--match", "exact"],
                   "copies 10", 2500)
        ok, extra = True, ""
        if run.doc:
            ok, seen = bytes_ok(run, MIB4)
            kinds = {(p["start"].get("cuda") or {}).get("memcpy_kind") for p in run.doc["evidence"]}
            ok = ok and kinds == {kind}
            extra = "; bytes=%s kind=%s" % (sorted(x for x in seen if x is not None),
                                            ",".join(sorted(str(k) for k in kinds)))
            c.raw_memcpy[kind] = samples(run.doc)[0]
        exact_counts("memcpy_start->memcpy_end kind=%s exact (%d per rep x 10, 4 MiB)" % (kind, per),
                     run, per * 10, "exact_cupti_correlation_id", ok, extra)
    run = Live(c.a, ["--from", "cuda:memset_start", "--to", "cuda:memset_end", "--match", "exact"],
               "copies 10", 2500)
    ok, extra = True, ""
    if run.doc:
        ok, seen = bytes_ok(run, MIB4)
        extra = "; bytes=%s" % sorted(x for x in seen if x is not None)
        c.raw_memset = samples(run.doc)[0]
    exact_counts("memset_start->memset_end exact (1 per rep x 10, 4 MiB)", run, 10,
                 "exact_cupti_correlation_id", ok, extra)


def check_stream_order(c):
    spin = kernel_sel("xpgpu_spin")
    run = Live(c.a, ["--from", "cuda:kernel_end:" + spin, "--to", "cuda:kernel_start:" + spin,
                     "--match", "stream-order"], "burst 50 20", 2000)
    what = "kernel_end -> next kernel_start stream-order (50 back-to-back launches)"
    exp = "matched=49 ambiguous=0 method=cuda_stream_order, gaps >= 0"
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    m, us, ue, a = samples(run.doc)
    lat = [p["latency_ns"] for p in run.doc["evidence"]]
    streams = {(p["start"].get("cuda") or {}).get("stream_id") for p in run.doc["evidence"]}
    ok = m == 49 and a == 0 and run.doc["correlation"]["method"] == "cuda_stream_order" and \
        len(streams) == 1
    TABLE.add(what, exp, "%s; gaps %s..%s ns; streams %s" % (
        counts_str(run.doc), min(lat) if lat else None, max(lat) if lat else None,
        sorted(str(s) for s in streams)), ok)


def check_uprobe(c):
    exe = c.a.ready["exe"]
    run = Live(c.a, ["--from", "uprobe:%s:xpgpu_request:entry" % exe,
                     "--to", "cuda:kernel_start:" + kernel_sel("xpgpu_touch"),
                     "--match", "first-after"], "requests 30", 2500, links=1)
    what = "uprobe xpgpu_request:entry -> first kernel_start (first-after, host+GPU clocks)"
    exp = "matched=30 unmatched_start=0, 0 < latency < 20 ms, clock cupti_normalized_to_host_monotonic"
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    m, us, ue, a = samples(run.doc)
    ok, lo, hi = latencies_in(run, 0, 20_000_000)
    col = run.doc["collection"]
    al = run.doc["clock"]["alignment"]
    ok = ok and m == 30 and us == 0 and run.doc["correlation"]["method"] == "first_after" and \
        al == "cupti_normalized_to_host_monotonic"
    TABLE.add(what, exp, "%s; host_events=%d cuda_events=%d latency %s..%s ns clock=%s" % (
        counts_str(run.doc), col["host_events"], col["cuda_events"], lo, hi, al), ok)


def check_nvtx(c):
    sel = "name~^xpgpu_step$"
    run = Live(c.a, ["--from", "cuda:nvtx_range_start:" + sel, "--to", "cuda:nvtx_range_end:" + sel,
                     "--match", "exact"], "nvtx 30 100", 2000)
    exact_counts("NVTX range xpgpu_step start->end exact", run, 30, "exact_nvtx_range_id")
    what = "NVTX range durations vs the fixture's CLOCK_MONOTONIC around push/pop"
    exp = "each within max(10 us, 1%) (by order)"
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    ev = run.doc["evidence"]
    if len(ev) != len(run.lines):
        return TABLE.add(what, exp, "%d pairs for %d ranges" % (len(ev), len(run.lines)), False)
    diffs = [p["latency_ns"] / 1000.0 - ln["host_ns"] / 1000.0 for p, ln in zip(ev, run.lines)]
    bad = sum(1 for d, ln in zip(diffs, run.lines) if abs(d) > max(10.0, ln["host_ns"] / 1e5))
    TABLE.add(what, exp, "%d outside; diff %+.2f..%+.2f us" % (bad, min(diffs), max(diffs)),
              bad == 0)


def kernel_counts(doc):
    out = {}
    for p in doc["evidence"]:
        n = (p["start"].get("cuda") or {}).get("kernel_name")
        out[n] = out.get(n, 0) + 1
    return out


def check_aggregate(c):
    # the raw exact capture of every kernel of one "mix 10"
    run = Live(c.a, ["--from", "cuda:kernel_start", "--to", "cuda:kernel_end", "--match", "exact"],
               "mix 10", 3000)
    what = "raw exact capture of every kernel (mix 10): per-name counts = fixture's"
    raw = None
    why = run.why()
    if why:
        TABLE.add(what, "fixture's counts", why, False)
    else:
        raw = kernel_counts(run.doc)
        m, us, ue, a = samples(run.doc)
        TABLE.add(what, json.dumps(run.done["kernels"], sort_keys=True),
                  "%s unmatched=%d/%d ambiguous=%d" % (json.dumps(raw, sort_keys=True), us, ue, a),
                  raw == run.done["kernels"] and us == ue == a == 0)

    def agg(frm, to):
        return Live(c.a, ["--from", frm, "--to", to, "--match", "exact", "--aggregate",
                          "--max-groups", 4096], "mix 10", 3000,
                    schema="aggregate-inventory-result")

    def complete(doc):
        col = doc["collection"]
        return col["dropped_activities"] == 0 and col["grouped_activities"] == \
            col["observed_activities"], "observed=%d grouped=%d dropped=%d groups=%d" % (
                col["observed_activities"], col["grouped_activities"],
                col["dropped_activities"], col["groups"])

    run = agg("cuda:kernel_start", "cuda:kernel_end")
    what = "--aggregate kernel groups = raw exact capture's counts"
    why = run.why()
    if why:
        TABLE.add(what, "raw counts", why, False)
    else:
        groups = [g for g in run.doc["inventory"]["groups"] if g["activity"] == "kernel"]
        got = {g["name"]: g["count"] for g in groups}
        names_ok = all(g["name_complete"] is True for g in groups)
        cok, cstr = complete(run.doc)
        means = ",".join("%s:%.1fus" % (g["name"], g["duration_ns"]["mean"] / 1000.0)
                         for g in groups)
        want = raw if raw is not None else run.done["kernels"]
        TABLE.add(what, json.dumps(want, sort_keys=True) + " (fixture: %s)" % json.dumps(
            run.done["kernels"], sort_keys=True),
            "%s; %s; means %s" % (json.dumps(got, sort_keys=True), cstr, means),
            got == want == run.done["kernels"] and names_ok and cok)

    run = agg("cuda:memcpy_start", "cuda:memcpy_end")
    what = "--aggregate memcpy groups = raw exact counts (HtoD, DtoH), bytes = count x 4 MiB"
    raw_m = getattr(c, "raw_memcpy", {})
    want = {"HtoD": raw_m.get("HtoD"), "DtoH": raw_m.get("DtoH")}
    why = run.why()
    if why:
        TABLE.add(what, json.dumps(want, sort_keys=True), why, False)
    else:
        groups = [g for g in run.doc["inventory"]["groups"] if g["activity"] == "memcpy"]
        got = {g["memcpy_kind"]: g["count"] for g in groups}
        bytes_ok_ = all(g["total_bytes"] == g["count"] * MIB4 for g in groups)
        cok, cstr = complete(run.doc)
        TABLE.add(what, json.dumps(want, sort_keys=True) + " (fixture: %s)" % json.dumps(
            run.done["memcpy"], sort_keys=True),
            "%s; bytes %s; %s" % (json.dumps(got, sort_keys=True),
                                  [g["total_bytes"] for g in groups], cstr),
            got == want == run.done["memcpy"] and bytes_ok_ and cok)

    run = agg("cuda:memset_start", "cuda:memset_end")
    what = "--aggregate memset group = raw exact count, bytes = count x 4 MiB"
    want = getattr(c, "raw_memset", None)
    why = run.why()
    if why:
        TABLE.add(what, "count=%s" % want, why, False)
    else:
        groups = [g for g in run.doc["inventory"]["groups"] if g["activity"] == "memset"]
        cok, cstr = complete(run.doc)
        ok = len(groups) == 1 and groups[0]["count"] == want == run.done["memset"] and \
            groups[0]["total_bytes"] == want * MIB4 and cok
        TABLE.add(what, "count=%s (fixture: %d) bytes=%s" % (
            want, run.done["memset"], None if want is None else want * MIB4),
            "%s; %s" % ([(g["count"], g["total_bytes"]) for g in groups], cstr), ok)


PACED = "paced 2000 3 5"


def paced_str(p):
    return "%.1f/s p50 %.1f us p99 %.1f us cpu %.3f s" % (
        p["achieved_per_s"], p["lat_p50_us"], p["lat_p99_us"], p["cpu_s"])


def nearest_rank(values, permille):
    v = sorted(values)
    k = max(1, -(-len(v) * permille // 1000))
    return v[k - 1]


def hist_vs(what, run, truth_ns, tol_abs_ns=10000, tol_rel=0.01):
    """A row: the in-target histogram of @run against the fixture's own
    times @truth_ns (cudaEvent elapsed times, or CLOCK_MONOTONIC around the
    NVTX calls): the count exactly; min, max and the mean within max(10 us,
    1%); p50 and p99 within that plus the percentile error bound (1/32)."""
    exp = ("count=%d; min/max/mean within max(10 us, 1%%); p50/p99 within that + 3.125%%"
           % len(truth_ns))
    why = run.why()
    if why:
        return TABLE.add(what, exp, why, False)
    h = run.doc["histogram"]
    st = h["stats"]
    if not truth_ns or st["count"] != len(truth_ns):
        return TABLE.add(what, exp, "count=%d for %d timed" % (st["count"], len(truth_ns)),
                         False)

    def near(x, t, extra=0.0):
        return abs(x - t) <= max(tol_abs_ns, (tol_rel + extra) * t)

    pct = {round(p["percentile"] * 10): p["value_ns"] for p in h["percentiles"]}
    mean = st["sum_ns"] / st["count"]
    tmean = sum(truth_ns) / len(truth_ns)
    checks = [("min", st["min_ns"], min(truth_ns), 0.0), ("max", st["max_ns"], max(truth_ns), 0.0),
              ("mean", mean, tmean, 0.0),
              ("p50", pct.get(500, -1), nearest_rank(truth_ns, 500), 1.0 / 32),
              ("p99", pct.get(990, -1), nearest_rank(truth_ns, 990), 1.0 / 32)]
    bad = [n for n, x, t, e in checks if not near(x, t, e)]
    got = "count=%d %s; %s" % (st["count"], " ".join(
        "%s %.1f/%.1f us" % (n, x / 1000.0, t / 1000.0) for n, x, t, _ in checks),
        "outside: " + ",".join(bad) if bad else "all within")
    col = run.doc["collection"]
    return TABLE.add(what, exp, got + "; completeness=%s" % col["completeness"],
                     not bad and col["completeness"] == "complete")


def check_histogram(c):
    """--histogram with cuda: endpoints: the Agent pairs in the target and
    only histograms leave it (issue 20, section 3)."""
    spin = "cuda:kernel_start:" + kernel_sel("xpgpu_spin")
    run = Live(c.a, ["--from", spin, "--to", spin.replace("kernel_start", "kernel_end"),
                     "--match", "exact", "--histogram", "--by", "name"],
               "kernels 20,100,500,2000 10", 2500, schema="latency-histogram-result")
    truth = [int(ln["event_ms"] * 1e6) for ln in run.lines]
    hist_vs("--histogram kernel distribution (40 kernels, 20-2000 us) vs cudaEventElapsedTime",
            run, truth)
    if run.doc:
        names = [g["label"] for g in run.doc["histogram"]["groups"]]
        TABLE.add("--histogram --by name kernel group", "one group xpgpu_spin",
                  ",".join(names), names == ["xpgpu_spin"])
    sel = "name~^xpgpu_step$"
    run = Live(c.a, ["--from", "cuda:nvtx_range_start:" + sel, "--to",
                     "cuda:nvtx_range_end:" + sel, "--match", "exact", "--histogram"],
               "nvtx 30 100", 2000, schema="latency-histogram-result")
    hist_vs("--histogram NVTX range distribution vs the fixture's CLOCK_MONOTONIC", run,
            [ln["host_ns"] for ln in run.lines])


def check_injection_and_overhead(c):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XPROBE_") and k not in ("NVTX_INJECTION64_PATH", "LD_PRELOAD",
                                                        "CUDA_INJECTION64_PATH")}
    b = Fixture(c.fixture, env, "fixture B (plain)")
    c.b = b
    with open("/proc/%d/maps" % b.pid) as f:
        mapped = "libxprobe" in f.read()
    TABLE.add("plain CUDA process: no xprobe environment, no libxprobe mapped",
              "nvtx_injection=null, libxprobe not mapped",
              "nvtx_injection=%s, libxprobe %s" % (b.ready["nvtx_injection"],
                                                   "mapped" if mapped else "not mapped"),
              b.ready["nvtx_injection"] is None and not mapped)
    spin = "cuda:kernel_start:" + kernel_sel("xpgpu_spin")
    validate_rows(c, b, [("kernel", spin, spin.replace("kernel_start", "kernel_end"), "exact")],
                  "injection_required", " [plain process]")

    # untraced: nothing loaded yet
    _, untraced = b.step(PACED, timeout=60)

    run = Live(b, ["--from", spin, "--to", spin.replace("kernel_start", "kernel_end"),
                   "--match", "exact"], "kernels 20,100 10", 3000)
    inj = run.doc is not None and "CUPTI_AGENT_INJECTED" in [w["code"] for w in
                                                              run.doc["warnings"]]
    warned = "activating the CUPTI agent modifies target PID" in run.res.err
    exact_counts("injection into the running process, then kernel exact (20 kernels)", run,
                 20, "exact_cupti_correlation_id", inj and warned,
                 "; CUPTI_AGENT_INJECTED=%s stderr warning=%s" % (inj, warned))
    durations_vs_events("injected: kernel durations vs cudaEventElapsedTime", run, run.lines, 20)

    # traced: API callback + kernel activity armed for the whole paced run
    tick = "cuda:kernel_start:" + kernel_sel("xpgpu_tick")
    run = Live(b, ["--from", "cuda:runtime_api:cudaLaunchKernel:entry", "--to", tick,
                   "--match", "exact", "--max-events", 100000], PACED, 5000, step_timeout=60)
    traced = run.done
    n = traced["launches"] if traced else 6000
    exact_counts("traced paced run: cudaLaunchKernel:entry -> kernel_start exact = launches", run,
                 n, "exact_cupti_correlation_id")

    # idle: the Agent loaded, nothing armed
    _, idle = b.step(PACED, timeout=60)

    what = "overhead: paced 2000 launches/s x 3 s, throughput traced/untraced"
    exp = ">= 0.99 (goal: under 1% loss)"
    what_cpu = "overhead: extra process CPU time while traced, per wall second"
    if not traced:
        TABLE.add(what, exp, "no traced run: " + (run.why() or ""), False)
        return TABLE.add(what_cpu, "< 1% (goal)", "no traced run", False)
    thr = traced["achieved_per_s"] / untraced["achieved_per_s"]
    lat = traced["lat_p50_us"] / untraced["lat_p50_us"]
    TABLE.add(what, exp, "%.4f (traced %s; untraced %s; idle Agent %s); p50 launch->done "
              "ratio %.3f, idle/untraced %.3f" % (
                  thr, paced_str(traced), paced_str(untraced), paced_str(idle), lat,
                  idle["lat_p50_us"] / untraced["lat_p50_us"]), thr >= 0.99)
    extra = (traced["cpu_s"] - untraced["cpu_s"]) / traced["wall_s"]
    TABLE.add(what_cpu, "< 1% (goal)", "%.2f%% (cpu traced %.3f s / untraced %.3f s = x%.3f over %.2f s)" % (
                  100 * extra, traced["cpu_s"], untraced["cpu_s"],
                  traced["cpu_s"] / max(untraced["cpu_s"], 1e-9), traced["wall_s"]),
              extra < 0.01)


# --------------------------------------------------------------------------


def nvidia_uuids():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return [u.strip() for u in p.stdout.splitlines() if u.strip()]
    except (OSError, subprocess.TimeoutExpired):
        return []


def main():
    global LOG, DOCS, XPROBE, SCHEMAS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xprobe", required=True)
    ap.add_argument("--libxprobe", required=True, help="the Agent library (NVTX injection)")
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--root", required=True, help="the repository (schemas/)")
    ap.add_argument("--root-pid", type=int, default=os.getpid(),
                    help="process-tree root for discover (an ancestor of the fixture)")
    ap.add_argument("--rows", help="TSV rows to put first (run.sh's build rows)")
    ap.add_argument("--table", action="append", default=[], help="write the table here too")
    ap.add_argument("--log", help="the detailed log")
    ap.add_argument("--docs", help="every document, JSON lines (evidence cut to 4 pairs)")
    ap.add_argument("--deadline", type=float, default=0,
                    help="time.time() by which the checks must end; later ones are FAILed")
    a = ap.parse_args()

    signal.signal(signal.SIGTERM, on_term)
    LOG = open(a.log, "w") if a.log else None
    DOCS = open(a.docs, "w") if a.docs else None
    XPROBE = a.xprobe
    SCHEMAS = Schemas(a.root)
    TABLE.load_tsv(a.rows)
    c = Ctx()
    c.fixture, c.root_pid, c.a, c.b, c.a_failed = a.fixture, a.root_pid, None, None, None
    c.gpu_uuids = nvidia_uuids()

    # seconds each check needs at most, for the budget
    checks = [
        ("doctor", check_doctor, 30, False),
        ("discover", check_discover, 20, True),
        ("validate", check_validate, 30, True),
        ("kernel exact", check_kernel_exact, 40, True),
        ("runtime API", check_api, 30, True),
        ("<<<>>> runtime API", check_chevron, 40, True),
        ("driver API", check_driver, 50, True),
        ("memcpy/memset", check_copies, 60, True),
        ("stream order", check_stream_order, 30, True),
        ("uprobe first-after", check_uprobe, 40, True),
        ("NVTX", check_nvtx, 30, True),
        ("aggregate", check_aggregate, 70, True),
        ("histogram", check_histogram, 40, True),
        ("injection and overhead", check_injection_and_overhead, 120, False),
    ]
    env_a = dict(os.environ)
    env_a["NVTX_INJECTION64_PATH"] = a.libxprobe
    notes = []
    stopped = None
    try:
        for name, fn, need, needs_a in checks:
            if stopped:
                TABLE.add(name, "run", "not run: " + stopped, False)
                continue
            left = a.deadline - time.time() if a.deadline else 1e9
            if left < need:
                TABLE.add(name, "run", "not run: %.0f s left of the time budget, needs %d" % (
                    left, need), False)
                continue
            try:
                if needs_a and c.a is None:
                    if c.a_failed:
                        raise Failure(c.a_failed)
                    try:
                        c.a = Fixture(a.fixture, env_a, "fixture A (NVTX_INJECTION64_PATH)")
                    except Failure as e:
                        c.a_failed = "fixture A did not start: %s" % e
                        raise Failure(c.a_failed)
                    TABLE.add("fixture A started with NVTX_INJECTION64_PATH=libxprobe.so",
                              "ready on the GPU",
                              "pid %d on %s cc %s, CUDA runtime %d driver %d, %.0f cycles/us" % (
                                  c.a.pid, c.a.ready["device"], c.a.ready["cc"],
                                  c.a.ready["cuda_runtime"], c.a.ready["cuda_driver"],
                                  c.a.ready["cycles_per_us"]), True)
                fn(c)
            except Stopped as e:
                TABLE.add(name, "runs", str(e), False)
                stopped = str(e)
            except Failure as e:
                TABLE.add(name, "runs", "could not run: %s" % e, False)
                if needs_a and c.a is not None and not c.a.alive():
                    c.a_failed = "fixture A exited earlier (rc=%s)" % c.a.p.poll()
                    c.a = None
            except Exception as e:  # a bug here must still leave a table
                import traceback
                log(traceback.format_exc())
                TABLE.add(name, "runs", "check raised %s: %s" % (type(e).__name__, e), False)
    finally:
        for fx in (c.a, c.b):
            if fx is not None:
                fx.close()
    if SCHEMAS.js is None:
        notes.append("JSON documents were not schema-validated here (python3 has no jsonschema).")
    else:
        TABLE.add("every JSON document valid against schemas/", "no schema error",
                  "%d documents, %d errors%s" % (SCHEMAS.checked, len(SCHEMAS.errors),
                                                 ("; " + SCHEMAS.errors[0]) if SCHEMAS.errors
                                                 else ""), not SCHEMAS.errors)
    notes.append("checks took %.0f s" % (time.monotonic() - T0))
    text = TABLE.render(notes)
    sys.stdout.write("\n" + text)
    for path in a.table:
        with open(path, "w") as f:
            f.write(text)
    return 1 if TABLE.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
