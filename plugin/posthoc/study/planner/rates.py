"""What the planner assumes about a study before it runs: outcome rates, judge consistency, time and pay.

Everything here is either read from a **pilot** (the judgements table of a first batch, as ``posthoc
score`` writes it) or a **prior** from paper 000, stated with its section:

* outcome shares verify / edit / remove **0.893 / 0.088 / 0.019** for every cell (the paper's overall
  shares over all datasets and systems, Figure 4; its text gives verification rates "around 90%" with
  the best cell at 96.4%, ACE2004, section 4.2, and says most errors are links, not mentions, i.e. edits
  outnumber removals, section 4). :data:`PRIOR_SPREAD` is the per-cell spread: the best cell 0.964 and,
  mirrored about 0.893, a worst cell 0.822;
* **judge consistency** ``a`` (k > 1 only): each judge gives the annotation's latent outcome with
  probability ``a``, else an outcome drawn from the cell's shares; then Fleiss' kappa is ``a**2``.
  Prior :data:`PRIOR_CONSISTENCY`: the value at which, with k = 3 and verify share 0.893, two or more
  of three judges decline an annotation in 5% of cases (paper 000 section 4.1, Figure 5: "in less than
  5% of instances did two or more annotators decline to verify the label");
* **seconds per judged region** :data:`DEFAULT_SECONDS_PER_REGION` = 15: paper 000 section 2.1 paid
  6,520 USD at about 9 USD an hour (724 hours) for 167,432 judgements in HITs of 19 real tasks and one
  control task of three annotations (31,105 / 19 = 1,637 HITs, 4,911 control annotations): 2,608,000 s /
  172,343 regions = 15.1 s;
* **hourly rate** :data:`DEFAULT_HOURLY_RATE` = 9 (USD, paper 000 section 2.1).

A pilot replaces the priors: per-cell shares shrunk towards the pilot's pooled shares by
:data:`SHRINK_JUDGEMENTS` pseudo-judgements (cells the pilot did not reach take the pooled shares);
``a = sqrt(kappa)`` from the pilot's pooled Fleiss' kappa when its annotations have two judges or
more; seconds per region from ``lead_time`` (seconds a task, Label Studio's annotation field, repeated
on every region of the task): the sum over the pilot's tasks divided by their regions, overall and
per worker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Floats, Objects, Strings
from posthoc.errors import PosthocInputError
from posthoc.tables import OUTCOMES, require_columns

PRIOR_SHARES: Final = (0.893, 0.088, 0.019)
#: lowest and highest verify share of a cell (0.964 is paper 000's best cell, section 4.2; 0.822 mirrors it)
PRIOR_SPREAD: Final = (0.822, 0.964)
DEFAULT_SECONDS_PER_REGION: Final = 15.0
DEFAULT_HOURLY_RATE: Final = 9.0
SHRINK_JUDGEMENTS: Final = 20.0
PILOT_NEEDS: Final = ("dataset", "system", "worker", "task_key", "outcome", "lead_time")


def _decline_two_of_three(consistency: float, verify: float = PRIOR_SHARES[0]) -> float:
    """P(two or more of three judges do not verify) under the consistency model (module docstring)."""
    total = 0.0
    for latent_verify, weight in ((True, verify), (False, 1 - verify)):
        q = (1 - consistency) * (1 - verify) + (0.0 if latent_verify else consistency)  # P(a judge declines)
        total += weight * (3 * q * q * (1 - q) + q**3)
    return total


def _solve_consistency(target: float = 0.05) -> float:
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if _decline_two_of_three(middle) < target else (low, middle)
    return round((low + high) / 2, 4)


PRIOR_CONSISTENCY: Final = _solve_consistency()


@dataclass(frozen=True)
class OutcomeRates:
    """Per-cell outcome shares and judge consistency: what the simulated judges do.

    ``cells``: ``dataset, system, verify, edit, remove, n_pilot`` (``n_pilot`` judgements behind the
    row; 0 for a prior). ``default``: shares for a cell not in ``cells``. ``source``: ``prior`` or ``pilot``.
    """

    default: tuple[float, float, float] = PRIOR_SHARES
    consistency: float = PRIOR_CONSISTENCY
    cells: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["dataset", "system", *OUTCOMES, "n_pilot"]))
    source: str = "prior"

    def __post_init__(self) -> None:
        shares = np.asarray(self.default, dtype=float)
        if shares.shape != (3,) or (shares < 0).any() or not math.isclose(float(shares.sum()), 1.0, abs_tol=1e-6):
            raise PosthocInputError(f"outcome shares must be three numbers >= 0 summing to 1, got {self.default}")
        if not 0.0 <= self.consistency <= 1.0:
            raise PosthocInputError(f"judge consistency must be between 0 and 1, got {self.consistency}")

    def shares_for(self, datasets: Objects | Strings, systems: Objects | Strings) -> Floats:
        """``(n, 3)`` verify / edit / remove shares of each ``(dataset, system)`` pair."""
        out = np.tile(np.asarray(self.default, dtype=float), (len(datasets), 1))
        if len(self.cells):
            index = pd.MultiIndex.from_frame(self.cells[["dataset", "system"]].astype(str))
            where = index.get_indexer(pd.MultiIndex.from_arrays([np.asarray(datasets, dtype=str),
                                                                 np.asarray(systems, dtype=str)]))
            found = where >= 0
            out[found] = self.cells[list(OUTCOMES)].to_numpy(dtype=float)[where[found]]
        return out

    def with_verify(self, verify: float) -> OutcomeRates:
        """The same rates with every cell's verify share set to ``verify`` (edit / remove in proportion)."""
        def scaled(shares: Floats) -> Floats:
            rest = shares[..., 1:]
            total = rest.sum(axis=-1, keepdims=True)
            split = np.where(total > 0, rest / np.where(total > 0, total, 1), 0.5)
            return np.concatenate([np.full((*shares.shape[:-1], 1), verify), split * (1 - verify)], axis=-1)

        cells = self.cells.copy()
        if len(cells):
            cells[list(OUTCOMES)] = scaled(cells[list(OUTCOMES)].to_numpy(dtype=float))
        default = tuple(float(x) for x in scaled(np.asarray(self.default, dtype=float)))
        return OutcomeRates(default=default, consistency=self.consistency, cells=cells,  # type: ignore[arg-type]
                            source=self.source)


