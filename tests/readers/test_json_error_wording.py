"""A JSON error reads as a sentence: Python's "Unterminated string starting at" gives "starting at column 12", never
"starting at at column 12" (what a new user met)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.readers import read_mentions
from posthoc.readers.corpus import documents_frame


@pytest.mark.parametrize("fmt", ["jsonl", "rel"], ids=["jsonl line", "rel file"])
def test_an_unterminated_string_is_said_once(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / ("corpus.jsonl" if fmt == "jsonl" else "rel.json")
    path.write_text('{"id": "a", "text": "unfinished' + ('\n' if fmt == "jsonl" else ""), encoding="utf-8")
    documents = documents_frame([("rel", "a", "unfinished")]) if fmt == "rel" else None
    with pytest.raises(PosthocInputError) as raised:
        read_mentions(path, documents=documents, fmt=fmt, dataset="rel" if fmt == "rel" else None)
    message = str(raised.value)
    assert "Unterminated string starting at" in message and not re.search(r"\bat at\b", message), message
    assert re.search(r"starting at (line \d+ )?column \d+", message), message
