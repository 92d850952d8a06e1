"""The gateway against the real things: a real Label Studio (``ls_server``), a real study (``create_study`` with
the real ML backend), the authoriser as ``posthoc gateway serve`` runs it (gunicorn) and Debian's nginx.

w001 logs in through the gateway with Label Studio's own form and makes the request matrix of issue 23 against
w002's project, the admin's project and the server: every answer is the gateway's refusal, and Label Studio holds
exactly what it held before (counts and a digest of every project's export). The owner's same requests pass the
gateway. w001's own labelling calls pass; forged and logged-out cookies, another project's ids in a query and
accounts in no study are refused.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from gateway.live_study import answered_alone, login, refused_by_gateway, study_behind_gateway
from gateway.matrix import MatrixRequest, project_matrix, server_matrix
from lsfixtures import make_annotator
from posthoc.labelstudio.client import LabelStudioClient

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


def send(session: httpx.Client, request: MatrixRequest) -> httpx.Response:
    body = None if request.body is None else json.dumps(request.body)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    return session.request(request.method, request.uri, content=body, headers=headers)


#: fields of Label Studio's export that move with the clock, not with the data: ``created_ago`` is a humanised
#: "time since" ("0 minutes", then "1 minute"), so a slow run crossing a minute changed every pre-filled project's
#: digest with nothing written (seen twice in full PostgreSQL passes)
CLOCK_FIELDS = frozenset({"created_ago"})


def without_clock_fields(value: Any) -> Any:
    """``value`` (parsed JSON) without :data:`CLOCK_FIELDS`, at any depth."""
    if isinstance(value, dict):
        return {k: without_clock_fields(v) for k, v in value.items() if k not in CLOCK_FIELDS}
    if isinstance(value, list):
        return [without_clock_fields(v) for v in value]
    return value


def state_of(admin: LabelStudioClient, watched: set[int]) -> dict[str, Any]:
    """What Label Studio holds: every project (id and title, so a project made, renamed or deleted shows), the
    members, and for the ``watched`` projects (the study's, the targets') their counts, views, webhooks, ML
    backends and the SHA-256 of their full export. Other test modules' projects on the shared server are only
    listed: work they left running (their own backends, say) may still change them while this test runs."""
    projects: dict[int, dict[str, Any]] = {}
    for project in admin.projects():
        pid = int(project["id"])
        projects[pid] = {"title": project["title"]}
        if pid not in watched:
            continue
        export = admin.request("GET", f"/api/projects/{pid}/export", params={"exportType": "JSON",
                                                                           "download_all_tasks": "true"})
        projects[pid].update({
            "tasks": project.get("task_number"),
            "export": hashlib.sha256(json.dumps(without_clock_fields(export), sort_keys=True).encode()).hexdigest(),
            "views": len(admin.request("GET", "/api/dm/views/", params={"project": pid})),
            "webhooks": len(admin.webhooks(pid)), "ml": len(admin.ml_backends(pid)),
        })
    return {"projects": projects, "members": sorted(m["email"] for m in admin.members())}


def settled_state(admin: LabelStudioClient, watched: set[int], *, timeout: float = 120.0) -> dict[str, Any]:
    """:func:`state_of` once two readings 2 s apart agree: the PostgreSQL pass of the full suite once saw the study's
    own projects' exports change while every matrix request had been refused at the gateway (so before any reached
    Label Studio), i.e. work of the study's set-up still landing; the matrix starts from a state that has settled."""
    deadline = time.monotonic() + timeout
    state = state_of(admin, watched)
    while time.monotonic() < deadline:
        time.sleep(2)
        again = state_of(admin, watched)
        if again == state:
            return state
        state = again
    raise AssertionError(f"the watched projects did not settle in {timeout:.0f} s")


