#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds for fuzz_cupti_walk (tests/fuzz/fuzz_cupti_walk.c): activity
buffers in CUPTI's struct layouts (CUpti_ActivityKernel9/10, Memcpy5/6,
Memset3/4 of the installed headers: the offsets test_lib_cupti checks)
with the record pointers the walker is handed.  Input: version index,
record count, u32 offsets, then the buffer.

Usage: tests/fuzz/gen_cupti_seeds.py [OUT_DIR]
"""
import os
import struct
import sys

KERNEL, CONC_KERNEL, MEMCPY, MEMSET, RUNTIME = 3, 10, 1, 2, 5


def kernel(kind=CONC_KERNEL, size=216, start=1000, end=2000, dev=0, corr=7):
    b = bytearray(size)
    struct.pack_into("<I", b, 0, kind)
    struct.pack_into("<QQ", b, 16, start, end)
    struct.pack_into("<III", b, 40, dev, 1, 3)
    struct.pack_into("<iiiiii", b, 52, 4, 2, 1, 128, 1, 1)
    struct.pack_into("<I", b, 92, corr)
    return bytes(b)


def memcpy(size=96, copy=1, nbytes=4096, start=10, end=20):
    b = bytearray(size)
    struct.pack_into("<IB", b, 0, MEMCPY, copy)
    struct.pack_into("<QQQ", b, 8, nbytes, start, end)
    struct.pack_into("<IIIII", b, 32, 0, 1, 2, 5, 6)
    return bytes(b)


def memset(size=88, value=7, nbytes=64, start=10, end=30):
    b = bytearray(size)
    struct.pack_into("<II", b, 0, MEMSET, value)
    struct.pack_into("<QQQ", b, 8, nbytes, start, end)
    return bytes(b)


def unknown(size=48):
    b = bytearray(size)
    struct.pack_into("<I", b, 0, RUNTIME)
    return bytes(b)


def seed(version, recs, extra_offs=()):
    buf = b""
    offs = []
    for r in recs:
        offs.append(len(buf))
        buf += r
    offs += list(extra_offs)
    return bytes([version, len(offs)]) + b"".join(struct.pack("<I", o) for o in offs) + buf


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_cupti_walk")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "v13_kernels": seed(5, [kernel(), kernel(corr=8), kernel(kind=KERNEL)]),
        "v13_mixed": seed(5, [kernel(), memcpy(), memset(), unknown(), memcpy(copy=2)]),
        "v12_kernel9": seed(3, [kernel(size=208), memcpy(), memset()]),
        "v12_old_copy": seed(1, [memcpy(size=88), memset(size=80)]),
        "outside": seed(5, [kernel()], extra_offs=(1 << 20,)),
        "misaligned": seed(5, [kernel()], extra_offs=(4,)),
        "cut": seed(5, [kernel()], extra_offs=(150,)),
        "null": seed(5, [kernel()], extra_offs=(0xFFFFFFFF,)),
        "refused_v11": seed(6, [kernel(), memcpy()]),
        "refused_newer": seed(7, [kernel()]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
