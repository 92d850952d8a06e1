"""The explorer's data: every annotation of a scored study, its judgements, and the annotations behind every cell.

An *annotation* is one system's span and link in one document (seed 000 section 3.2: the key
``dataset, doc_id, system, start, end, link``), the ground truth's included: the union of the source mentions and
of the judged annotations (control tasks too). Each has its judgements (worker, outcome, edited link, whether the
metrics counted it) and a verdict over its counted judgements (the majority rule of
:mod:`posthoc.metrics.verification`; ``no majority`` when no outcome has one).

A *list* is a named set of annotations (``judged|AIDA|REL``: REL's counted annotations of AIDA); a *cell* (one row
of one table of the report, ``rates.12``) is the union of a few lists, so the thousands of cells of a big study
share the lists and the data stays a few times the annotations' size. What each table's row holds:

=================  ===========================================================================================
rates              the system's judged annotations (``verify_share`` etc.: those with a judgement of that outcome;
                   ``posthoc_recall``: the verified annotations of every system, V(d); ``posthoc_f1``: both)
preannotation      the system's and the ground truth's source mentions of the dataset
comparisons        both systems' judged annotations
rankings           the system's judged annotations and its source mentions
outcome_counts     the system's annotations with a judgement of that outcome
agreement          the annotations found by every system with that many judges and verifying judges (Figure 5)
union_outcomes     the verified annotations whose union member has that letter A-E (Figure 6)
controls           the worker's control annotations
exclusions         the control annotations, a failing worker's annotations, or the task's
reliability        the dataset's annotations with two judges or more
corrected_gold     the annotations of any system at that span of that document
=================  ===========================================================================================

Tables of annotations given by other rooms (:class:`AnnotationTable`: error categories, Eaglet's flags) add their
columns as filters and one cell per value, dataset and system (:func:`annotation_cell_id`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote

import numpy as np
import numpy.typing as npt
import pandas as pd

from posthoc.arrays import Bools, Ints
from posthoc.errors import PosthocInputError
from posthoc.metrics.codes import column_codes
from posthoc.metrics.inputs import SYSTEM_ANNOTATION
from posthoc.metrics.tuple_codes import sorted_codes
from posthoc.metrics.union import classify_against_gt
from posthoc.metrics.verification import union_from_verdicts, union_members
from posthoc.tables import OUTCOMES, Documents, Mentions

KEY: Final = SYSTEM_ANNOTATION
#: verdict codes of an annotation (0: never judged)
VERDICTS: Final = ("unjudged", "verify", "edit", "remove", "no majority")
#: judgement flags: bit 1 a control judgement, bit 2 a worker the controls excluded
CONTROL_FLAG, EXCLUDED_FLAG = 1, 2


@dataclass(frozen=True)
class AnnotationTable:
    """A table of annotations from another room: ``frame`` has ``dataset, doc_id, system, start, end`` (``link``
    optional) and the ``columns`` to filter by and show (e.g. ``category, kind`` or an Eaglet rule). A row matches
    the annotation with its key (its span when it has no link); a row that matches none (a ground-truth mention a
    system missed, under that system) becomes an annotation of its own, marked as coming from ``name``."""

    name: str
    frame: pd.DataFrame
    columns: tuple[str, ...]


@dataclass
class ExplorerData:
    """The annotations (one row each: ``dataset, doc_id, system, start, end, link, surface, verdict, origin``), the
    judgements by annotation (``judgement_offsets`` into the ``judgement_*`` arrays, CSR), the named ``lists`` and
    the ``cells`` (id -> list names), each cell's ``labels`` and ``tables``; ``facets``: per added table column, its
    values and (annotation, value) pairs."""

    annotations: pd.DataFrame
    judgement_offsets: Ints
    judgement_worker: Ints
    judgement_outcome: Ints
    judgement_new_link: pd.Series
    judgement_flags: Ints
    workers: list[str]
    lists: dict[str, Ints] = field(default_factory=dict)
    cells: dict[str, tuple[str, ...]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    facets: list[tuple[str, str, list[str], Ints, Ints]] = field(default_factory=list)

    def members(self, cell: str) -> Ints:
        """The annotation rows behind ``cell``, sorted and distinct."""
        parts = [self.lists[name] for name in self.cells[cell]]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.intp)

    def add_list(self, name: str, rows: Ints) -> str:
        """Keep ``rows`` under ``name`` (once) and return the name."""
        self.lists.setdefault(name, np.asarray(rows, dtype=np.intp))
        return name

    def add_cell(self, cell: str, lists: Iterable[str], *, table: str, label: str) -> None:
        """The cell ``cell`` of ``table``: the union of ``lists`` (names of :attr:`lists`)."""
        names = tuple(dict.fromkeys(name for name in lists if name in self.lists))
        self.cells[cell], self.tables[cell], self.labels[cell] = names, table, label


def cell_id(table: str, row: object) -> str:
    """The id of the cell of row ``row`` (the index label) of score table ``table``: ``rates.12``."""
    return f"{table}.{row}"


def annotation_cell_id(table: str, column: str, value: object, *, dataset: str | None = None,
                       system: str | None = None) -> str:
    """The id of the cell of an :class:`AnnotationTable`'s ``column`` = ``value``, within ``dataset`` and
    ``system`` when given (both or neither), e.g. ``categories:category=wrong%20span|AIDA|REL``.

    Examples:
        >>> annotation_cell_id("categories", "category", "wrong span", dataset="AIDA", system="REL")
        'categories:category=wrong%20span|AIDA|REL'
        >>> annotation_cell_id("flags", "rule", "R1")
        'flags:rule=R1'
    """
    base = f"{quote(table, safe='')}:{quote(column, safe='')}={quote(str(value), safe='')}"
    if dataset is None or system is None:
        return base
    return f"{base}|{quote(dataset, safe='')}|{quote(system, safe='')}"


def annotation_codes(frame: pd.DataFrame) -> tuple[Ints, Ints]:
    """Annotation codes (sorted by :data:`KEY`) of ``frame``'s rows and each code's first row."""
    columns = [frame[k] if k in ("start", "end") else frame[k].astype(str) for k in KEY]
    return sorted_codes(*[column_codes(column, sort=True) for column in columns])


def _verdicts(n: Ints, counts: Sequence[Ints], *, ties_verified: bool) -> Ints:
    """Verdict codes (:data:`VERDICTS`) from judge counts ``n`` and the counts per outcome."""
    verdict = np.full(len(n), 4, dtype=np.intp)
    for code, count in enumerate(counts, start=1):
        verdict[2 * count > n] = code
    if ties_verified:
        verdict[(2 * counts[0] == n) & (n > 0)] = 1
    verdict[n == 0] = 0
    return verdict


def split_rows(rows: Ints, *keys: npt.ArrayLike) -> dict[tuple[object, ...], Ints]:
    """``rows`` split by the tuples of ``keys`` (aligned with ``rows``)."""
    if len(rows) == 0:
        return {}
    frame = pd.DataFrame({str(i): np.asarray(key, dtype=object) for i, key in enumerate(keys)})
    return {(k if isinstance(k, tuple) else (k,)): rows[np.asarray(v)]
            for k, v in frame.groupby(list(frame.columns), sort=True).indices.items()}


def with_judgements(annotations: pd.DataFrame, rows: pd.DataFrame, of_row: Ints, flags: Ints, *,
                     ties: bool) -> ExplorerData:
    """The data with the judgements sorted by annotation and each annotation's verdict."""
    order = np.argsort(of_row, kind="stable")
    n = len(annotations)
    offsets = np.zeros(n + 1, dtype=np.intp)
    offsets[1:] = np.cumsum(np.bincount(of_row, minlength=n))
    worker_codes, workers = pd.factorize(rows["worker"].astype(str), sort=True)
    outcome = pd.Categorical(rows["outcome"], categories=list(OUTCOMES)).codes.astype(np.intp)
    counted = flags == 0
    judges = np.bincount(of_row, weights=counted, minlength=n).astype(np.intp)
    per_outcome = [np.bincount(of_row, weights=counted & (outcome == i), minlength=n).astype(np.intp)
                   for i in range(len(OUTCOMES))]
    verdict = _verdicts(judges, per_outcome, ties_verified=ties)
    others = (judges == 0) & (offsets[1:] > offsets[:-1])  # judged only in control tasks or by excluded workers
    if others.any():
        every = np.bincount(of_row, minlength=n)
        rest = [np.bincount(of_row, weights=outcome == i, minlength=n).astype(np.intp) for i in range(len(OUTCOMES))]
        verdict[others] = _verdicts(every, rest, ties_verified=ties)[others]
    annotations["verdict"] = verdict
    annotations["n_judges"] = judges
    annotations["n_verify"] = per_outcome[0]
    new_link = rows["new_link"] if "new_link" in rows.columns else pd.Series([None] * len(rows))
    return ExplorerData(annotations=annotations, judgement_offsets=offsets,
                        judgement_worker=np.asarray(worker_codes, dtype=np.intp)[order],
                        judgement_outcome=outcome[order],
                        judgement_new_link=new_link.iloc[order].reset_index(drop=True),
                        judgement_flags=np.asarray(flags, dtype=np.intp)[order], workers=[str(w) for w in workers])


