"""The study gateway's authoriser (issue 23): nginx asks it about every request before Label Studio sees it.

nginx's ``auth_request`` sends a body-less sub-request to ``/authorise`` with the original method and URI in
``X-Original-Method`` / ``X-Original-URI`` and the original headers (the ``Cookie`` among them). The authoriser

1. reads the ``Cookie`` header as Label Studio does (:func:`posthoc.labelstudio.gateway_cookie.read_session`;
   ``sessionid`` named twice: refused) and finds the session's user: ``whoami`` with exactly that session cookie
   (:func:`posthoc.labelstudio.gateway_lookup.session_user`), kept :data:`SESSION_SECONDS` under the exact value
   (its re-signed copies get its answer) and asked again in the background after that (:meth:`Authority.session_email`);
   a forged or expired cookie is an anonymous caller, and so is one that logged out through the gateway (Label
   Studio 1.23 keeps sessions in signed cookies: it cannot revoke a copied cookie itself, see :meth:`Authority.revoke`;
   the authoriser remembers logouts in memory and in an owner-only SQLite file across restarts,
   :mod:`posthoc_backend.gateway_logouts`; it is served by one process);
2. maps the user to a role: an owner (the admin token's user and ``owners``), a worker of the study (the
   accounts file beside the manifest names each worker's e-mail; the project is the one ``posthoc study
   create`` marked for that worker, :func:`posthoc.study.live.projects.find_study_projects`; its task ids are read
   once a minute), or an outsider; the manifest, the accounts file and the setup record are watched (at most once
   a second, :class:`posthoc_backend.reload.FileWatch`): when ``posthoc study extend`` / ``reassign`` changed
   them, the workers are read again at once and the task ids on the next request, so a new account reaches its
   project and a worker their appended tasks without a restart (a read that fails keeps the workers read before);
3. decides with :func:`posthoc.labelstudio.gateway_rules.decide` (annotation, draft and view ids looked up in
   Label Studio and kept) and answers ``204``, or ``403`` with a JSON reason (``401`` for an anonymous caller,
   which nginx turns into the login page). A ``204`` with ``X-Posthoc-Via: gateway`` sends the request to the
   authoriser's own answers instead of Label Studio (:mod:`posthoc_backend.gateway_answers`: what a worker should
   see of the ML backends, projects, tips and members, and their annotation and draft writes, read and checked).

Served like the ML backend: gunicorn (``posthoc gateway serve``) on ``posthoc_backend.gateway_wsgi:app``, or
:func:`create_gateway_app` in a thread for tests. nginx proxies; the authoriser forwards only the writes whose
body it checked.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from flask import Flask, Response, jsonify, request

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
from posthoc.labelstudio import records
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.gateway_cookie import SessionRead, read_session
from posthoc.labelstudio.gateway_lookup import ProjectObjects, SessionUser, session_user
from posthoc.labelstudio.gateway_rules import (
    STATIC_PREFIXES,
    Caller,
    Decision,
    GatewayRequest,
    Lookup,
    Role,
    decide,
    deny,
    split_uri,
)
from posthoc.study.live.projects import find_study_projects
from posthoc.study.plan.logins import default_accounts_file, read_accounts
from posthoc_backend.gateway_answers import register_answers
from posthoc_backend.gateway_logouts import LogoutStore
from posthoc_backend.reload import FileWatch

logger = logging.getLogger("posthoc_backend.gateway")

#: how long a session's user, and the study's workers and task ids, are kept (seconds)
SESSION_SECONDS = 10.0
STUDY_SECONDS = 60.0
#: how many times those a kept answer is still given (while it is asked again in the background)
STALE_FACTOR = 6.0
#: sessions kept at most (the oldest go first): a flood of made-up cookies cannot grow the cache without bound
MAX_SESSIONS = 10_000
#: headers the authoriser's own caller (nginx) sets: never read as the original request's
GATEWAY_HEADERS = frozenset({"x-original-method", "x-original-uri", "x-original-host"})
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
#: Label Studio 1.23's logout (its menu links to ``/logout``; nginx sends ``/user/logout`` there)
LOGOUT = re.compile(r"/(user/)?logout/?(\?.*)?")
#: how long Label Studio keeps a session at most (its ``MAX_SESSION_AGE``, 14 days by default): a logout is
#: remembered that long, then its cookie has expired anyway
MAX_SESSION_AGE = float(os.environ.get("MAX_SESSION_AGE", 14 * 24 * 3600))


def session_key(cookie_header: str) -> str | None:
    """A digest of the signed payload of the session in a raw ``Cookie`` header (``None``: none, or a refused
    header), read as Label Studio reads it (:func:`posthoc.labelstudio.gateway_cookie.read_session`).

    Label Studio 1.23 keeps the session *in* the cookie, signed (Django's ``signed_cookies``:
    ``payload:timestamp:signature``), and its ``InactivitySessionTimeoutMiddleWare`` (``core/middleware.py``)
    calls ``set_expiry`` on every request, so every answer sets a new cookie: the same payload with a new timestamp
    and signature (measured). A logout is remembered under this key, so it ends every copy of the session (a forged
    copy too: refusing it costs nothing). Who a session *is* is kept under the exact cookie value instead
    (:meth:`Authority.session_email`): a forged copy can never change what the real cookie gets."""
    return read_session(cookie_header).payload_key()


@dataclass(frozen=True)
class StudyAccess:
    """Who may do what: owners' e-mails, and each worker's e-mail -> (worker id, project id)."""

    owners: frozenset[str]
    workers: Mapping[str, tuple[str, int]]


def load_study_access(manifest_path: Path, client: LabelStudioClient, *, accounts_file: Path | None = None,
                      owners: Iterable[str] = ()) -> StudyAccess:
    """The study's :class:`StudyAccess` from its manifest, accounts file and Label Studio's marked projects (those
    the setup record beside the manifest names, listed by id; every project only while some worker's is unknown:
    :func:`posthoc.study.live.projects.find_study_projects`); the admin token's user is an owner."""
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(manifest_path)
    accounts = read_accounts(accounts_file or default_accounts_file(manifest_path))
    study = str(manifest.study)
    known = recorded_project_ids(default_setup_file(manifest_path), study=study).values()
    projects = find_study_projects(client, study, manifest.workers(), known_ids=known)
    workers: dict[str, tuple[str, int]] = {}
    for worker, project in projects.items():
        email = str(accounts.get(worker, {}).get("email", "")).strip().lower()
        if email:
            workers[email] = (worker, records.int_id(project))
    admin = str(client.whoami().get("email", "")).strip().lower()
    return StudyAccess(frozenset({admin, *(o.strip().lower() for o in owners)} - {""}), workers)


