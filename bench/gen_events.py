#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""gen_events.py - write a synthetic Event JSONL capture for bench_decode.sh.

The capture is what `xprobe measure --events-out` writes for a uprobe pair:
the entry and the return of one C++ function (`handle_request`) in one
binary, called by several threads of one process, one compact Event
document per line in timestamp order, every optional field present (null
where the producer has nothing).  Each call contributes two events, so the
file holds exactly --events events (rounded down to an even number).

Latencies are deterministic (a per-thread pattern), so two runs of the
generator produce byte-identical files.
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--pid", type=int, default=4242)
    ap.add_argument("--start-time", type=int, default=987654)
    ap.add_argument("--binary", default="/srv/app/bin/server")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    pairs = a.events // 2
    sym = "_ZN3app6Server14handle_requestERKNS_7RequestE"
    dem = "app::Server::handle_request(app::Request const&)"
    head = ('{"schema_version":"2.0","session_id":"xp_measure_%d","event_id":"evt_%%d",'
            '"sequence":%%d,"source":"ebpf","event_type":"%%s","pid":%d,"tid":%%d,'
            '"cpu":%%d,"timestamp_raw":%%d,"timestamp_ns":%%d,"clock_domain":"host_monotonic",'
            '"timestamp_error_ns":null,"process_start_time":%d,"host":{"probe_kind":"%%s",'
            '"binary_path":"%s","build_id":null,"symbol":"%s","symbol_demangled":"%s",'
            '"offset":null,"return_value":null,"arguments":[]},"cuda":null,"nvtx":null,'
            '"attributes":{}}\n') % (a.pid + 1000, a.pid, a.start_time, a.binary, sym, dem)
    # Each thread runs calls back to back; threads start staggered, so the
    # merged timeline interleaves them.  Events are written in timestamp
    # order, as an --events-out export is.
    t0 = 1_000_000_000_000
    per = pairs // a.threads
    extra = pairs - per * a.threads
    evs = []
    for i in range(a.threads):
        clock = t0 + 137 * i
        tid = a.pid + 1 + i
        cpu = i % 2
        for r in range(per + (1 if i < extra else 0)):
            lat = 800 + ((r * 7919 + i * 104729) % 5000)
            evs.append((clock, tid, cpu, 0))
            evs.append((clock + lat, tid, cpu, 1))
            clock += lat + 200 + (r + i) % 300
    evs.sort()
    kinds = (("host_function_entry", "uprobe"), ("host_function_exit", "uretprobe"))
    w = open(a.out, "w")
    out = []
    for seq, (ts, tid, cpu, k) in enumerate(evs):
        et, pk = kinds[k]
        out.append(head % (seq, seq, et, tid, cpu, ts, ts, pk))
        if len(out) >= 20000:
            w.write("".join(out))
            out.clear()
    seq = len(evs)
    w.write("".join(out))
    w.close()
    print(seq, file=sys.stderr)


if __name__ == "__main__":
    main()
