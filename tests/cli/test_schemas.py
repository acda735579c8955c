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
    # every $ref points into its own $defs, or into another of our schemas
    # beside it (the explained result holds the measurement result whole):
    # the file exists and the definition named is in it
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(s, indent=1))
    for r in refs:
        target, _, frag = r.partition("#")
        if target:
            assert re.fullmatch(r"[a-z-]+\.schema\.json", target), r
            assert os.path.exists(os.path.join(xprobe_test.SCHEMAS, target)), r
            other = load(target[:-len(".schema.json")])
        else:
            other = s
        assert frag == "" or frag.startswith("/$defs/"), r
        assert frag == "" or frag[len("/$defs/"):] in other["$defs"], r


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


# --- the contract's reference schemas (issue #9) -----------------------------
#
# Document types the contract defines have a reference schema of the same
# name (xprobe_test.reference_schema: read at test time from beside the
# checkout, never copied here).  Ours must be no looser: every object the
# reference closes is closed in ours with no property it lacks and every
# property it requires, every enum a subset of its enum, no null where it
# has none, no type it does not allow.  Types the contract does not define
# keep their own closed schemas (test_objects_are_closed).

CONTRACT_TYPES = ["capability", "discover", "validate", "measurement-result", "error", "event",
                  "host-capture", "measurement-spec", "resolve", "aggregate-inventory-result"]
OWN_TYPES = ["inventory-validation", "cpu-sample-inventory-result", "syscall-aggregate-result",
             "latency-histogram-result", "endpoint-list"]


def _resolve(node, root):
    while isinstance(node, dict) and "$ref" in node:
        target = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def _variants(node, root):
    """(non-null alternatives, whether null is allowed) of a schema node."""
    node = _resolve(node, root)
    if node is True or node == {}:
        return [True], True
    if "anyOf" in node or "oneOf" in node:
        out, null = [], False
        for alt in node.get("anyOf", node.get("oneOf")):
            v, n = _variants(alt, root)
            out += v
            null = null or n
        return out, null
    t = node.get("type")
    if t == "null":
        return [], True
    if isinstance(t, list) and "null" in t:
        rest = [x for x in t if x != "null"]
        alt = dict(node, type=rest[0] if len(rest) == 1 else rest)
        if "enum" in alt:
            alt["enum"] = [x for x in alt["enum"] if x is not None]
        return [alt], True
    if "const" in node and node["const"] is None:
        return [], True
    return [node], False


def _types(node):
    t = node.get("type")
    if t is None and "const" in node:
        return {{bool: "boolean", int: "integer", str: "string"}.get(type(node["const"]),
                                                                     "x")}
    return set(t if isinstance(t, list) else [t]) if t else None


def assert_no_looser(ours, ref, o_root, r_root, path="$"):
    ov, onull = _variants(ours, o_root)
    rv, rnull = _variants(ref, r_root)
    assert rnull or not onull, "%s: ours allows null, the contract does not" % path
    if True in rv:
        return  # the contract accepts anything here
    for o in ov:
        assert o is not True, "%s: ours accepts anything" % path
        ot = _types(o)
        cands = [r for r in rv if _types(r) is None or ot is None or
                 ot <= (_types(r) | ({"integer"} if "number" in _types(r) else set()))]
        assert cands, "%s: type %s not allowed by the contract (%s)" % (path, ot, rv)
        r = cands[0]
        renum = r.get("enum", [r["const"]] if "const" in r else None)
        if renum is not None:
            oenum = o.get("enum", [o["const"]] if "const" in o else None)
            assert oenum is not None and set(oenum) <= set(renum), \
                "%s: enum %s not within the contract's %s" % (path, oenum, renum)
        if (_types(r) or set()) & {"object"} and "properties" in r:
            if r.get("additionalProperties", True) is not False:
                continue  # an open map in the contract (details, attributes)
            assert o.get("additionalProperties") is False, "%s: not closed" % path
            extra = set(o.get("properties", {})) - set(r["properties"])
            assert not extra, "%s: fields the contract lacks: %s" % (path, sorted(extra))
            missing = set(r.get("required", [])) - set(o.get("required", []))
            assert not missing, "%s: contract-required fields not required: %s" % (
                path, sorted(missing))
            for k, sub in o.get("properties", {}).items():
                assert_no_looser(sub, r["properties"][k], o_root, r_root, path + "." + k)
        if "items" in r:
            assert "items" in o, "%s: array items unconstrained" % path
            assert_no_looser(o["items"], r["items"], o_root, r_root, path + "[]")


