# SPDX-License-Identifier: Apache-2.0
"""`xprobe measure --cpu-sample` on live fixtures (root; no skips).

Expected figures come from the fixtures: inv_cpu_hot spends 80% of its CPU
in inv_hot_spin and 20% in inv_warm_spin; inv_jit 75%/25% in two functions
it wrote at run time and named only in its own /tmp/perf-<pid>.map;
inv_threads has a known number of threads, some of which exit and some of
which start during the window; /usr/bin/python3.11 writes no perf map.
Every document is validated against cpu-sample-inventory-result.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

import xprobe_test
from inv_helpers import (PY311, Background, InvProc, fixture_path, validate_selectors,
                         warning_codes)
from proc_helpers import copy_for_other_users, other_user_dir

SCHEMA = "cpu-sample-inventory-result"


def cpu_ticks(pid):
    """utime + stime of a process, in clock ticks (/proc/<pid>/stat 14, 15)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def assert_samples_match_cpu_time(doc, ticks, hz):
    """cpu-clock samples follow the CPU time the target actually got (the
    machine may be shared: a descheduled target is rightly not sampled)."""
    expected = ticks / os.sysconf("SC_CLK_TCK") * hz
    observed = doc["collection"]["observed_samples"]
    assert abs(observed - expected) <= 0.15 * expected + 4, (observed, expected)


def cpu_sample(xprobe, pid, *args, timeout=120):
    res = xprobe.run("measure", "--pid", pid, "--cpu-sample", *args, schema_name=SCHEMA,
                     timeout=timeout)
    assert res.rc == 0, res
    assert res.stderr == "", res
    return res.doc


def check_accounting(doc):
    """Invariants every cpu-sample document holds."""
    inv, col = doc["inventory"], doc["collection"]
    stacks = inv["stacks"]
    assert sum(s["count"] for s in stacks) == col["grouped_samples"]
    assert col["observed_samples"] == (col["grouped_samples"] + col["ungrouped_samples"]
                                       + col["samples_without_user_stack"])
    assert col["groups"] == len(stacks) <= col["group_capacity"]
    # deterministic order: count desc, then frame addresses
    keys = [(-s["count"], [inv["frames"][i]["address"] for i in s["frames"]], s["truncated"])
            for s in stacks]
    assert keys == sorted(keys)
    sym = inv["symbolization"]
    assert sym["distinct_frames"] == len(inv["frames"]) == (
        sym["native_frames"] + sym["jit_frames"] + sym["python_frames"] + sym["unresolved_frames"])
    addrs = [f["address"] for f in inv["frames"]]
    assert addrs == sorted(set(addrs)), "one frame per distinct address"
    for i, h in enumerate(inv["hotspots"]):
        assert h["rank"] == i + 1
        assert h["exclusive_count"] <= h["inclusive_count"] <= col["observed_samples"]
        if h["kind"] == "native":
            assert h["binary"] and h["symbol"] and h["function"] == h["symbol"]
            assert h["selector_hint_status"] in ("validated", "rejected")
            if h["selector_hint_status"] == "validated":
                assert h["selector_hint"] == "uprobe:%s:%s:entry" % (h["binary"], h["symbol"])
            else:
                assert h["selector_hint"] is None and h["selector_hint_error"]
        else:
            assert h["selector_hint"] is None and h["selector_hint_status"] == "none"
    ex = [(-h["exclusive_count"], -h["inclusive_count"]) for h in inv["hotspots"]]
    assert ex == sorted(ex)
    assert sum(h["exclusive_count"] for h in inv["hotspots"]) == col["grouped_samples"]
    for f in inv["frames"]:
        assert inv["hotspots"][f["hotspot"]]["kind"] == f["kind"]
    complete = not (col["lost_samples"] or col["samples_beyond_limit"] or col["ungrouped_samples"]
                    or col["threads_over_bound"] or col["threads_open_failed"]
                    or col["threads_started"] or col["malformed_records"]
                    or col["stop_reason"] != "duration")
    assert col["completeness"] == ("complete" if complete else "partial")


