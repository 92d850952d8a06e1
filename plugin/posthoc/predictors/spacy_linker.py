"""The ``spacy`` predictor: any installed spaCy pipeline, its ``doc.ents`` as mentions.

``SpacyLinker("en_core_web_sm")`` (a package name or a pipeline folder written by ``nlp.to_disk``) or
``SpacyLinker(nlp)`` (a ``Language`` object). Each entity span is a mention: ``ent.start_char`` /
``ent.end_char`` are Python ``str`` indices into ``doc.text``, which is the text given, so they are code
point offsets as they stand (checked: ``doc.text`` must equal the text and every ``ent.text`` the text at
its offsets, else :class:`~posthoc.predictors.base.PredictorAnswerError`). The link is
``ent.kb_id_`` (an entity linker's knowledge-base id), else ``ent.ent_id_`` (an entity ruler pattern's
``id``), else NIL; a Wikidata id (``Q42``) becomes ``http://www.wikidata.org/entity/Q42``, anything else goes
through :func:`posthoc.links.normalise_link` (a bare title is a Wikipedia page). spaCy is an optional
dependency (the ``spacy`` extra).

Speed: :meth:`SpacyLinker.link_stream` runs *one* ``nlp.pipe(texts, batch_size=...)`` over a whole stream of
texts and yields each text's mentions as its ``Doc`` comes, which is how spaCy's docs say to process many
texts ("Processing text": ``nlp.pipe`` buffers ``batch_size`` texts and runs each component over the batch).
``posthoc predict`` hands it the corpus as one stream, so spaCy's batches are ``batch_size`` (64) documents
whatever ``--batch-size`` is; it was one ``nlp.pipe`` a ``--batch-size`` (8) of documents before, so every
component ran on 8 documents at a time (bench/spacy_predict_bench.py compares with ``nlp.pipe`` itself).
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import (
    PredictedMention,
    PredictorAnswerError,
    PredictorServiceError,
    mention,
    sorted_unique,
)

if TYPE_CHECKING:
    from spacy.language import Language

_WIKIDATA = re.compile(r"^Q[1-9][0-9]*$")


def load_pipeline(model: str | Path) -> Language:
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

    def __init__(self, model: str | Path | Language, *, batch_size: int = 64) -> None:
        self.nlp = load_pipeline(model) if isinstance(model, str | Path) else model
        self.batch_size = batch_size

    def link_stream(self, texts: Iterable[str], *, deadline: float | None = None) -> Iterator[list[PredictedMention]]:
        """Each text's mentions, in order, from one ``nlp.pipe`` over ``texts`` (consumed lazily)."""
        pending: deque[str] = deque()

        def given() -> Iterator[str]:
            for text in texts:
                pending.append(text)
                yield text

        for doc in self.nlp.pipe(given(), batch_size=self.batch_size):
            text = pending.popleft()
            if deadline is not None and time.monotonic() > deadline:
                raise PredictorServiceError("spaCy: out of time")
            if doc.text != text:
                raise PredictorAnswerError("spaCy: the pipeline changed the text (doc.text differs from the text "
                                           "given); offsets would not point into the document")
            found = [mention(text, ent.start_char, ent.end_char, entity_link(ent.kb_id_, ent.ent_id_),
                             surface=ent.text, service="spaCy") for ent in doc.ents]
            yield sorted_unique(found)

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        return list(self.link_stream(texts, deadline=deadline))
