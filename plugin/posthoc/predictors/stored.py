"""The ``dictionary`` and ``manifest`` predictors as :class:`~posthoc.predictors.base.TextLinker` s.

``dictionary``: the baseline alias-table linker of :mod:`posthoc.predictors.linker` (live mode before
predictors existed). ``manifest``: the stored outputs of a system: in the backend that is the study
manifest, looked up by each task's opaque key (always first, whatever the live predictor); for ``posthoc
predict`` it is a system's output file read with :func:`posthoc.readers.read_mentions` (any format the
readers know), whose mentions are given to the document with exactly the same text; a document the file
does not hold gets none (REL's output, for one, leaves documents without mentions out) and is counted in
``missing``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from posthoc.errors import PosthocInputError
from posthoc.predictors.base import PredictedMention, sorted_unique
from posthoc.predictors.linker import DictionaryLinker


class DictionaryTextLinker:
    """The dictionary linker (leftmost-longest alias matches on token boundaries)."""

    name = "dictionary"

    def __init__(self, linker: DictionaryLinker) -> None:
        self.linker = linker

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        results = []
        for text in texts:
            found = []
            for span in self.linker.link(text):
                # the alias table holds canonical links already (they come from the readers)
                found.append(PredictedMention(span.start, span.end, span.surface, span.link, span.link,
                                              span.link.startswith("nil:")))
            results.append(found)
        return results


class StoredOutputs:
    """A system's stored output (one file) given back to documents with the same text."""

    name = "manifest"

    def __init__(self, path: str | Path, *, system: str | None = None, fmt: str | None = None,
                 documents: object = None) -> None:
        from posthoc.readers import read_mentions

        corpus = read_mentions(path, fmt=fmt, documents=documents)  # type: ignore[arg-type]
        systems = corpus.systems
        chosen = system or (systems[0] if len(systems) == 1 else None)
        if chosen is None and systems:
            raise PosthocInputError(f"--source {path}: holds the systems {', '.join(systems)}; choose one with "
                                    "--source-system")
        if chosen is not None and chosen not in systems:
            raise PosthocInputError(f"--source {path}: no system {chosen!r}; it has {', '.join(systems) or 'none'}")
        texts = dict(zip(zip(corpus.documents["dataset"], corpus.documents["doc_id"], strict=True),
                         corpus.documents["text"], strict=True))
        self.by_text: dict[str, list[PredictedMention]] = {str(t): [] for t in texts.values()}
        rows = corpus.system(chosen) if chosen is not None else corpus.mentions.iloc[0:0]
        for dataset, doc_id, start, end, surface, link, original, is_nil in rows[
                ["dataset", "doc_id", "start", "end", "surface", "link", "link_original", "is_nil"]
        ].itertuples(index=False):
            text = str(texts[(dataset, doc_id)])
            self.by_text[text].append(PredictedMention(int(start), int(end), str(surface), str(link),
                                                       str(original), bool(is_nil)))
        self.path = Path(path)
        self.missing = 0

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        results = []
        for text in texts:
            if text not in self.by_text:
                self.missing += 1
            results.append(sorted_unique(self.by_text.get(text, [])))
        return results
