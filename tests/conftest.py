"""Shared fixtures. Label Studio fixtures live in ``lsfixtures.py`` (a real server, started per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["lsfixtures"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: real reference data; tests that need it skip when it is absent (a user's clone)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (it is only beside the project in CI and dev sessions)")
    return SHARED_DATA
