"""The request matrix of issue 23: each method on each endpoint family of Label Studio's API, aimed at one
project's objects (another worker's, the admin's) or at the server itself. Used by the rules' table tests (with
made-up ids) and by the tests through the real nginx (with the ids of a real study)."""

from __future__ import annotations

from dataclasses import dataclass

FAMILIES = ("projects", "tasks", "annotations", "drafts", "predictions", "exports", "dm views", "dm actions",
            "imports", "users", "organisations", "webhooks", "ml", "storages")


@dataclass(frozen=True)
class Target:
    """The objects a matrix aims at: a project and one of each of its objects (0 where it has none)."""

    project: int
    task: int
    annotation: int
    draft: int = 0
    prediction: int = 0
    view: int = 0


@dataclass(frozen=True)
class MatrixRequest:
    family: str
    method: str
    uri: str
    body: dict[str, object] | None = None


def project_matrix(t: Target) -> list[MatrixRequest]:
    """Requests on project ``t.project``'s objects, every family and method."""
    p = t.project
    rows = [
        ("projects", "GET", f"/api/projects/{p}/", None), ("projects", "PATCH", f"/api/projects/{p}/", {"title": "x"}),
        ("projects", "PUT", f"/api/projects/{p}/", {"title": "x"}), ("projects", "DELETE", f"/api/projects/{p}/", None),
        ("projects", "GET", f"/api/projects/{p}/next/", None),
        ("projects", "GET", f"/projects/{p}/data?labeling=1", None),
        ("projects", "GET", f"/api/projects/{p}/summary/", None),
        ("tasks", "GET", f"/api/tasks/{t.task}/", None), ("tasks", "PATCH", f"/api/tasks/{t.task}/", {"data": {}}),
        ("tasks", "DELETE", f"/api/tasks/{t.task}/", None), ("tasks", "GET", f"/api/tasks?project={p}", None),
        ("tasks", "POST", f"/api/projects/{p}/tasks/", {"data": {"text": "x"}}),
        ("tasks", "DELETE", f"/api/projects/{p}/tasks/", None),
        ("annotations", "GET", f"/api/annotations/{t.annotation}/", None),
        ("annotations", "PATCH", f"/api/annotations/{t.annotation}/", {"result": []}),
        ("annotations", "DELETE", f"/api/annotations/{t.annotation}/", None),
        ("annotations", "GET", f"/api/tasks/{t.task}/annotations/", None),
        ("annotations", "POST", f"/api/tasks/{t.task}/annotations/?project={p}", {"result": []}),
        ("drafts", "GET", f"/api/drafts/{t.draft}/", None),
        ("drafts", "PATCH", f"/api/drafts/{t.draft}/", {"result": []}),
        ("drafts", "DELETE", f"/api/drafts/{t.draft}/", None),
        ("drafts", "POST", f"/api/tasks/{t.task}/drafts?project={p}", {"result": []}),
        ("predictions", "GET", f"/api/predictions/?task={t.task}", None),
        ("predictions", "GET", f"/api/predictions/{t.prediction}/", None),
        ("predictions", "PATCH", f"/api/predictions/{t.prediction}/", {"score": 1}),
        ("predictions", "DELETE", f"/api/predictions/{t.prediction}/", None),
        ("predictions", "POST", "/api/predictions/", {"task": t.task, "result": []}),
        ("exports", "GET", f"/api/projects/{p}/export?exportType=JSON", None),
        ("exports", "GET", f"/api/projects/{p}/exports/", None),
        ("exports", "POST", f"/api/projects/{p}/exports/", {}),
        ("exports", "GET", f"/api/projects/{p}/export/formats", None),
        ("dm views", "GET", f"/api/dm/views?project={p}", None),
        ("dm views", "POST", "/api/dm/views/", {"project": p, "data": {}}),
        ("dm views", "PATCH", f"/api/dm/views/{t.view}/", {"data": {}}),
        ("dm views", "DELETE", f"/api/dm/views/{t.view}/", None),
        ("dm actions", "GET", f"/api/dm/actions?project={p}", None),
        ("dm actions", "POST", f"/api/dm/actions?id=next_task&project={p}&tabID={t.view}", {}),
        ("dm actions", "POST", f"/api/dm/actions?id=delete_tasks&project={p}", {"selectedItems": {"all": True}}),
        ("dm actions", "POST", f"/api/dm/actions?id=delete_tasks_annotations&project={p}",
         {"selectedItems": {"all": True}}),
        ("imports", "POST", f"/api/projects/{p}/import", [{"text": "x"}]),
        ("imports", "GET", f"/api/projects/{p}/file-uploads", None),
        ("imports", "POST", f"/api/projects/{p}/reimport", {}),
        ("webhooks", "GET", f"/api/webhooks/?project={p}", None),
        ("webhooks", "POST", "/api/webhooks/", {"project": p, "url": "http://127.0.0.1:9/"}),
        ("ml", "GET", f"/api/ml?project={p}", None),
        ("ml", "POST", "/api/ml/", {"project": p, "url": "http://127.0.0.1:9/"}),
        ("storages", "GET", f"/api/storages/?project={p}", None),
        ("storages", "POST", "/api/storages/localfiles/", {"project": p, "path": "/tmp"}),
        ("storages", "GET", f"/api/storages/localfiles?project={p}", None),
    ]
    return [MatrixRequest(family, method, uri, body) for family, method, uri, body in rows]  # type: ignore[arg-type]


def server_matrix() -> list[MatrixRequest]:
    """Requests on the server itself: listings, creation, members, settings."""
    rows = [
        ("projects", "GET", "/api/projects/"), ("projects", "POST", "/api/projects/"),
        ("projects", "GET", "/api/projects?page_size=30"), ("projects", "POST", "/api/projects/validate/"),
        ("users", "GET", "/api/users/"), ("users", "POST", "/api/users/"), ("users", "GET", "/api/users/1/"),
        ("users", "PATCH", "/api/users/1/"), ("users", "DELETE", "/api/users/1/"),
        ("users", "GET", "/api/current-user/token"), ("users", "POST", "/api/current-user/reset-token/"),
        ("organisations", "GET", "/api/organizations/"), ("organisations", "GET", "/api/organizations/1"),
        ("organisations", "PATCH", "/api/organizations/1"),
        ("organisations", "GET", "/api/organizations/1/memberships"),
        ("organisations", "GET", "/api/invite"), ("organisations", "POST", "/api/invite/reset-token"),
        ("webhooks", "GET", "/api/webhooks/"), ("webhooks", "GET", "/api/webhooks/info/"),
        ("ml", "GET", "/api/ml/"), ("storages", "GET", "/api/storages/"), ("storages", "GET", "/api/storages/types"),
        ("imports", "GET", "/api/import/file-upload/1"), ("exports", "GET", "/api/projects/1/export/formats"),
        ("predictions", "GET", "/api/predictions/"), ("dm views", "GET", "/api/dm/views/"),
        ("dm actions", "GET", "/api/dm/actions"), ("annotations", "GET", "/api/annotations/"),
        ("tasks", "GET", "/api/tasks/"), ("drafts", "GET", "/api/drafts/"),
        ("projects", "GET", "/admin/"), ("users", "GET", "/user/account/"), ("organisations", "GET", "/organization/"),
    ]
    return [MatrixRequest(family, method, uri, {} if method in ("POST", "PATCH", "PUT") else None)
            for family, method, uri in rows]
