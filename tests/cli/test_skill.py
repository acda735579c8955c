# SPDX-License-Identifier: Apache-2.0
"""The agent Skill (skills/xprobe/) against the binary, without a target:
everything it names must exist.  Every --flag it mentions is in the help
of the built xprobe (and each example's flags in its own command's help);
every UPPER_SNAKE code is an error code of schemas/error.schema.json or a
code the sources really emit; references/errors.md covers every error
code with its exit status; every policy is one of the five; every concrete
selector parses (measure --input refuses a bad one before it reads a
pair); every example spec is a valid MeasurementSpec and passes measure
--spec's parser.  Each check runs with a planted defect as well, so the
oracle is known to fail.  The examples themselves run against live
fixtures in tests/live/test_skill_live.py.
"""
import json
import os
import re
import shlex

import pytest

import skill_examples as sk
import xprobe_test

COMMANDS = ("doctor", "discover", "validate", "measure")
POLICIES = ("exact", "first-after", "nearest", "stack-nested", "stream-order")
SNAKE_POLICIES = tuple(p.replace("-", "_") for p in POLICIES)
SELECTOR_PREFIXES = ("uprobe:", "syscall:", "tracepoint:", "python:", "cuda:")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
CODE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
DEMO = os.path.join(sk.ROOT, "demo", "mmap.jsonl")
# Filled into the placeholders where no target is needed (parse only).
DUMMY = {"BINARY": "/srv/app/server", "FUNCTION": "handle_request", "PID": "4242",
         "PY_PID": "4242", "CUDA_PID": "4242", "NVTX_PID": "4242", "ROOT_PID": "1",
         "CAPTURE": "/tmp/capture.jsonl", "REPORT": "/tmp/report.html", "SPEC": "/tmp/spec.json"}
# Variables of other software the Skill tells users to set: NVTX's loader
# reads NVTX_INJECTION64_PATH (docs/agent.md), xprobe only names it.
FOREIGN_NAMES = {"NVTX_INJECTION64_PATH"}
# Above the largest pid_max Linux allows (2^22), so never a live process.
NO_SUCH_PID = 4194305


@pytest.fixture(scope="module")
def helps(xprobe):
    """{command or "": its --help text}."""
    out = {}
    for cmd in ("",) + COMMANDS:
        args = ([cmd] if cmd else []) + ["--help"]
        r = xprobe.run(*args, json_mode=False)
        assert r.rc == 0 and "Usage:" in r.stdout, r
        out[cmd] = r.stdout
    return out


def all_text():
    return {rel: sk.read(rel) for rel in sk.skill_files() if not rel.endswith(".json")}


def front_matter(text):
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert m, "SKILL.md must start with a --- front matter block"
    fields = {}
    for line in m.group(1).split("\n"):
        k, sep, v = line.partition(":")
        assert sep, "front matter line without a key: %r" % line
        fields[k.strip()] = v.strip()
    return fields


def test_front_matter():
    fields = front_matter(sk.read("SKILL.md"))
    assert set(fields) == {"name", "description"}, fields
    assert fields["name"] == os.path.basename(sk.SKILL) == "xprobe"
    assert re.fullmatch(r"[a-z0-9-]{1,64}", fields["name"])
    assert 100 <= len(fields["description"]) <= 1024, len(fields["description"])
    # what it does and when to use it, in the description itself
    assert "Use when" in fields["description"]


def test_front_matter_oracle():
    with pytest.raises(AssertionError):
        front_matter("# no front matter\n")


def test_every_file_is_reached_from_skill_md():
    """SKILL.md names every reference and the examples, and every file it
    names exists."""
    skill = sk.read("SKILL.md")
    named = set(re.findall(r"\b((?:references|examples)/[\w./*-]+\.(?:md|json))", skill))
    for rel in named:
        if "*" in rel:
            d = os.path.join(sk.SKILL, os.path.dirname(rel))
            assert os.path.isdir(d) and any(n.endswith(".json") for n in os.listdir(d)), rel
        else:
            assert os.path.isfile(os.path.join(sk.SKILL, rel)), "SKILL.md names %s" % rel
    for rel in sk.skill_files():
        if rel.startswith("references/") or rel == "examples/commands.md":
            assert rel in named, "SKILL.md does not point to %s" % rel


