#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_agent_file_seeds.py - the seed corpus of fuzz_agent_file: real saved
# Agent captures, written by libxprobe itself (tests/fixtures/live_nvtx
# under NVTX_INJECTION64_PATH with XPROBE_AGENT_OUTPUT), in each shape
# (thread ranges with every name, process ranges ended on another thread,
# the Ex forms, a full capture, one written on SIGTERM, an empty one),
# then broken variants of one of them (cut, grown, another version, a
# packet count off by one, a record's size, its name padding).
#
#   tests/fuzz/gen_agent_file_seeds.py BUILD_DIR tests/fuzz/corpus/fuzz_agent_file
import os, shutil, signal, struct, subprocess, sys, tempfile

BUILD, OUT = sys.argv[1], sys.argv[2]
LIB = os.path.join(BUILD, "lib", "libxprobe.so")
FX = os.path.join(BUILD, "tests", "fixtures", "live_nvtx")
HEADER = 424


def record(name, mode, iters, env=None, kill=None, go=True):
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "cap")
    e = dict(os.environ, NVTX_INJECTION64_PATH=LIB, XPROBE_AGENT_OUTPUT=path)
    e.update(env or {})
    p = subprocess.Popen([FX, "--mode", mode, "--iters", str(iters), "--work-us", "10"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=e)
    p.stdout.readline()  # ready
    if go:
        p.stdin.write("go\n")
        p.stdin.flush()
        p.stdout.readline()  # done
    if kill:
        p.send_signal(kill)
        p.wait()
    else:
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait()
    with open(path, "rb") as f:
        data = f.read()
    shutil.rmtree(tmp)
    write(name, data)
    return data


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
thread = record("thread", "thread", 3)
record("process", "process", 3)
record("ex", "ex", 2)
record("full", "thread", 5, env={"XPROBE_AGENT_MAX_RECORDS": "7"})
record("sigterm", "nested", 2, kill=signal.SIGTERM)
record("empty", "thread", 1, go=False)

# broken variants of the thread capture
write("bad_cut", thread[:-8])
write("bad_grown", thread + thread[HEADER:HEADER + 48])
write("bad_version", thread[:8] + struct.pack("<I", 2) + thread[12:])
nchunks_at = 32 + 128
n = struct.unpack_from("<I", thread, nchunks_at)[0]
write("bad_nchunks", thread[:nchunks_at] + struct.pack("<I", n + 1) + thread[nchunks_at + 4:])
write("bad_record_size", thread[:HEADER] + struct.pack("<H", 44) + thread[HEADER + 2:])
name_pad = HEADER + 40 + 5  # "step" is 4 bytes: padding after it
write("bad_padding", thread[:name_pad] + b"x" + thread[name_pad + 1:])
