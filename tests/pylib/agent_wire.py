# SPDX-License-Identifier: Apache-2.0
"""The Agent's control socket from Python: the request and reply layouts
of include/xprobe/agent.h, the socket's path, and one HELLO as a second
client (the Agent serves several connections; only one may arm).

Shared by the live Agent tests (tests/live/agent_helpers.py) and the
benchmarks that watch a target's capture state from outside
(bench/bench_agent.sh, bench/bench_cuda.sh).  Standard library only.
"""
import socket
import struct

from proc_helpers import start_time

REQ = struct.Struct("<8sIIIIQQII")  # then two 152-byte filters
REQ_SIZE = 352
REPLY = struct.Struct("<8sIIIiIIIIQIIQQQQQQQQQII256s")
REPLY_SIZE = 392
assert REPLY.size == REPLY_SIZE
# fields of REPLY.unpack(): [4] status, [5] features, [6] state, [7]
# stop_reason, [8] pid, [9] start_time, [12] arm_ns, [13] capacity, ...
STATE = {0: "idle", 1: "active", 2: "limit_reached", 3: "stopped", 4: "failed"}


def socket_path(pid, uid=0):
    """Where the Agent of @pid (run by @uid) listens."""
    return "/tmp/xprobe-agent-%d/agent-%d-%d.sock" % (uid, pid, start_time(pid))


def hello_bytes(path, timeout=None):
    """One HELLO over the socket at @path: the reply packet as received."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.settimeout(timeout)
        s.connect(path)
        req = REQ.pack(b"XPAGREQ\0", 1, 1, REQ_SIZE, 0, 0, 0, 0, 0)
        s.send(req + b"\0" * (REQ_SIZE - len(req)))
        return s.recv(4096)
    finally:
        s.close()
