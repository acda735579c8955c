# SPDX-License-Identifier: Apache-2.0
"""A probe must never corrupt the target (issue 9, section 2): a
`uprobe:<bin>:+0x<offset>` selector is refused unless the offset starts an
instruction of the function holding it (src/resolve/insn.h), a `return`
probe unless it starts a function, and an offset no function symbol
covers unless --unsafe-offset is given (then with a warning).

Target: tests/fixtures/live_movabs.c, whose xp_fx_movabs(x) returns
x ^ IMM through a 10-byte `movabs $IMM, %rax`; the fixture checks every
result itself and reports how many were wrong, so "the target stayed
correct" is the target's own count."""
import os
import subprocess
import time

from measure_live_helpers import (Fixture, LiveRun, fixture_path, measure_fixture,
                                  target_link_ids)

UNVERIFIED = "UNVERIFIED_INSTRUCTION_BOUNDARY"


def movabs(path=None, calls=500):
    return Fixture([path or fixture_path("live_movabs"), "--calls", calls])


def up(exe, where, end=False):
    return "uprobe:%s:%s:%s" % (exe, where, "return" if end else "entry")


def off(n):
    return "+0x%x" % n


def layout(fx):
    r = fx.ready
    return (int(r["function_offset"], 16), int(r["insn_offset"], 16), int(r["next_offset"], 16),
            int(r["pad_offset"], 16))


def validate(xprobe, fx, start, end, *extra):
    return xprobe.run("validate", "--pid", fx.pid, "--from", start, "--to", end,
                      "--match", "first-after", *extra)


def issue_codes(doc):
    return [i["code"] for i in doc["issues"]]


def warning_codes(doc):
    return [w["code"] for w in doc["warnings"]]


def run_refused(xprobe, fx, args, timeout=10.0):
    """Start measure, let the fixture work while measure is either gone
    (refused) or armed (the bug: it attached), and return (Result, done,
    links measure held)."""
    run = LiveRun(xprobe, *args)
    deadline = time.monotonic() + timeout
    links = set()
    while time.monotonic() < deadline and run.p.poll() is None:
        links |= target_link_ids(run.p.pid)
        if links:
            time.sleep(0.1)  # armed: the probe is in the target now
            break
        time.sleep(0.005)
    fx.go()
    done = fx.done()
    return run.finish(timeout=30), done, links


def test_validate_refuses_every_byte_inside_the_movabs(xprobe):
    with movabs() as fx:
        exe = fx.ready["exe"]
        fn, insn, nxt, _ = layout(fx)
        assert fx.ready["insn_len"] == 10 and nxt == insn + 10
        for o in range(insn + 1, nxt):
            r = validate(xprobe, fx, up(exe, off(o)), up(exe, "xp_fx_movabs", True))
            assert r.rc == 0, r
            d = r.doc
            assert d["valid"] is False, (hex(o), d["issues"])
            assert issue_codes(d) == ["INVALID_EVENT_SELECTOR"]
            msg = d["issues"][0]["message"]
            assert "not on an instruction boundary" in msg
            assert "inside the instruction at 0x%x of xp_fx_movabs" % insn in msg
            assert "use +0x%x or +0x%x" % (insn, nxt) in msg
            # the probe itself still resolved (host is filled in)
            assert d["start"]["host"]["file_offset"] == o
        # the true boundaries, and the function's own address
        for o in (fn, insn, nxt):
            r = validate(xprobe, fx, up(exe, off(o)), up(exe, "xp_fx_movabs", True))
            assert r.rc == 0 and r.doc["valid"] is True, (hex(o), r)
            assert r.doc["issues"] == []
            assert UNVERIFIED not in warning_codes(r.doc)
        # the same rule for the end endpoint
        r = validate(xprobe, fx, up(exe, "xp_fx_movabs"), up(exe, off(insn + 4)))
        assert r.doc["valid"] is False
        assert "end selector" in r.doc["issues"][0]["message"]
        # --unsafe-offset does not make a mid-instruction offset acceptable
        r = validate(xprobe, fx, up(exe, off(insn + 2)), up(exe, "xp_fx_movabs", True),
                     "--unsafe-offset")
        assert r.doc["valid"] is False
        assert "not on an instruction boundary" in r.doc["issues"][0]["message"]
        fx.quit()


