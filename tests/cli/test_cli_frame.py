# SPDX-License-Identifier: Apache-2.0
"""The CLI frame: the command set, --help/--version, syntax errors (exit 2,
usage on stderr, nothing on stdout), and the output contract of errors
(human: "CODE: message" on stderr; --json: exactly one document).

Syntax errors are the contract's "invalid CLI syntax": they never print
JSON, even with --json.  Errors found after parsing (a missing --match in
measure, a bad selector) are runtime errors with a code and exit 1.
"""
import json
import re

import pytest

COMMANDS = {"doctor", "discover", "validate", "measure"}


def help_commands(text):
    """The agent-contract parse: lines indented by exactly two spaces, first
    token; option lines ("  -h, --help") are not commands."""
    names = []
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and line.strip():
            tok = line.split()[0]
            if not tok.startswith("-"):
                names.append(tok)
    return names


def commands_section(text):
    """Names listed under "Commands:" up to the next blank line."""
    lines = text.splitlines()
    start = lines.index("Commands:") + 1
    names = []
    for line in lines[start:]:
        if not line.strip():
            break
        names.append(line.split()[0])
    return names


def test_help_lists_exactly_the_four_commands(xprobe):
    r = xprobe.run("--help", json_mode=False)
    assert r.rc == 0, r
    assert r.stderr == ""
    assert "Usage:" in r.stdout
    names = help_commands(r.stdout)
    assert sorted(names) == sorted(COMMANDS), names
    assert len(names) == 4
    assert set(commands_section(r.stdout)) == COMMANDS


@pytest.mark.parametrize("flag", ["-h", "help"])
def test_help_spellings(xprobe, flag):
    r = xprobe.run(flag, json_mode=False)
    assert r.rc == 0, r
    assert set(help_commands(r.stdout)) == COMMANDS


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(xprobe, flag):
    r = xprobe.run(flag, json_mode=False)
    assert r.rc == 0, r
    # our version, then the contract and schema it implements
    assert re.fullmatch(r"xprobe \d+\.\d+\.\d+\ncontract 0\.4 \(schema_version 2\.0\)\n",
                        r.stdout), r.stdout
    assert r.stderr == ""


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_command_help(xprobe, cmd, flag):
    r = xprobe.run(cmd, flag, json_mode=False)
    assert r.rc == 0, r
    assert r.stderr == ""
    assert ("Usage: xprobe %s" % cmd) in r.stdout
    for common in ("--json", "--non-interactive", "--no-color"):
        assert common in r.stdout


def test_measure_help_documents_the_bounds(xprobe):
    out = xprobe.run("measure", "--help", json_mode=False).stdout
    for flag in ("--pid", "--input", "--spec", "--from", "--to", "--match", "--samples",
                 "--duration-ms", "--timeout-ms", "--max-events", "--events-out", "--format",
                 "--aggregate", "--cpu-sample", "--syscall-aggregate", "--max-groups"):
        assert flag in out, flag


def usage_error(xprobe, *args, json_mode=True):
    r = xprobe.run(*args, json_mode=json_mode)
    assert r.rc == 2, r
    assert r.stdout == "", r
    assert "Usage:" in r.stderr, r
    return r


def test_no_command(xprobe):
    usage_error(xprobe, json_mode=False)
    # --json alone is not a command either
    usage_error(xprobe)


@pytest.mark.parametrize("cmd", ["frobnicate", "measur", "MEASURE", "doctors", "-measure"])
def test_unknown_command(xprobe, cmd):
    usage_error(xprobe, cmd)


# A valid completed-input measure line; each case below breaks it one way.
BASE = ["measure", "--input", "/nonexistent.jsonl", "--from", "syscall:mmap:entry",
        "--to", "syscall:mmap:exit", "--match", "exact"]


@pytest.mark.parametrize("extra", [
    ["--bogus"],
    ["--jso"],                       # abbreviation of --json
    ["--samp", "5"],                 # abbreviation of --samples
    ["--json=yes"],                  # flags without values take none
    ["-x"],
    ["stray-positional"],
], ids=["unknown", "abbrev-json", "abbrev-samples", "value-on-switch", "short", "positional"])
def test_unknown_or_abbreviated_flags(xprobe, extra):
    usage_error(xprobe, *(BASE + ["--samples", "1"] + extra))


