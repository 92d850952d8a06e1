"""The lag-1 model of seed 004 section 2: Y(i,t) = b0 + b1 Y(i,t-1) + b2 gold + b3 bias(i) (+ noise).

Logistic regression for binary labels, linear regression for continuous ones (seed 004 section 2).
``bias(i)`` is the worker-bias control of section 3.1: the worker's mean label over all their *other* items
("we use scores by the worker excluding the current score, to avoid giving the model any information about
the current instance"). b1 > 0 is assimilation / priming, b1 < 0 sequential contrast or the gambler's fallacy.

Why this control, and why on the labels as given (not on per-worker z-scores)
    Under no order effect the leave-one-out mean of a worker's other labels is, for Gaussian scores,
    sufficient for the worker's offset, so the previous label adds nothing once it is in the model: b1 is
    estimated without the O(1/T) bias of worker fixed effects or of per-worker centring (Nickell 1981: with
    T items a worker, the within estimator of a lagged label is biased by about -(1 + b1) / (T - 1)).
    Per-worker z-scores (section 3.3) are that centring: they sum to zero per worker, so their leave-one-out
    mean is exactly ``-label / (n - 1)``, the dependent variable itself. The bias is therefore always
    computed on the labels as given, before any scaling, and continuous labels are *not* standardised by
    default (``standardise=True`` reproduces section 3.3 and carries the centring bias). Measured by the
    validity bench (bench/results/validity_bench.txt): on defaults, workers with their own offset and scale,
    b1 in {-0.3, 0, +0.4}, mean bias under 0.01 and coverage near 95%.

Standard errors: binary and continuous fits use the leave-one-worker-out jackknife over clusters (CV3,
MacKinnon, Nielsen and Webb 2023; :mod:`posthoc.sequence.fitting`) with t(G - 1) intervals, because the
sandwich with 20-40 workers of unequal scale under-covers (measured 0.91-0.92 against 0.95); the validity
bench at 1,000 studies per setting measures 0.945-0.950 (binary) and 0.938-0.951 (continuous).
A logistic fit that does not converge, or whose coefficients run away (|coefficient| > 10 on the logit scale,
perfect or quasi-perfect separation), gets a ``note`` saying so; its numbers are not interpretable.

Worker subsets (section 3.1): ``all``; ``moderate``, without workers who gave one label to everything;
``good``, accuracy against gold at least ``good_threshold`` (binary; 60% in the paper) or correlation with gold
above ``good_correlation`` (continuous; 0.5 in section 3.2); ``bad``, the rest. Position tertiles (section 3.3,
Table 4): the first, second and third third of each sequence.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm

from posthoc.errors import PosthocInputError
from posthoc.sequence.fitting import fit_linear, fit_logistic
from posthoc.sequence.table import Sequences, validate_sequence_table

SUBSETS = ("all", "moderate", "good", "bad")


@dataclass(frozen=True)
class LagFit:
    """One fitted lag-1 model. ``b1_low``/``b1_high`` bound the ``confidence`` interval of b1."""

    kind: str
    b0: float
    b1: float
    b2: float
    b3: float
    b1_se: float
    b1_low: float
    b1_high: float
    b1_p: float
    n: int
    n_workers: int
    note: str = ""

    def as_row(self) -> dict[str, object]:
        """The fit as a flat dict (one row of a results table)."""
        return asdict(self)


def is_binary(labels: pd.Series) -> bool:
    """True when every label is 0 or 1.

    Examples:
        >>> import pandas as pd
        >>> from posthoc.sequence.lag_model import is_binary
        >>> is_binary(pd.Series([0, 1, None, 1])), is_binary(pd.Series([0, 0.5, 1])), is_binary(pd.Series([None]))
        (True, False, False)
    """
    values = labels.dropna().unique()
    return len(values) > 0 and set(np.asarray(values, dtype=float).tolist()) <= {0.0, 1.0}


def standardise_labels(table: Sequences) -> Sequences:
    """Each worker's labels as z-scores (seed 004 section 3.3); workers with one distinct value are dropped.

    Examples:
        w1's labels ``2, 4`` (mean 3, sample standard deviation √2) become ``∓1/√2``; w2 gave one value and goes.

        >>> import pandas as pd
        >>> from posthoc.sequence.lag_model import standardise_labels
        >>> table = pd.DataFrame({"worker": ["w1", "w1", "w2", "w2"], "label": [2.0, 4.0, 3.0, 3.0]})
        >>> standardise_labels(table)["label"].round(6).tolist()
        [-0.707107, 0.707107]
    """
    grouped = table.groupby("worker")["label"]
    mean = grouped.transform("mean")
    std = grouped.transform("std", ddof=1)
    keep = std > 0
    return table[keep].assign(label=(table["label"] - mean)[keep] / std[keep])


def lagged_design(table: Sequences, *, worker_bias: bool = True, standardise: bool = False) -> pd.DataFrame:
    """Rows that have a previous item in the same worker's sequence, with the regressors of the model.

    Adds ``previous`` (the label of the previous position), ``constant_sequence`` (the worker gave one label to
    every item of this sequence), ``bias`` (the worker's mean label over their other judgements, computed on
    the labels as given), ``tertile`` (0, 1, 2: the third of the sequence the item sits in). The first item of
    every sequence has no previous label and is dropped. ``standardise`` z-scores each worker's labels (and so
    ``previous``) *after* the bias is computed (see the module docstring).

    Examples:
        One worker labels ``1, 0, 1``: the first item has no previous label and goes; the bias of position 1 is the
        mean of the other labels ``(1 + 1) / 2``, of position 2 ``(1 + 0) / 2``; ranks 1 and 2 of 3 fall in
        tertiles ``3 * 1 // 3 = 1`` and ``3 * 2 // 3 = 2``.

        >>> import pandas as pd
        >>> from posthoc.sequence import lagged_design
        >>> table = pd.DataFrame({"worker": "w1", "sequence": "h1", "item": ["a", "b", "c"], "position": [0, 1, 2],
        ...                       "label": [1, 0, 1], "gold": None})
        >>> lagged_design(table)[["position", "label", "previous", "bias", "tertile"]]
           position  label  previous  bias  tertile
        0         1    0.0       1.0   1.0        1
        1         2    1.0       0.0   0.5        2
    """
    data = validate_sequence_table(table)
    totals = data.groupby("worker")["label"].transform("sum")
    counts = data.groupby("worker")["label"].transform("size")
    others = counts - 1
    bias = np.where(others > 0, (totals - data["label"]) / others.where(others > 0, 1), np.nan)
    data = data.assign(bias=bias)
    if standardise:
        data = standardise_labels(data)
    keys = ["worker", "sequence"]
    data["previous"] = data.groupby(keys)["label"].shift(1)
    data["constant_sequence"] = data.groupby(keys)["label"].transform("nunique") == 1
    rank = data.groupby(keys).cumcount()
    length = data.groupby(keys)["position"].transform("size")
    data["tertile"] = np.minimum((3 * rank) // length, 2).astype(int)
    data = data.dropna(subset=["previous"])
    if worker_bias:
        data = data.dropna(subset=["bias"])
    return data.reset_index(drop=True)


def _nan_fit(kind: str, n: int, n_workers: int, note: str) -> LagFit:
    nan = math.nan
    return LagFit(kind, nan, nan, nan, nan, nan, nan, nan, nan, n, n_workers, note)


def fit_lag1(table: Sequences, *, kind: str = "auto", worker_bias: bool = True, use_gold: bool = True,
             standardise: bool = False, confidence: float = 0.95, design: pd.DataFrame | None = None) -> LagFit:
    """Fit the lag-1 model on a sequence table (columns in :data:`~posthoc.sequence.table.SEQUENCE_COLUMNS`).

    Options: ``kind`` ``binary`` (logit), ``continuous`` (OLS) or ``auto`` (binary when every label is 0/1);
    ``worker_bias`` adds the leave-one-out worker mean label, computed on the labels as given; ``use_gold`` adds
    gold (dropped automatically when gold is empty); ``standardise`` z-scores continuous labels per worker
    after the bias is computed (section 3.3; off by default, see the module docstring for why).
    ``design`` passes rows already built by :func:`lagged_design` (for subsets and tertiles).
    Standard errors: the leave-one-worker-out jackknife (CV3) with t(G - 1), binary and continuous.
    A model that cannot be fitted (too few rows or workers, a singular design) gives NaN coefficients and a
    ``note`` saying why, never an exception; separation is noted beside the coefficients.

    Examples:
        Three workers alternate ``0.2, 0.8, 0.2, ...`` over 13 items, so every label is ``1 - previous``: the
        linear fit (no bias control, no gold) is exactly ``b0 = 1``, ``b1 = -1`` on ``3 x 12`` rows.

        >>> import pandas as pd
        >>> from posthoc.sequence import fit_lag1
        >>> table = pd.DataFrame(
        ...     [(w, w, f"i{p}", p, [0.2, 0.8][(p + start) % 2], None)
        ...      for w, start in [("w1", 0), ("w2", 1), ("w3", 0)] for p in range(13)],
        ...     columns=["worker", "sequence", "item", "position", "label", "gold"])
        >>> fit = fit_lag1(table, worker_bias=False)
        >>> fit.kind, round(fit.b0, 6), round(fit.b1, 6), fit.n, fit.n_workers
        ('continuous', 1.0, -1.0, 36, 3)
        >>> fit.note
        'no gold: model without the gold control'
    """
    if kind not in ("auto", "binary", "continuous"):
        raise PosthocInputError(f"kind must be auto, binary or continuous, not {kind!r}")
    if design is None:
        source = validate_sequence_table(table)
        if kind == "auto":
            kind = "binary" if is_binary(source["label"]) else "continuous"
        design = lagged_design(source, worker_bias=worker_bias, standardise=kind == "continuous" and standardise)
    elif kind == "auto":
        kind = "binary" if is_binary(design["label"]) else "continuous"
    if design.empty:
        return _nan_fit(kind if kind != "auto" else "binary", 0, 0, "too few judgements or workers to fit")
    if kind == "binary" and not is_binary(design["label"]):
        raise PosthocInputError("kind='binary' needs labels that are all 0 or 1")
    columns = ["previous"]
    gold_used = use_gold and design["gold"].notna().any()
    if gold_used:
        design = design.dropna(subset=["gold"])
        columns.append("gold")
    if worker_bias:
        columns.append("bias")
    n, n_workers = len(design), int(design["worker"].nunique()) if len(design) else 0
    if n < len(columns) + 5 or n_workers < 2:
        return _nan_fit(kind, n, n_workers, "too few judgements or workers to fit")
    exog = sm.add_constant(design[columns].to_numpy(dtype=float), has_constant="add")
    endog = design["label"].to_numpy(dtype=float)
    groups = pd.factorize(design["worker"])[0]
    if np.linalg.matrix_rank(exog) < exog.shape[1]:
        return _nan_fit(kind, n, n_workers, "model could not be fitted: a regressor is constant or collinear "
                        f"({', '.join(columns)})")
    fitter = fit_logistic if kind == "binary" else fit_linear
    try:
        fitted = fitter(endog, exog, groups, confidence=confidence)
    except (np.linalg.LinAlgError, ValueError) as exc:
        return _nan_fit(kind, n, n_workers, f"model could not be fitted: {exc}")
    named = dict(zip(["const", *columns], fitted.params, strict=True))
    notes = [] if gold_used else ["no gold: model without the gold control"]
    if fitted.note:
        notes.append(fitted.note)
    return LagFit(kind=kind, b0=float(named["const"]), b1=float(named["previous"]),
                  b2=float(named.get("gold", math.nan)), b3=float(named.get("bias", math.nan)),
                  b1_se=float(fitted.se[1]), b1_low=float(fitted.low[1]), b1_high=float(fitted.high[1]),
                  b1_p=float(fitted.p[1]), n=n, n_workers=n_workers, note="; ".join(notes))


def worker_subsets(table: Sequences, *, good_threshold: float = 0.6, good_correlation: float = 0.5,
                   kind: str = "auto") -> dict[str, list[str]]:
    """The workers of each subset of :data:`SUBSETS` (section 3.1; section 3.2 for continuous labels).

    ``moderate`` lists workers who varied their label somewhere; :func:`subset_rows` further drops every
    single sequence (HIT) in which a worker gave one label to all items, the paper's opportunistic workers.

    Examples:
        Binary labels with gold: w1 agrees with gold on 3 of 4 items (75%, good at the paper's 60%), w2 on 1 of 4
        (bad), w3 gave 1 everywhere (not moderate; 2 of 4 right, bad).

        >>> import pandas as pd
        >>> from posthoc.sequence.lag_model import worker_subsets
        >>> gold = [1, 0, 1, 0]
        >>> labels = {"w1": [1, 0, 1, 1], "w2": [0, 1, 0, 0], "w3": [1, 1, 1, 1]}
        >>> rows = [(w, w, f"i{p}", p, label, gold[p]) for w, row in labels.items() for p, label in enumerate(row)]
        >>> table = pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
        >>> worker_subsets(table)
        {'all': ['w1', 'w2', 'w3'], 'moderate': ['w1', 'w2'], 'good': ['w1'], 'bad': ['w2', 'w3']}
    """
    data = validate_sequence_table(table)
    binary = is_binary(data["label"]) if kind == "auto" else kind == "binary"
    workers = sorted(data["worker"].unique())
    distinct = data.groupby("worker")["label"].nunique()
    moderate = [w for w in workers if distinct[w] > 1]
    with_gold = data.dropna(subset=["gold"])
    if binary:
        quality = (with_gold["label"] == with_gold["gold"].round()).groupby(with_gold["worker"]).mean()
        good = [w for w in workers if quality.get(w, math.nan) >= good_threshold]
    else:
        quality = with_gold.groupby("worker")[["label", "gold"]].apply(
            lambda g: g["label"].corr(g["gold"]) if len(g) > 2 else math.nan)
        good = [w for w in workers if quality.get(w, math.nan) > good_correlation]
    bad = [w for w in workers if w in quality.index and w not in set(good)]
    return {"all": workers, "moderate": moderate, "good": good, "bad": bad}


def subset_rows(design: pd.DataFrame, subsets: dict[str, list[str]], name: str) -> pd.DataFrame:
    """The rows of a lagged design in subset ``name`` (``moderate`` also drops constant sequences).

    Examples:
        ``moderate`` also drops a sequence in which its worker gave one label to every item.

        >>> import pandas as pd
        >>> from posthoc.sequence.lag_model import subset_rows
        >>> design = pd.DataFrame({"worker": ["w1", "w1", "w2"], "constant_sequence": [False, True, False]})
        >>> subsets = {"all": ["w1", "w2"], "moderate": ["w1"], "good": [], "bad": []}
        >>> len(subset_rows(design, subsets, "all")), len(subset_rows(design, subsets, "moderate"))
        (3, 1)
    """
    rows = design[design["worker"].isin(set(subsets[name]))]
    if name == "moderate":
        rows = rows[~rows["constant_sequence"]]
    return rows


def _design_for(table: Sequences, kind: str, *, worker_bias: bool, standardise: bool) -> tuple[str, pd.DataFrame]:
    data = validate_sequence_table(table)
    kind = ("binary" if is_binary(data["label"]) else "continuous") if kind == "auto" else kind
    return kind, lagged_design(data, worker_bias=worker_bias, standardise=kind == "continuous" and standardise)


def lag1_by_subset(table: Sequences, *, kind: str = "auto", worker_bias: bool = True,
                   standardise: bool = False, good_threshold: float = 0.6, good_correlation: float = 0.5,
                   confidence: float = 0.95) -> pd.DataFrame:
    """b1 per worker subset (seed 004 Tables 1-3).

    Columns: ``subset, kind, b0, b1, b2, b3, b1_se, b1_low, b1_high, b1_p, n, n_workers, note``.

    Examples:
        The table of :func:`fit_lag1`'s example: every worker varied their label (``moderate`` = ``all``); without
        gold no worker can be called good or bad, so those subsets have no rows.

        >>> import pandas as pd
        >>> from posthoc.sequence import lag1_by_subset
        >>> table = pd.DataFrame(
        ...     [(w, w, f"i{p}", p, [0.2, 0.8][(p + start) % 2], None)
        ...      for w, start in [("w1", 0), ("w2", 1), ("w3", 0)] for p in range(13)],
        ...     columns=["worker", "sequence", "item", "position", "label", "gold"])
        >>> lag1_by_subset(table, worker_bias=False)[["subset", "b0", "b1", "n", "n_workers"]].round(6)
             subset   b0   b1   n  n_workers
        0       all  1.0 -1.0  36          3
        1  moderate  1.0 -1.0  36          3
        2      good  NaN  NaN   0          0
        3       bad  NaN  NaN   0          0
    """
    subsets = worker_subsets(table, good_threshold=good_threshold, good_correlation=good_correlation, kind=kind)
    kind, design = _design_for(table, kind, worker_bias=worker_bias, standardise=standardise)
    rows = []
    for name in SUBSETS:
        part = subset_rows(design, subsets, name)
        fit = fit_lag1(part, kind=kind, worker_bias=worker_bias, confidence=confidence, design=part)
        rows.append({"subset": name, **fit.as_row()})
    return pd.DataFrame(rows)


def lag1_by_tertile(table: Sequences, *, kind: str = "auto", worker_bias: bool = True,
                    standardise: bool = False, good_threshold: float = 0.6, good_correlation: float = 0.5,
                    confidence: float = 0.95) -> pd.DataFrame:
    """b1 per worker subset and position tertile (seed 004 Table 4).

    Columns: ``subset, tertile`` (1, 2, 3) and those of :func:`lag1_by_subset`.

    Examples:
        The table of :func:`fit_lag1`'s example: of the 13 items of a sequence, ranks 1-4, 5-8 and 9-12 fall in
        tertiles 1, 2 and 3 (``min(3 rank // 13, 2)``), 4 rows a worker each, and ``b1 = -1`` in each.

        >>> import pandas as pd
        >>> from posthoc.sequence import lag1_by_tertile
        >>> table = pd.DataFrame(
        ...     [(w, w, f"i{p}", p, [0.2, 0.8][(p + start) % 2], None)
        ...      for w, start in [("w1", 0), ("w2", 1), ("w3", 0)] for p in range(13)],
        ...     columns=["worker", "sequence", "item", "position", "label", "gold"])
        >>> fits = lag1_by_tertile(table, worker_bias=False)
        >>> fits.loc[fits["subset"] == "all", ["tertile", "b1", "n", "n_workers"]].round(6)
           tertile   b1   n  n_workers
        0        1 -1.0  12          3
        1        2 -1.0  12          3
        2        3 -1.0  12          3
    """
    subsets = worker_subsets(table, good_threshold=good_threshold, good_correlation=good_correlation, kind=kind)
    kind, design = _design_for(table, kind, worker_bias=worker_bias, standardise=standardise)
    rows = []
    for name in SUBSETS:
        for tertile in range(3):
            part = subset_rows(design, subsets, name)
            part = part[part["tertile"] == tertile]
            fit = fit_lag1(part, kind=kind, worker_bias=worker_bias, confidence=confidence, design=part)
            rows.append({"subset": name, "tertile": tertile + 1, **fit.as_row()})
    return pd.DataFrame(rows)
