#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The layering rule and the banned-function list, checked (`make test`
runs this first; docs/development.md, "The layering check").

What it owns: reading every C/C++ source and header of src/, lib/,
common/, bpf/ and include/, resolving each `#include` the way the build's
include paths do, and failing (exit 1, one line a violation on stderr)
when

  1. src/ includes lib/ internals: the CLI sees libxprobe only through
     include/xprobe/ (and shares common/ and the bpf/ record layouts);
  2. a src/<folder> includes a src/<other folder> that is not among its
     dependencies: the allowed edges are the DEPS of the xp_module() lines
     of CMakeLists.txt (plus any extra `target_link_libraries(xp_<a> ...
     xp_<b>)` line), closed transitively because the libraries are linked
     PUBLIC; and the module graph itself must have no cycle at all (output
     is one-way: cli -> cmd -> report), so an upward DEPS edge cannot
     bless an upward include;
  3. a lib/<folder> includes a lib/<other folder> that is not among its
     dependencies: the allowed edges are the DEPS of the xpl_folder()
     lines of lib/CMakeLists.txt, closed transitively, and that graph may
     have no cycle at all (a call back up is a hook the upper folder
     registers, not an include); files directly in lib/ (internal.h) are
     core's; a lib/ folder holding sources needs an xpl_folder() line;
  4. lib/ includes src/; common/ includes anything but common/ and
     include/; include/ includes anything but include/; bpf/ includes
     src/ or lib/;
  5. a banned function (strcpy, strcat, sprintf, vsprintf, strtok, atoi,
     atol, atoll, gets) is called in src/, lib/, common/ or bpf/ (comments
     and string literals do not count; snprintf, strtok_r, fgets are other
     names).

Why derived from CMakeLists.txt: the build is what makes an include
compile, so the check and the build cannot disagree about which edges
exist; the cycle check is what keeps "dependencies point down" (cli ->
cmd -> report -> agent/inventory -> live -> capture/checks -> resolve ->
process; correlate -> selector -> model -> xpc) true when someone adds a
DEPS entry.  lib/ is one library, so its folders are declared for this
check alone, next to its source lists (agent -> inspect -> profile -> device ->
producers -> xtf -> core, agent -> nvtx -> producers; the configure
refuses a DEPS entry naming a folder declared after it, and a source in
an undeclared folder).

Usage: scripts/check-layering.py [--root DIR]   (DIR defaults to the
checkout holding this script).  Only the standard library; runs with
/usr/bin/python3 in well under a second.
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".c", ".cc", ".h", ".hh", ".cpp", ".hpp")
BANNED = ("strcpy", "strcat", "sprintf", "vsprintf", "strtok", "atoi", "atol", "atoll", "gets")
BANNED_DIRS = ("src", "lib", "common", "bpf")
SCANNED_DIRS = ("src", "lib", "common", "bpf", "include")

