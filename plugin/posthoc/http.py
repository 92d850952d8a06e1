"""The generic HTTP layer: what :mod:`posthoc.labelstudio.client` builds on and what the other services use.

- :class:`RetryTransport` / :func:`retrying_client`: retries of idempotent calls and a per-request lock, with
  the policy (how often, which statuses, which writes one at a time) given by the caller (the Label Studio
  client's is in its module docstring); :func:`jwt_claims` reads a token's claims;
- :func:`answers_ok` (a one-try readiness poll), :func:`web_get_json` and :class:`ServiceSession` for the
  services other than Label Studio (a MediaWiki API, REL, a NIF annotator): a failure is a
  :class:`TransportFailure` the caller turns into its own error line; retries and deadlines for those are the
  caller's (:mod:`posthoc.predictors.http`).

With :mod:`posthoc.labelstudio.client` this is the only module of ``plugin/`` and ``ml_backend/`` that imports
an HTTP library (``tests/architecture/test_http_modules.py``).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from posthoc.errors import connection_failure
from posthoc.lazy import PerThread

__all__ = ["NO_RETRY", "RetryTransport", "ServiceSession", "TransportFailure", "answers_ok", "jwt_claims",
           "no_trust_context", "retrying_client", "web_get_json"]

NO_RETRY = "posthoc_no_retry"  # a request extension: one try only (readiness polls)
_DROPPED = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError,
            httpx.ConnectTimeout, httpx.PoolTimeout)


class RetryTransport(httpx.BaseTransport):
    """Retries ``idempotent`` requests (unless marked :data:`NO_RETRY`) on a dropped connection and on the
    ``statuses``, ``retries`` times, backoff ``backoff * 2**attempt`` s; a request for which ``lock`` gives a
    lock is sent, and its answer read, holding it."""

    def __init__(self, inner: httpx.BaseTransport, *, retries: int, backoff: float, statuses: frozenset[int],
                 idempotent: frozenset[str], lock: Callable[[httpx.Request], threading.Lock | None]) -> None:
        self.inner = inner
        self.retries = retries
        self.backoff = backoff
        self.statuses = statuses
        self.idempotent = idempotent
        self.lock = lock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        lock = self.lock(request)
        if lock is None:
            return self._handle(request)
        with lock:
            response = self._handle(request)
            response.read()  # the whole answer inside the lock: the server has finished the write
            return response

    def _handle(self, request: httpx.Request) -> httpx.Response:
        retry = request.method.upper() in self.idempotent and not request.extensions.get(NO_RETRY)
        attempts = 1 + (self.retries if retry else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self.inner.handle_request(request)
            except _DROPPED:
                if last:
                    raise
                time.sleep(self.backoff * 2**attempt)
                continue
            if response.status_code in self.statuses and not last:
                response.close()
                time.sleep(self.backoff * 2**attempt)
                continue
            return response
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.inner.close()


def retrying_client(timeout: float, *, retries: int, backoff: float, statuses: frozenset[int],
                    idempotent: frozenset[str], lock: Callable[[httpx.Request], threading.Lock | None],
                    plain_http: bool = False, **kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` (up to 16 connections) over a :class:`RetryTransport`; ``kwargs`` as in
    ``httpx.Client``.

    ``plain_http``: a client of a plain ``http://`` service (see :mod:`posthoc.labelstudio.client` for why): one
    connection a request, none kept alive, and no certificate store loaded (certifi's costs ~0.14 s a process):
    its context trusts no certificate, so a TLS connection (a redirect to ``https://``) fails verification
    instead of going unverified (:func:`no_trust_context`). Otherwise up to 16 connections are kept alive."""
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=0 if plain_http else 16)
    inner = httpx.HTTPTransport(limits=limits, verify=no_trust_context() if plain_http else True)
    transport = RetryTransport(inner, retries=retries, backoff=backoff, statuses=statuses, idempotent=idempotent,
                               lock=lock)
    return httpx.Client(transport=transport, timeout=timeout, **kwargs)


def no_trust_context() -> ssl.SSLContext:
    """A TLS client context that verifies certificates and host names and trusts no certificate authority: every
    TLS handshake with it fails (for a client that must never speak TLS), and making it loads no file."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def jwt_claims(token: str) -> dict[str, Any] | None:
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
                 timeout: float = 20.0) -> object:
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
        self._client = PerThread(httpx.Client)

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

    def relay(self, method: str, path: str, *, headers: list[tuple[str, str]], content: bytes,
              timeout: float) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request of any method to ``self.url + path`` (a raw path and query) with ``content`` as its body,
        byte for byte, and ``headers`` as given -> ``(status, headers with repeats such as Set-Cookie, body)``
        (the study gateway forwards a checked write with it: :mod:`posthoc_backend.gateway_answers`);
        :class:`TransportFailure` when there is no answer. Redirects are not followed."""
        try:
            response = self._client().request(method, self.url + path, headers=headers, content=content,
                                              timeout=timeout, follow_redirects=False)
        except httpx.TimeoutException:
            raise TransportFailure(f"no answer within {timeout:.1f} s", timed_out=True) from None
        except httpx.HTTPError as exc:
            raise TransportFailure(f"cannot connect ({type(exc).__name__})") from None
        return response.status_code, response.headers.multi_items(), response.content
