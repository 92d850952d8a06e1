"""``posthoc study status``: per-worker progress and control-task results of a running study.

Reads the annotations from Label Studio's API (the projects of this study; ``--url`` or ``POSTHOC_LS_URL``, the
token from ``LABEL_STUDIO_TOKEN``): a study has no webhook by default (``posthoc study create --webhook``), so
that is where its progress is. The backend's webhook event store is read too when it exists (``--events-db``,
or ``<manifest stem>.events.sqlite3`` beside the manifest); Label Studio's view wins where both know an
annotation (it also knows annotations made while the backend was down or before it was connected). The default
event store holding no event at all (the backend makes the file on start; without the webhook nothing fills it)
is no source: with no URL the error names ``--url``; one named by ``--events-db`` is read as it is.
Computation: :mod:`posthoc.study.live.progress`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click
import pandas as pd

from posthoc.errors import PosthocInputError

if TYPE_CHECKING:
    from posthoc.labelstudio.records import Project
    from posthoc.study.plan.manifest import Manifest


def study_project_ids(projects: Iterable[Project], study: str) -> list[int]:
    """Ids of the Label Studio projects of ``study``: those carrying its worker markers
    (:func:`posthoc.study.live.projects.study_projects`); none when the study has not been created."""
    from posthoc.labelstudio import records as ls
    from posthoc.study.live.projects import study_projects

    return sorted(ls.int_id(p) for p in study_projects(projects, study).values())


def annotations_from_label_studio(url: str, token: str, manifest: Manifest) -> pd.DataFrame:
    """The study's annotations as Label Studio holds them (one row an annotation, see progress), from the
    study's projects: those the setup record names, by id, or every project's markers while some worker's is
    unknown (:func:`posthoc.study.live.projects.find_study_projects`)."""
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.labelstudio import records as ls
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.labelstudio.versions import warn_if_unsupported
    from posthoc.study.live.progress import annotations_from_tasks
    from posthoc.study.live.projects import find_study_projects

    keys = set(manifest.tasks()["task_key"])
    client = LabelStudioClient(url, token)
    warn_if_unsupported(client)  # one line for a server outside 1.20-1.23
    study = str(manifest.study)
    known = recorded_project_ids(default_setup_file(Path(manifest.path)), study=study).values()
    found = find_study_projects(client, study, manifest.workers(), known_ids=known, any_worker=True)
    tasks: list[Mapping[str, object]] = []
    for project_id in study_project_ids(found.values(), study):
        for task in client.tasks(project_id):
            data = ls.task_data(task)
            if isinstance(data, dict) and data.get("task_key") in keys and ls.task_annotations(task):
                tasks.append({**task, "project": ls.task_project(task, project_id)})
    return annotations_from_tasks(tasks)


def merge_annotations(from_events: pd.DataFrame, from_api: pd.DataFrame | None) -> pd.DataFrame:
    """Annotations of both sources, Label Studio's row kept where both have the same annotation id."""
    if from_api is None:
        return from_events
    extra = from_events[~from_events["annotation_id"].isin(from_api["annotation_id"])]
    frames = [f for f in (from_api, extra) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else from_api


@click.command("status")
@click.option("--manifest", type=click.Path(path_type=Path), required=True,
              help="The study manifest (from `posthoc study plan`).")
@click.option("--url", envvar="POSTHOC_LS_URL", default=None,
              help="Label Studio's URL (or env POSTHOC_LS_URL, as `eval \"$(posthoc ls env)\"` sets it): progress "
                   "is read from its API, where it is whether or not the study has the webhook.")
@click.option("--token-env", default="LABEL_STUDIO_TOKEN", show_default=True,
              help="Name of the environment variable holding the Label Studio API token (used with --url).")
@click.option("--events-db", type=click.Path(path_type=Path), default=None,
              help="The backend's webhook event store, for a study made with `posthoc study create --webhook` "
                   "(merged with the API's view when --url is given too) [default: beside the manifest, "
                   "<stem>.events.sqlite3, read when it exists].")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write workers.csv and controls.csv into (atomically).")
def status_command(manifest: Path, url: str | None, token_env: str, events_db: Path | None,
                   out: Path | None) -> None:
    """Show per-worker progress (tasks done / total, last activity) and control-task results, from Label Studio's
    API (--url) and, when there is one, the backend's webhook event store."""
    from posthoc.atomic import write_text_atomic
    from posthoc.study.live.progress import control_annotation_checks, worker_progress
    from posthoc.study.plan.manifest import Manifest

    opened = Manifest.open(manifest)
    from_events = _annotations_from_events(manifest, events_db, url=url)
    from_api = None
    if url:
        from posthoc.labelstudio.url import check_url

        check_url(url)
        token = os.environ.get(token_env)
        if not token:
            raise PosthocInputError(f"--url needs the API token in the environment variable {token_env} (`eval "
                                    "\"$(posthoc ls env --data-dir DIR)\"` sets it for a local server)")
        from_api = annotations_from_label_studio(url, token, opened)
    annotations = from_api if from_events is None else merge_annotations(from_events, from_api)
    assert annotations is not None
    controls = control_annotation_checks(opened, annotations)
    workers = worker_progress(opened, annotations, controls)
    sources = " + ".join(s for s, f in (("event store", from_events), ("Label Studio API", from_api)) if f is not None)
    click.echo(f"study {opened.study}: {len(annotations)} annotations ({sources})")
    click.echo(workers.to_string(index=False))
    click.echo("")
    click.echo("control tasks:" if len(controls) else "control tasks: none annotated yet")
    if len(controls):
        click.echo(controls.to_string(index=False))
    if out is not None:
        write_text_atomic(out / "workers.csv", workers.to_csv(index=False))
        write_text_atomic(out / "controls.csv", controls.to_csv(index=False))


def _annotations_from_events(manifest: Path, events_db: Path | None, *, url: str | None) -> pd.DataFrame | None:
    """The current annotations of the event store ``events_db`` (given: it must exist) or beside the manifest (when
    it exists and holds an event), else ``None``. Without ``url`` it is the only source, and a default one with no
    event at all is an error: a study without the webhook sends it none."""
    from posthoc.cli.backend import default_events_db
    from posthoc.study.live.events import EventStore, current_annotations

    path = events_db or default_events_db(manifest)
    if events_db is not None and not path.is_file():
        raise PosthocInputError(f"--events-db {path}: no such file (the backend creates it on start)")
    if not path.is_file():
        if url:
            return None
        raise PosthocInputError(f"no progress source: give Label Studio's URL with --url (or env POSTHOC_LS_URL) and "
                                f"its token in LABEL_STUDIO_TOKEN; there is no event store at {path} either (only a "
                                "study made with `posthoc study create --webhook` fills one)")
    events = EventStore(path).events()
    if events.empty and events_db is None:
        if url:
            return None  # the default store of a study without the webhook: the API is the source, and says so
        raise PosthocInputError(f"no progress source: {path} holds no webhook event (a study has none unless made "
                                "with `posthoc study create --webhook`); give Label Studio's URL with --url (or env "
                                "POSTHOC_LS_URL) and its token in LABEL_STUDIO_TOKEN")
    return current_annotations(events)