@pytest.mark.parametrize("argv", [
    ["measure", "--input"],
    BASE + ["--samples"],
    BASE + ["--samples", "1", "--events-out"],
    ["discover", "--pid"],
], ids=["input", "samples", "events-out", "discover-pid"])
def test_missing_value(xprobe, argv):
    usage_error(xprobe, *argv, json_mode=False)


@pytest.mark.parametrize("flag,value", [
    ("--samples", "-1"),
    ("--samples", "1x"),
    ("--samples", "18446744073709551616"),   # 2^64
    ("--samples", ""),
    ("--samples", "0x10"),
    ("--samples", " 5"),
    ("--max-events", "1e3"),
    ("--timeout-ms", "-0"),
    ("--duration-ms", "99999999999999999999"),
])
def test_bad_integer(xprobe, flag, value):
    r = usage_error(xprobe, *(BASE + [flag, value]))
    assert flag in r.stderr


@pytest.mark.parametrize("value", ["4294967296", "-5", "abc"])
def test_bad_pid(xprobe, value):
    usage_error(xprobe, "discover", "--pid", value)
    usage_error(xprobe, "measure", "--pid", value, "--from", "syscall:mmap:entry", "--to",
                "syscall:mmap:exit", "--match", "exact", "--samples", "1")


def test_largest_integers_parse(xprobe):
    # 2^64 - 1 is a valid u64: not a syntax error (the measurement then
    # fails at run time because the input is missing).
    r = xprobe.run(*(BASE + ["--samples", "18446744073709551615"]))
    assert r.rc == 1, r
    assert r.code == "TRACE_EXPORT_FAILED"


@pytest.mark.parametrize("extra", [
    ["--samples", "1", "--samples", "2"],
    ["--samples", "1", "--from", "syscall:read:entry"],
    ["--samples", "1", "--match", "nearest"],
    ["--samples", "1", "--events-out", "/tmp/a", "--events-out", "/tmp/b"],
    ["--samples", "1", "--max-events", "5", "--max-events", "5"],
])
def test_repeated_flag(xprobe, extra):
    r = usage_error(xprobe, *(BASE + extra))
    assert "multiple times" in r.stderr


def test_repeated_input_is_not_an_error(xprobe):
    r = xprobe.run(*(BASE + ["--input", "/nonexistent-2.jsonl", "--samples", "1"]))
    assert r.rc == 1, r
    assert r.code == "TRACE_EXPORT_FAILED"


SEL = ["--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact"]


@pytest.mark.parametrize("argv", [
    ["measure", "--spec", "/x.json", "--pid", "1"],
    ["measure", "--spec", "/x.json", "--input", "/x.jsonl"],
    ["measure", "--spec", "/x.json", "--from", "syscall:mmap:entry"],
    ["measure", "--spec", "/x.json", "--samples", "1"],
    ["measure", "--pid", "1", "--aggregate", "--input", "/x.jsonl"] + SEL + ["--duration-ms", "1"],
    ["measure", "--pid", "1", "--aggregate", "--samples", "1"] + SEL + ["--duration-ms", "1"],
    ["measure", "--pid", "1", "--aggregate", "--events-out", "/tmp/x"] + SEL + ["--duration-ms", "1"],
    ["measure", "--pid", "1", "--cpu-sample", "--syscall-aggregate", "--duration-ms", "1"],
    ["measure", "--pid", "1", "--aggregate", "--cpu-sample", "--duration-ms", "1"],
], ids=["spec+pid", "spec+input", "spec+from", "spec+samples", "aggregate+input",
        "aggregate+samples", "aggregate+events-out", "cpu-sample+syscall-aggregate",
        "aggregate+cpu-sample"])
def test_conflicting_modes(xprobe, argv):
    r = usage_error(xprobe, *argv)
    assert "cannot be used with" in r.stderr


