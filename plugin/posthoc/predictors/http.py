"""One HTTP call to a linking service: timeouts, retries with back-off, a deadline, clear errors.

:class:`ServiceClient` is what the ``rel`` and ``nif`` predictors share. A call is retried (``retries`` more
attempts, back-off ``backoff * 2**attempt`` seconds) when the connection fails, the read times out, or the
service answers 429 / 5xx; any other 4xx is final. No attempt starts, and no read waits, past the
``deadline`` (``time.monotonic()`` seconds) when one is given: the ML backend passes Label Studio's predict
budget down this way. Errors are :class:`~posthoc.predictors.base.PredictorServiceError` with the
service's name, its URL, the status and the first 200 characters of its answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from posthoc.http import ServiceSession, TransportFailure
from posthoc.predictors.base import PredictorServiceError

#: statuses worth another attempt
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass
class ServiceClient:
    """POST requests to one service URL (kept-alive connections per thread; safe in a thread pool)."""

    name: str
    url: str
    timeout: float = 30.0
    connect_timeout: float = 5.0
    retries: int = 2
    backoff: float = 0.5

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"{self.name}: the service URL must start with http:// or https://, got {self.url!r}")
        self._http = ServiceSession(self.url)
        parts = urlsplit(self.url)
        #: the URL as shown in messages: without any user:password@ it may carry
        self.shown_url = urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))

    def post(self, *, deadline: float | None = None, **kwargs: Any) -> ServiceAnswer:
        """POST to the service; the answer of the first attempt with a 2xx status."""
        attempts = self.retries + 1
        problem, made = "no attempt was made", 0
        for attempt in range(attempts):
            read = self.timeout
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0.05:
                    raise PredictorServiceError(f"{self.name} at {self.shown_url}: out of time before attempt "
                                                f"{attempt + 1} ({problem})")
                read = min(read, left)
            made += 1
            try:
                status, text, body = self._http.post(connect_timeout=min(self.connect_timeout, read),
                                                     read_timeout=read, **kwargs)
            except TransportFailure as exc:
                problem = str(exc)
            else:
                if 200 <= status < 300:
                    return ServiceAnswer(status, text, body)
                problem = f"answered {status} {_snippet(text)}"
                if status not in RETRY_STATUSES:
                    raise PredictorServiceError(f"{self.name} at {self.shown_url}: {problem}")
            if attempt + 1 < attempts:
                pause = self.backoff * 2**attempt
                if deadline is not None and time.monotonic() + pause >= deadline:
                    break
                time.sleep(pause)
        raise PredictorServiceError(f"{self.name} at {self.shown_url}: {problem} (after {made} attempt(s))")


@dataclass(frozen=True)
class ServiceAnswer:
    """A 2xx answer of a service: status, text and raw body."""

    status_code: int
    text: str
    content: bytes


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return (flat[:200] + "...") if len(flat) > 200 else flat