# The include search path of each tree after the including file's own
# folder (CMakeLists.txt, lib/CMakeLists.txt, cmake/bpf.cmake); generated
# headers (skeletons, vmlinux.h, xtf.pb-c.h) resolve to nothing and are
# not checked.
SEARCH = {
    "src": ("src", "common", "include", "bpf"),
    "lib": ("include", "lib", "common"),
    "common": ("common", "include"),
    "bpf": ("bpf",),
    "include": ("include",),
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def strip_comments_and_strings(text):
    """text with comments, string and character literals blanked (newlines
    kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"' or c == "'":
            # a raw string R"d( ... )d" (C++): skip to its closing delimiter
            if c == '"' and i > 0 and text[i - 1] == "R":
                m = re.match(r'"([^(\s]*)\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i)
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    out.append("\n" * text.count("\n", i, end))
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_modules(root):
    """{module: set of direct deps} from CMakeLists.txt: xp_module(name DEPS
    xp_a xp_b ...) and target_link_libraries(xp_a PUBLIC xp_b) lines."""
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    graph = {}
    for m in re.finditer(r"\bxp_module\s*\(([^)]*)\)", text):
        words = m.group(1).split()
        if not words or words[0].startswith("$"):
            continue
        name = words[0]
        deps = set()
        if "DEPS" in words:
            for w in words[words.index("DEPS") + 1:]:
                if w.startswith("xp_"):
                    deps.add(w[3:])
        graph.setdefault(name, set()).update(deps)
    for m in re.finditer(r"\btarget_link_libraries\s*\(\s*xp_(\w+)\s+([^)]*)\)", text):
        name = m.group(1)
        if name not in graph:
            continue
        for w in m.group(2).split():
            if w.startswith("xp_") and w[3:] in graph:
                graph[name].add(w[3:])
    return graph


LIB_CMAKE = os.path.join("lib", "CMakeLists.txt")
# Files directly in lib/ (internal.h: the compiler helpers and core/'s log
# and util functions) belong to this folder.
LIB_TOP = "core"


def parse_lib_folders(root):
    """{folder: set of direct deps} from lib/CMakeLists.txt's
    xpl_folder(name DEPS a b ...) lines."""
    try:
        with open(os.path.join(root, LIB_CMAKE)) as f:
            text = re.sub(r"#[^\n]*", "", f.read())
    except OSError:
        return {}
    graph = {}
    for m in re.finditer(r"\bxpl_folder\s*\(([^)]*)\)", text):
        words = m.group(1).split()
        if not words or words[0].startswith("$"):
            continue
        deps = set(words[words.index("DEPS") + 1:]) if "DEPS" in words else set()
        graph.setdefault(words[0], set()).update(deps)
    return graph


def closure(graph):
    reach = {}
    for name in graph:
        seen, todo = set(), list(graph[name])
        while todo:
            d = todo.pop()
            if d in seen:
                continue
            seen.add(d)
            todo.extend(graph.get(d, ()))
        reach[name] = seen
    return reach


def graph_problems(graph, reach):
    problems = []
    for name, deps in graph.items():
        for d in deps:
            if d not in graph and d != "capture_json":
                problems.append("CMakeLists.txt: xp_%s depends on unknown module xp_%s" % (name, d))
    for name in sorted(graph):
        if name in reach[name]:
            ring = sorted(d for d in reach[name] if name in reach.get(d, ()))
            problems.append("CMakeLists.txt: modules %s depend on each other (dependencies "
                            "must point down)" % ", ".join("xp_" + r for r in ring))
    return problems


def lib_graph_problems(graph, reach):
    """Unknown DEPS and circles of lib/'s folders (none is allowed), each
    circle said once."""
    problems, rings = [], set()
    for name in sorted(graph):
        for d in sorted(graph[name]):
            if d not in graph:
                problems.append("%s: lib/%s depends on unknown folder lib/%s" % (
                    LIB_CMAKE, name, d))
    for name in sorted(graph):
        if name not in reach[name]:
            continue
        ring = tuple(sorted(d for d in reach[name] if name in reach.get(d, ())))
        if ring in rings:
            continue
        rings.add(ring)
        problems.append("%s: folders %s depend on each other (dependencies must point "
                        "down)" % (LIB_CMAKE, ", ".join("lib/" + r for r in ring)))
    return problems


def undeclared_lib_folders(root, graph):
    """lib/ folders holding sources that no xpl_folder() line declares."""
    problems = []
    base = os.path.join(root, "lib")
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else ():
        if d.startswith(".") or d in graph or not os.path.isdir(os.path.join(base, d)):
            continue
        for _, _, files in os.walk(os.path.join(base, d)):
            if any(fn.endswith(SOURCE_EXT) for fn in files):
                problems.append("lib/%s: a folder of sources with no xpl_folder() line in %s" % (
                    d, LIB_CMAKE))
                break
    return problems


def resolve(root, tree, including, name, quoted):
    """The repository path (relative to root) an include names, or None
    (system or generated header)."""
    cands = []
    if quoted:
        cands.append(os.path.join(os.path.dirname(including), name))
    for d in SEARCH[tree]:
        cands.append(os.path.join(root, d, name))
    for c in cands:
        if os.path.isfile(c):
            return os.path.relpath(os.path.realpath(c), os.path.realpath(root))
    return None


def src_module(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def lib_folder(rel):
    parts = rel.split(os.sep)
    if parts[0] != "lib":
        return None
    return parts[1] if len(parts) > 2 else LIB_TOP


def check_lib_include(rel, target, lib_reach):
    a, b = lib_folder(rel), lib_folder(target)
    if a == b:
        return None
    if a not in lib_reach:
        return "lib/%s is no folder of %s (xpl_folder)" % (a, LIB_CMAKE)
    if b not in lib_reach[a]:
        return "lib/%s may not include lib/%s (not among lib/%s's DEPS in %s)" % (
            a, b, a, LIB_CMAKE)
    return None


def check_include(rel, target, reach, lib_reach):
    tree = rel.split(os.sep)[0]
    ttree = target.split(os.sep)[0]
    if tree == "src":
        if ttree == "lib":
            return "src/ includes libxprobe's internals (only include/xprobe/ is public)"
        if ttree == "src":
            a, b = src_module(rel), src_module(target)
            if a is None or b is None or a == b:
                return None
            if a not in reach:
                return "src/%s is no module of CMakeLists.txt (xp_module)" % a
            if b not in reach[a]:
                return "src/%s may not include src/%s (not among xp_%s's DEPS in CMakeLists.txt)" % (a, b, a)
        return None
    if tree == "lib" and ttree == "src":
        return "lib/ includes the CLI's src/"
    if tree == "lib" and ttree == "lib":
        return check_lib_include(rel, target, lib_reach)
    if tree == "common" and ttree not in ("common", "include"):
        return "common/ may include only common/ and include/"
    if tree == "include" and ttree != "include":
        return "a public header includes %s/ (include/ stands alone)" % ttree
    if tree == "bpf" and ttree in ("src", "lib"):
        return "bpf/ includes %s/" % ttree
    return None


def sources(root):
    for top in SCANNED_DIRS:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if fn.endswith(SOURCE_EXT):
                    yield top, os.path.join(dirpath, fn)


BANNED_RE = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(BANNED))


def check(root):
    problems = []
    graph = parse_modules(root)
    if not graph:
        return ["CMakeLists.txt: no xp_module() lines found"]
    reach = closure(graph)
    problems += graph_problems(graph, reach)
    lib_graph = parse_lib_folders(root)
    if not lib_graph:
        return problems + ["%s: no xpl_folder() lines found" % LIB_CMAKE]
    lib_reach = closure(lib_graph)
    problems += lib_graph_problems(lib_graph, lib_reach)
    problems += undeclared_lib_folders(root, lib_graph)
    for tree, path in sources(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE_RE.finditer(text):
            # the quote's line: ^\s* may have matched blank lines before it
            line = text.count("\n", 0, m.start(1)) + 1
            target = resolve(root, tree, path, m.group(2), m.group(1) == '"')
            if target is None:
                continue
            why = check_include(rel, target, reach, lib_reach)
            if why:
                problems.append("%s:%d: #include %s%s%s: %s" % (
                    rel, line, m.group(1), m.group(2), ">" if m.group(1) == "<" else '"', why))
        if tree not in BANNED_DIRS:
            continue
        code = strip_comments_and_strings(text)
        for m in BANNED_RE.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            problems.append("%s:%d: banned function %s() (docs/development.md, Conventions)" % (
                rel, line, m.group(1)))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    problems = check(args.root)
    for p in problems:
        print("check-layering: " + p, file=sys.stderr)
    if problems:
        print("check-layering: %d violation(s)" % len(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
