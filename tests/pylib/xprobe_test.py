# SPDX-License-Identifier: Apache-2.0
"""Test helpers: run xprobe, parse and schema-validate its output.

Xprobe.run(args...) returns a Result with rc, stdout, stderr and doc (the
parsed JSON document when --json was given).  Every JSON document is
validated against the schema named for it; validation failure fails the
test.  Syntax errors (rc 2) must print nothing on stdout.
"""
import json
import os
import subprocess

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMAS = os.path.join(ROOT, "schemas")

_schema_cache = {}


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


def validate(doc, name):
    """Validate doc against schemas/<name>.schema.json (raises on failure)."""
    jsonschema.Draft202012Validator(
        schema(name), format_checker=jsonschema.FormatChecker()
    ).validate(doc)


# Which schema a successful document of each command conforms to.
SUCCESS_SCHEMA = {
    "doctor": "capability",
    "discover": "discover",
    "validate": "validate",
    "measure": "measurement-result",
}


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


class Xprobe:
    def __init__(self, binary=None):
        self.binary = binary or os.environ.get(
            "XPROBE_BIN", os.path.join(build_dir(), "bin", "xprobe"))

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
        elif json_mode:
            doc = json.loads(p.stdout)
            assert p.stdout.endswith("}\n"), "one document and a newline"
            if check_schema:
                if doc.get("ok") is False:
                    validate(doc, "error")
                    assert p.returncode in (1, 3, 4), p
                else:
                    cmd = args[0] if args else ""
                    validate(doc, schema_name or SUCCESS_SCHEMA[cmd])
                    assert p.returncode == 0, p
        return Result(argv, p.returncode, p.stdout, p.stderr, doc)
