"""A finished study off a shared Label Studio, its data kept first; and a worker's login printed again.

:func:`retire_study` (``posthoc study retire``):

1. finds the study's projects by their markers (:func:`posthoc.study.live.projects.find_study_projects`, the ids of
   the setup record first) and its workers' accounts: the logins of the accounts file ``posthoc study create``
   wrote beside the manifest, else the default ``<worker>@<study domain>``, among the organisation's members;
2. exports every project (a snapshot export, the JSON ``posthoc score --export-file`` reads) to
   ``OUT/<study>.<worker>.project<id>.json``: written atomically, readable by its owner only (0600, ``OUT`` 0700);
3. only with ``apply=True``: deletes the projects, then the accounts whose login is in the study's own domain
   (:func:`posthoc.labelstudio.users.study_email_domain`, ``study create``'s default). Other logins (a shared
   ``@posthoc.local`` of studies made before logins were per study, or an ``--email-domain``) may serve another
   study: they are kept and listed.

Without ``apply`` Label Studio is not changed (the exports are written: reading changes nothing). A rerun finds no
project and no account left: it writes and deletes nothing. Local files (manifest, accounts file, setup record)
are left as they are.

:func:`worker_login`: a worker's link and login as ``posthoc study create`` printed them, with that worker's own
password from the accounts file (no other secret).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from posthoc.atomic import atomic_open
from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.calls import PROJECT_COUNTS, PROJECT_FIELDS
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.users import login_domain, organisation_users, study_email_domain, worker_email
from posthoc.study.plan.logins import default_accounts_file, read_accounts


@dataclass(frozen=True)
class StudyProject:
    """A worker's project of the study in Label Studio; ``export``: where it was exported (``None``: not yet)."""

    worker: str
    project_id: int
    n_tasks: int
    export: Path | None = None


@dataclass(frozen=True)
class StudyAccount:
    """A worker's account in Label Studio; ``kept``: why it is not deleted (``None``: it is the study's own)."""

    worker: str
    email: str
    user_id: int
    kept: str | None = None


@dataclass(frozen=True)
class StudyRetirement:
    """What :func:`retire_study` found, exported and (``applied``) deleted."""

    study: str
    url: str
    projects: tuple[StudyProject, ...]
    accounts: tuple[StudyAccount, ...]
    applied: bool

    @property
    def deleted_accounts(self) -> tuple[StudyAccount, ...]:
        """The accounts that are (or, without ``applied``, would be) deleted: those of the study's own domain."""
        return tuple(a for a in self.accounts if a.kept is None)


@dataclass(frozen=True)
class WorkerLogin:
    """A worker's link (through the gateway when given), login e-mail and password, and their number of tasks."""

    worker: str
    link: str
    email: str
    password: str
    n_tasks: int
    accounts_file: Path


def _study(manifest_path: Path) -> tuple[str, list[str]]:
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(manifest_path)
    try:
        return str(manifest.study), list(manifest.workers())
    finally:
        manifest.close()


def _projects(client: LabelStudioClient, manifest_path: Path, study: str, workers: list[str]) -> list[StudyProject]:
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.study.live.projects import find_study_projects

    known = recorded_project_ids(default_setup_file(manifest_path), study=study).values()
    found = find_study_projects(client, study, workers, known_ids=known, any_worker=True,
                                include=(*PROJECT_FIELDS, *PROJECT_COUNTS))
    return [StudyProject(worker, ls.int_id(project), int(ls.project_task_number(project) or 0))
            for worker, project in sorted(found.items())]


def _logins(manifest_path: Path, study: str, workers: list[str]) -> dict[str, str]:
    """worker -> login e-mail: the accounts file's, else ``study create``'s default."""
    accounts = read_accounts(default_accounts_file(manifest_path))
    own = study_email_domain(study)
    return {w: str(accounts.get(w, {}).get("email") or worker_email(w, domain=own)) for w in workers}


