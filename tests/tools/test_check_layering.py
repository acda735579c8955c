# SPDX-License-Identifier: Apache-2.0
"""scripts/check-layering.py against planted violations: it runs on a
temporary copy of the tree (src/, lib/ with lib/CMakeLists.txt, common/,
bpf/, include/, CMakeLists.txt) into which each test plants one bad
include, one banned call, one upward DEPS edge or one circle of lib/
folders, and must fail naming it; the untouched copy must pass, and
look-alikes (snprintf, a banned name in a comment or a string, strtok_r)
must not fail it.  Every src/ module of CMakeLists.txt and every lib/
folder of lib/CMakeLists.txt, whenever it was added, gets a planted
include of one it does not reach (the parametrized tests read both
graphs with the script's own parser).  Where a build exists, the objects
of libxprobe show that no lib/ folder calls a function of one it may not
include (what a header declaring another folder's function would hide).
`make test` runs this right after the check itself."""
import importlib.util
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "scripts", "check-layering.py")
COPIED = ("src", "lib", "common", "bpf", "include")


def load_check():
    spec = importlib.util.spec_from_file_location("check_layering", CHECK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LAYERING = load_check()
SRC_GRAPH = LAYERING.parse_modules(ROOT)
SRC_REACH = LAYERING.closure(SRC_GRAPH)
LIB_GRAPH = LAYERING.parse_lib_folders(ROOT)
LIB_REACH = LAYERING.closure(LIB_GRAPH)


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
    ("src/capture/json/decode_json.cc", "p = strtok(s, \",\");"),
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


# --- lib/'s folders (xpl_folder() in lib/CMakeLists.txt) ---------------------


def test_lib_graph_is_read():
    # the parametrized tests below are only as wide as this graph
    assert {"core", "xtf", "producers", "device", "agent"} <= set(LIB_GRAPH)
    assert "agent" not in LIB_REACH["producers"]


def test_lib_upward_include_fails(tree):
    # the capture tables sit in producers/, below the Agent
    plant(tree / "lib/producers/agent_capture.c", '\n#include "../agent/capfile.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "lib/producers/agent_capture.c:" in r.stderr
    assert "lib/producers may not include lib/agent" in r.stderr


def test_lib_include_through_the_search_path_is_resolved(tree):
    # "nvtx/nvtx_abi.h" resolves through -Ilib, not relative to the file
    plant(tree / "lib/device/sim.c", '\n#include "nvtx/nvtx_abi.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "lib/device may not include lib/nvtx" in r.stderr


def test_lib_internal_h_is_cores(tree):
    plant(tree / "lib/internal.h", '\n#include "producers/clock.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "lib/internal.h:" in r.stderr and "lib/core may not include lib/producers" in r.stderr


def test_lib_folder_below_is_allowed(tree):
    # agent reaches xtf through producers: transitive
    plant(tree / "lib/agent/request.c",
          '\n#include "../xtf/crc32c.h"\n#include "../nvtx/nvtx_abi.h"\n')
    r = run(tree)
    assert r.returncode == 0, r.stderr


def replace_folder_line(tree, old, new):
    p = tree / "lib/CMakeLists.txt"
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


def test_lib_circle_fails(tree):
    # an upward DEPS entry would bless the upward include: it makes a circle
    replace_folder_line(tree, "xpl_folder(producers DEPS xtf core)",
                        "xpl_folder(producers DEPS xtf core agent)")
    plant(tree / "lib/producers/agent_capture.c", '\n#include "../agent/capfile.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "depend on each other" in r.stderr
    assert "lib/producers" in r.stderr and "lib/agent" in r.stderr


def test_lib_unknown_dep_fails(tree):
    replace_folder_line(tree, "xpl_folder(nvtx DEPS producers core)",
                        "xpl_folder(nvtx DEPS producers core gpu)")
    r = run(tree)
    assert r.returncode == 1
    assert "lib/nvtx depends on unknown folder lib/gpu" in r.stderr


def test_lib_undeclared_folder_fails(tree):
    os.mkdir(tree / "lib/extra")
    plant(tree / "lib/extra/extra.c", '#include "../internal.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "lib/extra: a folder of sources with no xpl_folder() line" in r.stderr


# --- every module and folder, present and future -----------------------------


def files_of(folder, exts):
    """Source files under @folder, sorted, those with the first of @exts first."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(exts):
                found.append(os.path.join(dirpath, fn))
    return sorted(found, key=lambda p: (not p.endswith(exts[0]), p))


def unreached(graph, reach, name, top):
    """What @name may not include and that has a header to include, the
    most upward first (the one that reaches most)."""
    out = [d for d in graph
           if d != name and d not in reach[name] and files_of(os.path.join(ROOT, top, d), (".h",))]
    return sorted(out, key=lambda d: (-len(reach[d]), d))


def plant_unreached(tree, top, graph, reach, name):
    """Plant in @name an include of the most upward folder it may not
    include; the cases are plantable()'s, which have both."""
    here = files_of(os.path.join(str(tree), top, name), (".c", ".cc", ".h"))
    above = unreached(graph, reach, name, top)
    assert here and above, "%s/%s is no case of plantable()" % (top, name)
    header = files_of(os.path.join(str(tree), top, above[0]), (".h",))[0]
    plant(here[0], '\n#include "%s"\n' % os.path.relpath(header, os.path.dirname(here[0])))
    return os.path.relpath(here[0], str(tree)), above[0]


def plantable(top, graph, reach):
    """The modules (folders) with a source and something they may not
    include: the top of the graph (cli, lib's agent) reaches every other
    one and has nothing to plant, so it is not a case (rather than a
    skipped one)."""
    return sorted(n for n in graph
                  if files_of(os.path.join(ROOT, top, n), (".c", ".cc", ".h"))
                  and unreached(graph, reach, n, top))


def test_every_module_but_the_top_has_a_case():
    assert set(SRC_GRAPH) - set(plantable("src", SRC_GRAPH, SRC_REACH)) == {"cli"}
    assert set(LIB_GRAPH) - set(plantable("lib", LIB_GRAPH, LIB_REACH)) <= {"agent", "core"}


@pytest.mark.parametrize("module", plantable("src", SRC_GRAPH, SRC_REACH))
def test_every_src_module_refuses_what_it_does_not_reach(tree, module):
    where, above = plant_unreached(tree, "src", SRC_GRAPH, SRC_REACH, module)
    r = run(tree)
    assert r.returncode == 1
    assert (where + ":") in r.stderr
    assert ("src/%s may not include src/%s" % (module, above)) in r.stderr, r.stderr


@pytest.mark.parametrize("folder", plantable("lib", LIB_GRAPH, LIB_REACH))
def test_every_lib_folder_refuses_what_it_does_not_reach(tree, folder):
    where, above = plant_unreached(tree, "lib", LIB_GRAPH, LIB_REACH, folder)
    r = run(tree)
    assert r.returncode == 1
    assert (where + ":") in r.stderr
    assert ("lib/%s may not include lib/%s" % (folder, above)) in r.stderr, r.stderr


# --- what the headers could hide: the objects' own calls ----------------------


def lib_objects():
    """(lib-relative source, object) of the last build's libxprobe objects
    whose source exists and is older than the object."""
    base = os.path.join(os.environ.get("XPROBE_BUILD") or os.path.join(ROOT, "build"),
                        "lib", "CMakeFiles")
    out = []
    for target in ("xpl_objects.dir", "xtf_reader.dir"):
        tdir = os.path.join(base, target)
        for dirpath, _, filenames in os.walk(tdir):
            for fn in sorted(filenames):
                if not fn.endswith(".o"):
                    continue
                obj = os.path.join(dirpath, fn)
                rel = os.path.relpath(obj, tdir)[:-2]
                src = os.path.join(ROOT, "lib", rel)
                if os.path.isfile(src) and os.path.getmtime(src) <= os.path.getmtime(obj):
                    out.append((os.path.join("lib", rel), obj))
    return out


def test_lib_objects_call_only_folders_they_may_include():
    """Runs after the build (make test-unit; make check-layering, which runs
    before any build, leaves it out), so a missing build is a failure."""
    objs = lib_objects()
    assert shutil.which("nm"), "nm is missing (binutils: scripts/install-deps.sh test)"
    assert objs, "no up-to-date build of libxprobe's objects (XPROBE_BUILD or build/): build first"
    defined, used = {}, []
    for rel, obj in objs:
        folder = LAYERING.lib_folder(rel)
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            w = line.split()
            if len(w) < 2:
                continue
            if w[1] == "U":
                used.append((rel, folder, w[0]))
            elif w[1] in "TDBRVWG":
                defined[w[0]] = folder
    bad = sorted("%s uses %s of lib/%s" % (rel, sym, defined[sym])
                 for rel, folder, sym in used
                 if sym in defined and defined[sym] != folder
                 and defined[sym] not in LIB_REACH.get(folder, ()))
    assert not bad, "\n".join(bad)


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
