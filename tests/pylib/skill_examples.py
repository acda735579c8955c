# SPDX-License-Identifier: Apache-2.0
"""The agent Skill (skills/xprobe/) as the tests read it: its files, the
runnable examples of examples/commands.md with their expected outcome,
and the example MeasurementSpecs of examples/specs/.

tests/cli/test_skill.py checks what the Skill says against the binary
(flags, codes, selectors, policies, the specs' parser);
tests/live/test_skill_live.py runs every example against the bundled fixtures.

An example in commands.md is a fenced ```sh block holding exactly one
command line, followed by a line

    Expect: <outcome> [-- prose]

where <outcome> is one of
    ok                        a result document, exit 0
    ok, valid                 a validate document with valid: true
    ok, not valid (CODE)      valid: false, CODE among its issues
    error CODE                an error document with that code
Placeholders are <UPPER_CASE> words from the table at the top of the file.
"""
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKILL = os.path.join(ROOT, "skills", "xprobe")
COMMANDS = os.path.join(SKILL, "examples", "commands.md")
SPECS = os.path.join(SKILL, "examples", "specs")
COMMON_FLAGS = ("--json", "--non-interactive", "--no-color")
PLACEHOLDER = re.compile(r"<([A-Z][A-Z_]*)>")
EXPECT = re.compile(r"^(ok)$|^(ok), (valid)$|^(ok), (not valid) \(([A-Z_]+)\)$|^(error) ([A-Z_]+)$")


class Example:
    def __init__(self, line, command, outcome, code, section):
        self.line = line          # 1-based line of the command in commands.md
        self.command = command    # the command text, placeholders unfilled
        self.outcome = outcome    # "ok", "valid", "not_valid", "error"
        self.code = code          # the issue or error code, else None
        self.section = section

    @property
    def placeholders(self):
        return set(PLACEHOLDER.findall(self.command))

    def id(self):
        return "L%d-%s" % (self.line, " ".join(self.command.split()[1:3]))

    def __repr__(self):
        return "Example(line %d: %s)" % (self.line, self.command)


def parse_expect(text):
    """(outcome, code) of an Expect line's outcome; ValueError otherwise."""
    m = EXPECT.match(text)
    if not m:
        raise ValueError("unknown Expect outcome %r" % text)
    if m.group(1):
        return "ok", None
    if m.group(3):
        return "valid", None
    if m.group(5):
        return "not_valid", m.group(6)
    return "error", m.group(8)


def examples(path=COMMANDS):
    """Every example of commands.md, in file order (ValueError on a block
    that breaks the format above)."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, section, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.strip() != "```sh":
            i += 1
            continue
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        if len(body) != 1:
            raise ValueError("%s:%d: an example holds exactly one command line, not %d"
                             % (path, start + 1, len(body)))
        i += 1
        if i >= len(lines) or not lines[i].startswith("Expect: "):
            raise ValueError("%s:%d: the example has no Expect: line after it"
                             % (path, start + 1))
        outcome_text = lines[i][len("Expect: "):].split(" -- ")[0].strip()
        try:
            outcome, code = parse_expect(outcome_text)
        except ValueError as e:
            raise ValueError("%s:%d: %s" % (path, i + 1, e))
        out.append(Example(start + 1, body[0].strip(), outcome, code, section))
    return out


def placeholder_table(path=COMMANDS):
    """The placeholders the table at the top of commands.md documents."""
    with open(path) as f:
        text = f.read()
    return set(re.findall(r"^\| `<([A-Z][A-Z_]*)>` \|", text, re.M))


def spec_files():
    return sorted(os.path.join(SPECS, n) for n in os.listdir(SPECS) if n.endswith(".json"))


def load_spec(path):
    with open(path) as f:
        return json.load(f)


def spec_kind(spec):
    """Which fixture a spec's selectors need: "cuda", "python" or "host"."""
    sels = (spec["start_selector"], spec["end_selector"])
    if any(s.startswith("cuda:") for s in sels):
        return "cuda"
    if any(s.startswith("python:") for s in sels):
        return "python"
    return "host"


def fill(text, values):
    """@text with every <PLACEHOLDER> replaced from @values (KeyError on
    one it does not know)."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def skill_files():
    """Every text file of the Skill, relative to skills/xprobe/."""
    out = []
    for d, _, names in os.walk(SKILL):
        for n in names:
            out.append(os.path.relpath(os.path.join(d, n), SKILL))
    return sorted(out)


def read(rel):
    with open(os.path.join(SKILL, rel)) as f:
        return f.read()
