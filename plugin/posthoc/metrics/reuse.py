"""The reuse check: does an annotation's verdict depend on the task it was judged in? (issue 46)

A system added after a study reuses the verdicts of its annotations that the study already judged: the same
document, span and link (:data:`~posthoc.metrics.inputs.ANNOTATION`), pre-filled by several systems and so judged in
several tasks, each blind to its system (paper 000 section 2.1). That is sound only if the task around an annotation
(the other annotations shown with it) does not change how it is judged. Within a study this is measurable:

- **cross-context agreement**: over every annotation judged in the tasks of two or more systems, the share of pairs
  of its judgements from *different* systems' tasks, by different workers, that give the same outcome
  (verify / edit / remove);
- **within-task agreement**, the baseline: the share of pairs of judgements of one annotation in the *same* task by
  two workers (``baseline`` ``replicates``: k > 1 studies, on the same shared annotations), or, without
  replicates, of two workers' judgements of the same control annotation (``controls``);
- ``difference`` = within - cross, with its interval by the cluster jackknife t over documents
  (:func:`~posthoc.metrics.intervals.jackknife_t`; a control annotation is a unit of its own);
- **the shift**, which needs no baseline (k = 1 too): for each pair of systems, the mean over their shared
  annotations of (verify share in the first system's task - in the second's), with the same interval; the pair
  with the largest shift is reported. Without context effects every shift is 0.

If context does not matter, a pair across tasks is two independent judgements of one annotation, as a pair within a
task is, and the difference is 0; if it does, verdicts disagree more across tasks. **The rule**
(:data:`REUSE_MARGIN`, equivalence by two one-sided 5% tests, so 90% intervals): reuse is allowed for a dataset
(``decision`` ``reuse``) when every system pair's shift interval lies within ``-+0.05`` and, with replicates,
the upper bound of the agreement difference is at most 0.05 (five points of agreement). An interval entirely
beyond the margin (a shift or an agreement loss) is ``context changes verdicts`` (never reuse); anything else is
``not shown`` (reuse not allowed: judge them). The control baseline is reported, never decisive: with failing
workers excluded at a pass rate of 1 every kept worker answered the controls alike, so its agreement is 1 by
selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.metrics.codes import factorize
from posthoc.metrics.inputs import ANNOTATION, is_control
from posthoc.metrics.intervals import jackknife_t
from posthoc.metrics.tuple_codes import sorted_codes
from posthoc.scores import REUSE_COLUMNS, typed_reuse
from posthoc.tables import OUTCOMES, Judgements

#: The largest loss of agreement across tasks (within - cross) under which a verdict is reused.
REUSE_MARGIN: Final = 0.05
#: The interval of the rule: two-sided 90%, i.e. each bound a one-sided 5% test.
REUSE_CONFIDENCE: Final = 0.90


def _pairs_per(group: Ints, outcome: Ints, n_groups: int) -> tuple[Floats, Floats]:
    """``(pairs, agreeing)`` of judgements per group: ``C(n, 2)`` and ``sum over outcomes C(n_o, 2)``."""
    n = np.bincount(group, minlength=n_groups).astype(float)
    by_outcome = np.bincount(group * 3 + outcome, minlength=3 * n_groups).astype(float)
    return n * (n - 1) / 2, (by_outcome * (by_outcome - 1) / 2).reshape(n_groups, 3).sum(axis=1)


def _within(annotation: Ints, other: Ints, outcome: Ints, n_annotations: int) -> tuple[Floats, Floats]:
    """Pairs (and agreeing pairs) per annotation between judgements sharing ``other`` (a system, a worker)."""
    cell, first = sorted_codes(annotation, other)
    n_cells = int(cell.max()) + 1 if len(cell) else 0
    pairs, agreeing = _pairs_per(cell, outcome, n_cells)
    owner = annotation[first]
    return (np.bincount(owner, weights=pairs, minlength=n_annotations).astype(float),
            np.bincount(owner, weights=agreeing, minlength=n_annotations).astype(float))


@dataclass(frozen=True)
class _Codes:
    """The judgement rows as integer codes: annotation, system (with its ``names``), worker, outcome, and each
    annotation's dataset (with ``datasets``) and document."""

    annotation: Ints
    system: Ints
    names: list[str]
    worker: Ints
    outcome: Ints
    dataset_of: Ints
    datasets: list[str]
    doc_of: Ints

    @property
    def n_annotations(self) -> int:
        return int(self.annotation.max()) + 1 if len(self.annotation) else 0


