#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""gen_events.py - write a synthetic Event JSONL capture for bench_decode.sh.

The capture is what `xprobe measure --events-out` writes for one pair of
endpoints in one process with several threads: one compact Event document
per line, in timestamp order, every optional field present (null where the
producer has nothing), exactly --events events (rounded down to even).

  --kind uprobe   the entry and return of one C++ function (host_function_
                  entry/exit, probe_kind uprobe/uretprobe, mangled and
                  demangled symbol); pairs with first-after/stack-nested.
  --kind syscall  read(2) entry (six u64 arguments) and exit (return value),
                  attributes {"tracepoint_category":"syscalls"}; pairs with
                  exact (the tid lifecycle).

--style canonical (the default) writes exactly what src/model/event_json.c
(and the reference's serde export) writes: the decoder's fast path takes
every line.  --style spaced writes the same documents with a space after
every ',' and ':' (json.dumps' default separators), which the fast path
declines at the first key, so bench_decode.sh can time the simdjson path
too.

Latencies follow a deterministic per-thread pattern, so two runs produce
byte-identical files.  Prints the event count on stderr.
"""
import argparse
import sys


def spaced(template):
    """A space after every ',' and ':' outside strings (the templates'
    strings hold no quote or backslash)."""
    out, in_str = [], False
    for ch in template:
        out.append(ch)
        if ch == '"':
            in_str = not in_str
        elif ch in ",:" and not in_str:
            out.append(" ")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--pid", type=int, default=4242)
    ap.add_argument("--start-time", type=int, default=987654)
    ap.add_argument("--binary", default="/srv/app/bin/server")
    ap.add_argument("--kind", choices=("uprobe", "syscall"), default="uprobe")
    ap.add_argument("--style", choices=("canonical", "spaced"), default="canonical")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    pairs = a.events // 2
    common = ('{"schema_version":"2.0","session_id":"xp_measure_%d","event_id":"evt_%%d",'
              '"sequence":%%d,"source":"ebpf","event_type":"%%s","pid":%d,"tid":%%d,'
              '"cpu":%%d,"timestamp_raw":%%d,"timestamp_ns":%%d,"clock_domain":"host_monotonic",'
              '"timestamp_error_ns":null,"process_start_time":%d,') % (
                  a.pid + 1000, a.pid, a.start_time)
    if a.kind == "uprobe":
        sym = "_ZN3app6Server14handle_requestERKNS_7RequestE"
        dem = "app::Server::handle_request(app::Request const&)"
        host = ('"host":{"probe_kind":"%s","binary_path":"' + a.binary + '","build_id":null,'
                '"symbol":"' + sym + '","symbol_demangled":"' + dem + '","offset":null,'
                '"return_value":null,"arguments":[]},"cuda":null,"nvtx":null,"attributes":{}}\n')
        entry = (common + host % "uprobe").replace("%%", "%")
        exit_ = (common + host % "uretprobe").replace("%%", "%")
        kinds = (("host_function_entry", entry), ("host_function_exit", exit_))
    else:
        args = ",".join('{"index":%d,"abi_type":"u64","value":%%d,"read_error":null}' % i
                        for i in range(6))
        entry = (common + '"host":{"probe_kind":"syscall","binary_path":null,"build_id":null,'
                 '"symbol":"read","symbol_demangled":null,"offset":null,"return_value":null,'
                 '"arguments":[' + args + ']},"cuda":null,"nvtx":null,'
                 '"attributes":{"tracepoint_category":"syscalls"}}\n').replace("%%", "%")
        exit_ = (common + '"host":{"probe_kind":"syscall","binary_path":null,"build_id":null,'
                 '"symbol":"read","symbol_demangled":null,"offset":null,"return_value":%d,'
                 '"arguments":[]},"cuda":null,"nvtx":null,'
                 '"attributes":{"tracepoint_category":"syscalls"}}\n').replace("%%", "%")
        kinds = (("syscall_entry", entry), ("syscall_exit", exit_))
    if a.style == "spaced":
        kinds = tuple((et, spaced(t)) for et, t in kinds)

    # Each thread makes calls back to back; threads start staggered, so the
    # merged timeline interleaves them.
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
            evs.append((clock, tid, cpu, 0, r))
            evs.append((clock + lat, tid, cpu, 1, r))
            clock += lat + 200 + (r + i) % 300
    evs.sort()
    out = []
    with open(a.out, "w") as w:
        for seq, (ts, tid, cpu, k, r) in enumerate(evs):
            et, tmpl = kinds[k]
            if a.kind == "uprobe":
                out.append(tmpl % (seq, seq, et, tid, cpu, ts, ts))
            elif k == 0:
                # each thread reads into one of its two buffers
                out.append(tmpl % (seq, seq, et, tid, cpu, ts, ts, 3 + tid % 5,
                                   140737488355328 + (tid % 64) * 65536 + (r % 2) * 4096,
                                   4096, 0, 0, 0))
            else:
                out.append(tmpl % (seq, seq, et, tid, cpu, ts, ts, 4096 - (r % 3) * 17))
            if len(out) >= 20000:
                w.write("".join(out))
                out.clear()
        w.write("".join(out))
    print(len(evs), file=sys.stderr)


if __name__ == "__main__":
    main()
