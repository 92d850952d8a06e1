"""What the gateway answers itself (issue 47), through the authoriser's app: ``/authorise`` says ``X-Posthoc-Via:
gateway`` and the answer at ``/_posthoc_answer<uri>`` is what a worker should see (an empty ML list, their own
project as the only project, no tips, themselves as the only member, their stream for the Home page), and a
worker's annotation or draft body is checked, then reaches Label Studio (here a recording stand-in served over
HTTP) with the same bytes, its answer and its ``Set-Cookie`` coming back as they were.

Label Studio's whoami and the admin's reads are stood in for (``test_gateway_live`` and the browser test use the
real ones)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask, Response, request
from werkzeug.serving import make_server

import posthoc_backend.gateway as gateway
from posthoc.labelstudio.gateway_lookup import SessionUser
from posthoc_backend.gateway import Authority, StudyAccess, create_gateway_app

HOST = "gateway.test:8090"
W001, W002 = "w001payload:1kq2:Sig1", "w002payload:1kq2:Sig3"
ACCESS = StudyAccess(frozenset({"owner@study.test"}), {"w001@study.test": ("w001", 7),
                                                       "w002@study.test": ("w002", 8)})
#: whoami's answer for w001, the organisation's creator (another member) named in it
WHOAMI = {"id": 3, "email": "w001@study.test", "first_name": "W", "last_name": "One", "username": "w001",
          "permissions": ["projects.view"], "active_organization": 1, "avatar": None, "initials": "wo",
          "active_organization_meta": {"title": "Study", "email": "admin@study.test"}, "last_activity": "now"}
#: the objects of projects 7 (w001's) and 8
OBJECTS = {("draft", 700): 7, ("draft", 800): 8, ("prediction", 70): 7, ("prediction", 80): 8,
           ("annotation", 71): 7, ("annotation", 81): 8}


class Admin:
    """The admin client's calls the authoriser makes: task ids and a project."""

    def tasks(self, project_id: int, **_: object) -> list[dict[str, int]]:
        return [{"id": project_id * 10 + n} for n in range(3)]

    def request(self, method: str, path: str, **_: object) -> dict[str, object]:
        assert (method, path) == ("GET", "/api/projects/7/"), path
        return {"id": 7, "title": "w001's batch", "task_number": 3}


class Objects:
    def project_of(self, kind: str, object_id: int) -> int | None:
        return OBJECTS.get((kind, object_id))


@pytest.fixture
def label_studio() -> Iterator[dict[str, Any]]:
    """A stand-in Label Studio over HTTP that records each request it gets and answers with a new cookie."""
    seen: dict[str, Any] = {"requests": []}
    app = Flask("stand_in")

    @app.route("/<path:rest>", methods=["POST", "PATCH"])
    def record(rest: str) -> Response:
        seen["requests"].append({"method": request.method, "uri": request.environ.get("REQUEST_URI"),
                                 "body": request.get_data(), "headers": dict(request.headers)})
        answer = Response(json.dumps({"id": 99}), status=201, content_type="application/json")
        answer.headers.add("Set-Cookie", "sessionid=resigned; HttpOnly; Path=/")
        answer.headers.add("Set-Cookie", "theme=dark; Path=/")
        return answer

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    seen["url"] = f"http://127.0.0.1:{server.server_port}"
    yield seen
    server.shutdown()


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, label_studio: dict[str, Any]) -> Any:
    def whoami(url: str, cookie: str, *, timeout: float = 5.0) -> SessionUser | None:
        if cookie == f"sessionid={W001}":
            return SessionUser(3, "w001@study.test", WHOAMI)
        return SessionUser(4, "w002@study.test", {}) if cookie == f"sessionid={W002}" else None

    monkeypatch.setattr(gateway, "session_user", whoami)
    authority = Authority(url=label_studio["url"], client=Admin(), load_access=lambda: ACCESS,  # type: ignore[arg-type]
                          lookup=Objects())
    return create_gateway_app(authority).test_client(use_cookies=False)


def ask(app: Any, method: str, uri: str, cookie: str = W001, **options: Any) -> Any:
    """The request as nginx sends it to the answers: the gateway's Host, the page's Origin, the session."""
    headers = {"Host": HOST, "Origin": f"http://{HOST}", "Cookie": f"sessionid={cookie}", **options.pop("headers", {})}
    return app.open(f"/_posthoc_answer{uri}", method=method, headers=headers, **options)


def authorise(app: Any, method: str, uri: str, cookie: str = W001) -> Any:
    return app.get("/authorise", headers={"X-Original-Method": method, "X-Original-URI": uri, "X-Original-Host": HOST,
                                          "Origin": f"http://{HOST}", "Cookie": f"sessionid={cookie}"})


@pytest.mark.parametrize(("method", "uri"), [("GET", "/api/ml?project=7"), ("GET", "/api/projects?page_size=10"),
                                             ("GET", "/heidi-tips"), ("GET", "/api/users?project=7"), ("GET", "/"),
                                             ("PATCH", "/api/drafts/700?project=7")])
def test_authorise_sends_the_calls_the_gateway_answers_to_it(app: Any, method: str, uri: str) -> None:
    allowed = authorise(app, method, uri)
    assert allowed.status_code == 204 and allowed.headers["X-Posthoc-Via"] == "gateway"
    assert "X-Posthoc-Via" not in authorise(app, "GET", "/api/projects/7/").headers
    if "7" in uri:
        assert authorise(app, method, uri.replace("7", "8"), W001).status_code == 403


