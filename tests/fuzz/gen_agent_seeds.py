#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_agent_seeds.py - the seed corpus of fuzz_agent_capture: Agent
# captures in the layout xp_capture_agent_dec_buf() reads (one or more replies,
# each a struct xprobe_agent_reply of include/xprobe/agent.h followed by
# its record packets, each behind its length as a u32), with the records of
# include/xprobe/record.h.  Valid captures of each shape (ARM then
# snapshots then STOP; ranges ending a snapshot after they began, on
# another thread; several packets per reply; a full capture; a record type
# of a later release; CUDA API calls and kernel / memcpy / memset activity,
# in the host-monotonic clock and not) and a few broken ones.
#
#   tests/fuzz/gen_agent_seeds.py tests/fuzz/corpus/fuzz_agent_capture
import os, struct, sys

OUT = sys.argv[1]
PID, START = 4242, 777
HELLO, ARM, SNAPSHOT, STOP, CLOSE = 1, 2, 3, 4, 5
IDLE, ACTIVE, LIMIT, STOPPED = 0, 1, 2, 3
F_NVTX, F_MONO = 1, 4
PUSH, POP, RSTART, REND = 1, 2, 3, 4


def rec(typ, tid, ts, aux=0, a0=0, name=None, flags=None):
    nb = name.encode() if name is not None else b""
    if flags is None:
        flags = 1 if name is not None else 0
    size = (40 + len(nb) + 7) & ~7
    hdr = struct.pack("<HHIQIHHQQ", size, typ, tid, ts, aux, flags, len(nb), a0, 0)
    return hdr + nb + b"\0" * (size - 40 - len(nb))


def reply(op, state=ACTIVE, stop=0, capacity=64, observed=0, retained=0, dropped=0,
          unknown=0, offset=0, packets=(), nrecords=0, status=0, features=F_NVTX | F_MONO,
          arm_ns=1000, message=b""):
    nbytes = sum(len(p) for p in packets)
    h = struct.pack("<8sIIIiIIIIQIIQQQQQQQQQII256s", b"XPAGREP\0", 1, op, 392, status,
                    features, state, stop, PID, START, 0, 0, arm_ns, capacity, observed,
                    retained, dropped, unknown, offset, nrecords, nbytes, len(packets), 0,
                    message)
    assert len(h) == 392
    return h + b"".join(struct.pack("<I", len(p)) + p for p in packets)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
# a whole conversation: ARM, two snapshots, STOP
a = rec(PUSH, 11, 2000, 0, name="step") + rec(RSTART, 11, 2100, a0=0x99, name="proc")
b = rec(POP, 11, 3000, 0) + rec(REND, 13, 3100, a0=0x99) + rec(PUSH, 12, 3200, 2, name="x" * 127)
c = rec(POP, 12, 4000, 2)
write("conversation",
      reply(ARM) +
      reply(SNAPSHOT, observed=2, retained=2, packets=[a], nrecords=2) +
      reply(SNAPSHOT, observed=5, retained=5, offset=2, packets=[b], nrecords=3, dropped=1) +
      reply(STOP, state=STOPPED, stop=1, observed=6, retained=6, offset=5, packets=[c],
            nrecords=1, dropped=1))
# one snapshot in three packets, nested thread ranges
p1 = rec(PUSH, 5, 10, 0, name="outer") + rec(PUSH, 5, 11, 1, name="inner")
p2 = rec(POP, 5, 12, 1)
p3 = rec(POP, 5, 13, 0) + rec(RSTART, 6, 14, a0=7, name="r") + rec(REND, 6, 15, a0=7)
write("packets", reply(SNAPSHOT, observed=6, retained=6, packets=[p1, p2, p3], nrecords=6))
# a full capture stopped at its limit
full = rec(PUSH, 5, 10, 0, name="a") + rec(POP, 5, 11, 0) + rec(PUSH, 5, 12, 0, name="a")
write("limit", reply(ARM, capacity=3) +
      reply(STOP, state=STOPPED, stop=2, capacity=3, observed=9, retained=3, dropped=6,
            packets=[full], nrecords=3))
write("limit_reached", reply(SNAPSHOT, state=LIMIT, stop=2, capacity=3, observed=3,
                             retained=3, packets=[full], nrecords=3))
# an unmatched end, an unsupported-name push, a type of a later release
odd = (rec(REND, 5, 10, a0=1234) + rec(POP, 5, 11, 4) +
       rec(PUSH, 5, 12, 0, name="", flags=2) + rec(POP, 5, 13, 0) +
       rec(200, 5, 14, name="future", flags=0))
