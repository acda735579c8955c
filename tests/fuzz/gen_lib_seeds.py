#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen_lib_seeds.py - make the seed corpora of fuzz_rings_recover and
# fuzz_session_read from real sessions: libxprobe.so driven through ctypes
# in forked children (a child that _exits without stop leaves its ring file
# LIVE, as a killed process does).
#
#   tests/fuzz/gen_lib_seeds.py BUILD/lib/libxprobe.so tests/fuzz/corpus
#
# fuzz_rings_recover seeds are a ring file's parts (header, the used rings'
# controls, each ring's bytes from tail to head; tests/fuzz/xtf_fuzz_util.h
# lays them out again); fuzz_session_read seeds are the little archive its
# header describes ([u8 name][u16 length][bytes] per file).
import ctypes, os, struct, sys, glob, shutil

LIB = sys.argv[1]
OUT = sys.argv[2]
lib = ctypes.CDLL(LIB)
vp = ctypes.c_void_p

class BOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("sim_cores", ctypes.c_uint32),
                ("sim_records_per_exec", ctypes.c_uint32)]

def cfg(base, ring_events=1024, threads=4, acts=("system_profile",), mode=0, onfail=False, backend=False):
    c = vp()
    assert lib.xprobe_inspect_config_new(ctypes.byref(c)) == 0
    lib.xprobe_inspect_config_set_output_dir(c, base.encode())
    lib.xprobe_inspect_config_set_instance_id(c, b"seed")
    lib.xprobe_inspect_config_set_activity(c, b"all", False)
    for a in acts:
        lib.xprobe_inspect_config_set_activity(c, a.encode(), True)
    lib.xprobe_inspect_config_set_ring_events(c, ctypes.c_uint64(ring_events))
    lib.xprobe_inspect_config_set_max_threads(c, ctypes.c_uint32(threads))
    lib.xprobe_inspect_config_set_monitor_period_ms(c, ctypes.c_uint32(10))
    if backend:
        # sz covers only the fields set: older-caller convention, rest default
        o = BOpts(ctypes.sizeof(BOpts), 2, 2)
        assert lib.xprobe_inspect_config_set_backend(c, b"sim", ctypes.byref(o)) == 0
    if mode:
        lib.xprobe_inspect_config_set_device_profile_mode(c, mode)
    if onfail:
        lib.xprobe_inspect_config_set_enable_on_fail(c, True)
    return c

def session(base, body, kill=False, **kw):
    pid = os.fork()
    if pid == 0:
        c = cfg(base, **kw)
        rc = lib.xprobe_inspect_begin_with_options(c)
        if rc:
            os._exit(3)
        body()
        if kill:
            os._exit(0)  # no stop: the ring file stays LIVE
        lib.xprobe_inspect_close()
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    assert st == 0, st
    d = glob.glob(base + "/*/*")
    assert len(d) == 1, d
    return d[0]

def rec(n, t=1):
    for i in range(n):
        lib.xprobe_trace_record(ctypes.c_uint32(t), ctypes.c_uint64(i), ctypes.c_uint64(i * 3))
    lib.xprobe_trace_mark(b"seed mark")

def execs(model, statuses):
    for stt in statuses:
        eid = ctypes.c_uint64()
        assert lib.xprobe_execution_begin(model, ctypes.byref(eid)) == 0
        lib.xprobe_execution_end(eid, stt)

def ring_parts(path):
    b = open(path, "rb").read()
    hdr = b[:200]
    ring_bytes, = struct.unpack_from("<Q", hdr, 16)
    max_rings, = struct.unpack_from("<I", hdr, 24)
    used, = struct.unpack_from("<I", hdr, 100)
    data_off = (4096 + max_rings * 64 + 4095) & ~4095
    used = min(used, max_rings, 16)
    ctl = b[4096:4096 + used * 64]
    data = b""
    for i in range(used):
        head, tail = struct.unpack_from("<QQ", ctl, i * 64)
        n = min(head - tail, ring_bytes)
        at = tail % ring_bytes
        base = data_off + i * ring_bytes
        if at + n <= ring_bytes:
            data += b[base + at:base + at + n]
        else:
            data += b[base + at:base + ring_bytes] + b[base:base + n - (ring_bytes - at)]
    return hdr + ctl + data

