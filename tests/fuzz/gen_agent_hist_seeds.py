#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_agent_hist_seeds.py - the seed corpus of fuzz_agent_histogram: the
# Agent's HISTOGRAM captures in the layout xp_capture_hist_dec_buf() reads
# (replies, each a struct xprobe_agent_reply of include/xprobe/agent.h with
# mode 2, followed by its packets of 8048-byte struct xprobe_agent_hist,
# each packet behind its length as a u32): the total and kernel groups by
# name; a snapshot then a STOP whose histograms grew; an empty window; and
# broken ones (a count that is not its buckets' sum, a group that shrank, a
# packet cut inside a histogram).
#
#   tests/fuzz/gen_agent_hist_seeds.py tests/fuzz/corpus/fuzz_agent_histogram
import os, struct, sys

OUT = sys.argv[1]
PID, START = 4242, 777
ARM, SNAPSHOT, STOP = 2, 3, 4
ACTIVE, STOPPED = 1, 3
KERNEL = 3
NB = 976
SIZE = 240 + 8 * NB


def bucket(v):
    if v < 16:
        return v
    k = v.bit_length() - 1
    return (k - 3) * 16 + ((v >> (k - 4)) & 15)


def hist(values, total=False, name=None, counters=(0,) * 8):
    b = [0] * NB
    for v in values:
        b[bucket(v)] += 1
    nb = name.encode() if name else b""
    flags = 1 if total else 2 if name else 0
    h = struct.pack("<QQQQQIHH", len(values), sum(values), min(values) if values else 0,
                    max(values) if values else 0, 0, 0 if total else KERNEL, flags, len(nb))
    h += nb + b"\0" * (128 - len(nb)) + struct.pack("<8Q", *counters) + struct.pack(
        "<%dQ" % NB, *b)
    assert len(h) == SIZE
    return h


def reply(op, hists=(), observed=0, state=ACTIVE, stop=0, capacity=9, packets=None):
    if packets is None:
        packets = [b"".join(hists[i:i + 8]) for i in range(0, len(hists), 8)]
    n = sum(len(p) for p in packets) // SIZE
    retained = n if op != ARM else 1
    h = struct.pack("<8sIIIiIIIIQIIQQQQQQQQQII256s", b"XPAGREP\0", 1, op, 392, 0, 6, state,
                    stop, PID, START, 0, 0, 1000, capacity, observed, retained, 0, 0,
                    0, n if op != ARM else 0, sum(len(p) for p in packets), len(packets),
                    2, b"")
    assert len(h) == 392
    return h + b"".join(struct.pack("<I", len(p)) + p for p in packets)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
a, b = [1000] * 5, [20, 30, 5000]
write("table", reply(ARM) + reply(STOP, [hist(a + b, True), hist(a, name="gemm"),
                                         hist(b, name="k" * 127)],
                                  observed=8, state=STOPPED, stop=1))
write("grown", reply(ARM) + reply(SNAPSHOT, [hist(a, True), hist(a, name="gemm")], observed=5) +
      reply(STOP, [hist(a + b, True), hist(a + [7], name="gemm"), hist(b, name="x")],
            observed=9, state=STOPPED, stop=1))
write("empty", reply(ARM) + reply(STOP, [hist([], True)], state=STOPPED, stop=1))
bad = bytearray(hist(a, name="gemm"))
bad[0] = 9
write("bad_count", reply(ARM) + reply(STOP, [hist(a, True), bytes(bad)], observed=5,
                                      state=STOPPED, stop=1))
write("bad_shrunk", reply(ARM) + reply(SNAPSHOT, [hist(a, True)], observed=5) +
      reply(STOP, [hist(a[:2], True)], observed=5, state=STOPPED, stop=1))
write("bad_cut", reply(ARM) + reply(STOP, state=STOPPED, stop=1,
                                    packets=[hist(a, True)[:1000]]))
