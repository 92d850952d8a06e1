"""Study progress: per-worker progress and control-task results, from annotations and the manifest.

The annotations come from the webhook event store (:func:`posthoc.study.live.events.current_annotations`)
or from Label Studio's API (:func:`annotations_from_label_studio`, the study's projects' tasks through
:func:`annotations_from_tasks`), or both (:func:`merge_annotations`); each gives one row per existing
annotation with ``annotation_id, task_key, completed_by, updated_at, was_cancelled, regions``.

Control tasks (paper 002's gold units / paper 000's sanity checks): :func:`control_annotation_checks` checks
each submitted control annotation while the study runs: it passes when every pre-filled region got the decision
the manifest expects (``expected_outcome``); a pre-filled region the annotator deleted counts as ``remove`` (as
in the judgements table). A region is right as in the score, but what is decided differs: the score's
:func:`posthoc.metrics.controls.control_results` decides whether a *worker* passes (the share of their control
judgements right, against a threshold) and drops failing workers from every metric; this check passes or fails
one annotation and says which regions were wrong, for the study owner watching the study.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from posthoc.labelstudio import records as ls
from posthoc.study.live.events import regions_of

if TYPE_CHECKING:
    from posthoc.study.plan.manifest import Manifest

WORKER_COLUMNS = ("worker", "tasks_total", "tasks_done", "share_done", "cancelled", "controls_total",
                  "controls_done", "controls_passed", "annotators", "last_activity")
CONTROL_COLUMNS = ("worker", "task_key", "position", "annotation_id", "regions", "wrong", "passed", "detail")


class StudyManifest(Protocol):
    """What progress reads of ``posthoc.study.plan.manifest.Manifest``."""

    def tasks(self, worker: str | None = None) -> pd.DataFrame:
        """One row a task: ``task_key, worker, position, is_control, ...``."""

    def workers(self) -> list[str]:
        """Worker ids."""

    def prefill(self, task_key: str) -> pd.DataFrame:
        """``mention_id, ..., expected_outcome`` of a task."""


def annotations_from_tasks(tasks: Iterable[ls.Task]) -> pd.DataFrame:
    """One row an annotation of Label Studio tasks (API or export JSON: ``data``, ``annotations``)."""
    rows: list[dict[str, Any]] = []
    for task in tasks:
        data = ls.task_data(task)
        for annotation in ls.task_annotations(task):
            rows.append({
                "annotation_id": ls.record_id(annotation),
                "project_id": ls.task_project(task),
                "task_id": ls.record_id(task),
                "task_key": data.get("task_key") if isinstance(data, dict) else None,
                "completed_by": ls.user_id(ls.completed_by(annotation)),
                "created_at": ls.created_at(annotation),
                "updated_at": ls.last_changed_at(annotation),
                "lead_time": ls.lead_time(annotation),
                "was_cancelled": ls.was_cancelled(annotation),
                "regions": regions_of(ls.result_items(annotation)),
            })
    columns = ["annotation_id", "project_id", "task_id", "task_key", "completed_by", "created_at", "updated_at",
               "lead_time", "was_cancelled", "regions"]
    return pd.DataFrame(rows, columns=columns)


def study_project_ids(projects: Iterable[ls.Project], study: str) -> list[int]:
    """Ids of the Label Studio projects of ``study``: those carrying its worker markers
    (:func:`posthoc.study.live.projects.study_projects`); none when the study has not been created."""
    from posthoc.study.live.projects import study_projects

    return sorted(ls.int_id(p) for p in study_projects(projects, study).values())


def annotations_from_label_studio(url: str, token: str, manifest: Manifest, *,
                                  known_ids: Iterable[int] = ()) -> pd.DataFrame:
    """The study's annotations as Label Studio holds them (one row an annotation, as :func:`annotations_from_tasks`),
    from the study's projects: ``known_ids`` (the setup record's, ``posthoc.jobs.setup_record.recorded_project_ids``)
    by id, or every project's markers while some worker's is unknown
    (:func:`posthoc.study.live.projects.find_study_projects`)."""
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.labelstudio.versions import warn_if_unsupported
    from posthoc.study.live.projects import find_study_projects

    keys = set(manifest.tasks()["task_key"])
    client = LabelStudioClient(url, token)
    warn_if_unsupported(client)  # one line for a server outside 1.20-1.23
    study = str(manifest.study)
    found = find_study_projects(client, study, manifest.workers(), known_ids=known_ids, any_worker=True)
    tasks: list[ls.Task] = []
    for project_id in study_project_ids(found.values(), study):
        for task in client.tasks(project_id):
            data = ls.task_data(task)
            if isinstance(data, dict) and data.get("task_key") in keys and ls.task_annotations(task):
                project = ls.task_project(task)
                tasks.append({**task, "project": project_id if project is None else int(project)})
    return annotations_from_tasks(tasks)


def merge_annotations(from_events: pd.DataFrame, from_api: pd.DataFrame | None) -> pd.DataFrame:
    """Annotations of both sources, Label Studio's row kept where both have the same annotation id."""
    if from_api is None:
        return from_events
    extra = from_events[~from_events["annotation_id"].isin(from_api["annotation_id"])]
    frames = [f for f in (from_api, extra) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else from_api


def control_annotation_checks(manifest: StudyManifest, annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per submitted control annotation (columns: :data:`CONTROL_COLUMNS`), ``passed`` when every
    pre-filled region got the expected decision (module docstring).

    ``regions``: pre-filled regions checked; ``wrong``: how many got another decision than expected;
    ``detail``: ``mention_id: got X, expected Y`` for each wrong one.
    """
    tasks = manifest.tasks()
    controls = tasks[tasks["is_control"].astype(bool)][["task_key", "worker", "position"]]
    submitted = annotations[~annotations["was_cancelled"].astype(bool)]
    joined = controls.merge(submitted[["task_key", "annotation_id", "regions"]], on="task_key", how="inner")
    rows: list[dict[str, Any]] = []
    for row in joined.to_dict("records"):
        expected = manifest.prefill(str(row["task_key"])).to_dict("records")
        decisions = {region["id"]: region.get("decision") for region in row["regions"]}
        wrong: list[str] = []
        for mention in expected:
            want = mention["expected_outcome"]
            if not isinstance(want, str) or not want:
                continue
            got = decisions.get(str(mention["mention_id"]), "remove")  # a deleted region counts as remove
            if got != want:
                wrong.append(f"{mention['mention_id']}: got {got}, expected {want}")
        rows.append({
            "worker": row["worker"], "task_key": row["task_key"], "position": int(row["position"]),
            "annotation_id": row["annotation_id"], "regions": len(expected), "wrong": len(wrong),
            "passed": not wrong, "detail": "; ".join(wrong),
        })
    frame = pd.DataFrame(rows, columns=list(CONTROL_COLUMNS))
    return frame.sort_values(["worker", "position"]).reset_index(drop=True)


def worker_progress(manifest: StudyManifest, annotations: pd.DataFrame,
                    controls: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row a worker (columns: :data:`WORKER_COLUMNS`), in worker order.

    ``tasks_done``: the worker's tasks with a submitted (not cancelled) annotation; ``cancelled``:
    tasks only skipped; ``annotators``: distinct Label Studio users (``completed_by``) who annotated the
    worker's tasks (more than 1 means someone else, e.g. an admin testing, worked in that project);
    ``last_activity``: the latest ``updated_at`` of the worker's annotations.
    """
    tasks = manifest.tasks()[["task_key", "worker", "is_control"]]
    if controls is None:
        controls = control_annotation_checks(manifest, annotations)
    joined = tasks.merge(annotations[["task_key", "was_cancelled", "updated_at", "completed_by"]], on="task_key",
                         how="left")
    rows: list[dict[str, Any]] = []
    for worker in manifest.workers():
        own = joined[joined["worker"] == worker]
        total = int(own["task_key"].nunique())
        submitted = own[own["was_cancelled"].eq(False)]
        done = int(submitted["task_key"].nunique())
        cancelled_keys = set(own.loc[own["was_cancelled"].eq(True), "task_key"]) - set(submitted["task_key"])
        own_controls = controls[controls["worker"] == worker]
        stamps = own["updated_at"].dropna()
        rows.append({
            "worker": worker,
            "tasks_total": total,
            "tasks_done": done,
            "share_done": round(done / total, 4) if total else 0.0,
            "cancelled": len(cancelled_keys),
            "controls_total": int(own.loc[own["is_control"].astype(bool), "task_key"].nunique()),
            "controls_done": int(own_controls["task_key"].nunique()),
            "controls_passed": int(own_controls.groupby("task_key")["passed"].all().sum()) if len(own_controls) else 0,
            "annotators": int(own["completed_by"].dropna().nunique()),
            "last_activity": str(stamps.max()) if len(stamps) else None,
        })
    return pd.DataFrame(rows, columns=list(WORKER_COLUMNS))
