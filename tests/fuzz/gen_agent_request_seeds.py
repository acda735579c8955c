#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_agent_request_seeds.py - the seed corpus of tests/fuzz/fuzz_agent_request.c:
well-formed requests of every op (and a few near misses) in both of the
target's input forms (a leading even byte: the raw packet; odd: op byte +
the bytes from offset 20 on).  Written from include/xprobe/agent.h.

    tests/fuzz/gen_agent_request_seeds.py [DIR]   (default: corpus/fuzz_agent_request)
"""
import os
import struct
import sys

HELLO, ARM, SNAPSHOT, STOP, CLOSE = 1, 2, 3, 4, 5


def filt(kind, match=0, name=b"", domain=0, memcpy=0):
    b = bytearray(152)
    struct.pack_into("<IIIIII", b, 0, kind, domain, memcpy, match, len(name), 0)
    b[24:24 + len(name)] = name
    return bytes(b)


def req(op, mode=0, cap=0, off=0, filters=()):
    b = bytearray(352)
    b[0:8] = b"XPAGREQ\0"
    struct.pack_into("<IIIIQQII", b, 8, 1, op, 352, mode, cap, off, len(filters), 0)
    for i, f in enumerate(filters):
        b[48 + 152 * i:48 + 152 * (i + 1)] = f
    return bytes(b)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus",
                                                             "fuzz_agent_request")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "hello": req(HELLO),
        "arm_exact": req(ARM, 0, 100000, 0, [filt(1, 1, b"step")]),
        "arm_two": req(ARM, 0, 16 * 1024 * 1024, 0,
                       [filt(1, 2, b"forward"), filt(1, 3, b"backward")]),
        "arm_any": req(ARM, 0, 1, 0, [filt(1, 0)]),
        "arm_contains_long": req(ARM, 0, 1000, 0, [filt(1, 4, b"k" * 127)]),
        "arm_cuda": req(ARM, 0, 500, 0, [filt(2, 1, b"cudaLaunchKernel", domain=2),
                                         filt(4, memcpy=1)]),
        "arm_aggregate": req(ARM, 1, 64, 0, [filt(3, 2, b"gemm"), filt(5)]),
        "snapshot": req(SNAPSHOT, off=12345),
        "stop": req(STOP, off=7),
        "close": req(CLOSE),
        "bad_garbage_after_name": req(ARM, 0, 10, 0, [filt(1, 1, b"ab") [:30] + b"z" +
                                                      bytes(121)]),
    }
    for name, r in seeds.items():
        with open(os.path.join(out, name + ".raw"), "wb") as f:
            f.write(b"\0" + r)
        with open(os.path.join(out, name + ".ovl"), "wb") as f:
            f.write(b"\1" + bytes([r[12]]) + r[20:])
    with open(os.path.join(out, "short.raw"), "wb") as f:
        f.write(b"\0" + req(HELLO)[:100])


if __name__ == "__main__":
    main()
