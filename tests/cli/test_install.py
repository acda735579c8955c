# SPDX-License-Identifier: Apache-2.0
"""make install / cmake --install (cmake/install.cmake): the build under
test ($XPROBE_BUILD) installed into a temporary DESTDIR with prefix /usr
by the Makefile's install-files target, and run from there as it is (no
chroot): the installed xprobe must find its JSON plugin and its Agent
relative to itself (bin/../lib/xprobe/xprobe-json.so, bin/../lib/
libxprobe.so), never in the build tree; `man -l` renders the page with
every flag, command, policy and code; the bash completion, sourced in
bash, offers the commands, each command's flags, the policies and the
selector prefixes; a C program built against the installed libxprobe.pc
(PKG_CONFIG_SYSROOT_DIR into the DESTDIR) begins and closes a session.
A second install with cmake --install --prefix checks that the .pc file
names the prefix the install ran with, not the one configured.
"""
import json
import os
import stat
import re
import shutil
import subprocess

import pytest

import skill_examples as sk
import xprobe_test

ROOT = xprobe_test.ROOT
PREFIX = "/usr"
DEMO = os.path.join(ROOT, "demo", "mmap.jsonl")
COMMANDS = ("doctor", "discover", "validate", "measure")
POLICIES = ("exact", "first-after", "nearest", "stack-nested", "stream-order")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
MAN_SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "COMMON OPTIONS",
                "DISCOVER OPTIONS", "VALIDATE OPTIONS", "MEASURE OPTIONS", "SELECTORS",
                "POLICIES", "OUTPUT", "EXIT STATUS", "ERROR CODES", "ENVIRONMENT", "FILES",
                "EXAMPLES", "NOTES", "SEE ALSO")
CONSUMER = r"""
#include <stdio.h>
#include <xprobe/xprobe.h>

int main(int argc, char **argv)
{
	struct xprobe_inspect_config *cfg;
	char dir[4096];
	int rc;

	if (argc != 2)
		return 2;
	if ((rc = xprobe_inspect_config_new(&cfg)) ||
	    (rc = xprobe_inspect_config_set_output_dir(cfg, argv[1])) ||
	    (rc = xprobe_inspect_config_set_activity(cfg, "system_profile", true)) ||
	    (rc = xprobe_inspect_begin_with_options(cfg))) {
		fprintf(stderr, "begin: %s (%s)\n", xprobe_errname(rc), xprobe_last_error());
		return 1;
	}
	xprobe_inspect_config_free(cfg);
	if (!xprobe_inspect_is_active() || xprobe_inspect_get_output_dir(dir, sizeof(dir)) < 0)
		return 1;
	if ((rc = xprobe_inspect_close())) {
		fprintf(stderr, "close: %s\n", xprobe_errname(rc));
		return 1;
	}
	printf("%s %d.%d %s\n", xprobe_version(), XPROBE_VERSION_MAJOR, XPROBE_VERSION_MINOR, dir);
	return 0;
}
"""