def _codes(judgements: Judgements, keep: Bools) -> _Codes:
    """The codes of the ``keep`` rows (factorised on the whole columns, then taken: no copy of the strings)."""
    factorized = {key: judgements[key].to_numpy(np.int64) if key in ("start", "end")
                  else factorize(judgements[key], sort=True)[0] for key in ANNOTATION}
    kept = np.flatnonzero(keep)
    annotation, first = sorted_codes(*(factorized[key][kept] for key in ANNOTATION))
    system, names = factorize(judgements["system"], sort=True)
    datasets = factorize(judgements["dataset"], sort=True)[1]
    outcome = pd.Categorical(judgements["outcome"], categories=list(OUTCOMES)).codes.astype(np.int64)
    return _Codes(annotation=annotation, system=system[kept], names=[str(n) for n in names],
                  worker=factorize(judgements["worker"], sort=True)[0][kept], outcome=outcome[kept],
                  dataset_of=factorized["dataset"][kept][first], datasets=[str(d) for d in datasets],
                  doc_of=factorized["doc_id"][kept][first])


def _annotation_pairs(codes: _Codes) -> pd.DataFrame:
    """Per annotation (``dataset``, ``doc_id``, ``n_systems``): all pairs, same-system pairs and same-worker pairs of
    its judgements, each with its agreeing pairs (integer codes and counts, no grouping of strings)."""
    n = codes.n_annotations
    frame = pd.DataFrame({"dataset": codes.dataset_of, "doc_id": codes.doc_of})
    frame["all_pairs"], frame["all_agree"] = _pairs_per(codes.annotation, codes.outcome, n)
    frame["system_pairs"], frame["system_agree"] = _within(codes.annotation, codes.system, codes.outcome, n)
    frame["worker_pairs"], frame["worker_agree"] = _within(codes.annotation, codes.worker, codes.outcome, n)
    frame["n_systems"] = (_verify_matrix(codes)[0] > 0).sum(axis=1)
    return frame


def _verify_matrix(codes: _Codes) -> tuple[Floats, Floats]:
    """``(judged, verified)``: judgements and verify judgements per annotation x system."""
    size = codes.n_annotations * len(codes.names)
    flat = codes.annotation * len(codes.names) + codes.system
    judged = np.bincount(flat, minlength=size).astype(float)
    verified = np.bincount(flat, weights=(codes.outcome == 0).astype(float), minlength=size).astype(float)
    return judged.reshape(-1, len(codes.names)), verified.reshape(-1, len(codes.names))


def _ratio(numerator: Floats, denominator: Floats) -> Floats:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def _difference(units: pd.DataFrame, confidence: float) -> tuple[float, float, float, float, float]:
    """``(cross, within, difference, low, high)`` from per-unit sums ``cross_agree, cross_pairs, within_agree,
    within_pairs``, the interval by the jackknife over units."""
    sums = units[["cross_agree", "cross_pairs", "within_agree", "within_pairs"]].to_numpy(float)
    total = sums.sum(axis=0)
    cross, within = total[0] / total[1], total[2] / total[3]
    left = total[None, :] - sums
    jack = _ratio(left[:, 2], left[:, 3]) - _ratio(left[:, 0], left[:, 1])
    low, high, _ = jackknife_t(jack[:, None], np.array([within - cross]), confidence=confidence)
    return float(cross), float(within), float(within - cross), float(low[0]), float(high[0])