@dataclass(frozen=True)
class PilotTime:
    """Seconds per judged region from a pilot's ``lead_time``: overall, per worker, and what they rest on."""

    seconds_per_region: float
    per_worker: dict[str, float]
    n_tasks: int
    n_regions: int
    n_tasks_without_time: int
    done_tasks: frozenset[str]


def read_pilot(path: str | Path) -> pd.DataFrame:
    """Read a pilot's judgements table (CSV or Parquet, as ``posthoc score`` writes ``judgements.*``).

    Raises :class:`PosthocInputError` naming the file for a missing file, an unreadable one or missing
    columns (:data:`PILOT_NEEDS`).
    """
    source = Path(path)
    if not source.is_file():
        what = "is a folder" if source.is_dir() else "does not exist"
        raise PosthocInputError(f"--pilot {source} {what}; give the judgements.csv of a first batch (posthoc score)")
    try:
        if source.suffix.lower() == ".parquet":
            frame = pd.read_parquet(source)
        else:
            frame = pd.read_csv(source, dtype={"dataset": str, "doc_id": str, "system": str, "worker": str,
                                               "task_key": str, "outcome": str, "link": str})
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise PosthocInputError(f"--pilot {source}: not a readable judgements table: {exc}") from None
    require_columns(frame, PILOT_NEEDS, message=f"--pilot {source} lacks column(s) {{missing}}; give the "
                    "judgements table that `posthoc score` writes (judgements.csv)")
    if frame.empty:
        raise PosthocInputError(f"--pilot {source} holds no judgements")
    bad = ~frame["outcome"].isin(OUTCOMES)
    if bad.any():
        raise PosthocInputError(f"--pilot {source}: column outcome must be verify, edit or remove; "
                                f"{int(bad.sum())} row(s) hold other values")
    lead = pd.to_numeric(frame["lead_time"], errors="coerce")
    if (lead < 0).any():
        raise PosthocInputError(f"--pilot {source}: lead_time must be seconds >= 0")
    return frame.assign(lead_time=lead)


