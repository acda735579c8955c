#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_agent_agg_seeds.py - the seed corpus of fuzz_agent_aggregate: the
# Agent's AGGREGATE captures in the layout xp_capture_agg_dec_buf() reads (one or
# more replies, each a struct xprobe_agent_reply of include/xprobe/agent.h
# followed by its packets of struct xprobe_agent_group, each packet behind
# its length as a u32): a table of kernels, copies and sets; a snapshot
# then a STOP that re-sends grown groups; an empty window; a full table;
# and broken ones (two groups of one key, a group that shrank, a packet
# cut inside a group).
#
#   tests/fuzz/gen_agent_agg_seeds.py tests/fuzz/corpus/fuzz_agent_aggregate
import os, struct, sys

OUT = sys.argv[1]
PID, START = 4242, 777
ARM, SNAPSHOT, STOP = 2, 3, 4
ACTIVE, LIMIT, STOPPED = 1, 2, 3
KERNEL, MEMCPY, MEMSET = 3, 4, 5
UNKNOWN = 0xffffffff


def group(kind, count, mn, mx, total, device=0, mkind=0, name=None, complete=True, nbytes=0):
    nb = name.encode() if name is not None else b""
    flags = 1 if (name is not None and complete) else 0
    g = struct.pack("<QQQQQIIIHH", count, total, mn, mx, nbytes, kind, device, mkind, flags,
                    len(nb)) + nb + b"\0" * (128 - len(nb))
    assert len(g) == 184
    return g


def reply(op, groups=(), offset=0, observed=0, dropped=0, state=ACTIVE, stop=0, capacity=16,
          packets=None):
    if packets is None:
        packets = [b"".join(groups)] if groups else []
    n = sum(len(p) for p in packets) // 184
    retained = offset + n if op != ARM else 0
    h = struct.pack("<8sIIIiIIIIQIIQQQQQQQQQII256s", b"XPAGREP\0", 1, op, 392, 0, 6, state,
                    stop, PID, START, 13, 13, 1000, capacity, observed, retained, dropped, 0,
                    offset, n if op != ARM else 0, sum(len(p) for p in packets), len(packets),
                    0, b"")
    assert len(h) == 392
    return h + b"".join(struct.pack("<I", len(p)) + p for p in packets)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
table = [group(KERNEL, 5, 100, 300, 1000, name="gemm"),
         group(KERNEL, 1, 7, 7, 7, name="k" * 127, complete=False),
         group(MEMCPY, 3, 10, 30, 60, device=1, mkind=1, nbytes=12288),
         group(MEMSET, 2, 5, 6, 11, device=UNKNOWN, nbytes=128)]
write("table", reply(ARM) + reply(STOP, table, observed=11, state=STOPPED, stop=1,
                                   packets=[table[0] + table[1], table[2] + table[3]]))
g1 = group(KERNEL, 2, 100, 100, 200, name="a")
g1b = group(KERNEL, 4, 90, 100, 390, name="a")
g2 = group(KERNEL, 3, 10, 20, 45, name="b")
g3 = group(MEMSET, 2, 1, 1, 2, nbytes=8)
write("grown", reply(ARM) + reply(SNAPSHOT, [g1, g2], observed=5) +
      reply(STOP, [g1b, g2, g3], observed=9, state=STOPPED, stop=1))
write("empty", reply(ARM) + reply(STOP, observed=0, state=STOPPED, stop=1))
write("full", reply(ARM, capacity=2) +
      reply(STOP, [g1, group(KERNEL, 2, 1, 1, 2, name="c")], observed=7, dropped=3,
            state=STOPPED, stop=2, capacity=2))
write("bad_dup", reply(ARM) + reply(STOP, [g1, g1], observed=4, state=STOPPED, stop=1))
write("bad_shrunk", reply(ARM) + reply(SNAPSHOT, [g1b], observed=4) +
      reply(STOP, [g1], observed=4, state=STOPPED, stop=1))
write("bad_cut", reply(ARM) + reply(STOP, observed=2, state=STOPPED, stop=1,
                                    packets=[g1[:100]]))