def test_pid_with_input_is_a_json_error(xprobe):
    """Conflicting sources answer like the reference: a runtime error, exit
    1, INVALID_EVENT_SELECTOR with its message; not a usage error."""
    argv = ["measure", "--pid", "1", "--input", "/x.jsonl"] + SEL + ["--samples", "1"]
    r = xprobe.run(*argv)
    assert r.rc == 1, r
    assert r.code == "INVALID_EVENT_SELECTOR"
    assert r.error["message"] == "--pid and --input select different collection modes"
    assert r.error["recoverable"] is True and r.error["details"] == {}
    assert r.error["hints"]
    r = xprobe.run(*argv, json_mode=False)
    assert r.rc == 1 and r.stdout == ""
    assert r.stderr.startswith("INVALID_EVENT_SELECTOR: --pid and --input select")
    # the reference's order: a missing endpoint and an unknown policy come first
    r = xprobe.run("measure", "--pid", "1", "--input", "/x.jsonl", "--to", "syscall:mmap:exit",
                   "--match", "exact", "--samples", "1")
    assert r.rc == 1 and r.error["message"] == "measure requires --from unless --spec is used"
    r = xprobe.run("measure", "--pid", "1", "--input", "/x.jsonl", "--from",
                   "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "best",
                   "--samples", "1")
    assert r.rc == 1 and r.code == "INVALID_CORRELATION_POLICY", r


AGGREGATE = ["measure", "--pid", "1", "--aggregate", "--from", "cuda:kernel_start",
             "--to", "cuda:kernel_end", "--match", "exact", "--duration-ms", "100"]


@pytest.mark.parametrize("argv,code,message", [
    (["measure", "--pid", "1", "--aggregate"], "INVALID_EVENT_SELECTOR",
     "measure requires --from unless --spec is used"),
    (["measure", "--aggregate", "--duration-ms", "100"] + SEL, "INVALID_EVENT_SELECTOR",
     "--aggregate requires --pid"),
    (AGGREGATE[:-2], "SESSION_LIMIT_EXCEEDED", "--aggregate requires --duration-ms"),
    (AGGREGATE[:-2] + ["--duration-ms", "0"], "SESSION_LIMIT_EXCEEDED",
     "live measurement requires positive samples or duration and max-events limits"),
    (AGGREGATE + ["--max-groups", "0"], "SESSION_LIMIT_EXCEEDED",
     "live measurement requires positive samples or duration and max-events limits"),
    (AGGREGATE + ["--max-groups", "16777217"], "SESSION_LIMIT_EXCEEDED",
     "--max-groups 16777217 is outside the Agent's table bound of 1 to 16777216"),
    ([x if x != "exact" else "stream-order" for x in AGGREGATE], "INVALID_CORRELATION_POLICY",
     "aggregate measurement requires duration, exact activity endpoints, and no samples limit"),
    (AGGREGATE + ["--timeout-ms", "50"], "SESSION_LIMIT_EXCEEDED",
     "aggregate duration must not exceed timeout"),
], ids=["bare", "no-pid", "no-duration", "zero-duration", "zero-groups", "groups-above-bound",
        "not-exact", "duration-above-timeout"])
def test_aggregate_request_checks(xprobe, argv, code, message):
    """--aggregate's own rules, in the reference's order, before the target
    is looked at (PID 1 would be refused: nothing reads it); the live
    cases are tests/live/test_measure_cuda.py's."""
    r = xprobe.run(*argv)
    assert r.rc == 1, r
    assert (r.code, r.error["message"]) == (code, message), r
    assert r.error["recoverable"] is True and r.error["hints"]


def test_help_describes_the_aggregate_inventory(xprobe):
    out = xprobe.run("measure", "--help", json_mode=False).stdout
    (line,) = [l for l in out.splitlines() if l.strip().startswith("--aggregate")]
    assert "GPU activity inventory" in line and "refused" not in line
    assert "not in this build" not in out
    assert "AggregateInventoryResult" in out and "--max-groups (4096)" in out


