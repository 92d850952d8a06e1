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

from pathlib import Path
from typing import TYPE_CHECKING

import click

from posthoc.cli.labelstudio_access import require_api_token, require_url, token_env_option, url_option
from posthoc.errors import PosthocInputError

if TYPE_CHECKING:
    import pandas as pd


@click.command("status")
@click.option("--manifest", type=click.Path(path_type=Path), required=True,
              help="The study manifest (from `posthoc study plan`).")
@url_option("Label Studio's URL: progress is read from its API, where it is whether or not the study has the "
            "webhook", dest="url")
@token_env_option
@click.option("--events-db", type=click.Path(path_type=Path), default=None,
              help="The backend's webhook event store, for a study made with `posthoc study create --webhook` "
                   "(merged with the API's view when --url is given too) [default: beside the manifest, "
                   "<stem>.events.sqlite3, read when it exists].")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write workers.csv and controls.csv into (atomically).")
def status_command(manifest: Path, url: str | None, token_env: str | None, events_db: Path | None,
                   out: Path | None) -> None:
    """Show per-worker progress (tasks done / total, last activity) and control-task results, from Label Studio's
    API (--url) and, when there is one, the backend's webhook event store."""
    from posthoc.atomic import write_text_atomic
    from posthoc.study.live.progress import (
        annotations_from_label_studio,
        control_annotation_checks,
        merge_annotations,
        worker_progress,
    )
    from posthoc.study.plan.manifest import Manifest

    opened = Manifest.open(manifest)
    from_events = _annotations_from_events(manifest, events_db, url=url)
    from_api = None
    if url:
        require_url(url)
        token = require_api_token(token_env)
        from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids

        known = recorded_project_ids(default_setup_file(manifest), study=str(opened.study)).values()
        from_api = annotations_from_label_studio(url, token, opened, known_ids=known)
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

