"""The one boundary to Label Studio 1.23: every call of ``plugin/`` and ``ml_backend/`` to it goes through here.

Built on ``label-studio-sdk`` (:attr:`LabelStudioClient.sdk` is its ``LabelStudio`` client, made at first use,
used for the calls it wraps with types: members, predictions, ML backends, webhooks, exports, the token
exchange). Calls it does not wrap the way 1.23 answers them (task listings with ``fields``, the import with
``return_task_ids``, Data Manager actions, the invite link, ``/next``, the sign-up and log-in forms), and the two
every job starts with (whoami, the project listing: so that a run that needs nothing more, such as a periodic
score with nothing new, never imports the SDK, ~3 s, nor its pydantic models: its modules are imported where a
typed call is made) go through :meth:`LabelStudioClient.request` on the very
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
  call and the answer, with the token and other secrets blanked;
- **connections**: over ``http://`` one connection a request, none kept alive, and no certificate store loaded
  (:func:`posthoc.http.retrying_client`); over ``https://`` up to 16 kept alive. Label Studio's own server
  (``label-studio start``, Django's ``runserver``) writes an answer's headers and body in two sends with Nagle's
  algorithm on, so on a reused connection the body waits for the client's delayed ACK: ~40 ms an answer
  (measured on 1.23, a warm client, 15 requests each: ``whoami`` 58.5 ms kept alive against 19.6 ms on a new
  connection, a one-row Data Manager query 75.8 against 35.1 ms); a new connection starts in quick-ACK mode.
  On a local network a new TCP connection costs well under a millisecond; gunicorn's sync workers close every
  connection anyway; a TLS handshake is dearer, and a TLS front (nginx, Caddy) sends without that wait.

Every listing is paged (Label Studio answers at most 100 projects or members a page): those calls, which need
nothing but :meth:`LabelStudioClient.request`, are in :mod:`posthoc.labelstudio.calls`. The retrying transport
and the other services the project calls (a MediaWiki API, REL, a NIF annotator) are in :mod:`posthoc.http`;
this module and that one are the only ones that import an HTTP library, and this the only one that imports the
SDK.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypedDict, TypeVar, cast

import httpx
from typing_extensions import Unpack

from posthoc.errors import PosthocServiceError, answer_summary, connection_failure
from posthoc.http import NO_RETRY, jwt_claims, retrying_client
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.calls import ApiCalls, CallOptions
from posthoc.labelstudio.refusals import refusal_detail
from posthoc.labelstudio.server_log import LogMark, failure_reason, known_log, log_mark

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio as LabelStudio
    from label_studio_sdk.label_interface.interface import LabelInterface as LabelInterface

__all__ = ["LabelStudioClient", "label_interface"]


def label_interface(label_config: str) -> LabelInterface:
    """The SDK's parse of a label config (``label_studio_sdk.label_interface.LabelInterface``), imported at the
    first call: the import costs ~0.9 s, which a score run with nothing new never pays."""
    from label_studio_sdk.label_interface.interface import LabelInterface

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
SNAPSHOT_OPTIONS: dict[str, Any] = {
    "predictions": {"only_id": False},
    "annotations__completed_by": {"only_id": False},
    "drafts": {"only_id": False},
}
DOWNLOAD_TRIES = 5  # a streamed download dropped mid-body is started again, 0.5 s backoff doubling
T = TypeVar("T")
P = ParamSpec("P")
_LOG_MARK = "posthoc_log_mark"  # a response extension: the server log's end before the call (server_log)


_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Writes that never touch tasks and may run beside any other: the sign-up and log-in forms. Each costs Label
#: Studio ~0.4 s of password hashing (PBKDF2, which runs outside Python's lock), so several at once use every core.
_TASK_FREE_FORMS = ("/user/signup/", "/user/login/")


def _write_lock(request: httpx.Request) -> threading.Lock | None:
    """One lock per server (host and port) for all writes of this process: Label Studio 1.23 on SQLite gives a
    bulk import's tasks ids as ``latest id + 1`` itself (``select_for_update`` is a no-op there), so two imports
    at once collide (measured: predictions on another project's tasks, a project made twice). Reads, our own
    work, the backend's answers and the sign-up / log-in forms (:data:`_TASK_FREE_FORMS`) still overlap
    (``None``: no lock)."""
    if request.method.upper() in _READS or request.url.path in _TASK_FREE_FORMS:
        return None
    key = f"{request.url.host}:{request.url.port}"
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.Lock())


def _http_client(url: str, timeout: float, *, follow_redirects: bool = False,
                 cookies: dict[str, str] | None = None) -> httpx.Client:
    """An ``httpx.Client`` for the Label Studio at ``url`` whose transport retries and locks as the module
    docstring says, and which keeps connections alive only over ``https://`` (see the module docstring)."""
    return retrying_client(timeout, retries=RETRIES, backoff=BACKOFF, statuses=RETRY_STATUSES,
                           idempotent=IDEMPOTENT, lock=_write_lock, plain_http=url.lower().startswith("http://"),
                           follow_redirects=follow_redirects, cookies=cookies)


class SnapshotOptions(TypedDict, total=False):
    """The options of :meth:`LabelStudioClient.export_snapshot_to` (the export's ``title``, seconds between
    polls and in all)."""

    title: str
    poll_seconds: float
    timeout_seconds: float


class LabelStudioClient(ApiCalls):
    """Calls to one Label Studio as one user (the token's owner); see the module docstring."""

    def __init__(self, url: str, token: str, *, timeout: float | None = None,
                 hide: Iterable[str | None] = ()) -> None:
        """``timeout``: seconds a call, default :func:`default_timeout`; ``hide``: more secrets this client sends
        (e.g. the backend's), blanked like the token in errors."""
        self.url = url.rstrip("/")
        self.timeout = timeout if timeout is not None else default_timeout()
        self._token = token
        self._hidden = sorted({value for value in (token, *hide) if value}, key=len, reverse=True)
        claims = jwt_claims(token)
        self._personal = bool(claims and claims.get("token_type") == "refresh")
        if self._personal and float(claims.get("exp", 0) if claims else 0) < time.time():
            raise PosthocServiceError(f"Label Studio at {self.url}: the personal access token has expired; "
                                      "create a new one (Account & Settings)")
        self._access: tuple[str, float] | None = None
        self._lock = threading.RLock()
        self.http = _http_client(self.url, self.timeout)
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
                # (the SDK's client __init__ is unannotated)
                self._sdk = LabelStudio(base_url=self.url, api_key=self._token, timeout=self.timeout,  # type: ignore[no-untyped-call]
                                        max_retries=0, httpx_client=self.http)
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
        detail = (refusal_detail(status, self.redact(body)) or (failure_reason(since) if status >= 500 else None)
                  or answer_summary(self.redact(body)))
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

    def call(self, what: str, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``function(*args, **kwargs)``, an SDK call, with its failures as one PosthocServiceError line
        (``what``: e.g. ``"GET /api/projects/"``, named in the message)."""
        from label_studio_sdk.core.api_error import ApiError  # loaded with the SDK that made ``function``

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
                claims = jwt_claims(answer.access) or {}
                self._access = (answer.access, float(claims.get("exp", time.time() + 240)))
            return {"Authorization": f"Bearer {self._access[0]}"}

    def send(self, method: str, path: str, **options: Unpack[CallOptions]) -> httpx.Response:
        """One raw call (``path`` under the server's URL; ``options``: :class:`~posthoc.labelstudio.calls.CallOptions`);
        the answer whatever its status, or PosthocServiceError when the server cannot be reached (after the retries
        of an idempotent call, unless ``retry=False``)."""
        headers = {**(self._auth_header() if options.get("auth", True) else {}), **options.get("headers", {})}
        mark = self.log_mark()
        try:
            response = self.http.request(method, f"{self.url}{path}", params=options.get("params"),
                                         json=options.get("json"), headers=headers,
                                         timeout=options.get("timeout", self.timeout),
                                         extensions=None if options.get("retry", True) else {NO_RETRY: True})
        except httpx.HTTPError as exc:
            raise self._unreachable(method, path, exc, since=mark) from None
        response.extensions[_LOG_MARK] = mark
        return response

    def request(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204),
                **options: Unpack[CallOptions]) -> Any:
        """``method path`` -> parsed JSON (``None`` for an empty body); PosthocServiceError otherwise."""
        response = self.send(method, path, **options)
        if response.status_code not in ok:
            raise self.refused(method, path, response)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    def health(self, *, timeout: float = 10.0) -> None:
        """``GET /health`` answers 200 (retried like every idempotent call), else PosthocServiceError."""
        self.request("GET", "/health", ok=(200,), auth=False, timeout=timeout)

    # -- typed calls (the SDK) and /next ---------------------------------------------------------
    def project(self, project_id: int) -> dict[str, Any]:
        return dict(self.call(f"GET /api/projects/{project_id}/", self.sdk.projects.get, id=project_id).model_dump())

    def predictions(self, task_id: int) -> list[ls.Prediction]:
        """Full predictions of one task."""
        found = self.call("GET /api/predictions/", self.sdk.predictions.list, task=task_id)
        return [cast(ls.Prediction, p.model_dump()) for p in found]

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

    # -- snapshot exports -----------------------------------------------------------------------
    def export_snapshot_to(self, project_id: int, write: Callable[[Iterator[bytes]], None], *,
                           title: str = "posthoc snapshot", poll_seconds: float = 0.5,
                           timeout_seconds: float = 1800.0) -> None:
        """Create a snapshot export (JSON, with :data:`SNAPSHOT_OPTIONS`), wait for it, hand its bytes to
        ``write`` (started again from the first byte when the download drops), then delete it on the server."""
        from label_studio_sdk.core.api_error import ApiError
        from label_studio_sdk.types import SerializationOptionsRequest

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

    def export_snapshot(self, project_id: int, **options: Unpack[SnapshotOptions]) -> list[ls.Task]:
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
        self.http = _http_client(client.url, client.timeout, follow_redirects=False,
                                 cookies={"csrftoken": csrf} if csrf else None)

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

    def get_json(self, path: str) -> Mapping[str, object]:
        """A JSON API call as the logged-in person that answers an object."""
        mark = self.client.log_mark()
        try:
            response = self.http.get(f"{self.client.url}{path}")
        except httpx.HTTPError as exc:
            raise self.client._unreachable("GET", path, exc, since=mark) from None
        if response.status_code != 200:
            raise self.client._answered("GET", path, response.status_code, response.text, since=mark)
        answer = response.json()
        if not isinstance(answer, dict):
            raise PosthocServiceError(f"Label Studio GET {path} answered no JSON object")
        return answer

    def close(self) -> None:
        self.http.close()