@pytest.mark.parametrize("flag", ["--agent", "--cupti-socket"])
def test_agent_flags_without_a_cuda_endpoint_are_refused(xprobe, flag):
    """--agent / --cupti-socket are used by measurements with a cuda:
    endpoint (tests/live/test_measure_nvtx.py, test_measure_cuda_agent.py);
    with host endpoints only they are refused, not silently unused."""
    r = xprobe.run("measure", "--pid", "1", *SEL, "--samples", "1", flag, "/tmp/agent.so")
    assert r.rc == 1, r
    assert r.code == "INVALID_EVENT_SELECTOR"
    assert r.error["message"] == "%s applies to measurements with a cuda: endpoint" % flag
    assert r.error["details"] == {"flag": flag, "path": "/tmp/agent.so"}
    assert r.error["hints"]


def test_agent_flag_with_a_host_spec_is_refused(xprobe, tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({
        "schema_version": "2.0", "name": None, "target": {"pid": 1, "process_start_time": 1},
        "start_selector": "syscall:mmap:entry", "end_selector": "syscall:mmap:exit",
        "match_policy": "exact", "samples": 1, "duration_ms": None, "timeout_ms": 1000,
        "max_events": 10}))
    r = xprobe.run("measure", "--spec", spec, "--agent", "/tmp/agent.so")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    assert r.error["details"]["flag"] == "--agent"


@pytest.mark.parametrize("mode", ["--cpu-sample", "--syscall-aggregate"])
@pytest.mark.parametrize("flag", ["--agent", "--cupti-socket"])
def test_agent_flags_with_an_inventory_are_refused(xprobe, mode, flag):
    r = xprobe.run("measure", "--pid", "1", mode, "--duration-ms", "10", flag, "/tmp/agent.so")
    assert r.rc == 1 and r.code == "INVALID_EVENT_SELECTOR", r
    assert r.error["message"] == "%s does not accept %s" % (mode, flag)


@pytest.mark.parametrize("argv", [
    ["measure", "--input", "/x.jsonl", "--max-groups", "4"] + SEL + ["--samples", "1"],
    ["measure", "--pid", "1", "--max-groups", "4", "--duration-ms", "1"] + SEL,
    ["measure", "--pid", "1", "--max-inflight", "4", "--duration-ms", "1"],
    ["measure", "--pid", "1", "--frequency-hz", "4", "--duration-ms", "1"],
    ["measure", "--pid", "1", "--stack-depth", "4", "--syscall-aggregate", "--duration-ms", "1"],
], ids=["max-groups-input", "max-groups-pid", "max-inflight", "frequency-hz", "stack-depth"])
def test_inventory_flag_without_its_mode(xprobe, argv):
    r = usage_error(xprobe, *argv)
    assert "requires" in r.stderr


@pytest.mark.parametrize("argv", [
    ["discover"],
    ["validate", "--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact"],
    ["validate", "--pid", "1", "--to", "syscall:mmap:exit", "--match", "exact"],
    ["validate", "--pid", "1", "--from", "syscall:mmap:entry", "--match", "exact"],
    ["validate", "--pid", "1", "--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit"],
], ids=["discover-pid", "validate-pid", "validate-from", "validate-to", "validate-match"])
def test_required_flags(xprobe, argv):
    r = usage_error(xprobe, *argv)
    assert "required" in r.stderr


@pytest.mark.parametrize("argv", [
    ["doctor", "--pid", "1"],
    ["discover", "--pid", "1", "--samples", "3"],
    ["validate", "--pid", "1", "--input", "/x"] + SEL,
], ids=["doctor-pid", "discover-samples", "validate-input"])
def test_flags_of_other_commands(xprobe, argv):
    usage_error(xprobe, *argv)


def test_format_value_is_checked_at_parse_time(xprobe):
    usage_error(xprobe, *(BASE + ["--samples", "1", "--events-out", "/tmp/x", "--format",
                                  "perfetto"]))


# --- runtime errors: the output contract -----------------------------------

NO_MATCH = ["measure", "--input", "/nonexistent.jsonl", "--from", "syscall:mmap:entry",
            "--to", "syscall:mmap:exit", "--samples", "1"]


