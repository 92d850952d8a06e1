"""The annotators' accounts of a study: the accounts file and making every worker's login at once.

Open-source Label Studio 1.23 has no API that sets a password: ``POST /api/users/`` as admin answers 201 but
the user has no usable password and cannot log in (``set_password`` is only called by the sign-up form and the
``label-studio reset_password`` command on the server's database). So an account is made the way a person makes
one, the sign-up form with the organisation's invite token: one POST a user (the form's CSRF cookie is read
once a run), bounded in parallel. What a run reads instead of asking per worker: one paged listing of the
organisation's members (``GET /api/users/`` is unpaged and costs ~2 ms per user, per call), and the accounts
file, where an account is marked ``verified`` once Label Studio has accepted its password (a rerun then makes
no call for it at all).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.users import login, organisation_users, signup, worker_email


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


def write_accounts(path: Path, accounts: dict[str, dict[str, str]]) -> None:
    """Write the accounts file atomically, readable by its owner only (0600)."""
    write_text_atomic(path, json.dumps(accounts, indent=2, sort_keys=True) + "\n", permissions=0o600)


def default_accounts_file(manifest_path: Path) -> Path:
    """Where the annotators' generated passwords are kept: ``<manifest stem>.accounts.json`` beside it."""
    return manifest_path.with_name(f"{manifest_path.stem}.accounts.json")


@dataclass(frozen=True)
class StudyAccounts:
    """``users``: worker -> (e-mail, Label Studio user id); ``created``: accounts this run signed up."""

    users: dict[str, tuple[str, int]]
    created: int


def ensure_accounts(client: LabelStudioClient, workers: Sequence[str], path: Path, *,
                    email_domain: str = "posthoc.local", concurrency: int = 4,
                    reset_password: Callable[[str, str], None] | None = None) -> StudyAccounts:
    """Every worker's account (``<worker>@<domain>``, a password generated once and kept in ``path``), made or
    checked as the module docstring says; the accounts file is written before Label Studio knows a password."""
    accounts = read_accounts(path)
    for worker in workers:
        if worker not in accounts:
            accounts[worker] = {"email": worker_email(worker, domain=email_domain),
                                "password": secrets.token_urlsafe(12)}
    write_accounts(path, accounts)
    users = organisation_users(client)
    todo = [w for w in workers if not (accounts[w].get("verified") == "yes" and accounts[w]["email"] in users)]
    invite = client.invite_token() if any(accounts[w]["email"] not in users for w in todo) else ""
    csrf = None
    if invite:  # the sign-up form's CSRF cookie, read once for every sign-up of the run
        first = client.form_session()
        csrf = first.csrf(f"/user/signup/?token={invite}")
        first.close()
    lock = threading.Lock()
    created: list[str] = []

    def make(worker: str) -> None:
        entry = accounts[worker]
        email, password = entry["email"], entry["password"]
        if email not in users:
            signup(client, email, password, invite=invite, csrf=csrf).close()  # its id: one listing after all
            with lock:
                created.append(worker)
        else:
            maybe = login(client.url, email, password)
            if maybe is None and reset_password is not None:
                reset_password(email, password)
                maybe = login(client.url, email, password)
            if maybe is None:
                raise PosthocServiceError(f"Label Studio user {email} exists with a password other than the stored "
                                          "one (another study on this server may use the same login: set another "
                                          "--email-domain); or reset it (label-studio reset_password)")
            maybe.close()
        with lock:
            entry["verified"] = "yes"

    try:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            list(pool.map(make, todo))
    finally:
        write_accounts(path, accounts)  # what was verified stays verified, also when one account failed
    if created:
        users = organisation_users(client)
    return StudyAccounts(users={w: (accounts[w]["email"], int(users[accounts[w]["email"]]["id"])) for w in workers},
                         created=len(created))
