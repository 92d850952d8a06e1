"""Worker and unit annotation vectors (CrowdTruth 2.0; seed 002 section 3.3).

The input is the tidy CrowdTruth *judgement table*: one row per annotation a worker chose on a
unit, columns ``unit, worker, annotation`` (and optionally ``count``, default 1; a worker who
names the same annotation twice has count 2, as in the peer's ``Counter``). A judgement is the set
of rows of one ``(unit, worker)``.

* **annotation vector** ``W[s, i]``: the annotations of worker ``i`` on unit ``s``, one component
  per annotation (1 when chosen, 0 otherwise);
* **unit (sentence) vector** ``V[s] = sum_i W[s, i]`` (optionally weighted by worker quality).

Vectors are rows of a ``scipy.sparse`` matrix (judgements x annotations); ``unit_index`` and
``worker_index`` say whose judgement each row is.  Closed tasks have a fixed annotation vector
(every unit has every annotation as a component); open-ended tasks have, per unit, only the
annotations its workers used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Final, TypeAlias

import numpy as np
import pandas as pd
import scipy.sparse as sp

from posthoc.arrays import Floats, Ints
from posthoc.errors import PosthocInputError
from posthoc.tables import TableContract, require_columns

JUDGEMENT_TABLE_COLUMNS = ("unit", "worker", "annotation")
JUDGEMENT_TABLE: Final = TableContract("CrowdTruth judgements", JUDGEMENT_TABLE_COLUMNS)
#: CrowdTruth's judgement table: ``unit, worker, annotation[, count]``, one row an annotation of a judgement
#: (not posthoc's :data:`~posthoc.tables.Judgements`; :func:`posthoc.crowdtruth.io.judgements_from_posthoc`
#: makes one from it).
JudgementTable: TypeAlias = Annotated[pd.DataFrame, JUDGEMENT_TABLE]


@dataclass(frozen=True)
class JudgementVectors:
    """Annotation vectors of every judgement of a task.

    ``matrix`` is judgements x annotations (float64, CSR); row ``j`` is worker
    ``workers[worker_index[j]]`` on unit ``units[unit_index[j]]``.  ``unit_keys`` (units x
    annotations, bool) marks the components each unit's vector has: all annotations for a closed
    task, the ones the unit's workers used for an open-ended task.
    """

    units: pd.Index
    workers: pd.Index
    annotations: pd.Index
    unit_index: Ints
    worker_index: Ints
    matrix: sp.csr_matrix
    open_ended: bool
    unit_keys: sp.csr_matrix

    @property
    def n_judgements(self) -> int:
        return int(self.matrix.shape[0])


def build_vectors(
    judgements: JudgementTable,
    *,
    annotation_vector: Sequence[str] | None = None,
    open_ended: bool | None = None,
    source: str = "judgement table",
) -> JudgementVectors:
    """Build :class:`JudgementVectors` from a judgement table (``unit, worker, annotation[, count]``).

    ``annotation_vector`` fixes the annotations of a closed task (their order is kept); without it
    the task is open-ended unless ``open_ended=False`` is given, in which case the annotations seen
    (sorted) are the vector.  A closed task rejects annotations outside its vector.  Each
    ``(unit, worker)`` is one judgement; its rows are summed.

    Examples:
        A closed task with the vector ``a, b, c``: w1 and w2 chose ``a`` on unit s1, w3 chose ``b``.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth import build_vectors
        >>> judgements = pd.DataFrame({"unit": ["s1", "s1", "s1"], "worker": ["w1", "w2", "w3"],
        ...                            "annotation": ["a", "a", "b"]})
        >>> vectors = build_vectors(judgements, annotation_vector=["a", "b", "c"])
        >>> vectors.matrix.toarray().tolist(), vectors.worker_index.tolist()
        ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [0, 1, 2])
        >>> build_vectors(judgements).annotations.tolist()  # open-ended: only what the workers used
        ['a', 'b']
    """
    require_columns(judgements, JUDGEMENT_TABLE_COLUMNS, table=source)
    if judgements.empty:
        raise PosthocInputError(f"{source}: no judgements; give at least two workers on one unit")
    if open_ended is None:
        open_ended = annotation_vector is None
    frame = judgements.loc[:, [c for c in ("unit", "worker", "annotation", "count") if c in judgements.columns]]
    for column in ("unit", "worker", "annotation"):
        if frame[column].isna().any():
            bad = int(frame[column].isna().to_numpy().nonzero()[0][0])
            raise PosthocInputError(f"{source}: row {bad} has an empty {column!r}; fill it or drop the row")
    counts = (
        pd.to_numeric(frame["count"], errors="coerce").to_numpy(dtype=float)
        if "count" in frame.columns
        else np.ones(len(frame))
    )
    if np.isnan(counts).any() or (counts < 0).any():
        raise PosthocInputError(f"{source}: column 'count' must hold non-negative numbers")
    unit_labels = frame["unit"].astype(str).to_numpy()
    worker_labels = frame["worker"].astype(str).to_numpy()
    annotation_labels = frame["annotation"].astype(str).to_numpy()

    if annotation_vector is not None:
        annotations = pd.Index([str(a) for a in annotation_vector])
        if annotations.has_duplicates:
            raise PosthocInputError(f"{source}: the annotation vector names an annotation twice")
        if not open_ended:
            unknown = sorted(set(annotation_labels) - set(annotations))
            if unknown:
                raise PosthocInputError(
                    f"{source}: annotation(s) {', '.join(map(repr, unknown[:5]))} are not in the annotation vector "
                    f"({', '.join(annotations)}); add them to the vector, fix the answers or make the task open-ended"
                )
        else:
            annotations = annotations.append(pd.Index(sorted(set(annotation_labels) - set(annotations))))
    else:
        annotations = pd.Index(sorted(set(annotation_labels)))

    units = pd.Index(sorted(set(unit_labels)))
    workers = pd.Index(sorted(set(worker_labels)))
    pair_codes, pair_uniques = pd.factorize(pd.MultiIndex.from_arrays([unit_labels, worker_labels]), sort=True)
    unit_index = units.get_indexer(pair_uniques.get_level_values(0))
    worker_index = workers.get_indexer(pair_uniques.get_level_values(1))
    column_index = annotations.get_indexer(pd.Index(annotation_labels))
    matrix = sp.csr_matrix(
        (counts, (pair_codes, column_index)), shape=(len(pair_uniques), len(annotations)), dtype=float
    )
    matrix.sum_duplicates()
    empty = np.asarray(matrix.sum(axis=1)).ravel() <= 0
    if empty.any():
        first = int(np.flatnonzero(empty)[0])
        raise PosthocInputError(
            f"{source}: worker {workers[worker_index[first]]!r} chose no annotation on unit "
            f"{units[unit_index[first]]!r}; give every judgement at least one annotation (or a 'none' token)"
        )
    unit_keys = _unit_keys(matrix, unit_index, len(units), open_ended=open_ended)
    return JudgementVectors(
        units=units,
        workers=workers,
        annotations=annotations,
        unit_index=unit_index.astype(np.int64),
        worker_index=worker_index.astype(np.int64),
        matrix=matrix,
        open_ended=bool(open_ended),
        unit_keys=unit_keys,
    )


def unit_indicator(vectors: JudgementVectors) -> sp.csr_matrix:
    """Units x judgements 0/1 matrix: row ``s`` sums the judgements of unit ``s``.

    Examples:
        Judgements 0 and 1 are on unit s1, judgement 2 on s2.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.vectors import build_vectors, unit_indicator
        >>> judgements = pd.DataFrame({"unit": ["s1", "s1", "s2"], "worker": ["w1", "w2", "w1"], "annotation": "a"})
        >>> unit_indicator(build_vectors(judgements)).toarray().tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    n = vectors.n_judgements
    return sp.csr_matrix(
        (np.ones(n), (vectors.unit_index, np.arange(n))), shape=(len(vectors.units), n), dtype=float
    )


