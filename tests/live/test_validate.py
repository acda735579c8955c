# SPDX-License-Identifier: Apache-2.0
"""validate against live fixtures (issue #3): every selector family,
every resolution error code, CUDA requirements from mapped libraries,
policies, warnings, the inventory checks, identity errors and permission
errors.  Runtime addresses are compared with what each fixture printed
about itself; every JSON document is schema-validated by the helper."""
import json
import os
import subprocess
import time

import pytest

import xprobe_test
from proc_helpers import other_user_xprobe
from target_helpers import (NOBODY, PY311, Target, canonical, cuda_named_libs, fx,
                            private_tracefs, python_target, run_as, start_time)


def validate(xprobe, pid, start, end, match, **kw):
    return xprobe.run("validate", "--pid", pid, "--from", start, "--to", end, "--match", match,
                      **kw)


def up(binary, sym, end=False):
    return "uprobe:%s:%s:%s" % (binary, sym, "return" if end else "entry")


@pytest.fixture
def funcs():
    with Target([fx("target_funcs")]) as t:
        yield t


# ---- uprobes ------------------------------------------------------------------


@pytest.mark.parametrize("name,kind", [("target_funcs", "position_independent_executable"),
                                       ("target_funcs_nopie", "executable")])
def test_uprobe_entry_return_addresses(xprobe, name, kind):
    exe = canonical(fx(name))
    with Target([exe]) as t:
        r = validate(xprobe, t.pid, up(exe, "fx_add"), up(exe, "fx_add", True), "stack-nested")
        assert r.rc == 0, r
        d = r.doc
        assert d["valid"] is True and d["issues"] == []
        # fx_add starts with a rip-relative mov, which the kernel single-steps
        # out of line (tests/live/test_probe_cost.py checks the warning)
        assert [w["code"] for w in d["warnings"]] == ["UPROBE_SINGLE_STEP"]
        assert d["target"] == {"pid": t.pid, "process_start_time": start_time(t.pid)}
        for key, probe_kind in (("start", "uprobe"), ("end", "uretprobe")):
            ep = d[key]
            assert ep["source"] == "host" and ep["collectable"] is True
            assert ep["linux"] is None and ep["cuda"] is None
            # the contract's ValidatedEndpoint, nothing added
            assert set(ep) == {"selector", "source", "event_type", "collectable", "host",
                               "linux", "cuda"}
            h = ep["host"]
            xprobe_test.validate(h, "resolve")  # the embedded ResolvedProbe record
            assert h["probe_kind"] == probe_kind
            assert h["object_kind"] == kind
            assert h["binary_path"] == exe
            assert h["symbol"] == "fx_add" and h["symbol_demangled"] is None
            assert h["runtime_address"] == t.addrs["fx_add"]
            m = h["mapping"]
            assert m["start_address"] <= h["runtime_address"] < m["end_address"]
            assert h["file_offset"] == h["runtime_address"] - m["start_address"] + m["file_offset"]
            assert len(h["build_id"]) == 40
            if kind == "executable":
                assert h["runtime_address"] == h["symbol_virtual_address"]
        assert d["start"]["event_type"] == "host_function_entry"
        assert d["end"]["event_type"] == "host_function_exit"
        assert d["policy_recommendation"] == {
            "policy": "stack_nested", "reason": "host_call_frame",
            "compatible_policies": ["stack_nested", "first_after", "nearest"]}
        req = d["requirements"]
        assert req["needs_ebpf"] is True and req["needs_cupti"] is False
        assert req["agent_activation"] == "not_required" and req["target_mutation"] is False