def _shift(judged: Floats, verified: Floats, names: list[str], doc: Ints,
           confidence: float) -> tuple[str, float, float, float, bool, bool]:
    """The largest shift of the verify share between two systems' tasks on their shared annotations (``judged``,
    ``verified``: one dataset's annotation x system counts): ``(pair, shift, low, high, every pair within the margin,
    some pair beyond it)`` (module docstring)."""
    share = _ratio(verified, judged)
    n_docs = int(doc.max()) + 1 if len(doc) else 0
    found: list[tuple[str, float, float, float]] = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            both = (judged[:, i] > 0) & (judged[:, j] > 0)
            if not both.any():
                continue
            units = np.stack([np.bincount(doc[both], weights=share[both, i] - share[both, j], minlength=n_docs),
                              np.bincount(doc[both], minlength=n_docs).astype(float)], axis=1)
            units = units[units[:, 1] > 0]
            total = units.sum(axis=0)
            left = total[None, :] - units
            bounds = jackknife_t(_ratio(left[:, 0], left[:, 1])[:, None], np.array([total[0] / total[1]]),
                                 confidence=confidence)
            found.append((f"{names[i]} - {names[j]}", float(total[0] / total[1]), float(bounds[0][0]),
                          float(bounds[1][0])))
    if not found:
        return "", np.nan, np.nan, np.nan, False, False
    pair, estimate, low, high = max(found, key=lambda item: abs(item[1]))
    inside = all(lo >= -REUSE_MARGIN and hi <= REUSE_MARGIN for _, _, lo, hi in found)
    beyond = any(lo > REUSE_MARGIN or hi < -REUSE_MARGIN for _, _, lo, hi in found)
    return pair, estimate, low, high, inside, beyond


def _decision(low: float, high: float, margin: float, *, shift_inside: bool, shift_beyond: bool,
              replicates: bool) -> str:
    if shift_beyond or (replicates and not np.isnan(low) and low > margin):
        return "context changes verdicts"
    if shift_inside and (not replicates or (not np.isnan(high) and high <= margin)):
        return "reuse"
    return "not shown"


