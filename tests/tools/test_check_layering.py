# SPDX-License-Identifier: Apache-2.0
"""scripts/check-layering.py against planted violations: it runs on a
temporary copy of the tree (src/, lib/, common/, bpf/, include/,
CMakeLists.txt) into which each test plants one bad include, one banned
call or one upward DEPS edge, and must fail naming it; the untouched copy
must pass, and look-alikes (snprintf, a banned name in a comment or a
string, strtok_r) must not fail it.  `make test` runs this right after
the check itself."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "scripts", "check-layering.py")
COPIED = ("src", "lib", "common", "bpf", "include")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    d = tmp_path_factory.mktemp("layering-pristine")
    for top in COPIED:
        shutil.copytree(os.path.join(ROOT, top), d / top,
                        ignore=shutil.ignore_patterns(".*"))
    shutil.copy(os.path.join(ROOT, "CMakeLists.txt"), d / "CMakeLists.txt")
    return d


@pytest.fixture
def tree(pristine, tmp_path):
    d = tmp_path / "tree"
    shutil.copytree(pristine, d)
    return d


def run(root):
    return subprocess.run(["/usr/bin/python3", CHECK, "--root", str(root)],
                          capture_output=True, text=True, timeout=60)


def plant(path, text):
    with open(path, "a") as f:
        f.write(text)


def test_the_repository_passes():
    r = run(ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_the_copy_passes(tree):
    r = run(tree)
    assert r.returncode == 0, r.stderr


def test_src_including_lib_internals_fails(tree):
    plant(tree / "src/model/event.c", '\n#include "../../lib/internal.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "src/model/event.c:" in r.stderr
    assert "libxprobe's internals" in r.stderr


def test_src_including_a_module_above_fails(tree):
    # process sits below resolve: procfs.c may not see resolve.h
    plant(tree / "src/process/procfs.c", '\n#include "../resolve/resolve.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "src/process may not include src/resolve" in r.stderr


def test_include_through_the_search_path_is_resolved(tree):
    # "live/live.h" resolves through -Isrc, not relative to the file
    plant(tree / "src/model/strtab.c", '\n#include "live/live.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "src/model may not include src/live" in r.stderr


def test_a_module_below_is_allowed(tree):
    plant(tree / "src/resolve/usdt.c", '\n#include "../process/procfs.h"\n#include "../model/event.h"\n')
    r = run(tree)
    assert r.returncode == 0, r.stderr


def test_lib_including_src_fails(tree):
    plant(tree / "lib/core/log.c", '\n#include "../../src/model/event.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "lib/core/log.c:" in r.stderr and "lib/ includes the CLI's src/" in r.stderr


def test_common_including_src_fails(tree):
    plant(tree / "common/json.c", '\n#include "../src/model/event.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "common/ may include only common/ and include/" in r.stderr


@pytest.mark.parametrize("where,call", [
    ("src/model/event.c", "sprintf(buf, \"%d\", 1);"),
    ("common/json.c", "strcpy(a, b);"),
    ("lib/core/log.c", "n = atoi(s);"),
    ("bpf/xp_floor.bpf.c", "strcat(a, b);"),
    ("src/capture/decode_json.cc", "p = strtok(s, \",\");"),
    ("src/model/event.c", "vsprintf (buf, fmt, ap);"),
    ("src/model/event.c", "gets(line);"),
    ("src/model/event.c", "x = atoll(s) + atol(t);"),
])
def test_banned_call_fails(tree, where, call):
    plant(tree / where, "\nstatic void planted(void)\n{\n\t%s\n}\n" % call)
    r = run(tree)
    assert r.returncode == 1
    name = call.split("(")[0].split()[-1]
    assert ("%s:" % where) in r.stderr and ("banned function %s()" % name) in r.stderr, r.stderr


def test_look_alikes_pass(tree):
    plant(tree / "src/model/event.c",
          "\n/* sprintf(buf) and strcpy(a, b) in a comment */\n"
          "// atoi(s) in a line comment\n"
          "static const char *planted_s = \"gets(x) strcat(a, b)\";\n"
          "static void planted(char *b, char *s, char **save)\n{\n"
          "\tsnprintf(b, 4, \"%d\", 1);\n\tstrtok_r(s, \",\", save);\n"
          "\tfgets(b, 4, stdin);\n}\n")
    r = run(tree)
    assert r.returncode == 0, r.stderr


def test_upward_deps_edge_fails(tree):
    # an upward DEPS entry would bless upward includes: the graph check
    # catches the cycle it makes
    p = tree / "CMakeLists.txt"
    text = p.read_text()
    old = "xp_module(process DEPS xp_model xpc)"
    assert old in text
    p.write_text(text.replace(old, "xp_module(process DEPS xp_resolve xp_model xpc)"))
    r = run(tree)
    assert r.returncode == 1
    assert "depend on each other" in r.stderr and "xp_process" in r.stderr


def test_cli_cmd_cycle_fails(tree):
    # output is one-way (cli -> cmd -> report): the cycle cli and cmd once
    # had by design, declared the way it was, is now a violation
    p = tree / "CMakeLists.txt"
    text = p.read_text()
    old = "xp_module(cli DEPS xp_cmd)\n"
    assert old in text
    p.write_text(text.replace(old, old + "target_link_libraries(xp_cmd PUBLIC xp_cli)\n"))
    r = run(tree)
    assert r.returncode == 1
    assert "modules xp_cli, xp_cmd depend on each other" in r.stderr, r.stderr


def test_cmd_including_cli_fails(tree):
    # the commands write through src/report/output.h, never through cli
    plant(tree / "src/cmd/cmd_doctor.c", '\n#include "../cli/args.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "src/cmd may not include src/cli" in r.stderr
