#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generate demo/mmap.jsonl, the bundled capture of `make demo`.

The file is what xprobe's eBPF syscall collector records for
`--from syscall:mmap:entry --to syscall:mmap:exit` on one process with
three threads: Event JSONL (docs/event-model.md), entries with the six
scalar argument registers (rdi, rsi, rdx, r10, r8, r9 = addr, length,
prot, flags, fd, offset), exits with the return value.  The workload is
modelled on an allocator-heavy service:

  - the main thread maps shared libraries and data files read-only
    (fd 3..9, PROT_READ, MAP_PRIVATE), a few pages to a few MiB;
  - two worker threads grow their heaps with anonymous mappings
    (fd -1, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS), 64 KiB to
    64 MiB; bigger mappings take longer, and a few calls wait on the
    process's mmap lock held by a sibling thread (tens of microseconds);
  - one anonymous 1 TiB reservation fails with -ENOMEM (-12);
  - collection was armed while one worker was inside mmap (an exit with
    no entry) and stopped while another was (an entry with no exit), the
    startup/shutdown slack a live capture has.

Timestamps are CLOCK_MONOTONIC nanoseconds.  The generator is seeded, so
the file is reproducible: rerun it after changing the model and commit
both.  Usage: demo/make_demo_capture.py [OUTPUT]
"""
import json
import os
import random
import sys

PID = 31337
START_TIME = 1843390          # /proc/<pid>/stat field 22, clock ticks
THREADS = (31337, 31352, 31353)
CALLS = 150                   # complete entry/exit pairs
MAP_PRIVATE, MAP_ANONYMOUS = 0x02, 0x20
PROT_READ, PROT_WRITE = 0x1, 0x2
U64 = (1 << 64) - 1


def event(kind, tid, ts, cpu, args=None, ret=None):
    return {
        "schema_version": "2.0",
        "session_id": "xp_linux_%d_demo" % PID,
        "event_id": None,  # numbered after sorting
        "sequence": None,
        "source": "ebpf",
        "event_type": kind,
        "pid": PID,
        "tid": tid,
        "cpu": cpu,
        "timestamp_raw": ts,
        "timestamp_ns": ts,
        "clock_domain": "host_monotonic",
        "timestamp_error_ns": None,
        "process_start_time": START_TIME,
        "host": {
            "probe_kind": "syscall",
            "binary_path": None,
            "build_id": None,
            "symbol": "mmap",
            "symbol_demangled": None,
            "offset": None,
            "return_value": ret,
            "arguments": [
                {"index": i, "abi_type": "u64", "value": v, "read_error": None}
                for i, v in enumerate(args or [])
            ],
        },
        "cuda": None,
        "nvtx": None,
        "attributes": {"tracepoint_category": "syscalls"},
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "mmap.jsonl")
    rng = random.Random(20240611)
    events = []
    clock = 18_234_567_890_123        # ns since boot
    next_free = {t: clock for t in THREADS}
    next_addr = 0x7F3A_2C00_0000

    # Armed while worker 31352 was already inside mmap: an orphan exit.
    events.append(event("syscall_exit", THREADS[1], clock + 2_417, 1,
                        ret=0x7F3A_4000_0000))
    next_free[THREADS[1]] = clock + 5_000

    enomem_at = rng.randrange(30, 90)
    for i in range(CALLS):
        tid = THREADS[0] if rng.random() < 0.3 else rng.choice(THREADS[1:])
        ts = max(next_free[tid], clock) + rng.randint(8_000, 220_000)
        clock = ts
        cpu = rng.randint(0, 3)
        if tid == THREADS[0]:
            length = 4096 * rng.choice((1, 2, 4, 16, 64, 256, 1024))
            args = [0, length, PROT_READ, MAP_PRIVATE, rng.randint(3, 9), 0]
            base = 1_900
        else:
            length = 65536 * rng.choice((1, 2, 4, 16, 32, 64, 256, 1024))
            args = [0, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    U64, 0]   # fd -1 as the unsigned register value
            base = 2_600
        # VMA setup is mostly constant; large anonymous mappings pay a
        # little more; 4% of calls wait for the mmap lock.
        dur = base + int(rng.lognormvariate(6.4, 0.45)) + length // 65536 * 3
        if rng.random() < 0.04:
            dur += rng.randint(18_000, 95_000)
        ret = next_addr
        next_addr += (length + 0xFFFF) & ~0xFFFF
        if i == enomem_at:
            args = [0, 1 << 40, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, U64, 0]
            dur = 3_950
            ret = -12
        events.append(event("syscall_entry", tid, ts, cpu, args=args))
        exit_cpu = cpu if rng.random() < 0.9 else rng.randint(0, 3)
        events.append(event("syscall_exit", tid, ts + dur, exit_cpu, ret=ret))
        next_free[tid] = ts + dur

    # Stopped while worker 31353 was inside mmap: an entry with no exit.
    clock += rng.randint(20_000, 60_000)
    events.append(event("syscall_entry", THREADS[2], clock, 2,
                        args=[0, 2 << 20, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, U64, 0]))

    events.sort(key=lambda e: e["timestamp_ns"])
    with open(out, "w") as f:
        for seq, e in enumerate(events):
            e["sequence"] = seq
            e["event_id"] = "evt_%d" % seq
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    print("wrote %d events (%d complete mmap calls) to %s" % (len(events), CALLS, out))


if __name__ == "__main__":
    main()
