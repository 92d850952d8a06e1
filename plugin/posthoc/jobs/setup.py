"""Study setup in Label Studio: one project per worker, tasks in planned order with their pre-fill, accounts.

Paper 000, section 2.1 and Figure 2 (a worker verifies, edits or removes every pre-filled entity
link of a task); paper 004, section 4 (each worker gets their own randomised order). What
:func:`create_study` does, given the opened study (:class:`posthoc.study.plan.study.Study`: its manifest, index,
workers and label config), where it goes (:class:`~posthoc.jobs.setup_options.SetupTarget`) and how
(:class:`~posthoc.jobs.setup_options.SetupOptions`):

1. makes every worker's account (e-mail ``<worker>@<domain>``, password generated once and kept in the
   accounts file, 0600) through the sign-up form; the organisation's members are listed only when some worker's
   user id is not yet in the accounts file (:mod:`posthoc.jobs.accounts`);
2. finds the study's projects by marker (:func:`posthoc.study.live.projects.find_study_projects`): the projects
   the setup record names, by id, and every project only while some worker's is unknown (a first run), both
   with ``include=`` the fields read here; then, for several workers at once (``options.concurrency`` projects, a
   thread pool), for each:
3. finds or creates the worker's project: title ``<study> · worker <worker>``, the marker in its
   ``expert_instruction``, settings: the label config, Sequential sampling, ``maximum_annotations=1``, no
   skip button, the backend's neutral ``model_version`` (asked once a run, through the first project set up;
   every later project is created with it, so only that one needs a ``PATCH``);
4. connects the ML backend (it stays connected for live tasks and re-prediction) and removes the webhook Label
   Studio makes for it (``options.webhook``: keeps it, or makes it again), unless the project is already so: the
   organisation's webhook listing shows the webhook there or not, and the setup record names the backend the
   project was checked with (:meth:`posthoc.jobs.setup_record.SetupRecord.connected`); a project created with
   the model version already known is connected at the end instead (after step 6), so that the webhook Label
   Studio makes for the backend does not carry the imported tasks to it (``TASKS_CREATED``: about a sixth of
   Label Studio's import time);
5. imports the worker's tasks in the planned order (task data: :mod:`posthoc.labelstudio.tasks`) **with their
   prediction inline**: exactly what the backend answers for that task, computed here from the manifest by the
   same code (:func:`posthoc.labelstudio.payloads.manifest_prediction`), under the backend's model version.
   Label Studio serves a Sequential project in import order, so the tasks already there must be a prefix of
   the plan and only the rest is imported (an interrupted run resumes, nothing doubles);
6. reads the project's predictions back (one listing; the tasks are those the import answered with, in order,
   or for a project that held tasks before, one paged task listing) and checks that each task holds exactly one
   prediction whose regions are exactly the manifest's pre-filled mentions (result ids = ``mention_id``,
   offsets and link): a task without one (an interrupted import) is named and given it in one request, surplus
   duplicates are deleted, a wrong prediction is an error. The project is then recorded as checked
   (:mod:`posthoc.jobs.setup_record`).

Only then are the workers' links returned. A rerun after success trusts the record where Label Studio's project
listing agrees with it (same project, task and prediction counts, model version): it reads each worker's user
by id, lists the recorded projects by id, the webhooks and Data Manager tabs, reads no task, and changes nothing;
no listing of every project or member, so it costs the same on a server holding 1,000 other projects.
``options.verify`` reads every project back instead (and lists every project, to find doubled markers).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.jobs.accounts import ensure_accounts
from posthoc.jobs.setup_options import CONCURRENCY, SetupOptions, SetupTarget
from posthoc.jobs.setup_record import SetupRecord, default_setup_file
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.backend import BackendLink, check_backend_health
from posthoc.labelstudio.calls import PROJECT_COUNTS, PROJECT_FIELDS
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.payloads import has_links, manifest_prediction, prediction_regions, regions_differ
from posthoc.labelstudio.tasks import study_task_data
from posthoc.labelstudio.versions import warn_if_unsupported
from posthoc.labelstudio.views import ensure_tabs
from posthoc.study.live.projects import MARKER, find_study_projects, marker_html, project_marker, project_markers
from posthoc.study.plan.logins import default_accounts_file, read_accounts

if TYPE_CHECKING:
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.study import Study

IMPORT_BATCH = 500  # tasks a POST: Label Studio imports ~3 ms a task with predictions inline
SEQUENTIAL = "Sequential sampling"
logger = logging.getLogger("posthoc")


@dataclass(frozen=True)
class WorkerProject:
    """A worker's project: where to label and how to log in (the password is in the accounts file)."""

    worker: str
    project_id: int
    title: str
    email: str
    user_id: int
    n_tasks: int
    link: str


