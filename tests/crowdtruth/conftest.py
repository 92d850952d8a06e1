"""Fixtures of the CrowdTruth tests (helpers live in ``ct_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def crowdtruth_data(shared_data: Path) -> Path:
    path = shared_data / "crowdtruth"
    if not path.is_dir():
        pytest.skip("../shared/data/crowdtruth is absent")
    return path
