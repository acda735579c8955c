# SPDX-License-Identifier: Apache-2.0
"""Hand-made completed captures for the CLI tests.

Builders return Event documents exactly as xprobe's producers write them
(docs/event-model.md): every field present, optional ones null.  write_jsonl
and write_host_capture number them (sequence, event_id) in the order given,
so a test can hand xprobe an unsorted file and check the merge renumbers.
Timestamps are small integers of nanoseconds, so expected latencies are
easy to read in the tests.
"""
import copy
import json

import xprobe_test

PID = 4242
START_TIME = 777000
APP = "/usr/bin/app"


def _event(source, event_type, tid, ts, clock="host_monotonic", pid=PID, cpu=None,
           start_time=None, host=None, cuda=None, nvtx=None, attributes=None,
           ts_error=None):
    return {
        "schema_version": "2.0",
        "session_id": "xp_test_input",
        "event_id": "evt_0",
        "sequence": 0,
        "source": source,
        "event_type": event_type,
        "pid": pid,
        "tid": tid,
        "cpu": cpu,
        "timestamp_raw": ts,
        "timestamp_ns": ts,
        "clock_domain": clock,
        "timestamp_error_ns": ts_error,
        "process_start_time": start_time,
        "host": host,
        "cuda": cuda,
        "nvtx": nvtx,
        "attributes": attributes if attributes is not None else {},
    }


def _host(probe_kind, symbol, binary=None, ret=None, args=None):
    return {
        "probe_kind": probe_kind,
        "binary_path": binary,
        "build_id": None,
        "symbol": symbol,
        "symbol_demangled": None,
        "offset": None,
        "return_value": ret,
        "arguments": [
            {"index": i, "abi_type": "u64", "value": v, "read_error": None}
            for i, v in enumerate(args or [])
        ],
    }


def _cuda(**kw):
    d = {k: None for k in (
        "device_id", "context_id", "stream_id", "correlation_id", "runtime_correlation_id",
        "callback_domain", "callback_id", "kernel_name", "kernel_name_mangled", "start_ns",
        "end_ns", "grid", "block", "bytes", "memcpy_kind")}
    d.update(kw)
    return d


# --- host (eBPF) -------------------------------------------------------------

MMAP_ARGS = [0, 4096, 3, 34, 2 ** 64 - 1, 0]


def syscall_entry(tid, ts, name="mmap", args=None, pid=PID):
    return _event("ebpf", "syscall_entry", tid, ts, pid=pid, cpu=0, start_time=START_TIME,
                  host=_host("syscall", name, args=args if args is not None else MMAP_ARGS),
                  attributes={"tracepoint_category": "syscalls"})


def syscall_exit(tid, ts, ret=0x7F0000000000, name="mmap", pid=PID):
    return _event("ebpf", "syscall_exit", tid, ts, pid=pid, cpu=1, start_time=START_TIME,
                  host=_host("syscall", name, ret=ret),
                  attributes={"tracepoint_category": "syscalls"})


def uprobe_entry(tid, ts, symbol="handle_request", binary=APP):
    return _event("ebpf", "host_function_entry", tid, ts, cpu=0, start_time=START_TIME,
                  host=_host("uprobe", symbol, binary=binary))


def uprobe_return(tid, ts, symbol="handle_request", binary=APP):
    return _event("ebpf", "host_function_exit", tid, ts, cpu=0, start_time=START_TIME,
                  host=_host("uretprobe", symbol, binary=binary))


# --- CUDA --------------------------------------------------------------------

def cuda_api(boundary, tid, ts, name="cudaLaunchKernel", corr=1, ctx=1, domain="runtime_api"):
    return _event("cupti_callback", "cuda_api_" + boundary, tid, ts,
                  cuda=_cuda(context_id=ctx, correlation_id=corr, runtime_correlation_id=corr,
                             callback_domain=2 if domain == "runtime_api" else 1,
                             callback_id=211),
                  attributes={"cuda_api_domain": domain, "cuda_api_name": name})


def kernel(boundary, ts, name="flash_fwd_kernel", corr=1, ctx=1, device=0, stream=7,
           clock="cupti_normalized_to_host_monotonic", ts_error=None, tid=4242):
    extra = {"start_ns": ts} if boundary == "start" else {"end_ns": ts}
    return _event("cupti_activity", "gpu_kernel_" + boundary, tid, ts, clock=clock,
                  ts_error=ts_error,
                  cuda=_cuda(device_id=device, context_id=ctx, stream_id=stream,
                             correlation_id=corr, kernel_name=name,
                             grid={"x": 128, "y": 1, "z": 1}, block={"x": 256, "y": 1, "z": 1},
                             **extra))


def nvtx(boundary, tid, ts, name="forward", range_id=1, kind="thread", start_tid=None):
    return _event("cupti_callback", "nvtx_range_" + boundary, tid, ts,
                  nvtx={"name": name, "name_complete": True, "range_kind": kind,
                        "range_id": range_id,
                        "start_tid": start_tid if start_tid is not None else tid})


# --- files -------------------------------------------------------------------

def numbered(events):
    out = []
    for i, e in enumerate(events):
        e = copy.deepcopy(e)
        e["sequence"] = i
        e["event_id"] = "evt_%d" % i
        out.append(e)
    return out


def write_jsonl(path, events, check=True):
    """Event JSONL; with check, each event must conform to event.schema.json."""
    if check:
        for e in numbered(events):
            xprobe_test.validate(e, "event")
    with open(path, "w") as f:
        for e in numbered(events):
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    return str(path)


def write_host_capture(path, events, dropped=0, record_limit_reached=False, pid=PID,
                       timed_out=False):
    doc = {
        "schema_version": "2.0",
        "ok": True,
        "session_id": "xp_linux_%d_test" % pid,
        "target": {"pid": pid, "process_start_time": START_TIME},
        "probe_id": 0,
        "captured": len(events),
        "dropped": dropped,
        "timed_out": timed_out,
        "record_limit_reached": record_limit_reached,
        "events": numbered(events),
    }
    xprobe_test.validate(doc, "host-capture")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return str(path)


def strip_identity(e):
    """An event without what a merge rewrites (session, sequence, id)."""
    e = dict(e)
    for k in ("session_id", "sequence", "event_id"):
        e.pop(k)
    return e


PYTHON = "/usr/bin/python3.11"


def gc(boundary, tid, ts, binary=PYTHON):
    """CPython GC USDT marker (python:gc__start / python:gc__done)."""
    marker = "gc__start" if boundary == "start" else "gc__done"
    return _event("ebpf", "marker", tid, ts, cpu=0, start_time=START_TIME,
                  host=_host("usdt", marker, binary=binary),
                  attributes={"usdt_provider": "python"})
