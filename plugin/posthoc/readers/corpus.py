"""The :class:`Corpus` every reader returns: a documents table and a mentions table.

Columns are :data:`posthoc.tables.DOCUMENT_COLUMNS` (``dataset, doc_id, text``) and
:data:`posthoc.tables.MENTION_COLUMNS` (``dataset, doc_id, system, start, end, surface, link,
link_original, is_nil``); offsets are code points into ``text`` and ``text[start:end] == surface``.
A system's output is one more set of mention rows with its system name; the ground truth is ``GT``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.tables import DOCUMENT_COLUMNS, MENTION_COLUMNS, empty_mentions, require_columns

_MENTION_DTYPES = {name: str(dtype) for name, dtype in empty_mentions().dtypes.items()}


def documents_frame(rows: list[tuple[str, str, str]] | None = None) -> pd.DataFrame:
    """A documents table (``dataset, doc_id, text`` as pandas ``string``) from ``rows``.

    Examples:
        >>> from posthoc.readers.corpus import documents_frame
        >>> frame = documents_frame([("news", "doc-1", "Zoë flew to 東京.")])
        >>> frame.dtypes.astype(str).tolist(), frame.loc[0, "text"]
        (['string', 'string', 'string'], 'Zoë flew to 東京.')
    """
    frame = pd.DataFrame(rows or [], columns=list(DOCUMENT_COLUMNS))
    return frame.astype("string").reset_index(drop=True)


def mentions_frame(rows: list[tuple[object, ...]] | None = None) -> pd.DataFrame:
    """A mentions table with the dtypes of :func:`posthoc.tables.empty_mentions` from ``rows``.

    Examples:
        >>> from posthoc.readers.corpus import mentions_frame
        >>> frame = mentions_frame([("news", "doc-1", "GT", 12, 14, "東京", "https://en.wikipedia.org/wiki/Tokyo",
        ...                          "Tokyo", False)])
        >>> frame[["start", "end", "surface", "is_nil"]]
           start  end surface  is_nil
        0     12   14      東京   False
        >>> len(mentions_frame()), list(mentions_frame().columns) == list(frame.columns)
        (0, True)
    """
    if not rows:
        return empty_mentions()
    frame = pd.DataFrame(rows, columns=list(MENTION_COLUMNS))
    return frame.astype(_MENTION_DTYPES).reset_index(drop=True)


def _row_keys(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    columns = [frame[name].astype(object).where(frame[name].notna(), None) for name in MENTION_COLUMNS]
    return list(zip(*columns, strict=True))


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents and the mentions of one or more systems over them (see the module docstring).

    Compared by identity (``eq=False``): DataFrames have no single truth value; compare the tables.
    """

    documents: pd.DataFrame
    mentions: pd.DataFrame

    def __post_init__(self) -> None:
        require_columns(self.documents, DOCUMENT_COLUMNS, table="documents")
        require_columns(self.mentions, MENTION_COLUMNS, table="mentions")

    @property
    def systems(self) -> list[str]:
        """The system names present, ``GT`` first, then alphabetical."""
        names = sorted(set(self.mentions["system"].dropna().astype(str)))
        return sorted(names, key=lambda name: (name != "GT", name))

    def system(self, name: str) -> pd.DataFrame:
        """The mention rows of one system (a copy with a fresh index)."""
        return self.mentions[self.mentions["system"] == name].reset_index(drop=True)

    def text_of(self, dataset: str, doc_id: str) -> str:
        """The text of one document; :class:`PosthocInputError` if it is not in the corpus."""
        hit = self.documents[(self.documents["dataset"] == dataset) & (self.documents["doc_id"] == doc_id)]
        if hit.empty:
            raise PosthocInputError(f"document {doc_id!r} of dataset {dataset!r} is not in the corpus")
        return str(hit["text"].iloc[0])

    def merge(self, other: Corpus) -> Corpus:
        """Union of documents and of mentions.

        A document present in both (same ``dataset, doc_id``) must have identical text, else
        :class:`PosthocInputError`. A mention row of ``other`` that ``self`` already has is not
        added again; repeats within one corpus (as the file had them) are kept.
        """
        documents = pd.concat([self.documents, other.documents], ignore_index=True)
        key = ["dataset", "doc_id"]
        texts = documents.drop_duplicates().groupby(key, sort=False)["text"].nunique()
        clashes = texts[texts > 1]
        if not clashes.empty:
            dataset, doc_id = clashes.index[0]
            raise PosthocInputError(
                f"document {doc_id!r} of dataset {dataset!r} has different texts in the corpora being merged "
                f"({len(clashes)} such document(s)); give every system's file the same text for a document"
            )
        documents = documents.drop_duplicates(subset=key).reset_index(drop=True)
        have = set(_row_keys(self.mentions))
        new = [key not in have for key in _row_keys(other.mentions)]
        mentions = pd.concat([self.mentions, other.mentions[new]], ignore_index=True).astype(_MENTION_DTYPES)
        return Corpus(documents.astype("string"), mentions)
