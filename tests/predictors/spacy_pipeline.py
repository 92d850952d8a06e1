"""A real spaCy pipeline built in the tests: ``spacy.blank`` and an entity ruler whose patterns carry ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from predictors.conftest import ALIASES

#: the pattern ids: titles, one Wikidata id (Q1490 is Tokyo), and one pattern without an id (a NIL mention)
PATTERN_IDS = {**ALIASES, "東京": "Q1490"}
NO_ID = "Deutsche Bank"


def build_pipeline() -> Any:
    """spacy.blank("xx") (multi-language tokenizer) + entity_ruler with one pattern an alias."""
    import spacy

    nlp = spacy.blank("xx")
    ruler = nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "ORTH"})
    patterns: list[dict[str, Any]] = [{"label": "ENTITY", "pattern": surface, "id": pattern_id}
                                      for surface, pattern_id in PATTERN_IDS.items()]
    patterns.append({"label": "ORG", "pattern": NO_ID})
    ruler.add_patterns(patterns)  # type: ignore[attr-defined]
    return nlp


def save_pipeline(folder: Path) -> Path:
    """The pipeline written with nlp.to_disk (what --spacy-model loads with spacy.load)."""
    build_pipeline().to_disk(folder)
    return folder