def test_the_answers_are_what_label_studios_pages_read(app: Any) -> None:
    assert ask(app, "GET", "/api/ml?project=7").json == []
    assert ask(app, "GET", "/heidi-tips").json == {}
    projects = ask(app, "GET", "/api/projects?page_size=10").json
    assert projects == {"count": 1, "next": None, "previous": None,
                        "results": [{"id": 7, "title": "w001's batch", "task_number": 3}]}
    assert ask(app, "GET", "/api/projects?page=2&page_size=10").json["results"] == []
    users = ask(app, "GET", "/api/users?project=7")
    assert users.headers["X-Posthoc-Gateway"] == "answered"
    assert users.json == [{key: value for key, value in WHOAMI.items() if key != "permissions"}
                          | {"active_organization_meta": {"title": "Study", "email": ""}}]
    assert "admin@study.test" not in users.get_data(as_text=True)
    for home in ("/", "/projects/", "/projects"):
        landing = ask(app, "GET", home)
        assert (landing.status_code, landing.headers["Location"]) == (302, "/projects/7/data?labeling=1"), home


@pytest.mark.parametrize(("uri", "cookie"), [("/api/ml?project=8", W001), ("/api/users?project=8", W001),
                                             ("/api/ml?project=7", W002), ("/api/ml?project=7", "forged:1:x"),
                                             ("/api/projects/7/", W001)])
def test_the_answers_decide_again_and_refuse_what_is_not_theirs(app: Any, uri: str, cookie: str) -> None:
    answer = ask(app, "GET", uri, cookie)
    assert answer.status_code == 403 and answer.json["detail"] == "refused by the study gateway", answer.json


def test_an_own_draft_is_forwarded_with_the_same_bytes_and_label_studios_answer(app: Any,
                                                                               label_studio: dict[str, Any]) -> None:
    body = b'{"lead_time": 12.5, "result": [{"id": "a", "value": {"text": ["x"]}}], "draft_id": 0,\n' \
           b' "parent_prediction": 70, "parent_annotation": null, "started_at": "2026-12-04T10:00:00Z"}'
    answer = ask(app, "PATCH", "/api/drafts/700?project=7", data=body, content_type="application/json")
    assert answer.status_code == 201 and answer.json == {"id": 99}
    assert answer.headers["X-Posthoc-Gateway"] == "checked"
    assert answer.headers.getlist("Set-Cookie") == ["sessionid=resigned; HttpOnly; Path=/", "theme=dark; Path=/"]
    [seen] = label_studio["requests"]
    assert (seen["method"], seen["uri"], seen["body"]) == ("PATCH", "/api/drafts/700?project=7", body)
    assert seen["headers"]["Cookie"] == f"sessionid={W001}" and seen["headers"]["Host"] == HOST
    sent = b'{"result": [], "lead_time": 3, "project": "7"}'  # the Data Manager names the project in the body
    submit = ask(app, "POST", "/api/tasks/71/annotations?project=7", data=sent, content_type="application/json")
    assert submit.status_code == 201 and label_studio["requests"][-1]["body"] == sent


@pytest.mark.parametrize(("body", "field"), [
    ({"result": [], "ground_truth": True}, "ground_truth"), ({"result": [], "completed_by": 1}, "completed_by"),
    ({"result": [], "parent_annotation": 81}, "parent_annotation"),
    ({"result": [], "parent_prediction": 80}, "parent_prediction"), ({"draft_id": 800}, "draft_id"),
    ({"result": [], "task": 81}, "task"), ({"result": [], "project": 8}, "project"),
    ({"result": [], "project": "8"}, "project"), ({"result": [], "project": True}, "project"),
    ({"result": {"a": 1}}, "result"), ({"lead_time": "1"}, "lead_time"), ({"annotation": 81}, "annotation"),
    ({"result": [], "id": 5}, "id"), ([{"result": []}], ""), ("not json", ""),
])
def test_a_body_setting_what_the_ui_does_not_is_refused_naming_the_field(app: Any, label_studio: dict[str, Any],
                                                                        body: object, field: str) -> None:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    for uri in ("/api/tasks/71/annotations?project=7", "/api/tasks/71/drafts?project=7", "/api/drafts/700?project=7"):
        method = "PATCH" if "/drafts/" in uri else "POST"
        answer = ask(app, method, uri, data=data, content_type="application/json")
        assert answer.status_code == 400 and answer.json["field"] == field, (uri, answer.json)
        assert answer.json["reason"].startswith(field or "the body")
    assert label_studio["requests"] == []


def test_another_workers_draft_and_a_foreign_origin_are_refused_before_the_body_is_read(
        app: Any, label_studio: dict[str, Any]) -> None:
    assert ask(app, "PATCH", "/api/drafts/800?project=7", data=b'{"result": []}').status_code == 403
    foreign = ask(app, "PATCH", "/api/drafts/700?project=7", data=b'{"result": []}',
                  headers={"Origin": "http://evil.test"})
    assert foreign.status_code == 403 and "forgery" in foreign.json["reason"]
    assert label_studio["requests"] == []
