"""The ``spacy`` predictor: any installed spaCy pipeline, its ``doc.ents`` as mentions.

``SpacyLinker("en_core_web_sm")`` (a package name or a pipeline folder written by ``nlp.to_disk``) or
``SpacyLinker(nlp)`` (a ``Language`` object). Each entity span is a mention: ``ent.start_char`` /
``ent.end_char`` are Python ``str`` indices into ``doc.text``, which is the text given, so they are code
point offsets as they stand (checked: ``doc.text`` must equal the text and every ``ent.text`` the text at
its offsets, else :class:`~posthoc.predictors.base.PredictorAnswerError`). The link is
``ent.kb_id_`` (an entity linker's knowledge-base id), else ``ent.ent_id_`` (an entity ruler pattern's
``id``), else NIL; a Wikidata id (``Q42``) becomes ``http://www.wikidata.org/entity/Q42``, anything else goes
through :func:`posthoc.links.normalise_link` (a bare title is a Wikipedia page). Texts are processed with
``nlp.pipe`` in batches of ``batch_size``. spaCy is an optional dependency (the ``spacy`` extra).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import (
    PredictedMention,
    PredictorAnswerError,
    PredictorServiceError,
    mention,
    sorted_unique,
)

_WIKIDATA = re.compile(r"^Q[1-9][0-9]*$")


def load_pipeline(model: str | Path) -> Any:
    """``spacy.load(model)``; :class:`PosthocInputError` when spaCy or the pipeline is missing."""
    try:
        import spacy
    except ImportError:
        raise PosthocInputError("the spacy predictor needs spaCy: pip install 'posthoc-review[spacy]'") from None
    try:
        return spacy.load(model)
    except OSError as exc:
        reason = (str(exc).strip().splitlines() or ["not found"])[0][:200]
        raise PosthocInputError(f"spaCy pipeline {str(model)!r}: cannot load it ({reason}); give an installed "
                                "pipeline package or a folder written by nlp.to_disk") from None


def entity_link(kb_id: str, ent_id: str) -> str | None:
    """The link of an entity: its KB id, else its pattern id (Wikidata ids as entity URIs), else None."""
    value = kb_id or ent_id
    if not value:
        return None
    return f"http://www.wikidata.org/entity/{value}" if _WIKIDATA.match(value) else value


class SpacyLinker:
    """A spaCy pipeline as a :class:`~posthoc.predictors.base.TextLinker` (module docstring)."""

    name = "spacy"

    def __init__(self, model: Any, *, batch_size: int = 64) -> None:
        self.nlp = load_pipeline(model) if isinstance(model, str | Path) else model
        self.batch_size = batch_size

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        results: list[list[PredictedMention]] = []
        for text, doc in zip(texts, self.nlp.pipe(list(texts), batch_size=self.batch_size), strict=True):
            if deadline is not None and time.monotonic() > deadline:
                raise PredictorServiceError("spaCy: out of time")
            if doc.text != text:
                raise PredictorAnswerError("spaCy: the pipeline changed the text (doc.text differs from the text "
                                           "given); offsets would not point into the document")
            found = [mention(text, ent.start_char, ent.end_char, entity_link(ent.kb_id_, ent.ent_id_),
                             surface=ent.text, service="spaCy") for ent in doc.ents]
            results.append(sorted_unique(found))
        return results