def clean_env(**extra):
    """The environment without an outer make's jobserver and without
    anything that would point xprobe elsewhere."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL") and not k.startswith("XPROBE_")}
    env.update(extra)
    return env


def sanitized_build(build):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        return "XPROBE_SANITIZE:BOOL=ON" in f.read()


@pytest.fixture(scope="module")
def dest(tmp_path_factory):
    """DESTDIR of `make install-files BUILD_DIR=<build> PREFIX=/usr`."""
    d = str(tmp_path_factory.mktemp("destdir"))
    p = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "install-files",
                        "BUILD_DIR=" + xprobe_test.build_dir(), "DESTDIR=" + d,
                        "PREFIX=" + PREFIX], capture_output=True, text=True, env=clean_env(),
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return d


def inst(dest, rel):
    return os.path.join(dest, PREFIX.lstrip("/"), rel)


@pytest.fixture(scope="module")
def installed(dest):
    return xprobe_test.Xprobe(inst(dest, "bin/xprobe"))


def test_layout(dest):
    want = ["bin/xprobe", "lib/xprobe/xprobe-json.so", "lib/libxprobe.so",
            "lib/pkgconfig/libxprobe.pc", "share/man/man1/xprobe.1",
            "share/bash-completion/completions/xprobe"]
    want += ["include/xprobe/" + n for n in os.listdir(os.path.join(ROOT, "include", "xprobe"))
             if n.endswith(".h")]
    want += ["share/xprobe/schemas/" + n for n in os.listdir(os.path.join(ROOT, "schemas"))
             if n.endswith(".schema.json")]
    want += ["share/xprobe/skills/xprobe/" + r for r in sk.skill_files()]
    for rel in want:
        assert os.path.isfile(inst(dest, rel)), rel
    assert os.stat(inst(dest, "bin/xprobe")).st_mode & 0o777 == 0o755
    # the Agent injection and the plugin loader refuse libraries others
    # may write: nothing installed is writable by group or others
    for d, dirs, names in os.walk(dest):
        for n in dirs + names:
            st = os.lstat(os.path.join(d, n))
            # a link's own mode means nothing; what it names is checked
            assert stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o022, os.path.join(d, n)
    for rel in ("share/man/man1/xprobe.1", "lib/pkgconfig/libxprobe.pc", "include/xprobe/xprobe.h"):
        assert os.stat(inst(dest, rel)).st_mode & 0o777 == 0o644, rel
    # everything under the prefix, nothing else (no build-tree fixtures or tests)
    top = set(os.listdir(dest))
    assert top == {PREFIX.strip("/")}, top
    assert sorted(os.listdir(inst(dest, ""))) == ["bin", "include", "lib", "share"]
    assert os.listdir(inst(dest, "bin")) == ["xprobe"]
    assert sorted(os.listdir(inst(dest, "lib"))) == [
        "libxprobe.so", "libxprobe.so.0", "libxprobe.so.0.1.0", "pkgconfig", "xprobe"]
    # the versioned file, its soname and the link for linking, as a
    # distribution ships them (the soname is what -lxprobe programs record)
    lib = inst(dest, "lib")
    assert os.readlink(os.path.join(lib, "libxprobe.so")) == "libxprobe.so.0"
    assert os.readlink(os.path.join(lib, "libxprobe.so.0")) == "libxprobe.so.0.1.0"
    assert not os.path.islink(os.path.join(lib, "libxprobe.so.0.1.0"))
    dyn = subprocess.run(["readelf", "-d", os.path.join(lib, "libxprobe.so.0.1.0")],
                         capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libxprobe.so.0]" in dyn, dyn


def test_no_build_paths_in_runpath(dest):
    for rel in ("bin/xprobe", "lib/libxprobe.so", "lib/xprobe/xprobe-json.so"):
        out = subprocess.run(["readelf", "-d", inst(dest, rel)], capture_output=True,
                             text=True, check=True).stdout
        assert "RPATH" not in out and "RUNPATH" not in out, (rel, out)


def pc_field(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.split("=", 1)[1].strip()
    return None


def test_pc_names_the_install_prefix(dest, tmp_path):
    """The .pc is written with the prefix of the install, not the one
    configured: cmake --install --prefix into another root says so."""
    assert pc_field(inst(dest, "lib/pkgconfig/libxprobe.pc"), "prefix") == PREFIX
    other = str(tmp_path / "root")
    p = subprocess.run(["cmake", "--install", xprobe_test.build_dir(), "--prefix",
                        "/opt/xprobe-test"], capture_output=True, text=True,
                       env=clean_env(DESTDIR=other), timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    pc = os.path.join(other, "opt/xprobe-test/lib/pkgconfig/libxprobe.pc")
    assert pc_field(pc, "prefix") == "/opt/xprobe-test"
    assert os.path.isfile(os.path.join(other, "opt/xprobe-test/lib/xprobe/xprobe-json.so"))
    # and the DESTDIR=... install is unchanged by it
    assert pc_field(inst(dest, "lib/pkgconfig/libxprobe.pc"), "prefix") == PREFIX


def test_installed_binary_runs(installed, xprobe):
    r = installed.run("--version", json_mode=False)
    assert r.rc == 0 and r.stdout == xprobe.run("--version", json_mode=False).stdout, r
    r = installed.run("doctor")
    assert r.rc == 0 and r.doc["ok"] is True, r


def test_installed_binary_finds_its_plugin(installed, dest):
    """measure --input loads lib/xprobe/xprobe-json.so beside the installed
    bin/: the installed one (without it, the error names exactly that
    path; the build tree's plugin is never a fallback)."""
    args = ("measure", "--input", DEMO, "--from", "syscall:mmap:entry", "--to",
            "syscall:mmap:exit", "--match", "exact", "--samples", "5")
    r = installed.run(*args, env=clean_env())
    assert r.rc == 0 and r.doc["measurement"]["samples"]["matched"] == 5, r
    plugin = inst(dest, "lib/xprobe/xprobe-json.so")
    aside = plugin + ".aside"
    os.rename(plugin, aside)
    try:
        r = installed.run(*args, env=clean_env())
    finally:
        os.rename(aside, plugin)
    assert r.code == "INTERNAL", r
    assert os.path.realpath(r.error["details"]["plugin"]) == os.path.realpath(plugin), r


def test_installed_binary_finds_its_agent(installed, dest):
    """validate names the Agent measure would inject: lib/libxprobe.so.0
    (its real file) beside the installed bin/, not the build tree's."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        r = installed.run("validate", "--pid", sleeper.pid, "--from",
                          "cuda:nvtx_range_start:name~^step$", "--to",
                          "cuda:nvtx_range_end:name~^step$", "--match", "exact",
                          env=clean_env())
    finally:
        sleeper.kill()
        sleeper.wait()
    assert r.rc == 0 and r.doc["valid"] is False, r
    agent = os.path.realpath(inst(dest, "lib/libxprobe.so"))
    issue = [i for i in r.doc["issues"] if i["code"] == "CUPTI_AGENT_NOT_LOADED"][0]
    assert "NVTX_INJECTION64_PATH=%s " % agent in issue["message"], issue
    assert os.path.join(xprobe_test.build_dir(), "lib") not in issue["message"]


def helps(xprobe):
    out = {"": xprobe.run("--help", json_mode=False).stdout}
    for c in COMMANDS:
        out[c] = xprobe.run(c, "--help", json_mode=False).stdout
    return out


@pytest.fixture(scope="module")
def man_text(dest):
    page = inst(dest, "share/man/man1/xprobe.1")
    env = clean_env(MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    p = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", "groff warnings: %s" % p.stderr
    assert "\b" not in p.stdout
    return p.stdout


def test_man_page_sections(man_text):
    headings = [l for l in man_text.split("\n") if re.fullmatch(r"[A-Z][A-Z ]+", l)]
    assert headings == list(MAN_SECTIONS), headings
    assert man_text.startswith("XPROBE(1)")


def test_man_page_covers_the_cli(man_text, installed):
    """Every flag of every command's --help, the four commands, the five
    policies, every exit status and every error code."""
    documented = set(FLAG.findall(man_text))
    for cmd, text in helps(installed).items():
        missing = set(FLAG.findall(text)) - documented
        assert not missing, "xprobe %s --help has flags the man page lacks: %s" % (cmd, missing)
    for word in COMMANDS + POLICIES:
        assert re.search(r"\b%s\b" % re.escape(word), man_text), word
    for code in xprobe_test.schema("error")["$defs"]["ErrorCode"]["enum"]:
        assert code in man_text, code
    for prefix in ("uprobe:", "syscall:", "tracepoint:", "python:gc_start", "python:gc_end",
                   "cuda:runtime_api:", "cuda:driver_api:", "cuda:kernel_start",
                   "cuda:memcpy_start", "cuda:memset_start", "cuda:nvtx_range_start"):
        assert prefix in man_text, prefix
    for var in ("XPROBE_JSON_PLUGIN", "XPROBE_NVML_LIBRARY", "XPROBE_CUPTI_AGENT_PATH"):
        assert var in man_text, var
    exits = man_text.split("\nEXIT STATUS\n")[1].split("\nERROR CODES\n")[0]
    assert re.findall(r"^       (\d)\s", exits, re.M) == ["0", "1", "2", "3", "4"], exits


def test_man_page_oracle(tmp_path):
    """A planted roff defect is a warning the check above fails on."""
    bad = tmp_path / "bad.1"
    bad.write_text(".TH BAD 1\n.SH NAME\nbad \\- x\n.XYZ\n")
    p = subprocess.run(["man", "--warnings", "-l", str(bad)], capture_output=True, text=True,
                       env=clean_env(MANPAGER="cat", PAGER="cat"), timeout=60)
    assert p.stderr != ""


def complete(dest, line, wordbreaks=None):
    """The candidates the installed completion offers for @line (the
    cursor at its end), through `complete -F`'s function."""
    script = """
set -u
source "$1"
complete -p xprobe >/dev/null || { echo "not registered" >&2; exit 3; }
COMP_LINE=$2
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
if [ -n "$3" ]; then COMP_WORDBREAKS=$3; fi
_xprobe
printf '%s\\n' "${COMPREPLY[@]}"
"""
    env = clean_env(PATH=inst(dest, "bin") + ":" + os.environ["PATH"])
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                        inst(dest, "share/bash-completion/completions/xprobe"), line,
                        wordbreaks or ""], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return [c for c in p.stdout.split("\n") if c]


