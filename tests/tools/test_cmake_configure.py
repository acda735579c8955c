# SPDX-License-Identifier: Apache-2.0
"""scripts/cmake-configure.sh: a build directory configured for another
tree (the tree copied or moved with its build/) has its cache dropped and
is configured for this one; one of this tree is configured as it is.
Before, `make install` in a copied tree failed: CMake refuses a cache made
for another source directory.  A stub cmake records how it was called."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "cmake-configure.sh")


def run(tmp_path, build):
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "cmake").write_text('#!/bin/sh\necho "$@" > "%s"\n' % (tmp_path / "args"))
    (stub / "cmake").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (stub, os.environ["PATH"]))
    p = subprocess.run(["sh", SCRIPT, str(build), "-DX=1"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stderr
    return (tmp_path / "args").read_text().split(), p.stderr


def test_a_cache_of_another_tree_is_dropped(tmp_path):
    build = tmp_path / "build"
    (build / "CMakeFiles").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text("CMAKE_HOME_DIRECTORY:INTERNAL=/somewhere/else\n")
    (build / "kept.o").write_text("")
    args, err = run(tmp_path, build)
    assert args == ["-S", ROOT, "-B", str(build), "-DX=1"]
    assert not (build / "CMakeCache.txt").exists() and not (build / "CMakeFiles").exists()
    assert (build / "kept.o").exists()
    assert "configured for /somewhere/else" in err


def test_a_cache_of_this_tree_is_kept(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_text("CMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % ROOT)
    args, err = run(tmp_path, build)
    assert (build / "CMakeCache.txt").exists() and err == ""
    assert args[:4] == ["-S", ROOT, "-B", str(build)]