def test_validate_return_probe_only_at_a_function_entry(xprobe):
    with movabs() as fx:
        exe = fx.ready["exe"]
        fn, insn, _, _ = layout(fx)
        r = validate(xprobe, fx, up(exe, "xp_fx_movabs"), up(exe, off(insn), True))
        assert r.rc == 0 and r.doc["valid"] is False, r
        assert issue_codes(r.doc) == ["INVALID_EVENT_SELECTOR"]
        msg = r.doc["issues"][0]["message"]
        assert "return probe inside function xp_fx_movabs but not at its entry (+0x%x)" % fn in msg
        r = validate(xprobe, fx, up(exe, "xp_fx_movabs"), up(exe, off(fn), True))
        assert r.rc == 0 and r.doc["valid"] is True, r
        fx.quit()


def test_measure_refuses_mid_instruction_and_the_target_stays_correct(xprobe):
    with movabs(calls=2000) as fx:
        exe = fx.ready["exe"]
        _, insn, nxt, _ = layout(fx)
        res, done, links = run_refused(xprobe, fx, [
            "--pid", fx.pid, "--from", up(exe, off(insn + 4)),
            "--to", up(exe, "xp_fx_movabs", True), "--match", "first-after",
            "--samples", 5, "--timeout-ms", 3000])
        assert done["calls"] == 2000
        assert done["wrong"] == 0, "the probe corrupted %d results" % done["wrong"]
        assert links == set(), "measure attached before refusing"
        assert res.rc == 1, res
        e = res.error
        assert e["code"] == "INVALID_EVENT_SELECTOR"
        assert "not on an instruction boundary" in e["message"]
        assert any("+0x%x:entry" % insn in h and "+0x%x:entry" % nxt in h for h in e["hints"]), e
        fx.quit()


def test_measure_at_the_boundary_counts_every_call(xprobe):
    with movabs(calls=400) as fx:
        exe = fx.ready["exe"]
        _, insn, _, _ = layout(fx)
        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", up(exe, "xp_fx_movabs"), "--to", up(exe, off(insn)),
            # two entries of one binary: one uprobe_multi link (docs/live-measurement.md,
            # "Attaching")
            "--match", "first-after", "--duration-ms", 1500], nlinks=1)
        assert res.rc == 0, res
        assert done["wrong"] == 0
        d = res.doc
        assert d["status"] == "completed"
        assert d["measurement"]["samples"]["matched"] == done["calls"] == 400
        assert d["measurement"]["samples"]["unmatched_start"] == 0
        assert d["measurement"]["samples"]["unmatched_end"] == 0
        assert d["collection"]["host_events"] == 2 * 400
        assert d["collection"]["dropped_events"] == 0
        for pair in d["evidence"]:
            assert pair["end"]["host"]["offset"] == insn
        assert UNVERIFIED not in warning_codes(d)
        fx.quit()


