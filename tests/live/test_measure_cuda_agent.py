# SPDX-License-Identifier: Apache-2.0
"""CUDA API / activity endpoints of a live measurement on a target that
maps no CUDA (live_sleeper): validate says injection_required (valid,
target_mutation, TARGET_PROCESS_WILL_BE_MODIFIED with the Agent library);
measure loads the Agent into the running target by online injection
(src/collect/agent_inject.h: stderr warning, details.agent_injected on the run
that injected, not on later ones), then the Agent's CUPTI backend finds
no CUDA runtime or driver to observe and refuses the ARM:
CUDA_CONTEXT_NOT_FOUND (tests/live/test_measure_cuda.py measures a CUDA
program).  The target is
left working, with one Agent mapping and no socket (CLOSE of an injected
Agent removes it).  --agent and XPROBE_CUPTI_AGENT_PATH choose the library
measure injects; neither is ever ignored.
"""
import os
import shutil

from agent_helpers import libxprobe, socket_path
from measure_live_helpers import Fixture, fixture_path
from proc_helpers import other_user_dir

CUDA = ["--from", "cuda:runtime_api:cudaLaunchKernel:exit",
        "--to", "cuda:kernel_start:name~flash.*", "--match", "exact", "--samples", 1]
WARNING = "xprobe: warning: injecting the xprobe Agent %s into target PID %d"


def sleeper():
    return Fixture([fixture_path("live_sleeper"), "--calls", "3", "--sleep-ms", "1"])


def agent_mappings(pid):
    with open("/proc/%d/maps" % pid) as f:
        return sorted({line.split()[-1] for line in f if "libxprobe" in line})


def works(fx):
    fx.go()
    assert fx.done()["done"] is True


def test_inject_then_no_cuda_to_observe(xprobe):
    lib = os.path.realpath(libxprobe())
    with sleeper() as fx:
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6])
        assert v.rc == 0 and v.doc["valid"] is True, v
        req = v.doc["requirements"]
        assert req["agent_activation"] == "injection_required"
        assert req["target_mutation"] is True
        (w,) = [w for w in v.doc["warnings"] if w["code"] == "TARGET_PROCESS_WILL_BE_MODIFIED"]
        assert w["details"]["agent_path"] == lib
        assert agent_mappings(fx.pid) == []

        r = xprobe.run("measure", "--pid", fx.pid, *CUDA)
        assert r.rc == 1 and r.code == "CUDA_CONTEXT_NOT_FOUND", r
        d = r.error["details"]
        assert d["agent_injected"] is True
        assert d["agent_status"] == "CUDA_CONTEXT_NOT_FOUND" and d["op"] == "arm"
        assert (WARNING % (lib, fx.pid)) in r.stderr, r.stderr
        assert agent_mappings(fx.pid) == [lib]
        assert not os.path.exists(socket_path(fx.pid))  # CLOSE removed it
        works(fx)

        # mapped now: validate says so, and measure starts it again without
        # loading anything (no agent_injected)
        v = xprobe.run("validate", "--pid", fx.pid, *CUDA[:6])
        assert v.doc["requirements"]["agent_activation"] == "already_loaded", v
        assert v.doc["requirements"]["target_mutation"] is False
        assert "TARGET_PROCESS_WILL_BE_MODIFIED" not in [w["code"] for w in v.doc["warnings"]]
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA)
        assert r.rc == 1 and r.code == "CUDA_CONTEXT_NOT_FOUND", r
        assert "agent_injected" not in r.error["details"], r.error
        assert r.error["details"]["agent_status"] == "CUDA_CONTEXT_NOT_FOUND"
        assert agent_mappings(fx.pid) == [lib]
        assert not os.path.exists(socket_path(fx.pid))
        works(fx)
        fx.quit()


def test_agent_flag_and_environment_choose_the_library(xprobe):
    """--agent first, then XPROBE_CUPTI_AGENT_PATH: a missing file is named
    in the error and nothing is loaded; a copy of the Agent given by
    either is the file the target maps."""
    with sleeper() as fx:
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
        works(fx)
        with other_user_dir() as d:
            copy = os.path.join(d, "libxprobe-copy.so")
            shutil.copy2(libxprobe(), copy)
            os.chmod(copy, 0o755)
            r = xprobe.run("measure", "--pid", fx.pid, *CUDA, "--agent", copy)
            assert r.rc == 1 and r.code == "CUDA_CONTEXT_NOT_FOUND", r
            assert r.error["details"]["agent_injected"] is True
            assert agent_mappings(fx.pid) == [copy]
            works(fx)
        fx.quit()


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
    with sleeper() as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *CUDA, "--agent", lib)
        assert r.rc == 4 and r.code == "PERMISSION_DENIED", r
        assert r.error["details"]["reason"] == "agent_untrusted"
        assert "being modified" not in r.stderr, r.stderr
        assert agent_mappings(fx.pid) == []
        works(fx)
        fx.quit()
