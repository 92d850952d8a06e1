"""A study behind the gateway, for the tests through the real nginx: Label Studio (``ls_server``), a three-worker
study made by ``create_study`` with the real ML backend, two more projects of the admin's ("admin's own" and a
"scratch" one the owner's tests may wreck), one of each object in w002's and those projects, the authoriser as
``posthoc gateway serve`` runs it (gunicorn) and Debian's nginx in front (:class:`GatewayProcesses`, as ``posthoc ls
start --gateway`` and the demo start them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from gateway.matrix import Target
from lsfixtures import make_project, run_backend, small_sample_manifest
from posthoc.jobs.gateway_process import GatewayProcesses
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.gateway_nginx import REFUSAL
from posthoc.study.plan.logins import default_accounts_file, read_accounts
from posthoc.study.plan.study import Study

SIMPLE_CONFIG = ('<View><Text name="text" value="$text"/><Choices name="c" toName="text"><Choice value="a"/>'
                 '</Choices></View>')


def login(gateway_url: str, email: str, password: str) -> httpx.Client:
    """A browser-like session logged in through the gateway with Label Studio's form (CSRF header set)."""
    session = httpx.Client(base_url=gateway_url, follow_redirects=False, timeout=60)
    assert session.get("/user/login/").status_code == 200
    csrf = session.cookies["csrftoken"]
    answer = session.post("/user/login/", data={"email": email, "password": password, "csrfmiddlewaretoken": csrf},
                          headers={"Referer": f"{gateway_url}/user/login/"})
    assert answer.status_code == 302, answer.text[:300]
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    session.headers["Referer"] = f"{gateway_url}/"
    return session


def refused_by_gateway(answer: httpx.Response) -> bool:
    return (answer.status_code == 403 and answer.text == REFUSAL) or (
        answer.status_code == 302 and answer.headers.get("location", "").split("?")[0].endswith("/user/login/"))


def answered_alone(answer: httpx.Response, project: int) -> bool:
    """Whether the gateway answered itself with the worker's own project alone (the project list, issue 47)."""
    if answer.headers.get("x-posthoc-gateway") != "answered" or answer.status_code != 200:
        return False
    results = answer.json().get("results", [])
    return all(int(found["id"]) == project for found in results)


def target_of(admin: LabelStudioClient, project_id: int) -> Target:
    """One of each object of the project, made by the admin where the project has none."""
    (task, *_) = admin.tasks(project_id)
    task_id = int(task["id"])
    annotation = admin.request("POST", f"/api/tasks/{task_id}/annotations/", json={"result": []})
    draft = admin.request("POST", f"/api/tasks/{task_id}/drafts", json={"result": [], "lead_time": 1})
    view = admin.request("POST", "/api/dm/views/", json={"project": project_id, "data": {}})
    predictions = admin.predictions(task_id)
    return Target(project=project_id, task=task_id, annotation=int(annotation["id"]), draft=int(draft["id"]),
                  prediction=int(predictions[0]["id"]) if predictions else 0, view=int(view["id"]))


@contextlib.contextmanager
def study_behind_gateway(ls_server: Any, folder: Path, *, name: str = "gwlive",
                         n_documents: int = 4) -> Iterator[dict[str, Any]]:
    """The study ``name`` behind a gateway. Yields ``url`` (the gateway), ``admin`` (a client), ``projects`` and
    ``tasks`` by worker, ``targets`` (w002, admin, scratch), ``accounts``, ``manifest`` (its path) and ``server``."""
    manifest = small_sample_manifest(folder / "manifest.sqlite", name=name, n_documents=n_documents, n_workers=3,
                                     tasks_per_batch=3, control_tasks=False)
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    with contextlib.ExitStack() as stack:
        backend_url = stack.enter_context(run_backend(manifest.path))
        setup = create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                          backend_url=backend_url),
                             SetupOptions(email_domain=f"{name}.posthoc.local"))
        projects = setup.project_ids()
        own = stack.enter_context(make_project(ls_server, SIMPLE_CONFIG, title=f"{name}: admin's own"))
        admin.import_tasks(own.id, [{"data": {"text": "Paris is big."}}])
        scratch = stack.enter_context(make_project(ls_server, SIMPLE_CONFIG, title=f"{name}: scratch"))
        admin.import_tasks(scratch.id, [{"data": {"text": "Rome is old."}}])
        targets = {"w002": target_of(admin, projects["w002"]), "admin": target_of(admin, own.id),
                   "scratch": target_of(admin, scratch.id)}
        gateway = stack.enter_context(GatewayProcesses(manifest=Path(manifest.path), ls_url=ls_server.url,
                                                       token=ls_server.token, folder=folder / "gateway"))
        accounts = read_accounts(default_accounts_file(Path(manifest.path)))
        yield {"url": gateway.url, "admin": admin, "projects": projects, "targets": targets, "accounts": accounts,
               "manifest": Path(manifest.path),
               "server": ls_server, "tasks": {w: [int(t["id"]) for t in admin.tasks(p)] for w, p in projects.items()}}


