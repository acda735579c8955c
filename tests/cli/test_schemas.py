# SPDX-License-Identifier: Apache-2.0
"""The schemas themselves: valid draft 2020-12, closed objects, nullable
fields typed [T, "null"], and no drift from the C code that writes the
documents (error codes in include/xprobe/error.h, enum names in
src/model/event.c) or between the copies of the Event definitions that
each self-contained schema carries.  These tests need no binary.
"""
import glob
import json
import os
import re

import jsonschema
import pytest

import xprobe_test

ROOT = xprobe_test.ROOT
SCHEMAS = sorted(glob.glob(os.path.join(xprobe_test.SCHEMAS, "*.schema.json")))
OURS = ["error", "event", "host-capture", "measurement-spec", "measurement-result",
        "aggregate-inventory-result"]
# Open maps: any key allowed by design.
OPEN = {"attributes", "details", "ErrorDetails", "Warning.details", "value"}


def load(name):
    with open(os.path.join(xprobe_test.SCHEMAS, name + ".schema.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("path", SCHEMAS, ids=os.path.basename)
def test_schema_is_valid_2020_12(path):
    with open(path) as f:
        s = json.load(f)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)
    assert s.get("title"), "every schema has a title"
    # self-contained: every $ref points into its own $defs
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(s, indent=1))
    for r in refs:
        assert r.startswith("#/$defs/"), r
        assert r[len("#/$defs/"):] in s["$defs"], r


