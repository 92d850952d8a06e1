"""What a study found, per dataset, for the report's first screen (paper 000 RQ1, sections 3.1-3.2 and 4).

:func:`study_findings` is a pure function of the scored tables; :func:`findings_section` renders it. One row a
dataset x finding (columns :data:`FINDING_COLUMNS`):

``best_strict``
    the system (the ground truth, the reference, left out) with the highest strict micro pre-annotation F1
    against the ground truth (``preannotation``, section 3.1); ``value`` its F1 (the table gives F1 no interval);
    ``tied_with`` the systems with the same F1.
``best_posthoc``
    the system (ground truth left out) with the highest posthoc F1 (``rates``, section 3.2), ``value, low, high``
    its F1 and interval; ``tied_with`` every other system whose paired difference of posthoc F1 with it
    (``comparisons``, the same resampled documents) has a 95% interval that holds 0: the data do not order them.
``gt_verification_gap``
    the ground truth's verification rate minus that of the system with the highest one (``system``; ``versus``
    is the ground truth): ``value, low, high`` the paired difference and its interval from ``comparisons``
    (negative: the ground truth was verified less often, paper 000's "EL models sometimes perform better than
    ground truth annotators").
``strict_errors_verified``
    the share of strict errors (each system against the ground truth) that the annotators verified as right,
    with its interval: given by the optional ``strict_errors_verified`` table (columns ``dataset, value, low,
    high`` and optionally ``n``; one row a dataset, every system pooled), computed by the error categories.
    Without that table, or without a row for the dataset, the line is left out.

A finding whose inputs are missing (one system only, no comparison, no strict evaluation) is left out.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from posthoc.html import Section, esc, table_html
from posthoc.metrics.verified_categories import strict_errors_verified
from posthoc.scores import Scores
from posthoc.tables import GT_SYSTEM

FINDING_COLUMNS: Final = ("dataset", "finding", "system", "versus", "value", "low", "high", "n", "tied_with")
FINDINGS: Final = ("best_strict", "best_posthoc", "gt_verification_gap", "strict_errors_verified")
_NAN = float("nan")


def _leader(values: dict[str, float]) -> str | None:
    """The system with the highest value (ties: the first in name order); None when every value is NaN."""
    known = {name: value for name, value in sorted(values.items()) if not np.isnan(value)}
    return max(known, key=lambda name: known[name]) if known else None


def _pair(comparisons: pd.DataFrame, dataset: str, metric: str, first: str, second: str
          ) -> tuple[float, float, float] | None:
    """``first - second`` of ``metric`` with its interval, from whichever orientation ``comparisons`` holds."""
    if comparisons.empty:
        return None
    rows = comparisons.loc[(comparisons["dataset"].astype(str) == dataset) & (comparisons["metric"] == metric)]
    for a, b, sign in ((first, second, 1.0), (second, first, -1.0)):
        hit = rows.loc[(rows["system_a"].astype(str) == a) & (rows["system_b"].astype(str) == b)]
        if len(hit):
            row = hit.iloc[0]
            low, high = sorted((sign * float(row["ci_low"]), sign * float(row["ci_high"])))
            return sign * float(row["difference"]), low, high
    return None


def _rate_rows(rates: pd.DataFrame, dataset: str, metric: str, gt_system: str) -> pd.DataFrame:
    if rates.empty:
        return rates
    return rates.loc[(rates["dataset"].astype(str) == dataset) & (rates["metric"] == metric)
                     & (rates["system"].astype(str) != gt_system)]


def _best_strict(preannotation: pd.DataFrame, dataset: str, gt_system: str) -> tuple[object, ...] | None:
    if preannotation.empty:
        return None
    rows = preannotation.loc[(preannotation["dataset"].astype(str) == dataset)
                             & (preannotation["matching"] == "strict") & (preannotation["averaging"] == "micro")
                             & (preannotation["system"].astype(str) != gt_system)]
    f1 = dict(zip(rows["system"].astype(str), rows["f1"].astype(float), strict=True))
    best = _leader(f1)
    if best is None:
        return None
    tied = [name for name, value in sorted(f1.items()) if name != best and value == f1[best]]
    return dataset, "best_strict", best, "", f1[best], _NAN, _NAN, _NAN, ",".join(tied)


def _best_posthoc(rates: pd.DataFrame, comparisons: pd.DataFrame, dataset: str,
                  gt_system: str) -> tuple[object, ...] | None:
    rows = _rate_rows(rates, dataset, "posthoc_f1", gt_system)
    f1 = dict(zip(rows["system"].astype(str), rows["value"].astype(float), strict=True)) if len(rows) else {}
    best = _leader(f1)
    if best is None:
        return None
    tied = []
    for other in sorted(f1):
        pair = _pair(comparisons, dataset, "posthoc_f1", best, other) if other != best else None
        if pair is not None and pair[1] <= 0.0 <= pair[2]:
            tied.append(other)
    mine = rows.loc[rows["system"].astype(str) == best].iloc[0]
    return (dataset, "best_posthoc", best, "", float(mine["value"]), float(mine["low"]), float(mine["high"]),
            float(mine["n"]) if "n" in rows.columns else _NAN, ",".join(tied))


def _gt_gap(rates: pd.DataFrame, comparisons: pd.DataFrame, dataset: str,
            gt_system: str) -> tuple[object, ...] | None:
    rows = _rate_rows(rates, dataset, "verification_rate", gt_system)
    rate = dict(zip(rows["system"].astype(str), rows["value"].astype(float), strict=True)) if len(rows) else {}
    best = _leader(rate)
    pair = _pair(comparisons, dataset, "verification_rate", gt_system, best) if best is not None else None
    if pair is None:
        return None
    return dataset, "gt_verification_gap", best, gt_system, *pair, _NAN, ""


def _verified_errors(table: pd.DataFrame | None, dataset: str) -> tuple[object, ...] | None:
    if table is None or table.empty:
        return None
    rows = table.loc[table["dataset"].astype(str) == dataset]
    if rows.empty:
        return None
    row = rows.iloc[0]
    n = float(row["n"]) if "n" in rows.columns else _NAN
    return (dataset, "strict_errors_verified", "", "", float(row["value"]), float(row["low"]), float(row["high"]),
            n, "")


def study_findings(rates: pd.DataFrame, preannotation: pd.DataFrame, comparisons: pd.DataFrame, *,
                   strict_errors_verified: pd.DataFrame | None = None, gt_system: str = GT_SYSTEM) -> pd.DataFrame:
    """The findings of every dataset (module docstring): columns :data:`FINDING_COLUMNS`, datasets in name order,
    findings in :data:`FINDINGS` order.

    Examples:
        Two systems of one dataset: A leads strict, B posthoc, but the paired interval of their posthoc F1
        difference holds 0 (tied); the ground truth's verification rate is 0.10 below B's, the higher.

        >>> import pandas as pd
        >>> from posthoc.report.findings import study_findings
        >>> rates = pd.DataFrame([("d", s, m, v, v - 0.05, v + 0.05, 40) for s, f1, vr in
        ...     (("GT", 0.7, 0.80), ("A", 0.60, 0.85), ("B", 0.65, 0.90))
        ...     for m, v in (("posthoc_f1", f1), ("verification_rate", vr))],
        ...     columns=["dataset", "system", "metric", "value", "low", "high", "n"])
        >>> strict = pd.DataFrame([("d", "A", "strict", "micro", 0.5), ("d", "B", "strict", "micro", 0.4)],
        ...     columns=["dataset", "system", "matching", "averaging", "f1"])
        >>> pairs = pd.DataFrame([("d", "A", "B", "posthoc_f1", -0.05, -0.12, 0.02),
        ...     ("d", "GT", "B", "verification_rate", -0.10, -0.16, -0.04)],
        ...     columns=["dataset", "system_a", "system_b", "metric", "difference", "ci_low", "ci_high"])
        >>> study_findings(rates, strict, pairs)[["finding", "system", "versus", "value", "low", "tied_with"]]
                       finding system versus  value   low tied_with
        0          best_strict      A          0.50   NaN
        1         best_posthoc      B          0.65  0.60         A
        2  gt_verification_gap      B     GT  -0.10 -0.16
    """
    datasets = sorted({str(d) for d in rates["dataset"]}) if len(rates) else []
    if len(preannotation):
        datasets = sorted({*datasets, *(str(d) for d in preannotation["dataset"])})
    records = []
    for dataset in datasets:
        found = (_best_strict(preannotation, dataset, gt_system),
                 _best_posthoc(rates, comparisons, dataset, gt_system),
                 _gt_gap(rates, comparisons, dataset, gt_system),
                 _verified_errors(strict_errors_verified, dataset))
        records += [row for row in found if row is not None]
    return pd.DataFrame.from_records(records, columns=list(FINDING_COLUMNS)).astype(
        {"dataset": "str", "finding": "str", "system": "str", "versus": "str", "value": "float64", "low": "float64",
         "high": "float64", "n": "float64", "tied_with": "str"})


def _interval(row: pd.Series) -> str:
    return "" if np.isnan(row["low"]) else f" [{row['low']:.3f}, {row['high']:.3f}]"


def finding_sentence(row: pd.Series) -> str:
    """One finding in words, with its figure and interval (plain text; escape it before HTML).

    Examples:
        >>> import pandas as pd
        >>> from posthoc.report.findings import finding_sentence
        >>> finding_sentence(pd.Series({"finding": "best_posthoc", "system": "B", "versus": "", "value": 0.65,
        ...                             "low": 0.6, "high": 0.7, "n": 40.0, "tied_with": "A"}))
        'best posthoc (F1): tied, B (0.650 [0.600, 0.700]) with A (the paired interval of the difference holds 0)'
    """
    kind, system, tied = str(row["finding"]), str(row["system"]), str(row["tied_with"])
    figure = f"{row['value']:.3f}{_interval(row)}"
    if kind in ("best_strict", "best_posthoc"):
        label = "best strict (F1 against the ground truth)" if kind == "best_strict" else "best posthoc (F1)"
        if not tied:
            return f"{label}: {system} ({figure})"
        reason = "the same F1" if kind == "best_strict" else "the paired interval of the difference holds 0"
        return f"{label}: tied, {system} ({figure}) with {tied.replace(',', ', ')} ({reason})"
    if kind == "gt_verification_gap":
        verdict = ("not distinguishable, the interval holds 0" if row["low"] <= 0.0 <= row["high"]
                   else "below" if row["value"] < 0 else "above")
        return (f"the ground truth's verification rate minus {system}'s (the highest of the systems): "
                f"{row['value']:+.3f}{_interval(row)} ({verdict})")
    count = "" if np.isnan(row["n"]) else f" of {int(row['n'])}"
    return f"strict errors the annotators verified as right: {figure}{count}"


def _verified_errors_of(scores: Scores, *, gt_system: str) -> pd.DataFrame | None:
    """The pooled share of strict errors verified as right, from the scores' per-annotation categories, with the
    score's own resampling settings (:func:`posthoc.metrics.verified_categories.strict_errors_verified`)."""
    if scores.error_categories.empty:
        return None
    settings = {key: scores.summary[key] for key in ("n_resamples", "seed", "confidence", "interval")
                if key in scores.summary}
    return strict_errors_verified(scores.error_categories, gt_system=gt_system, **settings)