def test_completion_commands_and_flags(dest, installed):
    h = helps(installed)
    assert complete(dest, "xprobe ") == list(COMMANDS)
    assert complete(dest, "xprobe me") == ["measure"]
    for cmd in COMMANDS:
        assert set(complete(dest, "xprobe %s --" % cmd)) == set(FLAG.findall(h[cmd])), cmd
    assert "--pid" not in complete(dest, "xprobe doctor --")
    assert set(complete(dest, "xprobe measure --max-")) == {
        f for f in FLAG.findall(h["measure"]) if f.startswith("--max-")}


def test_completion_values(dest):
    assert complete(dest, "xprobe measure --match ") == sorted(POLICIES)
    assert complete(dest, "xprobe validate --match st") == ["stack-nested", "stream-order"]
    assert complete(dest, "xprobe measure --format ") == ["jsonl", "chrome"]
    assert complete(dest, "xprobe measure --by ") == ["thread", "arg0"]
    assert complete(dest, "xprobe measure --hist ") == ["log2", "linear", "none"]
    assert complete(dest, "xprobe measure --samples ") == []
    assert complete(dest, "xprobe measure --events-out %s/us" % dest) == [dest + "/usr"]
    assert complete(dest, "xprobe measure --input %s/usr/bin/xpr" % dest) == [
        inst(dest, "bin/xprobe")]
    pids = complete(dest, "xprobe validate --pid 1")
    assert "1" in pids and all(p.startswith("1") and p.isdigit() for p in pids)


