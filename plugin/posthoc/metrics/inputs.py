"""Validation at the edge: the judgements and mentions tables the metrics read.

Every public metric calls :func:`judged_rows` / :func:`mention_rows` once; a bad table raises
:class:`~posthoc.errors.PosthocInputError` naming the table, the column and the bad values.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools
from posthoc.errors import PosthocInputError
from posthoc.metrics.codes import column_codes
from posthoc.metrics.tuple_codes import dense_codes
from posthoc.tables import OUTCOMES, Judgements, Mentions, require_columns

#: Columns of the judgements table the metrics read (the rest of posthoc.tables.JUDGEMENT_COLUMNS is carried).
JUDGEMENT_NEEDS: Final = ("dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome")
MENTION_NEEDS: Final = ("dataset", "doc_id", "system", "start", "end", "link")
#: The identity of an annotation of one system (seed 000 section 3.2: same document, span and link).
SYSTEM_ANNOTATION: Final = ("dataset", "doc_id", "system", "start", "end", "link")
#: The identity of an annotation across systems (the verification union is a set of these).
ANNOTATION: Final = ("dataset", "doc_id", "start", "end", "link")


def _bad_values(values: pd.Series, limit: int = 5) -> str:
    shown = sorted({repr(v) for v in values.tolist()})[:limit]
    return ", ".join(shown)


def _offsets(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    for column in ("start", "end"):
        dtype = frame[column].dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "iu":  # already integers: nothing to check
            frame[column] = frame[column].astype("int64")
            continue
        numbers = pd.to_numeric(frame[column], errors="coerce")
        bad = numbers.isna() | (numbers != np.floor(numbers.fillna(0)))
        if bad.any():
            raise PosthocInputError(
                f"{table} table: column {column} must hold integer code-point offsets; "
                f"bad values {_bad_values(frame.loc[bad, column])} in {int(bad.sum())} row(s)"
            )
        frame[column] = numbers.astype("int64")
    return frame


def _text_columns(frame: pd.DataFrame, columns: tuple[str, ...], table: str) -> pd.DataFrame:
    for column in columns:
        missing = frame[column].isna()
        if missing.any():
            raise PosthocInputError(
                f"{table} table: column {column} is empty in {int(missing.sum())} row(s) "
                f"(first at row {int(np.flatnonzero(missing.to_numpy())[0])}); fill it"
            )
        frame[column] = frame[column].astype(str)
    return frame


def is_control(judgements: Judgements) -> Bools:
    """Boolean mask of control rows (``is_control`` True; absent column = no controls).

    Examples:
        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import is_control
        >>> is_control(pd.DataFrame({"is_control": [True, None, False]})).tolist()
        [True, False, False]
        >>> is_control(pd.DataFrame({"worker": ["w1", "w2"]})).tolist()
        [False, False]
    """
    if "is_control" not in judgements.columns:
        return np.zeros(len(judgements), dtype=bool)
    return judgements["is_control"].fillna(False).astype(bool).to_numpy()


def judged_rows(judgements: Judgements, *, keep_controls: bool = False) -> Judgements:
    """The validated judgement rows, control rows dropped unless ``keep_controls``.

    Raises :class:`PosthocInputError` for missing columns, non-integer offsets, empty key columns
    and ``outcome`` values other than ``verify | edit | remove``.

    Examples:
        The control row goes, offsets given as text become integers; an outcome outside verify / edit / remove is
        refused.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import judged_rows
        >>> judgements = pd.DataFrame(
        ...     [("d", "1", "A", "0", "5", "Paris", "w1", "verify", False),
        ...      ("d", "c", "A", 0, 4, "Lyon", "w1", "edit", True)],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome", "is_control"])
        >>> rows = judged_rows(judgements)
        >>> len(rows), rows["start"].dtype.name, int(rows["end"].iloc[0])
        (1, 'int64', 5)
        >>> judged_rows(judgements.assign(outcome="maybe"))
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: judgements table: column outcome must be one of verify, edit, remove; ...
    """
    require_columns(judgements, JUDGEMENT_NEEDS, table="judgements")
    frame = judgements if keep_controls else judgements.loc[~is_control(judgements)]
    frame = frame.copy()
    outcome = frame["outcome"]
    bad = ~outcome.isin(OUTCOMES)
    if bad.any():
        raise PosthocInputError(
            f"judgements table: column outcome must be one of verify, edit, remove; "
            f"bad values {_bad_values(outcome[bad])} in {int(bad.sum())} row(s)"
        )
    frame["outcome"] = outcome.astype(str)
    frame = _text_columns(frame, ("dataset", "doc_id", "system", "link", "worker"), "judgements")
    return _offsets(frame, "judgements")


def mention_rows(mentions: Mentions) -> Mentions:
    """The validated mentions table (offsets as int64, key columns as str), duplicates dropped.

    Duplicates (same dataset, document, system, span and link) count once: an annotation is a set member.

    Examples:
        The same annotation twice counts once.

        >>> import pandas as pd
        >>> from posthoc.metrics.inputs import mention_rows
        >>> mentions = pd.DataFrame([("d", "1", "GT", 0, 5, "Paris")] * 2 + [("d", "1", "GT", 9, 14, "Seine")],
        ...                         columns=["dataset", "doc_id", "system", "start", "end", "link"])
        >>> mention_rows(mentions)[["start", "end", "link"]]
           start  end   link
        0      0    5  Paris
        1      9   14  Seine
    """
    require_columns(mentions, MENTION_NEEDS, table="mentions")
    frame = mentions.copy()
    frame = _text_columns(frame, ("dataset", "doc_id", "system", "link"), "mentions")
    frame = _offsets(frame, "mentions")
    if len(frame) == 0:
        return frame.reset_index(drop=True)
    _, first = dense_codes(*[column_codes(frame[key]) for key in SYSTEM_ANNOTATION])
    if len(first) == len(frame):
        return frame.reset_index(drop=True)
    return frame.iloc[np.sort(first)].reset_index(drop=True)  # each annotation's first row, as drop_duplicates
