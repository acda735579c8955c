# SPDX-License-Identifier: Apache-2.0
"""Live CUDA measurements through the Agent's CUPTI backend (issue 11,
sections 2 and 3), against the CUPTI TEST DOUBLE.

The target is tests/fixtures/cupti_double/cupti_fixture, a "CUDA program"
calling a fake runtime whose CUPTI (the double) replays what NVIDIA's would
report: API callbacks with correlation ids, kernel / memcpy / memset
activity records with exact durations.  libxprobe's real backend runs
inside it (preloaded, or injected by measure), so these tests prove the
plumbing end to end: validate, the ARM filters, the records on the socket,
their events, the correlator's CUDA keys, the clocks, the Agent's counters,
the aggregate table.  Every figure checked is the fixture's own (the calls
its DONE lines report, the durations it asked for, the double's STATS);
every document is validated against schemas/ and the reference schemas.
What real CUDA reports is tests/gpu/run.sh's to check, on a GPU.
"""
import json
import os

import pytest

from agent_helpers import libxprobe, socket_path
from cuda_helpers import CudaRun, CuptiFixture, cudart, double_dir, measure_cuda
from measure_live_helpers import read_jsonl

KERNELS = ["--from", "cuda:kernel_start:name~^gemm$", "--to", "cuda:kernel_end:name~^gemm$"]
WINDOW = ["--match", "exact", "--duration-ms", 1500]
# the contract's line (tools grep for it): the major and the CUPTI the
# Agent will load, as the target sees its path
INJECT_WARNING = ("xprobe: warning: activating the CUPTI agent modifies target PID %d "
                  "with CUDA 13 Agent using %s\n")


def samples(doc):
    return doc["measurement"]["samples"]


def check_pairs_exact(doc, dur):
    """Every pair lasts exactly what the fixture asked for (the double's
    durations are exact) and spans one activity."""
    for pair in doc["evidence"]:
        s, e = pair["start"], pair["end"]
        assert pair["latency_ns"] == dur == e["timestamp_ns"] - s["timestamp_ns"]
        assert s["cuda"]["correlation_id"] == e["cuda"]["correlation_id"]
        assert s["cuda"]["start_ns"] == s["timestamp_ns"] and s["cuda"]["end_ns"] is None
        assert e["cuda"]["end_ns"] == e["timestamp_ns"] and e["cuda"]["start_ns"] is None


# --- validate -------------------------------------------------------------


@pytest.mark.parametrize("mode,activation", [("inject", "injection_required"),
                                             ("preload", "already_loaded")])
def test_validate_cuda_families(xprobe, mode, activation):
    """Every cuda: family but NVTX is valid on a target with CUDA mapped:
    the Agent is either there (already_loaded) or injected by measure
    (injection_required, target_mutation, the warning naming the library
    and the mapped major)."""
    pairs = [
        ("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start:name~flash.*", "exact"),
        ("cuda:driver_api:cuLaunchKernel:entry", "cuda:kernel_start", "exact"),
        ("cuda:kernel_start", "cuda:kernel_end", "exact"),
        ("cuda:memcpy_start:kind=HtoD", "cuda:memcpy_end:kind=HtoD", "exact"),
        ("cuda:memset_start", "cuda:memset_end", "stream-order"),
        ("uprobe:%s:cudaLaunchKernel:entry" % cudart(), "cuda:kernel_start", "first-after"),
    ]
    with CuptiFixture(mode) as fx:
        for start, end, policy in pairs:
            v = xprobe.run("validate", "--pid", fx.pid, "--from", start, "--to", end,
                           "--match", policy)
            assert v.rc == 0 and v.doc["valid"] is True, v
            req = v.doc["requirements"]
            assert req["agent_activation"] == activation
            assert req["target_mutation"] is (mode == "inject")
            assert req["needs_cupti"] is True
            codes = [w["code"] for w in v.doc["warnings"]]
            assert ("TARGET_PROCESS_WILL_BE_MODIFIED" in codes) is (mode == "inject")
            if mode == "inject":
                (w,) = [w for w in v.doc["warnings"]
                        if w["code"] == "TARGET_PROCESS_WILL_BE_MODIFIED"]
                assert w["details"]["agent_path"] == os.path.realpath(libxprobe())
                assert w["details"]["mapped_cuda_majors"] == [13]
                assert w["details"]["cuda_major"] == 13
        assert not fx.cupti_mapped()  # validate is read-only: CUPTI never loaded
        fx.quit()