def test_examples_are_well_formed():
    exs = sk.examples()
    assert len(exs) >= 25
    table = sk.placeholder_table()
    used = set()
    for ex in exs:
        argv = shlex.split(ex.command)
        assert argv[0] == "xprobe" and argv[1] in COMMANDS, ex
        for f in sk.COMMON_FLAGS:
            assert argv.count(f) == 1, "%r lacks %s (or repeats it)" % (ex, f)
        assert ex.placeholders <= table, (ex, ex.placeholders - table)
        used |= ex.placeholders
        if ex.outcome in ("valid", "not_valid"):
            assert argv[1] == "validate", ex
    for spec in sk.spec_files():
        used |= set(sk.PLACEHOLDER.findall(json.dumps(sk.load_spec(spec))))
    assert used == table, "documented but unused: %s" % (table - used)
    # every outcome form appears, so the live test exercises each check
    assert {e.outcome for e in exs} == {"ok", "valid", "not_valid", "error"}


def test_examples_parser_refuses_broken_blocks(tmp_path):
    for text in ("```sh\nxprobe doctor --json\n```\n",                        # no Expect
                 "```sh\nxprobe doctor\nxprobe doctor\n```\nExpect: ok\n",    # two lines
                 "```sh\nxprobe doctor\n```\nExpect: fine\n"):                # unknown outcome
        p = tmp_path / "c.md"
        p.write_text(text)
        with pytest.raises(ValueError):
            sk.examples(str(p))


def unknown_flags(text, help_text):
    return sorted(set(FLAG.findall(text)) - set(FLAG.findall(help_text)))


def test_every_flag_exists(helps):
    every = "\n".join(helps.values())
    for rel, text in all_text().items():
        assert unknown_flags(text, every) == [], rel
    for ex in sk.examples():
        cmd = shlex.split(ex.command)[1]
        assert unknown_flags(ex.command, helps[cmd] + helps[""]) == [], ex


def test_flag_oracle(helps):
    assert unknown_flags("use --samples and --no-such-flag", helps["measure"]) == [
        "--no-such-flag"]
    assert unknown_flags("doctor --samples 3", helps["doctor"]) == ["--samples"]


