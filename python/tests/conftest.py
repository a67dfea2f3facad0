"""Shared fixtures: where the checkout, the CLI and the examples are.

ctest runs these with USC_SOURCE_DIR, USC_CLI and ULPSCOPE_LIB set
(tests/python/tests.cmake); run by hand, the checkout is the one this file
sits in and the CLI is build/ulpscope.
"""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(os.environ.get("USC_SOURCE_DIR",
                           Path(__file__).resolve().parents[2]))
CLI = Path(os.environ.get("USC_CLI", ROOT / "build" / "ulpscope"))
EXAMPLES = sorted(p.parent for p in (ROOT / "data" / "examples").glob("*/*/kernel.hlo"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> Path:
    if not CLI.exists():
        pytest.fail(f"{CLI}: the ulpscope program is not built")
    return CLI
