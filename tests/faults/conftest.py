"""Fixtures of the fault tests: a private Label Studio (killed and restarted by the tests, so never the shared
session server) with the tiny study of the export tests on it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsfixtures import copy_template

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
from ls_tiny_study import TinyStudy, build_tiny_study


@pytest.fixture(scope="module")
def private_ls(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Label Studio of this module only, on a copy of the template; tests may kill and restart it."""
    from posthoc.labelstudio.server import LabelStudioServer

    server = LabelStudioServer(copy_template(ls_template, tmp_path_factory.mktemp("private-ls")))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def restart(server: Any) -> None:
    """Start ``server`` again on the same data dir and port (after a kill)."""
    server.stop()
    server.requested_port = server.port
    server.start()


@pytest.fixture(scope="module")
def tiny_on_private(private_ls: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyStudy]:
    with build_tiny_study(private_ls, tmp_path_factory.mktemp("tiny-private")) as study:
        yield study