@dataclass(frozen=True)
class StudySetup:
    """The result of :func:`create_study`: one :class:`WorkerProject` per worker, and what this run changed."""

    study: str
    url: str
    projects: tuple[WorkerProject, ...]
    accounts_file: Path
    created_projects: int
    imported_tasks: int
    created_users: int
    predicted_tasks: int
    deleted_duplicates: int

    def project_ids(self) -> dict[str, int]:
        return {p.worker: p.project_id for p in self.projects}


def worker_project_title(study: str, worker: str) -> str:
    """The project title (Label Studio limits titles to 50 characters)."""
    return f"{study} · worker {worker}"[:50]


def stream_link(url: str, project_id: int) -> str:
    """The page that opens a project's labeling stream (Label All Tasks)."""
    return f"{url.rstrip('/')}/projects/{project_id}/data?labeling=1"


# ---------------------------------------------------------------------------------------------- steps
def _project_settings(label_config: str, model_version: str | None) -> dict[str, object]:
    settings: dict[str, object] = {
        "label_config": label_config,
        "sampling": SEQUENTIAL,
        "maximum_annotations": 1,
        "show_skip_button": False,
        "show_instruction": False,
        "show_collab_predictions": True,
        "evaluate_predictions_automatically": False,
    }
    if model_version is not None:
        settings |= {"model_version": model_version}
    return settings


#: the project fields a run reads from the listing (``include=`` answers only these): the markers, the settings
#: :func:`_ensure_project` compares, the title, and what the setup record compares (counts, model version)
SETUP_FIELDS = (*PROJECT_FIELDS, *_project_settings("", None), "model_version", *PROJECT_COUNTS)


def _ensure_project(client: LabelStudioClient, found: ls.Project | None, *, study: str, worker: str,
                    label_config: str, model_version: str | None) -> tuple[ls.Project, bool]:
    """The worker's project, created (with ``model_version`` when known: Label Studio checks a project's model
    version against its predictions only when it changes) or brought to the study's settings."""
    marker = project_marker(study, worker)
    wanted = {**_project_settings(label_config, None),
              "description": f"Entity-link verification, study {study}: the tasks of {worker}.",
              "expert_instruction": marker_html(marker)}
    if found is None:
        settings = {"title": worker_project_title(study, worker), **wanted}
        if model_version is not None:
            settings |= {"model_version": model_version}
        return client.create_project(settings), True

    def differs(key: str, value: object) -> bool:
        have = found.get(key) if found is not None else None
        if isinstance(value, str) and isinstance(have, str):
            return have.strip() != value.strip()  # Label Studio strips the config's trailing newline
        return bool(have != value)

    if any(differs(key, value) for key, value in wanted.items()):
        found = client.update_project(ls.int_id(found), wanted)
    return found, False


@dataclass
class _Counts:
    projects: int = 0
    tasks: int = 0
    predicted: int = 0
    deleted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)


@dataclass(frozen=True)
class _SetupRun:
    """What every worker's project needs besides the opened study: the client, the planned task keys, the
    backend link, the label config, this run's counts and the setup record."""

    study: Study
    client: LabelStudioClient
    planned: dict[str, list[str]]  # worker -> task keys in planned order
    link: BackendLink
    config: str
    counts: _Counts
    record: SetupRecord
    landing: dict[str, str] = field(default_factory=dict)  # links that redirect -> their page (``kb_index``)

    @property
    def index(self) -> ManifestIndex:
        """The manifest's texts and pre-fill (:attr:`Study.index`), read when a project first needs them (a rerun
        with nothing to do never does)."""
        return self.study.index


