"""A system added to a finished study: its posthoc precision from reused, sampled and predicted verdicts (issue 46).

A new system's annotations fall in three parts: those the study already judged in another system's task (same
document, span and link; reused where :func:`posthoc.metrics.reuse.reuse_check` allows it), its novel annotations in
a seeded random sample of its chunks (judged), and the rest of its novel annotations (unjudged). Its posthoc
precision (seed 000 section 3.2: the share of its annotations verified) is estimated stratum by stratum:

``p = w_r mean(Y | reused) + w_n theta_n``,  ``w_r = N_r / N``, ``w_n = N_n / N``,

with ``theta_n`` the novel annotations' mean verdict by prediction-powered inference (PPI++,
:mod:`posthoc.metrics.ppi`): the judged sample's verdicts rectify the predictions of the unjudged. The prediction is
``P(verified | strict class)`` (:func:`strict_match_class`; the error categories of issue 45 plug in through
``category_column``) fitted with cross-fitting (:func:`cross_fitted_predictions`): an annotation's prediction comes
from the judged annotations of the *other* folds of documents, never from its own verdict. The interval is
``estimate -+ t_{G-1} se`` with the cluster jackknife's standard error over documents (the whole estimate, both
strata and ``lam``, recomputed without each document: a difficulty a document's reused and novel annotations share
counts once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from posthoc.arrays import Floats
from posthoc.errors import PosthocInputError
from posthoc.metrics.ppi import ppi_power_tuning
from posthoc.tables import Mentions, require_columns

#: The strict match classes of an annotation against the ground truth (before the categories of issue 45).
STRICT_CLASSES: Final = ("exact", "same_span_other_link", "no_gt_span")
SPAN: Final = ("dataset", "doc_id", "start", "end")


def strict_match_class(annotations: Mentions, gt: Mentions, *, category_column: str | None = None) -> pd.Series:
    """Each annotation's strict class against the ground truth ``gt`` (both with ``dataset, doc_id, start, end,
    link``): ``exact`` (a GT annotation with the same span and link), ``same_span_other_link`` (a GT annotation on
    the same span, another link) or ``no_gt_span``. ``category_column``: the hook for the error categories (issue 45):
    when given, that column of ``annotations`` is the class instead.

    Examples:
        >>> gt = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 9, 14, "Seine")],
        ...                   columns=["dataset", "doc_id", "start", "end", "link"])
        >>> system = pd.DataFrame([("d", "1", 0, 5, "Paris"), ("d", "1", 9, 14, "Seine_(river)"),
        ...                        ("d", "1", 20, 24, "Lyon")], columns=["dataset", "doc_id", "start", "end", "link"])
        >>> strict_match_class(system, gt).tolist()
        ['exact', 'same_span_other_link', 'no_gt_span']
    """
    if category_column is not None:
        require_columns(annotations, (category_column,), table="annotations")
        return annotations[category_column].astype(str).reset_index(drop=True)
    require_columns(annotations, (*SPAN, "link"), table="annotations")
    require_columns(gt, (*SPAN, "link"), table="gt")
    keys = [*SPAN, "link"]
    exact = pd.MultiIndex.from_frame(annotations[keys].astype(str)).isin(pd.MultiIndex.from_frame(gt[keys].astype(str)))
    span = pd.MultiIndex.from_frame(annotations[list(SPAN)].astype(str)).isin(
        pd.MultiIndex.from_frame(gt[list(SPAN)].astype(str)))
    return pd.Series(np.where(exact, "exact", np.where(span, "same_span_other_link", "no_gt_span")), dtype="str")


def cross_fitted_predictions(classes: npt.ArrayLike, verdicts: npt.ArrayLike, judged: npt.ArrayLike,
                             doc_ids: npt.ArrayLike, *, folds: int = 5, seed: int = 0, prior: float = 1.0) -> Floats:
    """``P(verified | class)`` for every annotation, fitted on the judged annotations of the other folds of documents.

    Documents are dealt at random (``seed``) into ``folds`` folds; an annotation's prediction is the verified share of
    the judged annotations of its class outside its fold, shrunk towards that training part's overall share with
    ``prior`` pseudo-annotations (a class unseen there gets the overall share). ``verdicts`` of unjudged annotations
    are ignored.

    Examples:
        Two folds of one document each: ``a``'s annotations are predicted from ``b``'s (x: 2 of 2 verified, y: 0 of 1,
        overall 2/3; prior 1: x ``(2 + 2/3) / 3 = 8/9``, y ``(0 + 2/3) / 2 = 1/3``) and ``b``'s from ``a``'s (x: 1 of 2,
        y: 1 of 1: ``(1 + 2/3) / 3 = 5/9`` and ``(1 + 2/3) / 2 = 5/6``).

        >>> cross_fitted_predictions(["x", "x", "y", "x", "x", "y"], [1, 0, 1, 1, 1, 0], [True] * 6,
        ...                          ["a", "a", "a", "b", "b", "b"], folds=2).round(4).tolist()
        [0.8889, 0.8889, 0.3333, 0.5556, 0.5556, 0.8333]
    """
    labels = np.asarray(classes, dtype=object).astype(str)
    y = np.asarray(verdicts, dtype=float)
    seen = np.asarray(judged, dtype=bool)
    doc_codes, unique_docs = pd.factorize(pd.Series(np.asarray(doc_ids, dtype=object)).astype(str))
    if not (len(labels) == len(y) == len(seen) == len(doc_codes)):
        raise PosthocInputError("cross-fitted predictions: classes, verdicts, judged and doc_ids differ in length")
    if folds < 2 or len(unique_docs) < folds:
        raise PosthocInputError(f"cross-fitted predictions: folds must be between 2 and the documents "
                                f"({len(unique_docs)}), not {folds}")
    fold_of_doc = np.random.default_rng(seed).permutation(len(unique_docs)) % folds
    fold = fold_of_doc[doc_codes]
    predicted = np.empty(len(y))
    for k in range(folds):
        train = seen & (fold != k)
        overall = float(y[train].mean()) if train.any() else 0.5
        table = pd.DataFrame({"c": labels[train], "y": y[train]}).groupby("c")["y"].agg(["sum", "count"])
        rate = (table["sum"] + prior * overall) / (table["count"] + prior)
        predicted[fold == k] = pd.Series(labels[fold == k]).map(rate).fillna(overall).to_numpy(float)
    return predicted


def _stratified(y: Floats, f: Floats, old: npt.NDArray[np.bool_], sampled: npt.NDArray[np.bool_], codes: npt.NDArray[
        np.int64], n_units: int, lam: float | None) -> tuple[float, float]:
    """``(estimate, lam)``: the reused stratum's mean and the novel stratum's PPI mean, weighted by their sizes."""
    unjudged = ~old & ~sampled
    if sampled.sum() < 2 or not unjudged.any():
        return float("nan"), float("nan")
    weight = ppi_power_tuning(y[sampled], f[sampled], f[unjudged], codes=codes[sampled],
                              codes_unlabeled=codes[unjudged], n_units=n_units) if lam is None else float(lam)
    theta = weight * f[unjudged].mean() + (y[sampled] - weight * f[sampled]).mean()
    share = old.sum() / len(y)
    return float(share * (y[old].mean() if old.any() else 0.0) + (1 - share) * theta), weight


@dataclass(frozen=True)
class NewSystemPrecision:
    """The new system's posthoc precision ``estimate`` with ``low, high`` and ``se``; the shares of its annotations
    whose verdict was ``reused``, ``judged`` (the sample) and ``predicted`` (PPI); ``lam`` the predictions' weight."""

    estimate: float
    low: float
    high: float
    se: float
    reused: float
    judged: float
    predicted: float
    lam: float


