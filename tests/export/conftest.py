"""Fixtures of the export tests: the tiny study in a real Label Studio (:mod:`ls_tiny_study`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ls_tiny_study import TinyStudy, build_tiny_study


@pytest.fixture(scope="session")
def tiny_study(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyStudy]:
    """The tiny study set up and annotated in the session's Label Studio (see :mod:`ls_tiny_study`)."""
    with build_tiny_study(ls_server, tmp_path_factory.mktemp("tiny")) as study:
        yield study