def watched_projects(gateway: dict[str, Any]) -> set[int]:
    """The study's projects and the matrix's targets."""
    return {int(p) for p in gateway["projects"].values()} | {int(t.project) for t in gateway["targets"].values()}


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two states, named (project ids, or members)."""
    ids = set(before["projects"]) | set(after["projects"])
    names = [f"project {p}: {before['projects'].get(p)} -> {after['projects'].get(p)}" for p in sorted(ids)
             if before["projects"].get(p) != after["projects"].get(p)]
    return names + (["members"] if before["members"] != after["members"] else [])


@pytest.fixture(scope="module")
def gateway(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with study_behind_gateway(ls_server, tmp_path_factory.mktemp("gateway")) as found:
        yield found


def worker_session(gateway: dict[str, Any], worker: str = "w001") -> httpx.Client:
    account = gateway["accounts"][worker]
    return login(gateway["url"], account["email"], account["password"])


def test_the_matrix_as_w001_is_refused_and_changes_nothing(gateway: dict[str, Any]) -> None:
    w001 = worker_session(gateway)
    requests = (project_matrix(gateway["targets"]["w002"]) + project_matrix(gateway["targets"]["admin"])
                + server_matrix())
    assert len(requests) >= 40
    watched = watched_projects(gateway)
    before = settled_state(gateway["admin"], watched)
    answers = [(r.method, r.uri, send(w001, r)) for r in requests]
    own = gateway["projects"]["w001"]
    passed = [(method, uri, a.status_code, a.text[:100]) for method, uri, a in answers
              if not refused_by_gateway(a) and not answered_alone(a, own)]
    assert passed == []
    assert changed(before, state_of(gateway["admin"], watched)) == []


def test_the_same_requests_pass_the_gateway_for_the_owner(gateway: dict[str, Any]) -> None:
    server = gateway["server"]
    owner = login(gateway["url"], server.username, server.password)
    requests = project_matrix(gateway["targets"]["scratch"]) + [r for r in server_matrix() if r.method == "GET"]
    requests.sort(key=lambda r: (r.method == "DELETE", r.uri.rstrip("/").count("/") == 3))  # deletes last, the
    # project's own last of all
    answers = [(r.method, r.uri, send(owner, r)) for r in requests]
    refused = [(method, uri, a.status_code) for method, uri, a in answers if refused_by_gateway(a)]
    assert refused == []
    succeeded = [(m, u) for m, u, a in answers if a.status_code < 300]
    assert len(succeeded) >= 50, sorted((a.status_code, m, u) for m, u, a in answers)  # 55 measured; the rest are
    # Label Studio's own 400s (bodies it rejects) and 404s (objects a DELETE before removed, no prediction)


def test_w001s_own_labelling_calls_pass(gateway: dict[str, Any]) -> None:
    w001 = worker_session(gateway)
    project, tasks = gateway["projects"]["w001"], gateway["tasks"]["w001"]
    assert w001.get(f"/projects/{project}/data?labeling=1").status_code == 200
    assert w001.get("/api/current-user/whoami").status_code == 200
    assert w001.get(f"/api/projects/{project}/").status_code == 200
    nxt = w001.get(f"/api/projects/{project}/next/")
    assert nxt.status_code == 200 and nxt.json()["id"] in tasks
    assert w001.get(f"/api/tasks/{tasks[0]}/?project={project}").status_code == 200
    draft = w001.post(f"/api/tasks/{tasks[0]}/drafts?project={project}", json={"result": [], "lead_time": 1})
    assert draft.status_code == 201, draft.text[:200]
    updated = w001.patch(f"/api/drafts/{draft.json()['id']}/?project={project}", json={"result": [], "lead_time": 2})
    assert updated.status_code == 200 and updated.headers["x-posthoc-gateway"] == "checked", updated.text[:200]
    made = w001.post(f"/api/tasks/{tasks[0]}/annotations/?project={project}", json={"result": [], "lead_time": 2})
    assert made.status_code == 201, made.text[:200]
    annotation = made.json()["id"]
    assert w001.get(f"/api/annotations/{annotation}/").status_code == 200
    assert refused_by_gateway(w001.patch(f"/api/annotations/{annotation}/", json={"result": []}))
    page = w001.get(f"/projects/{project}/data?labeling=1").text
    static = next(part.split('"')[0] for part in page.split('src="')[1:] if part.startswith("/static/"))
    assert w001.get(static).status_code == 200


def test_another_projects_ids_in_the_query_are_refused(gateway: dict[str, Any]) -> None:
    w001 = worker_session(gateway)
    project, own_task = gateway["projects"]["w001"], gateway["tasks"]["w001"][0]
    other = gateway["targets"]["w002"]
    for uri in (f"/api/tasks/{own_task}/?project={other.project}", f"/api/dm/views?project={other.project}",
                f"/api/tasks?project={project}&view={other.view}", f"/api/tasks/{own_task}/?project={project}"
                f"&project={other.project}", f"/projects/{project}/data?task={other.task}"):
        assert refused_by_gateway(w001.get(uri)), uri


def test_forged_and_logged_out_cookies_are_refused(gateway: dict[str, Any]) -> None:
    project = gateway["projects"]["w001"]
    forged = httpx.Client(base_url=gateway["url"], cookies={"sessionid": "forged" * 5}, follow_redirects=False)
    assert refused_by_gateway(forged.get(f"/api/projects/{project}/"))
    w001 = worker_session(gateway)
    assert w001.get(f"/api/projects/{project}/").status_code == 200
    stolen = dict(w001.cookies)
    w001.get("/logout/")  # the cookie stays valid for Label Studio (a signed cookie): the gateway remembers
    replay = httpx.Client(base_url=gateway["url"], cookies=stolen, follow_redirects=False)
    assert refused_by_gateway(replay.get(f"/api/projects/{project}/"))


def test_accounts_in_no_study_and_anonymous_callers_are_refused(gateway: dict[str, Any]) -> None:
    server = gateway["server"]
    outsider = make_annotator(server, "outsider@gwlive-other.local", password="pw-outsider-123456")
    session = login(gateway["url"], outsider.email, "pw-outsider-123456")
    for uri in ("/api/projects/", f"/api/projects/{gateway['projects']['w001']}/", "/api/current-user/whoami"):
        assert refused_by_gateway(session.get(uri)), uri
    anonymous = httpx.Client(base_url=gateway["url"], follow_redirects=False)
    assert anonymous.get("/user/login/").status_code == 200
    assert refused_by_gateway(anonymous.get("/api/projects/"))
    assert refused_by_gateway(anonymous.get("/user/signup/"))


def test_path_tricks_through_nginx_are_refused(gateway: dict[str, Any]) -> None:
    w001 = worker_session(gateway)
    project, other = gateway["projects"]["w001"], gateway["projects"]["w002"]
    for uri in (f"/api/projects/{project}/../{other}/", f"/api/projects/{project}/%2e%2e/{other}/",
                f"/api//projects/{other}/", f"/api/projects%2F{other}/", f"/api/projects/{project}/%252e%252e/{other}"):
        answer = w001.get(uri)
        assert refused_by_gateway(answer) or answer.status_code == 400, (uri, answer.status_code)
    override = w001.post(f"/api/tasks/{gateway['tasks']['w001'][0]}/annotations/?project={project}",
                         json={"result": []}, headers={"X-HTTP-Method-Override": "DELETE"})
    assert refused_by_gateway(override)



def test_a_body_naming_another_projects_task_moves_nothing(gateway: dict[str, Any]) -> None:
    """``auth_request`` forwards no body; the authoriser reads a worker's annotation and draft bodies itself and
    refuses a field the labelling page does not set (400 naming it). Label Studio 1.23 would move an annotation to
    the task a ``PATCH /api/annotations/{id}/`` body names (measured, as the owner below): a worker gets no PATCH /
    PUT of annotations, and their own draft's PATCH only with the UI's fields."""
    w001 = worker_session(gateway)
    admin, project = gateway["admin"], gateway["projects"]["w001"]
    own_task, other = gateway["tasks"]["w001"][-1], gateway["targets"]["w002"]
    for field, value in (("task", other.task), ("project", other.project)):
        moved = w001.post(f"/api/tasks/{own_task}/annotations/?project={project}", json={"result": [], field: value})
        assert moved.status_code == 400 and moved.json()["field"] == field, moved.text[:300]
    made = w001.post(f"/api/tasks/{own_task}/annotations/?project={project}", json={"result": []})
    assert made.status_code == 201, made.text[:300]
    annotation = made.json()["id"]
    draft = w001.post(f"/api/tasks/{own_task}/drafts?project={project}", json={"result": []})
    assert draft.status_code == 201, draft.text[:300]
    moved_draft = w001.patch(f"/api/drafts/{draft.json()['id']}/?project={project}", json={"task": other.task})
    assert moved_draft.status_code == 400 and moved_draft.json()["field"] == "task"
    assert refused_by_gateway(w001.put(f"/api/drafts/{draft.json()['id']}/", json={"task": other.task}))
    for method in ("PATCH", "PUT"):
        assert refused_by_gateway(w001.request(method, f"/api/annotations/{annotation}/",
                                               json={"task": other.task, "project": other.project}))
    assert admin.request("GET", f"/api/annotations/{annotation}/")["task"] == own_task
    assert admin.request("GET", f"/api/drafts/{draft.json()['id']}/")["task"] == own_task
    owner = admin.request("PATCH", f"/api/annotations/{annotation}/", json={"task": other.task})
    assert owner["task"] == other.task  # what the refusal prevents: Label Studio moves it
    admin.request("DELETE", f"/api/annotations/{annotation}/")


def local(location: str) -> str:
    """A redirect's path and query (nginx makes its own redirects absolute)."""
    parts = urlsplit(location)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_log_out_at_either_path_ends_the_session_and_every_copy(gateway: dict[str, Any]) -> None:
    """Label Studio 1.23's menu links to ``/logout``; ``/user/logout`` (which it answers 404) is sent there."""
    project = gateway["projects"]["w001"]
    for path in ("/logout", "/user/logout/"):
        w001 = worker_session(gateway)
        assert w001.get(f"/api/projects/{project}/").status_code == 200
        stolen = dict(w001.cookies)
        answer = w001.get(path)
        if path.startswith("/user/"):
            assert answer.status_code == 302 and local(answer.headers["location"]) == "/logout/"
            answer = w001.get("/logout/")
        assert answer.status_code == 302, (path, answer.status_code)  # Label Studio's own redirect after logging out
        assert refused_by_gateway(w001.get(f"/api/projects/{project}/")), path  # the browser's cookie is gone
        replay = httpx.Client(base_url=gateway["url"], cookies=stolen, follow_redirects=False)
        assert refused_by_gateway(replay.get(f"/api/projects/{project}/")), path  # and a copy is refused


