"""Validation at the edge: every mention is checked against its document text as it is read.

:class:`CorpusBuilder` collects documents and mentions of one file, checks each one and raises a
:class:`~posthoc.errors.PosthocInputError` naming the file, the document and the mention and saying
what to fix: offsets outside the text, ``end <= start``, a surface form that differs from the text
at its offsets, duplicate document ids, a mention of an unknown document.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.links import normalise_link
from posthoc.readers.corpus import Corpus, documents_frame, mentions_frame


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


class CorpusBuilder:
    """Accumulates one file's documents and mentions, validating each; :meth:`build` makes the Corpus."""

    def __init__(self, path: str | os.PathLike[str], *, dataset: str, system: str) -> None:
        self.path = Path(path)
        self.dataset = dataset
        self.system = system
        self._texts: dict[tuple[str, str], str] = {}
        self._documents: list[tuple[str, str, str]] = []
        self._mentions: list[tuple[object, ...]] = []

    def fail(self, message: str, *, doc_id: str | None = None, where: str | None = None) -> PosthocInputError:
        """An error naming this file (and the document / place when given)."""
        parts = [str(self.path)]
        if doc_id is not None:
            parts.append(f"document {doc_id!r}")
        if where:
            parts.append(where)
        return PosthocInputError(": ".join([", ".join(parts), message]))

    def has_document(self, doc_id: str, *, dataset: str | None = None) -> bool:
        return ((dataset or self.dataset), doc_id) in self._texts

    def text_of(self, doc_id: str, *, dataset: str | None = None) -> str:
        return self._texts[((dataset or self.dataset), doc_id)]

    def add_document(self, doc_id: str, text: str, *, dataset: str | None = None, where: str | None = None) -> None:
        """Add a document; a second document with the same id (in the same dataset) is an error."""
        dataset = dataset or self.dataset
        if not isinstance(doc_id, str) or not doc_id:
            raise self.fail("a document has no id; give every document a non-empty string id", where=where)
        if not isinstance(text, str):
            raise self.fail("the text is not a string; give the document text as a string", doc_id=doc_id, where=where)
        if (dataset, doc_id) in self._texts:
            raise self.fail(
                "duplicate document id; every document id must be unique within a dataset", doc_id=doc_id, where=where
            )
        self._texts[(dataset, doc_id)] = text
        self._documents.append((dataset, doc_id, text))

    def add_mention(
        self,
        doc_id: str,
        start: object,
        end: object,
        link: str | None,
        *,
        surface: str | None = None,
        where: str,
        system: str | None = None,
        dataset: str | None = None,
        surface_rule: Callable[[str, str], bool] | None = None,
    ) -> None:
        """Validate one mention against its document's text and add it (link normalised).

        ``surface`` None means the file gave none (it is taken from the text); otherwise it must
        equal ``text[start:end]`` exactly, or satisfy ``surface_rule(surface, text[start:end])`` when
        a format documents a looser rule (WNED: equal after HTML unescaping). The ``surface``
        column is always ``text[start:end]``.
        """
        dataset = dataset or self.dataset
        text = self._texts.get((dataset, doc_id))
        if text is None:
            raise self.fail(
                f"{where} refers to a document that is not in the file (dataset {dataset!r}); "
                "add the document or fix the document id",
                doc_id=doc_id,
            )
        label = f"{where} ({start}-{end}" + (f" {_short(surface)})" if surface is not None else ")")
        if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
            raise self.fail(
                f"start and end must be integers (code point offsets), got {start!r} and {end!r}; fix the offsets",
                doc_id=doc_id,
                where=label,
            )
        if start < 0 or end > len(text):
            raise self.fail(
                f"offsets outside the text (length {len(text)} code points); "
                f"fix the offsets so that 0 <= start < end <= {len(text)}",
                doc_id=doc_id,
                where=label,
            )
        if end <= start:
            raise self.fail("end <= start; a mention must cover at least one character", doc_id=doc_id, where=label)
        found = text[start:end]
        if surface is not None and surface != found and not (surface_rule and surface_rule(surface, found)):
            raise self.fail(
                f"the surface form does not match the text at its offsets, which reads {_short(found)}; "
                "fix the offsets (code points, not bytes) or the surface form",
                doc_id=doc_id,
                where=label,
            )
        normal = normalise_link(link)
        original: object = pd.NA if link is None else str(link)
        self._mentions.append(
            (dataset, doc_id, system or self.system, start, end, found, normal.link, original, normal.is_nil)
        )

    def build(self) -> Corpus:
        """The Corpus of everything added."""
        return Corpus(documents_frame(self._documents), mentions_frame(self._mentions))


def validate_corpus(corpus: Corpus, *, source: str = "corpus") -> None:
    """Check a Corpus built in memory (e.g. after remapping offsets) the way the readers check files.

    Raises :class:`PosthocInputError` naming ``source``, the document and the mention for: a
    duplicate ``(dataset, doc_id)``, a mention of an unknown document, offsets outside the text,
    ``end <= start``, a ``surface`` that is not ``text[start:end]``, or ``is_nil`` disagreeing
    with a ``nil:`` link.

    Examples:
        An end offset moved by one no longer reads the surface: the error names the document and the mention.

        >>> import pandas as pd
        >>> from posthoc.readers import Corpus, validate_corpus
        >>> from posthoc.readers.corpus import documents_frame, mentions_frame
        >>> documents = documents_frame([("news", "doc-1", "Zoë flew to 東京.")])
        >>> mentions = mentions_frame([("news", "doc-1", "GT", 12, 14, "東京", "Tokyo", "Tokyo", False)])
        >>> validate_corpus(Corpus(documents, mentions))  # nothing to say
        >>> validate_corpus(Corpus(documents, mentions.assign(end=13)), source="remapped")
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: remapped, document 'doc-1', mention 0 ... the text at the offsets reads '東'
    """
    documents = corpus.documents
    duplicated = documents.duplicated(["dataset", "doc_id"])
    if duplicated.any():
        row = documents[duplicated].iloc[0]
        raise PosthocInputError(f"{source}, document {row['doc_id']!r} (dataset {row['dataset']!r}): "
                                "duplicate document id; every document id must be unique within a dataset")
    texts = {(str(d), str(i)): str(t) for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(index=False)}
    columns = ["dataset", "doc_id", "system", "start", "end", "surface", "link", "is_nil"]
    for index, (dataset, doc_id, system, start, end, surface, link, is_nil) in enumerate(
        corpus.mentions[columns].itertuples(index=False)
    ):
        where = f"{source}, document {doc_id!r}, mention {index} of system {system!r} ({start}-{end} {surface!r})"
        text = texts.get((str(dataset), str(doc_id)))
        if text is None:
            raise PosthocInputError(f"{where}: the document is not in the documents table (dataset {dataset!r})")
        if not 0 <= int(start) < int(end) <= len(text):
            raise PosthocInputError(f"{where}: offsets must satisfy 0 <= start < end <= {len(text)}")
        if text[int(start):int(end)] != surface:
            raise PosthocInputError(f"{where}: the text at the offsets reads {_short(text[int(start):int(end)])}")
        if bool(is_nil) != str(link).startswith("nil:"):
            raise PosthocInputError(f"{where}: is_nil is {bool(is_nil)} but the link is {link!r}")