def new_system_precision(verdicts: npt.ArrayLike, *, reused: npt.ArrayLike, judged: npt.ArrayLike,
                         predictions: npt.ArrayLike, doc_ids: npt.ArrayLike, lam: float | None = None,
                         confidence: float = 0.95) -> NewSystemPrecision:
    """The new system's posthoc precision from reused, judged and predicted verdicts (module docstring).

    One entry per annotation of the new system: ``verdicts`` 1 verified / 0 not (read where ``reused`` or
    ``judged``), ``reused`` (a verdict from the study), ``judged`` (a novel annotation of the sample), ``predictions``
    (cross-fitted, :func:`cross_fitted_predictions`), ``doc_ids`` (the sampling units: documents). ``lam``: None
    tunes PPI++.

    Examples:
        Two reused (both verified) and four novel annotations, two judged (1 and 0, predicted 0.5 each) and two
        unjudged (predicted 0.5): the novel mean is ``0.5 + mean(1 - 0.5, 0 - 0.5) = 0.5`` at ``lam = 1``, so
        ``p = (2/6) 1 + (4/6) 0.5 = 2/3``; a third reused, a third judged, a third predicted.

        >>> result = new_system_precision([1, 1, 1, 0, 0, 0], reused=[1, 1, 0, 0, 0, 0], judged=[0, 0, 1, 1, 0, 0],
        ...     predictions=[0.5] * 6, doc_ids=["a", "b", "a", "b", "a", "b"], lam=1)
        >>> round(result.estimate, 6), round(result.reused, 4), round(result.judged, 4), round(result.predicted, 4)
        (0.666667, 0.3333, 0.3333, 0.3333)
    """
    y, f = np.asarray(verdicts, dtype=float), np.asarray(predictions, dtype=float)
    old, sampled = np.asarray(reused, dtype=bool), np.asarray(judged, dtype=bool)
    codes = pd.factorize(pd.Series(np.asarray(doc_ids, dtype=object)).astype(str))[0].astype(np.int64)
    if not (len(y) == len(f) == len(old) == len(sampled) == len(codes)):
        raise PosthocInputError("new system precision: verdicts, reused, judged, predictions and doc_ids differ "
                                "in length")
    if (old & sampled).any():
        raise PosthocInputError("new system precision: an annotation is both reused and judged in the sample")
    novel_unjudged = ~old & ~sampled
    if sampled.sum() < 2 or not novel_unjudged.any():
        raise PosthocInputError("new system precision: needs at least 2 judged novel annotations and 1 unjudged "
                                "(else score it as judged)")
    n_units, total = int(codes.max()) + 1, len(y)
    estimate, weight = _stratified(y, f, old, sampled, codes, n_units, lam)
    # the cluster jackknife over documents (CV3, t_{G-1}; MacKinnon, Nielsen and Webb 2023), lam re-tuned each time:
    # the sandwich of the influence (CR0) covers 0.89-0.93 at 40 documents with document effects, this one holds
    left_out = np.array([_stratified(y[codes != g], f[codes != g], old[codes != g], sampled[codes != g],
                                     codes[codes != g], n_units, lam)[0] for g in range(n_units)])
    left_out = left_out[np.isfinite(left_out)]  # a document whose removal leaves no estimate does not count
    g = len(left_out)
    se = float(np.sqrt((g - 1) / g * np.sum((left_out - left_out.mean()) ** 2))) if g >= 2 else float("nan")
    half = float(stats.t.ppf((1 + confidence) / 2, max(g - 1, 1))) * se
    return NewSystemPrecision(estimate=estimate, low=estimate - half, high=estimate + half, se=se,
                              reused=float(old.sum() / total), judged=float(sampled.sum() / total),
                              predicted=float(novel_unjudged.sum() / total), lam=weight)

