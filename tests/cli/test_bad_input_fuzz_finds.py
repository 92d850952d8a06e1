"""Inputs the fuzz bench (bench/fuzz_bench.py) found ending in a traceback: each is now one clear line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.export.flatten import iter_export_tasks
from posthoc.readers import read_mentions

DATA = Path(__file__).resolve().parents[1] / "readers" / "data"


def test_a_wned_file_declaring_an_unknown_encoding_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "wned"
    shutil.copytree(DATA / "wned", folder)
    xml = next(folder.glob("*.xml"))
    xml.write_bytes(xml.read_bytes().replace(b'encoding="UTF-8"', b'encoding="UTNaN8"', 1)
                    if b'encoding="UTF-8"' in xml.read_bytes()
                    else b'<?xml version="1.0" encoding="UTNaN8"?>\n' + xml.read_bytes())
    with pytest.raises(PosthocInputError, match="unknown encoding"):
        read_mentions(folder, fmt="wned")


def test_an_export_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(b'[{"id": 1, "data": {"text": "Zo\xc1\x81"}}]')  # overlong: yajl passes it, Python not
    with pytest.raises(PosthocInputError, match="not UTF-8"):
        list(iter_export_tasks(path))
