"""Pytest collects the ``Examples`` sections of the analysis packages as doctests (issue 43).

The packages in :data:`DOCTEST_PACKAGES` (pure functions of tidy tables and the readers) are in ``testpaths``
(pyproject.toml), so ``python -m pytest`` runs every ``>>>`` line of their docstrings; no other module of
``posthoc`` is collected as a doctest, and no module here holds tests of its own. Each example is small and
worked by hand from the paper's formula (CONTRIBUTING.md, "Examples").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from _pytest.doctest import DoctestModule

#: the folders of ``plugin/posthoc`` whose modules' docstrings are doctests
DOCTEST_PACKAGES = ("metrics", "crowdtruth", "sequence", "export", "readers")
POSTHOC = Path(__file__).resolve().parent / "posthoc"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    """Every module of :data:`DOCTEST_PACKAGES` as a doctest module (``--doctest-modules`` is not needed)."""
    if file_path.suffix != ".py" or parent.config.option.doctestmodules:
        return None  # with --doctest-modules pytest's own plugin collects it already
    if file_path.parent.parent != POSTHOC or file_path.parent.name not in DOCTEST_PACKAGES:
        return None
    return DoctestModule.from_parent(parent, path=file_path)


@pytest.fixture(autouse=True)
def tables_shown_whole() -> Iterator[None]:
    """Tables print the same on every terminal: up to 20 columns in 120 characters (pandas' default width
    follows the terminal, which made an example's printed table depend on the window it ran in)."""
    with pd.option_context("display.max_columns", 20, "display.width", 120):
        yield
