# SPDX-License-Identifier: Apache-2.0
"""Test helpers: run xprobe, parse and schema-validate its output.

Xprobe.run(args...) returns a Result with rc, stdout, stderr and doc (the
parsed JSON document when --json was given).  Every JSON document is
validated against the schema named for it; validation failure fails the
test.  Syntax errors (rc 2) must print nothing on stdout.

Two oracles: our schemas/ (always), and for the document types the
contract defines (a schema of the same name in the reference set: doctor,
discover, validate, measure results, errors, events, host captures, specs)
also the public contract's published schemas (JSON Schema of the public
Rust xprobe 0.4), loaded at test time from beside the checkout when present
(reference_dir(); CI has them) or from $XPROBE_REFERENCE_SCHEMAS, never
copied into this repository.  They are closed, so a field or enum value we
add breaks a strict reader and a test (docs/contract.md, "Closed
documents").
The --events-out artifact a run reports is checked the same way.
"""
import json
import os
import subprocess

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMAS = os.path.join(ROOT, "schemas")

_schema_cache = {}
_reference_cache = {}


def default_binary():
    """The suite's binary: test-bin/xprobe (the CLI with its test hooks,
    built by a tree configured -DXPROBE_TEST_HOOKS=ON), else bin/xprobe."""
    hooked = os.path.join(build_dir(), "test-bin", "xprobe")
    return hooked if os.path.exists(hooked) else os.path.join(build_dir(), "bin", "xprobe")


def build_dir():
    return os.environ.get("XPROBE_BUILD", os.path.join(ROOT, "build"))


def fixtures_dir():
    return os.path.join(build_dir(), "tests", "fixtures")


def schema(name):
    if name not in _schema_cache:
        with open(os.path.join(SCHEMAS, name + ".schema.json")) as f:
            s = json.load(f)
        jsonschema.Draft202012Validator.check_schema(s)
        _schema_cache[name] = s
    return _schema_cache[name]


def reference_dir():
    """The reference schema directory, or None where this checkout has none
    beside it.  $XPROBE_REFERENCE_SCHEMAS, when set, must exist."""
    env = os.environ.get("XPROBE_REFERENCE_SCHEMAS")
    if env:
        assert os.path.isdir(env), "XPROBE_REFERENCE_SCHEMAS=%s is not a directory" % env
        return env
    d = os.path.join(os.path.dirname(ROOT), "shared", "reference", "xprobe-0.4-schemas")
    return d if os.path.isdir(d) else None


def reference_schema(name):
    """The contract's schema of this document type, or None (a type the
    contract does not define, or no reference set here)."""
    d = reference_dir()
    if d is None:
        return None
    path = os.path.join(d, name + ".schema.json")
    if path not in _reference_cache:
        s = None
        if os.path.exists(path):
            with open(path) as f:
                s = json.load(f)
            jsonschema.Draft202012Validator.check_schema(s)
        _reference_cache[path] = s
    return _reference_cache[path]


_SCHEMA_BASE = "https://xprobe.invalid/schemas/"  # a name only: every file is in the store


def _our_resolver(name):
    """References between our schemas ("measurement-result.schema.json",
    "latency-histogram-result.schema.json#/$defs/...") resolve to the
    files beside it; nothing is fetched."""
    store = {}
    for f in os.listdir(SCHEMAS):
        if f.endswith(".schema.json"):
            store[_SCHEMA_BASE + f] = schema(f[:-len(".schema.json")])
    return jsonschema.RefResolver(base_uri=_SCHEMA_BASE + name + ".schema.json",
                                  referrer=schema(name), store=store)


def validate_ours(doc, name):
    """Validate doc against schemas/<name>.schema.json only."""
    jsonschema.Draft202012Validator(
        schema(name), format_checker=jsonschema.FormatChecker(), resolver=_our_resolver(name)
    ).validate(doc)


def validate_reference(doc, name):
    """Validate doc against the reference schema of its type (raises on
    failure; nothing to do where there is none)."""
    ref = reference_schema(name)
    if ref is not None:
        jsonschema.Draft202012Validator(
            ref, format_checker=jsonschema.FormatChecker()).validate(doc)


def validate(doc, name):
    """Validate doc against schemas/<name>.schema.json and, for a contract
    type, the reference schema (raises on failure)."""
    validate_ours(doc, name)
    validate_reference(doc, name)


# Which schema a successful document of each command conforms to.
SUCCESS_SCHEMA = {
    "doctor": "capability",
    "discover": "discover",
    "validate": "validate",
    "measure": "measurement-result",
}


def success_schema(args):
    """The schema of a successful document of this command line: the
    inventory modes have their own (types the contract does not define)."""
    a = [str(x) for x in args]
    cmd = a[0] if a else ""
    if cmd == "validate" and "--list" in a:
        return "endpoint-list"
    if cmd == "validate" and ("--cpu-sample" in a or "--syscall-aggregate" in a
                              or "--histogram" in a):
        return "inventory-validation"
    if cmd == "measure" and "--histogram" in a:
        return "latency-histogram-result"
    if cmd == "measure" and "--explain" in a:
        return "explained-measurement-result"
    if cmd == "measure" and "--cpu-sample" in a:
        return "cpu-sample-inventory-result"
    if cmd == "measure" and "--syscall-aggregate" in a:
        return "syscall-aggregate-result"
    if cmd == "measure" and "--aggregate" in a:
        return "aggregate-inventory-result"
    return SUCCESS_SCHEMA[cmd]


