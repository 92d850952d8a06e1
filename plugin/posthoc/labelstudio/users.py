"""Annotator accounts in an open-source Label Studio, created over HTTP only.

Open-source Label Studio has no API that sets a password (``POST /api/users/`` takes none), so an
account is made the way a person makes one: the sign-up form with the organisation's invite token
(``GET /api/invite``, the admin's token), then a log-in with that password and the account's own API
token read from ``/api/current-user/token``. This works on a remote server as well as on the local one
(``posthoc ls start``). Rerunning finds the account by e-mail and logs in again: nothing is duplicated.

A user that exists with a password we do not know can be repaired on a local data directory with
``label-studio reset_password`` (pass ``reset_password=`` a callable, see
:meth:`posthoc.labelstudio.server.LabelStudioServer.run_command`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.client import FormSession, LabelStudioClient

_EMAIL = re.compile(r"^[a-z0-9._%+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)+$")
_NOT_LOCAL_PART = re.compile(r"[^a-z0-9._\-]+")
_NOT_LABEL = re.compile(r"[^a-z0-9]+")
#: The parent of every study's own login domain, ``<study>.posthoc.local`` (``.local``: never a real mail domain).
STUDY_DOMAIN_PARENT = "posthoc.local"


@dataclass(frozen=True)
class Account:
    """A Label Studio user we can act as: id, login e-mail, password and API token."""

    user_id: int
    email: str
    password: str
    token: str

    def __repr__(self) -> str:
        return f"Account(user_id={self.user_id}, email={self.email!r}, password=***, token=***)"


def worker_email(worker: str, *, domain: str = "posthoc.local") -> str:
    """The login e-mail of a study worker id (lower case, only letters, digits, ``._-`` kept)."""
    local = _NOT_LOCAL_PART.sub("-", worker.strip().lower()).strip("-.") or "worker"
    email = f"{local}@{domain.lower()}"
    if not _EMAIL.match(email):
        raise PosthocInputError(f"worker {worker!r}: cannot make a valid e-mail login from it with domain {domain!r}")
    return email


def study_email_domain(study: str) -> str:
    """The login domain of a study's workers by default: ``<study>.posthoc.local``, so that studies sharing one
    Label Studio never share a login (``w001@sample.posthoc.local`` and ``w001@wned.posthoc.local``).

    The study's name becomes one DNS label (lower case, runs of other characters as ``-``, at most 40
    characters); when that changes the name (``"WNED 2026"``, ``"wned_2026"``), six hex digits of the name's
    SHA-256 follow, so two names never share a domain because they look alike.
    """
    label = _NOT_LABEL.sub("-", study.strip().lower()).strip("-")[:40].strip("-") or "study"
    if label != study:
        label = f"{label}-{hashlib.sha256(study.encode('utf-8')).hexdigest()[:6]}"
    return f"{label}.{STUDY_DOMAIN_PARENT}"


def login_domain(email: str) -> str:
    """The domain of a login e-mail (lower case; empty when it has no ``@``)."""
    return email.rpartition("@")[2].lower() if "@" in email else ""


def organisation_users(client: LabelStudioClient) -> dict[str, ls.User]:
    """Every user of the admin's organisation by lower-case e-mail: one listing in one page
    (:meth:`~posthoc.labelstudio.calls.ApiCalls.members`; call it once a run)."""
    return {str(user.get("email", "")).lower(): user for user in client.members()}


def login(url: str, email: str, password: str) -> FormSession | None:
    """A logged-in session for ``email``, or ``None`` when Label Studio refuses the password."""
    client = LabelStudioClient(url, "")
    session = client.form_session()
    response = session.submit("/user/login/", {"email": email, "password": password})
    if response.status_code >= 500:  # not a refused password: e.g. SQLite's lock
        session.close()
        raise client.refused("POST", "/user/login/", response)
    if response.status_code not in (301, 302):
        session.close()
        return None
    return session


def signup(client: LabelStudioClient, email: str, password: str, *, invite: str,
           csrf: str | None = None) -> FormSession:
    """Create the account through the sign-up form with the invite token; returns its logged-in session.
    One POST (and one GET for the form's CSRF cookie unless ``csrf`` gives one read before): the fewest calls
    that make a user who can log in (1.23 has no API that sets a password; see docs/labelstudio.md)."""
    session = client.form_session(csrf=csrf)
    response = session.submit(f"/user/signup/?token={invite}", {"email": email, "password": password,
                                                                "how_find_us": "", "elaborate": ""})
    if response.status_code >= 500:
        session.close()
        raise client.refused("POST", "/user/signup/", response)
    if response.status_code not in (301, 302):
        found = re.findall(r'class="[^"]*(?:error|field_errors)[^"]*"[^>]*>([^<]+)<', response.text)
        detail = "; ".join(s.strip() for s in found if s.strip()) or f"HTTP {response.status_code}"
        session.close()
        raise PosthocServiceError(f"Label Studio refused the sign-up of {email}: {detail}")
    return session


def session_token(session: FormSession) -> tuple[int, str]:
    """The user id and API token of a logged-in session."""
    me = session.get_json("/api/current-user/whoami")
    token = session.get_json("/api/current-user/token")
    return ls.int_id(me), str(token["token"])


def ensure_user(url: str, admin_token: str, *, email: str, password: str, first_name: str = "",
                last_name: str = "", reset_password: Callable[[str, str], None] | None = None,
                known: dict[str, ls.User] | None = None, invite: str | None = None) -> Account:
    """The account ``email`` with ``password``, created when missing; returns it with its API token.

    Idempotent: an existing account is logged into with ``password``. When that fails and
    ``reset_password(email, password)`` is given (local data dir), the password is reset first;
    otherwise PosthocServiceError says the account exists with another password. ``known``: the users of
    :func:`organisation_users` (listed once by a caller that makes many accounts); ``invite``: the invite token.
    """
    email = email.lower()
    if not _EMAIL.match(email):
        raise PosthocInputError(f"{email!r} is not an e-mail address Label Studio accepts as a login")
    admin = LabelStudioClient(url, admin_token)
    users = known if known is not None else organisation_users(admin)
    if email not in users:
        session = signup(admin, email, password, invite=invite or admin.invite_token())
    else:
        maybe = login(url, email, password)
        if maybe is None and reset_password is not None:
            reset_password(email, password)
            maybe = login(url, email, password)
        if maybe is None:
            raise PosthocServiceError(f"Label Studio user {email} exists with a password other than the given one "
                                      "(another account holder uses this login: choose another e-mail); or reset "
                                      "it (label-studio reset_password)")
        session = maybe
    try:
        user_id, token = session_token(session)
    finally:
        session.close()
    if first_name or last_name:
        LabelStudioClient(url, token).patch(f"/api/users/{user_id}/", {"first_name": first_name,
                                                                       "last_name": last_name})
    return Account(user_id=user_id, email=email, password=password, token=token)

