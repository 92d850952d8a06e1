"""A small HTTP client for the Label Studio 1.23 REST API (``Authorization: Token <key>``).

The SDK (``label_studio_sdk``) covers most calls, but study setup needs a few it does not wrap
the same way in every version (Data Manager actions, task lists with prediction counts, the
invite link); one thin, typed client keeps every call and its error message in one place.
Failures become :class:`~posthoc.errors.PosthocServiceError` naming the call and the answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import requests

from posthoc.errors import PosthocServiceError, connection_failure

TIMEOUT = 300  # retrieve_tasks_predictions runs the ML backend synchronously inside the request
RETRIES = 4  # after the first try: 0.5 + 1 + 2 + 4 s of backoff, ~7.5 s in all
BACKOFF = 0.5
RETRY_STATUSES = frozenset({502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class LabelStudioClient:
    """Calls to one Label Studio as one user (the token's owner)."""

    def __init__(self, url: str, token: str, *, timeout: float = TIMEOUT, hide: Iterable[str | None] = ()) -> None:
        """``hide``: more secrets this client sends (e.g. the backend's), blanked like the token in errors."""
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self._hidden = sorted({value for value in (token, *hide) if value}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with the token and the other secrets of this client replaced by ``***`` (a server or a
        proxy may echo a request's headers or body in an error page; error messages are printed and logged)."""
        for value in self._hidden:
            text = text.replace(value, "***")
        return text

    def request(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204), **kwargs: Any) -> Any:
        """``method path`` -> parsed JSON (``None`` for an empty body); PosthocServiceError otherwise.

        Idempotent calls (GET, HEAD, PUT, DELETE, OPTIONS) are retried on a refused or dropped connection and on
        502 / 503 / 504 (a proxy or a restarting server), ``RETRIES`` times with exponential backoff
        (``BACKOFF`` s, doubling); a POST or PATCH is sent once, since Label Studio may have acted on it."""
        kwargs.setdefault("timeout", self.timeout)
        attempts = 1 + (RETRIES if method.upper() in IDEMPOTENT else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self.session.request(method, f"{self.url}{path}", **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if not last and not isinstance(exc, requests.ReadTimeout):
                    time.sleep(BACKOFF * 2**attempt)
                    continue
                raise PosthocServiceError(f"Label Studio at {self.url} is unreachable ({method} {path}, "
                                          f"{attempt + 1} tries: {connection_failure(exc)})") from exc
            except requests.RequestException as exc:
                raise PosthocServiceError(f"Label Studio at {self.url} is unreachable ({method} {path}: "
                                          f"{connection_failure(exc)})") from exc
            if response.status_code in RETRY_STATUSES and not last:
                time.sleep(BACKOFF * 2**attempt)
                continue
            break
        if response.status_code not in ok:
            detail = self.redact(response.text)[:500].strip()
            if response.status_code == 401:
                detail = "the API token was refused (check the token; the server needs the legacy token scheme)"
            raise PosthocServiceError(f"Label Studio {method} {path} answered {response.status_code}: {detail}")
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

    # -- collections ---------------------------------------------------------------------------
    def whoami(self) -> dict[str, Any]:
        return dict(self.get("/api/current-user/whoami"))

    def projects(self) -> list[dict[str, Any]]:
        """Every project visible to this user (all pages)."""
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = self.request("GET", "/api/projects/", params={"page": page, "page_size": 100},
                                  ok=(200, 404))
            if not isinstance(answer, dict) or not answer.get("results"):
                return found
            found.extend(answer["results"])
            if not answer.get("next"):
                return found
            page += 1

    def tasks(self, project_id: int, *, page_size: int = 500) -> Iterator[dict[str, Any]]:
        """The tasks of a project in id order, with ``data``, ``predictions`` (ids) and annotation counts."""
        page = 1
        while True:
            answer = self.request("GET", "/api/tasks/", params={"project": project_id, "page": page,
                                                                "page_size": page_size, "fields": "all"},
                                  ok=(200, 404))
            batch = answer.get("tasks", []) if isinstance(answer, dict) else []
            if not batch:
                return
            yield from sorted(batch, key=lambda task: int(task["id"]))
            if len(batch) < page_size:
                return
            page += 1

    def predictions(self, task_id: int) -> list[dict[str, Any]]:
        """Full predictions of one task."""
        answer = self.get("/api/predictions/", task=task_id)
        return list(answer if isinstance(answer, list) else answer.get("results", []))

    def ml_backends(self, project_id: int) -> list[dict[str, Any]]:
        return list(self.get("/api/ml/", project=project_id) or [])

    def next_task(self, project_id: int) -> dict[str, Any] | None:
        """The task ``/next`` serves this user in a project's labeling stream, or ``None`` when it is done."""
        try:
            response = self.session.get(f"{self.url}/api/projects/{project_id}/next", timeout=self.timeout)
        except requests.RequestException as exc:
            raise PosthocServiceError(self.redact(f"Label Studio at {self.url} is unreachable (next task): "
                                                  f"{exc}")) from exc
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise PosthocServiceError(f"Label Studio GET /api/projects/{project_id}/next answered "
                                      f"{response.status_code}: {self.redact(response.text)[:300]}")
        return dict(response.json())

    def export_snapshot(self, project_id: int, *, poll_seconds: float = 0.5, timeout: float = 600) -> list[Any]:
        """A snapshot export (JSON) with full predictions, expanded ``completed_by`` users and drafts."""
        import time

        created = self.post(f"/api/projects/{project_id}/exports/", {
            "title": "posthoc snapshot",
            "serialization_options": {"predictions": {"only_id": False},
                                      "annotations__completed_by": {"only_id": False},
                                      "drafts": {"only_id": False}}})
        export_id = int(created["id"])
        deadline = time.monotonic() + timeout
        while True:
            status = self.get(f"/api/projects/{project_id}/exports/{export_id}").get("status")
            if status == "completed":
                break
            if status == "failed" or time.monotonic() > deadline:
                raise PosthocServiceError(f"project {project_id}: snapshot export {export_id} ended as {status}")
            time.sleep(poll_seconds)
        data = self.get(f"/api/projects/{project_id}/exports/{export_id}/download", exportType="JSON")
        if not isinstance(data, list):
            raise PosthocServiceError(f"project {project_id}: the snapshot export is not a JSON list")
        return data

    def dm_action(self, project_id: int, action: str, task_ids: list[int]) -> Any:
        """Run a Data Manager action on the given tasks (e.g. ``retrieve_tasks_predictions``)."""
        return self.request("POST", "/api/dm/actions", params={"id": action, "project": project_id},
                            json={"selectedItems": {"all": False, "included": task_ids}})