def findings_section(scores: Scores, *, strict_errors_verified: pd.DataFrame | None = None,
                     gt_system: str = GT_SYSTEM) -> Section:
    """The report's first section: each dataset's findings as sentences, then as a table (escaped)."""
    if strict_errors_verified is None:
        strict_errors_verified = _verified_errors_of(scores, gt_system=gt_system)
    findings = study_findings(scores.rates, scores.preannotation, scores.comparisons,
                              strict_errors_verified=strict_errors_verified, gt_system=gt_system)
    if findings.empty:
        return Section("What was found", "<p>Nothing to compare: no dataset has a scored system.</p>",
                       anchor="findings")
    items = []
    for dataset, rows in findings.groupby("dataset", sort=True):
        sentences = "; ".join(finding_sentence(row) for _, row in rows.iterrows())
        items.append(f"<li><strong>{esc(dataset)}</strong>: {esc(sentences)}.</li>")
    note = ("<p>Best: the highest point value among the systems (the ground truth left out); tied: a paired "
            "bootstrap interval of the difference with another system holds 0. Intervals: 95%, over documents, "
            "as in the tables below.</p>")
    return Section("What was found", f"<ul>{''.join(items)}</ul>{note}"
                   + table_html(findings, caption="Findings per dataset"), anchor="findings")
