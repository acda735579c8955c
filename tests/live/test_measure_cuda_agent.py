# SPDX-License-Identifier: Apache-2.0
"""CUDA API / activity endpoints of a live measurement, and the online
injection of the Agent that needs (src/agent/agent_inject.h).

Never modify a process for a measurement that cannot run: before any
injection measure refuses, the target untouched (no Agent mapped, no
"activating the CUPTI agent" on stderr, details.target_modified false), when
  - the machine has no NVIDIA kernel driver (/proc/driver/nvidia) and the
    target maps no CUDA driver library (libcuda.so.1): CUPTI_NOT_AVAILABLE,
    reason no_nvidia_driver;
  - the target maps no CUDA at all (the Agent's ARM would refuse it):
    CUDA_CONTEXT_NOT_FOUND, reason no_cuda_mapped;
  - the Agent would find no supported CUPTI in the target: CUPTI_NOT_AVAILABLE,
    reason no_cupti, naming what was searched.
validate says NO_CUDA_MAPPED of a process that has not loaded CUDA yet.
The CUPTI test double's program (cuda_helpers.CuptiFixture) maps the
double's libcuda.so.1 and libcudart, with its libcupti beside them, so it
is injected into.  --agent and XPROBE_CUPTI_AGENT_PATH choose the library
measure injects; neither is ever ignored.
"""
import os
import shutil
import subprocess

from agent_helpers import libxprobe
from cuda_helpers import CuptiFixture, double_dir, measure_cuda
from measure_live_helpers import Fixture, fixture_path
from proc_helpers import other_user_dir

CUDA = ["--from", "cuda:runtime_api:cudaLaunchKernel:entry",
        "--to", "cuda:kernel_start:name~flash.*", "--match", "exact", "--samples", 1]
WARNING = "xprobe: warning: activating the CUPTI agent modifies target PID %d"
DRIVER = os.path.exists("/proc/driver/nvidia")


def sleeper():
    return Fixture([fixture_path("live_sleeper"), "--calls", "3", "--sleep-ms", "1"])


def agent_mappings(pid):
    with open("/proc/%d/maps" % pid) as f:
        return sorted({line.split()[-1] for line in f if "libxprobe" in line})


def works(fx):
    fx.go()
    assert fx.done()["done"] is True


def untouched(r, pid, code, reason):
    assert r.code == code and r.rc == 1, r
    d = r.error["details"]
    assert d["reason"] == reason and d["target_modified"] is False, r.error
    assert "agent_injected" not in d
    assert "activating the CUPTI agent" not in r.stderr, r.stderr
    assert "the target was not modified" in r.error["message"]
    assert agent_mappings(pid) == []


def test_no_cuda_in_target_is_refused_before_injection(xprobe):
    with sleeper() as fx:
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6])
        assert v.rc == 0 and v.doc["valid"] is True, v
        assert v.doc["requirements"]["agent_activation"] == "injection_required"
        (w,) = [w for w in v.doc["warnings"] if w["code"] == "NO_CUDA_MAPPED"]
        assert w["details"] == {"pid": fx.pid}
        assert "maps no CUDA runtime" in w["message"] and "yet" in w["message"]
        t = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6], json_mode=False)
        assert "maps no CUDA runtime" in t.stdout + t.stderr, t

        r = xprobe.run("measure", "--pid", fx.pid, *CUDA)
        if DRIVER:
            untouched(r, fx.pid, "CUDA_CONTEXT_NOT_FOUND", "no_cuda_mapped")
        else:
            untouched(r, fx.pid, "CUPTI_NOT_AVAILABLE", "no_nvidia_driver")
            assert "/proc/driver/nvidia" in r.error["message"]
            assert "nvidia_driver" in " ".join(r.error["hints"]) and "doctor" in " ".join(r.error["hints"])
        works(fx)
        fx.quit()


def test_cuda_program_before_it_loads_cuda(xprobe):
    """The double's program before its init: no CUDA mapped yet; after it,
    the same measurement injects."""
    with CuptiFixture("inject", init=False) as fx:
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6])
        assert "NO_CUDA_MAPPED" in [w["code"] for w in v.doc["warnings"]], v
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA)
        untouched(r, fx.pid, "CUDA_CONTEXT_NOT_FOUND" if DRIVER else "CUPTI_NOT_AVAILABLE",
                  "no_cuda_mapped" if DRIVER else "no_nvidia_driver")
        fx.init()
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6])
        assert "NO_CUDA_MAPPED" not in [w["code"] for w in v.doc["warnings"]], v
        res, done = measure_cuda(xprobe, fx, CUDA, ["launch 1 flash 100"])
        assert res.rc == 0, res.stdout + res.stderr
        assert agent_mappings(fx.pid) == [os.path.realpath(libxprobe())]


