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

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from posthoc.errors import PosthocInputError, PosthocServiceError, connection_failure

TIMEOUT = 30
_EMAIL = re.compile(r"^[a-z0-9._%+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)+$")
_NOT_LOCAL_PART = re.compile(r"[^a-z0-9._\-]+")


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


def _admin_get(url: str, admin_token: str, path: str, **params: Any) -> Any:
    try:
        response = requests.get(f"{url.rstrip('/')}{path}", headers={"Authorization": f"Token {admin_token}"},
                                params=params, timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise PosthocServiceError(f"Label Studio at {url} is unreachable ({connection_failure(exc)})") from exc
    if response.status_code in (401, 403):
        raise PosthocServiceError(f"Label Studio at {url} refused the token for GET {path} ({response.status_code})")
    if response.status_code >= 400:
        raise PosthocServiceError(f"Label Studio at {url}: GET {path} answered HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError as exc:
        raise PosthocServiceError(f"Label Studio at {url}: GET {path} did not answer JSON; is this Label Studio?"
                                  ) from exc


def find_user(url: str, admin_token: str, email: str) -> dict[str, Any] | None:
    """The user record (``id``, ``email``, ...) with this e-mail (case-insensitive), or ``None``."""
    wanted = email.lower()
    users = _admin_get(url, admin_token, "/api/users/")
    if isinstance(users, dict):  # paginated shape
        users = users.get("results", [])
    for user in users:
        if str(user.get("email", "")).lower() == wanted:
            return dict(user)
    return None


def invite_token(url: str, admin_token: str) -> str:
    """The organisation's invite token (the ``token`` of its sign-up link)."""
    return str(_admin_get(url, admin_token, "/api/invite")["token"])


def _form_session(url: str, page: str) -> tuple[requests.Session, str]:
    session = requests.Session()
    try:
        session.get(f"{url}{page}", timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise PosthocServiceError(f"Label Studio at {url} is unreachable ({connection_failure(exc)})") from exc
    csrf = session.cookies.get("csrftoken")
    if not csrf:
        raise PosthocServiceError(f"Label Studio at {url}{page} set no CSRF cookie")
    return session, csrf


def login(url: str, email: str, password: str) -> requests.Session | None:
    """A logged-in session for ``email``, or ``None`` when Label Studio refuses the password."""
    base = url.rstrip("/")
    session, csrf = _form_session(base, "/user/login/")
    response = session.post(f"{base}/user/login/", data={"csrfmiddlewaretoken": csrf, "email": email,
                                                          "password": password},
                            headers={"Referer": f"{base}/user/login/"}, timeout=TIMEOUT, allow_redirects=False)
    if response.status_code not in (301, 302):
        return None
    return session


def signup(url: str, email: str, password: str, *, invite: str) -> requests.Session:
    """Create the account through the sign-up form with the invite token; returns its logged-in session."""
    base = url.rstrip("/")
    page = f"/user/signup/?token={invite}"
    session, csrf = _form_session(base, page)
    response = session.post(f"{base}{page}", data={"csrfmiddlewaretoken": csrf, "email": email,
                                                   "password": password, "how_find_us": "", "elaborate": ""},
                            headers={"Referer": f"{base}{page}"}, timeout=TIMEOUT, allow_redirects=False)
    if response.status_code not in (301, 302):
        found = re.findall(r'class="[^"]*(?:error|field_errors)[^"]*"[^>]*>([^<]+)<', response.text)
        detail = "; ".join(s.strip() for s in found if s.strip()) or f"HTTP {response.status_code}"
        raise PosthocServiceError(f"Label Studio refused the sign-up of {email}: {detail}")
    return session


def session_token(url: str, session: requests.Session) -> tuple[int, str]:
    """The user id and API token of a logged-in session."""
    base = url.rstrip("/")
    me = session.get(f"{base}/api/current-user/whoami", timeout=TIMEOUT)
    me.raise_for_status()
    token = session.get(f"{base}/api/current-user/token", timeout=TIMEOUT)
    token.raise_for_status()
    return int(me.json()["id"]), str(token.json()["token"])


def ensure_user(url: str, admin_token: str, *, email: str, password: str, first_name: str = "",
                last_name: str = "", reset_password: Callable[[str, str], None] | None = None) -> Account:
    """The account ``email`` with ``password``, created when missing; returns it with its API token.

    Idempotent: an existing account is logged into with ``password``. When that fails and
    ``reset_password(email, password)`` is given (local data dir), the password is reset first;
    otherwise PosthocServiceError says the account exists with another password.
    """
    email = email.lower()
    if not _EMAIL.match(email):
        raise PosthocInputError(f"{email!r} is not an e-mail address Label Studio accepts as a login")
    existing = find_user(url, admin_token, email)
    if existing is None:
        session = signup(url, email, password, invite=invite_token(url, admin_token))
    else:
        maybe = login(url, email, password)
        if maybe is None and reset_password is not None:
            reset_password(email, password)
            maybe = login(url, email, password)
        if maybe is None:
            raise PosthocServiceError(f"Label Studio user {email} exists with a password other than the stored one "
                                      "(another study on this server may use the same login: set another "
                                      "--email-domain); or reset it (label-studio reset_password)")
        session = maybe
    user_id, token = session_token(url, session)
    if first_name or last_name:
        requests.patch(f"{url.rstrip('/')}/api/users/{user_id}/", json={"first_name": first_name,
                                                                          "last_name": last_name},
                       headers={"Authorization": f"Token {token}"}, timeout=TIMEOUT).raise_for_status()
    return Account(user_id=user_id, email=email, password=password, token=token)