@pytest.mark.parametrize("how", ["major-11", "conflicting"])
def test_unsupported_cuda_majors(xprobe, how):
    """A runtime of CUDA 11, or two runtime majors mapped at once:
    validate's issue UNSUPPORTED_CUDA_VERSION (valid: false), and measure
    refuses with that code before it touches the target."""
    major = 11 if how == "major-11" else 13
    with CuptiFixture("inject", major=major) as fx:
        if how == "conflicting":
            assert fx.cmd("load %s" % double_dir(12)).startswith("DONE load")
        args = ["--pid", fx.pid] + KERNELS + ["--match", "exact"]
        v = xprobe.run("validate", *args)
        assert v.rc == 0 and v.doc["valid"] is False, v
        (issue,) = v.doc["issues"]
        assert issue["code"] == "UNSUPPORTED_CUDA_VERSION"
        if how == "major-11":
            assert issue["message"] == "CUDA/CUPTI major 11 is unsupported; expected 12 or 13"
        else:
            assert issue["message"] == "target maps conflicting CUDA/CUPTI majors [12, 13]"
        r = xprobe.run("measure", *args, "--duration-ms", 200)
        assert r.rc == 1 and r.code == "UNSUPPORTED_CUDA_VERSION", r
        assert "agent_injected" not in r.error["details"]
        assert r.stderr == ""  # nothing was injected
        assert not os.path.exists(socket_path(fx.pid))
        fx.quit()


# --- exact measurements -----------------------------------------------------


@pytest.mark.parametrize("mode", ["preload", "inject"])
def test_kernel_start_to_end(xprobe, tmp_path, mode):
    """Kernel start -> end of the same activity, filtered by name in the
    Agent: exactly the fixture's gemm launches pair, each lasting the 20 us
    it asked for; the flash kernels never became records (observed)."""
    out = tmp_path / "k.jsonl"
    with CuptiFixture(mode) as fx:
        res, done = measure_cuda(xprobe, fx, KERNELS + WINDOW + ["--events-out", out],
                                 ["launch 5 gemm 20000 4 2 1 128 1 1", "drv 3 flash 5000",
                                  "launch 2 gemm 20000"])
        assert res.rc == 0, res
        n = done["launch 5 gemm 20000 4 2 1 128 1 1"] + done["launch 2 gemm 20000"]
        d = res.doc
        assert n == 7 and d["status"] == "completed"
        assert samples(d) == {"matched": n, "unmatched_start": 0, "unmatched_end": 0,
                              "ambiguous": 0, "dropped": 0}
        assert d["correlation"] == {"method": "exact_cupti_correlation_id",
                                    "confidence": "exact", "score": 1.0}
        assert d["clock"] == {"alignment": "cupti_normalized_to_host_monotonic",
                              "estimated_error_ns": None}
        assert [w["code"] for w in d["warnings"]][:1] == ["CLOCK_ERROR_UNAVAILABLE"]
        check_pairs_exact(d, 20000)
        col = d["collection"]
        assert col["host_events"] == 0 and col["cuda_events"] == 2 * n
        # the contract's counters are in events (an activity's start and end
        # are two): retained = cuda_events, observed = retained + lost
        assert col["cupti"] == {"record_capacity": 100000, "observed_records": 2 * n,
                                "retained_records": 2 * n, "dropped_records": 0,
                                "buffer_utilization": 2 * n / 100000}
        first = d["evidence"][0]["start"]
        assert first["source"] == "cupti_activity" and first["event_type"] == "gpu_kernel_start"
        assert first["pid"] == fx.pid and first["tid"] == 0
        c = first["cuda"]
        assert c["kernel_name"] == "gemm" and c["device_id"] == 0
        assert c["grid"] == {"x": 4, "y": 2, "z": 1} and c["block"] == {"x": 128, "y": 1, "z": 1}
        assert first["attributes"] == {"kernel_name_complete": True}
        assert first["clock_domain"] == "cupti_normalized_to_host_monotonic"
        events = read_jsonl(out)
        assert len(events) == 2 * n
        assert {e["cuda"]["kernel_name"] for e in events} == {"gemm"}
        if mode == "inject":
            cupti = os.path.join(double_dir(13), "libcupti.so.13")
            assert res.stderr == INJECT_WARNING % (fx.pid, cupti), res.stderr
            w = d["warnings"][-1]
            assert w["code"] == "CUPTI_AGENT_INJECTED"
            assert w["message"] == ("xprobe injected the CUPTI agent and left the shared "
                                    "object mapped")
            assert w["details"]["cuda_major"] == 13 and w["details"]["cupti_path"] == cupti
            assert w["details"]["agent_path"] == os.path.realpath(libxprobe())
            assert w["details"]["pid"] == fx.pid and w["details"]["stopped_ns"] > 0
            assert not os.path.exists(socket_path(fx.pid))  # CLOSE removed it
        else:
            assert res.stderr == ""
        st = fx.stats()
        assert st["subscribed"] == 1 and st["kinds"] == 0  # activity disabled at STOP
        fx.quit()