def test_hot_function_is_the_top_hotspot_and_its_hint_validates(xprobe):
    exe = os.path.realpath(fixture_path("inv_cpu_hot"))
    with InvProc([exe]) as fx:
        t0 = cpu_ticks(fx.pid)
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 2500, "--frequency-hz", 199,
                         "--name", "hot-inventory")
        t1 = cpu_ticks(fx.pid)
        inv, col = doc["inventory"], doc["collection"]
        check_accounting(doc)
        assert doc["status"] == "completed"
        assert col["stop_reason"] == "duration" and col["completeness"] == "complete"
        assert col["window_ns"] >= 2500 * 1000000
        assert inv["target"]["pid"] == fx.pid
        assert inv["name"] == "hot-inventory"
        assert inv["frequency_hz"] == 199 and inv["stack_depth"] == 64
        assert inv["event"] == "cpu-clock"
        # ~497 samples of a single CPU-bound thread on an idle machine
        assert_samples_match_cpu_time(doc, t1 - t0, 199)
        assert col["observed_samples"] <= 520, col
        top, second = inv["hotspots"][0], inv["hotspots"][1]
        assert top["function"] == "inv_hot_spin" and top["kind"] == "native"
        assert top["binary"] == exe
        assert abs(top["exclusive_proportion"] - 0.80) < 0.08, top
        assert second["function"] == "inv_warm_spin"
        assert abs(second["exclusive_proportion"] - 0.20) < 0.08, second
        assert top["selector_hint_status"] == "validated"
        hint = top["selector_hint"]
        assert hint == "uprobe:%s:inv_hot_spin:entry" % exe
        assert inv["python"]["status"] == "not_python"
        assert inv["python"]["hint"] is None
        assert doc["warnings"] == []
        # the hint is ready for the next step: validate accepts it as written
        v = validate_selectors(xprobe, fx.pid, hint, hint[:-len("entry")] + "return",
                               "stack-nested")
        assert v["valid"] is True, v


def test_same_process_same_grouping_rules_in_human_mode(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 500,
                         json_mode=False)
        assert res.rc == 0, res
        assert res.stdout.startswith("cpu-sample inventory of pid %d:" % fx.pid)
        assert "inv_hot_spin [native]" in res.stdout
        assert "uprobe:" in res.stdout
        assert res.stderr == ""


def test_threads_over_max_threads_exited_and_started_are_counted(xprobe):
    # 1 main + 5 spinning + 2 that exit after "go"; 3 start after "go"
    with InvProc([fixture_path("inv_threads"), 5, 2, 3]) as fx:
        assert fx.ready[2] == "threads=8"
        run = Background(xprobe, "--pid", fx.pid, "--cpu-sample", "--duration-ms", 1500,
                         "--max-threads", 2)
        run.wait_perf(2)
        time.sleep(0.2)
        fx.send("go")
        assert fx.line().startswith("went exited=2 started=3")
        res = run.finish(SCHEMA)
        doc = res.doc
        col = doc["collection"]
        check_accounting(doc)
        assert col["thread_capacity"] == 2
        assert col["threads_seen"] == 8
        assert col["threads_sampled"] == 2
        assert col["threads_over_bound"] == 6
        assert col["threads_exited"] == 2
        assert col["threads_started"] == 3
        assert col["threads_open_failed"] == 0
        assert col["completeness"] == "partial"
        codes = warning_codes(doc)
        assert "THREADS_OVER_BOUND" in codes and "THREADS_NOT_SAMPLED" in codes
        w = doc["warnings"][codes.index("THREADS_OVER_BOUND")]
        assert w["details"] == {"thread_capacity": 2, "threads_seen": 8,
                                "threads_over_bound": 6}
        # the two sampled threads are the lowest TIDs: main (idle) and the
        # first spinner, so every sample is the spinner's
        assert col["threads_with_samples"] == 1
        assert doc["inventory"]["hotspots"][0]["function"] == "inv_thread_spin"


