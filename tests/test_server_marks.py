"""A test that starts a server carries its marker, so the fast loop of CONTRIBUTING.md starts none (issue 43)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import lsfixtures
from servermarks import SERVER_FIXTURES, unmarked_server_tests

TESTS = Path(__file__).resolve().parent


def _item(nodeid: str, fixtures: list[str], marks: list[str]) -> Any:
    return SimpleNamespace(nodeid=nodeid, fixturenames=fixtures,
                           get_closest_marker=lambda name: name if name in marks else None)


def test_a_test_using_a_server_fixture_unmarked_is_named_with_the_marker_it_needs() -> None:
    items = [
        _item("t.py::ls", ["tmp_path", "ls_project", "ls_server", "ls_template"], ["labelstudio"]),
        _item("t.py::ls_unmarked", ["tiny_study", "ls_server", "ls_template"], ["slow"]),
        _item("t.py::page", ["browser"], ["labelstudio"]),
        _item("t.py::proxy", ["nginx_binary", "tmp_path"], ["nginx"]),
        _item("t.py::plain", ["tmp_path"], []),
    ]
    assert unmarked_server_tests(items) == [
        "t.py::ls_unmarked: needs @pytest.mark.labelstudio (uses ls_template)",
        "t.py::page: needs @pytest.mark.browser (uses browser)",
    ]


def test_the_server_fixtures_exist_and_their_markers_are_declared(pytestconfig: pytest.Config) -> None:
    assert callable(lsfixtures.ls_template) and callable(lsfixtures.browser)
    assert "def nginx_binary(" in (TESTS / "conftest.py").read_text(encoding="utf-8")
    declared = {line.split(":")[0].strip() for line in pytestconfig.getini("markers")}
    assert set(SERVER_FIXTURES.values()) <= declared
