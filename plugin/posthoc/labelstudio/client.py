"""The one boundary to Label Studio 1.23: every HTTP call of ``plugin/`` and ``ml_backend/`` goes through here.

Built on ``label-studio-sdk`` (:attr:`LabelStudioClient.sdk` is its ``LabelStudio`` client, made at first use,
used for the calls it wraps with types: members, predictions, ML backends, webhooks, exports, the token
exchange). Calls it does not wrap the way 1.23 answers them (task listings with ``fields``, the import with
``return_task_ids``, Data Manager actions, the invite link, ``/next``, the sign-up and log-in forms), and the two
every job starts with (whoami, the project listing: so that a run that needs nothing more, such as a periodic
score with nothing new, never imports the SDK, ~3 s) go through :meth:`LabelStudioClient.request` on the very
``httpx.Client`` handed to the SDK (its public ``httpx_client`` argument), so both share:

- **tokens**: a legacy API token (``Authorization: Token <key>``) or a personal access token (a JWT refresh
  token): the SDK exchanges it at ``/api/token/refresh/`` itself; our own calls get the access token from the
  SDK's public ``tokens.refresh`` and renew it a minute before it expires;
- **retries**: idempotent calls (GET, HEAD, PUT, DELETE, OPTIONS) are retried on a refused or dropped
  connection and on 502 / 503 / 504, ``RETRIES`` times, backoff ``BACKOFF * 2**attempt`` s; a POST or PATCH
  is sent once (Label Studio may have acted on it). The SDK's own retries are off (it would retry POSTs);
- **timeouts**: ``timeout`` seconds a call (by default ``POSTHOC_LS_TIMEOUT`` from the environment, else
  ``TIMEOUT``); a call that timed out says so and names the variable;
- **errors**: every failure is one line, :class:`~posthoc.errors.PosthocServiceError` (exit 3), naming the
  call and the answer, with the token and other secrets blanked.

Every listing is paged (Label Studio answers at most 100 projects or members a page). :func:`web_get_json` and
:class:`ServiceSession` are the same HTTP layer for the few other services the project calls (a MediaWiki API,
REL, a NIF annotator), so this stays the only module that imports an HTTP library or the SDK.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from label_studio_sdk.core.api_error import ApiError
from label_studio_sdk.types import SerializationOptionsRequest

from posthoc.errors import PosthocServiceError, answer_summary, connection_failure
from posthoc.labelstudio.server_log import LogMark, failure_reason, known_log, log_mark

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio
    from label_studio_sdk.label_interface import LabelInterface

__all__ = ["LabelStudioClient", "ServiceSession", "TransportFailure", "answers_ok", "label_interface",
           "web_get_json"]


def label_interface(label_config: str) -> LabelInterface:
    """The SDK's parse of a label config (``label_studio_sdk.label_interface.LabelInterface``), imported at the
    first call: the import costs ~0.9 s, which a score run with nothing new never pays."""
    from label_studio_sdk.label_interface import LabelInterface

    return LabelInterface(label_config)

TIMEOUT = 300  # a Data Manager action may run the ML backend synchronously inside the request
TIMEOUT_ENV = "POSTHOC_LS_TIMEOUT"


def default_timeout() -> float:
    """Seconds a Label Studio call waits: env ``POSTHOC_LS_TIMEOUT`` when it is a positive number, else
    :data:`TIMEOUT`."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV) or TIMEOUT)
    except ValueError:
        return TIMEOUT
    return value if value > 0 else TIMEOUT
