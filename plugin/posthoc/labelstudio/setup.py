"""Study setup in Label Studio: one project per worker, tasks in planned order, accounts, pre-fill.

Paper 000, section 2.1 and Figure 2 (a worker verifies, edits or removes every pre-filled entity
link of a task); paper 004, section 4 (each worker gets their own randomised order). What
:func:`create_study` does, for each worker of the manifest:

1. finds or creates the worker's project, recognised by a marker (``posthoc-study <study> worker
   <worker>``) kept in its ``expert_instruction`` as ``<meta name="MARKER">`` (never shown: the
   instructions are off and a meta tag renders as nothing; Label Studio's HTML cleaning strips comments
   but keeps this), so the description on the project card is for people;
   projects made before kept it in the description, and are still found there and moved;
   title ``<study> · worker <worker>``;
   settings: the label config, Sequential sampling, ``maximum_annotations=1``, no skip button,
   the backend's neutral ``model_version`` (re-applied on every run);
2. imports the worker's tasks in the planned order (task data: :mod:`posthoc.labelstudio.tasks`);
   Label Studio serves a Sequential project in import order, so the tasks already there must be a
   prefix of the plan and only the rest is imported (an interrupted run resumes, nothing doubles);
3. finds or creates the worker's account (e-mail ``<worker>@<domain>``, password generated once and
   kept in the accounts file, 0600), through the sign-up form (:mod:`posthoc.labelstudio.users`);
4. connects the ML backend (once) and asks it, through the Data Manager action
   ``retrieve_tasks_predictions``, to pre-fill every task that has no prediction yet;
5. checks that each task holds exactly one prediction whose regions are exactly the manifest's
   pre-filled mentions (result ids = ``mention_id``, offsets and link); surplus duplicates are deleted,
   a missing or wrong prediction is an error.

Only then are the workers' links returned. Rerunning after success changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.projects import MARKER, marker_html, project_marker, project_markers, study_projects  # noqa: F401 (re-exported: tests and older callers)
from posthoc.labelstudio.tasks import task_data
from posthoc.labelstudio.users import Account, ensure_user, find_user, worker_email
from posthoc.labelstudio.views import ensure_tab

IMPORT_BATCH = 200
SEQUENTIAL = "Sequential sampling"


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


def project_title(study: str, worker: str) -> str:
    """The project title (Label Studio limits titles to 50 characters)."""
    return f"{study} · worker {worker}"[:50]


def stream_link(url: str, project_id: int) -> str:
    """The page that opens a project's labeling stream (Label All Tasks)."""
    return f"{url.rstrip('/')}/projects/{project_id}/data?labeling=1"


# ---------------------------------------------------------------------------------------------- accounts file
def read_accounts(path: Path) -> dict[str, dict[str, str]]:
    """``{worker: {"email", "password"}}`` from the accounts file (empty when it does not exist)."""
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PosthocInputError(f"{path}: not an accounts file ({exc}); restore it or remove it") from exc
    if not isinstance(raw, dict):
        raise PosthocInputError(f"{path}: not an accounts file (expected an object of workers)")
    for worker, account in raw.items():
        if not isinstance(account, dict):
            raise PosthocInputError(f"{path}: worker {worker!r} is not an object with email and password; "
                                    "restore the file or remove it")
    return {str(k): dict(v) for k, v in raw.items()}


def _write_accounts(path: Path, accounts: dict[str, dict[str, str]]) -> None:
    write_text_atomic(path, json.dumps(accounts, indent=2, sort_keys=True) + "\n", permissions=0o600)


def default_accounts_file(manifest_path: Path) -> Path:
    """Where the annotators' generated passwords are kept: ``<manifest stem>.accounts.json`` beside it."""
    return manifest_path.with_name(f"{manifest_path.stem}.accounts.json")


# ---------------------------------------------------------------------------------------------- steps
def _project_settings(label_config: str, model_version: str | None) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "label_config": label_config,
        "sampling": SEQUENTIAL,
        "maximum_annotations": 1,
        "show_skip_button": False,
        "show_instruction": False,
        "show_collab_predictions": True,
        "evaluate_predictions_automatically": False,
    }
    if model_version is not None:
        settings["model_version"] = model_version
    return settings