def test_human_error_is_code_colon_message_on_stderr(xprobe):
    r = xprobe.run(*NO_MATCH, json_mode=False)
    assert r.rc == 1, r
    assert r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first == ("INVALID_CORRELATION_POLICY: measure requires --match unless "
                     "--spec is used"), r.stderr
    for line in r.stderr.splitlines()[1:]:
        assert line.startswith("hint: ") or line.startswith("  "), r.stderr


def test_json_error_is_exactly_one_document(xprobe):
    r = xprobe.run(*NO_MATCH)
    assert r.rc == 1, r
    assert r.stderr == ""
    doc, end = json.JSONDecoder().raw_decode(r.stdout)
    assert r.stdout[end:] == "\n", "one document, then a newline"
    assert doc == r.doc
    assert doc["schema_version"] == "2.0"
    assert doc["ok"] is False
    e = doc["error"]
    assert e["code"] == "INVALID_CORRELATION_POLICY"
    assert e["message"] == "measure requires --match unless --spec is used"
    assert e["recoverable"] is True
    assert isinstance(e["details"], dict)
    assert e["hints"], "every error says what to do next"
    # pretty-printed with two-space indentation, keys in contract order
    assert r.stdout.startswith('{\n  "schema_version": "2.0",\n  "ok": false,\n  "error": {\n'
                               '    "code": ')
    assert list(e) == ["code", "message", "recoverable", "details", "hints"]


@pytest.mark.parametrize("argv,code", [
    (["measure", "--input", "/x", "--to", "syscall:mmap:exit", "--match", "exact",
      "--samples", "1"], "INVALID_EVENT_SELECTOR"),
    (["measure", "--input", "/x", "--from", "syscall:mmap:entry", "--match", "exact",
      "--samples", "1"], "INVALID_EVENT_SELECTOR"),
    (["measure", "--input", "/x"] + SEL[:4] + ["--match", "sideways", "--samples", "1"],
     "INVALID_CORRELATION_POLICY"),
    (["measure"] + SEL + ["--samples", "1"], "TRACE_EXPORT_FAILED"),
], ids=["missing-from", "missing-to", "unknown-policy", "no-source"])
def test_runtime_usage_errors_are_json(xprobe, argv, code):
    r = xprobe.run(*argv)
    assert r.rc == 1, r
    assert r.code == code, r
    assert r.stderr == ""


def test_missing_from_message(xprobe):
    r = xprobe.run("measure", "--input", "/x", "--to", "syscall:mmap:exit", "--match", "exact",
                   "--samples", "1")
    assert r.error["message"] == "measure requires --from unless --spec is used"


def test_no_source_message(xprobe):
    r = xprobe.run(*(["measure"] + SEL + ["--samples", "1"]))
    assert r.error["message"] == "measure requires --input or --pid"
    assert r.error["recoverable"] is True


@pytest.mark.parametrize("spelling", ["first-after", "first_after", "stack-nested",
                                      "stack_nested", "stream-order", "stream_order",
                                      "nearest", "exact"])
def test_both_policy_spellings_are_accepted(xprobe, spelling):
    # The policy parses; the run then fails on the missing input file
    # (policy/selector compatibility is checked once events are loaded).
    r = xprobe.run("measure", "--input", "/nonexistent.jsonl", "--from", "syscall:mmap:entry",
                   "--to", "syscall:mmap:exit", "--match", spelling, "--samples", "1")
    assert r.rc == 1, r
    assert r.code == "TRACE_EXPORT_FAILED", r


def test_common_flags_anywhere(xprobe):
    # --json may come before the other flags of a command
    r = xprobe.run("measure", "--json", "--no-color", *SEL, "--samples", "1", json_mode=False)
    assert r.rc == 1
    doc = json.loads(r.stdout)
    assert doc["error"]["code"] == "TRACE_EXPORT_FAILED"


# ---- usage mistakes a person makes (issue 17: exit 2, a tip, help within reach) ----

