# SPDX-License-Identifier: Apache-2.0
"""Every program `make test` and `make demo` run comes from a package that
scripts/install-deps.sh installs for them, or from Debian's required set
(on every Debian 12 system): a fresh machine where only the README's
commands ran has each of them.

The programs are found in the sources, not listed by hand: every string
literal of the tests, their helpers and the demo that names an executable
on this machine, where it stands as a command (the first element of a
list literal, an argument of shutil.which, a word of a subprocess line, a
CANDIDATES tuple, the first word of a shell command line of the demo).
Each is resolved to its file, and dpkg says which package owns it.

Before this test, tests/live/test_probe_cost.py ran bpftrace, which
install-deps.sh installed only for the benchmarks: `make test` failed on a
fresh machine and passed where bpftrace had been installed by hand.
"""
import glob
import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPS = os.path.join(ROOT, "scripts", "install-deps.sh")

# what the suite runs, by the sources that run it (bench/ and tests/gpu have
# lists of their own: the bench set, and a machine with a GPU)
SOURCES = ["tests/cli/*.py", "tests/live/*.py", "tests/pylib/*.py", "tests/tools/*.py",
           "tests/conftest.py"]
SHELL_SOURCES = ["scripts/demo.sh", "scripts/ensure-tracefs.sh", "scripts/run-fuzz.sh",
                 "scripts/test-stages.sh"]
CALL = re.compile(r"subprocess|Popen|check_output|check_call|shutil\.which|os\.exec|\.run\(")
LIT = re.compile(r'"([A-Za-z0-9_./+-]+)"')


def executable(word):
    """The file @word runs, or None (not a command on this machine)."""
    if not word or word.startswith("-") or "/" in word.strip("/") and not word.startswith("/"):
        return None
    path = word if word.startswith("/") else shutil.which(word)
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None
    if os.path.realpath(path).startswith(ROOT) or "/tmp/" in path:
        return None  # ours, built or copied by a test
    return path


def commands_in_python(path):
    found = set()
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    # ["prog", ... as a list literal (not a subscript such as d["key"])
    for m in re.finditer(r'(?<![\w\]\)"])\[\s*"([A-Za-z0-9_./+-]+)"', text):
        found.add(m.group(1))
    for m in re.finditer(r'shutil\.which\(\s*"([^"]+)"', text):
        found.add(m.group(1))
    for m in re.finditer(r'CANDIDATES\s*=\s*\(([^)]*)\)', text):
        found.update(LIT.findall(m.group(1)))
    for line in text.splitlines():
        if CALL.search(line):
            found.update(LIT.findall(line))
    return found


def commands_in_shell(path):
    found = set()
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            for part in re.split(r"[|;&]|\$\(|`", line):
                words = part.split()
                while words and ("=" in words[0] or words[0] in ("if", "then", "!", "exec",
                                                                  "while", "until", "do")):
                    words = words[1:]
                if words:
                    found.add(words[0].strip("\"'"))
    return found


def programs():
    """{file: set of the sources that run it}"""
    out = {}
    for pattern in SOURCES:
        for src in glob.glob(os.path.join(ROOT, pattern)):
            rel = os.path.relpath(src, ROOT)
            for word in commands_in_python(rel):
                exe = executable(word)
                if exe:
                    out.setdefault(exe, set()).add(rel)
    for rel in SHELL_SOURCES:
        for word in commands_in_shell(rel):
            exe = executable(word)
            if exe:
                out.setdefault(exe, set()).add(rel)
    return out


def owner(path):
    """The Debian package that owns @path (usr-merge aware), or None."""
    real = os.path.realpath(path)
    tries = {path, real}
    for p in list(tries):
        for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/")):
            if p.startswith(a):
                tries.add(b + p[len(a):])
            elif p.startswith(b):
                tries.add(a + p[len(b):])
    for p in sorted(tries):
        r = subprocess.run(["dpkg-query", "-S", p], capture_output=True, text=True)
        # past the diversion lines (linux-perf diverts /usr/bin/perf to
        # its wrapper, and owns the path too)
        lines = [x for x in r.stdout.splitlines() if not x.startswith("diversion ")]
        if r.returncode == 0 and lines:
            return lines[0].split(":")[0].split(",")[0].strip()
    return None


def required(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Essential} ${Priority}", pkg],
                       capture_output=True, text=True)
    return r.returncode == 0 and ("yes" in r.stdout.split()[:1] or "required" in r.stdout)


def listed(set_name):
    r = subprocess.run(["sh", DEPS, "--list", set_name], capture_output=True, text=True,
                       check=True)
    return set(r.stdout.split())


def with_dependencies(pkgs, depth=3):
    """@pkgs and what they depend on (Depends, Pre-Depends), @depth levels
    deep: what installing them brings (build-essential brings make and
    gcc, python3 brings python3-minimal)."""
    seen, edge = set(pkgs), set(pkgs)
    for _ in range(depth):
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Depends}, ${Pre-Depends}\n"] +
                           sorted(edge), capture_output=True, text=True)
        nxt = set()
        for field in r.stdout.replace("|", ",").split(","):
            name = field.strip().split(" ")[0].split(":")[0]
            if name and name not in seen:
                nxt.add(name)
        seen |= nxt
        edge = nxt
        if not edge:
            break
    return seen


def test_every_program_the_suite_runs_is_installed_for_it():
    test_set = with_dependencies(listed("test"))
    found = programs()
    # the scan finds what it must (a scan that finds nothing proves nothing)
    names = {os.path.basename(p) for p in found}
    for must in ("bpftrace", "readelf", "mount", "unshare", "chromium-headless-shell"):
        if shutil.which(must):
            assert must in names, (must, sorted(names))
    missing = []
    for exe, srcs in sorted(found.items()):
        pkg = owner(exe)
        if pkg is None:
            if "pyenv" in exe or exe.startswith("/usr/local/"):
                continue  # not Debian's: the suite runs Debian's /usr/bin/python3
            missing.append("%s (no Debian package owns it; run by %s)" % (exe, sorted(srcs)))
        elif pkg not in test_set and not required(pkg):
            missing.append("%s from package %s (run by %s)" % (exe, pkg, sorted(srcs)))
    assert not missing, "install-deps.sh's test set lacks:\n  " + "\n  ".join(missing)


def test_the_build_set_is_smaller_and_bench_tools_stay_out_of_the_test_set():
    build, test, bench = listed("build"), listed("test"), listed("bench")
    assert build < test < bench
    # make and make demo install no browser, no sanitizer runtime, no pytest
    for pkg in ("chromium-headless-shell", "libclang-rt-14-dev", "python3-pytest", "bpftrace",
                "linux-perf", "libbpf-tools", "prometheus", "prometheus-node-exporter"):
        assert pkg in test and pkg not in build, pkg
    for pkg in ("redis-server", "hyperfine", "lttng-tools"):
        assert pkg in bench and pkg not in test, pkg
