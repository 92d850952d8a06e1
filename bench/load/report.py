"""What ``bench/load_bench.py`` makes of a Locust run: figures per step, and the counts checked after it.

Per step (the window of ``step_seconds`` in which Locust held that many users, less its first ``settle`` seconds:
the step's new users spawn and log in then, and a login is Label Studio's dearest request, a password hash):
p50 / p95 / p99 of ``submit`` and ``next task`` in milliseconds (numpy's linear percentiles over every request of
the window) and how many there were, failed requests of any kind in the whole step, accepted submits a second,
and the highest 1-minute load average sampled in it.

After the run, every annotation is accounted for: the submits the scenario recorded with Label Studio's answer
(annotation ids) equal Locust's own count of its accepted ``submit`` events and are all in the study's projects'
JSON export; every exported annotation is on a task the scenario *sent* a Submit for, no task holding more
annotations than Submits sent for it (those beyond the answered ones were cut off when Locust stopped, or
answered with an error after Label Studio stored them: counted, not hidden); no task annotated twice by its
worker; ``posthoc score``'s judgements hold one worker-task for every annotated task (no mention judged twice by
one worker) and ``study status`` reads as many annotations as the export holds.
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
    measured: tuple[int, int] = (0, 0)  # submits, next tasks in the settled window


def _percentiles(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return (math.nan, math.nan, math.nan)
    p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
    return float(p50), float(p95), float(p99)


def step_figures(samples: Path, steps: list[int], step_seconds: float, loads: list[float], *,
                 settle: float = 0.0, load_every: float = 5.0) -> list[StepFigures]:
    """The figures of every step from the scenario's samples (``[seconds, name, ms, ok, users]`` lines) and the
    load averages sampled every ``load_every`` seconds from the start; percentiles over each step's window less its
    first ``settle`` seconds."""
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if samples.is_file() else []
    found = []
    for index, users in enumerate(steps):
        low, high = index * step_seconds, (index + 1) * step_seconds
        window = [r for r in rows if low <= r[0] < high]
        settled = [r for r in window if r[0] >= low + settle]
        submits = [r[2] for r in settled if r[1] == "submit" and r[3]]
        nexts = [r[2] for r in settled if r[1] == "next task" and r[3]]
        loads_in = [v for k, v in enumerate(loads) if low <= (k + 1) * load_every < high]
        accepted = sum(1 for r in window if r[1] == "submit" and r[3])
        found.append(StepFigures(users, _percentiles(submits), _percentiles(nexts), sum(1 for r in window if not r[3]),
                                 accepted / step_seconds, max(loads_in, default=math.nan), len(window),
                                 (len(submits), len(nexts))))
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
    sent: int = 0
    exported: int = 0
    answered_missing: int = 0
    unsent: int = 0
    beyond_sent: int = 0
    twice_in_export: int = 0
    annotated_tasks: int = 0
    judged_tasks: int = 0
    judged_twice: int = 0
    status: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        stored_unanswered = self.exported - (self.recorded - self.answered_missing)
        return [f"submits: sent {self.sent}, answered {self.recorded} (Locust counted {self.locust}); Label Studio's "
                f"export {self.exported} annotations on {self.annotated_tasks} tasks: answered ones missing "
                f"{self.answered_missing}, stored without an answer (cut off at the stop, or an error after storing) "
                f"{stored_unanswered}, on a task nobody sent {self.unsent}, beyond the Submits sent for a task "
                f"{self.beyond_sent}, twice on a task {self.twice_in_export}; posthoc score judged "
                f"{self.judged_tasks} worker-tasks (a mention twice: {self.judged_twice}); study status reads "
                f"{self.status} annotations", *self.notes]

    def problems(self) -> list[str]:
        found = {"Locust's count of accepted submits": self.locust, "judged worker-tasks": self.judged_tasks,
                 "study status's annotations": self.status}
        wanted = {"Locust's count of accepted submits": self.recorded, "judged worker-tasks": self.annotated_tasks,
                  "study status's annotations": self.exported}
        problems = [f"{name} {found[name]} != {wanted[name]}" for name in found if found[name] != wanted[name]]
        for count, what in ((self.answered_missing, "answered Submits missing from the export"),
                            (self.unsent, "exported annotations on a task nobody sent a Submit for"),
                            (self.beyond_sent, "exported annotations beyond the Submits sent for their task"),
                            (self.twice_in_export, "tasks annotated twice by their worker"),
                            (self.judged_twice, "mentions judged twice by one worker")):
            if count:
                problems.append(f"{count} {what}")
        return problems


def _locust_submits(samples: Path) -> int:
    """Accepted submits among Locust's request events (the scenario's samples)."""
    return sum(1 for row in _lines(samples) if row[1] == "submit" and row[3])


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


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if path.is_file() else []


def check_counts(url: str, token: str, manifest: Any, projects: dict[str, int], out: Path) -> Counts:
    """Count the run's submits everywhere (module docstring); the scenario's files are in ``out``."""
    import pandas as pd

    from posthoc.jobs.score import run_score_job
    from posthoc.jobs.score_options import JudgementSource, ScoreOptions
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.study.live.progress import annotations_from_label_studio

    counts = Counts(locust=_locust_submits(out / "samples.jsonl"))
    counts.notes.append(f"Locust's CSV stats: {_csv_submits(out / 'locust_stats.csv')} submits")
    recorded = _lines(out / "submits.jsonl")
    sent = Counter(int(task) for task, _ in _lines(out / "sent.jsonl"))
    counts.recorded, counts.sent = len(recorded), sum(sent.values())
    exported = _exported(url, token, projects)
    counts.exported = len(exported)
    exported_ids = {a for _, a, _ in exported}
    counts.answered_missing = sum(1 for row in recorded if int(row[1]) not in exported_ids)
    on_task = Counter(t for t, _, _ in exported)
    counts.annotated_tasks = len(on_task)
    counts.unsent = sum(n for t, n in on_task.items() if t not in sent)
    counts.beyond_sent = sum(max(0, n - sent[t]) for t, n in on_task.items() if t in sent)
    counts.twice_in_export = sum(n - 1 for n in Counter((t, u) for t, _, u in exported).values() if n > 1)
    result = run_score_job(manifest_path=manifest.path, out_dir=out / "score",
                           source=JudgementSource(ls_url=url, token=token), options=ScoreOptions(n_resamples=0))
    judgements = pd.read_csv(out / "score" / "judgements.csv")
    counts.judged_tasks = int(judgements[["worker", "task_key"]].drop_duplicates().shape[0]) if len(judgements) else 0
    counts.judged_twice = int(judgements.duplicated(["worker", "task_key", "mention_id"]).sum())
    counts.notes.append(f"posthoc score: {result.n_judgements} judgements, {result.n_exclusions} exclusions, "
                        f"{len(result.exported)} projects exported")
    known = recorded_project_ids(default_setup_file(Path(manifest.path)), study=str(manifest.study)).values()
    counts.status = len(annotations_from_label_studio(url, token, manifest, known_ids=known))
    return counts
