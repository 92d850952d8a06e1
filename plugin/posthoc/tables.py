"""The tidy tables that are the contract between every part of the project.

Readers and Label Studio code are the only places that know file formats; everything else reads
and writes these long tables (pandas DataFrames). Offsets are always Unicode code points into the
document text (Python ``str`` indices): ``text[start:end] == surface``.

Tables
------
documents
    ``dataset, doc_id, text``: one row a document.
mentions
    ``dataset, doc_id, system, start, end, surface, link, link_original, is_nil``: one row an
    annotation (a mention with its link) of one system; the ground truth is the system ``GT``.
    ``link`` is the canonical form (see :mod:`posthoc.links`), ``link_original`` the form the file
    had, ``is_nil`` marks emerging / NIL / notInWiki entities (kept, never dropped).
judgements
    ``study, dataset, doc_id, chunk_id, item_id, task_key, mention_id, system, start, end, surface,
    link, worker, outcome, new_link, deleted_region, position, created_at, lead_time, is_control,
    expected_outcome``: one row a pre-filled annotation judged by one worker. ``outcome`` is
    ``verify | edit | remove``; a pre-filled region the annotator deleted counts as ``remove`` with
    ``deleted_region = True``. ``position`` is the 0-based place of the task in the worker's sequence.

Contracts in signatures
-----------------------
Each table kind is one reusable annotation, :data:`Documents`, :data:`Mentions`, :data:`Judgements`:
``Annotated[pd.DataFrame, TableContract(...)]``, so ``score_judgements(judgements: Judgements, mentions:
Mentions, ...)`` carries its tables' columns in its signature, as crowd-kit's signatures do. An ``Annotated``
alias and not a typed wrapper class: a caller passes and gets plain pandas DataFrames (every pandas, numpy,
pyarrow and plotting function takes them as they are, nothing to wrap or unwrap at each edge); it costs
nothing at run time (no object, no copy, no check on the hot path); and mypy sees a ``pd.DataFrame``, so
pandas-stubs type every column operation. The :class:`TableContract` in the metadata names the kind and its
columns for a reader, for :func:`require_columns` (``require_columns(frame, JUDGEMENTS.columns, ...)``) and
for the architecture test that keeps public signatures on the aliases. A table that is not complete (a
function reads some of the columns) still has its kind's alias; the docstring says which columns it reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Final, TypeAlias

import pandas as pd

from posthoc.errors import PosthocInputError

GT_SYSTEM: Final = "GT"
OUTCOMES: Final = ("verify", "edit", "remove")

DOCUMENT_COLUMNS: Final = ("dataset", "doc_id", "text")
MENTION_COLUMNS: Final = (
    "dataset",
    "doc_id",
    "system",
    "start",
    "end",
    "surface",
    "link",
    "link_original",
    "is_nil",
)
JUDGEMENT_COLUMNS: Final = (
    "study",
    "dataset",
    "doc_id",
    "chunk_id",
    "item_id",
    "task_key",
    "mention_id",
    "system",
    "start",
    "end",
    "surface",
    "link",
    "worker",
    "outcome",
    "new_link",
    "deleted_region",
    "position",
    "created_at",
    "lead_time",
    "is_control",
    "expected_outcome",
)


@dataclass(frozen=True)
class TableContract:
    """The columns of one kind of tidy table: the metadata of its ``Annotated`` alias (module docstring)."""

    table: str
    columns: tuple[str, ...]


DOCUMENTS: Final = TableContract("documents", DOCUMENT_COLUMNS)
MENTIONS: Final = TableContract("mentions", MENTION_COLUMNS)
JUDGEMENTS: Final = TableContract("judgements", JUDGEMENT_COLUMNS)

#: A documents table: ``dataset, doc_id, text``.
Documents: TypeAlias = Annotated[pd.DataFrame, DOCUMENTS]
#: A mentions table: ``dataset, doc_id, system, start, end, surface, link, link_original, is_nil``.
Mentions: TypeAlias = Annotated[pd.DataFrame, MENTIONS]
#: A judgements table: the columns of :data:`JUDGEMENT_COLUMNS`.
Judgements: TypeAlias = Annotated[pd.DataFrame, JUDGEMENTS]


def require_columns(frame: pd.DataFrame, columns: Sequence[str], *, table: str = "",
                    message: str | None = None) -> None:
    """Raise :class:`PosthocInputError` naming the missing columns of ``table``; ``message``: the error's own
    wording instead, with ``{missing}`` standing for the missing names (comma-separated)."""
    missing = [c for c in columns if c not in frame.columns]
    if not missing:
        return
    if message is not None:
        raise PosthocInputError(message.replace("{missing}", ", ".join(missing)))
    raise PosthocInputError(
        f"{table} table lacks column(s) {', '.join(missing)}; it has {', '.join(map(str, frame.columns))}"
    )


def empty_table(dtypes: Mapping[str, str]) -> pd.DataFrame:
    """An empty table with the columns of ``dtypes`` (column -> dtype), in that order."""
    return pd.DataFrame({column: pd.Series(dtype=dtype) for column, dtype in dtypes.items()})


def empty_mentions() -> Mentions:
    """An empty mentions table with the right columns and dtypes."""
    return empty_table({"dataset": "string", "doc_id": "string", "system": "string", "start": "int64",
                        "end": "int64", "surface": "string", "link": "string", "link_original": "string",
                        "is_nil": "bool"})
