# SPDX-License-Identifier: Apache-2.0
"""The environment's library doors (common/env_hooks.h, docs/environment.md).

xprobe runs as root, so XPROBE_JSON_PLUGIN and XPROBE_NVML_LIBRARY are
loaded only from an absolute path to a regular file owned by root or the
real user and writable by nobody else, in a directory likewise (checked on
O_PATH descriptors, loaded through /proc/self/fd).  Anything else is
refused with a reason that says which rule failed; nothing is mapped.
"""
import os
import shutil

import pytest

import xpcap
import xprobe_test

NOBODY = 65534
PAIR = ["--from", "syscall:mmap:entry", "--to", "syscall:mmap:exit", "--match", "exact"]


def plugin():
    return os.path.join(xprobe_test.build_dir(), "lib", "xprobe", "xprobe-json.so")


def fakenvml():
    return os.path.join(xprobe_test.fixtures_dir(), "libtarget_fakenvml.so")


def place(tmp_path, src, dir_mode=0o755, file_mode=0o755, owner=None, name=None):
    """Copy @src into a fresh directory under tmp_path; return the copy."""
    d = tmp_path / ("d%o" % dir_mode)
    d.mkdir()
    dst = d / (name or os.path.basename(src))
    shutil.copyfile(src, dst)
    os.chmod(dst, file_mode)
    if owner is not None:
        os.chown(dst, owner, owner)
    os.chmod(d, dir_mode)
    return str(dst)


def measure_with_plugin(xprobe, tmp_path, path):
    cap = tmp_path / "cap.jsonl"
    xpcap.write_jsonl(cap, [xpcap.syscall_entry(1, 100), xpcap.syscall_exit(1, 250)])
    return xprobe.run("measure", "--input", str(cap), *PAIR, "--samples", 1,
                      env=dict(os.environ, XPROBE_JSON_PLUGIN=path))


def refused(r, path, word):
    assert r.rc == 1, r
    assert r.code == "INTERNAL", r
    assert r.error["details"]["plugin"] == path
    reason = r.error["details"]["reason"]
    assert reason.startswith("refused: "), reason
    assert word in reason, reason
    assert any("writable by its owner only" in h for h in r.error["hints"]), r
    return reason


def test_trusted_plugin_copy_is_loaded(xprobe, tmp_path):
    path = place(tmp_path, plugin(), file_mode=0o644)
    r = measure_with_plugin(xprobe, tmp_path, path)
    assert r.rc == 0, r
    assert r.doc["measurement"]["samples"]["matched"] == 1


def test_world_writable_plugin_is_refused(xprobe, tmp_path):
    path = place(tmp_path, plugin(), file_mode=0o757)
    reason = refused(measure_with_plugin(xprobe, tmp_path, path), path,
                     "is writable by group or others (mode 0757)")
    assert reason.startswith("refused: file %s" % path)


def test_group_writable_plugin_is_refused(xprobe, tmp_path):
    path = place(tmp_path, plugin(), file_mode=0o775)
    refused(measure_with_plugin(xprobe, tmp_path, path), path, "writable by group or others")


def test_plugin_in_a_world_writable_directory_is_refused(xprobe, tmp_path):
    path = place(tmp_path, plugin(), dir_mode=0o777)
    reason = refused(measure_with_plugin(xprobe, tmp_path, path), path,
                     "is writable by group or others (mode 0777)")
    assert reason.startswith("refused: directory %s " % os.path.dirname(path))


def test_plugin_in_a_sticky_world_writable_directory_is_refused(xprobe, tmp_path):
    # /tmp itself: the sticky bit does not make a directory trusted
    path = place(tmp_path, plugin(), dir_mode=0o1777)
    refused(measure_with_plugin(xprobe, tmp_path, path), path, "(mode 1777)")


def test_plugin_owned_by_another_user_is_refused(xprobe, tmp_path):
    path = place(tmp_path, plugin(), file_mode=0o755, owner=NOBODY)
    refused(measure_with_plugin(xprobe, tmp_path, path), path,
            "is owned by uid %d, neither root nor the real user (uid 0)" % NOBODY)


def test_symlinked_plugin_is_refused(xprobe, tmp_path):
    good = place(tmp_path, plugin())
    link = tmp_path / "link.so"
    os.symlink(good, link)
    refused(measure_with_plugin(xprobe, tmp_path, str(link)), str(link), "symbolic link")


def test_relative_plugin_path_is_refused(xprobe, tmp_path):
    refused(measure_with_plugin(xprobe, tmp_path, "xprobe-json.so"), "xprobe-json.so",
            "must be an absolute path")


def test_plugin_that_is_a_directory_is_refused(xprobe, tmp_path):
    d = tmp_path / "dir.so"
    d.mkdir()
    refused(measure_with_plugin(xprobe, tmp_path, str(d)), str(d), "not a regular file")


def discover_with_nvml(xprobe, path):
    env = dict(os.environ, XPROBE_NVML_LIBRARY=path)
    return xprobe.run("discover", "--pid", os.getpid(), env=env)


def test_trusted_nvml_copy_is_loaded(xprobe, tmp_path):
    r = discover_with_nvml(xprobe, place(tmp_path, fakenvml(), file_mode=0o644))
    assert r.rc == 0, r
    assert r.doc["candidates"] == []


@pytest.mark.parametrize("dir_mode,file_mode,word", [
    (0o755, 0o666, "file"),
    (0o777, 0o755, "directory"),
], ids=["world-writable-file", "world-writable-directory"])
def test_untrusted_nvml_library_is_refused(xprobe, tmp_path, dir_mode, file_mode, word):
    path = place(tmp_path, fakenvml(), dir_mode=dir_mode, file_mode=file_mode)
    r = discover_with_nvml(xprobe, path)
    assert r.rc == 1, r
    assert r.code == "CUPTI_NOT_AVAILABLE", r
    assert r.error["message"].startswith(
        "XPROBE_NVML_LIBRARY %s is not loaded: %s " % (path, word)), r
    assert "writable by group or others" in r.error["message"]
    assert r.error["details"]["nvml_library"] == path
    assert any("XPROBE_NVML_LIBRARY must name" in h for h in r.error["hints"])