def test_jit_frames_resolve_from_the_perf_map(xprobe):
    with InvProc([fixture_path("inv_jit")]) as fx:
        mp = "/tmp/perf-%d.map" % fx.pid
        assert fx.ready[2] == "map=" + mp and os.path.exists(mp)
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 2000, "--frequency-hz", 199)
        inv = doc["inventory"]
        check_accounting(doc)
        top, second = inv["hotspots"][0], inv["hotspots"][1]
        assert top["kind"] == "jit" and top["function"] == "inv_jit_hot"
        assert top["perf_map_symbol"] == "inv_jit_hot"
        assert top["binary"] is None and top["symbol"] is None
        assert top["mapping"] == "[anon]"
        assert abs(top["exclusive_proportion"] - 0.75) < 0.1, top
        assert second["kind"] == "jit" and second["function"] == "inv_jit_cold"
        assert top["selector_hint"] is None and top["selector_hint_status"] == "none"
        sym = inv["symbolization"]
        assert sym["perf_map_present"] is True
        assert sym["jit_frames"] >= 2 and sym["perf_map_frames"] >= sym["jit_frames"]
        assert sym["python_frames"] == 0
        # resolved independently: the native caller (main) is still native
        assert any(h["kind"] == "native" and h["function"] == "main" for h in inv["hotspots"])
        assert inv["python"]["status"] == "not_python"
        for f in inv["frames"]:
            if f["kind"] == "jit":
                assert f["perf_map_symbol"] in ("inv_jit_hot", "inv_jit_cold")
                assert f["symbol"] is None
    assert not os.path.exists(mp)


def test_perf_map_of_a_target_in_its_own_pid_namespace(xprobe):
    # inside its namespace the fixture is pid 1 and writes /tmp/perf-1.map:
    # the map is named by the PID the target sees itself as
    with InvProc(["unshare", "--pid", "--fork", "--kill-child=SIGTERM",
                  fixture_path("inv_jit")]) as fx:
        assert fx.ready[1] == "1" and fx.ready[2] == "map=/tmp/perf-1.map"
        kids = open("/proc/%d/task/%d/children" % (fx.pid, fx.pid)).read().split()
        assert len(kids) == 1
        doc = cpu_sample(xprobe, int(kids[0]), "--duration-ms", 1000, "--frequency-hz", 199)
        check_accounting(doc)
        top = doc["inventory"]["hotspots"][0]
        assert top["kind"] == "jit" and top["function"] == "inv_jit_hot"
        assert doc["inventory"]["python"]["status"] == "not_python"
        assert doc["inventory"]["target"]["pid"] == int(kids[0])
    deadline = time.monotonic() + 5
    while os.path.exists("/tmp/perf-1.map") and time.monotonic() < deadline:
        time.sleep(0.05)  # the fixture removes its map on SIGTERM
    assert not os.path.exists("/tmp/perf-1.map")


BUSY_PY = """
import sys
def busy_inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def busy_outer():
    while True:
        busy_inner(100000)
print("ready", flush=True)
busy_outer()
"""


def test_python311_status_is_truthful(xprobe):
    with InvProc([PY311, "-c", BUSY_PY]) as fx:
        assert not os.path.exists("/tmp/perf-%d.map" % fx.pid)
        t0 = cpu_ticks(fx.pid)
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 1500, "--frequency-hz", 199)
        t1 = cpu_ticks(fx.pid)
        inv = doc["inventory"]
        check_accounting(doc)
        assert_samples_match_cpu_time(doc, t1 - t0, 199)
        py = inv["python"]
        assert py["status"] == "no_perf_map"
        assert py["version"] == "3.11"
        assert py["perf_map_path"] is None and py["perf_map_entries"] is None
        assert py["python_frames"] == 0 and py["python_samples"] == 0
        observed = doc["collection"]["observed_samples"]
        assert observed > 50
        # the interpreter was busy: its native frames are present, and said
        # to be interpreter samples, not Python coverage
        assert py["interpreter_samples"] >= observed * 0.9
        assert "3.12" in py["hint"] and "not Python coverage" in py["hint"]
        assert inv["symbolization"]["python_frames"] == 0
        assert all(h["kind"] != "python" for h in inv["hotspots"])
        codes = warning_codes(doc)
        assert "PYTHON_FRAMES_UNRESOLVED" in codes
        w = doc["warnings"][codes.index("PYTHON_FRAMES_UNRESOLVED")]
        assert w["details"]["python_frames"] == 0
        assert w["details"]["interpreter_samples"] == py["interpreter_samples"]
        # native CPython hotspots carry hints that validate accepts
        native = [h for h in inv["hotspots"] if h["selector_hint_status"] == "validated"]
        assert native, inv["hotspots"][:5]
        assert any(h["binary"] == PY311 for h in native)
        hint = native[0]["selector_hint"]
        v = validate_selectors(xprobe, fx.pid, hint, hint[:-len("entry")] + "return",
                               "stack-nested")
        assert v["valid"] is True, v


