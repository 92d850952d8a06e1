"""Simulated annotators for a revised study (``posthoc study extend`` / ``reassign``), and its projects' task order.

For the live test (``tests/labelstudio/test_study_extend.py``) and the acceptance bench
(``bench/study_extend_bench.py``). :func:`simulate_workers` walks each named worker's stream through their own
login (:func:`posthoc.jobs.simulate.annotate_stream`, which fails unless ``/next`` serves the tasks in the
manifest's order) and posts the decisions of :func:`posthoc.jobs.simulate.plan_decisions` for every task that is
not withdrawn and not yet annotated; :func:`project_task_keys` lists each worker's project in Label Studio's
order (task id = import order).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
from posthoc.jobs.simulate import SimulationConfig, annotate_stream, plan_decisions
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.label_config import verification_tags
from posthoc.labelstudio.users import ensure_user
from posthoc.paths import label_config
from posthoc.study.plan.logins import default_accounts_file, read_accounts
from posthoc.study.plan.manifest import Manifest


def simulate_workers(manifest_path: Path, *, url: str, admin_token: str, workers: Collection[str],
                     config: SimulationConfig, first_batch: bool = False, careless: Collection[str] = (),
                     stop_at: Mapping[str, int] | None = None) -> int:
    """Annotate the named workers' tasks that are not yet done (module docstring); returns annotations posted.

    ``first_batch``: only each worker's batch 0 (a pilot); ``careless``: workers who verify every region (they
    fail any control task with a corrupted annotation), besides ``config.careless_worker``; ``stop_at``: a worker
    stops before this position (leaves half-way).
    """
    manifest = Manifest.open(manifest_path)
    tasks = manifest.tasks().set_index("task_key")
    decisions = plan_decisions(manifest.mentions(), config)
    decisions = decisions.loc[~decisions["task_key"].isin(manifest.withdrawn())].copy()
    if first_batch:
        decisions = decisions.loc[decisions["task_key"].map(tasks["batch"]) == 0]
    lazy = decisions["worker"].isin(set(careless))
    decisions.loc[lazy, "outcome"] = "verify"
    decisions.loc[lazy, "new_link"] = None
    accounts = read_accounts(default_accounts_file(manifest_path))
    projects = recorded_project_ids(default_setup_file(manifest_path), study=manifest.study)
    admin = LabelStudioClient(url, admin_token)
    tags = verification_tags(label_config("entity_verification"))
    posted = 0
    for worker in sorted(workers):
        mine = decisions.loc[decisions["worker"] == worker]
        if stop_at is not None and worker in stop_at:
            mine = mine.loc[mine["position"] < stop_at[worker]]
        done = frozenset(str(ls.task_data(t).get("task_key")) for t in admin.tasks(projects[worker])
                         if ls.task_annotations(t))
        account = ensure_user(url, admin_token, email=accounts[worker]["email"], password=accounts[worker]["password"])
        posted += annotate_stream(LabelStudioClient(url, account.token), projects[worker], mine, tags, done=done)
    return posted


def project_task_keys(manifest_path: Path, *, url: str, admin_token: str) -> dict[str, list[str]]:
    """Each worker's project's task keys in Label Studio's order (by task id: the import order)."""
    manifest = Manifest.open(manifest_path)
    projects = recorded_project_ids(default_setup_file(manifest_path), study=manifest.study)
    admin = LabelStudioClient(url, admin_token)
    return {worker: [str(ls.task_data(t).get("task_key")) for t in sorted(admin.tasks(pid), key=ls.int_id)]
            for worker, pid in sorted(projects.items())}
