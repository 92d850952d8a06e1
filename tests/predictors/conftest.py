"""Fixtures of the predictor tests: texts with emoji, ZWJ sequences, flags, astral CJK and combining marks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from predictors.standins import StandInNIF, StandInREL

#: surface -> entity title (underscores, as REL answers)
ALIASES = {
    "Angela Merkel": "Angela_Merkel",
    "東京": "Tokyo",
    "𠮷野家": "Yoshinoya",
    "Cafe\u0301 de Flore": "Café_de_Flore",
    "Zoë": "Zoë_Saldaña",
}
#: 👩‍💻 is three code points (five UTF-16 units), 𠮷 one code point (two units)
TEXT = "👩\u200d💻 Zoë met 𠮷野家 in 東京."
#: hand-counted code point offsets of TEXT's mentions
TEXT_MENTIONS = [(4, 7, "Zoë"), (12, 15, "𠮷野家"), (19, 21, "東京")]
TEXT2 = "🇩🇪 Angela Merkel drank coffee at Cafe\u0301 de Flore, then flew to 東京 👋🏽."
TEXT2_MENTIONS = [(3, 16, "Angela Merkel"), (33, 47, "Cafe\u0301 de Flore"), (62, 64, "東京")]
#: a text without any alias
PLAIN = "Nothing to link here, only words and 🙂."


@pytest.fixture
def rel_service() -> Iterator[StandInREL]:
    with StandInREL(ALIASES).serve() as service:
        yield service  # type: ignore[misc]


@pytest.fixture
def nif_service() -> Iterator[StandInNIF]:
    with StandInNIF(ALIASES).serve() as service:
        yield service  # type: ignore[misc]


def write_corpus(path: Path, documents: list[tuple[str, str]], *, dataset: str = "astral") -> Path:
    """A JSONL corpus (no mentions) of ``(doc_id, text)`` pairs."""
    import json

    path.write_text("".join(json.dumps({"id": i, "dataset": dataset, "text": t}, ensure_ascii=False) + "\n"
                            for i, t in documents), encoding="utf-8")
    return path


@pytest.fixture
def astral_corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "astral.jsonl", [("d1", TEXT), ("d2", TEXT2), ("d3", PLAIN), ("d4", "")])


def run_posthoc(argv: list[str]) -> int:
    """``posthoc ARGV`` in-process; its exit code (0 when it returns)."""
    from posthoc.cli.main import main

    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