def test_max_samples_ends_the_window(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        t0 = time.monotonic()
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 20000, "--max-samples", 20,
                         "--frequency-hz", 199)
        assert time.monotonic() - t0 < 10
        col = doc["collection"]
        check_accounting(doc)
        assert col["stop_reason"] == "max_samples"
        assert col["observed_samples"] == 20 == col["sample_capacity"]
        assert col["completeness"] == "partial"
        assert "SAMPLE_LIMIT_REACHED" in warning_codes(doc)
        assert doc["status"] == "completed"


def test_group_capacity_pressure_is_visible(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 1500, "--frequency-hz", 199,
                         "--max-groups", 1)
        col = doc["collection"]
        check_accounting(doc)
        assert col["groups"] == 1 and col["group_capacity"] == 1
        assert col["table_utilization"] == 1.0
        assert col["ungrouped_samples"] > 0
        assert col["completeness"] == "partial"
        codes = warning_codes(doc)
        assert "STACK_GROUPS_FULL" in codes
        assert doc["warnings"][codes.index("STACK_GROUPS_FULL")]["details"] == {
            "group_capacity": 1, "ungrouped_samples": col["ungrouped_samples"]}


def test_truncated_stacks_are_counted(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 800, "--stack-depth", 1)
        col = doc["collection"]
        check_accounting(doc)
        # every stack is leaf + at least the libc start frame: all truncated
        assert col["truncated_stacks"] == col["observed_samples"] > 0
        assert all(s["truncated"] and len(s["frames"]) == 1 for s in doc["inventory"]["stacks"])
        assert "STACKS_TRUNCATED" in warning_codes(doc)
        # truncation is visible, not a loss: the samples are all grouped
        assert col["completeness"] == "complete"


def test_sigint_cancels_with_a_result(xprobe):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        run = Background(xprobe, "--pid", fx.pid, "--cpu-sample", "--duration-ms", 20000)
        run.wait_perf(1)
        time.sleep(0.5)
        t0 = time.monotonic()
        run.p.send_signal(signal.SIGINT)
        res = run.finish(SCHEMA)
        assert time.monotonic() - t0 < 5
        doc = res.doc
        assert doc["status"] == "cancelled"
        assert doc["collection"]["stop_reason"] == "cancelled"
        assert doc["collection"]["completeness"] == "partial"
        assert "SAMPLING_CANCELLED" in warning_codes(doc)
        assert doc["collection"]["window_ns"] < 5 * 10**9
        check_accounting(doc)


def test_target_exiting_in_the_window_is_an_error(xprobe):
    # ~200 ms of work, then the fixture exits inside a 3 s window
    with InvProc([fixture_path("inv_cpu_hot"), 40]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 3000,
                         schema_name=SCHEMA)
        assert res.rc == 3, res
        assert res.code == "TARGET_EXITED"


@pytest.mark.parametrize("args,code,fragment", [
    (["--frequency-hz", 0], "SESSION_LIMIT_EXCEEDED", "--frequency-hz 0"),
    (["--frequency-hz", 100000000], "SESSION_LIMIT_EXCEEDED", "--frequency-hz"),
    (["--stack-depth", 0], "SESSION_LIMIT_EXCEEDED", "--stack-depth"),
    (["--stack-depth", 100000], "SESSION_LIMIT_EXCEEDED", "--stack-depth"),
    (["--max-threads", 0], "SESSION_LIMIT_EXCEEDED", "--max-threads"),
    (["--max-groups", 0], "SESSION_LIMIT_EXCEEDED", "--max-groups"),
    (["--max-groups", 10**9], "SESSION_LIMIT_EXCEEDED", "--max-groups"),
    (["--max-samples", 0], "SESSION_LIMIT_EXCEEDED", "--max-samples"),
    (["--timeout-ms", 500], "SESSION_LIMIT_EXCEEDED", "must not exceed timeout"),
])
def test_bad_bounds_are_clear_errors(xprobe, args, code, fragment):
    with InvProc([fixture_path("inv_cpu_hot")]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 1000,
                         *args)
        assert res.rc == 1, res
        assert res.code == code
        assert fragment in res.error["message"]
        assert res.error["hints"]