def unit_vectors(vectors: JudgementVectors, worker_weights: Floats | None = None) -> sp.csr_matrix:
    """Unit (sentence) vectors ``V[s] = sum_i w_i W[s, i]`` (units x annotations); ``w = 1`` by default.

    Examples:
        Unit s1: w1 chose ``a``, w2 chose ``a`` and ``b``: ``V = (2, 1)``; with worker weights 0.5 and 1, ``(1.5, 1)``.

        >>> import numpy as np
        >>> import pandas as pd
        >>> from posthoc.crowdtruth.vectors import build_vectors, unit_vectors
        >>> judgements = pd.DataFrame({"unit": "s1", "worker": ["w1", "w2", "w2"], "annotation": ["a", "a", "b"]})
        >>> vectors = build_vectors(judgements)
        >>> unit_vectors(vectors).toarray().tolist(), unit_vectors(vectors, np.array([0.5, 1.0])).toarray().tolist()
        ([[2.0, 1.0]], [[1.5, 1.0]])
    """
    weighted = vectors.matrix
    if worker_weights is not None:
        weighted = sp.diags(np.asarray(worker_weights, dtype=float)[vectors.worker_index]) @ weighted
    return sp.csr_matrix(unit_indicator(vectors) @ weighted)


def _unit_keys(matrix: sp.csr_matrix, unit_index: Ints, n_units: int, *, open_ended: bool) -> sp.csr_matrix:
    n_annotations = matrix.shape[1]
    if not open_ended:
        return sp.csr_matrix(np.ones((n_units, n_annotations), dtype=bool))
    indicator = sp.csr_matrix(
        (np.ones(matrix.shape[0]), (unit_index, np.arange(matrix.shape[0]))), shape=(n_units, matrix.shape[0])
    )
    summed = sp.csr_matrix(indicator @ matrix)
    summed.eliminate_zeros()
    return sp.csr_matrix(summed > 0)


def vectors_table(vectors: JudgementVectors) -> pd.DataFrame:
    """The judgement vectors as a long table ``unit, worker, annotation, count`` (nonzero entries only).

    Examples:
        A worker who names one annotation twice has count 2.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.vectors import build_vectors, vectors_table
        >>> judgements = pd.DataFrame({"unit": "s1", "worker": ["w1", "w1", "w2"], "annotation": ["a", "a", "b"]})
        >>> vectors_table(build_vectors(judgements))
          unit worker annotation  count
        0   s1     w1          a    2.0
        1   s1     w2          b    1.0
    """
    coo = vectors.matrix.tocoo()
    return pd.DataFrame(
        {
            "unit": vectors.units[vectors.unit_index[coo.row]],
            "worker": vectors.workers[vectors.worker_index[coo.row]],
            "annotation": vectors.annotations[coo.col],
            "count": coo.data,
        }
    )
