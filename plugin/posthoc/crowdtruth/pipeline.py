"""One CrowdTruth run from a judgement table to every output table and the report section.

:func:`run_crowdtruth` is what ``posthoc crowdtruth`` calls; it is a pure function of its inputs
(no files).  Tables:

units
    ``unit, [input.*], n_workers, uqs, uqs_initial, clarity`` (clarity: highest sentence-relation score)
workers
    ``worker, n_units, wqs, wwa, wua, wqs_initial, wwa_initial, wua_initial``
annotations
    ``annotation, n_chosen, aqs, aqs_initial``
unit_annotations
    ``unit, annotation, n_chosen, uas, uas_initial, srs``
weighted_labels
    ``unit, annotation, score, label, weight`` (seed 002 section 3.4)
threshold_sweep
    (with a reference) ``threshold, tp, fp, fn, tn, precision, recall, f1, weighted_*``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import pandas as pd

from posthoc.crowdtruth import evaluation as ev
from posthoc.crowdtruth.metrics import CrowdTruthResult, crowdtruth_metrics
from posthoc.crowdtruth.report import result_section
from posthoc.crowdtruth.vectors import JudgementTable, JudgementVectors, build_vectors
from posthoc.errors import PosthocInputError
from posthoc.html import Section

DEFAULT_THRESHOLD = 0.5


@dataclass
class CrowdTruthRun:
    """Every table of a run, its summary and its report section."""

    result: CrowdTruthResult
    tables: dict[str, pd.DataFrame]
    summary: dict[str, object]
    section: Section
    filtered: ev.FilterResult | None = None
    extra: dict[str, object] = field(default_factory=dict)


def run_crowdtruth(
    judgements: JudgementTable,
    *,
    annotation_vector: tuple[str, ...] | None = None,
    open_ended: bool = False,
    unit_inputs: pd.DataFrame | None = None,
    reference: pd.Series | None = None,
    positive_annotation: str | None = None,
    threshold: float | None = None,
    worker_threshold: float | None = None,
    max_iterations: int = 10_000,
    title: str = "CrowdTruth disagreement metrics",
) -> CrowdTruthRun:
    """Score ``judgements`` (``unit, worker, annotation``) and evaluate against ``reference`` if given.

    ``reference`` is a boolean Series indexed by unit (True: the unit expresses
    ``positive_annotation``).  ``threshold`` splits weighted training labels; by default the best-F1
    threshold when there is a reference, else 0.5.  ``worker_threshold`` adds the section 3.3
    filtering (reported; the main tables stay unfiltered).

    Examples:
        :func:`~posthoc.crowdtruth.metrics.crowdtruth_metrics`' example (w1, w2 ``a``; w3 ``b``; converged UAS: ``a``
        1, ``b`` 0). No reference, so the labels' threshold is 0.5: ``a`` is positive, weighted
        ``0.85 + 0.15 (1 - 0.5) / (1 - 0.5) = 1``, ``b`` negative, ``-1 + 0.15 x 0 / 0.5 = -1``.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.pipeline import run_crowdtruth
        >>> judgements = pd.DataFrame({"unit": ["s1", "s1", "s1"], "worker": ["w1", "w2", "w3"],
        ...                            "annotation": ["a", "a", "b"]})
        >>> run = run_crowdtruth(judgements)
        >>> run.summary["n_units"], run.summary["n_judgements"], run.summary["label_threshold"], run.section.title
        (1, 3, 0.5, 'CrowdTruth disagreement metrics')
        >>> run.tables["weighted_labels"]
          unit annotation  score  label  weight
        0   s1          a    1.0      1     1.0
        1   s1          b    0.0     -1    -1.0
    """
    vectors = build_vectors(judgements, annotation_vector=annotation_vector, open_ended=open_ended)
    result = crowdtruth_metrics(vectors, max_iterations=max_iterations)
    srs = ev.sentence_relation_scores(vectors)
    unit_annotations = result.unit_annotations.merge(srs, on=["unit", "annotation"], how="left")
    units = result.units.merge(ev.clarity(srs).reset_index(), on="unit", how="left")
    if unit_inputs is not None and len(unit_inputs.columns) > 1:
        units = unit_inputs.assign(unit=unit_inputs["unit"].astype(str)).merge(units, on="unit", how="right")
    summary: dict[str, object] = {
        "n_units": len(result.units),
        "n_workers": len(result.workers),
        "n_judgements": vectors.n_judgements,
        "iterations": result.iterations,
        "converged": result.converged,
        "open_ended": result.open_ended,
    }
    sweep = best = majority = mcnemar = None
    if reference is not None:
        sweep, best, majority, mcnemar, evaluated = _evaluate(vectors, unit_annotations, units, reference,
                                                              positive_annotation)
        summary.update(evaluated)
    if threshold is None:
        threshold = float(best["threshold"]) if best is not None else DEFAULT_THRESHOLD
    summary["label_threshold"] = threshold
    labels = ev.weighted_training_labels(result.unit_annotations, threshold=threshold)
    filtered = None
    if worker_threshold is not None:
        filtered = ev.filter_and_rescore(vectors, worker_threshold=worker_threshold)
        summary.update(
            filter_unit_cutoff=filtered.unit_cutoff,
            filter_dropped_units=len(filtered.dropped_units),
            filter_dropped_workers=len(filtered.dropped_workers),
        )
    tables = {
        "units": units,
        "workers": result.workers,
        "annotations": result.annotations,
        "unit_annotations": unit_annotations,
        "weighted_labels": labels,
    }
    if sweep is not None:
        tables["threshold_sweep"] = sweep
    if filtered is not None:
        tables["filtered_units"] = filtered.result.units
        tables["filtered_workers"] = filtered.result.workers
    notes = (f"Weighted training labels use threshold {threshold:.2f} (positive weights in [0.85, 1], "
             "negative in [-1, -0.85]; seed 002 section 3.4).",)
    section = result_section(result, title=title, sweep=sweep, best=best, majority=majority, mcnemar=mcnemar,
                                 filtered=filtered, notes=notes)
    return CrowdTruthRun(result=result, tables=tables, summary=summary, section=section, filtered=filtered)


class _Evaluation(NamedTuple):
    """The scores of ``positive_annotation`` against a reference: the threshold sweep, its best row, majority vote,
    McNemar's test (scores at the best threshold against majority vote) and their summary entries."""

    sweep: pd.DataFrame
    best: pd.Series
    majority: dict[str, float]
    mcnemar: dict[str, float]
    summary: dict[str, object]


