"""Seed 002 sections 3.3, 3.4 and 4: scores of sentences against a reference, and training labels.

* :func:`sentence_relation_scores` -- ``srs(s, r) = cos(V_s, r^)`` (section 3.3), and
  :func:`clarity` -- a unit's clarity, its highest score over the annotations (Aroyo & Welty,
  "The Three Sides of CrowdTruth", the paper's reference [3]: sentence clarity is the maximal
  sentence-relation score).
* :func:`filter_and_rescore` -- the two-step clean-up of section 3.3: drop units whose quality is
  one standard deviation below the mean, score workers on the rest, drop workers below a
  threshold, and re-score every unit without them.
* :func:`threshold_sweep` / :func:`best_threshold` / :func:`majority_vote_f1` -- F1 of a score
  against a discrete reference at each positive / negative threshold (Fig. 2), the best threshold,
  and majority vote (half the workers or more) for comparison.
* :func:`weighted_prf` -- the clarity-weighted precision, recall and F1 of section 4:
  ``p' = sum_s w_s tp(s) / sum_s w_s (tp(s) + fp(s))``,
  ``r' = sum_s w_s tp(s) / sum_s w_s (tp(s) + fn(s))``, ``F1' = 2 p' r' / (p' + r')``.
* :func:`mcnemar_test` -- McNemar's test between two label sources judged against one reference
  (section 4.1; statsmodels).
* :func:`weighted_training_labels` -- section 3.4: given a threshold ``t``, a score ``s >= t`` is a
  positive example weighted ``0.85 + 0.15 (s - t) / (1 - t)`` (``[t, 1] -> [0.85, 1]``), a score
  ``s < t`` a negative example weighted ``-1 + 0.15 s / t`` (``[0, t) -> [-1, -0.85)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats
from posthoc.crowdtruth.metrics import CrowdTruthResult, crowdtruth_metrics
from posthoc.crowdtruth.vectors import JudgementTable, JudgementVectors, build_vectors, unit_vectors, vectors_table
from posthoc.errors import PosthocInputError

DEFAULT_THRESHOLDS = np.round(np.arange(1, 101) / 100.0, 2)
POSITIVE_RANGE = (0.85, 1.0)
NEGATIVE_RANGE = (-1.0, -0.85)


def sentence_relation_scores(vectors: JudgementVectors) -> pd.DataFrame:
    """``unit, annotation, srs``: the cosine between each unit vector and each annotation's unit vector.

    ``srs(s, r) = V_s[r] / ||V_s||`` with ``V_s`` the unweighted sum of the workers' vectors.
    One row per component of the unit vectors (all annotations for a closed task).

    Examples:
        Closed task ``a, b, c``: two workers chose ``a``, one ``b``, so ``V_s = (2, 1, 0)``, ``||V_s|| = √5`` and the
        scores are ``2/√5``, ``1/√5`` and 0.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth import build_vectors
        >>> from posthoc.crowdtruth.evaluation import sentence_relation_scores
        >>> judgements = pd.DataFrame({"unit": ["s1"] * 3, "worker": ["w1", "w2", "w3"], "annotation": ["a", "a", "b"]})
        >>> sentence_relation_scores(build_vectors(judgements, annotation_vector=["a", "b", "c"])).round(6)
          unit annotation       srs
        0   s1          a  0.894427
        1   s1          b  0.447214
        2   s1          c  0.000000
    """
    sums = unit_vectors(vectors).toarray()
    norms = np.sqrt((sums**2).sum(axis=1))
    keys = vectors.unit_keys.tocoo()
    order = np.lexsort((keys.col, keys.row))
    rows, cols = keys.row[order], keys.col[order]
    return pd.DataFrame(
        {
            "unit": vectors.units[rows],
            "annotation": vectors.annotations[cols],
            "srs": sums[rows, cols] / np.where(norms[rows] > 0, norms[rows], 1.0),
        }
    )


def clarity(scores: pd.DataFrame, *, score_column: str = "srs") -> pd.Series:
    """A unit's clarity: its highest score over the annotations (indexed by unit).

    Examples:
        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import clarity
        >>> scores = pd.DataFrame({"unit": ["s1", "s1", "s2"], "annotation": ["a", "b", "a"], "srs": [0.89, 0.45, 0.6]})
        >>> clarity(scores).to_dict()
        {'s1': 0.89, 's2': 0.6}
    """
    return scores.groupby("unit", sort=True)[score_column].max().rename("clarity")


@dataclass(frozen=True)
class FilterResult:
    """The outcome of :func:`filter_and_rescore`."""

    result: CrowdTruthResult
    dropped_units: pd.DataFrame  # unit, uqs: units left out when scoring workers (step 1)
    dropped_workers: pd.DataFrame  # worker, wqs: workers removed from every unit (step 2)
    unit_cutoff: float
    worker_threshold: float


def filter_and_rescore(
    vectors: JudgementVectors, *, worker_threshold: float, unit_sd: float = 1.0
) -> FilterResult:
    """Section 3.3's two-step filtering, then re-scoring.

    1. Score all units; units whose UQS is below ``mean - unit_sd * sd`` (population sd) are left out.
    2. Score the workers on the remaining units; workers with WQS below ``worker_threshold`` are removed.
    3. Re-score every unit (including those left out in step 1) on the remaining workers' judgements.

    Examples:
        Two units judged as in :func:`~posthoc.crowdtruth.metrics.crowdtruth_metrics`' example (w1, w2 ``a``; w3
        ``b``): both UQS are 1, so the sd is 0, the cutoff 1 and no unit is below it; w3's WQS is 0 < 0.5, so w3 goes,
        and w1 and w2 agree on every unit: UQS 1.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth import build_vectors
        >>> from posthoc.crowdtruth.evaluation import filter_and_rescore
        >>> judgements = pd.DataFrame({"unit": ["s1"] * 3 + ["s2"] * 3, "worker": ["w1", "w2", "w3"] * 2,
        ...                            "annotation": ["a", "a", "b"] * 2})
        >>> filtered = filter_and_rescore(build_vectors(judgements), worker_threshold=0.5)
        >>> len(filtered.dropped_units), filtered.dropped_workers["worker"].tolist()
        (0, ['w3'])
        >>> filtered.result.units[["unit", "uqs"]].round(4)
          unit  uqs
        0   s1  1.0
        1   s2  1.0
    """
    first = crowdtruth_metrics(vectors)
    uqs = first.units["uqs"].to_numpy()
    cutoff = float(uqs.mean() - unit_sd * uqs.std())
    low_units = first.units.loc[first.units["uqs"] < cutoff, ["unit", "uqs"]].reset_index(drop=True)
    table = vectors_table(vectors)
    vector = None if vectors.open_ended else list(vectors.annotations)
    kept = table.loc[~table["unit"].isin(low_units["unit"])]
    if kept.empty or kept.groupby("unit")["worker"].nunique().max() < 2:
        raise PosthocInputError("filtering left no unit with two workers; lower unit_sd")
    second = crowdtruth_metrics(_rebuild(kept, vector, vectors.open_ended))
    low_workers = second.workers.loc[second.workers["wqs"] < worker_threshold, ["worker", "wqs"]]
    remaining = table.loc[~table["worker"].isin(low_workers["worker"])]
    sizes = remaining.groupby("unit")["worker"].transform("nunique")
    remaining = remaining.loc[sizes > 1]
    if remaining.empty:
        raise PosthocInputError(f"worker threshold {worker_threshold} removes every worker; lower it")
    final = crowdtruth_metrics(_rebuild(remaining, vector, vectors.open_ended))
    return FilterResult(
        result=final,
        dropped_units=low_units,
        dropped_workers=low_workers.reset_index(drop=True),
        unit_cutoff=cutoff,
        worker_threshold=float(worker_threshold),
    )


def _rebuild(table: JudgementTable, vector: list[str] | None, open_ended: bool) -> JudgementVectors:
    return build_vectors(table, annotation_vector=vector, open_ended=open_ended)


def _aligned(scores: pd.Series, reference: pd.Series, what: str) -> tuple[Floats, Bools]:
    joined = pd.concat([scores.rename("score"), reference.rename("reference")], axis=1, join="inner")
    if joined.empty:
        raise PosthocInputError(f"{what}: the scores and the reference share no unit")
    if joined["reference"].isna().any():
        missing = joined.index[joined["reference"].isna()][0]
        raise PosthocInputError(f"{what}: the reference has no label for unit {missing!r}")
    return joined["score"].to_numpy(dtype=float), joined["reference"].astype(bool).to_numpy()


def _counts(predicted: Bools, truth: Bools, weights: Floats) -> dict[str, float]:
    return {
        "tp": float(np.sum(weights * (predicted & truth))),
        "fp": float(np.sum(weights * (predicted & ~truth))),
        "fn": float(np.sum(weights * (~predicted & truth))),
        "tn": float(np.sum(weights * (~predicted & ~truth))),
    }


def _prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0  # = 2 p r / (p + r)
    return precision, recall, f1


def weighted_prf(predicted: pd.Series, reference: pd.Series, weights: pd.Series | None = None) -> dict[str, float]:
    """Precision, recall and F1 of boolean ``predicted`` against boolean ``reference`` (indexed by unit).

    With ``weights`` (e.g. :func:`clarity`), each unit's tp / fp / fn counts ``w_s`` instead of 1
    (seed 002 section 4); without, the usual unweighted values.

    Examples:
        Units weighted 1, 0.5 and 0.25: a true positive, a false positive and a false negative, so
        ``p' = 1 / 1.5``, ``r' = 1 / 1.25`` and ``F1' = 2 / (2 + 0.5 + 0.25)``.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import weighted_prf
        >>> units = ["s1", "s2", "s3"]
        >>> predicted = pd.Series([True, True, False], index=units)
        >>> reference = pd.Series([True, False, True], index=units)
        >>> result = weighted_prf(predicted, reference, pd.Series([1.0, 0.5, 0.25], index=units))
        >>> {key: round(result[key], 6) for key in ("tp", "fp", "fn", "precision", "recall", "f1")}
        {'tp': 1.0, 'fp': 0.5, 'fn': 0.25, 'precision': 0.666667, 'recall': 0.8, 'f1': 0.727273}
    """
    frame = pd.concat([predicted.rename("p"), reference.rename("r")], axis=1, join="inner")
    if frame.empty:
        raise PosthocInputError("weighted_prf: the predictions and the reference share no unit")
    w = np.ones(len(frame)) if weights is None else weights.reindex(frame.index).to_numpy(dtype=float)
    if np.isnan(w).any():
        raise PosthocInputError("weighted_prf: a unit has no weight")
    counts = _counts(frame["p"].astype(bool).to_numpy(), frame["r"].astype(bool).to_numpy(), w)
    precision, recall, f1 = _prf(counts["tp"], counts["fp"], counts["fn"])
    return {**counts, "precision": precision, "recall": recall, "f1": f1}


def threshold_sweep(
    scores: pd.Series,
    reference: pd.Series,
    *,
    thresholds: Floats | None = None,
    weights: pd.Series | None = None,
) -> pd.DataFrame:
    """F1 against ``reference`` when units with ``score >= threshold`` are positive, at each threshold.

    ``threshold, tp, fp, fn, tn, precision, recall, f1`` (+ ``weighted_precision, weighted_recall,
    weighted_f1`` with ``weights``).  Default thresholds 0.01, 0.02, ..., 1.00 (the tutorial's grid).

    Examples:
        Scores 0.9, 0.6, 0.3 against a reference true, false, true. At 0.5 the first two are positive: one tp, one
        fp, one fn, F1 ``2 / 4``; at 0.2 all three: two tp, one fp, F1 ``4 / 5``.

        >>> import numpy as np
        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import threshold_sweep
        >>> units = ["s1", "s2", "s3"]
        >>> scores, reference = pd.Series([0.9, 0.6, 0.3], index=units), pd.Series([True, False, True], index=units)
        >>> sweep = threshold_sweep(scores, reference, thresholds=np.array([0.5, 0.2]))
        >>> sweep[["threshold", "tp", "fp", "fn", "f1"]]
           threshold   tp   fp   fn   f1
        0        0.5  1.0  1.0  1.0  0.5
        1        0.2  2.0  1.0  0.0  0.8
    """
    values, truth = _aligned(scores, reference, "threshold sweep")
    grid = DEFAULT_THRESHOLDS if thresholds is None else np.asarray(thresholds, dtype=float)
    predicted = values[None, :] >= grid[:, None]
    t = truth[None, :]
    tp = (predicted & t).sum(axis=1).astype(float)
    fp = (predicted & ~t).sum(axis=1).astype(float)
    fn = (~predicted & t).sum(axis=1).astype(float)
    tn = (~predicted & ~t).sum(axis=1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
    sweep = pd.DataFrame(
        {"threshold": grid, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall, "f1": f1}
    )
    if weights is not None:
        joined = pd.concat([scores.rename("s"), reference.rename("r")], axis=1, join="inner")
        w = weights.reindex(joined.index).to_numpy(dtype=float)[None, :]
        wtp = (w * (predicted & t)).sum(axis=1)
        wfp = (w * (predicted & ~t)).sum(axis=1)
        wfn = (w * (~predicted & t)).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            wp = np.where(wtp + wfp > 0, wtp / (wtp + wfp), 0.0)
            wr = np.where(wtp + wfn > 0, wtp / (wtp + wfn), 0.0)
            sweep["weighted_precision"] = wp
            sweep["weighted_recall"] = wr
            sweep["weighted_f1"] = np.where(wtp > 0, 2 * wtp / (2 * wtp + wfp + wfn), 0.0)
    return sweep


def best_threshold(sweep: pd.DataFrame, *, column: str = "f1") -> pd.Series:
    """The sweep row with the highest ``column`` (the lowest threshold among ties).

    Examples:
        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import best_threshold
        >>> sweep = pd.DataFrame({"threshold": [0.2, 0.5, 0.8], "f1": [0.8, 0.8, 0.5]})
        >>> float(best_threshold(sweep)["threshold"])  # a tie: the lower threshold
        0.2
    """
    return sweep.iloc[int(np.argmax(sweep[column].to_numpy()))]


def majority_vote_f1(unweighted_scores: pd.Series, reference: pd.Series) -> dict[str, float]:
    """Majority vote against ``reference``: positive when at least half the workers chose the annotation.

    ``unweighted_scores`` is the share of workers (the unit-annotation score with all WQS = 1,
    ``uas_initial``).

    Examples:
        Shares 0.5, 0.4, 1.0 of the workers: the first and last are positive (half or more); against true, false,
        false that is one tp and one fp: precision 1/2, recall 1/1, F1 2/3.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import majority_vote_f1
        >>> units = ["s1", "s2", "s3"]
        >>> shares, reference = pd.Series([0.5, 0.4, 1.0], index=units), pd.Series([True, False, False], index=units)
        >>> result = majority_vote_f1(shares, reference)
        >>> result["precision"], result["recall"], round(result["f1"], 6)
        (0.5, 1.0, 0.666667)
    """
    values, truth = _aligned(unweighted_scores, reference, "majority vote")
    predicted = values >= 0.5
    counts = _counts(predicted, truth, np.ones(values.size))
    precision, recall, f1 = _prf(counts["tp"], counts["fp"], counts["fn"])
    return {**counts, "precision": precision, "recall": recall, "f1": f1}


def mcnemar_test(
    first: pd.Series, second: pd.Series, reference: pd.Series, *, exact: bool | None = None
) -> dict[str, float]:
    """McNemar's test: do two label sources err on different units against one reference?

    ``b`` counts units the first source gets right and the second wrong, ``c`` the reverse.
    ``exact`` (default: when ``b + c < 25``) uses the binomial test, else chi-square with
    continuity correction (statsmodels ``mcnemar``).

    Examples:
        The first source is right on all four units, the second wrong on three of them: ``b = 3``, ``c = 0``; the
        exact test's p-value is ``2 * 0.5^3 = 0.25``.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import mcnemar_test
        >>> units = ["s1", "s2", "s3", "s4"]
        >>> reference = pd.Series([True] * 4, index=units)
        >>> result = mcnemar_test(reference, pd.Series([False, False, False, True], index=units), reference)
        >>> result["b"], result["c"], result["pvalue"]
        (3.0, 0.0, 0.25)
    """
    from statsmodels.stats.contingency_tables import mcnemar

    frame = pd.concat([first.rename("a"), second.rename("b"), reference.rename("r")], axis=1, join="inner")
    if frame.empty:
        raise PosthocInputError("McNemar: the two sources and the reference share no unit")
    truth = frame["r"].astype(bool).to_numpy()
    right_a = frame["a"].astype(bool).to_numpy() == truth
    right_b = frame["b"].astype(bool).to_numpy() == truth
    table = np.array(
        [
            [np.sum(right_a & right_b), np.sum(right_a & ~right_b)],
            [np.sum(~right_a & right_b), np.sum(~right_a & ~right_b)],
        ]
    )
    discordant = int(table[0, 1] + table[1, 0])
    use_exact = discordant < 25 if exact is None else exact
    outcome = mcnemar(table, exact=use_exact, correction=True)
    return {
        "b": float(table[0, 1]),
        "c": float(table[1, 0]),
        "n": float(len(frame)),
        "statistic": float(outcome.statistic),
        "pvalue": float(outcome.pvalue),
        "exact": float(use_exact),
    }


def rescale_scores(scores: Floats, threshold: float) -> Floats:
    """Section 3.4's linear rescaling of scores in [0, 1] around ``threshold`` into training weights.

    Examples:
        Threshold 0.5: 1 and 0.5 map to the ends of ``[0.85, 1]``; 0.25 is halfway to the threshold, so
        ``-1 + 0.15 * 0.5``; 0 maps to -1.

        >>> import numpy as np
        >>> from posthoc.crowdtruth.evaluation import rescale_scores
        >>> rescale_scores(np.array([1.0, 0.5, 0.25, 0.0]), 0.5).round(6).tolist()
        [1.0, 0.85, -0.925, -1.0]
    """
    if not 0.0 <= threshold <= 1.0:
        raise PosthocInputError(f"threshold {threshold} must be within [0, 1]")
    s = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    low_p, high_p = POSITIVE_RANGE
    low_n, high_n = NEGATIVE_RANGE
    positive = s >= threshold
    span_p = 1.0 - threshold
    pos = low_p + (high_p - low_p) * (np.divide(s - threshold, span_p) if span_p > 0 else np.ones_like(s))
    neg = low_n + (high_n - low_n) * (s / threshold if threshold > 0 else np.zeros_like(s))
    return np.where(positive, pos, neg)


def weighted_training_labels(
    unit_annotations: pd.DataFrame, *, threshold: float, score_column: str = "uas"
) -> pd.DataFrame:
    """``unit, annotation, score, label, weight`` for classifier training (seed 002 section 3.4).

    ``label`` is 1 when ``score >= threshold`` else -1; ``weight`` is the rescaled score (positive
    in [0.85, 1], negative in [-1, -0.85)).

    Examples:
        Threshold 0.5: 0.75 is a positive example weighted ``0.85 + 0.15 * 0.25 / 0.5``; 0.25 a negative one weighted
        ``-1 + 0.15 * 0.25 / 0.5``.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.evaluation import weighted_training_labels
        >>> scores = pd.DataFrame({"unit": ["s1", "s1"], "annotation": ["cause", "treat"], "uas": [0.75, 0.25]})
        >>> weighted_training_labels(scores, threshold=0.5).round(6)
          unit annotation  score  label  weight
        0   s1      cause   0.75      1   0.925
        1   s1      treat   0.25     -1  -0.925
    """
    scores = unit_annotations[score_column].to_numpy(dtype=float)
    weights = rescale_scores(scores, threshold)
    return pd.DataFrame(
        {
            "unit": unit_annotations["unit"].to_numpy(),
            "annotation": unit_annotations["annotation"].to_numpy(),
            "score": scores,
            "label": np.where(scores >= threshold, 1, -1),
            "weight": weights,
        }
    )