def add_annotation_table(data: ExplorerData, table: AnnotationTable) -> None:
    """Match ``table``'s rows to annotations (adding the unmatched), then one facet and cells per column."""
    frame = table.frame.reset_index(drop=True)
    missing = [c for c in (*KEY[:5], *table.columns) if c not in frame.columns]
    if missing:
        raise PosthocInputError(f"annotation table {table.name}: lacks column(s) {', '.join(missing)}")
    frame = frame.assign(start=frame["start"].astype("int64"), end=frame["end"].astype("int64"),
                         link=frame["link"].fillna("").astype(str) if "link" in frame.columns else "")
    ann = data.annotations
    index = pd.Series(np.arange(len(ann)), index=pd.MultiIndex.from_frame(ann[list(KEY)].astype(
        {k: str for k in KEY if k not in ("start", "end")})))
    keyed = pd.MultiIndex.from_frame(frame[list(KEY)].astype({k: str for k in KEY if k not in ("start", "end")}))
    found = index.reindex(keyed).to_numpy()
    pairs_row: list[int] = []
    pairs_ann: list[int] = []
    spans = ann.reset_index().groupby(list(KEY[:5]), sort=False)["index"].apply(list).to_dict()
    added: list[int] = []
    starts, ends = frame["start"].to_numpy(np.int64), frame["end"].to_numpy(np.int64)
    for row in range(len(frame)):
        if not np.isnan(found[row]):
            pairs_row.append(row)
            pairs_ann.append(int(found[row]))
            continue
        key = (str(frame.at[row, "dataset"]), str(frame.at[row, "doc_id"]), str(frame.at[row, "system"]),
               int(starts[row]), int(ends[row]))
        near = spans.get(key, [])
        if not near:
            near = [len(ann) + len(added)]
            added.append(row)
        pairs_row.extend([row] * len(near))
        pairs_ann.extend(near)
    if added:
        extra = frame.loc[added, list(KEY)].assign(surface=frame.loc[added, "surface"].astype(str) if "surface"
                                                   in frame.columns else "", origin=table.name, verdict=0,
                                                   n_judges=0, n_verify=0)
        data.annotations = pd.concat([ann, extra], ignore_index=True)
        last = data.judgement_offsets[-1]
        data.judgement_offsets = np.concatenate([data.judgement_offsets, np.full(len(added), last, np.intp)])
    rows_of, anns = np.asarray(pairs_row, dtype=np.intp), np.asarray(pairs_ann, dtype=np.intp)
    dataset = data.annotations["dataset"].to_numpy(object)[anns]
    system = data.annotations["system"].to_numpy(object)[anns]
    for column in table.columns:
        values = frame[column].to_numpy(object)[rows_of]
        keep = np.asarray([not pd.isna(v) for v in values], dtype=bool)
        names = sorted({str(v) for v in values[keep]})
        code = {name: i for i, name in enumerate(names)}
        value_codes = np.asarray([code[str(v)] for v in values[keep]], dtype=np.intp)
        data.facets.append((table.name, column, names, anns[keep], value_codes))
        caption = f"{table.name} {column}"
        for (value,), members in split_rows(anns[keep], values[keep].astype(str)).items():
            cell = annotation_cell_id(table.name, column, value)
            data.add_cell(cell, [data.add_list(cell, members)], table=table.name, label=f"{caption} = {value}")
        for (d, s, value), members in split_rows(anns[keep], dataset[keep], system[keep],
                                              values[keep].astype(str)).items():
            cell = annotation_cell_id(table.name, column, value, dataset=str(d), system=str(s))
            data.add_cell(cell, [data.add_list(cell, members)], table=table.name,
                          label=f"{caption} = {value} · {d} · {s}")