@pytest.mark.parametrize("args,code,fragment", [
    # --cpu-sample reads a live process: with --input a usage error (exit 2)
    (["--pid", 1, "--input", "/tmp/x.jsonl"], None, None),
    (["--input", "/tmp/x.jsonl", "--duration-ms", 100], None, None),
    (["--pid", 1, "--duration-ms", 100, "--events-out", "/tmp/x.jsonl"],
     "INVALID_EVENT_SELECTOR", "--events-out"),
    (["--pid", 1, "--duration-ms", 100, "--from", "syscall:read:entry",
      "--to", "syscall:read:exit", "--match", "exact"],
     "INVALID_EVENT_SELECTOR", "event-pair selectors"),
    (["--pid", 1, "--duration-ms", 100, "--samples", 3], "INVALID_EVENT_SELECTOR", "--samples"),
    (["--duration-ms", 100], "INVALID_EVENT_SELECTOR", "requires --pid"),
    (["--pid", 1], "SESSION_LIMIT_EXCEEDED", "--duration-ms"),
    (["--pid", 1, "--duration-ms", 0], "SESSION_LIMIT_EXCEEDED", "--duration-ms"),
    (["--pid", 4194303, "--duration-ms", 100], "TARGET_NOT_FOUND", None),
])
def test_refused_modes_and_targets(xprobe, args, code, fragment):
    res = xprobe.run("measure", "--cpu-sample", *args)
    if code is None:
        assert res.rc == 2, res
        return
    assert res.code == code, res
    assert res.rc == (3 if code == "TARGET_NOT_FOUND" else 1)
    if fragment:
        assert fragment in res.error["message"]


@pytest.mark.parametrize("flag", [["--max-inflight", 4], ["--syscall-aggregate"],
                                  ["--aggregate"]])
def test_flags_of_other_modes_are_usage_errors(xprobe, flag):
    res = xprobe.run("measure", "--pid", 1, "--cpu-sample", "--duration-ms", 100, *flag)
    assert res.rc == 2, res


def _objects(node, path=""):
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield path, node
        for k, v in node.items():
            yield from _objects(v, path + "." + k if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _objects(v, "%s[%d]" % (path, i))


@pytest.mark.parametrize("name", ["cpu-sample-inventory-result", "syscall-aggregate-result"])
def test_inventory_schemas_are_closed_complete_and_share_definitions(name):
    """The rules tests/cli/test_schemas.py applies to the other documents:
    closed objects, every written field required, nullable types [T, null],
    and the shared definitions equal to measurement-result's."""
    s = xprobe_test.schema(name)
    for path, obj in _objects(s):
        if path.endswith("Warning.properties.details"):
            continue
        assert obj.get("additionalProperties") is False, path
        assert sorted(obj["required"]) == sorted(obj["properties"]), path
        for prop, sub in obj["properties"].items():
            t = sub.get("type")
            if isinstance(t, list):
                assert t[-1] == "null" and len(t) == 2, (path, prop)
    res = xprobe_test.schema("measurement-result")["$defs"]
    for d in ("Warning", "SessionStatus", "SchemaVersion"):
        assert s["$defs"][d] == res[d], d
    assert s["$defs"]["TargetIdentity"] == \
        xprobe_test.schema("measurement-spec")["$defs"]["TargetIdentity"]


# --- the perf map is untrusted input (issue 9 section 2) ---------------------
# /tmp is world-writable and xprobe runs as root: whatever sits at
# /tmp/perf-<pid>.map is read only if it is a regular file, not a symlink,
# owned by root or the target's uid, and within the size bound; otherwise
# the document says so (PERF_MAP_REFUSED) and the frames stay unresolved.

def _perf_map_refused(doc):
    ws = [w for w in doc["warnings"] if w["code"] == "PERF_MAP_REFUSED"]
    assert len(ws) == 1, doc["warnings"]
    return ws[0]


def _no_map_names(doc):
    inv = doc["inventory"]
    assert inv["symbolization"]["perf_map_present"] is False
    assert inv["symbolization"]["jit_frames"] == 0
    assert inv["python"]["perf_map_path"] is None
    for f in inv["frames"]:
        assert f["perf_map_symbol"] is None, f
    assert not any(h["function"] in ("inv_jit_hot", "inv_jit_cold") for h in inv["hotspots"])


def test_perf_map_fifo_does_not_hang(xprobe):
    # before: open() of a FIFO without a writer blocked xprobe forever
    with InvProc([fixture_path("inv_jit")]) as fx:
        mp = "/tmp/perf-%d.map" % fx.pid
        os.unlink(mp)
        os.mkfifo(mp, 0o644)
        try:
            t0 = time.monotonic()
            doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 500, "--frequency-hz", 199,
                             timeout=60)
            assert time.monotonic() - t0 < 30
        finally:
            if os.path.lexists(mp):
                os.unlink(mp)
        check_accounting(doc)
        _no_map_names(doc)
        w = _perf_map_refused(doc)
        assert w["details"]["reason"] == "not_regular_file"
        assert w["details"]["file_type"] == "fifo"
        assert w["details"]["path"] == mp
        assert mp in w["message"] and "fifo" in w["message"]