def test_completion_selectors(dest):
    assert complete(dest, "xprobe measure --from ") == [
        "uprobe:", "syscall:", "tracepoint:", "python:gc_start", "python:gc_end", "cuda:"]
    # bash replaces only what follows the last ':' of the word
    assert complete(dest, "xprobe measure --to python:gc") == ["gc_start", "gc_end"]
    assert complete(dest, "xprobe validate --from syscall:mmap:e") == ["entry", "exit"]
    assert "mmap:" in complete(dest, "xprobe validate --from syscall:mma")
    assert complete(dest, "xprobe measure --from cuda:nvtx") == [
        "nvtx_range_start:name~", "nvtx_range_end:name~"]
    assert complete(dest, "xprobe measure --from cuda:memcpy_start:kind=Dto") == ["DtoH", "DtoD"]
    assert complete(dest, "xprobe measure --to cuda:run") == ["runtime_api:"]
    binary = inst(dest, "bin/xprobe")
    assert complete(dest, "xprobe measure --from uprobe:" + binary[:-2]) == [binary + ":"]
    assert complete(dest, "xprobe measure --from uprobe:%s:main:r" % binary) == ["return"]
    # only symbols the binary defines: a prefix completes to them, a
    # symbol that does not exist gets no :entry (before: "processC:entry")
    assert "main:" in complete(dest, "xprobe measure --from uprobe:%s:mai" % binary)
    assert complete(dest, "xprobe measure --from uprobe:%s:processC" % binary) == []
    assert complete(dest, "xprobe measure --from uprobe:%s:processC:e" % binary) == []
    assert complete(dest, "xprobe measure --from uprobe:%s:main" % binary) == [
        "main:entry", "main:return"]
    assert "sched_switch" in complete(dest, "xprobe measure --to tracepoint:sched:sched_s")
    # without ':' among the word breaks the whole selector is the word
    assert complete(dest, "xprobe measure --to python:gc", wordbreaks=" \t\n\"'") == [
        "python:gc_start", "python:gc_end"]