@pytest.mark.parametrize("name", CONTRACT_TYPES)
def test_no_looser_than_the_contract(name):
    ours = load(name)
    ref = xprobe_test.reference_schema(name)
    if ref is None:
        # no reference set beside this checkout: ours must at least be closed
        for path, obj in walk_objects(ours):
            if obj.get("additionalProperties") is not False:
                assert path.endswith(("attributes", "details")) or "Details" in path or \
                    path.split(".")[-1] in OPEN, path
        return
    assert_no_looser(ours, ref, ours, ref)


def test_the_comparison_catches_a_looser_schema():
    """The oracle above must fail for each way a schema can be looser."""
    ref = {"type": "object", "additionalProperties": False, "required": ["a"],
           "properties": {"a": {"type": "string", "enum": ["x", "y"]},
                          "b": {"type": "integer"}}}
    good = {"type": "object", "additionalProperties": False, "required": ["a", "b"],
            "properties": {"a": {"type": "string", "enum": ["x"]}, "b": {"type": "integer"}}}
    assert_no_looser(good, ref, good, ref)
    bad = [
        dict(good, additionalProperties=True),
        dict(good, properties=dict(good["properties"], c={"type": "string"})),
        dict(good, required=["b"]),
        dict(good, properties=dict(good["properties"], a={"type": "string",
                                                          "enum": ["x", "z"]})),
        dict(good, properties=dict(good["properties"], b={"type": ["integer", "null"]})),
        dict(good, properties=dict(good["properties"], b={"type": "string"})),
    ]
    for b in bad:
        with pytest.raises(AssertionError):
            assert_no_looser(b, ref, b, ref)


@pytest.mark.parametrize("name", OWN_TYPES)
def test_own_document_types_are_closed_and_not_the_contracts(name):
    assert xprobe_test.reference_schema(name) is None or xprobe_test.reference_dir() is None
    for path, obj in walk_objects(load(name)):
        last = path.split(".")[-1]
        if last in OPEN or path.endswith(("properties.details", "properties.attributes")):
            continue
        assert obj.get("additionalProperties") is False, path


# --- every contract document type the CLI writes, named ----------------------
#
# xprobe_test validates every document of every test against the reference
# schema of its type; these tests make sure each type is produced and
# checked at least once under its own name, so a regression says which
# document broke.  Targets are this test process itself (Debian's CPython,
# with the GC USDT markers; validate is read-only) and hand-made captures.

import sys  # noqa: E402

import xpcap  # noqa: E402

PYTHON = os.path.realpath(sys.executable)


def contract_doc(r, name):
    assert r.rc == 0, r
    xprobe_test.validate_ours(r.doc, name)
    xprobe_test.validate_reference(r.doc, name)
    return r.doc


def test_contract_capability_doctor(xprobe):
    d = contract_doc(xprobe.run("doctor"), "capability")
    assert set(d["checks"]) == {"btf", "ebpf_permissions", "kernel_lockdown",
                                "perf_event_paranoid", "ptrace_scope", "nvidia_driver",
                                "cuda_driver", "cuda_toolkit", "cupti"}