def test_perf_map_symlink_is_not_followed(xprobe):
    # before: the symlink was followed and its target's names were reported
    with InvProc([fixture_path("inv_jit")]) as fx:
        mp = "/tmp/perf-%d.map" % fx.pid
        elsewhere = tempfile.mkdtemp(prefix="xp-perfmap-")
        real = os.path.join(elsewhere, "names.map")
        shutil.copyfile(mp, real)  # root-owned, the right names: only the link is wrong
        os.unlink(mp)
        os.symlink(real, mp)
        try:
            doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 1000, "--frequency-hz", 199)
        finally:
            if os.path.lexists(mp):
                os.unlink(mp)
            shutil.rmtree(elsewhere)
        check_accounting(doc)
        _no_map_names(doc)
        w = _perf_map_refused(doc)
        assert w["details"]["reason"] == "symlink"
        assert w["details"]["file_type"] == "symlink" and w["details"]["file_uid"] is None


def test_perf_map_of_another_user_is_not_used(xprobe):
    # The target runs as nobody (65534) and writes its own map: used.  The
    # same map owned by a third uid is refused: before, its names went into
    # the report of a process that did not write them.
    # nobody runs a copy: the build tree may be where nobody cannot enter
    mp = None
    with other_user_dir() as tmp:
        exe = copy_for_other_users(tmp, fixture_path("inv_jit"))
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe]
        try:
            with InvProc(argv) as fx:
                mp = "/tmp/perf-%d.map" % fx.pid
                assert os.stat(mp).st_uid == 65534
                doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 1000, "--frequency-hz", 199)
                check_accounting(doc)
                assert doc["inventory"]["hotspots"][0]["function"] == "inv_jit_hot"
                assert "PERF_MAP_REFUSED" not in warning_codes(doc)

                os.chown(mp, 54321, 54321)
                doc = cpu_sample(xprobe, fx.pid, "--duration-ms", 1000, "--frequency-hz", 199)
                check_accounting(doc)
                _no_map_names(doc)
                w = _perf_map_refused(doc)
                assert w["details"]["reason"] == "foreign_owner"
                assert w["details"]["file_uid"] == 54321
                assert w["details"]["allowed_owner_uids"] == [0, 65534]
                assert w["details"]["file_type"] == "regular file"
                assert "uid 54321" in w["message"] and "65534" in w["message"]
        finally:
            if mp and os.path.lexists(mp):
                os.unlink(mp)  # nobody cannot remove a map it no longer owns


# ---- stripped objects and their separate debug files ------------------------------


def stripped_copy(d):
    """inv_cpu_hot stripped of its .symtab (only .dynsym left, which names
    none of its functions) and its debug file (objcopy --only-keep-debug,
    as Debian's -dbgsym packages are made).  Returns (exe, debug, build id)."""
    src = os.path.realpath(fixture_path("inv_cpu_hot"))
    exe, dbg = os.path.join(d, "inv_cpu_hot"), os.path.join(d, "inv_cpu_hot.debug")
    subprocess.run(["objcopy", "--only-keep-debug", src, dbg], check=True)
    subprocess.run(["strip", "--strip-all", "-o", exe, src], check=True)
    out = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True,
                         check=True).stdout
    build_id = out.split("Build ID:")[1].split()[0]
    syms = subprocess.run(["readelf", "-Ws", exe], capture_output=True, text=True).stdout
    assert "inv_hot_spin" not in syms, "the copy still names inv_hot_spin"
    return exe, dbg, build_id