def test_no_cupti_for_the_targets_cuda(xprobe, tmp_path):
    """A CUDA 12 program whose CUPTI is nowhere its Agent would look
    (beside its libcudart, ../extras/CUPTI/lib64, its LD_LIBRARY_PATH, its
    ld.so.cache, the default directories)."""
    lib = tmp_path / "cuda12" / "lib"
    lib.mkdir(parents=True)
    for f in ("libcuda.so.1", "libcudart.so.12"):
        shutil.copy2(os.path.join(double_dir(12), f), lib / f)
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    assert "libcupti.so.12 " not in cache, "this test needs a machine without CUPTI 12"
    with CuptiFixture("inject", major=12, env={"LD_LIBRARY_PATH": str(lib)}) as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA)
        untouched(r, fx.pid, "CUPTI_NOT_AVAILABLE", "no_cupti")
        assert "no libcupti.so.12 for the target's CUDA 12" in r.error["message"], r.error
        assert str(lib / "libcudart.so.12") in r.error["message"]
        assert "cupti" in " ".join(r.error["hints"]) and "doctor" in " ".join(r.error["hints"])
        # its CUPTI in ../extras/CUPTI/lib64, as a toolkit lays it out: found
        extras = tmp_path / "cuda12" / "extras" / "CUPTI" / "lib64"
        extras.mkdir(parents=True)
        shutil.copy2(os.path.join(double_dir(12), "libcupti.so.12"), extras / "libcupti.so.12")
        res, done = measure_cuda(xprobe, fx, CUDA, ["launch 1 flash 100"])
        assert res.rc == 0, res.stdout + res.stderr
        assert res.doc["measurement"]["samples"]["matched"] == 1, res.doc
        assert [m for m in agent_mappings(fx.pid)] == [os.path.realpath(libxprobe())]


def test_agent_flag_and_environment_choose_the_library(xprobe):
    """--agent first, then XPROBE_CUPTI_AGENT_PATH: a missing file is named
    in the error and nothing is loaded; a copy of the Agent given by
    either is the file the target maps."""
    with CuptiFixture("inject") as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA, "--agent", "/nonexistent/agent.so")
        assert r.rc == 1 and r.code == "CUPTI_AGENT_NOT_LOADED", r
        assert r.error["details"]["agent_path"] == "/nonexistent/agent.so"
        env = dict(os.environ, XPROBE_CUPTI_AGENT_PATH="/nonexistent/env.so")
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA, env=env)
        assert r.rc == 1 and r.error["details"]["agent_path"] == "/nonexistent/env.so", r
        # --agent wins over the environment
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA, "--agent", "/nonexistent/flag.so",
                       env=env)
        assert r.error["details"]["agent_path"] == "/nonexistent/flag.so", r
        assert agent_mappings(fx.pid) == []
        with other_user_dir() as d:
            copy = os.path.join(d, "libxprobe-copy.so")
            shutil.copy2(libxprobe(), copy)
            os.chmod(copy, 0o755)
            res, done = measure_cuda(xprobe, fx, CUDA + ["--agent", copy],
                                     ["launch 1 flash 100"])
            assert res.rc == 0, res.stdout + res.stderr
            assert (WARNING % fx.pid) in res.stderr, res.stderr
            (w,) = [w for w in res.doc["warnings"] if w["code"] == "CUPTI_AGENT_INJECTED"]
            assert w["details"]["agent_path"] == copy
            assert agent_mappings(fx.pid) == [copy]


def test_nvtx_after_an_online_injection(xprobe):
    """The Agent injected by a CUDA measurement cannot receive NVTX calls
    (NVTX's dispatch was fixed at the program's first NVTX call, or stays
    unrouted): NVTX endpoints then answer CUPTI_NOT_AVAILABLE, as the
    contract says, with the restart in the hint."""
    with CuptiFixture("inject") as fx:
        res, done = measure_cuda(xprobe, fx, CUDA, ["launch 1 flash 100"])
        assert res.rc == 0, res.stdout + res.stderr
        v = xprobe.run("validate", "--pid", fx.pid, "--from", "cuda:nvtx_range_start:name~^a$",
                       "--to", "cuda:nvtx_range_end:name~^a$", "--match", "exact")
        assert v.doc["requirements"]["agent_activation"] == "already_loaded", v
        r = xprobe.run("measure", "--pid", fx.pid, "--from", "cuda:nvtx_range_start:name~^a$",
                       "--to", "cuda:nvtx_range_end:name~^a$", "--match", "exact",
                       "--samples", 1)
        assert r.rc == 1 and r.code == "CUPTI_NOT_AVAILABLE", r
        assert any("NVTX_INJECTION64_PATH" in h for h in r.error["hints"]), r.error
        assert "activating the CUPTI agent" not in r.stderr


def test_validate_names_the_agent_from_the_environment(xprobe):
    with sleeper() as fx:
        env = dict(os.environ, XPROBE_CUPTI_AGENT_PATH="/opt/xp/libxprobe.so")
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6], env=env)
        (w,) = [w for w in v.doc["warnings"] if w["code"] == "TARGET_PROCESS_WILL_BE_MODIFIED"]
        assert w["details"]["agent_path"] == "/opt/xp/libxprobe.so"
        v = xprobe.run("validate", "--pid", fx.pid, "--from", "cuda:nvtx_range_start:name~^a$",
                       "--to", "cuda:nvtx_range_end:name~^a$", "--match", "exact", env=env)
        assert v.doc["valid"] is False
        assert "NVTX_INJECTION64_PATH=/opt/xp/libxprobe.so " in v.doc["issues"][0]["message"]
        fx.quit()


def test_refused_injection_does_not_say_the_target_is_modified(xprobe, tmp_path):
    """The stderr warning comes once inject's checks have passed: an Agent
    file others may write is refused (PERMISSION_DENIED) before any thread
    stops, and nothing says the target is being modified."""
    lib = tmp_path / "libxprobe.so"
    shutil.copyfile(libxprobe(), lib)
    os.chmod(lib, 0o775)
    with CuptiFixture("inject") as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA, "--agent", lib)
        assert r.rc == 4 and r.code == "PERMISSION_DENIED", r
        assert r.error["details"]["reason"] == "agent_untrusted"
        assert "activating the CUPTI agent" not in r.stderr, r.stderr
        assert agent_mappings(fx.pid) == []
        assert fx.do("launch 2 k 10") == 2