def emitted_literals():
    """Every "UPPER_SNAKE" string literal of the sources: the warning and
    issue codes and the environment variables xprobe really uses."""
    out = set()
    for top in ("src", "lib", "common", "include"):
        for d, _, names in os.walk(os.path.join(sk.ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h", ".cc")):
                    with open(os.path.join(d, n), errors="replace") as f:
                        out |= set(re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"', f.read()))
    return out


def capability_names():
    with open("/usr/include/linux/capability.h") as f:
        return set(re.findall(r"#define (CAP_[A-Z_]+)\s", f.read()))


def error_codes():
    return xprobe_test.schema("error")["$defs"]["ErrorCode"]["enum"]


def unknown_codes(text, known):
    return sorted(set(CODE.findall(text)) - known)


def test_every_code_exists():
    known = set(error_codes()) | emitted_literals() | capability_names() | FOREIGN_NAMES
    for rel, text in all_text().items():
        assert unknown_codes(sk.PLACEHOLDER.sub("", text), known) == [], rel
    assert unknown_codes("EVENTS_DROPPED then EVENTS_DROPED", known) == ["EVENTS_DROPED"]


def errors_table():
    """{code: exit} of references/errors.md's table."""
    rows = re.findall(r"^\| `([A-Z_]+)` \| (\d) \|", sk.read("references/errors.md"), re.M)
    return {c: int(e) for c, e in rows}


def test_errors_reference_covers_every_code():
    table = errors_table()
    assert list(table) == error_codes(), "errors.md lists the codes in the schema's order"
    for code, rc in table.items():
        want = 3 if code in ("TARGET_NOT_FOUND", "TARGET_EXITED", "TARGET_REUSED") else \
            4 if code == "PERMISSION_DENIED" else 1
        assert rc == want, (code, rc)


def test_every_policy_exists():
    for rel, text in all_text().items():
        for p in re.findall(r"--match[ =]([a-z][a-z_|\\-]*)", text):
            for one in p.replace("\\", "").split("|"):
                assert one in POLICIES, (rel, p)
        for p in re.findall(r"`([a-z]+(?:[_-][a-z]+)+)`", text):
            if p.replace("_", "-") in POLICIES:
                assert p in POLICIES or p in SNAKE_POLICIES, (rel, p)


def concrete(sel):
    """A selector of the text, not grammar notation (<binary>, [..], a|b,
    single-letter fields such as uprobe:B:F:entry, REGEX)."""
    return not re.search(r"<[a-z]|\[|\||\.\.\.|REGEX|:[A-Z]{1,2}(:|$)|=K\b|:$", sel)


def mentioned_selectors():
    out = set()
    for text in all_text().values():
        for span in re.findall(r"`([^`\n]+)`", text):
            for word in span.split():
                if word.startswith(SELECTOR_PREFIXES) and concrete(word):
                    out.add(sk.fill(word, DUMMY))
    for ex in sk.examples():
        argv = shlex.split(sk.fill(ex.command, DUMMY))
        for i, a in enumerate(argv[:-1]):
            if a in ("--from", "--to"):
                out.add(argv[i + 1])
    for spec in sk.spec_files():
        doc = sk.load_spec(spec)
        out |= {sk.fill(doc["start_selector"], DUMMY), sk.fill(doc["end_selector"], DUMMY)}
    return sorted(out)


def parse_selector(xprobe, sel):
    """The error code of measuring @sel against the demo capture (None:
    a result): INVALID_EVENT_SELECTOR only when @sel does not parse."""
    r = xprobe.run("measure", "--input", DEMO, "--from", sel, "--to", "syscall:mmap:exit",
                   "--match", "first-after", "--samples", "1")
    return r.code


def test_every_selector_parses(xprobe):
    sels = mentioned_selectors()
    assert len(sels) >= 15
    assert any(s.startswith("cuda:nvtx_range_start:") for s in sels)
    for sel in sels:
        assert parse_selector(xprobe, sel) != "INVALID_EVENT_SELECTOR", sel


def test_selector_oracle(xprobe):
    assert parse_selector(xprobe, "syscall:mmap:entry") is None
    assert parse_selector(xprobe, "syscall:mmapp:entry") == "INVALID_EVENT_SELECTOR"
    assert parse_selector(xprobe, "cuda:nvtx_range_start:name~fwd.*") == "INVALID_EVENT_SELECTOR"
    assert not concrete("uprobe:B:F:entry") and concrete("uprobe:/srv/app:run:entry")


@pytest.mark.parametrize("spec", sk.spec_files(), ids=os.path.basename)
def test_example_spec_parses(xprobe, spec, tmp_path):
    """Valid against the schemas as written, and accepted by measure
    --spec's parser: the run gets as far as the target's identity."""
    doc = sk.load_spec(spec)
    xprobe_test.validate(doc, "measurement-spec")
    r = xprobe.run("measure", "--spec", spec)
    assert r.code in ("TARGET_NOT_FOUND", "TARGET_REUSED"), r
    doc["target"]["pid"] = NO_SUCH_PID
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(doc))
    assert xprobe.run("measure", "--spec", p).code == "TARGET_NOT_FOUND"
    # the oracle: a defect of the document is the parser's error, first
    doc["bogus"] = 1
    p.write_text(json.dumps(doc))
    r = xprobe.run("measure", "--spec", p)
    assert r.code == "INVALID_EVENT_SELECTOR" and "bogus" in r.error["message"], r