RETRIES = 4  # after the first try: 0.5 + 1 + 2 + 4 s of backoff, ~7.5 s in all
BACKOFF = 0.5
RETRY_STATUSES = frozenset({502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
PAGE_SIZE = 100  # what Label Studio answers at most for projects and members
TASK_PAGE_SIZE = 100
SNAPSHOT_OPTIONS: dict[str, Any] = {
    "predictions": {"only_id": False},
    "annotations__completed_by": {"only_id": False},
    "drafts": {"only_id": False},
}
DOWNLOAD_TRIES = 5  # a streamed download dropped mid-body is started again, 0.5 s backoff doubling
_DROPPED = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError,
            httpx.ConnectTimeout, httpx.PoolTimeout)
T = TypeVar("T")
_NO_RETRY = "posthoc_no_retry"  # a request extension: one try only (readiness polls)
_LOG_MARK = "posthoc_log_mark"  # a response extension: the server log's end before the call (server_log)


_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Writes that never touch tasks and may run beside any other: the sign-up and log-in forms. Each costs Label
#: Studio ~0.4 s of password hashing (PBKDF2, which runs outside Python's lock), so several at once use every core.
_TASK_FREE_FORMS = ("/user/signup/", "/user/login/")


def _write_lock(request: httpx.Request) -> threading.Lock:
    """One lock per server (host and port) for all writes of this process: Label Studio 1.23 on SQLite gives a
    bulk import's tasks ids as ``latest id + 1`` itself (``select_for_update`` is a no-op there), so two imports
    at once collide (measured: predictions on another project's tasks, a project made twice). Reads, our own
    work, the backend's answers and the sign-up / log-in forms (:data:`_TASK_FREE_FORMS`) still overlap."""
    key = f"{request.url.host}:{request.url.port}"
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.Lock())


class _RetryTransport(httpx.BaseTransport):
    """Retries idempotent requests on a dropped connection and on 502 / 503 / 504 (module docstring); sends one
    write at a time to a server (:func:`_write_lock`)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method.upper() in _READS or request.url.path in _TASK_FREE_FORMS:
            return self._handle(request)
        with _write_lock(request):
            response = self._handle(request)
            response.read()  # the whole answer inside the lock: Label Studio has finished the write
            return response

    def _handle(self, request: httpx.Request) -> httpx.Response:
        retry = request.method.upper() in IDEMPOTENT and not request.extensions.get(_NO_RETRY)
        attempts = 1 + (RETRIES if retry else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self.inner.handle_request(request)
            except _DROPPED:
                if last:
                    raise
                time.sleep(BACKOFF * 2**attempt)
                continue
            if response.status_code in RETRY_STATUSES and not last:
                response.close()
                time.sleep(BACKOFF * 2**attempt)
                continue
            return response
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.inner.close()


def _http_client(timeout: float, **kwargs: Any) -> httpx.Client:
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    return httpx.Client(transport=_RetryTransport(httpx.HTTPTransport(limits=limits)), timeout=timeout,
                        **kwargs)


def _jwt_claims(token: str) -> dict[str, Any] | None:
    """The claims of a JWT (unverified: only to tell a personal access token from a legacy key), else ``None``."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError):
        return None
    return claims if isinstance(claims, dict) else None