def _evaluate(vectors: JudgementVectors, unit_annotations: pd.DataFrame, units: pd.DataFrame,
              reference: pd.Series, positive_annotation: str | None) -> _Evaluation:
    """Evaluate the unit-annotation scores of ``positive_annotation`` against ``reference`` (seed 002 section 3.4)."""
    if positive_annotation is None or positive_annotation not in set(vectors.annotations):
        raise PosthocInputError(
            f"positive annotation {positive_annotation!r} is not an annotation of this task; "
            f"choose one of {', '.join(vectors.annotations[:10])}"
        )
    chosen = unit_annotations.loc[unit_annotations["annotation"] == positive_annotation].set_index("unit")
    scores, initial = chosen["uas"], chosen["uas_initial"]
    clarity = units.set_index("unit")["clarity"]
    sweep = ev.threshold_sweep(scores, reference, weights=clarity)
    best = ev.best_threshold(sweep)
    majority = ev.majority_vote_f1(initial, reference)
    mcnemar = ev.mcnemar_test(scores >= best["threshold"], initial >= 0.5, reference)
    summary: dict[str, object] = dict(
        positive_annotation=positive_annotation,
        best_threshold=float(best["threshold"]),
        best_f1=float(best["f1"]),
        weighted_f1_at_best=float(best["weighted_f1"]),
        majority_vote_f1=float(majority["f1"]),
        mcnemar_pvalue=mcnemar["pvalue"],
        n_reference_units=int(reference.index.isin(scores.index).sum()),
    )
    return _Evaluation(sweep, best, majority, mcnemar, summary)