@pytest.mark.parametrize("api,domain,cmd,other", [
    ("runtime_api:cudaLaunchKernel", 2, "launch 4 gemm 50000000", "ptsz 2 gemm 50000000"),
    ("driver_api:cuLaunchKernel", 1, "drv 4 gemm 50000000", "launch 2 gemm 50000000"),
])
@pytest.mark.parametrize("boundary,activity", [("entry", "start"), ("exit", "end")])
def test_api_to_kernel_by_correlation_id(xprobe, api, domain, cmd, other, boundary, activity):
    """cudaLaunchKernel (runtime) or cuLaunchKernel (driver) -> the kernel
    it launched, exact by CUPTI correlation id (the API record carries no
    context: the correlator keys on (pid, correlation id)): the call's
    entry to the kernel's start, its exit to the kernel's end (the double
    starts a kernel inside the launch call, as a GPU may, and a kernel of
    50 ms ends after the call returned).  Launches by another API
    (cudaLaunchKernel_ptsz, the other domain) are kernels without a
    selected launch: unmatched ends, never pairs."""
    sel = ["--from", "cuda:%s:%s" % (api, boundary),
           "--to", "cuda:kernel_%s:name~^gemm$" % activity]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel + WINDOW, [cmd, other])
        assert res.rc == 0, res
        d = res.doc
        n, m = done[cmd], done[other]
        assert samples(d) == {"matched": n, "unmatched_start": 0, "unmatched_end": m,
                              "ambiguous": 0, "dropped": 0}
        assert d["correlation"]["method"] == "exact_cupti_correlation_id"
        assert d["correlation"]["confidence"] == "exact"
        assert d["clock"]["alignment"] == "cupti_normalized_to_host_monotonic"
        # the Agent admitted only the named API: its entries and exits, and
        # every gemm kernel (a start and an end each)
        assert d["collection"]["cupti"]["observed_records"] == 2 * n + 2 * (n + m)
        for pair in d["evidence"]:
            s, e = pair["start"], pair["end"]
            assert s["event_type"] == "cuda_api_" + boundary and s["tid"] == fx.pid
            assert e["event_type"] == "gpu_kernel_" + activity
            assert s["source"] == "cupti_callback" and s["clock_domain"] == "host_monotonic"
            assert s["cuda"]["callback_domain"] == domain and s["cuda"]["callback_id"] > 0
            assert s["attributes"]["cuda_api_name"] == api.split(":")[1]
            assert s["cuda"]["correlation_id"] == e["cuda"]["correlation_id"]
            assert 0 <= pair["latency_ns"] <= 50000000
        fx.quit()


def test_samples_cut(xprobe):
    """--samples 3 of 8 launches: the capture is cut at the event that
    completed the third pair; the counters describe what was kept."""
    with CuptiFixture("preload") as fx:
        run = CudaRun(xprobe, "--pid", fx.pid, *KERNELS, "--match", "exact", "--samples", 3)
        run.wait_armed(fx.pid)
        assert fx.do("launch 8 gemm 20000") == 8
        res = run.finish()
        assert res.rc == 0, res
        d = res.doc
        assert d["status"] == "completed" and samples(d)["matched"] == 3
        check_pairs_exact(d, 20000)
        col, cupti = d["collection"], d["collection"]["cupti"]
        # what was kept, in events: observed = retained (nothing lost);
        # before, observed counted the 8 records admitted past the cut
        assert cupti["retained_records"] == cupti["observed_records"] == col["cuda_events"]
        # the prefix up to the third end: the double starts all 8 launches
        # before the third ends
        assert col["cuda_events"] == 8 + 3, col
        fx.quit()