def _ensure_project(client: LabelStudioClient, found: dict[str, Any] | None, *, study: str, worker: str,
                    label_config: str) -> tuple[dict[str, Any], bool]:
    marker = project_marker(study, worker)
    wanted = {**_project_settings(label_config, None),
              "description": f"Entity-link verification, study {study}: the tasks of {worker}.",
              "expert_instruction": marker_html(marker)}
    if found is None:
        created = client.post("/api/projects/", {"title": project_title(study, worker), **wanted})
        return dict(created), True
    def differs(key: str, value: Any) -> bool:
        have = found.get(key) if found is not None else None
        if isinstance(value, str) and isinstance(have, str):
            return have.strip() != value.strip()  # Label Studio strips the config's trailing newline
        return bool(have != value)

    if any(differs(key, value) for key, value in wanted.items()):
        found = dict(client.patch(f"/api/projects/{found['id']}/", wanted))
    return found, False


def _import_missing(client: LabelStudioClient, project_id: int, planned: list[dict[str, str]],
                    tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Import the planned tasks that are not there yet; returns (all tasks in id order, number imported)."""
    present = [str(t["data"].get("task_key", "")) for t in tasks]
    keys = [t["task_key"] for t in planned]
    if present != keys[:len(present)]:
        raise PosthocServiceError(
            f"project {project_id} holds tasks that are not a prefix of the planned order "
            f"({len(present)} tasks there); delete the project in Label Studio and rerun study setup")
    missing = planned[len(present):]
    for start in range(0, len(missing), IMPORT_BATCH):
        batch = missing[start:start + IMPORT_BATCH]
        client.post(f"/api/projects/{project_id}/import", [{"data": data} for data in batch],
                    commit_to_project="true", return_task_ids="true")
    if missing:
        tasks = list(client.tasks(project_id))
        if [str(t["data"].get("task_key", "")) for t in tasks] != keys:
            raise PosthocServiceError(f"project {project_id}: after import the tasks differ from the plan")
    return tasks, len(missing)


def _ensure_backend(client: LabelStudioClient, project_id: int, backend_url: str,
                    backend_secret: str | None) -> None:
    url = backend_url.rstrip("/")
    connected = [b for b in client.ml_backends(project_id) if str(b.get("url", "")).rstrip("/") == url]
    auth: dict[str, Any] = {}
    if backend_secret:
        auth = {"auth_method": "BASIC_AUTH", "basic_auth_user": "labelstudio", "basic_auth_pass": backend_secret}
    if connected:
        if auth and connected[0].get("auth_method") != "BASIC_AUTH":
            client.patch(f"/api/ml/{connected[0]['id']}", {"url": url, "project": project_id, **auth})
    else:
        client.post("/api/ml/", {"url": url, "project": project_id, "title": "posthoc pre-fill",
                                 "is_interactive": False, **auth})
    if backend_secret:
        _authorise_webhook(client, project_id, url, backend_secret)


def _authorise_webhook(client: LabelStudioClient, project_id: int, backend_url: str, secret: str) -> None:
    """Give the webhook Label Studio made for the backend the token the backend's /webhook requires.

    The header holds a token derived from the secret (HMAC), never the secret itself: webhook headers are
    readable by every member of the organisation in open-source Label Studio.
    """
    from posthoc_backend.auth import webhook_token

    header = {"Authorization": f"Bearer {webhook_token(secret)}"}
    for hook in client.get("/api/webhooks/", project=project_id) or []:
        if str(hook.get("url", "")).rstrip("/") == f"{backend_url}/webhook" and hook.get("headers") != header:
            client.patch(f"/api/webhooks/{hook['id']}/", {"headers": header})


def _backend_model_version(client: LabelStudioClient, project_id: int, backend_url: str) -> str:
    url = backend_url.rstrip("/")
    backend = next(b for b in client.ml_backends(project_id) if str(b.get("url", "")).rstrip("/") == url)
    answer = client.get(f"/api/ml/{backend['id']}/versions")
    versions = answer.get("versions", []) if isinstance(answer, dict) else []
    if len(versions) != 1:
        raise PosthocServiceError(f"the ML backend at {url} reports versions {versions}; it must report exactly one "
                                  "neutral model version (see docs/backend.md)")
    return str(versions[0])


def _expected_regions(manifest: Any, task_key: str) -> dict[str, tuple[int, int, str]]:
    frame = manifest.prefill(task_key)
    return {str(r.mention_id): (int(r.start), int(r.end), r.link if isinstance(r.link, str) else "")
            for r in frame.itertuples(index=False)}


def regions_differ(got: dict[str, tuple[int, int, str]], expected: dict[str, tuple[int, int, str]], *,
                   links: bool) -> list[str]:
    """Region ids whose offsets (and, with ``links``, link) differ from the manifest, or are missing / extra."""
    width = 3 if links else 2
    return sorted(k for k in set(got) | set(expected) if got.get(k, ())[:width] != expected.get(k, ())[:width])


def _prediction_regions(prediction: dict[str, Any]) -> dict[str, tuple[int, int, str]]:
    regions: dict[str, tuple[int, int, str]] = {}
    links: dict[str, str] = {}
    for item in prediction.get("result", []):
        value = item.get("value", {})
        if item.get("type") == "labels":
            regions[str(item["id"])] = (int(value["start"]), int(value["end"]), "")
        elif item.get("type") == "textarea":
            texts = value.get("text") or [""]
            links[str(item["id"])] = str(texts[0])
    return {key: (start, end, links.get(key, "")) for key, (start, end, _) in regions.items()}


def _check_predictions(client: LabelStudioClient, manifest: Any, project_id: int, tasks: list[dict[str, Any]],
                       model_version: str) -> int:
    """Delete duplicate predictions; fail when a task lacks its pre-fill or holds the wrong one."""
    deleted = 0
    for task in tasks:
        key = str(task["data"]["task_key"])
        listed = task.get("predictions")
        full = isinstance(listed, list) and all(isinstance(p, dict) and "result" in p for p in listed)
        predictions = sorted(listed if full else client.predictions(int(task["id"])),  # type: ignore[arg-type]
                             key=lambda p: int(p["id"]))
        if not predictions:
            raise PosthocServiceError(
                f"project {project_id}, task {task['id']} (key {key}) has no prediction after pre-fill; "
                "check that the ML backend serves this study's manifest and answers /predict")
        for extra in predictions[1:]:
            client.delete(f"/api/predictions/{extra['id']}/")
            deleted += 1
        kept = predictions[0]
        expected = _expected_regions(manifest, key)
        got = _prediction_regions(kept)
        has_links = any(item.get("type") == "textarea" for item in kept.get("result", []))
        differ = regions_differ(got, expected, links=has_links)
        if differ:
            raise PosthocServiceError(
                f"project {project_id}, task {task['id']} (key {key}): the prediction's regions {differ} differ "
                f"from the manifest's mentions in offsets{' or link' if has_links else ''}; is the backend "
                "serving another manifest?")
        if kept.get("model_version") != model_version:
            raise PosthocServiceError(
                f"project {project_id}, task {task['id']}: prediction model_version {kept.get('model_version')!r} "
                f"is not the backend's {model_version!r} (Label Studio would re-predict and duplicate)")
    return deleted


def _planned_tasks(manifest: Any, worker: str) -> list[dict[str, str]]:
    frame = manifest.tasks(worker)
    planned = []
    for number, row in enumerate(frame.itertuples(index=False), start=1):
        prefill = manifest.prefill(row.task_key).to_dict("records")
        planned.append(task_data(str(row.task_key), str(row.text), prefill, number=number, total=len(frame)))
    return planned


def create_study(manifest: Any, *, url: str, token: str, backend_url: str, label_config: str | None = None,
                 accounts_file: Path | None = None, email_domain: str = "posthoc.local",
                 backend_secret: str | None = None, reset_password: Callable[[str, str], None] | None = None,
                 progress: bool = False) -> StudySetup:
    """Set up (or complete) the study of ``manifest`` in the Label Studio at ``url`` (see the module docstring).

    ``manifest``: a :class:`posthoc.study.manifest.Manifest` or its path. ``token``: an admin's API
    token. ``backend_url``: the ML backend as Label Studio reaches it. ``label_config``: default
    ``label_configs/entity_verification.xml``. ``accounts_file``: where generated annotator passwords are
    kept (0600; default beside the manifest). ``backend_secret``: the backend's shared secret, sent as
    basic auth. ``reset_password(email, password)``: repairs an account with an unknown password
    (local data dir only). Raises PosthocServiceError when Label Studio or the backend fails, or when
    a task is not pre-filled exactly once.
    """
    from posthoc.paths import label_config as read_label_config
    from posthoc.study.manifest import Manifest

    opened = Manifest.open(Path(manifest)) if isinstance(manifest, (str, os.PathLike)) else manifest
    config = label_config if label_config is not None else read_label_config("entity_verification")
    accounts_path = Path(accounts_file) if accounts_file is not None else default_accounts_file(Path(opened.path))
    accounts = read_accounts(accounts_path)
    client = LabelStudioClient(url, token, hide=[backend_secret])
    client.whoami()
    study = str(opened.study)
    workers = list(opened.workers())
    if not workers:
        raise PosthocInputError(f"{opened.path}: the manifest has no workers; re-run `posthoc study plan`")
    existing = study_projects(client.projects(), study, workers)
    results: list[WorkerProject] = []
    counts = {"projects": 0, "tasks": 0, "users": 0, "predicted": 0, "deleted": 0}
    bar = _progress(workers, progress)
    for worker in bar:
        # account first: its password must be on disk before Label Studio knows it
        entry = accounts.get(worker)
        if entry is None:
            entry = {"email": worker_email(worker, domain=email_domain), "password": secrets.token_urlsafe(12)}
            accounts[worker] = entry
            _write_accounts(accounts_path, accounts)
        known = find_user(url, token, entry["email"]) is not None
        account: Account = ensure_user(url, token, email=entry["email"], password=entry["password"],
                                       first_name="Worker", last_name=worker, reset_password=reset_password)
        counts["users"] += 0 if known else 1

        project, created = _ensure_project(client, existing.get(worker), study=study, worker=worker,
                                           label_config=config)
        counts["projects"] += int(created)
        project_id = int(project["id"])
        tasks, imported = _import_missing(client, project_id, _planned_tasks(opened, worker),
                                          list(client.tasks(project_id)))
        counts["tasks"] += imported
        ensure_tab(client, project_id)  # no raw kb_pages HTML in the Data Manager

        _ensure_backend(client, project_id, backend_url, backend_secret)
        model_version = _backend_model_version(client, project_id, backend_url)
        # the task's own list, not its total_predictions counter (not refreshed when a prediction is deleted)
        unpredicted = [int(t["id"]) for t in tasks if not t.get("predictions")]
        if unpredicted:
            client.dm_action(project_id, "retrieve_tasks_predictions", unpredicted)
            counts["predicted"] += len(unpredicted)
            tasks = list(client.tasks(project_id))
        counts["deleted"] += _check_predictions(client, opened, project_id, tasks, model_version)
        # only now: Label Studio accepts a model_version that its stored predictions carry
        if project.get("model_version") != model_version:
            client.patch(f"/api/projects/{project_id}/", {"model_version": model_version})
        results.append(WorkerProject(worker=worker, project_id=project_id, title=str(project["title"]),
                                     email=account.email, user_id=account.user_id, n_tasks=len(tasks),
                                     link=stream_link(url, project_id)))
    return StudySetup(study=study, url=url.rstrip("/"), projects=tuple(results), accounts_file=accounts_path,
                      created_projects=counts["projects"], imported_tasks=counts["tasks"],
                      created_users=counts["users"], predicted_tasks=counts["predicted"],
                      deleted_duplicates=counts["deleted"])


def _progress(workers: list[str], enabled: bool) -> Any:
    if not enabled:
        return workers
    with contextlib.suppress(ImportError):
        from tqdm import tqdm

        return tqdm(workers, desc="workers", unit="project")
    return workers