def walk_objects(node, path=""):
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield path, node
        for k, v in node.items():
            yield from walk_objects(v, path + "." + k if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_objects(v, "%s[%d]" % (path, i))


@pytest.mark.parametrize("name", OURS)
def test_objects_are_closed(name):
    for path, obj in walk_objects(load(name)):
        last = path.split(".")[-1]
        if last in OPEN or path.endswith("Warning.properties.details"):
            continue
        if path.endswith("properties.attributes") or path.endswith("properties.details"):
            continue
        assert obj.get("additionalProperties") is False, path
        for req in obj.get("required", []):
            assert req in obj["properties"], (path, req)


@pytest.mark.parametrize("name", ["error", "event", "measurement-result",
                                  "aggregate-inventory-result"])
def test_written_documents_require_every_field(name):
    # The CLI writes every field (optional ones as null), so the schemas of
    # documents it writes require them all.
    for path, obj in walk_objects(load(name)):
        if obj.get("additionalProperties") is False:
            assert sorted(obj["required"]) == sorted(obj["properties"]), path


@pytest.mark.parametrize("name", OURS)
def test_nullable_fields_are_typed(name):
    for path, obj in walk_objects(load(name)):
        for prop, sub in obj.get("properties", {}).items():
            if "anyOf" in sub:
                kinds = sub["anyOf"]
                assert len(kinds) == 2 and {"type": "null"} in kinds, (path, prop)
            t = sub.get("type")
            if isinstance(t, list):
                assert t[-1] == "null" and len(t) == 2, (path, prop)


def c_enum_names(path, enum):
    """Names of `enum <enum> { XPROBE_E_FOO = 4000, ... }` in a header."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    body = text[text.index("enum %s {" % enum):]
    body = body[:body.index("};")]
    return re.findall(r"XPROBE_E_([A-Z_]+) = (\d+)", body)


def test_error_codes_match_the_header():
    codes = c_enum_names("include/xprobe/error.h", "xprobe_err")
    contract = [name for name, value in codes if 4000 <= int(value) <= 4099]
    assert [int(v) for n, v in codes if n in contract] == list(range(4000, 4000 + len(contract)))
    assert load("error")["$defs"]["ErrorCode"]["enum"] == contract
    assert len(contract) == 22


def c_string_table(name):
    with open(os.path.join(ROOT, "src", "model", "event.c")) as f:
        text = f.read()
    m = re.search(r"static const char \*const %s\[[^]]*\] = \{(.*?)\};" % name, text, re.S)
    assert m, name
    return re.findall(r'"([^"]*)"', m.group(1))


@pytest.mark.parametrize("table,defname", [
    ("source_names", "EventSource"),
    ("event_type_names", "EventType"),
    ("clock_names", "ClockDomain"),
    ("probe_kind_names", "HostProbeKind"),
    ("memcpy_names", "MemcpyKind"),
    ("nvtx_kind_names", "NvtxRangeKind"),
])
def test_event_enums_match_the_model(table, defname):
    assert load("event")["$defs"][defname]["enum"] == c_string_table(table)


EVENT_DEFS = ["Event", "EventSource", "EventType", "ClockDomain", "HostProbeKind", "HostEvent",
              "ArgumentValue", "CudaEvent", "Dim3", "MemcpyKind", "NvtxEvent", "NvtxRangeKind",
              "SchemaVersion"]


@pytest.mark.parametrize("other", ["host-capture", "measurement-result"])
def test_event_definitions_do_not_drift(other):
    event, o = load("event")["$defs"], load(other)["$defs"]
    for d in EVENT_DEFS:
        assert o[d] == event[d], d


def test_shared_definitions_do_not_drift():
    assert load("host-capture")["$defs"]["TargetIdentity"] == \
        load("measurement-spec")["$defs"]["TargetIdentity"]
    versions = [load(n)["$defs"]["SchemaVersion"] for n in OURS]
    assert all(v == versions[0] for v in versions)
    assert load("error")["$defs"]["ClockDomain"] == load("event")["$defs"]["ClockDomain"]
    agg, res = load("aggregate-inventory-result")["$defs"], load("measurement-result")["$defs"]
    for d in ("Warning", "SessionStatus", "CaptureCompleteness"):
        assert agg[d] == res[d], d
    assert agg["MemcpyKind"] == load("event")["$defs"]["MemcpyKind"]
    assert load("error")["$defs"]["ErrorDetails"]["properties"]["compatible_policies"]["items"] \
        == load("measurement-spec")["$defs"]["MatchPolicy"]


def test_demo_capture_conforms():
    with open(os.path.join(ROOT, "demo", "mmap.jsonl")) as f:
        lines = f.read().splitlines()
    assert len(lines) >= 200
    for line in lines:
        xprobe_test.validate(json.loads(line), "event")


def test_schemas_reject_what_they_should():
    e = json.loads(open(os.path.join(ROOT, "demo", "mmap.jsonl")).readline())
    xprobe_test.validate(e, "event")
    for bad in ({"surprise": 1}, {"pid": -1}, {"pid": 2 ** 32}, {"schema_version": "1.0"},
                {"event_type": "syscall_middle"}, {"cpu": "0"}, {"host": {"probe_kind": "x"}}):
        doc = dict(e)
        doc.update(bad)
        with pytest.raises(jsonschema.ValidationError):
            xprobe_test.validate(doc, "event")
    doc = dict(e)
    del doc["nvtx"]
    with pytest.raises(jsonschema.ValidationError):
        xprobe_test.validate(doc, "event")
    err = {"schema_version": "2.0", "ok": False,
           "error": {"code": "NO_MATCHED_SAMPLES", "message": "m", "recoverable": True,
                     "details": {"artifact_format": "chrome", "anything": [1]}, "hints": []}}
    xprobe_test.validate(err, "error")
    for bad in ({"code": "NOPE"}, {"details": {"artifact_format": "pdf"}},
                {"details": {"original_error_code": "NOPE"}}, {"extra": 1}):
        doc = json.loads(json.dumps(err))
        doc["error"].update(bad)
        with pytest.raises(jsonschema.ValidationError):
            xprobe_test.validate(doc, "error")
    doc = json.loads(json.dumps(err))
    doc["ok"] = True
    with pytest.raises(jsonschema.ValidationError):
        xprobe_test.validate(doc, "error")