def test_logging_in_lands_on_the_page_asked_for(gateway: dict[str, Any]) -> None:
    project, account = gateway["projects"]["w001"], gateway["accounts"]["w001"]
    browser = httpx.Client(base_url=gateway["url"], follow_redirects=False, timeout=60)
    to_login = browser.get(f"/projects/{project}/data?labeling=1")
    assert to_login.status_code == 302
    login_page = local(to_login.headers["location"])
    assert login_page == f"/user/login/?next=/projects/{project}/data%3Flabeling%3D1"
    assert browser.get(login_page).status_code == 200
    answer = browser.post(login_page, data={"email": account["email"], "password": account["password"],
                                            "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                          headers={"Referer": f"{gateway['url']}{login_page}"})
    assert answer.status_code == 302 and local(answer.headers["location"]) == f"/projects/{project}/data?labeling=1"


def test_the_pages_calls_are_answered_by_the_gateway_with_the_worker_alone(gateway: dict[str, Any]) -> None:
    """Issue 47: the labelling and Home pages' calls a worker used to get 403 for (a red toast) are answered by the
    gateway: no ML backend, their project as the only project, no tips, themselves as the only member; the Home
    page and the projects page send them to their stream."""
    w001, project = worker_session(gateway), gateway["projects"]["w001"]
    email = gateway["accounts"]["w001"]["email"]
    assert w001.get(f"/api/ml?project={project}").json() == []
    listed = w001.get("/api/projects?page_size=10")
    assert listed.status_code == 200 and [p["id"] for p in listed.json()["results"]] == [project]
    assert listed.json()["results"][0]["title"] == gateway["admin"].request("GET", f"/api/projects/{project}/")["title"]
    assert w001.get("/heidi-tips").json() == {}
    users = w001.get(f"/api/users?project={project}")
    assert [u["email"] for u in users.json()] == [email] and gateway["server"].username not in users.text
    for home in ("/", "/projects/"):
        landing = w001.get(home)
        assert landing.status_code == 302 and local(landing.headers["location"]) == \
            f"/projects/{project}/data?labeling=1", home


def test_an_annotation_body_claiming_what_the_ui_never_sets_is_refused(gateway: dict[str, Any]) -> None:
    """The demo's attack: a worker's own annotation stored ``ground_truth``, another user as ``completed_by`` and
    other projects' annotation and prediction as its parents. Each is now a 400 naming the field; nothing stored."""
    w001, project, task = worker_session(gateway), gateway["projects"]["w001"], gateway["tasks"]["w001"][1]
    other = gateway["targets"]["w002"]
    before = gateway["admin"].send("GET", f"/api/tasks/{task}/annotations/").json()
    for field, value in (("ground_truth", True), ("completed_by", 1), ("parent_annotation", other.annotation),
                         ("parent_prediction", other.prediction or 1), ("project", other.project)):
        answer = w001.post(f"/api/tasks/{task}/annotations/?project={project}", json={"result": [], field: value})
        assert answer.status_code == 400 and answer.json()["field"] == field, (field, answer.text[:200])
    assert gateway["admin"].send("GET", f"/api/tasks/{task}/annotations/").json() == before


def test_the_attacks_on_one_reading_of_the_request_are_refused(gateway: dict[str, Any]) -> None:
    """Through real nginx: a second ``sessionid`` after a pair SimpleCookie cannot parse, ``X-Api-Key`` with the
    admin's token, and a write from a foreign page (Label Studio 1.23 checks no CSRF) create or read nothing."""
    project, task = gateway["projects"]["w001"], gateway["tasks"]["w001"][0]
    w001, w002 = worker_session(gateway), worker_session(gateway, "w002")
    doubled = f'sessionid={w001.cookies["sessionid"]}; a=b"c; sessionid={w002.cookies["sessionid"]}'
    plain = httpx.Client(base_url=gateway["url"], follow_redirects=False, timeout=60)
    two_headers = [("Cookie", f"sessionid={w001.cookies['sessionid']}"),
                   ("Cookie", f"sessionid={w002.cookies['sessionid']}")]  # nginx joins them: one header, refused
    for uri in (f"/api/projects/{project}/", f"/api/projects/{gateway['projects']['w002']}/"):
        assert refused_by_gateway(plain.get(uri, headers={"Cookie": doubled})), uri
        assert refused_by_gateway(plain.get(uri, headers=two_headers)), uri
    assert refused_by_gateway(w001.get("/api/projects/", headers={"X-Api-Key": gateway["server"].token}))
    before = gateway["admin"].send("GET", f"/api/tasks/{task}/annotations/").json()
    forged = w001.post(f"/api/tasks/{task}/annotations/?project={project}", json={"result": []},
                       headers={"Origin": "http://evil.example", "Referer": "http://evil.example/form"})
    assert refused_by_gateway(forged)
    no_origin = httpx.Client(base_url=gateway["url"], cookies=dict(w001.cookies), follow_redirects=False)
    assert refused_by_gateway(no_origin.post(f"/api/tasks/{task}/annotations/?project={project}", json={"result": []}))
    assert gateway["admin"].send("GET", f"/api/tasks/{task}/annotations/").json() == before
