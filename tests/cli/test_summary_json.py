"""Every ``summary.json`` is valid JSON: NaN and infinities as null, numpy scalars as numbers (one writer).

Each command's summary is handed to :func:`posthoc.atomic.write_summary_json`; here a summary holding NaN, inf
and numpy ints and floats goes through the ``sequence`` and ``crowdtruth`` commands (the score job's is in
``tests/score/test_score_job.py``), and the file they write is read back by a parser that refuses NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest
from tests.cli.hostile_summary import EXPECTED, HOSTILE, strict_load

from posthoc.atomic import json_ready, summary_json, write_summary_json
from posthoc.cli.main import main
from posthoc.sequence.simulate import simulate_binary


def _hostile_writer(monkeypatch: pytest.MonkeyPatch, module: str) -> list[Path]:
    """Make ``module``'s summary writer add :data:`HOSTILE` to the summary the command hands it."""
    written: list[Path] = []

    def write(path: Path, summary: Mapping[str, object], **options: int | None) -> None:
        written.append(Path(path))
        write_summary_json(path, {**summary, **HOSTILE}, **options)

    monkeypatch.setattr(f"{module}.write_summary_json", write)
    return written


def test_the_writer_turns_nan_inf_and_numpy_into_json(tmp_path: Path) -> None:
    assert json_ready(HOSTILE) == EXPECTED
    write_summary_json(tmp_path / "summary.json", {"b": 1, "a": HOSTILE})
    text = (tmp_path / "summary.json").read_text(encoding="utf-8")
    assert text == summary_json({"a": HOSTILE, "b": 1}) and text.startswith('{\n  "a": {\n')
    assert strict_load(tmp_path / "summary.json") == {"a": EXPECTED, "b": 1}


def test_sequence_writes_valid_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = _hostile_writer(monkeypatch, "posthoc.cli.sequence")
    table = tmp_path / "sim.csv"
    simulate_binary(12, 10, b1=0.5, seed=3).to_csv(table, index=False)
    main(["sequence", str(table), "--out", str(tmp_path / "out"), "--gold-col", "gold"])  # a failure exits
    assert written == [tmp_path / "out" / "summary.json"]
    summary = strict_load(written[0])
    assert {key: summary[key] for key in EXPECTED} == EXPECTED
    assert isinstance(summary["b1"], dict) and summary["n_workers"] == 12


def test_crowdtruth_writes_valid_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = _hostile_writer(monkeypatch, "posthoc.cli.crowdtruth")
    table = pd.DataFrame({"unit": ["u1"] * 3 + ["u2"] * 3, "worker": ["a", "b", "c"] * 2,
                          "annotation": ["x", "x", "y", "y", "y", "y"]})
    source = tmp_path / "table.csv"
    table.to_csv(source, index=False)
    main(["crowdtruth", str(source), "--out", str(tmp_path / "out"), "--layout", "table"])
    assert written == [tmp_path / "out" / "summary.json"]
    summary = strict_load(written[0])
    assert {key: summary[key] for key in EXPECTED} == EXPECTED
    assert summary["n_units"] == 2 and summary["layout"] == "table"
