"""What the gateway's authoriser asks Label Studio (issue 23): whose session a cookie is, and which project an
annotation, a draft or a Data Manager view belongs to. Cached; the JSON read here stays in ``labelstudio/``.

* :func:`session_user`: ``GET /api/current-user/whoami`` with the caller's forwarded ``Cookie`` header (the one
  call made with a user's session rather than the admin token, so through :mod:`posthoc.http`). A forged,
  expired or missing session answers 401/403 or the login page: ``None``.
* :class:`ProjectObjects`: a :class:`~posthoc.labelstudio.gateway_rules.Lookup` over the admin's
  :class:`~posthoc.labelstudio.client.LabelStudioClient`; an object's project never changes, so answers are kept
  (a missing object is asked again next time).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from posthoc.errors import PosthocServiceError
from posthoc.http import TransportFailure, web_get_json
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.records import annotation_project, annotation_task, record_id, task_project

#: where each kind of object is read (admin token); ``task`` is read for a draft's project
OBJECT_PATHS = {"annotation": "/api/annotations/{}/", "draft": "/api/drafts/{}/", "view": "/api/dm/views/{}/",
                "task": "/api/tasks/{}/", "prediction": "/api/predictions/{}/"}


@dataclass(frozen=True)
class SessionUser:
    """The Label Studio user a session belongs to."""

    user_id: int
    email: str
    #: whoami's answer as Label Studio gave it (the worker's own fields: the gateway's ``/api/users`` answer)
    record: Mapping[str, object] = field(default_factory=dict, compare=False)


def session_user(url: str, cookie: str, *, timeout: float = 5.0) -> SessionUser | None:
    """The user whose session ``cookie`` (a raw ``Cookie`` header) carries, ``None`` when it carries none that
    Label Studio accepts; PosthocServiceError when Label Studio cannot be asked."""
    if not cookie.strip():
        return None
    try:
        answer = web_get_json(f"{url.rstrip('/')}/api/current-user/whoami", headers={"Cookie": cookie},
                              timeout=timeout)
    except TransportFailure as exc:
        if exc.status is not None and exc.status < 500:
            return None  # 401/403, or the login page instead of JSON
        raise PosthocServiceError(f"Label Studio at {url} did not answer whoami ({exc})") from None
    if not isinstance(answer, Mapping):
        return None
    user_id, email = record_id(answer), answer.get("email")
    if not isinstance(user_id, int) or not isinstance(email, str) or not email:
        return None
    return SessionUser(user_id, email.strip().lower(), dict(answer))


def _object_project(kind: str, record: Mapping[str, object]) -> int | None:
    """The project id a record names directly (a task's, an annotation's or a view's ``project``)."""
    found = annotation_project(record) if kind == "annotation" else task_project(record)
    return found if isinstance(found, int) and not isinstance(found, bool) else None


class ProjectObjects:
    """The project of an annotation, draft, prediction or view, read with the admin's client and kept (thread-safe)."""

    def __init__(self, client: LabelStudioClient) -> None:
        self.client = client
        self._known: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def _read(self, kind: str, object_id: int) -> Mapping[str, object] | None:
        response = self.client.send("GET", OBJECT_PATHS[kind].format(object_id))
        if response.status_code != 200:
            return None
        try:
            record = response.json()
        except ValueError:
            return None
        return record if isinstance(record, Mapping) else None

    def project_of(self, kind: str, object_id: int) -> int | None:
        """The project of object ``kind`` (annotation, draft, prediction, view, task) ``object_id``; ``None`` when Label
        Studio has no such object."""
        if kind not in OBJECT_PATHS:
            return None
        with self._lock:
            if (kind, object_id) in self._known:
                return self._known[(kind, object_id)]
        record = self._read(kind, object_id)
        if record is None:
            return None
        project = _object_project(kind, record)
        if project is None and kind in ("annotation", "draft", "prediction"):
            task = annotation_task(record)
            project = self.project_of("task", task) if isinstance(task, int) else None
        if project is not None:
            with self._lock:
                self._known[(kind, object_id)] = project
        return project
