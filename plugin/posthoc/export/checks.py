"""What the export reader leaves out of the judgements, and why: the ``exclusions`` table.

Columns ``kind, worker, task_key, detail, count`` (the same as
:attr:`posthoc.scores.Scores.exclusions`, so the two concatenate). Nothing an export holds is
silently mixed into the metrics or silently dropped: each anomaly is one row here and the report
lists them (issue 4, item 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import pandas as pd

EXCLUSION_COLUMNS: Final = ("kind", "worker", "task_key", "detail", "count")

#: Every kind of exclusion the export reader records, with the reason printed in the report.
EXCLUSION_KINDS: Final[dict[str, str]] = {
    "skipped": "the worker skipped (cancelled) the task: no judgement",
    "draft": "a draft that was never submitted: not a judgement",
    "foreign_annotator": "annotation by a user who is not the project's worker: not mixed in",
    "annotated_twice": "the worker submitted the task more than once: the latest annotation is kept, "
    "the earlier ones are listed here",
    "task_in_two_exports": "the same task key appeared in more than one export: the first is kept",
    "no_prediction": "the task had no pre-filled prediction when annotated: nothing was verified",
    "manual_region": "a region the annotator drew that was not pre-filled (the study asks for none)",
    "offsets_changed": "a pre-filled region whose span the annotator moved or resized: Label Studio can store "
    "wrong offsets on resize, so the judgement is left out",
    "undecided_region": "a pre-filled region kept without a verify / edit / remove decision",
    "not_prefilled": "a manifest annotation missing from the task's prediction: the worker never saw it",
    "unknown_prediction_region": "a prediction region whose id is not a mention of the manifest",
    "unknown_task": "a task whose key is not in the study manifest",
    "wrong_project": "a task of another worker found in this worker's project",
    "unknown_worker": "an export whose tasks belong to no single worker of the manifest",
    "withdrawn": "a task withdrawn from its worker by `posthoc study reassign` (failed control tasks or left the "
    "study), judged anyway: never one of the item's k judges",
    # added by the scoring (posthoc.metrics.score), not the export reader
    "control_rows": "control annotations (a known right answer, one a batch) check the workers and are never "
    "counted in the metrics",
    "failing_worker": "every judgement of a worker who failed the control tasks (pass rate below the threshold) "
    "is left out of the metrics (paper 000, section 2.1)",
}


@dataclass
class ExclusionLog:
    """Collects exclusion rows; :meth:`frame` gives them sorted (deterministic output)."""

    rows: list[tuple[str, str, str, str, int]] = field(default_factory=list)

    def add(self, kind: str, *, worker: str = "", task_key: str = "", detail: str = "", count: int = 1) -> None:
        """Record one anomaly of ``kind`` (one of :data:`EXCLUSION_KINDS`)."""
        if kind not in EXCLUSION_KINDS:
            raise KeyError(f"unknown exclusion kind {kind!r}")
        self.rows.append((kind, worker, task_key, detail, int(count)))

    def extend(self, other: ExclusionLog) -> None:
        """Append another log's rows."""
        self.rows.extend(other.rows)

    def frame(self) -> pd.DataFrame:
        """The exclusions table, sorted by every column."""
        return exclusions_frame(self.rows)


def exclusions_frame(rows: list[tuple[str, str, str, str, int]] | None = None) -> pd.DataFrame:
    """An exclusions table (``kind, worker, task_key, detail`` strings, ``count`` int64) from ``rows``.

    Examples:
        >>> from posthoc.export.checks import exclusions_frame
        >>> exclusions_frame([("skipped", "w2", "t9", "", 1), ("draft", "w1", "t3", "", 1)])
              kind worker task_key detail  count
        0    draft     w1       t3             1
        1  skipped     w2       t9             1
    """
    frame = pd.DataFrame(rows or [], columns=list(EXCLUSION_COLUMNS))
    frame = frame.astype({"kind": "string", "worker": "string", "task_key": "string", "detail": "string",
                          "count": "int64"})
    return frame.sort_values(list(EXCLUSION_COLUMNS), kind="stable").reset_index(drop=True)


def summarise_exclusions(exclusions: pd.DataFrame) -> pd.DataFrame:
    """Counts by kind with the reason: ``kind, count, reason`` (for the report and the JSON summary).

    Examples:
        Two skipped tasks of w1 and one of w2 are 3 skipped tasks.

        >>> from posthoc.export.checks import exclusions_frame, summarise_exclusions
        >>> exclusions = exclusions_frame([("skipped", "w1", "t1", "", 2), ("skipped", "w2", "t5", "", 1)])
        >>> summarise_exclusions(exclusions)[["kind", "count"]]
              kind  count
        0  skipped      3
        >>> summarise_exclusions(exclusions).loc[0, "reason"]
        'the worker skipped (cancelled) the task: no judgement'
    """
    if exclusions.empty:
        return pd.DataFrame({"kind": pd.Series(dtype="string"), "count": pd.Series(dtype="int64"),
                             "reason": pd.Series(dtype="string")})
    totals = exclusions.groupby("kind", sort=True)["count"].sum().reset_index()
    totals["reason"] = [EXCLUSION_KINDS.get(str(kind), f"(no reason recorded for kind {kind})")
                        for kind in totals["kind"]]
    return totals.astype({"kind": "string", "count": "int64", "reason": "string"})