def test_pkgconfig_consumer(dest, tmp_path):
    """A program built against the installed libxprobe.pc, run against the
    installed libxprobe.so: begins and closes a session."""
    env = clean_env(PKG_CONFIG_SYSROOT_DIR=dest,
                    PKG_CONFIG_PATH=inst(dest, "lib/pkgconfig"),
                    PKG_CONFIG_LIBDIR=inst(dest, "lib/pkgconfig"),
                    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS="1", PKG_CONFIG_ALLOW_SYSTEM_LIBS="1")

    def pkg(*args):
        p = subprocess.run(["pkg-config"] + list(args) + ["libxprobe"], capture_output=True,
                           text=True, env=env, check=True)
        return p.stdout.split()

    assert pkg("--modversion") == ["0.1.0"]
    assert pkg("--cflags") == ["-I" + inst(dest, "include")]
    assert pkg("--libs") == ["-L" + inst(dest, "lib"), "-lxprobe"]
    src = tmp_path / "consumer.c"
    src.write_text(CONSUMER)
    exe = str(tmp_path / "consumer")
    san = ["-fsanitize=address,undefined"] if sanitized_build(xprobe_test.build_dir()) else []
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", str(src), "-o", exe] + san +
                   pkg("--cflags") + pkg("--libs"), check=True, env=env)
    out = tmp_path / "out"
    run_env = clean_env(LD_LIBRARY_PATH=inst(dest, "lib"))
    p = subprocess.run([exe, str(out)], capture_output=True, text=True, env=run_env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    version, api, session = p.stdout.split()
    assert (version, api) == ("0.1.0", "0.1")
    assert session.startswith(str(out) + "/") and os.path.isfile(
        os.path.join(session, "trace_info.pb")), session
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, env=run_env).stdout
    assert "libxprobe.so.0 => %s" % inst(dest, "lib/libxprobe.so.0") in ldd, ldd


def test_installed_binary_ignores_the_test_hooks(installed, tmp_path):
    """What `make install` ships carries no test hook: the variables the
    suite sets to change behaviour (here XPROBE_TEST_WRITE_FAULT, which
    makes every artifact write fail) are ignored by it, and honoured by
    the suite's own test-bin/xprobe.  Before, the default build honoured
    them and `make install` shipped them."""
    import xpcap
    src = xpcap.write_jsonl(tmp_path / "in.jsonl", [
        xpcap.syscall_entry(100, 1000), xpcap.syscall_exit(100, 1500)])
    args = ["measure", "--input", src, "--from", "syscall:mmap:entry", "--to",
            "syscall:mmap:exit", "--match", "exact", "--samples", 1, "--events-out"]
    env = clean_env(XPROBE_TEST_WRITE_FAULT="1", XPROBE_TEST_RING_BYTES="4096",
                    XPROBE_TRACEFS_ROOT="/nonexistent")
    r = installed.run(*args, tmp_path / "a.jsonl", env=env)
    assert r.rc == 0 and r.doc["status"] == "completed", r
    assert (tmp_path / "a.jsonl").exists()
    hooked = os.path.join(xprobe_test.build_dir(), "test-bin", "xprobe")
    if os.path.exists(hooked):
        r = xprobe_test.Xprobe(hooked).run(*args, tmp_path / "b.jsonl", env=env)
        assert r.rc == 1 and r.code == "TRACE_EXPORT_FAILED", r
