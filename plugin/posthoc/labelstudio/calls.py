"""The JSON API calls of Label Studio 1.23 the jobs make, over :meth:`ApiCalls.request` (one raw call).

:class:`ApiCalls` is the half of :class:`~posthoc.labelstudio.client.LabelStudioClient` that needs nothing but
``request``: whoami, the paged listings (projects, scoped by ``ids=`` or ``title=`` and ``include=``, and
members, ``PAGE_SIZE`` a page as ``{"results", "next"}``; tasks ``TASK_PAGE_SIZE`` a page as
``{"tasks", "total"}``), one user by id, the imports with ``return_task_ids``, the project's
predictions in one listing, Data Manager actions and the invite link. Tokens, retries, timeouts, error lines and
the SDK's typed calls are the client's (:mod:`posthoc.labelstudio.client`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypedDict, cast

from typing_extensions import Unpack

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio import records as ls

__all__ = ["PAGE_SIZE", "PROJECT_COUNTS", "PROJECT_FIELDS", "TASK_PAGE_SIZE", "ApiCalls", "CallOptions",
           "QueryValue"]

PAGE_SIZE = 100  # what Label Studio answers at most for projects and members
TASK_PAGE_SIZE = 100
#: the project fields every study lookup reads: its id, title and the markers (description, expert_instruction)
PROJECT_FIELDS = ("id", "title", "description", "expert_instruction")
#: the counts ``study create`` compares with its setup record (``include=`` makes Label Studio compute only these)
PROJECT_COUNTS = ("task_number", "total_predictions_number")

#: a query parameter's value (``?page=2&fields=all``)
QueryValue = str | int | float | bool | None


class CallOptions(TypedDict, total=False):
    """The options of one raw call (:meth:`ApiCalls.request`, ``LabelStudioClient.send``): ``params``, the
    ``json`` body, ``timeout`` seconds and more ``headers``, as ``httpx.Client.request`` takes them; ``auth``
    (default true): send the token; ``retry`` (default true): retry an idempotent call."""

    params: Mapping[str, QueryValue | Sequence[QueryValue]] | None
    json: object
    timeout: float
    headers: dict[str, str]
    auth: bool
    retry: bool


class ApiCalls:
    """Label Studio's JSON API over :meth:`request` (which
    :class:`~posthoc.labelstudio.client.LabelStudioClient` gives)."""

    url: str

    def request(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204),
                **options: Unpack[CallOptions]) -> Any:
        """``method path`` -> parsed JSON (``None`` for an empty body); PosthocServiceError otherwise."""
        raise NotImplementedError

    def get(self, path: str, **params: QueryValue) -> Any:
        return self.request("GET", path, params=params or None)

    def post(self, path: str, payload: object = None, **params: QueryValue) -> Any:
        return self.request("POST", path, json=payload, params=params or None)

    def patch(self, path: str, payload: object) -> object:
        """PATCH ``payload`` to ``path``; the parsed answer (:meth:`update_project` reads a project's)."""
        return self.request("PATCH", path, json=payload)

    def delete(self, path: str) -> object:
        """DELETE ``path`` (gone already, 404, is fine); the parsed answer, if any."""
        return self.request("DELETE", path, ok=(200, 204, 404))

    def create_project(self, settings: Mapping[str, object]) -> ls.Project:
        """A new project with ``settings`` (title, label config, ...), as Label Studio answers it."""
        project: ls.Project = self.post("/api/projects/", settings)
        return project

    def update_project(self, project_id: int, settings: Mapping[str, object]) -> ls.Project:
        """Change a project's ``settings``; the project as Label Studio answers it."""
        project: ls.Project = self.request("PATCH", f"/api/projects/{project_id}/", json=settings)
        return project

    def whoami(self) -> dict[str, Any]:
        """The token's user (a raw call: it is the first call of every job, which should not wait for the SDK)."""
        answer = self.request("GET", "/api/current-user/whoami", ok=(200,))
        if not isinstance(answer, dict) or "id" not in answer:
            raise PosthocServiceError(f"Label Studio at {self.url}: GET /api/current-user/whoami did not answer a "
                                      "user; is this a Label Studio?")
        return answer

    def projects(self, *, ids: Iterable[int] | None = None, title: str | None = None,
                 include: Sequence[str] | None = None) -> list[ls.Project]:
        """The projects visible to this user, all pages of ``PAGE_SIZE`` (a raw paged listing: every job
        starts with it, and should not wait for the SDK).

        ``ids``: only these projects (Label Studio 1.23's ``ids=`` filter, ``PAGE_SIZE`` ids a request; no ids:
        no request); ``title``: only titles containing it (``title=``, case-insensitive); neither: every
        project of the organisation, the one listing whose cost grows with the server (~0.15-0.2 s a page of 100
        with ``include=``, 1.2-2.9 s without, measured on 620 projects: docs/labelstudio.md). ``include``:
        the fields the caller reads (:data:`PROJECT_FIELDS` and, say, :data:`PROJECT_COUNTS`): Label Studio
        answers only these (drf-flex-fields' ``FIELDS_PARAM`` is ``include`` in its settings) and computes only
        the counts named (``GetFieldsSerializer``; measured: 20
        projects in 3.8 kB with :data:`PROJECT_FIELDS`, 137 kB without ``include=``), so a field left out is
        simply absent; ``None`` (the default, for a caller that reads every field): every field and count, as
        1.23 answers without ``include=`` (several queries a project)."""
        params: dict[str, QueryValue] = {}
        if title is not None:
            params["title"] = title
        if include is not None:
            params["include"] = ",".join(include)
        if ids is None:
            return cast(list[ls.Project], list(self._results("/api/projects/", **params)))
        wanted = sorted({int(i) for i in ids})
        found: list[dict[str, Any]] = []
        for start in range(0, len(wanted), PAGE_SIZE):
            chunk = ",".join(map(str, wanted[start:start + PAGE_SIZE]))
            found += self._results("/api/projects/", **params, ids=chunk)
        return cast(list[ls.Project], found)

    def _results(self, path: str, **params: QueryValue) -> Iterator[dict[str, Any]]:
        """The objects of a listing Label Studio pages as ``{"results", "next"}`` (``PAGE_SIZE`` a page), every
        page; a page past the last (404 after the first) ends it. ``params``: its filters."""
        page = 1
        while True:
            answer = self.request("GET", path, params={**params, "page": page, "page_size": PAGE_SIZE},
                                  ok=(200,) if page == 1 else (200, 404))
            results = answer.get("results", []) if isinstance(answer, dict) else []
            yield from (r for r in results if isinstance(r, dict))
            if not isinstance(answer, dict) or not answer.get("next") or not results:
                return
            page += 1

    def members(self) -> list[ls.User]:
        """Every user of this user's organisation (``id``, ``email``, ...): its memberships in ONE page
        (``page_size=-1``, which 1.23's ``OrganizationMemberListPagination`` reads as unlimited), so one SQL query.
        Not paged: the listing is ordered by username alone, a signed-up user's username is the e-mail's local part,
        so two studies' ``w050@a`` and ``w050@b`` tie, and PostgreSQL orders tied rows differently in each page's
        query: a member falls between two pages (the load bench lost one at the 100-member boundary, issue 24;
        ``tests/labelstudio/test_members.py``). ``GET /api/users/`` is unpaged too but costs ~2 ms per user."""
        organisation = int(self.whoami()["active_organization"])
        answer = self.request("GET", f"/api/organizations/{organisation}/memberships", params={"page_size": -1})
        memberships = answer.get("results", []) if isinstance(answer, dict) else []
        return [cast(ls.User, dict(m["user"])) for m in memberships
                if isinstance(m, dict) and isinstance(m.get("user"), dict)]

    def user(self, user_id: int) -> ls.User | None:
        """One user of this user's organisation by id (``GET /api/users/{id}/``, one row whatever the size of the
        organisation), or ``None`` when Label Studio knows no such user (404)."""
        answer = self.request("GET", f"/api/users/{int(user_id)}/", ok=(200, 404))
        # a 404's body has an "id" too (the error's, a UUID string): a user's is its number
        return cast(ls.User, answer) if isinstance(answer, dict) and type(ls.record_id(answer)) is int else None

    def tasks(self, project_id: int, *, fields: str = "all", include: str | None = None,
              page_size: int = TASK_PAGE_SIZE) -> Iterator[ls.Task]:
        """The tasks of a project in id order, page by page. ``fields="all"``: with full ``predictions`` and
        ``annotations``; ``"task_only"``: without; ``include``: only these task fields (comma-separated)."""
        page = 1
        while True:
            params: dict[str, QueryValue] = {"project": project_id, "page": page, "page_size": page_size,
                                             "fields": fields}
            if include:
                params["include"] = include
            answer = self.request("GET", "/api/tasks/", params=params, ok=(200, 404))
            batch = answer.get("tasks", []) if isinstance(answer, dict) else []
            if not batch:
                return
            yield from sorted(batch, key=ls.int_id)
            total = int(answer.get("total", 0)) if isinstance(answer, dict) else 0
            if page * page_size >= total or len(batch) < page_size:
                return
            page += 1

    def task_query(self, project_id: int, query: Mapping[str, object], *,
                   include: str = "id") -> tuple[list[ls.Task], int]:
        """The first task of a Data Manager query on a project and how many tasks match it: one one-row request
        (``GET /api/tasks/?project=&page_size=1&fields=task_only&query=``). ``query``: its ``filters`` and
        ``ordering`` (Label Studio 1.23's ``PrepareParams``); ``include``: the task fields answered."""
        answer = self.request("GET", "/api/tasks/", params={
            "project": project_id, "page": 1, "page_size": 1, "fields": "task_only", "include": include,
            "query": json.dumps(query, sort_keys=True)})
        if not isinstance(answer, dict):
            raise PosthocServiceError(f"Label Studio GET /api/tasks/?project={project_id} answered no JSON object")
        tasks = [t for t in answer.get("tasks") or [] if isinstance(t, dict)]
        return cast(list[ls.Task], tasks), int(answer.get("total") or 0)

    def tasks_with_predictions(self, project_id: int) -> list[ls.Task]:
        """The tasks of a project in id order, each with its full ``predictions`` (in id order): a task listing
        without annotations (``fields=task_only``) and one listing of the project's predictions, much cheaper
        for Label Studio than serialising every task with ``fields=all``."""
        tasks = list(self.tasks(project_id, fields="task_only"))
        by_task = self.project_predictions(project_id)
        for task in tasks:
            ls.set_task_predictions(task, by_task.get(ls.int_id(task), []))
        return tasks

    def project_predictions(self, project_id: int) -> dict[int, list[ls.Prediction]]:
        """``{task id: its full predictions in id order}`` of a project: one listing of its predictions (Label
        Studio answers them all at once, without serialising the tasks' data)."""
        by_task: dict[int, list[ls.Prediction]] = {}
        for prediction in self.get("/api/predictions/", project=project_id) or []:
            by_task.setdefault(int(prediction["task"]), []).append(prediction)
        for predictions in by_task.values():
            predictions.sort(key=ls.int_id)
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

    def invite_token(self) -> str:
        """The organisation's invite token (the ``token`` of its sign-up link)."""
        return str(self.get("/api/invite")["token"])