def import_items(index: ManifestIndex, keys: list[str], positions: range | list[int], *, label_config: str,
                 model_version: str, landing: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The tasks to import for the worker batch ``keys`` at ``positions`` (0-based): each task's data and its
    prediction inline (what the backend answers for it: :func:`posthoc.labelstudio.payloads.manifest_prediction`;
    the label config's own check runs on the batch's first task, the offsets' on every task). ``landing``: the
    page each link lands on (:func:`links_landing`), shown after a link that redirects in the task's KB pages."""
    items = []
    for number, position in enumerate(positions):
        key = keys[position]
        text, mentions = index.texts[key], index.prefill_rows(key)
        prediction = manifest_prediction(mentions, text, label_config, model_version=model_version,
                                         validate=number == 0)
        shown = mentions if not landing else [{**row, "lands_on": landing.get(str(row.get("link")))}
                                              for row in mentions]
        items.append({"data": study_task_data(key, text, shown, number=position + 1, total=len(keys)),
                      "predictions": [prediction]})
    return items


def links_landing(kb_index: Path, links: Iterable[str]) -> dict[str, str]:
    """``link -> the article's link`` for those of ``links`` that a reader lands elsewhere from (a redirect,
    followed to its end) by the KB index of ``posthoc kb build`` (:class:`posthoc.readers.wiki_index.WikiIndex`:
    one look-up for all of them); a link that lands on itself, or that the index cannot place, is not in it."""
    from posthoc.readers.wiki_index import WikiIndex

    index = WikiIndex(kb_index)
    try:
        keys = index.entity_keys(links)
    finally:
        index.close()
    return {link: key for link, key in keys.items() if key != link}


def _import_missing(ctx: _SetupRun, project_id: int, keys: list[str], tasks: list[ls.Task],
                    model_version: str) -> tuple[list[ls.Task], int]:
    """Import the planned tasks that are not there yet, with their predictions; returns (all tasks, imported)."""
    present = [str(ls.task_data(t).get("task_key", "")) for t in tasks]
    if present != keys[:len(present)]:
        raise PosthocServiceError(
            f"project {project_id} holds tasks that are not a prefix of the planned order "
            f"({len(present)} tasks there); delete the project in Label Studio and rerun study setup")
    missing = list(range(len(present), len(keys)))
    ids: list[int] = []
    for start in range(0, len(missing), IMPORT_BATCH):
        batch = import_items(ctx.index, keys, missing[start:start + IMPORT_BATCH], label_config=ctx.config,
                             model_version=model_version, landing=ctx.landing)
        ids += ctx.client.import_tasks(project_id, batch)
    if missing and not present and len(ids) == len(keys):
        # a project that was empty: its tasks are the ones the import named, in the order sent
        by_task = ctx.client.project_predictions(project_id)
        if not set(by_task) <= set(ids):
            raise PosthocServiceError(f"project {project_id}: after import it holds predictions on tasks this run "
                                      "did not import; delete the project in Label Studio and rerun study setup")
        tasks = [{"id": i, "data": {"task_key": key}, "predictions": [*by_task.get(i, [])]}
                 for i, key in zip(ids, keys, strict=True)]
    elif missing:
        tasks = ctx.client.tasks_with_predictions(project_id)
        if [str(ls.task_data(t).get("task_key", "")) for t in tasks] != keys:
            raise PosthocServiceError(f"project {project_id}: after import the tasks differ from the plan")
    return tasks, len(missing)


def _check_predictions(ctx: _SetupRun, project_id: int, tasks: list[ls.Task], model_version: str) -> None:
    """Give a task without its prediction the manifest's (one request), delete duplicates; fail when a task holds
    a prediction other than the manifest's pre-fill."""
    lacking: list[ls.Task] = []
    deleted = 0
    for task in tasks:
        key, task_id = str(ls.task_data(task)["task_key"]), ls.record_id(task)
        listed = ls.listed_predictions(task)
        full = listed is not None and all(isinstance(p, dict) and "result" in p for p in listed)
        predictions = sorted(listed if listed is not None and full else ctx.client.predictions(ls.int_id(task)),
                             key=ls.int_id)
        if not predictions:
            lacking.append(task)
            continue
        for extra in predictions[1:]:
            ctx.client.delete(f"/api/predictions/{ls.int_id(extra)}/")
            deleted += 1
        kept = predictions[0]
        linked = has_links(kept)
        differ = regions_differ(prediction_regions(kept), ctx.index.regions(key), links=linked)
        if differ:
            raise PosthocServiceError(
                f"project {project_id}, task {task_id} (key {key}): the prediction's regions {differ} differ "
                f"from the manifest's mentions in offsets{' or link' if linked else ''}; is the backend "
                "serving another manifest?")
        kept_version = ls.model_version(kept)
        if kept_version != model_version:
            raise PosthocServiceError(
                f"project {project_id}, task {task_id}: prediction model_version {kept_version!r} "
                f"is not the backend's {model_version!r} (Label Studio would re-predict and duplicate)")
    if lacking:
        ids = ", ".join(str(ls.record_id(t)) for t in lacking[:5]) + (" ..." if len(lacking) > 5 else "")
        logger.warning("project %s: %d task(s) without their prediction (ids %s, an interrupted import?): "
                       "adding the manifest's", project_id, len(lacking), ids)
        imported = []
        for task in lacking:
            key = str(ls.task_data(task)["task_key"])
            prediction = manifest_prediction(ctx.index.prefill_rows(key), ctx.index.texts[key], ctx.config,
                                             model_version=model_version)
            imported.append({"task": ls.int_id(task), **prediction})
        ctx.client.import_predictions(project_id, imported)
    ctx.counts.add(predicted=len(lacking), deleted=deleted)


def _setup_project(ctx: _SetupRun, worker: str, found: ls.Project | None) -> tuple[ls.Project, int]:
    """Steps 3 to 6 of the module docstring for one worker; returns (the project, its number of tasks)."""
    client = ctx.client
    project, created = _ensure_project(client, found, study=ctx.study.name, worker=worker, label_config=ctx.config,
                                       model_version=ctx.link.known_version)
    project_id = ls.int_id(project)
    # a new project is connected after its import when the model version is known: the webhook Label Studio makes
    # for the backend would otherwise carry every imported task to it (TASKS_CREATED, ~0.36 ms of Label Studio's
    # time a task); the first project of a run is connected first, to ask the version through it
    connect_after = created and ctx.link.known_version is not None
    recorded = not created and ctx.record.connected(worker, project_id, ctx.link.url)
    if not connect_after and (created or not ctx.link.connected(project_id, recorded=recorded)):
        ctx.link.connect(project_id, new=created, find_webhook=False)
    keys = ctx.planned[worker]
    if not created and ctx.record.trusted(worker, project, len(keys)):
        if not recorded:  # a record from before it named the backend: it does now (connected just above)
            ctx.record.checked(worker, project_id, len(keys), str(ls.model_version(project)), backend=ctx.link.url)
        return project, len(keys)  # checked by an earlier run, and Label Studio's counts agree
    model_version = ctx.link.model_version(project_id)
    tasks: list[ls.Task] = [] if created else client.tasks_with_predictions(project_id)
    tasks, imported = _import_missing(ctx, project_id, keys, tasks, model_version)
    ctx.counts.add(projects=int(created), tasks=imported, predicted=imported)
    _check_predictions(ctx, project_id, tasks, model_version)
    # only now for a project made before the version was known: Label Studio accepts a changed model_version
    # only when its stored predictions (or a backend's title) carry it
    if ls.model_version(project) != model_version:
        project = {**project, **client.update_project(project_id, {"model_version": model_version})}
    if connect_after:
        ctx.link.connect(project_id, new=True, find_webhook=False)
    ctx.record.checked(worker, project_id, len(tasks), model_version, backend=ctx.link.url)
    return project, len(tasks)


def create_study(study: Study, target: SetupTarget, options: SetupOptions | None = None) -> StudySetup:
    """Set up (or complete) ``study`` in the Label Studio of ``target`` (see the module docstring).

    ``study``: the opened manifest (its label config, :attr:`Study.label_config`, is the projects'; ``None``: the
    bundled ``label_configs/entity_verification.xml``). ``target``: the Label Studio, its admin token and the ML
    backend (:class:`~posthoc.jobs.setup_options.SetupTarget`). ``options``: how the run behaves
    (:class:`~posthoc.jobs.setup_options.SetupOptions`; ``None``: the defaults). Raises PosthocInputError for a
    manifest without workers, PosthocServiceError when Label Studio or the backend fails, or when a task holds a
    prediction other than the manifest's.
    """
    from posthoc.paths import label_config as read_label_config

    options = options if options is not None else SetupOptions()
    config = study.label_config if study.label_config is not None else read_label_config("entity_verification")
    accounts_path = Path(options.accounts_file) if options.accounts_file is not None else study.accounts_file
    client = LabelStudioClient(target.url, target.token, hide=[target.backend_secret])
    client.whoami()
    warn_if_unsupported(client)  # one line for a server outside 1.20-1.23
    check_backend_health(target.backend_url, wait=options.backend_wait)
    workers = list(study.workers)
    if not workers:
        raise PosthocInputError(f"{study.path}: the manifest has no workers; re-run `posthoc study plan`")
    # account first: its password must be on disk before Label Studio knows it
    accounts = ensure_accounts(client, workers, accounts_path, study=study.name, email_domain=options.email_domain,
                               concurrency=options.concurrency, reset_password=target.reset_password)
    planned_frame = study.manifest.tasks()
    planned = {str(w): [str(k) for k in group["task_key"]] for w, group in planned_frame.groupby("worker", sort=False)}
    setup_file = Path(options.setup_file) if options.setup_file is not None else default_setup_file(study.path)
    ctx = _SetupRun(study=study, client=client, planned={w: planned.get(w, []) for w in workers},
                    link=BackendLink(client, target.backend_url, target.backend_secret, webhook=options.webhook),
                    config=config, counts=_Counts(),
                    record=SetupRecord(setup_file, study=study.name, trust=not options.verify),
                    landing=links_landing(options.kb_index, study.manifest.source_mentions()["link"].dropna()
                                          .astype(str)) if options.kb_index is not None else {})
    done = _setup_projects(ctx, workers, options)
    ensure_tabs(client, [ls.int_id(project) for project, _ in done.values()])  # no raw kb_pages HTML in the DM
    results = []
    for worker in workers:
        project, n_tasks = done[worker]
        email, user_id = accounts.users[worker]
        project_id = ls.int_id(project)
        results.append(WorkerProject(worker=worker, project_id=project_id, title=str(ls.project_title(project)),
                                     email=email, user_id=user_id, n_tasks=n_tasks,
                                     link=stream_link(target.url, project_id)))
    counts = ctx.counts
    return StudySetup(study=study.name, url=target.url.rstrip("/"), projects=tuple(results),
                      accounts_file=accounts_path, created_projects=counts.projects, imported_tasks=counts.tasks,
                      created_users=accounts.created, predicted_tasks=counts.predicted,
                      deleted_duplicates=counts.deleted)


def _setup_projects(ctx: _SetupRun, workers: list[str], options: SetupOptions) -> dict[str, tuple[ls.Project, int]]:
    """Steps 2 to 6 of the module docstring: each worker's project and its number of tasks, the first ones one at a
    time until a project told the backend's model version, then ``options.concurrency`` at once."""
    known = [] if options.verify else list(ctx.record.project_ids().values())
    existing = find_study_projects(ctx.client, ctx.study.name, workers, known_ids=known, include=SETUP_FIELDS)
    done: dict[str, tuple[ls.Project, int]] = {}
    bar = _progress(len(workers), options.progress)

    def one(worker: str) -> None:
        done[worker] = _setup_project(ctx, worker, existing.get(worker))
        bar.update(1)

    queue = list(workers)
    try:
        while queue and ctx.link.known_version is None:  # one at a time until a project told the model version
            one(queue.pop(0))
        with ThreadPoolExecutor(max_workers=max(1, options.concurrency)) as pool:
            list(pool.map(one, queue))
    finally:
        bar.close()
    return done


class _Bar(Protocol):
    """A progress bar: tqdm's, or :class:`_NoBar`."""

    def update(self, n: int) -> object: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> _Bar:
    if enabled:
        with contextlib.suppress(ImportError):
            from tqdm import tqdm

            bar: _Bar = tqdm(total=total, desc="workers", unit="project")
            return bar
    return _NoBar()


__all__ = ["CONCURRENCY", "IMPORT_BATCH", "MARKER", "SEQUENTIAL", "SetupOptions", "SetupTarget", "StudySetup",
           "WorkerProject", "create_study", "default_accounts_file", "default_setup_file", "project_markers",
           "read_accounts", "stream_link", "worker_project_title"]
