"""The sequence table and its readers (seed 004 section 2).

Columns (one row a judgement):

``worker``
    who gave the label.
``sequence``
    the unit within which order is meaningful: a HIT (Snow et al.), or a worker's whole stream (posthoc
    studies, where each worker has one project).
``item``
    what was judged.
``position``
    0-based place of the item in that worker's sequence (ties are not allowed).
``label``
    the worker's label: 0/1 for binary tasks, a number for continuous ones.
``gold``
    the expert label or a proxy for it (seed 004 footnote 1 uses the mean of other workers), or NaN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, TypeAlias

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.tables import TableContract, require_columns

SEQUENCE_COLUMNS: Final = ("worker", "sequence", "item", "position", "label", "gold")
SEQUENCES: Final = TableContract("sequences", SEQUENCE_COLUMNS)
#: A sequence table: ``worker, sequence, item, position, label, gold``, one row a label in a worker's sequence.
Sequences: TypeAlias = Annotated[pd.DataFrame, SEQUENCES]


def validate_sequence_table(table: Sequences, *, source: str = "sequence table") -> Sequences:
    """Check columns and values; return a copy with clean dtypes sorted by worker, sequence, position.

    Raises :class:`PosthocInputError` naming ``source``, the column and the first bad rows.

    Examples:
        Rows come back sorted by worker, sequence and position, labels as floats and positions as integers.

        >>> import pandas as pd
        >>> from posthoc.sequence import validate_sequence_table
        >>> table = pd.DataFrame({"worker": ["w1", "w1"], "sequence": "h1", "item": ["b", "a"], "position": ["1", "0"],
        ...                       "label": [0, 1], "gold": [None, 1]})
        >>> validate_sequence_table(table)
          worker sequence item  position  label  gold
        0     w1       h1    a         0    1.0   1.0
        1     w1       h1    b         1    0.0   NaN
    """
    require_columns(table, SEQUENCE_COLUMNS,
                    message=f"{source}: missing column(s) {{missing}}; needs {', '.join(SEQUENCE_COLUMNS)}")
    out = table.loc[:, list(SEQUENCE_COLUMNS)].copy()
    for column in ("label", "gold", "position"):
        converted = pd.to_numeric(out[column], errors="coerce")
        bad = converted.isna() & out[column].notna()
        if column != "gold":
            bad |= out[column].isna()
        if bad.any():
            rows = ", ".join(str(i) for i in out.index[bad][:5])
            raise PosthocInputError(f"{source}: column {column!r} must be numeric; bad value(s) in row(s) {rows}")
        out[column] = converted.astype(float)
    if (out["position"] < 0).any() or (out["position"] % 1 != 0).any():
        raise PosthocInputError(f"{source}: column 'position' must hold whole numbers >= 0")
    out["position"] = out["position"].astype(np.int64)
    for column in ("worker", "sequence", "item"):
        if out[column].isna().any():
            raise PosthocInputError(f"{source}: column {column!r} has empty values")
        out[column] = out[column].astype(str)
    duplicated = out.duplicated(["worker", "sequence", "position"])
    if duplicated.any():
        first = out[duplicated].iloc[0]
        raise PosthocInputError(
            f"{source}: worker {first['worker']} has two items at position {first['position']} of sequence "
            f"{first['sequence']}; positions must be unique within a worker's sequence"
        )
    return out.sort_values(["worker", "sequence", "position"], kind="mergesort").reset_index(drop=True)


def read_sequence_csv(path: str | Path, *, worker: str = "worker", sequence: str | None = "sequence",
                      item: str = "item", position: str = "position", label: str = "label",
                      gold: str | None = "gold", sep: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV with one row a judgement into the sequence table.

    ``sequence=None`` treats each worker's rows as one sequence; ``gold=None`` leaves gold empty.
    The separator is sniffed from the extension (``.tsv`` -> tab) unless ``sep`` is given.

    Examples:
        A file of one stream a worker (no sequence column) and no gold, its columns named differently.

        >>> import tempfile
        >>> import pandas as pd
        >>> from pathlib import Path
        >>> from posthoc.sequence import read_sequence_csv
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "ratings.csv"
        >>> pd.DataFrame({"annotator": ["w1", "w1"], "item": ["a", "b"], "order": [0, 1],
        ...               "score": [3, 5]}).to_csv(path, index=False)
        >>> read_sequence_csv(path, worker="annotator", sequence=None, position="order", label="score", gold=None)
          worker sequence item  position  label  gold
        0     w1       w1    a         0    3.0   NaN
        1     w1       w1    b         1    5.0   NaN
        >>> folder.cleanup()
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, sep=sep or ("\t" if path.suffix.lower() == ".tsv" else ","), dtype=str)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise PosthocInputError(f"{path}: cannot read as CSV ({exc})") from exc
    wanted = {"worker": worker, "item": item, "position": position, "label": label}
    if sequence is not None:
        wanted["sequence"] = sequence
    if gold is not None:
        wanted["gold"] = gold
    missing = [f"{name} (as {column!r})" for name, column in wanted.items() if column not in frame.columns]
    if missing:
        raise PosthocInputError(
            f"{path}: missing column(s) {', '.join(missing)}; the file has {', '.join(frame.columns)}"
        )
    table = pd.DataFrame({name: frame[column] for name, column in wanted.items()})
    if sequence is None:
        table["sequence"] = table["worker"]
    if gold is None:
        table["gold"] = np.nan
    return validate_sequence_table(table, source=str(path))


def read_snow_rte(path: str | Path) -> pd.DataFrame:
    """Snow et al. (2008) RTE judgements in their in-HIT order (``rte_sequence_by_assignment.csv``).

    The sequence is the HIT (``hit_id_prefix20``), the position ``pos_in_hit_fileorder``: the fixed in-HIT
    item order as the released files give it, which is the best available guess of what workers saw, not a
    record of it (seed 004 section 3.1 assumes every worker of a HIT saw the same order).

    Examples:
        Two judgements of one worker in one HIT, with the release's column names.

        >>> import tempfile
        >>> import pandas as pd
        >>> from pathlib import Path
        >>> from posthoc.sequence import read_snow_rte
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "rte_sequence_by_assignment.csv"
        >>> pd.DataFrame({"!amt_worker_ids": ["w1", "w1"], "hit_id_prefix20": "h1", "orig_id": [17, 4],
        ...               "pos_in_hit_fileorder": [1, 0], "response": [0, 1], "gold": [0, 1]}).to_csv(path, index=False)
        >>> read_snow_rte(path)
          worker sequence item  position  label  gold
        0     w1       h1    4         0    1.0   1.0
        1     w1       h1   17         1    0.0   0.0
        >>> folder.cleanup()
    """
    return read_sequence_csv(path, worker="!amt_worker_ids", sequence="hit_id_prefix20", item="orig_id",
                             position="pos_in_hit_fileorder", label="response", gold="gold", sep=",")