class Authority:
    """Decides one request: the caller from their session, then the rules (thread-safe, caches inside).

    What it keeps (a session's user :data:`SESSION_SECONDS`, the study's access and a project's task ids
    :data:`STUDY_SECONDS`) is fresh for that long; for :data:`STALE_FACTOR` times as long after, a request gets the
    kept answer at once while one background thread asks Label Studio again (so a worker's requests do not wait for
    ``whoami`` every 10 s: measured, that put +150 ms into next-task's p95). Older than that, the request waits for
    the answer. A logout through the gateway takes effect at once (:meth:`revoke`). With a ``watch`` over the
    study's files, a change read there (a revision) reads the access again at once and forgets the task ids
    (:meth:`follow_changes`)."""

    def __init__(self, *, url: str, client: LabelStudioClient, load_access: Callable[[], StudyAccess],
                 lookup: Lookup | None = None, clock: Callable[[], float] = time.monotonic,
                 session_seconds: float = SESSION_SECONDS, watch: FileWatch | None = None,
                 logouts: LogoutStore | None = None) -> None:
        self.url = url
        self.watch = watch
        self.session_seconds = session_seconds
        self.client = client
        self.load_access = load_access
        self.lookup = lookup or ProjectObjects(client)
        self.clock = clock
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, tuple[float, SessionUser | None]] = OrderedDict()
        self._revoked: OrderedDict[str, float] = OrderedDict()  # payload digest -> when
        self._verified: OrderedDict[str, SessionRead] = OrderedDict()  # payload digest -> a cookie whoami knew
        self._access: dict[str, tuple[float, StudyAccess]] = {}
        self._tasks: dict[int, tuple[float, frozenset[int]]] = {}
        self._refreshing: set[tuple[int, object]] = set()
        self.logouts = logouts
        now = clock()
        for key, age in (logouts.ages() if logouts is not None else {}).items():
            self._revoked[key] = now - age

    def _kept(self, store: MutableMapping[K, tuple[float, V]], key: K, fresh: float, load: Callable[[], V]) -> V:
        """``store[key]``'s value while fresh (or stale, refreshed in the background), else ``load()`` stored."""
        with self._lock:
            kept = store.get(key)
            age = self.clock() - kept[0] if kept is not None else None
            if kept is not None and age is not None and age < fresh * STALE_FACTOR:
                if age >= fresh and (id(store), key) not in self._refreshing:
                    self._refreshing.add((id(store), key))
                    threading.Thread(target=self._refresh, args=(store, key, load), daemon=True).start()
                return kept[1]
        value = load()
        self._store(store, key, value)
        return value

    def _store(self, store: MutableMapping[K, tuple[float, V]], key: K, value: V) -> None:
        with self._lock:
            if store is self._sessions and SessionRead(value=str(key)).payload_key() in self._revoked:
                return  # logged out while it was asked
            store[key] = (self.clock(), value)
            if store is self._sessions:
                self._sessions.move_to_end(str(key))
                while len(self._sessions) > MAX_SESSIONS:
                    self._sessions.popitem(last=False)

    def _refresh(self, store: MutableMapping[K, tuple[float, V]], key: K, load: Callable[[], V]) -> None:
        try:
            self._store(store, key, load())
        except PosthocServiceError:
            pass  # Label Studio did not answer: the next request past the stale time asks (and says so) itself
        finally:
            with self._lock:
                self._refreshing.discard((id(store), key))

    def access(self) -> StudyAccess:
        self.follow_changes()
        return self._kept(self._access, "study", STUDY_SECONDS, self.load_access)

    def follow_changes(self) -> None:
        """When the watched study files changed (a revision): forget the projects' task ids (each is read again on
        its next request) and read the access again now; if that fails, keep the access read before (one log
        line)."""
        if self.watch is None or not self.watch.changed():
            return
        with self._lock:
            self._tasks.clear()
        try:
            access = self.load_access()
        except (PosthocInputError, PosthocServiceError) as exc:
            logger.warning("the study's files changed but its workers could not be read again (%s); keeping the "
                           "ones read before", exc)
            return
        self._store(self._access, "study", access)
        logger.info("the study's files changed: its %d workers read again", len(access.workers))

    def task_ids(self, project_id: int) -> frozenset[int]:
        def load() -> frozenset[int]:
            return frozenset(records.int_id(t) for t in self.client.tasks(project_id, fields="task_only",
                                                                          include="id"))

        return self._kept(self._tasks, project_id, STUDY_SECONDS, load)

    def revoke(self, key: str) -> None:
        """Refuse every copy of the session whose payload digest is ``key`` (:func:`session_key`) from now on, for
        :data:`MAX_SESSION_AGE`: Label Studio 1.23 keeps sessions in signed cookies, so a copy of the cookie stays
        valid after logging out until it expires, unless the gateway remembers the logout. Only logouts of valid
        sessions are remembered (:meth:`decide`), and nothing but age ends the memory: made-up cookies cannot
        flush it, and with a :class:`~posthoc_backend.gateway_logouts.LogoutStore` a restart does not either."""
        now = self.clock()
        if self.logouts is not None:
            self.logouts.add(key)
        with self._lock:
            self._revoked[key] = now
            self._revoked.move_to_end(key)
            self._verified.pop(key, None)
            for value in [v for v in self._sessions if SessionRead(value=v).payload_key() == key]:
                del self._sessions[value]
            while self._revoked and now - next(iter(self._revoked.values())) > MAX_SESSION_AGE:
                self._revoked.popitem(last=False)

    def session_email(self, session: SessionRead) -> str | None:
        """The e-mail of the user of ``session`` (``None``: no valid session): :meth:`user_of`."""
        user = self.user_of(session)
        return None if user is None else user.email

    def user_of(self, session: SessionRead) -> SessionUser | None:
        """The user of ``session`` (``None``: no valid session), asked of Label Studio with exactly
        one cookie value and kept ``session_seconds`` under that exact value, refreshed with that value only (a
        failed look-up of one value never touches another's).

        A value not asked about yet whose signed payload a verified cookie of the session carries (Label Studio
        re-signs the cookie on every answer) gets that cookie's kept answer, without a ``whoami`` of its own: a
        genuine re-signed copy is the same session, and a copy with a forged signature is answered as anonymous by
        Label Studio itself, so it gains nothing, and it is never asked about or stored: it cannot change what the
        real cookie gets."""
        payload = session.payload_key()
        if payload is None:
            return None
        with self._lock:
            if payload in self._revoked:
                return None
            if session.value not in self._sessions and payload in self._verified:
                session = self._verified[payload]
        asked = session

        def load() -> SessionUser | None:
            user = session_user(self.url, asked.whoami_cookie())
            if user is not None:
                with self._lock:
                    self._verified[payload] = asked
                    self._verified.move_to_end(payload)
                    while len(self._verified) > MAX_SESSIONS:
                        self._verified.popitem(last=False)
            return user

        return self._kept(self._sessions, str(asked.value), self.session_seconds, load)

    def caller(self, session: SessionRead) -> Caller:
        email = self.session_email(session)
        if email is None:
            return Caller(Role.ANONYMOUS)
        access = self.access()
        if email in access.owners:
            return Caller(Role.OWNER)
        if email not in access.workers:
            return Caller(Role.OUTSIDER)
        _, project_id = access.workers[email]
        return Caller(Role.WORKER, project_id=project_id, task_ids=self.task_ids(project_id))

    def decide(self, method: str, uri: str, headers: Mapping[str, str], *, host: str = "") -> tuple[Decision, Caller]:
        """The decision on one request and the caller it was made for. A ``Cookie`` header that names the session
        twice is refused (403, not the login page: :func:`~posthoc.labelstudio.gateway_cookie.read_session`)."""
        session = read_session(headers.get("cookie", ""))
        if session.refusal is not None:
            return deny(session.refusal), Caller(Role.OUTSIDER)
        caller = self.caller(session)
        decision = decide(GatewayRequest(method, uri, headers, host=host), caller, self.lookup)
        key = session.payload_key()
        if decision.allowed and key is not None and caller.role is not Role.ANONYMOUS and LOGOUT.fullmatch(uri):
            self.revoke(key)
        return decision, caller


