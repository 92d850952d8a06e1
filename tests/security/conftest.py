"""Fixtures of the security tests: a small study manifest over the bundled sample corpus (real planner)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsfixtures import small_sample_manifest


@pytest.fixture(scope="session")
def manifest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("security-study") / "security.manifest.sqlite"
    small_sample_manifest(path, name="security", n_documents=3, n_workers=3, control_tasks=False).close()
    return path
