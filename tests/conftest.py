# SPDX-License-Identifier: Apache-2.0
"""Shared pytest fixtures for tests/cli and tests/live.

Every test drives the built binary ($XPROBE_BIN, default build/bin/xprobe)
and validates every JSON document it prints against schemas/ (a test that
runs the CLI and skips validation is a defect).  Fixture programs live in
$XPROBE_BUILD/tests/fixtures.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "pylib"))

import pytest  # noqa: E402

import xprobe_test  # noqa: E402


@pytest.fixture(scope="session")
def xprobe():
    return xprobe_test.Xprobe()


@pytest.fixture(scope="session")
def fixtures_dir():
    return xprobe_test.fixtures_dir()