def reuse_check(judgements: Judgements, *, margin: float = REUSE_MARGIN, confidence: float = REUSE_CONFIDENCE,
                controls: Judgements | None = None) -> pd.DataFrame:
    """Cross-context against within-task agreement of the verdicts of annotations shared by systems, per dataset,
    and whether their verdicts may be reused (module docstring; issue 46).

    ``judgements``: a judgements table (:mod:`posthoc.tables`; control rows, ``is_control`` True, are the baseline
    without replicates; exclude failing workers before; ``controls``: control rows given apart, when
    ``judgements`` holds none). Columns (one row per dataset with an annotation judged in
    two systems' tasks):

    ``n_shared``                          annotations judged in the tasks of two or more systems
    ``cross_pairs, cross_agreement``      pairs of their judgements across systems' tasks by different workers, and
                                          the share with the same outcome
    ``baseline``                          ``replicates`` (pairs within one task, k > 1), ``controls`` or ``none``
    ``within_pairs, within_agreement``    the baseline's pairs and their share in agreement
    ``difference, ci_low, ci_high``       within - cross, its ``confidence`` interval over documents
    ``shift_pair, shift, shift_low,``     the system pair whose verify share moves most between their tasks on
    ``shift_high``                        shared annotations (first - second), with its interval over documents
    ``margin, decision``                  the rule's margin; ``reuse``, ``context changes verdicts`` or ``not shown``

    Examples:
        One annotation judged by two workers in system A's task (both verify) and by two in B's (verify, remove): two
        pairs within a task, one agreeing (1/2); four pairs across the tasks, two agreeing (2/4). Within - cross is
        0, but one document cannot give an interval, so the rule does not allow reuse.

        >>> rows = pd.DataFrame([("d", "1", s, 0, 5, "Paris", w, o) for s, w, o in
        ...     [("A", "w1", "verify"), ("A", "w2", "verify"), ("B", "w3", "verify"), ("B", "w4", "remove")]],
        ...     columns=["dataset", "doc_id", "system", "start", "end", "link", "worker", "outcome"])
        >>> reuse_check(rows)[["cross_pairs", "cross_agreement", "baseline", "within_agreement", "difference",
        ...                    "decision"]]
           cross_pairs  cross_agreement    baseline  within_agreement  difference   decision
        0          4.0              0.5  replicates               0.5         0.0  not shown
    """
    control = is_control(judgements)
    if control.all():
        return typed_reuse(pd.DataFrame.from_records([], columns=REUSE_COLUMNS))
    codes = _codes(judgements, ~control)
    every = _annotation_pairs(codes)
    judged, verified = _verify_matrix(codes)
    records = []
    for number, dataset in enumerate(codes.datasets):
        mine = (codes.dataset_of == number) & (every["n_systems"] >= 2).to_numpy()
        shared = every.loc[mine].copy()
        if shared.empty:
            continue
        shared["cross_pairs"] = shared["all_pairs"] - shared["system_pairs"] - shared["worker_pairs"]
        shared["cross_agree"] = shared["all_agree"] - shared["system_agree"] - shared["worker_agree"]
        shared["within_pairs"], shared["within_agree"] = shared["system_pairs"], shared["system_agree"]
        units = shared.groupby("doc_id")[["cross_agree", "cross_pairs", "within_agree", "within_pairs"]].sum()
        baseline = "replicates"
        if units["within_pairs"].sum() == 0:
            control_rows = judgements.loc[control] if controls is None or control.any() else controls
            units, baseline = _with_controls(control_rows, str(dataset), units)
        pair, shift, shift_low, shift_high, inside, beyond = _shift(judged[mine], verified[mine], codes.names,
                                                                    codes.doc_of[mine], confidence)
        row = {"dataset": str(dataset), "n_shared": len(shared), "cross_pairs": float(units["cross_pairs"].sum()),
               "baseline": baseline, "within_pairs": float(units["within_pairs"].sum()), "margin": margin,
               "shift_pair": pair, "shift": shift, "shift_low": shift_low, "shift_high": shift_high}
        low = high = float("nan")
        if baseline == "none" or row["cross_pairs"] == 0:
            pairs_seen = float(units["cross_pairs"].sum())
            cross = float(units["cross_agree"].sum()) / pairs_seen if pairs_seen else np.nan
            row |= {"cross_agreement": cross, "within_agreement": np.nan, "difference": np.nan}
        else:
            cross, within, difference, low, high = _difference(units.reset_index(drop=True), confidence)
            row |= {"cross_agreement": cross, "within_agreement": within, "difference": difference}
        row |= {"ci_low": low, "ci_high": high, "decision": _decision(
            low, high, margin, shift_inside=inside, shift_beyond=beyond, replicates=baseline == "replicates")}
        records.append(row)
    return typed_reuse(pd.DataFrame.from_records(records, columns=REUSE_COLUMNS))


def _with_controls(controls: Judgements, dataset: str, units: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The document units with each control annotation of ``dataset`` (else of every dataset: control tasks are
    the study's) added as a unit of its own holding its pairs of workers; ``none`` without any."""
    mine = controls.loc[controls["dataset"].astype(str) == dataset] if len(controls) else controls
    mine = mine if len(mine) else controls
    if mine.empty:
        return units, "none"
    keys = [mine[key].to_numpy(np.int64) if key in ("start", "end") else factorize(mine[key], sort=True)[0]
            for key in ANNOTATION]
    annotation = sorted_codes(*keys)[0]
    outcome = pd.Categorical(mine["outcome"], categories=list(OUTCOMES)).codes.astype(np.int64)
    pairs, agreeing = _pairs_per(annotation, outcome, int(annotation.max()) + 1)
    extra = pd.DataFrame({"cross_agree": 0.0, "cross_pairs": 0.0, "within_agree": agreeing, "within_pairs": pairs})
    if extra["within_pairs"].sum() == 0:
        return units, "none"
    return pd.concat([units.reset_index(drop=True), extra], ignore_index=True), "controls"