def _accounts(client: LabelStudioClient, manifest_path: Path, study: str, workers: list[str]) -> list[StudyAccount]:
    members = organisation_users(client)
    own = study_email_domain(study)
    found = []
    for worker, email in sorted(_logins(manifest_path, study, workers).items()):
        user = members.get(email.lower())
        if user is None:
            continue
        shared = login_domain(email) != own
        kept = f"not in the study's own login domain {own}: it may serve another study" if shared else None
        found.append(StudyAccount(worker, email, ls.int_id(user), kept))
    return found


def _export(client: LabelStudioClient, project: StudyProject, out_dir: Path, study: str) -> StudyProject:
    target = out_dir / f"{study}.{project.worker}.project{project.project_id}.json"

    def write(chunks: Iterator[bytes]) -> None:
        with atomic_open(target, "wb", encoding=None, permissions=0o600) as handle:
            for chunk in chunks:
                handle.write(chunk)

    client.export_snapshot_to(project.project_id, write, title="posthoc study retire")
    return StudyProject(project.worker, project.project_id, project.n_tasks, target)


def retire_study(manifest_path: str | os.PathLike[str], *, url: str, token: str, out_dir: str | os.PathLike[str],
                 apply: bool = False) -> StudyRetirement:
    """Export the study's projects to ``out_dir`` and, with ``apply``, delete them and the study's own accounts
    (module docstring). Raises PosthocInputError (bad manifest, ``out_dir`` a file) or PosthocServiceError."""
    manifest_path, out = Path(manifest_path), Path(out_dir)
    if out.exists() and not out.is_dir():
        raise PosthocInputError(f"--out {out} is a file; give a folder for the exports")
    study, workers = _study(manifest_path)
    client = LabelStudioClient(url, token)
    projects = _projects(client, manifest_path, study, workers)
    accounts = _accounts(client, manifest_path, study, workers)
    if projects:
        out.mkdir(parents=True, exist_ok=True)
        out.chmod(0o700)
        projects = [_export(client, project, out, study) for project in projects]
    if apply:  # only once every project is exported
        for project in projects:
            client.delete(f"/api/projects/{project.project_id}/")
        for account in accounts:
            if account.kept is None:
                client.delete(f"/api/users/{account.user_id}/")
    return StudyRetirement(study, url.rstrip("/"), tuple(projects), tuple(accounts), applied=apply)


def worker_login(manifest_path: str | os.PathLike[str], worker: str, *, url: str, token: str,
                 gateway_url: str | None = None, accounts_file: str | os.PathLike[str] | None = None) -> WorkerLogin:
    """``worker``'s link to their project in Label Studio (through ``gateway_url`` when given) and their login from
    the accounts file (default: beside the manifest). PosthocInputError for a worker the study does not have, or
    whose project or password is not there (``posthoc study create`` makes both)."""
    from posthoc.jobs.setup import stream_link

    manifest_path = Path(manifest_path)
    study, workers = _study(manifest_path)
    if worker not in workers:
        raise PosthocInputError(f"--worker {worker}: not a worker of study {study!r} (its workers: "
                                f"{', '.join(workers[:10])}{', ...' if len(workers) > 10 else ''})")
    path = Path(accounts_file) if accounts_file is not None else default_accounts_file(manifest_path)
    account = read_accounts(path).get(worker, {})
    if not account.get("email") or not account.get("password"):
        raise PosthocInputError(f"{path}: no login of worker {worker}; run `posthoc study create` (it makes it)")
    found = {p.worker: p for p in _projects(LabelStudioClient(url, token), manifest_path, study, [worker])}
    if worker not in found:
        raise PosthocInputError(f"Label Studio at {url} holds no project of worker {worker} of study {study!r}; run "
                                "`posthoc study create` (or the study was retired)")
    project = found[worker]
    return WorkerLogin(worker, stream_link(gateway_url or url, project.project_id), str(account["email"]),
                       str(account["password"]), project.n_tasks, path)
