"""Shared fixtures: the Syzygy path (from $SYZYGY_PATH) and the ../shared data.

A test that needs tables skips only when SYZYGY_PATH is unset; when it is set
but holds no tables, the test fails (CI must never pass by skipping).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chess_endgame.tablebase import Prober, scan

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def syzygy_path() -> str:
    path = os.environ.get("SYZYGY_PATH")
    if not path:
        pytest.skip("SYZYGY_PATH is not set (point it at a directory of Syzygy tables)")
    found = scan(path)
    if not found.wdl or not found.dtz:
        pytest.fail(f"SYZYGY_PATH={path} is set but holds no Syzygy tables "
                    f"({found.bad_directories or 'no .rtbw/.rtbz files'})")
    return path


@pytest.fixture(scope="session")
def syzygy_dir(syzygy_path: str) -> Path:
    """The first directory of SYZYGY_PATH (tests copy single files from it)."""
    return Path(scan(syzygy_path).directories[0])


@pytest.fixture(scope="session")
def prober(syzygy_path: str) -> Prober:
    return Prober(syzygy_path)


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"{SHARED} is missing: the project expects its ../shared data beside the checkout")
    return SHARED


def require_tables(prober: Prober, *names: str) -> None:
    """Fail (not skip) when a table a test relies on is absent from SYZYGY_PATH."""
    missing = [n for n in names if n not in prober.files.wdl or n not in prober.files.dtz]
    if missing:
        pytest.fail(f"SYZYGY_PATH lacks tables this test needs: {', '.join(missing)}")