def _real_rows(pilot: pd.DataFrame) -> pd.DataFrame:
    if "is_control" not in pilot.columns:
        return pilot
    control = pilot["is_control"].astype(str).str.lower().isin(["true", "1"])
    return pilot.loc[~control.to_numpy()]


def rates_from_pilot(pilot: pd.DataFrame, *, prior: OutcomeRates | None = None,
                     shrink: float = SHRINK_JUDGEMENTS) -> OutcomeRates:
    """Outcome rates from a pilot's judgements (control rows ignored); see the module docstring."""
    from posthoc.metrics.reliability import fleiss_kappa_table

    prior = prior or OutcomeRates()
    rows = _real_rows(pilot)
    if rows.empty:
        return prior
    counts = pd.crosstab([rows["dataset"].astype(str), rows["system"].astype(str)], rows["outcome"])
    counts = counts.reindex(columns=list(OUTCOMES), fill_value=0)
    pooled = counts.sum(axis=0).to_numpy(dtype=float)
    pooled /= pooled.sum()
    n = counts.sum(axis=1).to_numpy(dtype=float)
    shares = (counts.to_numpy(dtype=float) + shrink * pooled) / (n + shrink)[:, None]
    cells = pd.DataFrame(shares, columns=list(OUTCOMES))
    cells.insert(0, "dataset", counts.index.get_level_values(0))
    cells.insert(1, "system", counts.index.get_level_values(1))
    cells["n_pilot"] = n.astype("int64")
    consistency = prior.consistency
    key = ["dataset", "doc_id", "system", "start", "end", "link"]
    if all(c in rows.columns for c in key):
        per_annotation = rows.groupby([rows[c].astype(str) for c in key] + [rows["outcome"]]).size().unstack(
            fill_value=0).reindex(columns=list(OUTCOMES), fill_value=0)  # crosstab's len per group: 10 s at 167k
        judges = per_annotation.sum(axis=1)
        if (judges >= 2).any():
            modal = int(judges[judges >= 2].mode().max())
            kappa = fleiss_kappa_table(per_annotation.loc[judges == modal].to_numpy())
            if not math.isnan(kappa):
                consistency = math.sqrt(min(max(kappa, 0.0), 1.0))
    return OutcomeRates(default=tuple(float(x) for x in pooled),  # type: ignore[arg-type]
                        consistency=consistency, cells=cells, source="pilot")


def pilot_time(pilot: pd.DataFrame) -> PilotTime:
    """Seconds per judged region (control regions included) from the pilot's ``lead_time``."""
    tasks = pilot.groupby(["worker", "task_key"], sort=True).agg(lead=("lead_time", "max"),
                                                                 regions=("outcome", "size")).reset_index()
    timed = tasks.loc[tasks["lead"].notna()]
    if timed.empty or timed["regions"].sum() == 0:
        raise PosthocInputError("the pilot's judgements carry no lead_time (seconds a task); pass "
                                "--seconds-per-region instead")
    per_worker_sums = timed.groupby("worker")[["lead", "regions"]].sum()
    per_worker = {str(w): float(r.lead / r.regions) for w, r in per_worker_sums.iterrows() if r.regions > 0}
    return PilotTime(
        seconds_per_region=float(timed["lead"].sum() / timed["regions"].sum()),
        per_worker=per_worker,
        n_tasks=len(timed),
        n_regions=int(timed["regions"].sum()),
        n_tasks_without_time=int(tasks["lead"].isna().sum()),
        done_tasks=frozenset(tasks["task_key"].astype(str)),
    )
