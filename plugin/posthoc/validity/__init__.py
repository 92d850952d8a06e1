"""Validity checks: each estimator run on simulations whose true parameters are known.

Every check returns :class:`Check` rows (estimator, setting, number of simulated studies, the measure, its
value, the target and whether it is met). ``bench/validity_bench.py`` runs them at full size and saves the
table; the tests run the same functions on smaller runs and assert the targets.

- :mod:`.sequence`: lag-1 binary and continuous (coverage and mean bias of b1 on the defaults), and the
  study-level (task) sequence test: false-positive rate on null studies, coverage under a known lag.
- :mod:`.metrics`: posthoc precision and recall with the document bootstrap, the k = 3 majority rate, Fleiss'
  kappa and Krippendorff's alpha against statsmodels and krippendorff, Dawid-Skene worker accuracies; with document
  effects (issue 46) the paired test's size against the old paired bootstrap.
- :mod:`.new_system`: a system added to a finished study (issue 46): its posthoc precision from reused, sampled and
  predicted verdicts, coverage and bias on simulated studies with document effects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One figure of a validity check. ``target`` is human-readable (``>= 0.93``); ``passed`` applies it."""

    estimator: str
    setting: str
    runs: int
    measure: str
    value: float
    target: str
    passed: bool


def at_least(estimator: str, setting: str, runs: int, measure: str, value: float, bound: float) -> Check:
    """A check that ``value >= bound``."""
    return Check(estimator, setting, runs, measure, float(value), f">= {bound:g}", bool(value >= bound))


def at_most(estimator: str, setting: str, runs: int, measure: str, value: float, bound: float, *,
            absolute: bool = False) -> Check:
    """A check that ``value <= bound`` (``|value| <= bound`` with ``absolute``)."""
    shown = abs(value) if absolute else value
    return Check(estimator, setting, runs, measure, float(value), f"{'|x| ' if absolute else ''}<= {bound:g}",
                 bool(shown <= bound))


def within(estimator: str, setting: str, runs: int, measure: str, value: float, low: float, high: float) -> Check:
    """A check that ``low <= value <= high`` (a band: an interval that over-covers is too wide, a test that
    rejects too rarely wastes power); with ``high`` >= 1 it is ``value >= low``."""
    target = f">= {low:g}" if high >= 1 else f"{low:g}-{high:g}"
    return Check(estimator, setting, runs, measure, float(value), target, bool(low <= value <= high))


def format_checks(checks: Iterable[Check]) -> list[str]:
    """The checks as an aligned plain-text table, one line a figure."""
    rows = [("estimator", "setting", "runs", "measure", "value", "target", "ok")]
    rows += [(c.estimator, c.setting, str(c.runs), c.measure, f"{c.value:+.4f}", c.target,
              "yes" if c.passed else "NO") for c in checks]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