write("odd", reply(SNAPSHOT, observed=5, retained=5, unknown=1, packets=[odd], nrecords=5))
# empty replies
write("empty", reply(ARM) + reply(SNAPSHOT) + reply(STOP, state=STOPPED, stop=1))
# broken: a record cut short, a pad, a mark, bytes left over
write("bad_cut", reply(SNAPSHOT, observed=1, retained=1, packets=[rec(POP, 5, 10)[:32]],
                       nrecords=1))
write("bad_pad", reply(SNAPSHOT, observed=1, retained=1, packets=[struct.pack("<HH", 40, 0) +
                                                                  b"\0" * 36], nrecords=1))
write("bad_mark", reply(SNAPSHOT, observed=1, retained=1,
                        packets=[rec(5, 5, 10, name="m")], nrecords=1))
write("bad_trailing", reply(ARM) + b"\0\0\0")
write("bad_status", reply(ARM, status=-4104, message=b"busy"))


# CUDA: API entry/exit, a kernel, a copy, a set (struct xprobe_cuda_activity)
API_IN, API_OUT, KERNEL, MEMCPY, MEMSET = 15, 16, 17, 18, 19
F_BACKEND = 2


def act(typ, ts, end, corr, name=None, bytes_=0, ctx=1, stream=7, rcorr=0, mkind=0, raw=0,
        value=0, grid=(0, 0, 0), block=(0, 0, 0), device=0, flags=None):
    nb = name.encode() if name is not None else b""
    if flags is None:
        flags = 1 if name is not None else 0
    size = (104 + len(nb) + 7) & ~7
    hdr = struct.pack("<HHIQIHHQQ", size, typ, 0, ts, device, flags, len(nb), end, 0)
    tail = struct.pack("<QIIIIIII3I3II", bytes_, ctx, stream, corr, rcorr, mkind, raw, value,
                       *grid, *block, 0)
    assert len(hdr + tail) == 104
    return hdr + tail + nb + b"\0" * (size - 104 - len(nb))


def api(typ, tid, ts, corr, name, domain=2, cbid=211):
    nb = name.encode()
    size = (40 + len(nb) + 7) & ~7
    hdr = struct.pack("<HHIQIHHQQ", size, typ, tid, ts, cbid, 1, len(nb), corr, domain)
    return hdr + nb + b"\0" * (size - 40 - len(nb))


cu1 = (api(API_IN, 11, 5000, 42, "cudaLaunchKernel") +
       api(API_OUT, 11, 5100, 42, "cudaLaunchKernel") +
       act(KERNEL, 5050, 9050, 42, name="gemm", grid=(4, 2, 1), block=(128, 1, 1)))
cu2 = (act(MEMCPY, 9100, 9600, 43, bytes_=4096, rcorr=44, mkind=1, raw=1) +
       act(MEMSET, 9700, 9800, 45, bytes_=64, value=0xab) +
       act(KERNEL, 9900, 9950, 46, name="k" * 127, flags=0) +
       api(API_IN, 12, 9990, 47, "cuLaunchKernel", domain=1, cbid=307))
cuda = F_NVTX | F_MONO | F_BACKEND
write("cuda",
      reply(ARM, features=cuda) +
      reply(SNAPSHOT, observed=3, retained=3, packets=[cu1], nrecords=3, features=cuda) +
      reply(STOP, state=STOPPED, stop=1, observed=7, retained=7, offset=3, packets=[cu2],
            nrecords=4, features=cuda))
# the clock check failed after the first snapshot: every activity event cupti
write("cuda_unaligned",
      reply(ARM, features=cuda) +
      reply(SNAPSHOT, observed=3, retained=3, packets=[cu1], nrecords=3, features=cuda) +
      reply(STOP, state=STOPPED, stop=1, observed=7, retained=7, offset=3, packets=[cu2],
            nrecords=4, features=F_NVTX | F_BACKEND))
# broken: an activity record with a thread, one that ends before it starts
write("bad_cuda_tid", reply(SNAPSHOT, observed=1, retained=1,
                            packets=[act(MEMSET, 10, 20, 1)[:4] + struct.pack("<I", 5) +
                                     act(MEMSET, 10, 20, 1)[8:]], nrecords=1))
write("bad_cuda_end", reply(SNAPSHOT, observed=1, retained=1,
                            packets=[act(MEMSET, 30, 20, 1)], nrecords=1))
