"""The flags table: stable ids, ordering, and a lossless CSV / Parquet round trip (Unicode included)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from posthoc.eaglet.flags import FLAG_COLUMNS, Flag, flags_frame, read_flags, write_flags
from posthoc.errors import PosthocInputError

FLAGS = [
    Flag("d", "2", 5, 9, "東京タワー"[1:5], "", "inconsistent_marking", "insert", "GT", detail="proposal, \"quoted\""),
    Flag("d", "1", 0, 4, "Cafe", "https://en.wikipedia.org/wiki/Caf%C3%A9", "positioning", "delete", "GT",
         detail="ends inside a word\nsecond line"),
    Flag("d", "1", 0, 4, "Cafe", "https://en.wikipedia.org/wiki/Caf%C3%A9", "long_description", "delete", "GT"),
]


def test_ids_are_stable_and_rows_ordered_by_document_span_and_rule() -> None:
    frame = flags_frame(FLAGS)
    assert list(frame.columns) == list(FLAG_COLUMNS)
    assert frame["rule"].tolist() == ["long_description", "positioning", "inconsistent_marking"]
    assert frame["flag_id"].tolist() == flags_frame(list(reversed(FLAGS)))["flag_id"].tolist()
    assert frame["flag_id"].str.fullmatch(r"f[0-9a-f]{15}").all() and frame["flag_id"].is_unique


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_round_trip(fmt: str, tmp_path: Path) -> None:
    frame = flags_frame(FLAGS)
    path = write_flags(frame, tmp_path / f"flags.{fmt}", fmt=fmt)
    pd.testing.assert_frame_equal(read_flags(path), frame)


def test_bad_format_and_missing_file_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="csv or parquet"):
        write_flags(flags_frame(FLAGS), tmp_path / "x.json", fmt="json")
    with pytest.raises(PosthocInputError, match="posthoc flags check"):
        read_flags(tmp_path / "absent.csv")
    assert not (tmp_path / "x.json").exists()