@pytest.mark.parametrize("argv", [["doctor", "--json", "--json"],
                                  ["doctor", "--no-color", "--no-color"],
                                  BASE + ["--samples", "1", "--no-color", "--no-color"],
                                  BASE + ["--samples", "1", "--non-interactive",
                                          "--non-interactive"]])
def test_a_repeated_switch_is_a_usage_error(xprobe, argv):
    """Before: a repeated --json or --no-color exited 0."""
    r = usage_error(xprobe, *argv, json_mode=False)
    assert "cannot be used multiple times" in r.stderr


@pytest.mark.parametrize("argv,tip", [
    (["mesure"], "a similar command exists: 'measure'"),
    (["valdate"], "a similar command exists: 'validate'"),
    (BASE + ["--sampels", "3"], "a similar argument exists: '--samples'"),
    (BASE + ["--samples", "3", "--max-event", "9"], "a similar argument exists: '--max-events'"),
])
def test_typos_get_a_tip(xprobe, argv, tip):
    r = usage_error(xprobe, *argv, json_mode=False)
    assert "tip: " + tip in r.stderr, r.stderr


def test_a_policy_typo_gets_a_suggestion(xprobe):
    r = xprobe.run("measure", "--input", "/nonexistent.jsonl", "--from", "syscall:mmap:entry",
                   "--to", "syscall:mmap:exit", "--match", "stak-nested", "--samples", "1")
    assert r.rc == 1 and r.code == "INVALID_CORRELATION_POLICY", r
    assert r.error["hints"][0] == "did you mean 'stack-nested'?"


@pytest.mark.parametrize("cmd", ["doctor", "discover", "validate", "measure"])
def test_help_fits_100_columns_and_shows_examples(xprobe, cmd):
    for argv in ([cmd, "--help"], ["help", cmd]):
        r = xprobe.run(*argv, json_mode=False)
        assert r.rc == 0 and r.stderr == "", r
        long = [l for l in r.stdout.splitlines() if len(l) > 100]
        assert not long, long
        ex = r.stdout.split("\nExamples:\n", 1)
        assert len(ex) == 2, r.stdout
        assert ex[1].count("$ xprobe %s" % cmd) >= 2, ex[1]
    assert xprobe.run("help", cmd, json_mode=False).stdout == \
        xprobe.run(cmd, "--help", json_mode=False).stdout
    top = xprobe.run("--help", json_mode=False).stdout
    assert not [l for l in top.splitlines() if len(l) > 100]


def test_help_of_an_unknown_command(xprobe):
    r = usage_error(xprobe, "help", "mesure", json_mode=False)
    assert "a similar command exists: 'measure'" in r.stderr


def test_cpu_sample_with_input_is_a_usage_error(xprobe):
    """As the reference's parser: exit 2, not a JSON error."""
    r = usage_error(xprobe, "measure", "--cpu-sample", "--input", "/nonexistent.jsonl",
                    json_mode=False)
    assert "'--cpu-sample' cannot be used with '--input'" in r.stderr \
        or "'--input' cannot be used with '--cpu-sample'" in r.stderr, r.stderr


def test_terminal_errors_show_what_happened(xprobe, tmp_path):
    """The terminal form prints the details that say what happened, not only
    the code and message: here that the end selector matched nothing."""
    import xpcap
    src = xpcap.write_jsonl(tmp_path / "c.jsonl", [xpcap.syscall_entry(100, 1000),
                                                  xpcap.syscall_exit(100, 1500)])
    r = xprobe.run("measure", "--input", src, "--from", "syscall:mmap:entry", "--to",
                   "syscall:munmap:exit", "--match", "exact", "--samples", 1, json_mode=False)
    assert r.rc == 1
    lines = r.stderr.splitlines()
    assert lines[0] == "NO_MATCHED_SAMPLES: no event pairs matched the selectors"
    assert "  selected_end_events: 0" in lines and "  end_selector: syscall:munmap:exit" in lines
    # no --events-out: no advice to inspect an artifact that was not written
    assert not any("inspect the events-out artifact" in l for l in lines), lines
    assert any("--events-out PATH" in l for l in lines), lines