NAMES = ["trace_info.pb", "ntrace.pb", "cpu_util.pb", "host_mem.pb",
         "profile_dev_0_session_1.xtf", "profile_dev_1_session_1.xtf", "net_exec_1.xtf",
         "on_fail/net_exec_2.xtf", "host_rings.live", "stray.xtf", "user.xtf",
         "ntrace.pb.tmp.1.abc"]

def archive(d, rename=None):
    out = b""
    for root, _, files in os.walk(d):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), d)
            name = (rename or {}).get(rel, rel)
            if name not in NAMES:
                continue
            data = ring_parts(os.path.join(root, f)) if name == "host_rings.live" else open(os.path.join(root, f), "rb").read()
            assert len(data) < 65536, (rel, len(data))
            out += bytes([NAMES.index(name)]) + struct.pack("<H", len(data)) + data
    return out

work = OUT + "/work"
shutil.rmtree(work, ignore_errors=True)
os.makedirs(OUT + "/fuzz_rings_recover", exist_ok=True)
os.makedirs(OUT + "/fuzz_session_read", exist_ok=True)

# killed sessions: ring files (TSC and clock_gettime), one and three threads
import threading
def three_threads():
    ts = [threading.Thread(target=rec, args=(40, k)) for k in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    rec(30)
for tag, clock, body in (("one_ring_tsc", "tsc", lambda: rec(60)),
                         ("three_rings_tsc", "tsc", three_threads),
                         ("one_ring_monotonic", "monotonic", lambda: rec(60))):
    os.environ["XPROBE_INSPECT_CLOCK"] = clock
    d = session(f"{work}/{tag}", body, kill=True)
    open(f"{OUT}/fuzz_rings_recover/{tag}", "wb").write(ring_parts(d + "/host_rings.live"))
os.environ.pop("XPROBE_INSPECT_CLOCK")

# a wrapped ring: ring 0 of one_ring_tsc moved to end 16 bytes before the
# ring's end with a 16-byte pad first (what the producer writes at a wrap)
p = open(f"{OUT}/fuzz_rings_recover/one_ring_tsc", "rb").read()
hdr, ctl, data = bytearray(p[:200]), bytearray(p[200:264]), p[264:]
rb, = struct.unpack_from("<Q", hdr, 16)
tail = 3 * rb - 16  # positions only grow: the third lap
pad = struct.pack("<HHI", 16, 0, 0) + bytes(8)
struct.pack_into("<QQ", ctl, 0, tail + 16 + len(data), tail)
open(f"{OUT}/fuzz_rings_recover/wrapped_ring", "wb").write(bytes(hdr + ctl) + pad + data)

# sessions for the directory reader
d = session(f"{work}/stopped", lambda: (rec(50), execs(b"net", [0])), acts=("system_profile", "cpu_util", "host_memory"), backend=True, mode=2)
open(f"{OUT}/fuzz_session_read/stopped", "wb").write(archive(d))
d = session(f"{work}/killed", lambda: (rec(50), execs(b"net", [0])), kill=True, backend=True, mode=1)
open(f"{OUT}/fuzz_session_read/killed", "wb").write(archive(d))
d = session(f"{work}/onfail", lambda: (rec(20), execs(b"net", [0, 5])), backend=True, onfail=True)
open(f"{OUT}/fuzz_session_read/on_fail", "wb").write(archive(d))
shutil.rmtree(work)
for k in ("fuzz_rings_recover", "fuzz_session_read"):
    for f in sorted(os.listdir(f"{OUT}/{k}")):
        print(k, f, os.path.getsize(f"{OUT}/{k}/{f}"))