def test_contract_discover(xprobe):
    env = dict(os.environ,
               XPROBE_NVML_LIBRARY=os.path.join(xprobe_test.fixtures_dir(),
                                                "libtarget_fakenvml.so"),
               XPROBE_FAKE_NVML_PROCS="%d@GPU-0000" % os.getpid())
    d = contract_doc(xprobe.run("discover", "--pid", os.getpid(), env=env), "discover")
    assert [c["target"]["pid"] for c in d["candidates"]] == [os.getpid()]


@pytest.mark.parametrize("start,end,match", [
    ("uprobe:%s:PyGC_Collect:entry" % PYTHON, "uprobe:%s:PyGC_Collect:return" % PYTHON,
     "stack-nested"),
    ("syscall:mmap:entry", "syscall:mmap:exit", "exact"),
    ("python:gc_start", "python:gc_end", "exact"),
    ("cuda:runtime_api:cudaLaunchKernel:exit", "cuda:kernel_start", "exact"),
    ("cuda:nvtx_range_start:name~^step$", "cuda:nvtx_range_end:name~^step$", "exact"),
], ids=["uprobe", "syscall", "python-gc", "cuda", "nvtx"])
def test_contract_validate(xprobe, start, end, match):
    d = contract_doc(xprobe.run("validate", "--pid", os.getpid(), "--from", start, "--to", end,
                                "--match", match), "validate")
    for side in ("start", "end"):
        if d[side]["host"] is not None:
            xprobe_test.validate_ours(d[side]["host"], "resolve")
            xprobe_test.validate_reference(d[side]["host"], "resolve")


def test_contract_measurement_result_and_events(xprobe, tmp_path):
    cap = xpcap.write_jsonl(tmp_path / "in.jsonl", [
        xpcap.gc("start", 1, 100), xpcap.gc("end", 1, 180),
        xpcap.syscall_entry(1, 200), xpcap.syscall_exit(1, 260)])
    out = tmp_path / "out.jsonl"
    for sel in (("python:gc_start", "python:gc_end"), ("syscall:mmap:entry", "syscall:mmap:exit")):
        d = contract_doc(xprobe.run("measure", "--input", cap, "--from", sel[0], "--to", sel[1],
                                    "--match", "exact", "--samples", 1, "--events-out", out),
                         "measurement-result")
        for pair in d["evidence"]:
            for side in ("start", "end"):
                xprobe_test.validate_reference(pair[side], "event")
        with open(out) as f:
            events = [json.loads(line) for line in f]
        assert len(events) == 4
        for e in events:
            xprobe_test.validate_ours(e, "event")
            xprobe_test.validate_reference(e, "event")


def test_contract_host_capture_and_spec(tmp_path):
    path = xpcap.write_host_capture(tmp_path / "host.json", [xpcap.gc("start", 1, 100)])
    with open(path) as f:
        doc = json.load(f)
    xprobe_test.validate_reference(doc, "host-capture")
    spec = {"schema_version": "2.0", "name": None, "target": {"pid": 1, "process_start_time": 1},
            "start_selector": "python:gc_start", "end_selector": "python:gc_end",
            "match_policy": "exact", "samples": 1, "duration_ms": None, "timeout_ms": 1000,
            "max_events": 10, "measurement_mode": "exact", "max_groups": None}
    xprobe_test.validate_ours(spec, "measurement-spec")
    xprobe_test.validate_reference(spec, "measurement-spec")


@pytest.mark.parametrize("argv", [
    ["measure", "--pid", "1", "--input", "/x.jsonl", "--from", "syscall:mmap:entry", "--to",
     "syscall:mmap:exit", "--match", "exact", "--samples", "1"],
    ["validate", "--pid", "4194303", "--from", "syscall:mmap:entry", "--to",
     "syscall:mmap:exit", "--match", "exact"],
    ["discover", "--pid", "1", "--limit", "0"],
], ids=["invalid-event-selector", "target-not-found", "session-limit"])
def test_contract_error(xprobe, argv):
    r = xprobe.run(*argv)
    assert r.rc in (1, 3), r
    xprobe_test.validate_ours(r.doc, "error")
    xprobe_test.validate_reference(r.doc, "error")