def test_local_symbol_and_offset_form(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    r = validate(xprobe, funcs.pid, up(exe, "fx_local_helper"), up(exe, "fx_work"), "first-after")
    assert r.rc == 0 and r.doc["valid"], r
    h = r.doc["start"]["host"]
    assert h["runtime_address"] == funcs.addrs["fx_local_helper"]
    off = h["file_offset"]
    r = validate(xprobe, funcs.pid, "uprobe:%s:+0x%x:entry" % (exe, off),
                 "uprobe:%s:+0x%x:return" % (exe, off), "stack-nested")
    assert r.rc == 0 and r.doc["valid"], r
    h = r.doc["start"]["host"]
    assert h["runtime_address"] == funcs.addrs["fx_local_helper"]
    assert h["symbol"] is None and h["symbol_virtual_address"] is None and h["symbol_size"] is None
    assert r.doc["policy_recommendation"]["policy"] == "stack_nested"


def test_shared_library_symbols(xprobe):
    lib = canonical(fx("libtarget_shlib.so"))
    with Target([fx("target_funcs"), "--dlopen", lib]) as t:
        for sym in ("fx_lib_exported", "fx_lib_local", "fx_lib_hidden"):
            r = validate(xprobe, t.pid, up(lib, sym), up(lib, sym, True), "stack-nested")
            assert r.rc == 0 and r.doc["valid"], r
            h = r.doc["start"]["host"]
            assert h["object_kind"] == "shared_library"
            assert h["runtime_address"] == t.addrs[sym], sym


def test_symlink_binary_resolves_to_the_mapped_file(xprobe, tmp_path):
    lib = canonical(fx("libtarget_shlib.so"))
    link = tmp_path / "link.so"
    link.symlink_to(lib)
    with Target([fx("target_funcs"), "--dlopen", lib]) as t:
        r = validate(xprobe, t.pid, up(link, "fx_lib_exported"), up(lib, "fx_lib_exported", True),
                     "first-after")
        assert r.rc == 0, r
        assert r.doc["start"]["host"]["binary_path"] == lib
        assert r.doc["start"]["host"]["runtime_address"] == t.addrs["fx_lib_exported"]


CXX = [
    "xp_fx::over(int)",
    "xp_fx::over(long)",
    "xp_fx::over(double)",
    "xp_fx::over(char const*, unsigned int)",
    "xp_fx::inner::Klass::smethod(int)",
    "int xp_fx::twice<int>(int)",
    "(anonymous namespace)::anon_fn(int)",
]


def test_cxx_symbol_signatures(xprobe):
    exe = canonical(fx("target_cxx"))
    with Target([exe]) as t:
        for sig in CXX:
            sel = "uprobe:%s:symbol=%s:entry" % (exe, sig)
            r = validate(xprobe, t.pid, sel, sel.replace(":entry", ":return"), "stack-nested")
            assert r.rc == 0 and r.doc["valid"], (sig, r)
            h = r.doc["start"]["host"]
            assert h["symbol"].startswith("_Z")
            assert h["symbol_demangled"] == sig
            assert h["runtime_address"] == t.addrs[sig]
            assert r.doc["start"]["selector"] == sel
        # the mangled name by the plain form
        r = validate(xprobe, t.pid, up(exe, "_ZN5xp_fx4overEl"), up(exe, "_ZN5xp_fx4overEl", True),
                     "stack-nested")
        assert r.rc == 0, r
        assert r.doc["start"]["host"]["symbol_demangled"] == "xp_fx::over(long)"


# ---- resolution errors ---------------------------------------------------------


def test_ambiguous_target(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    r = validate(xprobe, funcs.pid, up(exe, "target_dup_helper"), up(exe, "fx_add"), "first-after")
    assert r.rc == 1, r
    e = r.error
    assert e["code"] == "AMBIGUOUS_TARGET"
    assert e["message"].startswith("failed to resolve start selector: ")
    assert e["details"]["candidate_count"] == 2
    addrs = sorted(c["symbol_virtual_address"] for c in e["details"]["candidates"])
    assert len(set(addrs)) == 2
    assert e["details"]["selector"] == up(exe, "target_dup_helper")
    assert any("+0x" in h for h in e["hints"])
    # each candidate's file offset resolves to one of the two printed functions
    wanted = {funcs.addrs["target_dup_helper.a"], funcs.addrs["target_dup_helper.b"]}
    got = set()
    for c in e["details"]["candidates"]:
        sel = "uprobe:%s:+0x%x:entry" % (exe, c["file_offset"])
        rr = validate(xprobe, funcs.pid, sel, sel, "first-after")
        assert rr.rc == 0, rr
        got.add(rr.doc["start"]["host"]["runtime_address"])
    assert got == wanted


def test_symbol_not_found_with_close_matches(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    r = validate(xprobe, funcs.pid, up(exe, "fx_ad"), up(exe, "fx_add"), "first-after")
    assert r.rc == 1, r
    e = r.error
    assert e["code"] == "SYMBOL_NOT_FOUND"
    assert "fx_add" in e["details"]["close_matches"]
    assert any(up(exe, "fx_add") in h for h in e["hints"])
    r = validate(xprobe, funcs.pid, up(exe, "fx_add"), up(exe, "FX_MIXED_CASE", True), "first-after")
    assert r.code == "SYMBOL_NOT_FOUND"
    assert r.error["message"].startswith("failed to resolve end selector: ")
    assert "fx_Mixed_Case" in r.error["details"]["close_matches"]


def test_cxx_wrong_overload_lists_the_real_ones(xprobe):
    exe = canonical(fx("target_cxx"))
    with Target([exe]) as t:
        sel = "uprobe:%s:symbol=xp_fx::over(short):entry" % exe
        r = validate(xprobe, t.pid, sel, sel, "first-after")
        assert r.code == "SYMBOL_NOT_FOUND", r
        cm = r.error["details"]["close_matches"]
        assert "xp_fx::over(int)" in cm and "xp_fx::over(long)" in cm
        assert any("symbol=xp_fx::over(" in h for h in r.error["hints"])


def test_binary_not_mapped(xprobe, funcs):
    r = validate(xprobe, funcs.pid, up(PY311, "main"), "syscall:read:exit", "first-after")
    assert r.rc == 1 and r.code == "BINARY_NOT_MAPPED", r
    d = r.error["details"]
    assert canonical(fx("target_funcs")) in d["mapped_objects"]
    assert d["mapped_objects_total"] >= len(d["mapped_objects"])
    r = validate(xprobe, funcs.pid, up("/nonexistent/target_funcs", "fx_add"), "syscall:read:exit",
                 "first-after")
    assert r.code == "BINARY_NOT_MAPPED"
    assert "does not exist" in r.error["message"]
    assert any(canonical(fx("target_funcs")) in h for h in r.error["hints"])


@pytest.mark.parametrize("sel,needle", [
    ("uprobe:{exe}:+0x0:entry", "executable segment"),
    ("uprobe:{exe}:+0x10000000:entry", "executable segment"),
    ("uprobe:target_funcs:fx_add:entry", "absolute path"),
    ("uprobe:{exe}:fx_add:middle", None),
    ("syscall:frobnicate:entry", None),
    ("syscall:mmap:return", None),
    ("bogus:thing", None),
    ("cuda:kernel_start:name~(", None),
])
def test_invalid_event_selector(xprobe, funcs, sel, needle):
    exe = canonical(fx("target_funcs"))
    r = validate(xprobe, funcs.pid, sel.format(exe=exe), "syscall:read:exit", "first-after")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    if needle:
        assert needle in r.error["message"]


def test_invalid_policy(xprobe, funcs):
    r = validate(xprobe, funcs.pid, "syscall:read:entry", "syscall:read:exit", "closest")
    assert r.rc == 1 and r.code == "INVALID_CORRELATION_POLICY", r
    assert r.error["message"] == 'invalid correlation policy "closest"'


# ---- syscalls, tracepoints, policies ----------------------------------------------


def test_syscall_exact_and_kebab_snake(xprobe, funcs):
    for spelling in ("exact",):
        r = validate(xprobe, funcs.pid, "syscall:mmap:entry", "syscall:mmap:exit", spelling)
        assert r.rc == 0 and r.doc["valid"], r
    d = r.doc
    assert d["start"]["linux"] == {"event_type": "syscall_entry", "probe_kind": "syscall",
                                   "category": "syscalls", "name": "mmap",
                                   "syscall_number": 9}
    assert d["end"]["event_type"] == "syscall_exit"
    assert d["policy_recommendation"] == {"policy": "exact", "reason": "deterministic_correlation_key",
                                          "compatible_policies": ["exact", "first_after", "nearest"]}
    r = validate(xprobe, funcs.pid, "syscall:mmap:entry", "syscall:munmap:exit", "first_after")
    assert r.rc == 0 and r.doc["valid"], r
    assert r.doc["match_policy"] == "first_after"
    assert r.doc["warnings"] == [{"code": "HEURISTIC_CORRELATION", "details": {},
                                  "message": "first-after matching does not prove request-level causality"}]
    r = validate(xprobe, funcs.pid, "syscall:mmap:entry", "syscall:munmap:exit", "nearest")
    assert r.doc["warnings"][0]["message"] == \
        "nearest-event matching does not prove request-level causality"


@pytest.mark.parametrize("policy,text", [
    ("exact", "exact matching requires endpoints that share a deterministic correlation key"),
    ("stack-nested", "stack-nested matching requires entry and return probes for the same host function"),
    ("stream-order", "stream-order matching requires two GPU activity endpoints"),
])
def test_incompatible_policy_is_an_issue(xprobe, funcs, policy, text):
    r = validate(xprobe, funcs.pid, "syscall:mmap:entry", "syscall:munmap:exit", policy)
    assert r.rc == 0, r
    assert r.doc["valid"] is False
    assert r.doc["issues"] == [{"code": "INVALID_CORRELATION_POLICY", "message": text}]
    assert r.doc["policy_recommendation"]["policy"] == "first_after"
    assert r.doc["policy_recommendation"]["reason"] == "temporal_order_only"


def test_named_tracepoints_with_tracefs_mounted(xprobe, funcs):
    with private_tracefs() as root:
        env = dict(os.environ, XPROBE_TRACEFS_ROOT=root)
        r = validate(xprobe, funcs.pid, "tracepoint:sched:sched_process_fork",
                     "tracepoint:sched:sched_process_exec", "first-after", env=env)
        assert r.rc == 0 and r.doc["valid"], r
        lin = r.doc["start"]["linux"]
        assert lin == {"event_type": "tracepoint", "probe_kind": "tracepoint",
                       "category": "sched", "name": "sched_process_fork", "syscall_number": None}
        # the tracefs id is not a field of the contract's ResolvedLinuxSelector:
        # the human view shows it
        h = validate(xprobe, funcs.pid, "tracepoint:sched:sched_process_fork",
                     "tracepoint:sched:sched_process_exec", "first-after", env=env,
                     json_mode=False)
        with open(os.path.join(root, "events/sched/sched_process_fork/id")) as f:
            assert ("tracepoint sched:sched_process_fork (tracefs id %d)" % int(f.read())) \
                in h.stdout, h
        r = validate(xprobe, funcs.pid, "tracepoint:sched:sched_process_forkk",
                     "syscall:read:exit", "first-after", env=env)
        assert r.code == "INVALID_EVENT_SELECTOR", r
        assert "does not exist" in r.error["message"]
        assert any("tracepoint:sched:sched_process_fork" in h for h in r.error["hints"])


def test_named_tracepoints_without_tracefs(xprobe, funcs, tmp_path):
    env = dict(os.environ, XPROBE_TRACEFS_ROOT=str(tmp_path))
    r = validate(xprobe, funcs.pid, "tracepoint:sched:sched_switch", "syscall:read:exit",
                 "first-after", env=env)
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    assert "tracefs is not mounted" in r.error["message"]
    assert "mount -t tracefs none /sys/kernel/tracing" in " ".join(r.error["hints"])
    # syscalls need no tracefs
    r = validate(xprobe, funcs.pid, "syscall:read:entry", "syscall:read:exit", "exact", env=env)
    assert r.rc == 0 and r.doc["valid"], r


# ---- CPython GC ------------------------------------------------------------------------


def test_python_gc_on_debian_cpython(xprobe):
    with python_target() as t:
        r = validate(xprobe, t.pid, "python:gc_start", "python:gc_end", "exact")
        assert r.rc == 0 and r.doc["valid"], r
        d = r.doc
        assert d["policy_recommendation"]["policy"] == "exact"
        assert d["policy_recommendation"]["reason"] == "deterministic_correlation_key"
        s, e = d["start"], d["end"]
        # the contract has no usdt event type: a USDT hit is a marker, and
        # the endpoint's marker is its host ResolvedProbe (probe_kind usdt)
        assert s["event_type"] == e["event_type"] == "marker"
        assert s["source"] == "host" and s["collectable"]
        assert s["linux"] is None and s["cuda"] is None and "usdt" not in s
        us, ue = s["host"], e["host"]
        for h, sel in ((us, "python:gc_start"), (ue, "python:gc_end")):
            xprobe_test.validate(h, "resolve")
            assert h["selector"] == sel and h["probe_kind"] == "usdt"
            assert h["symbol_demangled"] is None and h["symbol_size"] is None
        assert (us["symbol"], ue["symbol"]) == ("gc__start", "gc__done")
        assert us["binary_path"] == PY311 and us["object_kind"] == "executable"
        # ET_EXEC: the runtime address is the link-time address; check both
        # against readelf's view of the note
        notes = subprocess.run(["readelf", "-n", PY311], capture_output=True, text=True).stdout
        block = notes.split("Name: gc__start", 1)[1].split("\n", 2)[1]
        loc = int(block.split("Location:")[1].split(",")[0], 16)
        sem = int(block.split("Semaphore:")[1].split()[0], 16)
        assert us["symbol_virtual_address"] == loc == us["runtime_address"]
        assert d["requirements"]["needs_ebpf"] is True
        # the provider and the semaphore are in the human view
        h = validate(xprobe, t.pid, "python:gc_start", "python:gc_end", "exact",
                     json_mode=False)
        assert ("usdt python:gc__start in %s (executable): address 0x%x" % (PY311, loc)) \
            in h.stdout, h
        assert ("semaphore at 0x%x (file offset 0x" % sem) in h.stdout
        assert ("runtime address 0x%x): the kernel counts it up while attached" % sem) \
            in h.stdout


def test_python_gc_by_capability_not_name(xprobe):
    lib = canonical(fx("libtarget_pygc.so"))
    with Target([fx("target_funcs"), "--dlopen", lib]) as t:
        r = validate(xprobe, t.pid, "python:gc_start", "python:gc_end", "exact")
        assert r.rc == 0 and r.doc["valid"], r
        us = r.doc["start"]["host"]
        assert us["probe_kind"] == "usdt" and us["symbol"] == "gc__start"
        assert us["binary_path"] == lib and us["object_kind"] == "shared_library"
        assert t.addrs["fx_fake_gc"] < us["runtime_address"] < t.addrs["fx_fake_gc"] + 64
        h = validate(xprobe, t.pid, "python:gc_start", "python:gc_end", "exact",
                     json_mode=False)
        for marker in ("start", "done"):
            assert ("runtime address 0x%x): the kernel counts it up"
                    % t.addrs["python_gc__%s_semaphore" % marker]) in h.stdout, h


def test_python_gc_refused_without_markers(xprobe, funcs):
    r = validate(xprobe, funcs.pid, "python:gc_start", "python:gc_end", "exact")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    assert canonical(fx("target_funcs")) in r.error["details"]["searched_objects"]
    with Target([fx("target_pygc_half")]) as t:
        r = validate(xprobe, t.pid, "python:gc_start", "python:gc_end", "exact")
        assert r.code == "INVALID_EVENT_SELECTOR", r
        assert r.error["details"]["partial_markers"] == [
            {"binary_path": canonical(fx("target_pygc_half")), "missing": "gc__done"}]


def test_python_gc_policies(xprobe):
    with python_target() as t:
        r = validate(xprobe, t.pid, "python:gc_end", "python:gc_start", "exact")
        assert r.rc == 0 and r.doc["valid"] is False
        assert r.doc["issues"][0]["code"] == "INVALID_CORRELATION_POLICY"


# ---- CUDA ------------------------------------------------------------------------------

# The Agent library validate names (src/checks/agent_path.h): the build's,
# next to its bin/xprobe.
AGENT_LIB = os.path.realpath(os.path.join(xprobe_test.build_dir(), "lib", "libxprobe.so"))


def test_cuda_injection_required(xprobe, funcs):
    r = validate(xprobe, funcs.pid, "cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start",
                 "exact")
    assert r.rc == 0, r
    d = r.doc
    # the contract's answer: valid, the Agent to be injected by measure
    assert d["valid"] is True
    assert d["start"]["source"] == "cuda" and d["start"]["collectable"] is True
    assert d["start"]["cuda"] == {"event_type": "cuda_api_exit", "api_domain": "runtime_api",
                                  "api_name": "cudaLaunchKernel", "kernel_name_regex": None,
                                  "nvtx_name_regex": None, "memcpy_kind": None}
    assert d["end"]["cuda"]["event_type"] == "gpu_kernel_start"
    req = d["requirements"]
    assert req["needs_cupti"] and req["needs_cupti_callback"] and req["needs_cupti_activity"]
    assert req["needs_clock_alignment"] is True
    assert req["agent_activation"] == "injection_required" and req["target_mutation"] is True
    assert d["issues"] == []
    codes = [w["code"] for w in d["warnings"]]
    # ours: the fixture has not loaded CUDA, so measure would refuse for now
    assert codes == ["TARGET_PROCESS_WILL_BE_MODIFIED", "NO_CUDA_MAPPED", "BROAD_EVENT_SELECTOR"]
    assert d["warnings"][0]["message"] == \
        "measure must inject the xprobe CUPTI agent into the target process"
    # the Agent library and the CUDA majors travel here (the contract's
    # requirements are closed)
    assert d["warnings"][0]["details"] == {"agent_path": AGENT_LIB, "cuda_major": None,
                                           "mapped_cuda_majors": []}
    assert d["warnings"][2]["message"] == "end selector matches every CUDA kernel activity"
    assert d["policy_recommendation"]["policy"] == "exact"


def test_cuda_nvtx_startup_required(xprobe, funcs):
    r = validate(xprobe, funcs.pid, "cuda:nvtx_range_start:name~^step$",
                 "cuda:nvtx_range_end:name~^step$", "exact")
    assert r.rc == 0 and r.doc["valid"] is False, r
    req = r.doc["requirements"]
    assert req["agent_activation"] == "startup_required" and req["needs_nvtx"] is True
    assert req["target_mutation"] is False
    issues = [i for i in r.doc["issues"] if i["code"] == "CUPTI_AGENT_NOT_LOADED"]
    assert issues and ("NVTX_INJECTION64_PATH=%s " % AGENT_LIB) in issues[0]["message"]
    assert r.doc["start"]["cuda"]["nvtx_name_regex"] == "^step$"


def test_cuda_agent_already_loaded(xprobe):
    with cuda_named_libs("libxprobe.so.0", "libcudart.so.12") as (agent, cudart):
        with Target([fx("target_funcs"), "--dlopen", agent, "--dlopen", cudart]) as t:
            r = validate(xprobe, t.pid, "cuda:memcpy_start:kind=HtoD", "cuda:kernel_end:name~flash",
                         "stream-order")
            assert r.rc == 0, r
            req = r.doc["requirements"]
            assert req["agent_activation"] == "already_loaded"
            assert req["target_mutation"] is False
            # the Agent's path and the majors: human view (requirements is closed)
            assert set(req) == {"needs_ebpf", "needs_cupti", "needs_cupti_callback",
                                "needs_cupti_activity", "needs_nvtx", "needs_clock_alignment",
                                "agent_activation", "target_mutation"}
            h = validate(xprobe, t.pid, "cuda:memcpy_start:kind=HtoD",
                         "cuda:kernel_end:name~flash", "stream-order", json_mode=False)
            assert ("CUDA: mapped majors [12], major 12, Agent mapped: %s\n" % agent) \
                in h.stdout, h
            assert r.doc["start"]["cuda"]["memcpy_kind"] == "HtoD"
            assert r.doc["end"]["cuda"]["kernel_name_regex"] == "flash"
            assert r.doc["policy_recommendation"]["compatible_policies"] == \
                ["stream_order", "first_after", "nearest"]
            assert "TARGET_PROCESS_WILL_BE_MODIFIED" not in [w["code"] for w in r.doc["warnings"]]


@pytest.mark.parametrize("libs,message", [
    (("libcudart.so.12", "libcupti.so.13"), "target maps conflicting CUDA/CUPTI majors [12, 13]"),
    (("libcudart.so.11.8",), "CUDA/CUPTI major 11 is unsupported; expected 12 or 13"),
])
def test_unsupported_cuda_version(xprobe, libs, message):
    with cuda_named_libs(*libs) as paths:
        argv = [fx("target_funcs")]
        for p in paths:
            argv += ["--dlopen", p]
        with Target(argv) as t:
            r = validate(xprobe, t.pid, "cuda:kernel_start", "cuda:kernel_end", "exact")
            assert r.rc == 0 and r.doc["valid"] is False, r
            issues = [i for i in r.doc["issues"] if i["code"] == "UNSUPPORTED_CUDA_VERSION"]
            assert issues == [{"code": "UNSUPPORTED_CUDA_VERSION", "message": message}]
            (w,) = [w for w in r.doc["warnings"]
                    if w["code"] == "TARGET_PROCESS_WILL_BE_MODIFIED"]
            majors = sorted(int(n.split(".so.")[1].split(".")[0]) for n in libs)
            assert w["details"] == {"agent_path": AGENT_LIB, "cuda_major": None,
                                    "mapped_cuda_majors": majors}
            assert len(r.doc["warnings"]) == 3  # injection + two broad kernels


def test_host_to_gpu_pair_needs_clock_alignment(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    r = validate(xprobe, funcs.pid, up(exe, "fx_add"), "cuda:kernel_start:name~^gemm", "first-after")
    assert r.rc == 0, r
    req = r.doc["requirements"]
    assert req["needs_ebpf"] and req["needs_cupti_activity"] and req["needs_clock_alignment"]
    assert r.doc["issues"] == [] and r.doc["valid"] is True


# ---- identity and permissions ---------------------------------------------------------


def test_target_not_found_and_zombie(xprobe):
    p = subprocess.Popen(["true"])
    p.wait()
    r = validate(xprobe, p.pid, "syscall:read:entry", "syscall:read:exit", "exact")
    assert r.rc == 3 and r.code == "TARGET_NOT_FOUND", r
    z = subprocess.Popen(["sh", "-c", "exit 0"])
    try:
        deadline = time.monotonic() + 10  # by time: a loaded machine is slow to exit
        while True:
            with open("/proc/%d/stat" % z.pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            assert time.monotonic() < deadline, "sh never became a zombie"
            time.sleep(0.005)
        r = validate(xprobe, z.pid, "syscall:read:entry", "syscall:read:exit", "exact")
        assert r.rc == 3 and r.code == "TARGET_NOT_FOUND", r
        assert r.error["details"]["state"] == "zombie"
    finally:
        z.wait()


def test_pid_reuse_through_spec_for_a_reused_pid(xprobe, tmp_path):
    """Real PID reuse: a recorded identity, the process gone, a new one
    given the same PID through ns_last_pid; measure --spec must refuse."""
    from target_helpers import spawn_at_pid

    old = subprocess.Popen(["sleep", "60"])
    pid, st = old.pid, start_time(old.pid)
    old.kill()
    old.wait()
    # start times are clock ticks (10 ms): a PID reused within the same
    # tick is indistinguishable by design (docs/selectors-live.md)
    time.sleep(0.05)
    new = spawn_at_pid(pid, ["sleep", "60"])
    assert new is not None, "could not get PID %d back" % pid
    try:
        spec = {"schema_version": "2.0", "name": "reuse",
                "target": {"pid": pid, "process_start_time": st},
                "start_selector": "syscall:read:entry", "end_selector": "syscall:read:exit",
                "match_policy": "exact", "samples": 1, "duration_ms": None, "timeout_ms": 1000,
                "max_events": 10}
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        r = xprobe.run("measure", "--spec", path)
        assert r.rc == 3 and r.code == "TARGET_REUSED", r
        assert start_time(pid) != st
    finally:
        new.kill()
        new.wait()


# Unprivileged runs use copies of the binary and fixtures in a world-readable
# temporary directory (proc_helpers.other_user_xprobe): the build tree may
# sit where nobody cannot enter (a checkout under root's 0700 home).


def test_permission_denied_reading_another_users_process(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    with other_user_xprobe(xprobe) as (xp, _):
        r = run_as(xp, NOBODY, "validate", "--pid", funcs.pid, "--from", up(exe, "fx_add"),
                   "--to", up(exe, "fx_add", True), "--match", "stack-nested")
    assert r.rc == 4 and r.code == "PERMISSION_DENIED", r
    assert r.error["hints"]
    # reading the target's /proc entries, not reaching xprobe's own files
    assert "/proc/%d" % funcs.pid in r.error["message"], r


def test_unprivileged_validate_reports_missing_ebpf(xprobe):
    with other_user_xprobe(xprobe, fx("target_funcs")) as (xp, (exe,)), \
            Target([exe], user=NOBODY) as t:
        r = run_as(xp, NOBODY, "validate", "--pid", t.pid, "--from", up(exe, "fx_add"),
                   "--to", up(exe, "fx_add", True), "--match", "stack-nested")
        assert r.rc == 0, r
        assert r.doc["valid"] is False
        assert r.doc["start"]["host"]["runtime_address"] == t.addrs["fx_add"]
        assert r.doc["issues"][0]["code"] == "PERMISSION_DENIED"
        assert r.doc["issues"][0]["message"].startswith("required eBPF probe capability is unavailable")


# ---- inventories -----------------------------------------------------------------------


def test_cpu_sample_check(xprobe, funcs):
    r = xprobe.run("validate", "--pid", funcs.pid, "--cpu-sample")
    assert r.rc == 0, r
    d = r.doc
    assert d["mode"] == "cpu_sample" and d["valid"] is True
    inv = d["inventory"]
    assert inv["threads"] == 1
    assert inv["perf_event"]["status"] == "available"
    assert inv["perf_event"]["tested_tid"] == funcs.pid
    assert inv["python"]["status"] == "not_python"
    assert inv["python"]["perf_map_path"] == "/tmp/perf-%d.map" % funcs.pid
    assert d["requirements"] == {"needs_ebpf": False, "needs_perf_events": True,
                                 "target_mutation": False}


def test_cpu_sample_python_status(xprobe):
    with python_target(extra=", threading; threading.Thread(target=sys.stdin.read, daemon=True).start()") as t:
        r = xprobe.run("validate", "--pid", t.pid, "--cpu-sample")
        assert r.rc == 0, r
        inv = r.doc["inventory"]
        assert inv["threads"] == 2
        py = inv["python"]
        assert py["status"] == "native_only" and py["binary_path"] == PY311
        assert py["version"] == "3.11"
        assert py["perf_map_present"] is False
        assert r.doc["warnings"][0]["code"] == "PYTHON_FRAMES_NATIVE_ONLY"
        # a perf map written for the process (as perf-aware runtimes do)
        path = "/tmp/perf-%d.map" % t.pid
        with open(path, "w") as f:
            f.write("7f0000001000 40 py::main:/x.py\n")
        try:
            r = xprobe.run("validate", "--pid", t.pid, "--cpu-sample")
            py = r.doc["inventory"]["python"]
            assert py["status"] == "perf_map_present"
            assert py["perf_map_size"] == os.path.getsize(path)
        finally:
            os.unlink(path)


@pytest.mark.parametrize("kind", ["fifo", "symlink", "foreign_owner"])
def test_cpu_sample_perf_map_measure_would_refuse_is_not_present(xprobe, tmp_path, kind):
    """validate --cpu-sample says present only of a map measure would read
    (process/perf_map_file.h: before, a plain stat() called a map owned by
    another user present): a refused one is absent, with measure's
    PERF_MAP_REFUSED warning and its details."""
    with python_target() as t:
        path = "/tmp/perf-%d.map" % t.pid
        if kind == "fifo":
            os.mkfifo(path, 0o644)
        elif kind == "symlink":
            real = tmp_path / "names.map"
            real.write_text("7f0000001000 40 py::main:/x.py\n")
            os.symlink(real, path)
        else:
            with open(path, "w") as f:
                f.write("7f0000001000 40 py::main:/x.py\n")
            os.chown(path, 54321, 54321)
        try:
            r = xprobe.run("validate", "--pid", t.pid, "--cpu-sample")
        finally:
            os.unlink(path)
        assert r.rc == 0, r
        py = r.doc["inventory"]["python"]
        assert py["perf_map_present"] is False and py["status"] == "native_only", py
        w = [w for w in r.doc["warnings"] if w["code"] == "PERF_MAP_REFUSED"]
        assert len(w) == 1, r.doc["warnings"]
        d = w[0]["details"]
        assert d["reason"] == {"fifo": "not_regular_file", "symlink": "symlink",
                               "foreign_owner": "foreign_owner"}[kind]
        assert d["path"] == path and d["allowed_owner_uids"] == [0]
        assert w[0]["message"].startswith("the target's perf map %s was not read: " % path)
        assert w[0]["message"].endswith("measure --cpu-sample would not read it either: "
                                        "JIT and Python frames would be unresolved")
        if kind == "foreign_owner":
            assert d["file_uid"] == 54321 and "uid 54321" in w[0]["message"]


def test_cpu_sample_unprivileged_own_process(xprobe):
    with other_user_xprobe(xprobe, fx("target_funcs")) as (xp, (exe,)), \
            Target([exe], user=NOBODY) as t:
        r = run_as(xp, NOBODY, "validate", "--pid", t.pid, "--cpu-sample")
        assert r.rc == 0, r
        # user-space callchains of one's own process need no privilege
        assert r.doc["inventory"]["perf_event"]["status"] == "available"


def test_syscall_aggregate_check(xprobe, funcs):
    r = xprobe.run("validate", "--pid", funcs.pid, "--syscall-aggregate")
    assert r.rc == 0, r
    d = r.doc
    assert d["mode"] == "syscall_aggregate" and d["valid"] is True
    bpf = d["inventory"]["bpf"]
    assert all(bpf[k]["status"] == "available" for k in bpf), bpf
    # the real aggregate object, not only the generic probe, was loaded
    assert "loaded the syscall aggregate object" in bpf["aggregate_object_load"]["detail"]
    assert d["inventory"]["namespace"]["same_pid_namespace"] is True
    assert d["inventory"]["namespace"]["namespace_pid"] == funcs.pid
    assert d["inventory"]["syscall_names"] > 300


def test_syscall_aggregate_unprivileged(xprobe):
    with other_user_xprobe(xprobe, fx("target_funcs")) as (xp, (exe,)), \
            Target([exe], user=NOBODY) as t:
        r = run_as(xp, NOBODY, "validate", "--pid", t.pid, "--syscall-aggregate")
        assert r.rc == 0, r
        assert r.doc["valid"] is False
        assert r.doc["inventory"]["bpf"]["map_create"]["status"] == "restricted"
        assert r.doc["inventory"]["bpf"]["raw_tracepoint_attach"]["status"] == "unknown"
        load = r.doc["inventory"]["bpf"]["aggregate_object_load"]
        assert load["status"] == "restricted"
        # the errno's text (GNU strerror_r once left this buffer unwritten)
        assert load["detail"].startswith(
            "loading the syscall aggregate object failed: Operation not permitted"), load
        assert {i["code"] for i in r.doc["issues"]} == {"PERMISSION_DENIED"}


@pytest.mark.parametrize("mode", ["--cpu-sample", "--syscall-aggregate"])
def test_inventory_takes_no_pair(xprobe, funcs, mode):
    r = xprobe.run("validate", "--pid", funcs.pid, mode, "--from", "syscall:read:entry")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    assert "takes no event-pair selectors" in r.error["message"]


# ---- human mode -------------------------------------------------------------------------


def test_human_summary(xprobe, funcs):
    exe = canonical(fx("target_funcs"))
    r = xprobe.run("validate", "--pid", funcs.pid, "--from", up(exe, "fx_add"), "--to",
                   up(exe, "fx_add", True), "--match", "stack-nested", json_mode=False)
    assert r.rc == 0 and r.stderr == ""
    assert r.stdout.startswith("valid: pid %d" % funcs.pid)
    assert "runtime address 0x%x" % funcs.addrs["fx_add"] in r.stdout
    r = xprobe.run("validate", "--pid", funcs.pid, "--from", up(exe, "nope"), "--to",
                   up(exe, "fx_add", True), "--match", "stack-nested", json_mode=False)
    assert r.rc == 1 and r.stdout == ""
    assert r.stderr.startswith("SYMBOL_NOT_FOUND: failed to resolve start selector: ")
    assert "\nhint: " in r.stderr
    r = xprobe.run("validate", "--pid", funcs.pid, "--cpu-sample", json_mode=False)
    assert r.rc == 0 and "perf events: opened" in r.stdout
    r = xprobe.run("validate", "--pid", funcs.pid, "--syscall-aggregate", json_mode=False)
    assert r.rc == 0 and "raw tracepoint" in r.stdout


def test_json_stderr_is_empty(xprobe, funcs):
    r = validate(xprobe, funcs.pid, "syscall:read:entry", "syscall:read:exit", "exact")
    assert r.rc == 0 and r.stderr == ""


# ---- other namespaces -------------------------------------------------------------------


def test_target_in_another_mount_namespace(xprobe, tmp_path):
    """The binary exists only inside the target's mount namespace (a
    private tmpfs): resolution goes through /proc/<pid>/root and reports
    the target-side path."""
    d = tmp_path / "nsdir"
    d.mkdir()
    script = "mount -t tmpfs none %s && cp %s %s/ && exec %s/target_funcs" % (
        d, fx("target_funcs"), d, d)
    with Target(["unshare", "--mount", "--propagation", "private", "sh", "-c", script]) as t:
        exe = str(d / "target_funcs")
        assert not os.path.exists(exe)  # not visible from here
        r = validate(xprobe, t.pid, up(exe, "fx_add"), up(exe, "fx_add", True), "stack-nested")
        assert r.rc == 0 and r.doc["valid"], r
        h = r.doc["start"]["host"]
        assert h["binary_path"] == exe
        assert h["runtime_address"] == t.addrs["fx_add"]
        assert h["object_kind"] == "position_independent_executable"


def test_target_in_another_pid_namespace(xprobe):
    script = "exec %s" % fx("target_funcs")
    with Target(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c",
                 script]) as t:
        # the fixture printed its own (namespace) pid; find its host pid
        inner = int([l.split()[1] for l in t.lines if l.startswith("pid ")][0])
        with open("/proc/%d/task/%d/children" % (t.pid, t.pid)) as f:
            host_pid = int(f.read().split()[0])
        assert inner == 1
        exe = canonical(fx("target_funcs"))
        r = validate(xprobe, host_pid, up(exe, "fx_add"), "syscall:read:exit", "first-after")
        assert r.rc == 0 and r.doc["valid"], r
        assert r.doc["target"]["pid"] == host_pid
        assert r.doc["start"]["host"]["runtime_address"] == t.addrs["fx_add"]
        r = xprobe.run("validate", "--pid", host_pid, "--cpu-sample")
        assert r.doc["inventory"]["python"]["perf_map_path"] == "/tmp/perf-1.map"
        r = xprobe.run("validate", "--pid", host_pid, "--syscall-aggregate")
        ns = r.doc["inventory"]["namespace"]
        assert ns["same_pid_namespace"] is False and ns["namespace_pid"] == 1


def test_real_cuda13_libraries_give_the_major(xprobe):
    """The installed CUDA 13 runtime and CUPTI (they load without a GPU);
    on a machine without the toolkit (nothing in `make test` needs one),
    the CUPTI test double's libraries of the same names."""
    import glob
    libs = []
    double = os.path.join(xprobe_test.build_dir(), "tests", "cupti_double", "13")
    for name in ("libcupti.so.13", "libcudart.so.13"):
        found = sorted(glob.glob("/usr/local/cuda*/lib*/%s" % name) +
                       glob.glob("/usr/local/cuda*/extras/CUPTI/lib64/%s" % name) +
                       glob.glob("/usr/local/cuda*/targets/x86_64-linux/lib/%s" % name)) or \
            [os.path.join(double, name)]
        assert os.path.exists(found[0]), "%s: build target cupti_double" % found[0]
        libs += ["--dlopen", found[0]]
    with Target([fx("target_funcs")] + libs) as t:
        r = validate(xprobe, t.pid, "cuda:kernel_start:name~gemm", "cuda:kernel_end:name~gemm",
                     "exact")
        assert r.rc == 0, r
        req = r.doc["requirements"]
        assert req["agent_activation"] == "injection_required"
        (w,) = [w for w in r.doc["warnings"] if w["code"] == "TARGET_PROCESS_WILL_BE_MODIFIED"]
        assert w["details"] == {"agent_path": AGENT_LIB, "cuda_major": 13,
                                "mapped_cuda_majors": [13]}
        assert "UNSUPPORTED_CUDA_VERSION" not in [i["code"] for i in r.doc["issues"]]
        assert "BROAD_EVENT_SELECTOR" not in [w["code"] for w in r.doc["warnings"]]