def login_next(method: str, uri: str) -> str:
    """The query nginx puts on the login page for a logged-out request (``?next=<uri, encoded>``), so logging in
    lands on the page asked for: a plain page (``GET``, not under ``/api/`` or a static folder, a URI the rules
    read as plain); ``""`` for anything else."""
    parts = split_uri(uri)
    if method != "GET" or isinstance(parts, str) or parts[0].startswith(("/api/", "/user/", *STATIC_PREFIXES)):
        return ""
    return "?next=" + quote(uri, safe="/")


def create_gateway_app(authority: Authority) -> Flask:
    """The authoriser's Flask app: ``/authorise`` (any method), ``/health`` and the gateway's own answers
    (:func:`posthoc_backend.gateway_answers.register_answers`)."""
    app = Flask("posthoc_gateway", static_folder=None)

    @app.route("/authorise", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    def authorise() -> Response | tuple[Response, int]:
        headers = {key.lower(): value for key, value in request.headers.items()
                   if key.lower() not in GATEWAY_HEADERS}
        method = request.headers.get("X-Original-Method", "")
        uri = request.headers.get("X-Original-URI", "")
        host = request.headers.get("X-Original-Host", "")
        try:
            decision, caller = authority.decide(method, uri, headers, host=host)
        except PosthocServiceError as exc:
            return jsonify(detail="refused by the study gateway", reason=str(exc)), 403
        if decision.allowed:
            passed = Response(status=204)
            if decision.answer:
                passed.headers["X-Posthoc-Via"] = "gateway"  # nginx proxies it to the answers (gateway_answers)
            return passed
        if caller.role is Role.ANONYMOUS:
            answer = jsonify(detail="refused by the study gateway", reason=decision.reason)
            answer.headers["X-Posthoc-Login-Next"] = login_next(method, uri)
            return answer, 401
        return jsonify(detail="refused by the study gateway", reason=decision.reason), 403

    @app.get("/health")
    def health() -> Response:
        return jsonify(status="UP")

    register_answers(app, authority)
    return app


def default_logouts_file(manifest: Path) -> Path:
    """Where the authoriser of the study of ``manifest`` keeps its logouts: beside the manifest.

    Examples
    --------
    >>> default_logouts_file(Path("/studies/s1.sqlite")).name
    's1.gateway-logouts.sqlite'
    """
    return manifest.with_name(f"{manifest.stem}.gateway-logouts.sqlite")


def gateway_from_settings(*, manifest: Path, url: str, token: str, accounts_file: Path | None = None,
                          owners: Iterable[str] = (), logouts: Path | None = None) -> Flask:
    """The authoriser's app for the study of ``manifest`` in the Label Studio at ``url`` (admin ``token``); its
    logouts kept in ``logouts`` (default :func:`default_logouts_file`)."""
    if not manifest.is_file():
        raise PosthocInputError(f"{manifest}: no such manifest")
    client = LabelStudioClient(url, token)
    owner_list = list(owners)

    def load() -> StudyAccess:
        return load_study_access(manifest, client, accounts_file=accounts_file, owners=owner_list)

    watch = FileWatch([manifest, accounts_file or default_accounts_file(manifest), default_setup_file(manifest)])
    store = LogoutStore(logouts or default_logouts_file(manifest), max_age=MAX_SESSION_AGE)
    return create_gateway_app(Authority(url=url, client=client, load_access=load, watch=watch, logouts=store))


def app_from_environment() -> Flask:
    """The app from ``POSTHOC_MANIFEST``, ``LABEL_STUDIO_URL``, ``LABEL_STUDIO_TOKEN`` and the optional
    ``POSTHOC_ACCOUNTS_FILE``, ``POSTHOC_GATEWAY_OWNERS`` (comma-separated e-mails) and
    ``POSTHOC_GATEWAY_LOGOUTS`` (the logouts' file)."""
    env = os.environ
    missing = [name for name in ("POSTHOC_MANIFEST", "LABEL_STUDIO_URL", "LABEL_STUDIO_TOKEN") if not env.get(name)]
    if missing:
        raise PosthocInputError(f"the gateway's authoriser needs {', '.join(missing)} in its environment")
    accounts = env.get("POSTHOC_ACCOUNTS_FILE")
    return gateway_from_settings(manifest=Path(env["POSTHOC_MANIFEST"]), url=env["LABEL_STUDIO_URL"],
                                 token=env["LABEL_STUDIO_TOKEN"], accounts_file=Path(accounts) if accounts else None,
                                 owners=[o for o in env.get("POSTHOC_GATEWAY_OWNERS", "").split(",") if o],
                                 logouts=Path(env["POSTHOC_GATEWAY_LOGOUTS"]) if env.get("POSTHOC_GATEWAY_LOGOUTS")
                                 else None)