def test_offset_outside_every_function_needs_the_flag(xprobe):
    with movabs() as fx:
        exe = fx.ready["exe"]
        _, _, _, pad = layout(fx)
        sel = up(exe, off(pad + 3))
        r = validate(xprobe, fx, sel, up(exe, "xp_fx_movabs", True))
        assert r.rc == 0 and r.doc["valid"] is False, r
        assert issue_codes(r.doc) == ["INVALID_EVENT_SELECTOR"]
        msg = r.doc["issues"][0]["message"]
        assert "cannot be checked for an instruction boundary" in msg
        assert "outside every function symbol" in msg and "--unsafe-offset" in msg
        assert UNVERIFIED not in warning_codes(r.doc)

        # --unsafe-offset accepts the unverified boundary (the warning);
        # the padding is int3, which the kernel refuses to probe
        # (prepare_uprobe: ENOTSUPP for a trap instruction), so the probe
        # site check says so instead of letting the attach fail
        r = validate(xprobe, fx, sel, up(exe, "xp_fx_movabs", True), "--unsafe-offset")
        assert r.rc == 0 and r.doc["valid"] is False, r
        assert issue_codes(r.doc) == ["INVALID_EVENT_SELECTOR"]
        assert r.doc["issues"][0]["message"] == (
            "start selector %s probes an instruction the kernel refuses to probe (int3 at file "
            "offset 0x%x: opcode the kernel does not probe); attaching it would fail"
            % (sel, pad + 3))
        w = [w for w in r.doc["warnings"] if w["code"] == UNVERIFIED]
        assert len(w) == 1
        assert w[0]["details"] == {"binary_path": exe, "endpoint": "start",
                                   "file_offset": pad + 3, "selector": sel,
                                   "reason": "it lies outside every function symbol"}
        assert "0x%x" % (pad + 3) in w[0]["message"]

        # measure refuses it too, naming the flag, before attaching
        res = xprobe.run("measure", "--pid", fx.pid, "--from", sel,
                         "--to", up(exe, "xp_fx_movabs", True), "--match", "first-after",
                         "--samples", 1, "--timeout-ms", 3000)
        assert res.rc == 1, res
        assert res.code == "INVALID_EVENT_SELECTOR"
        assert "--unsafe-offset" in res.error["message"]
        assert any("--unsafe-offset" in h for h in res.error["hints"]), res.error
        fx.quit()


def test_stripped_copy_measures_only_with_the_flag(xprobe, tmp_path):
    stripped = str(tmp_path / "live_movabs_stripped")
    subprocess.run(["strip", "-o", stripped, fixture_path("live_movabs")], check=True)
    os.chmod(stripped, 0o755)
    with movabs(stripped, calls=300) as fx:
        exe = fx.ready["exe"]
        assert exe == os.path.realpath(stripped)
        fn, insn, _, _ = layout(fx)
        start, end = up(exe, off(fn)), up(exe, off(insn))
        r = validate(xprobe, fx, start, end)
        assert r.rc == 0 and r.doc["valid"] is False, r
        assert issue_codes(r.doc) == ["INVALID_EVENT_SELECTOR"] * 2
        assert "the file has no .symtab" in r.doc["issues"][0]["message"]

        res, done, _ = measure_fixture(xprobe, fx, [
            "--pid", fx.pid, "--from", start, "--to", end, "--match", "first-after",
            "--duration-ms", 1500, "--unsafe-offset"], nlinks=1)  # one link, as above
        assert res.rc == 0, res
        assert done["wrong"] == 0
        d = res.doc
        assert d["measurement"]["samples"]["matched"] == done["calls"] == 300
        assert d["collection"]["host_events"] == 600
        w = [w for w in d["warnings"] if w["code"] == UNVERIFIED]
        assert [x["details"]["endpoint"] for x in w] == ["start", "end"]
        assert [x["details"]["file_offset"] for x in w] == [fn, insn]
        assert all("no .symtab" in x["details"]["reason"] for x in w)
        # validate's own warnings are not copied (docs/contract.md,
        # "Warnings"): one HEURISTIC_CORRELATION, the correlator's
        assert warning_codes(d).count("HEURISTIC_CORRELATION") == 1
        fx.quit()


def test_unsafe_offset_is_a_live_flag_only(xprobe, tmp_path):
    f = tmp_path / "events.jsonl"
    f.write_text("")
    for args in (["measure", "--input", f, "--unsafe-offset"],
                 ["validate", "--pid", 1, "--cpu-sample", "--unsafe-offset"],
                 ["measure", "--pid", 1, "--syscall-aggregate", "--unsafe-offset"]):
        r = xprobe.run(*args)
        assert r.rc == 2, r
        assert "'--unsafe-offset' cannot be used with" in r.stderr
    r = xprobe.run("validate", "--help", json_mode=False)
    assert r.rc == 0 and "--unsafe-offset" in r.stdout
    r = xprobe.run("measure", "--help", json_mode=False)
    assert r.rc == 0 and "--unsafe-offset" in r.stdout
