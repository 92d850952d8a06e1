"""The annotators' accounts of a study: the accounts file and making every worker's login at once.

Open-source Label Studio 1.23 has no API that sets a password: ``POST /api/users/`` as admin answers 201 but
the user has no usable password and cannot log in (``set_password`` is only called by the sign-up form and the
``label-studio reset_password`` command on the server's database). So an account is made the way a person makes
one, the sign-up form with the organisation's invite token: one POST a user (the form's CSRF cookie is read
once a run), bounded in parallel. What a run reads: the accounts file, where an account is marked ``verified``
once Label Studio has accepted its password and keeps its ``user_id``; when every worker's is there (a rerun),
each user by id (``GET /api/users/{id}/``, to see it still exists with that e-mail), whatever the size of the
organisation. Only when some worker's id is unknown, one listing of the organisation's members in one page, the one
way to match an e-mail (``GET /api/users/`` is unpaged and costs ~2 ms per user, per call).

Logins are unique per study by default: ``<worker>@<study>.posthoc.local`` (:func:`study_email_domain`), so any
number of studies planned with the same worker ids share one server. A study whose accounts file holds logins
Label Studio has accepted keeps them (studies made before this default keep ``@posthoc.local``).
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
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.users import (
    STUDY_DOMAIN_PARENT,
    login,
    login_domain,
    organisation_users,
    signup,
    study_email_domain,
    worker_email,
)
from posthoc.study.plan.logins import read_accounts


def write_accounts(path: Path, accounts: dict[str, dict[str, str]]) -> None:
    """Write the accounts file atomically, readable by its owner only (0600)."""
    write_text_atomic(path, json.dumps(accounts, indent=2, sort_keys=True) + "\n", permissions=0o600)


@dataclass(frozen=True)
class StudyAccounts:
    """``users``: worker -> (e-mail, Label Studio user id); ``created``: accounts this run signed up."""

    users: dict[str, tuple[str, int]]
    created: int


def planned_logins(accounts: dict[str, dict[str, str]], workers: Sequence[str], path: Path, *, study: str,
                   email_domain: str | None) -> dict[str, dict[str, str]]:
    """The accounts file's entries with every worker's login decided, before Label Studio is asked.

    A login Label Studio has accepted (``verified``) is kept: those workers may have annotated under it. The
    other workers' logins follow ``email_domain`` (``None``: the study's own, :func:`study_email_domain`), also
    when an earlier, failed run wrote another: a flag given after a failed attempt takes effect. A given
    ``email_domain`` that differs from a kept login's is refused (PosthocInputError), never silently ignored.
    """
    domain = (email_domain or study_email_domain(study)).lower()
    kept = sorted({login_domain(accounts[w]["email"]) for w in workers
                   if w in accounts and accounts[w].get("verified") == "yes"})
    if email_domain is not None and kept and kept != [domain]:
        shown = ", ".join(kept)
        raise PosthocInputError(f"{path}: this study's logins at {shown} were made by an earlier run and are kept "
                                f"(annotators may have worked under them); --email-domain {email_domain} cannot "
                                "change them: drop the flag, or give --accounts-file a new file to make every "
                                f"login anew at {email_domain}")
    planned = {str(k): dict(v) for k, v in accounts.items()}
    for worker in workers:
        entry = planned.get(worker)
        if entry is not None and entry.get("verified") == "yes":
            continue
        email = worker_email(worker, domain=domain)
        if entry is None or entry.get("email") != email:
            planned[worker] = {"email": email, "password": secrets.token_urlsafe(12)}
    return planned


def _taken_message(email: str, study: str, email_domain: str | None) -> str:
    other = f"{study_email_domain(study).split('.', 1)[0]}-2.{STUDY_DOMAIN_PARENT}"
    given = "the given --email-domain" if email_domain else f"this study's own domain {login_domain(email)}"
    return (f"Label Studio user {email} exists with a password other than the stored one: another study or "
            f"person on this server holds {given}; rerun with another --email-domain (e.g. {other}: this run made "
            "no account, so the flag takes effect for every worker), or, if the account is this study's, reset "
            "its password (label-studio reset_password, or study create --data-dir on a local server)")


def _users_by_id(client: LabelStudioClient, accounts: dict[str, dict[str, str]], workers: Sequence[str],
                 pool: ThreadPoolExecutor) -> dict[str, ls.User] | None:
    """The workers' users read by id (``GET /api/users/{id}/``, one row each), by lower-case e-mail, when every
    worker's account is verified with a known ``user_id`` and each still has that e-mail; ``None`` otherwise (the
    caller then lists the organisation, the one way to match an e-mail)."""
    entries = [accounts[w] for w in workers]
    if not all(e.get("verified") == "yes" and str(e.get("user_id", "")).isdigit() for e in entries):
        return None
    read = list(pool.map(lambda entry: client.user(int(entry["user_id"])), entries))
    users = {str(user.get("email", "")).lower(): user for user in read if user is not None}
    return users if all(e["email"] in users for e in entries) else None


def _logged_in_id(client: LabelStudioClient, entry: dict[str, str]) -> int:
    """The id of a signed-up account the members' listing did not show, from its own session's ``whoami`` (the
    load bench met one such account on PostgreSQL, issue 24); a clear error when it cannot log in either."""
    session = login(client.url, entry["email"], entry["password"])
    if session is None:
        raise PosthocServiceError(f"Label Studio accepted the sign-up of {entry['email']} but neither lists it "
                                  "among the organisation's members nor lets it log in; rerun the command (the "
                                  "accounts file keeps its password)")
    try:
        return ls.int_id(session.get_json("/api/current-user/whoami"))
    finally:
        session.close()


def ensure_accounts(client: LabelStudioClient, workers: Sequence[str], path: Path, *, study: str,
                    email_domain: str | None = None, concurrency: int = 4,
                    reset_password: Callable[[str, str], None] | None = None) -> StudyAccounts:
    """Every worker's account (``<worker>@<domain>``, a password generated once and kept in ``path``), made or
    checked as the module docstring says; the accounts file is written before Label Studio knows a password.

    Logins are decided by :func:`planned_logins`. When every account is verified with its user id in ``path``
    (a rerun), each user is read by id and nothing is listed; otherwise the organisation's members are listed
    once (matched by e-mail). Logins that exist in Label Studio are checked first, all of them, and only then
    are missing ones signed up: a run that meets another's login makes no account at all. New accounts' ids come
    from one more listing of the members; every id found is kept in ``path`` (``user_id``).
    """
    accounts = planned_logins(read_accounts(path), workers, path, study=study, email_domain=email_domain)
    write_accounts(path, accounts)
    lock = threading.Lock()
    created: list[str] = []

    def logs_in(worker: str) -> bool:
        email, password = accounts[worker]["email"], accounts[worker]["password"]
        maybe = login(client.url, email, password)
        if maybe is None and reset_password is not None:
            reset_password(email, password)
            maybe = login(client.url, email, password)
        if maybe is not None:
            maybe.close()
        return maybe is not None

    def make(worker: str, invite: str, csrf: str | None) -> None:
        entry = accounts[worker]
        signup(client, entry["email"], entry["password"], invite=invite, csrf=csrf).close()  # id: one listing
        with lock:
            created.append(worker)
            entry["verified"] = "yes"

    try:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            users = _users_by_id(client, accounts, workers, pool) or organisation_users(client)
            todo = [w for w in workers if not (accounts[w].get("verified") == "yes" and accounts[w]["email"] in users)]
            existing = [w for w in todo if accounts[w]["email"] in users]
            missing = [w for w in todo if accounts[w]["email"] not in users]
            refused = [w for w, ok in zip(existing, pool.map(logs_in, existing), strict=True) if not ok]
            if refused:  # nothing is marked or made: the flag the message suggests applies to every worker
                raise PosthocServiceError(_taken_message(accounts[refused[0]]["email"], study, email_domain))
            for worker in workers:
                if worker not in missing:
                    accounts[worker] |= {"verified": "yes", "user_id": str(ls.int_id(users[accounts[worker]["email"]]))}
            if missing:
                invite = client.invite_token()
                first = client.form_session()  # the sign-up form's CSRF cookie, read once for every sign-up
                csrf = first.csrf(f"/user/signup/?token={invite}")
                first.close()
                list(pool.map(lambda worker: make(worker, invite, csrf), missing))
                # the new accounts' ids, one listing (a whoami in each new session beside the sign-ups met
                # SQLite's lock under load: measured in bench/study_server_bench.py)
                users = organisation_users(client)
                for worker in missing:
                    user = users.get(accounts[worker]["email"])
                    user_id = ls.int_id(user) if user is not None else _logged_in_id(client, accounts[worker])
                    accounts[worker]["user_id"] = str(user_id)
    finally:
        write_accounts(path, accounts)  # what was verified stays verified, also when one account failed
    return StudyAccounts(users={w: (accounts[w]["email"], int(accounts[w]["user_id"])) for w in workers},
                         created=len(created))