def counted_mask(data: ExplorerData) -> Bools:
    """Annotations with a counted judgement (neither a control nor an excluded worker's)."""
    return data.annotations["n_judges"].to_numpy() > 0


def verified_union_letters(data: ExplorerData, gt: Mentions, *, union: str) -> tuple[Ints, list[str]]:
    """For every counted annotation, its Figure 6 letter (``""`` when not verified): the union of the verified
    ones (:func:`posthoc.metrics.verification.union_from_verdicts`) classified against ``gt``."""
    ann = data.annotations
    judged = np.flatnonzero(counted_mask(data))
    verdicts = ann.iloc[judged][list(KEY)].reset_index(drop=True)
    verdicts["verified"] = (ann["verdict"].to_numpy()[judged] == 1)
    member = union_members(verdicts, union=union)
    letters = np.full(len(judged), "", dtype=object)
    if (member >= 0).any():
        table = union_from_verdicts(verdicts, union=union)
        of_member = classify_against_gt(table, gt)
        letters[member >= 0] = np.asarray(of_member, dtype=object)[member[member >= 0]]
    return judged, list(letters)


def documents_by_key(documents: Documents) -> Mapping[tuple[str, str], str]:
    """``(dataset, doc_id) -> text``."""
    return {(str(d), str(i)): str(t) for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(
        index=False, name=None)}
