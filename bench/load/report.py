"""What ``bench/load_bench.py`` makes of a Locust run: figures per step, and the counts checked after it.

Per step (the window of ``step_seconds`` in which Locust held that many users, its spawn included): p50 / p95 /
p99 of ``submit`` and ``next task`` in milliseconds (numpy's linear percentiles over every request of the window),
failed requests of any kind, accepted submits a second, and the highest 1-minute load average sampled in it.

After the run, the submits Locust counted (its request events of ``submit`` that succeeded; its ``--csv`` stats
are written as it stops and may miss a request still running then) must
equal those the scenario recorded with Label Studio's answer (annotation ids), the annotations of the study's
projects in Label Studio's JSON export (same ids, none twice on one task by one annotator), the worker-tasks of
``posthoc score``'s judgements (no mention judged twice by one worker) and the annotations ``study status`` reads
from Label Studio.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

#: the largest step "held": p95 of Submit and of next task under this, and no failed request
P95_LIMIT_MS = 500.0


@dataclass(frozen=True)
class StepFigures:
    """One step's figures (module docstring); percentiles are NaN when the step had no such request."""

    users: int
    submit: tuple[float, float, float]
    next: tuple[float, float, float]
    errors: int
    rate: float
    load: float
    requests: int


def _percentiles(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return (math.nan, math.nan, math.nan)
    p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
    return float(p50), float(p95), float(p99)


def step_figures(samples: Path, steps: list[int], step_seconds: float, loads: list[float], *,
                 load_every: float = 5.0) -> list[StepFigures]:
    """The figures of every step from the scenario's samples (``[seconds, name, ms, ok, users]`` lines) and the
    load averages sampled every ``load_every`` seconds from the start."""
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if samples.is_file() else []
    found = []
    for index, users in enumerate(steps):
        low, high = index * step_seconds, (index + 1) * step_seconds
        window = [r for r in rows if low <= r[0] < high]
        submits = [r[2] for r in window if r[1] == "submit" and r[3]]
        loads_in = [v for k, v in enumerate(loads) if low <= (k + 1) * load_every < high]
        found.append(StepFigures(users, _percentiles(submits), _percentiles(
            [r[2] for r in window if r[1] == "next task" and r[3]]), sum(1 for r in window if not r[3]),
            len(submits) / step_seconds, max(loads_in, default=math.nan), len(window)))
    return found


def held(steps: list[StepFigures]) -> int:
    """The most users of a step with Submit and next-task p95 under :data:`P95_LIMIT_MS` and no error (0: none)."""
    good = [s.users for s in steps if s.errors == 0 and s.submit[1] < P95_LIMIT_MS and s.next[1] < P95_LIMIT_MS]
    return max(good, default=0)


@dataclass
class Counts:
    """The counts of one run (module docstring)."""

    locust: int = 0
    recorded: int = 0
    exported: int = 0
    twice_in_export: int = 0
    same_ids: bool = False
    judged_tasks: int = 0
    judged_twice: int = 0
    status: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"submits: Locust counted {self.locust}, recorded {self.recorded}; Label Studio's export "
                f"{self.exported} annotations (same ids: {self.same_ids}, twice on a task: {self.twice_in_export}); "
                f"posthoc score judged {self.judged_tasks} worker-tasks (a mention twice: {self.judged_twice}); "
                f"study status reads {self.status}", *self.notes]

    def problems(self) -> list[str]:
        wanted = self.locust
        found = {"recorded": self.recorded, "exported": self.exported, "judged worker-tasks": self.judged_tasks,
                 "study status": self.status}
        problems = [f"{name} {count} != Locust's {wanted}" for name, count in found.items() if count != wanted]
        if not self.same_ids:
            problems.append("the export's annotation ids differ from the submits recorded")
        if self.twice_in_export or self.judged_twice:
            problems.append(f"counted twice: export {self.twice_in_export}, judgements {self.judged_twice}")
        return problems


def _locust_submits(samples: Path) -> int:
    """Accepted submits among Locust's request events (the scenario's samples)."""
    if not samples.is_file():
        return 0
    rows = (json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip())
    return sum(1 for row in rows if row[1] == "submit" and row[3])


def _csv_submits(stats: Path) -> int:
    """Accepted submits in Locust's ``--csv`` stats (written at its end: a request still running then is left out)."""
    if not stats.is_file():
        return 0
    with stats.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["Name"] == "submit":
                return int(row["Request Count"]) - int(row["Failure Count"])
    return 0


def _exported(url: str, token: str, projects: dict[str, int]) -> list[tuple[int, int, Any]]:
    """``(task id, annotation id, completed_by)`` of every annotation in the projects' JSON exports."""
    found = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=600) as http:
        for project in projects.values():
            tasks = http.get(f"/api/projects/{project}/export", params={"exportType": "JSON",
                                                                        "download_all_tasks": "true"}).json()
            for task in tasks:
                found += [(int(task["id"]), int(a["id"]), a.get("completed_by")) for a in task.get("annotations", [])
                          if not a.get("was_cancelled")]
    return found


def check_counts(url: str, token: str, manifest: Any, projects: dict[str, int], submits: Path, out: Path) -> Counts:
    """Count the run's submits everywhere (module docstring)."""
    import pandas as pd

    from posthoc.cli.status import annotations_from_label_studio
    from posthoc.jobs.score import run_score_job
    from posthoc.jobs.score_options import JudgementSource, ScoreOptions

    counts = Counts(locust=_locust_submits(out / "samples.jsonl"))
    counts.notes.append(f"Locust's CSV stats: {_csv_submits(out / 'locust_stats.csv')} submits")
    recorded = [json.loads(line) for line in submits.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if submits.is_file() else []
    counts.recorded = len(recorded)
    exported = _exported(url, token, projects)
    counts.exported = len(exported)
    counts.same_ids = sorted(a for _, a, _ in exported) == sorted(int(r[1]) for r in recorded)
    counts.twice_in_export = sum(n - 1 for n in Counter((t, u) for t, _, u in exported).values() if n > 1)
    result = run_score_job(manifest_path=manifest.path, out_dir=out / "score",
                           source=JudgementSource(ls_url=url, token=token), options=ScoreOptions(n_resamples=0))
    judgements = pd.read_csv(out / "score" / "judgements.csv")
    counts.judged_tasks = int(judgements[["worker", "task_key"]].drop_duplicates().shape[0]) if len(judgements) else 0
    counts.judged_twice = int(judgements.duplicated(["worker", "task_key", "mention_id"]).sum())
    counts.notes.append(f"posthoc score: {result.n_judgements} judgements, {result.n_exclusions} exclusions, "
                        f"{len(result.exported)} projects exported")
    counts.status = len(annotations_from_label_studio(url, token, manifest))
    return counts
