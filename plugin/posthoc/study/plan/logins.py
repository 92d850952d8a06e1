"""A study's logins: the accounts file beside its manifest, and which worker a Label Studio login is.

``posthoc study create`` writes the annotators' accounts (:mod:`posthoc.jobs.accounts`) to
``<manifest stem>.accounts.json`` (:func:`default_accounts_file`); the score job reads it back
(:func:`read_accounts`) to know whose annotation an exported one is (:func:`user_workers`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.users import study_email_domain, worker_email


def read_accounts(path: Path) -> dict[str, dict[str, str]]:
    """``{worker: {"email", "password", ...}}`` from the accounts file (empty when it does not exist)."""
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


def default_accounts_file(manifest_path: Path) -> Path:
    """Where the annotators' generated passwords are kept: ``<manifest stem>.accounts.json`` beside it."""
    return manifest_path.with_name(f"{manifest_path.stem}.accounts.json")


def default_user_workers(workers: Iterable[str], *, study: str | None = None) -> dict[str, str]:
    """Map the login e-mails of study workers (:func:`posthoc.labelstudio.users.worker_email`) to workers: at
    ``posthoc.local`` (studies made before logins were per study) and, given ``study``, at the study's own
    domain (:func:`posthoc.labelstudio.users.study_email_domain`, ``study create``'s default)."""
    own = study_email_domain(study) if study is not None else None
    mapping: dict[str, str] = {}
    for worker in workers:
        mapping[worker_email(worker)] = worker
        if own is not None:
            mapping[worker_email(worker, domain=own)] = worker
        if "@" in worker:
            mapping[worker.lower()] = worker
    return mapping


def user_workers(workers: Iterable[str], *, study: str, accounts_file: Path | None) -> dict[str, str]:
    """Login e-mail -> worker: ``<worker>@<study>.posthoc.local`` (``study create``'s default) and
    ``<worker>@posthoc.local`` (studies made before it), plus the accounts file `posthoc study create` wrote
    beside the manifest (which holds the e-mails of a study set up with another domain)."""
    known = list(workers)
    mapping = default_user_workers(known, study=study)
    members = set(known)
    if accounts_file is not None:
        for worker, account in read_accounts(accounts_file).items():
            if account.get("email") and worker in members:
                mapping[str(account["email"]).lower()] = worker
    return mapping