def _flag_value(args, flag):
    a = [str(x) for x in args]
    for i, x in enumerate(a):
        if x == flag and i + 1 < len(a):
            return a[i + 1]
        if x.startswith(flag + "="):
            return x[len(flag) + 1:]
    return None


def validate_artifact(args, doc):
    """The --events-out artifact a run reports (a result, or an error whose
    details name it): every JSONL line is an Event (ours and the
    reference's), or with --explain a SchedEvent of our own extension; a
    Chrome trace has no contract schema, so its events' event_type and
    clock_domain are checked against the Event enums (the scheduler
    instants' args are SchedEvents)."""
    path = _flag_value(args, "--events-out")
    if path is None or doc is None:
        return
    if doc.get("ok") is False and "artifact_path" not in doc["error"].get("details", {}):
        return
    with open(path) as f:
        text = f.read()
    if _flag_value(args, "--format") == "chrome":
        trace = json.loads(text)
        ids = {e["args"]["event_id"] for e in trace["traceEvents"]
               if e["ph"] == "i" and e.get("cat") != "sched"}
        for e in trace["traceEvents"]:
            if e["ph"] == "M":
                continue  # metadata (process_name): no event behind it
            if e["ph"] == "X":  # a matched pair: both its events are instants
                assert {e["args"]["start_event_id"], e["args"]["end_event_id"]} <= ids, e
                continue
            if e["ph"] in ("s", "t", "f"):  # a CUDA correlation arrow at an event
                assert e["args"]["event_id"] in ids, e
                continue
            assert e["ph"] == "i", e
            if e.get("cat") == "sched":  # --explain: our own extension's record
                validate_ours(e["args"], "sched-event")
                assert e["name"] == e["args"]["event_type"] and e["tid"] == e["args"]["tid"], e
                continue
            for key, enum in (("event_type", "EventType"), ("clock_domain", "ClockDomain")):
                for s in (schema("event"), reference_schema("event")):
                    if s is not None:
                        assert e["args"][key] in s["$defs"][enum]["enum"], e
        return
    for line in text.splitlines():
        d = json.loads(line)
        # --explain adds records of our own event extension, after the Events
        validate(d, "sched-event" if "xprobe_extension" in d else "event")


class Result:
    def __init__(self, args, rc, stdout, stderr, doc):
        self.args = args
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.doc = doc

    @property
    def error(self):
        return self.doc["error"] if self.doc and not self.doc.get("ok", True) else None

    @property
    def code(self):
        e = self.error
        return e["code"] if e else None

    def __repr__(self):
        return "Result(rc=%d, args=%r, stdout=%r, stderr=%r)" % (
            self.rc, self.args, self.stdout[:2000], self.stderr[:2000])


def check_document(argv, rc, out, schema_name):
    """The JSON document a finished run printed: exactly one object and a
    newline; an error document is validated as "error" with exit 1, 3 or 4,
    anything else against @schema_name with exit 0; the --events-out
    artifact it reports is checked too.  Every way the tests run xprobe
    (Xprobe.run, the live helpers' background runs) ends here.  With
    --interval-ms the output is JSON Lines: each line but the last a
    latency-histogram-interval, the last the result (or error) as above;
    the intervals are kept in doc["_intervals"] for the test to read."""
    if "--interval-ms" in [str(a) for a in argv]:
        lines = out.splitlines()
        assert lines and out.endswith("}\n"), "JSON Lines and a newline: %r" % out[-200:]
        intervals = [json.loads(line) for line in lines[:-1]]
        for i, d in enumerate(intervals):
            validate(d, "latency-histogram-interval")
            assert d["interval"]["index"] == i, d["interval"]
        doc = check_document([a for a in argv if str(a) != "--interval-ms"], rc, lines[-1] + "\n",
                             schema_name)
        doc["_intervals"] = intervals
        return doc
    doc = json.loads(out)
    assert out.endswith("}\n"), "one document and a newline: %r" % out[-200:]
    if doc.get("ok") is False:
        validate(doc, "error")
        assert rc in (1, 3, 4), (rc, out)
    else:
        validate(doc, schema_name)
        assert rc == 0, (rc, out)
    validate_artifact(argv, doc)
    return doc


class Xprobe:
    def __init__(self, binary=None):
        self.binary = binary or os.environ.get(
            "XPROBE_BIN", default_binary())

    def run(self, *args, json_mode=True, schema_name=None, timeout=120, env=None,
            input=None, check_schema=True, user=None):
        """Run xprobe; with json_mode add the common flags and parse stdout.

        schema_name overrides the success schema (inventories, exports).
        user runs it as that uid (and gid, no supplementary groups): the
        binary must be one that user can reach (proc_helpers.
        other_user_xprobe).
        """
        argv = [self.binary] + [str(a) for a in args]
        if json_mode:
            argv += ["--json", "--non-interactive", "--no-color"]
        kw = {} if user is None else {"user": user, "group": user, "extra_groups": []}
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           env=env, input=input, **kw)
        doc = None
        if p.returncode == 2:
            assert p.stdout == "", "syntax errors must not print on stdout: %r" % p.stdout
            assert "Usage:" in p.stderr, "syntax errors print usage: %r" % p.stderr
        elif json_mode and check_schema:
            doc = check_document(argv, p.returncode, p.stdout,
                                 schema_name or success_schema(args))
        elif json_mode:
            doc = json.loads(p.stdout)
            assert p.stdout.endswith("}\n"), "one document and a newline"
        return Result(argv, p.returncode, p.stdout, p.stderr, doc)