def hot_run(xprobe, exe, env=None):
    with InvProc([exe]) as fx:
        res = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 1500,
                         schema_name=SCHEMA, env=env)
        assert res.rc == 0, res
        check_accounting(res.doc)
        v = xprobe.run("validate", "--pid", fx.pid, "--from",
                       "uprobe:%s:inv_hot_spin:entry" % exe, "--to",
                       "uprobe:%s:inv_hot_spin:return" % exe, "--match", "stack-nested",
                       env=env)
        human = xprobe.run("measure", "--pid", fx.pid, "--cpu-sample", "--duration-ms", 300,
                           env=env, json_mode=False)
    return res.doc, v, human


def test_stripped_binary_named_from_its_debug_file_by_build_id(xprobe, tmp_path):
    """perf names a stripped function from /usr/lib/debug/.build-id; so do
    the symbolizer and validate (one rule, src/resolve/debug_file.h): the
    hot function is native, its hint validated.  The debug root is the
    test build's XPROBE_TEST_DEBUG_ROOT."""
    exe, dbg, bid = stripped_copy(str(tmp_path))
    root = tmp_path / "debug"
    (root / ".build-id" / bid[:2]).mkdir(parents=True)
    shutil.copy(dbg, root / ".build-id" / bid[:2] / (bid[2:] + ".debug"))
    os.unlink(dbg)
    env = dict(os.environ, XPROBE_TEST_DEBUG_ROOT=str(root))
    doc, v, human = hot_run(xprobe, exe, env)
    top = doc["inventory"]["hotspots"][0]
    assert top["function"] == "inv_hot_spin" and top["kind"] == "native", top
    assert top["binary"] == exe and top["selector_hint_status"] == "validated"
    assert abs(top["exclusive_proportion"] - 0.80) < 0.1, top
    assert v.rc == 0 and v.doc["valid"] is True, v
    assert "inv_hot_spin [native]" in human.stdout


def test_stripped_binary_named_from_its_debuglink(xprobe, tmp_path):
    """The .gnu_debuglink name in the object's .debug/ directory: the right
    file names the function; another program's debug file under that name
    (another build id) is not taken for it."""
    exe, dbg, _ = stripped_copy(str(tmp_path))
    subprocess.run(["objcopy", "--add-gnu-debuglink=inv_cpu_hot.debug", exe],
                   cwd=str(tmp_path), check=True)
    (tmp_path / ".debug").mkdir()
    shutil.move(dbg, tmp_path / ".debug" / "inv_cpu_hot.debug")
    # the build-id path is empty: only the debuglink can find it
    env = dict(os.environ, XPROBE_TEST_DEBUG_ROOT=str(tmp_path / "nowhere"))
    doc, v, _ = hot_run(xprobe, exe, env)
    assert doc["inventory"]["hotspots"][0]["function"] == "inv_hot_spin"
    assert v.rc == 0 and v.doc["valid"] is True, v
    subprocess.run(["objcopy", "--only-keep-debug", os.path.realpath(fixture_path("inv_threads")),
                    str(tmp_path / ".debug" / "inv_cpu_hot.debug")], check=True)
    doc, v, _ = hot_run(xprobe, exe, env)
    assert doc["inventory"]["hotspots"][0]["kind"] == "unresolved"
    assert v.rc == 1 and v.code == "SYMBOL_NOT_FOUND", v


def test_unresolved_frames_are_one_row_per_mapping(xprobe, tmp_path):
    """Without its debug file the stripped binary's two functions are
    unresolved: one hotspot for the mapping (perf's "[unknown]" of a DSO),
    not one per address, holding nearly every sample."""
    exe, dbg, _ = stripped_copy(str(tmp_path))
    env = dict(os.environ, XPROBE_TEST_DEBUG_ROOT=str(tmp_path / "nowhere"))
    doc, v, human = hot_run(xprobe, exe, env)
    inv = doc["inventory"]
    rows = [h for h in inv["hotspots"] if h["kind"] == "unresolved" and h["mapping"] == exe]
    assert len(rows) == 1, rows
    (row,) = rows
    frames = [f for f in inv["frames"] if f["mapping"] == exe]
    assert len(frames) > 1 and all(inv["hotspots"][f["hotspot"]] is row or
                                   inv["hotspots"][f["hotspot"]] == row for f in frames)
    assert row["address"] == min(f["address"] for f in frames)
    assert row["exclusive_proportion"] > 0.9, row
    assert v.rc == 1 and v.code == "SYMBOL_NOT_FOUND", v
    assert "[unresolved in %s: " % exe in human.stdout, human.stdout