class LabelStudioClient:
    """Calls to one Label Studio as one user (the token's owner); see the module docstring."""

    def __init__(self, url: str, token: str, *, timeout: float | None = None,
                 hide: Iterable[str | None] = ()) -> None:
        """``timeout``: seconds a call, default :func:`default_timeout`; ``hide``: more secrets this client sends
        (e.g. the backend's), blanked like the token in errors."""
        self.url = url.rstrip("/")
        self.timeout = timeout if timeout is not None else default_timeout()
        self._token = token
        self._hidden = sorted({value for value in (token, *hide) if value}, key=len, reverse=True)
        claims = _jwt_claims(token)
        self._personal = bool(claims and claims.get("token_type") == "refresh")
        if self._personal and float(claims.get("exp", 0) if claims else 0) < time.time():
            raise PosthocServiceError(f"Label Studio at {self.url}: the personal access token has expired; "
                                      "create a new one (Account & Settings)")
        self._access: tuple[str, float] | None = None
        self._lock = threading.RLock()
        self.http = _http_client(self.timeout)
        self._sdk: LabelStudio | None = None
        self._server_log = known_log(self.url)  # a local server's, to explain its failures (server_log)

    @property
    def sdk(self) -> LabelStudio:
        """label-studio-sdk's client on this client's ``httpx.Client``, made at its first use: importing it costs
        ~3 s (its every resource and model), which a run that needs no typed call (a periodic score with nothing
        new, ``study status``) does not pay."""
        with self._lock:
            if self._sdk is None:
                from label_studio_sdk import LabelStudio

                # max_retries=0: the transport retries idempotent calls only; the SDK would retry a POST too
                self._sdk = LabelStudio(base_url=self.url, api_key=self._token, timeout=self.timeout, max_retries=0,
                                        httpx_client=self.http)
            return self._sdk

    # -- errors ---------------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        """``text`` with the token and the other secrets of this client replaced by ``***`` (a server or a
        proxy may echo a request's headers or body in an error page; error messages are printed and logged)."""
        for value in self._hidden:
            text = text.replace(value, "***")
        return text

    def log_mark(self) -> LogMark | None:
        """Where the server's log ends before a call (``None`` when its log is unknown: a server elsewhere)."""
        return log_mark(self._server_log)

    def _answered(self, method: str, path: str, status: int, body: str, *,
                  since: LogMark | None = None) -> PosthocServiceError:
        detail = (failure_reason(since) if status >= 500 else None) or answer_summary(self.redact(body))
        if status == 401:
            detail = "the API token was refused (check the token; a legacy token needs the legacy token scheme)"
        return PosthocServiceError(f"Label Studio {method} {path} answered {status}: {detail}")

    def _unreachable(self, method: str, path: str, exc: BaseException, *,
                     since: LogMark | None = None) -> PosthocServiceError:
        tries = 1 + (RETRIES if method.upper() in IDEMPOTENT and not isinstance(exc, httpx.ReadTimeout) else 0)
        reason = failure_reason(since, write_timed_out=isinstance(exc, httpx.ReadTimeout)
                                and method.upper() not in _READS)
        if reason is not None:
            return PosthocServiceError(f"Label Studio {method} {path} got no answer in {self.timeout:g} s (env "
                                       f"{TIMEOUT_ENV}): {reason}")
        longer = (f"; to wait longer, set env {TIMEOUT_ENV}=SECONDS (now {self.timeout:g})"
                  if isinstance(exc, httpx.ReadTimeout) else "")
        return PosthocServiceError(self.redact(f"Label Studio at {self.url} is unreachable ({method} {path}, "
                                               f"{tries} tries: {connection_failure(exc)}){longer}"))

    def refused(self, method: str, path: str, response: httpx.Response) -> PosthocServiceError:
        """The one-line error for an answer of :meth:`send` with a status the caller did not expect (a 5xx that
        the server's log explains as SQLite's lock says so: :mod:`posthoc.labelstudio.server_log`)."""
        return self._answered(method, path, response.status_code, response.text,
                              since=response.extensions.get(_LOG_MARK))

    def call(self, what: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)``, an SDK call, with its failures as one PosthocServiceError line
        (``what``: e.g. ``"GET /api/projects/"``, named in the message)."""
        method, _, path = what.partition(" ")
        mark = self.log_mark()
        try:
            return function(*args, **kwargs)
        except PosthocServiceError:
            raise
        except ApiError as exc:
            body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
            raise self._answered(method, path, int(exc.status_code or 0), body, since=mark) from None
        except httpx.HTTPError as exc:
            raise self._unreachable(method, path, exc, since=mark) from None

    # -- raw calls ------------------------------------------------------------------------------
    def _auth_header(self) -> dict[str, str]:
        if not self._personal:
            return {"Authorization": f"Token {self._token}"}
        with self._lock:
            if self._access is None or self._access[1] < time.time() + 60:
                answer = self.call("POST /api/token/refresh/", self.sdk.tokens.refresh, refresh=self._token)
                claims = _jwt_claims(answer.access) or {}
                self._access = (answer.access, float(claims.get("exp", time.time() + 240)))
            return {"Authorization": f"Bearer {self._access[0]}"}

    def send(self, method: str, path: str, *, auth: bool = True, retry: bool = True, **kwargs: Any) -> httpx.Response:
        """One raw call (``path`` under the server's URL); the answer whatever its status, or PosthocServiceError
        when the server cannot be reached (after the retries of an idempotent call, unless ``retry=False``)."""
        headers = {**(self._auth_header() if auth else {}), **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", self.timeout)
        if not retry:
            kwargs["extensions"] = {_NO_RETRY: True}
        mark = self.log_mark()
        try:
            response = self.http.request(method, f"{self.url}{path}", headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            raise self._unreachable(method, path, exc, since=mark) from None
        response.extensions[_LOG_MARK] = mark
        return response

    def request(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204), **kwargs: Any) -> Any:
        """``method path`` -> parsed JSON (``None`` for an empty body); PosthocServiceError otherwise."""
        response = self.send(method, path, **kwargs)
        if response.status_code not in ok:
            raise self.refused(method, path, response)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None)

    def post(self, path: str, payload: Any = None, **params: Any) -> Any:
        return self.request("POST", path, json=payload, params=params or None)

    def patch(self, path: str, payload: Any) -> Any:
        return self.request("PATCH", path, json=payload)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path, ok=(200, 204, 404))

    def health(self, *, timeout: float = 10.0) -> None:
        """``GET /health`` answers 200 (retried like every idempotent call), else PosthocServiceError."""
        self.request("GET", "/health", ok=(200,), auth=False, timeout=timeout)

    # -- typed calls (the SDK) ------------------------------------------------------------------
    def whoami(self) -> dict[str, Any]:
        """The token's user (a raw call: it is the first call of every job, which should not wait for the SDK)."""
        answer = self.request("GET", "/api/current-user/whoami", ok=(200,))
        if not isinstance(answer, dict) or "id" not in answer:
            raise PosthocServiceError(f"Label Studio at {self.url}: GET /api/current-user/whoami did not answer a "
                                      "user; is this a Label Studio?")
        return answer

    def projects(self) -> list[dict[str, Any]]:
        """Every project visible to this user (all pages of 100; a raw paged listing, as every job starts
        with it)."""
        return list(self._results("/api/projects/"))

    def _results(self, path: str) -> Iterator[dict[str, Any]]:
        """The objects of a listing Label Studio pages as ``{"results", "next"}`` (``PAGE_SIZE`` a page), every
        page; a page past the last (404 after the first) ends it."""
        page = 1
        while True:
            answer = self.request("GET", path, params={"page": page, "page_size": PAGE_SIZE},
                                  ok=(200,) if page == 1 else (200, 404))
            results = answer.get("results", []) if isinstance(answer, dict) else []
            yield from (r for r in results if isinstance(r, dict))
            if not isinstance(answer, dict) or not answer.get("next") or not results:
                return
            page += 1

    def project(self, project_id: int) -> dict[str, Any]:
        return dict(self.call(f"GET /api/projects/{project_id}/", self.sdk.projects.get, id=project_id).model_dump())

    def members(self) -> list[dict[str, Any]]:
        """Every user of this user's organisation (``id``, ``email``, ...): one paged listing of its memberships
        (``GET /api/users/`` is unpaged and costs ~2 ms per user in 1.23)."""
        organisation = int(self.whoami()["active_organization"])
        return [dict(m["user"]) for m in self._results(f"/api/organizations/{organisation}/memberships")
                if isinstance(m.get("user"), dict)]

    def tasks(self, project_id: int, *, fields: str = "all", include: str | None = None,
              page_size: int = TASK_PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """The tasks of a project in id order, page by page. ``fields="all"``: with full ``predictions`` and
        ``annotations``; ``"task_only"``: without; ``include``: only these task fields (comma-separated)."""
        page = 1
        while True:
            params: dict[str, Any] = {"project": project_id, "page": page, "page_size": page_size, "fields": fields}
            if include:
                params["include"] = include
            answer = self.request("GET", "/api/tasks/", params=params, ok=(200, 404))
            batch = answer.get("tasks", []) if isinstance(answer, dict) else []
            if not batch:
                return
            yield from sorted(batch, key=lambda task: int(task["id"]))
            total = int(answer.get("total", 0)) if isinstance(answer, dict) else 0
            if page * page_size >= total or len(batch) < page_size:
                return
            page += 1

    def tasks_with_predictions(self, project_id: int) -> list[dict[str, Any]]:
        """The tasks of a project in id order, each with its full ``predictions`` (in id order): a task listing
        without annotations (``fields=task_only``) and one listing of the project's predictions, much cheaper
        for Label Studio than serialising every task with ``fields=all``."""
        tasks = list(self.tasks(project_id, fields="task_only"))
        by_task = self.project_predictions(project_id)
        for task in tasks:
            task["predictions"] = by_task.get(int(task["id"]), [])
        return tasks

    def project_predictions(self, project_id: int) -> dict[int, list[dict[str, Any]]]:
        """``{task id: its full predictions in id order}`` of a project: one listing of its predictions (Label
        Studio answers them all at once, without serialising the tasks' data)."""
        by_task: dict[int, list[dict[str, Any]]] = {}
        for prediction in self.get("/api/predictions/", project=project_id) or []:
            by_task.setdefault(int(prediction["task"]), []).append(prediction)
        for predictions in by_task.values():
            predictions.sort(key=lambda p: int(p["id"]))
        return by_task

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Import ``tasks`` (``{"data", "predictions"?}``) in one request; the ids Label Studio gave them."""
        answer = self.post(f"/api/projects/{project_id}/import", tasks, commit_to_project="true",
                           return_task_ids="true")
        ids = answer.get("task_ids") if isinstance(answer, dict) else None
        return [int(i) for i in ids] if isinstance(ids, list) else []

    def import_predictions(self, project_id: int, predictions: list[dict[str, Any]]) -> None:
        """Add ``predictions`` (``{"task", "result", "model_version"}``) to existing tasks in one request."""
        self.post(f"/api/projects/{project_id}/import/predictions", predictions)

    def predictions(self, task_id: int) -> list[dict[str, Any]]:
        """Full predictions of one task."""
        found = self.call("GET /api/predictions/", self.sdk.predictions.list, task=task_id)
        return [p.model_dump() for p in found]

    def ml_backends(self, project_id: int) -> list[dict[str, Any]]:
        return [b.model_dump() for b in self.call("GET /api/ml/", self.sdk.ml.list, project=project_id)]

    def webhooks(self, project_id: int) -> list[dict[str, Any]]:
        return [h.model_dump() for h in self.call("GET /api/webhooks/", self.sdk.webhooks.list,
                                                  project=str(project_id))]

    def next_task(self, project_id: int) -> dict[str, Any] | None:
        """The task ``/next`` serves this user in a project's labeling stream, or ``None`` when it is done."""
        path = f"/api/projects/{project_id}/next"
        response = self.send("GET", path)
        if response.status_code == 404:  # the stream is done (the body says so in words)
            return None
        if response.status_code != 200:
            raise self.refused("GET", path, response)
        return dict(response.json())

    def dm_action(self, project_id: int, action: str, task_ids: list[int]) -> Any:
        """Run a Data Manager action on the given tasks (e.g. ``retrieve_tasks_predictions``)."""
        return self.request("POST", "/api/dm/actions", params={"id": action, "project": project_id},
                            json={"selectedItems": {"all": False, "included": task_ids}})

    def invite_token(self) -> str:
        """The organisation's invite token (the ``token`` of its sign-up link)."""
        return str(self.get("/api/invite")["token"])

    # -- snapshot exports -----------------------------------------------------------------------
    def export_snapshot_to(self, project_id: int, write: Callable[[Iterator[bytes]], None], *,
                           title: str = "posthoc snapshot", poll_seconds: float = 0.5,
                           timeout_seconds: float = 1800.0) -> None:
        """Create a snapshot export (JSON, with :data:`SNAPSHOT_OPTIONS`), wait for it, hand its bytes to
        ``write`` (started again from the first byte when the download drops), then delete it on the server."""
        exports = self.sdk.projects.exports
        where = f"/api/projects/{project_id}/exports/"
        export = self.call(f"POST {where}", exports.create, id=project_id, title=title,
                           serialization_options=SerializationOptionsRequest(**SNAPSHOT_OPTIONS))
        export_id = int(export.id or 0)
        deadline = time.monotonic() + timeout_seconds
        status = export.status
        while status not in ("completed", "failed"):
            if time.monotonic() > deadline:
                raise PosthocServiceError(f"Label Studio at {self.url}: export {export_id} of project {project_id} "
                                          f"not finished after {timeout_seconds:.0f} s")
            time.sleep(poll_seconds)
            status = self.call(f"GET {where}{export_id}", exports.get, id=project_id, export_pk=export_id).status
        if status == "failed":
            raise PosthocServiceError(f"Label Studio at {self.url}: export {export_id} of project {project_id} "
                                      "failed")
        for attempt in range(DOWNLOAD_TRIES):
            try:
                self.call(f"GET {where}{export_id}/download", lambda: write(
                    exports.download(id=project_id, export_pk=export_id, export_type="JSON")))
                break
            except PosthocServiceError as exc:
                transient = any(f"answered {s}" in str(exc) for s in RETRY_STATUSES) or "unreachable" in str(exc)
                if not transient or attempt == DOWNLOAD_TRIES - 1:
                    raise
                time.sleep(BACKOFF * 2**attempt)
        with contextlib.suppress(ApiError, httpx.HTTPError):  # a left-over snapshot on the server is harmless
            exports.delete(id=project_id, export_pk=export_id)

    def export_snapshot(self, project_id: int, **options: Any) -> list[Any]:
        """A snapshot export (see :meth:`export_snapshot_to`) read into memory (for small projects and tests)."""
        chunks: list[bytes] = []

        def keep(stream: Iterator[bytes]) -> None:
            chunks.clear()
            chunks.extend(stream)

        self.export_snapshot_to(project_id, keep, **options)
        data = json.loads(b"".join(chunks))
        if not isinstance(data, list):
            raise PosthocServiceError(f"project {project_id}: the snapshot export is not a JSON list")
        return data

    # -- forms (accounts) -----------------------------------------------------------------------
    def form_session(self, *, csrf: str | None = None) -> FormSession:
        """A cookie session for Label Studio's HTML forms (sign-up, log-in), as a browser uses them; ``csrf``: a
        CSRF cookie read before (:meth:`FormSession.csrf`), which saves reading the form's page again."""
        return FormSession(self, csrf=csrf)

    def close(self) -> None:
        self.http.close()


class FormSession:
    """Label Studio's sign-up and log-in forms over one cookie jar (no API token: a person's session)."""

    def __init__(self, client: LabelStudioClient, *, csrf: str | None = None) -> None:
        self.client = client
        self.http = _http_client(client.timeout, follow_redirects=False, cookies={"csrftoken": csrf} if csrf else None)

    def csrf(self, page: str) -> str:
        """The CSRF cookie of the form at ``page`` (read from it when this session has none yet)."""
        return str(self.http.cookies.get("csrftoken") or self._csrf(page))

    def _csrf(self, page: str) -> str:
        mark = self.client.log_mark()
        try:
            self.http.get(f"{self.client.url}{page}")
        except httpx.HTTPError as exc:
            raise self.client._unreachable("GET", page.split("?")[0], exc, since=mark) from None
        csrf = self.http.cookies.get("csrftoken")
        if not csrf:
            raise PosthocServiceError(f"Label Studio at {self.client.url}{page.split('?')[0]} set no CSRF cookie")
        return str(csrf)

    def submit(self, page: str, fields: dict[str, str]) -> httpx.Response:
        """POST the form at ``page`` (after reading its CSRF cookie once) and return the answer."""
        csrf = self.http.cookies.get("csrftoken") or self._csrf(page)
        mark = self.client.log_mark()
        try:
            response = self.http.post(f"{self.client.url}{page}", data={"csrfmiddlewaretoken": str(csrf), **fields},
                                      headers={"Referer": f"{self.client.url}{page}"})
        except httpx.HTTPError as exc:
            raise self.client._unreachable("POST", page.split("?")[0], exc, since=mark) from None
        response.extensions[_LOG_MARK] = mark
        return response

    def get_json(self, path: str) -> Any:
        """A JSON API call as the logged-in person."""
        mark = self.client.log_mark()
        try:
            response = self.http.get(f"{self.client.url}{path}")
        except httpx.HTTPError as exc:
            raise self.client._unreachable("GET", path, exc, since=mark) from None
        if response.status_code != 200:
            raise self.client._answered("GET", path, response.status_code, response.text, since=mark)
        return response.json()

    def close(self) -> None:
        self.http.close()


# ---------------------------------------------------------------------------------------------- other services
class TransportFailure(Exception):
    """A call to another service failed: no answer (``status`` ``None``; ``timed_out`` when it was slow) or a
    non-2xx answer (``status`` and ``text``)."""

    def __init__(self, reason: str, *, status: int | None = None, text: str = "", timed_out: bool = False) -> None:
        super().__init__(reason)
        self.status = status
        self.text = text
        self.timed_out = timed_out


def answers_ok(url: str, *, timeout: float = 2.0) -> bool:
    """Whether ``GET url`` answers 200 now (one try, no retries: a readiness poll or a status line)."""
    try:
        return httpx.get(url, timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def web_get_json(url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None,
                 timeout: float = 20.0) -> Any:
    """``GET url`` -> parsed JSON; :class:`TransportFailure` on no answer, a non-2xx answer or no JSON."""
    try:
        response = httpx.get(url, params=params, headers=headers, timeout=timeout, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise TransportFailure(connection_failure(exc), timed_out=isinstance(exc, httpx.TimeoutException)) from None
    if not 200 <= response.status_code < 300:
        raise TransportFailure(f"HTTP {response.status_code}", status=response.status_code, text=response.text)
    try:
        return response.json()
    except ValueError as exc:
        raise TransportFailure(f"not JSON ({exc})", status=response.status_code) from None


class ServiceSession:
    """POSTs to one service URL over kept-alive connections (one client per thread: safe in a thread pool)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._local = threading.local()

    def _client(self) -> httpx.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client()
            self._local.client = client
        return client

    def post(self, *, connect_timeout: float, read_timeout: float, **kwargs: Any) -> tuple[int, str, bytes]:
        """One POST (``json=`` / ``data=`` / ``headers=`` as in httpx) -> ``(status, text, body)``;
        :class:`TransportFailure` when there is no answer."""
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        if isinstance(kwargs.get("data"), (str, bytes)):
            kwargs["content"] = kwargs.pop("data")  # a raw body (httpx spells it content=)
        try:
            response = self._client().post(self.url, timeout=timeout, **kwargs)
        except httpx.TimeoutException:
            raise TransportFailure(f"no answer within {read_timeout:.1f} s", timed_out=True) from None
        except httpx.HTTPError as exc:
            raise TransportFailure(f"cannot connect ({type(exc).__name__})") from None
        return response.status_code, response.text, response.content
