"""Control tasks: per-worker pass rates and the exclusion of failing workers (seed 000 section 2.1).

"Each annotator is assigned to 20 tasks including one control task with three control annotations.
We only accept and collect annotations from workers that passed the control task." Control rows of
the judgements table have ``is_control`` True and the right answer in ``expected_outcome``
(verify / edit / remove). A control annotation is passed when ``outcome == expected_outcome``
(for an expected edit, any new link passes). A worker's ``pass_rate`` is passed / judged control
annotations; the worker fails when ``pass_rate < pass_threshold`` (default 1.0: every control
annotation right, the paper's rule). Workers without control rows have ``pass_rate`` NaN and are
never excluded. Control rows are never counted in any metric.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.metrics.inputs import is_control
from posthoc.tables import OUTCOMES, Judgements, require_columns

CONTROL_COLUMNS = ["worker", "n_control", "n_passed", "pass_rate", "excluded"]


def control_results(judgements: Judgements, *, pass_threshold: float = 1.0, exclude: bool = True) -> pd.DataFrame:
    """Per-worker control results: ``worker, n_control, n_passed, pass_rate, excluded`` (seed 000 section 2.1).

    Reads ``worker, outcome, is_control, expected_outcome``. One row per worker of the table
    (sorted); ``excluded`` is True for failing workers when ``exclude`` (the metrics then drop
    all their judgements).

    Examples:
        w1 got both control annotations right (pass rate 2/2), w2 one of two (1/2, excluded under the paper's
        rule); w3 judged no control.

        >>> import pandas as pd
        >>> from posthoc.metrics import control_results
        >>> judgements = pd.DataFrame({
        ...     "worker": ["w1", "w1", "w2", "w2", "w3"],
        ...     "outcome": ["verify", "remove", "verify", "verify", "verify"],
        ...     "is_control": [True, True, True, True, False],
        ...     "expected_outcome": ["verify", "remove", "verify", "remove", None]})
        >>> control_results(judgements)
          worker  n_control  n_passed  pass_rate  excluded
        0     w1          2         2        1.0     False
        1     w2          2         1        0.5      True
        2     w3          0         0        NaN     False
        >>> control_results(judgements, pass_threshold=0.5)["excluded"].tolist()
        [False, False, False]
    """
    require_columns(judgements, ["worker", "outcome"], table="judgements")
    if not 0 <= pass_threshold <= 1:
        raise PosthocInputError(f"control_pass_threshold must be between 0 and 1, not {pass_threshold}")
    control = is_control(judgements)
    workers = pd.Series(judgements["worker"].astype(str).unique()).sort_values(ignore_index=True)
    rows = judgements.loc[control]
    if len(rows):
        require_columns(judgements, ["expected_outcome"], table="judgements")
        expected = rows["expected_outcome"]
        bad = ~expected.isin(OUTCOMES)
        if bad.any():
            raise PosthocInputError(
                "judgements table: column expected_outcome of control rows must be verify, edit or remove; "
                f"bad values {sorted({repr(v) for v in expected[bad]})[:5]} in {int(bad.sum())} row(s)"
            )
    passed = (rows["outcome"] == rows["expected_outcome"]) if len(rows) else pd.Series(dtype=bool)
    stats = (
        pd.DataFrame({"worker": rows["worker"].astype(str), "passed": passed.astype(bool)})
        .groupby("worker")["passed"]
        .agg(n_control="size", n_passed="sum")
    )
    table = pd.DataFrame({"worker": workers}).join(stats, on="worker")
    table["n_control"] = table["n_control"].fillna(0).astype("int64")
    table["n_passed"] = table["n_passed"].fillna(0).astype("int64")
    table["pass_rate"] = table["n_passed"] / table["n_control"].where(table["n_control"] > 0)
    failing = (table["n_control"] > 0) & (table["pass_rate"] < pass_threshold - 1e-12)
    table["excluded"] = np.asarray(failing & exclude, dtype=bool)
    return table[CONTROL_COLUMNS]
