# SPDX-License-Identifier: Apache-2.0
"""`--explain` command lines (docs/explain.md): with --histogram it is the
in-kernel split; otherwise the exact modes' scheduler timeline of a live
target, whose pairs a thread opens and closes.  What no target could make
valid is a usage error (exit 2, usage on stderr, nothing on stdout); a
bound out of range is a JSON error (exit 1).  None of these touch a target
(pid 1 is never probed: the checks come first)."""
import pytest

UP = ["--from", "uprobe:/bin/true:main:entry", "--to", "uprobe:/bin/true:main:return",
      "--match", "stack-nested", "--samples", "1"]


def usage(xprobe, *argv):
    r = xprobe.run(*argv)
    assert r.rc == 2, r
    assert r.stdout == ""
    assert "Usage: xprobe" in r.stderr
    return r.stderr


@pytest.mark.parametrize("extra,flag", [
    (["--input", "/dev/null"], "--input"),
    (["--spec", "/dev/null"], "--spec"),
    (["--pid", "1", "--cpu-sample"], "--cpu-sample"),
    (["--pid", "1", "--syscall-aggregate"], "--syscall-aggregate"),
    (["--pid", "1", "--aggregate"], "--aggregate"),
])
def test_modes_without_a_timeline_are_refused(xprobe, extra, flag):
    err = usage(xprobe, "measure", "--explain", *extra)
    assert "'--explain' cannot be used with '%s'" % flag in err or \
        "'%s' cannot be used with '--explain'" % flag in err, err


def test_rules(xprobe):
    assert "--explain follows a live process's threads" in usage(
        xprobe, "measure", "--explain", "--from", "uprobe:/bin/true:main:entry",
        "--to", "uprobe:/bin/true:main:return", "--match", "stack-nested", "--samples", "1",
        "--duration-ms", "10")
    err = usage(xprobe, "measure", "--pid", "1", "--explain", "--from", "cuda:kernel_start",
                "--to", "cuda:kernel_end", "--match", "exact", "--samples", "1")
    assert "a GPU kernel, copy or memset is not one" in err, err
    assert "'--explain-top' requires '--explain'" in usage(
        xprobe, "measure", "--pid", "1", "--explain-top", "3", *UP)
    assert "'--explain-top' requires '--explain'" in usage(
        xprobe, "measure", "--pid", "1", "--histogram", "--explain-top", "3",
        "--from", "syscall:write:entry", "--to", "syscall:write:exit", "--match", "exact",
        "--duration-ms", "10")


def test_explain_top_out_of_range(xprobe):
    r = xprobe.run("measure", "--pid", "1", "--explain", "--explain-top", "65", *UP)
    assert r.rc == 1 and r.code == "SESSION_LIMIT_EXCEEDED", r
    d = r.error["details"]
    assert d["flag"] == "explain-top" and d["value"] == 65 and d["max"] == 64