def test_api_entry_to_exit(xprobe):
    """One API's entry -> exit, exact: the same call (correlation id), on
    the calling thread, the exit after the entry."""
    sel = ["--from", "cuda:runtime_api:cudaDeviceSynchronize:entry",
           "--to", "cuda:runtime_api:cudaDeviceSynchronize:exit"]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel + WINDOW, ["sync 6", "launch 3 k 100"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["sync 6"] == 6
        assert res.doc["collection"]["cupti"]["observed_records"] == 12
        assert res.doc["clock"] == {"alignment": "host_monotonic", "estimated_error_ns": 0}
        for pair in res.doc["evidence"]:
            assert pair["start"]["tid"] == pair["end"]["tid"] == fx.pid
        fx.quit()


def test_chevron_launches_are___cudaLaunchKernel(xprobe):
    """CUDA 13 compiles kernel<<<>>>() to __cudaLaunchKernel, a callback id
    of its own (the double's chevron command plays it): the selector
    cuda:runtime_api:__cudaLaunchKernel arms exactly that callback (entry
    -> exit pairs are the chevron launches, not the cudaLaunchKernel
    calls), and its entries pair with their kernels by time (first-after)
    and exactly, by CUPTI correlation id: validate counts __cudaLaunchKernel
    among the launch APIs (the reference names only cudaLaunchKernel and
    cuLaunchKernel, which would leave CUDA 13's <<<>>> without an exact
    pairing)."""
    api = "cuda:runtime_api:__cudaLaunchKernel:"
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, ["--from", api + "entry", "--to", api + "exit"]
                                 + WINDOW, ["chevron 4 gemm 1000", "launch 3 gemm 1000"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["chevron 4 gemm 1000"] == 4
        assert res.doc["collection"]["cupti"]["observed_records"] == 8
        for pair in res.doc["evidence"]:
            for e in (pair["start"], pair["end"]):
                assert e["attributes"]["cuda_api_name"] == "__cudaLaunchKernel"
                assert e["cuda"]["callback_domain"] == 2 and e["cuda"]["callback_id"] == 505
        sel = ["--from", api + "entry", "--to", "cuda:kernel_start:name~^gemm$"]
        res, done = measure_cuda(xprobe, fx, sel + ["--match", "first-after",
                                                    "--duration-ms", 1500],
                                 ["chevron 5 gemm 1000"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["chevron 5 gemm 1000"] == 5
        for pair in res.doc["evidence"]:
            assert pair["start"]["cuda"]["correlation_id"] == \
                pair["end"]["cuda"]["correlation_id"]
        v = xprobe.run("validate", "--pid", fx.pid, *sel, "--match", "exact")
        assert v.rc == 0 and v.doc["valid"] is True, v
        assert v.doc["policy_recommendation"]["policy"] == "exact"
        res, done = measure_cuda(xprobe, fx, sel + ["--match", "exact", "--duration-ms", 1500],
                                 ["chevron 3 gemm 1000", "launch 2 gemm 1000"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["chevron 3 gemm 1000"] == 3
        assert res.doc["correlation"]["method"] == "exact_cupti_correlation_id"
        for pair in res.doc["evidence"]:
            assert pair["start"]["attributes"]["cuda_api_name"] == "__cudaLaunchKernel"
            assert pair["start"]["cuda"]["correlation_id"] == \
                pair["end"]["cuda"]["correlation_id"]
        fx.quit()


@pytest.mark.parametrize("kind,raw,other", [("HtoD", 1, 2), ("DtoH", 2, 1)])
def test_memcpy_by_kind(xprobe, kind, raw, other):
    """memcpy start -> end of one direction: the Agent admits that kind
    only (observed), each copy with its bytes and the duration asked."""
    sel = ["--from", "cuda:memcpy_start:kind=%s" % kind, "--to", "cuda:memcpy_end:kind=%s" % kind]
    cmd = "memcpy 3 %d 4194304 7000" % raw
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel + WINDOW,
                                 [cmd, "memcpy 2 %d 1024 500" % other, "launch 2 k 100"])
        assert res.rc == 0, res
        d = res.doc
        assert samples(d)["matched"] == done[cmd] == 3
        assert d["collection"]["cupti"]["observed_records"] == 6
        check_pairs_exact(d, 7000)
        for pair in d["evidence"]:
            c = pair["start"]["cuda"]
            assert c["memcpy_kind"] == kind and c["bytes"] == 4194304
            assert c["kernel_name"] is None and c["grid"] is None
            assert pair["start"]["event_type"] == "gpu_memcpy_start"
            assert pair["start"]["attributes"] == {"cupti_copy_kind": raw}
        fx.quit()


def test_memset(xprobe):
    sel = ["--from", "cuda:memset_start", "--to", "cuda:memset_end"]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel + WINDOW, ["memset 4 171 65536 2500"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["memset 4 171 65536 2500"] == 4
        check_pairs_exact(res.doc, 2500)
        for pair in res.doc["evidence"]:
            assert pair["end"]["cuda"]["bytes"] == 65536
            assert pair["end"]["attributes"] == {"memset_value": 171}
        fx.quit()


def test_stream_order(xprobe):
    """Stream order pairs each start with the next end of its own stream
    (device, context, stream)."""
    sel = ["--from", "cuda:kernel_start", "--to", "cuda:kernel_end", "--match", "stream-order",
           "--duration-ms", 1500]
    work = ["launch 3 a 4000 1 1 1 1 1 1 5", "launch 2 b 1000 1 1 1 1 1 1 7"]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel, work)
        assert res.rc == 0, res
        d = res.doc
        assert samples(d)["matched"] == done[work[0]] + done[work[1]] == 5
        assert d["correlation"] == {"method": "cuda_stream_order", "confidence": "high",
                                    "score": 1.0}
        for pair in d["evidence"]:
            s, e = pair["start"]["cuda"], pair["end"]["cuda"]
            assert s["stream_id"] == e["stream_id"] and s["kernel_name"] == e["kernel_name"]
            assert pair["latency_ns"] == (4000 if s["stream_id"] == 5 else 1000)
        fx.quit()


@pytest.mark.parametrize("policy", ["first-after", "nearest"])
def test_host_uprobe_to_first_kernel(xprobe, policy):
    """A host endpoint (a uprobe on the runtime's cudaLaunchKernel) to the
    kernel start after it (first-after) or closest to it (nearest): both
    sources in one capture, host clock and normalized CUPTI clock
    comparable, every launch paired."""
    sel = ["--from", "uprobe:%s:cudaLaunchKernel:entry" % cudart(),
           "--to", "cuda:kernel_start:name~^gemm$", "--match", policy,
           "--duration-ms", 1500]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, sel, ["launch 6 gemm 1000"], nlinks=1)
        assert res.rc == 0, res
        d = res.doc
        n = done["launch 6 gemm 1000"]
        assert samples(d) == {"matched": n, "unmatched_start": 0, "unmatched_end": 0,
                              "ambiguous": 0, "dropped": 0}
        assert d["correlation"]["method"] == policy.replace("-", "_")
        assert d["correlation"]["confidence"] == "heuristic"
        assert d["clock"]["alignment"] == "cupti_normalized_to_host_monotonic"
        assert d["collection"]["host_events"] == n
        assert d["collection"]["cupti"]["observed_records"] == 2 * n
        for pair in d["evidence"]:
            assert pair["start"]["source"] == "ebpf"
            assert pair["end"]["source"] == "cupti_activity"
            assert 0 <= pair["latency_ns"] < 100000000
        fx.quit()


def test_records_before_arm_excluded(xprobe):
    """Kernels launched before the capture armed, and one that began
    before ARM but is reported after it, are never admitted."""
    with CuptiFixture("preload") as fx:
        # the first measure loads CUPTI; what it saw is not the second's
        res, _ = measure_cuda(xprobe, fx, KERNELS + ["--match", "exact", "--duration-ms", 300],
                              ["launch 2 gemm 100"])
        assert res.rc == 0 and samples(res.doc)["matched"] == 2, res
        assert fx.do("launch 4 gemm 100") == 4  # between two captures
        res, done = measure_cuda(xprobe, fx, KERNELS + WINDOW,
                                 ["backdate gemm 100 3000000000", "launch 3 gemm 100"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == done["launch 3 gemm 100"] == 3
        assert res.doc["collection"]["cupti"]["observed_records"] == 6
        fx.quit()


# --- clocks -----------------------------------------------------------------


def test_clock_normalization_failure(xprobe):
    """Activity 5 s in the future fails the backend's clock check: the
    capture drops HOST_MONOTONIC, so a host -> GPU pair is refused
    (CLOCK_ALIGNMENT_FAILED, naming both clocks) while a GPU-only pair is
    still measured in the CUPTI clock (cupti_same_domain, error 0)."""
    with CuptiFixture("preload", env={"XPD_SKEW_NS": "5000000000"}) as fx:
        api = ["--from", "cuda:runtime_api:cudaLaunchKernel:entry",
               "--to", "cuda:kernel_start:name~^gemm$"]
        res, _ = measure_cuda(xprobe, fx, api + WINDOW, ["launch 3 gemm 1000"])
        assert res.rc == 1 and res.code == "CLOCK_ALIGNMENT_FAILED", res
        det = res.error["details"]
        assert {det["start_clock"], det["end_clock"]} == {"host_monotonic", "cupti"}
        res, done = measure_cuda(xprobe, fx, KERNELS + WINDOW, ["launch 3 gemm 1000"])
        assert res.rc == 0, res
        assert samples(res.doc)["matched"] == 3
        assert res.doc["clock"] == {"alignment": "cupti_same_domain", "estimated_error_ns": 0}
        for pair in res.doc["evidence"]:
            assert pair["start"]["clock_domain"] == pair["end"]["clock_domain"] == "cupti"
        check_pairs_exact(res.doc, 1000)
        fx.quit()


# --- what goes wrong ----------------------------------------------------------


def test_busy_subscriber(xprobe):
    """Another tool holds the process's CUPTI subscriber: CUPTI_NOT_AVAILABLE
    with the Agent's reason, nothing measured."""
    with CuptiFixture("preload", env={"XPD_BUSY": "1"}) as fx:
        r = xprobe.run("measure", "--pid", fx.pid, *KERNELS, "--match", "exact",
                       "--duration-ms", 200)
        assert r.rc == 1 and r.code == "CUPTI_NOT_AVAILABLE", r
        d = r.error["details"]
        assert d["op"] == "arm" and d["agent_status"] == "CUPTI_NOT_AVAILABLE"
        assert "another tool already holds this process's CUPTI subscriber" in d["agent_message"]
        fx.quit()


def test_drops_are_an_error(xprobe, tmp_path):
    """CUPTI's own drops (the buffer pool held dry) reach the result's
    counters and make the measurement EVENTS_DROPPED, never a partial
    success; the artifact still holds what came."""
    out = tmp_path / "drops.jsonl"
    env = {"XPD_HOLD": "1", "XPD_RECS_PER_BUFFER": "10"}
    with CuptiFixture("preload", env=env) as fx:
        res, done = measure_cuda(xprobe, fx, ["--from", "cuda:kernel_start", "--to",
                                              "cuda:kernel_end"] + WINDOW +
                                 ["--events-out", out], ["launch 300 k 100"])
        assert res.rc == 1 and res.code == "EVENTS_DROPPED", res
        st = fx.stats()
        assert st["dropped"] > 0
        assert res.error["details"]["dropped_events"] == st["dropped"]
        assert res.error["details"]["artifact_path"] == str(out)
        assert len(read_jsonl(out)) == 2 * (300 - st["dropped"])
        fx.quit()


def test_unknown_activity_records(xprobe):
    """Activity of a kind the backend does not read is counted, never
    guessed, and a capture with such records is refused."""
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, KERNELS + WINDOW,
                                 ["launch 2 gemm 100", "unknown 3"])
        assert res.rc == 1 and res.code == "TRACE_EXPORT_FAILED", res
        assert res.error["details"]["unknown_records"] == done["unknown 3"] == 3
        fx.quit()


def test_capture_limit(xprobe):
    with CuptiFixture("preload") as fx:
        res, _ = measure_cuda(xprobe, fx, KERNELS + WINDOW + ["--max-events", 10],
                              ["launch 20 gemm 100"])
        assert res.rc == 1 and res.code == "EVENT_RATE_TOO_HIGH", res
        fx.quit()


# --- aggregate inventories -----------------------------------------------------

AGG = ["--match", "exact", "--aggregate", "--duration-ms", 1500]


def group_of(doc, name=None, kind=None):
    (g,) = [g for g in doc["inventory"]["groups"]
            if (name is None or g["name"] == name) and
            (kind is None or g["memcpy_kind"] == kind)]
    return g


@pytest.mark.parametrize("mode", ["preload", "inject"])
def test_aggregate_kernels(xprobe, mode):
    """Every kernel grouped by name and device inside the target: counts
    and durations equal the fixture's launches, a 188-byte name kept as its
    127-byte prefix (name_complete false, a hint without "$"), and each
    hint measures its group exactly."""
    longname = "k_" + "x" * 186
    work = ["launch 5 gemm 20000", "drv 3 flash 5000", "device 1", "launch 2 gemm 7000",
            "device 0", "launch 2 %s 100" % longname]
    with CuptiFixture(mode) as fx:
        res, done = measure_cuda(xprobe, fx, ["--from", "cuda:kernel_start",
                                              "--to", "cuda:kernel_end"] + AGG, work)
        assert res.rc == 0, res
        d = res.doc
        assert d["status"] == "completed"
        inv = d["inventory"]
        assert (inv["start_selector"], inv["end_selector"]) == ("cuda:kernel_start",
                                                               "cuda:kernel_end")
        names = [(g["name"], g["device_id"]) for g in inv["groups"]]
        assert names == [("flash", 0), ("gemm", 0), ("gemm", 1), (longname[:127], 0)], names
        g = inv["groups"][1]
        assert g["count"] == done[work[0]] == 5 and g["name_complete"] is True
        assert g["duration_ns"] == {"min": 20000, "mean": 20000.0, "max": 20000,
                                    "total": 100000}
        assert g["total_bytes"] is None and g["memcpy_kind"] is None
        assert g["start_selector_hint"] == "cuda:kernel_start:name~^gemm$"
        assert g["end_selector_hint"] == "cuda:kernel_end:name~^gemm$"
        assert inv["groups"][0]["count"] == done[work[1]] == 3
        assert inv["groups"][2]["count"] == 2 and inv["groups"][2]["duration_ns"]["total"] == 14000
        cut = inv["groups"][3]
        assert cut["name_complete"] is False and cut["count"] == 2
        assert cut["start_selector_hint"] == "cuda:kernel_start:name~^%s" % longname[:127]
        col = d["collection"]
        total = 5 + 3 + 2 + 2
        assert col == {"completeness": "complete", "observed_activities": total,
                       "grouped_activities": total, "dropped_activities": 0,
                       "group_capacity": 4096, "groups": 4, "occupied_slots": 4,
                       "table_utilization": 4 / 4096}
        if mode == "inject":
            assert [w["code"] for w in d["warnings"]] == ["CUPTI_AGENT_INJECTED"]
        # the hints are selectors an exact measurement takes: the cut name's
        # prefix admits exactly its kernels in the Agent
        res2, done2 = measure_cuda(xprobe, fx, ["--from", cut["start_selector_hint"],
                                                "--to", cut["end_selector_hint"]] + WINDOW,
                                   ["launch 3 %s 100" % longname, "launch 1 gemm 100"])
        assert res2.rc == 0, res2
        assert samples(res2.doc)["matched"] == 3
        assert res2.doc["collection"]["cupti"]["observed_records"] == 6
        fx.quit()


def test_aggregate_copies_and_sets(xprobe):
    work = ["memcpy 3 1 4096 1000", "memcpy 2 2 100 3000", "memcpy 1 8 64 500",
            "memset 4 0 1024 200"]
    with CuptiFixture("preload") as fx:
        res, done = measure_cuda(xprobe, fx, ["--from", "cuda:memcpy_start",
                                              "--to", "cuda:memcpy_end"] + AGG, work)
        assert res.rc == 0, res
        groups = res.doc["inventory"]["groups"]
        assert [g["memcpy_kind"] for g in groups] == ["HtoD", "DtoH", "DtoD"]
        h = group_of(res.doc, kind="HtoD")
        assert h["count"] == 3 and h["total_bytes"] == 3 * 4096 and h["name"] is None
        assert h["name_complete"] is None
        assert h["start_selector_hint"] == "cuda:memcpy_start:kind=HtoD"
        assert group_of(res.doc, kind="DtoH")["duration_ns"]["total"] == 6000
        assert res.doc["collection"]["observed_activities"] == 6  # the sets are not copies
        res, done = measure_cuda(xprobe, fx, ["--from", "cuda:memset_start",
                                              "--to", "cuda:memset_end"] + AGG,
                                 ["memset 4 0 1024 200"])
        assert res.rc == 0, res
        (g,) = res.doc["inventory"]["groups"]
        assert g["activity"] == "memset" and g["count"] == 4 and g["total_bytes"] == 4096
        assert g["start_selector_hint"] == "cuda:memset_start"
        fx.quit()


def test_aggregate_name_filter_and_table_limit(xprobe):
    """A prefix filter groups only its kernels; a table of two groups that
    meets a third name is EVENT_RATE_TOO_HIGH, never a partial inventory."""
    with CuptiFixture("preload") as fx:
        res, _ = measure_cuda(xprobe, fx, ["--from", "cuda:kernel_start:name~^ge",
                                           "--to", "cuda:kernel_end:name~^ge"] + AGG,
                              ["launch 2 gemm 100", "launch 1 gemv 100", "launch 4 flash 100"])
        assert res.rc == 0, res
        assert [g["name"] for g in res.doc["inventory"]["groups"]] == ["gemm", "gemv"]
        assert res.doc["collection"]["observed_activities"] == 3
        res, _ = measure_cuda(xprobe, fx, ["--from", "cuda:kernel_start",
                                           "--to", "cuda:kernel_end"] + AGG +
                              ["--max-groups", 2],
                              ["launch 2 a 100", "launch 2 b 100", "launch 3 c 100"])
        assert res.rc == 1 and res.code == "EVENT_RATE_TOO_HIGH", res
        d = res.error["details"]
        assert d["group_capacity"] == 2 and d["groups"] == 2
        assert d["observed_activities"] == 7 and d["dropped_activities"] == 3
        assert res.error["message"] == \
            "aggregate group table reached its configured capacity of 2 groups"
        fx.quit()


def test_aggregate_selection_rules(xprobe):
    """What --aggregate refuses on a live target, after validate: endpoints
    that are not activity, mismatched pairs, a kernel regex the Agent
    cannot apply; nothing is injected for any of them."""
    cases = [
        (["cuda:runtime_api:cudaLaunchKernel:entry", "cuda:runtime_api:cudaLaunchKernel:exit"],
         "aggregate measurement supports CUPTI activity endpoints only"),
        (["cuda:memcpy_start:kind=HtoD", "cuda:memcpy_end:kind=DtoH"],
         "aggregate measurement requires matching kernel, memcpy, or memset start/end selectors"),
        (["cuda:kernel_start:name~^a", "cuda:kernel_end:name~^b"],
         "aggregate measurement requires matching kernel, memcpy, or memset start/end selectors"),
        (["cuda:kernel_start:name~gem+", "cuda:kernel_end:name~gem+"],
         "aggregate kernel regex must be an exact, prefix, suffix, or contains pattern that "
         "the CUPTI Agent can apply"),
    ]
    with CuptiFixture("inject") as fx:
        for (a, b), message in cases:
            r = xprobe.run("measure", "--pid", fx.pid, "--from", a, "--to", b, *AGG)
            assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
            assert r.error["message"] == message
            assert r.stderr == ""
        assert not fx.cupti_mapped() and not os.path.exists(socket_path(fx.pid))
        fx.quit()


def test_aggregate_spec(xprobe, tmp_path):
    """A MeasurementSpec of measurement_mode aggregate (max_groups
    required) gives the same document."""
    with CuptiFixture("preload") as fx:
        from proc_helpers import start_time
        spec = {"schema_version": "2.0", "name": "inv",
                "target": {"pid": fx.pid, "process_start_time": start_time(fx.pid)},
                "start_selector": "cuda:kernel_start", "end_selector": "cuda:kernel_end",
                "match_policy": "exact", "samples": None, "duration_ms": 1500,
                "timeout_ms": 10000, "max_events": None, "measurement_mode": "aggregate",
                "max_groups": 8}
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        run = CudaRun(xprobe, "--spec", path)
        run.wait_armed(fx.pid)
        assert fx.do("launch 3 gemm 100") == 3
        res = run.finish(schema_name="aggregate-inventory-result")
        assert res.rc == 0, res
        assert res.doc["inventory"]["name"] == "inv"
        assert res.doc["collection"]["group_capacity"] == 8
        assert [(g["name"], g["count"]) for g in res.doc["inventory"]["groups"]] == [("gemm", 3)]
        del spec["max_groups"]
        path.write_text(json.dumps(spec))
        r = xprobe.run("measure", "--spec", path, schema_name="aggregate-inventory-result")
        assert r.rc == 1 and r.code == "SESSION_LIMIT_EXCEEDED", r
        assert r.error["message"] == "aggregate MeasurementSpec requires max_groups"
        fx.quit()


# --- sessions: measure --input of a device profile ---------------------------


def session_dir(base):
    (inst,) = os.listdir(base)
    (leaf,) = os.listdir(os.path.join(base, inst))
    return os.path.join(base, inst, leaf)


@pytest.mark.parametrize("key_space", ["model", "session"])
def test_session_device_profile_input(xprobe, tmp_path, key_space):
    """A libxprobe session with device_profile on the cupti backend writes
    the kernels as CUDA activity records in its .xtf device files;
    measure --input <session dir> measures them as a live capture would:
    MODEL mode only the kernels of an execution (with its id), SESSION mode
    every kernel, one file per device."""
    base = tmp_path / "sessions"
    env = {"XPROBE_INSPECT_ENABLE": "1", "XPROBE_INSPECT_ACTIVITIES": "device_profile",
           "XPROBE_INSPECT_DEVICE_PROFILE": key_space, "XPROBE_INSPECT_BACKEND": "cupti",
           "XPROBE_INSPECT_OUTPUT_DIR": str(base)}
    if key_space == "session":
        env["XPROBE_INSPECT_DEVICES"] = "0,1"
    with CuptiFixture("preload", env=env) as fx:
        assert fx.do("exec 3 resnet gemm 20000") == 1
        assert fx.do("launch 2 flash 5000") == 2
        assert fx.do("device 1") == 1
        assert fx.do("launch 1 flash 7000") == 1
        assert fx.cmd("stop_session") == "DONE stop_session 0"
        fx.quit()
    d = session_dir(base)
    files = sorted(f for f in os.listdir(d) if f.endswith(".xtf"))
    if key_space == "model":
        assert files == ["resnet_exec_1.xtf"]
    else:
        assert files == ["profile_dev_0_session_1.xtf", "profile_dev_1_session_1.xtf"]
    r = xprobe.run("measure", "--input", d, "--from", "cuda:kernel_start",
                   "--to", "cuda:kernel_end", "--match", "exact", "--samples", 100)
    assert r.rc == 0, r
    doc = r.doc
    n = 3 if key_space == "model" else 6
    assert samples(doc) == {"matched": n, "unmatched_start": 0, "unmatched_end": 0,
                            "ambiguous": 0, "dropped": 0}
    assert doc["correlation"]["method"] == "exact_cupti_correlation_id"
    assert doc["clock"]["alignment"] == "cupti_normalized_to_host_monotonic"
    assert doc["collection"]["cuda_events"] == 2 * n and doc["collection"]["cupti"] is None
    lat = sorted(p["latency_ns"] for p in doc["evidence"])
    assert lat == ([20000] * 3 if key_space == "model" else [5000, 5000, 7000] + [20000] * 3)
    for pair in doc["evidence"]:
        s = pair["start"]
        assert s["pid"] == fx.pid and s["event_type"] == "gpu_kernel_start"
        if s["cuda"]["kernel_name"] == "gemm" and key_space == "model":
            assert s["attributes"]["execution_id"] == 1
        if s["cuda"]["kernel_name"] == "flash" and pair["latency_ns"] == 7000:
            assert s["cuda"]["device_id"] == 1
    # the execution's kernels by name, in a device file of its own
    r = xprobe.run("measure", "--input", d, "--from", "cuda:kernel_start:name~^gemm$",
                   "--to", "cuda:kernel_end:name~^gemm$", "--match", "exact", "--samples", 100)
    assert r.rc == 0 and samples(r.doc)["matched"] == 3, r


def test_aggregate_cancelled_by_sigint(xprobe):
    """SIGINT during the window ends it early: the groups read at STOP
    are the answer, status "cancelled" (as the other inventories)."""
    import signal
    import time
    with CuptiFixture("preload") as fx:
        run = CudaRun(xprobe, "--pid", fx.pid, "--from", "cuda:kernel_start", "--to",
                      "cuda:kernel_end", "--match", "exact", "--aggregate",
                      "--duration-ms", 20000, "--timeout-ms", 30000)
        run.wait_armed(fx.pid)
        assert fx.do("launch 4 gemm 1000") == 4
        t0 = time.monotonic()
        run.p.send_signal(signal.SIGINT)
        res = run.finish(timeout=10)
        assert time.monotonic() - t0 < 5
        assert res.rc == 0, res
        assert res.doc["status"] == "cancelled"
        assert [(g["name"], g["count"]) for g in res.doc["inventory"]["groups"]] == [("gemm", 4)]
        assert fx.stats()["kinds"] == 0  # the STOP ran: activity disabled
        fx.quit()


def test_aggregate_human_view(xprobe):
    """Without --json: one summary line, a header, a line per group (share
    of the time, total, mean, count, its start hint), nothing on stderr."""
    import subprocess
    from agent_helpers import wait_state
    with CuptiFixture("preload") as fx:
        p = subprocess.Popen([xprobe.binary, "measure", "--pid", str(fx.pid), "--from",
                              "cuda:kernel_start", "--to", "cuda:kernel_end", "--match",
                              "exact", "--aggregate", "--duration-ms", "1500"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_state(fx.pid, "active")
        assert fx.do("launch 3 gemm 2000") == 3
        out, err = p.communicate(timeout=30)
        assert p.returncode == 0 and err == "", (out, err)
        lines = out.splitlines()
        assert lines[0].startswith("GPU activity inventory of pid %d " % fx.pid)
        assert "3 activities in 1 groups of 4096" in lines[0]
        assert lines[-2].split() == ["%", "time", "total", "mean", "count", "group"]
        assert lines[-1].split() == ["100.00", "6.00us", "2.00us", "3",
                                     "cuda:kernel_start:name~^gemm$"]
        fx.quit()
