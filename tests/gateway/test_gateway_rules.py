"""The gateway's rules (:mod:`posthoc.labelstudio.gateway_rules`) as tables: the calls recorded from the real UI
pass for their worker; the matrix of issue 23 (each method on each endpoint family) aimed at another worker's
project, the admin's project and the server is refused; path tricks are refused for everyone; the owner passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.matrix import FAMILIES, Target, project_matrix, server_matrix
from posthoc.labelstudio.gateway_rules import Caller, Decision, GatewayRequest, Role, decide

RECORDED = json.loads((Path(__file__).parent / "worker_calls.json").read_text(encoding="utf-8"))
OWN = Target(project=7, task=70, annotation=700, draft=7000, prediction=70000, view=17)
OTHER = Target(project=8, task=80, annotation=800, draft=8000, prediction=80000, view=18)  # w002's
ADMIN = Target(project=1, task=10, annotation=100, draft=1000, prediction=10000, view=11)
WORKER = Caller(Role.WORKER, project_id=OWN.project, task_ids=frozenset({OWN.task, 71, 72}))
OWNER = Caller(Role.OWNER)
#: recorded calls the gateway answers itself (issue 47): the project list (their own project alone), the ML
#: backends of their project (none), the tips (none), the members (the worker alone), the Home page (their stream)
ANSWERED = {("GET", "/api/projects"): "projects", ("GET", "/api/ml"): "ml", ("GET", "/heidi-tips"): "tips",
            ("GET", "/api/users"): "users", ("GET", "/"): "stream"}


class Objects:
    """A :class:`~posthoc.labelstudio.gateway_rules.Lookup` over the three targets' objects."""

    def project_of(self, kind: str, object_id: int) -> int | None:
        for target in (OWN, OTHER, ADMIN):
            if {"annotation": target.annotation, "draft": target.draft, "view": target.view}.get(kind) == object_id:
                return target.project
        return None


LOOKUP = Objects()


#: the gateway's host as the browser names it, and the Origin of its pages (a worker's writes need it)
HOST = "gateway.test:8090"
SAME_ORIGIN = {"Origin": f"http://{HOST}"}


def ask(method: str, uri: str, caller: Caller = WORKER, **headers: str) -> Decision:
    """The decision on a request sent from a page of the gateway (its ``Origin``, unless ``headers`` name one)."""
    return decide(GatewayRequest(method, uri, {**SAME_ORIGIN, **headers}, host=HOST), caller, LOOKUP)


def recorded_uri(call: dict[str, object]) -> str:
    """A recorded call with the worker's ids put back."""
    path = str(call["path"]).replace("{project}", str(OWN.project)).replace("{task}", str(OWN.task))
    path = path.replace("{annotation}", str(OWN.annotation)).replace("{draft}", str(OWN.draft))
    path = path.replace("{file}", "main.4f3a.js")
    values = {"project": OWN.project, "view": OWN.view, "tabID": OWN.view, "page": 1, "page_size": 30,
              "next": "/", "v": "abc"}
    query = []
    for pair in call["query"]:  # type: ignore[attr-defined]
        name, _, value = str(pair).partition("=")
        query.append(f"{name}={values[name] if value == '{...}' else value}")
    return path + ("?" + "&".join(query) if query else "")


RECORDED_CALLS = [(c["method"], str(c["path"]), recorded_uri(c)) for c in RECORDED["calls"]]


@pytest.mark.parametrize(("method", "path", "uri"), RECORDED_CALLS)
def test_every_recorded_call_passes_or_is_answered_by_the_gateway(method: str, path: str, uri: str) -> None:
    decision = ask(method, uri)
    assert decision.allowed, decision.reason
    expected = ANSWERED.get((method, path), "body" if method in ("POST", "PATCH") and "/api/tasks/" in path else "")
    assert decision.answer == expected, (uri, decision)


@pytest.mark.parametrize(("caller", "uri"), [(Caller(Role.WORKER, project_id=8), "/api/ml?project=7"),
                                             (WORKER, "/api/ml?project=8"), (WORKER, "/api/users?project=8"),
                                             (WORKER, "/api/users/"), (Caller(Role.OUTSIDER), "/api/ml?project=7"),
                                             (Caller(Role.ANONYMOUS), "/heidi-tips"), (OWNER, "/api/ml?project=7")])
def test_only_a_worker_of_the_project_gets_the_gateways_answers(caller: Caller, uri: str) -> None:
    decision = ask("GET", uri, caller)
    assert not decision.answer and (caller is OWNER) == decision.allowed, decision


def test_the_worker_reaches_the_issues_list_on_their_own_project() -> None:
    for method, uri in [("GET", "/api/projects/7/next/"), ("GET", "/api/tasks/70/"), ("GET", "/api/annotations/700/"),
                        ("GET", "/api/tasks/70/drafts"), ("POST", "/api/tasks/71/drafts?project=7"),
                        ("GET", "/api/drafts/7000/"), ("GET", "/api/dm/project?project=7&include=a%2Cb"),
                        ("GET", "/api/current-user/whoami"), ("HEAD", "/static/js/main.js")]:
        assert ask(method, uri).allowed, (method, uri)


MATRIX = [(target, r) for target in ("w002", "admin") for r in project_matrix(OTHER if target == "w002" else ADMIN)]
MATRIX += [("server", r) for r in server_matrix()]


def test_the_matrix_covers_each_family_with_several_methods() -> None:
    assert len(MATRIX) >= 40
    for family in FAMILIES:
        methods = {r.method for _, r in MATRIX if r.family == family}
        assert methods, family
    assert {r.method for _, r in MATRIX} >= {"GET", "POST", "PATCH", "PUT", "DELETE"}


def _matrix_id(value: object) -> str:
    return value if isinstance(value, str) else f"{value.method} {value.uri}"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("target", "request_"), MATRIX, ids=_matrix_id)
def test_the_matrix_is_refused_for_w001(target: str, request_) -> None:
    """Refused, or (the server's project list) answered by the gateway with the worker's own project alone."""
    for caller in (WORKER, Caller(Role.OUTSIDER), Caller(Role.ANONYMOUS)):
        decision = ask(request_.method, request_.uri, caller)
        answered = caller is WORKER and decision.answer == "projects" and request_.uri.startswith("/api/projects")
        assert not decision.allowed or answered, (caller.role, decision.reason)


@pytest.mark.parametrize("request_", [r for _, r in MATRIX], ids=lambda r: f"{r.method} {r.uri}")
def test_the_matrix_passes_for_the_owner(request_) -> None:
    assert ask(request_.method, request_.uri, OWNER).allowed


@pytest.mark.parametrize("uri", [
    "/api/projects/7/../8/", "/api/projects/7/%2e%2e/8/", "/api/projects/7/%2E%2E/8", "/api/projects/7/./next",
    "/api%2fprojects/8/", "/api/projects%2F8", "/api//projects/7/", "//api/projects/7/", "/api/tasks/70%00/",
    "/api/projects/7\\..\\8/", "/api/projects/7/%5c..%5c8", "/api/projects/%37/", "/api/projects/7/%252e%252e/8",
    "/api/projects/07/", "/api/projects/+7/", "/api/projects/7 /", "/api/projects/7/#x", "api/projects/7/",
    "/api/projects/7/next/?project=7&project=8", "/api/tasks/70/?project=8", "/api/tasks?project=7&view=18",
    "/api/dm/actions?id=next_task&project=7&tabID=18", "/api/tasks/80/annotations/?project=7",
    "/api/annotations/800/", "/api/drafts/8000/", "/api/tasks/70/?project=07", "/api/projects/7/?project=7;8",
    "/api/projects/\uff17/", "/api/projects/7/\u2215..\u22158", "/api/projects/7/?x=%ff",
])
def test_path_and_query_tricks_are_refused(uri: str) -> None:
    method = "POST" if "actions" in uri else "GET"
    assert not ask(method, uri).allowed, uri


@pytest.mark.parametrize("method", ["PATCH", "PUT", "DELETE"])
def test_a_worker_changes_no_annotation_in_place_and_a_draft_only_through_the_body_check(method: str) -> None:
    """A body can move an annotation to another project's task (Label Studio 1.23): a worker's PATCH of their own
    draft is read by the authoriser first (answer ``body``); another's draft, and PUT / DELETE, are refused."""
    assert not ask(method, "/api/annotations/700/").allowed
    own, other = ask(method, "/api/drafts/7000/?project=7"), ask(method, "/api/drafts/8000/?project=7")
    assert (own.allowed, own.answer) == ((True, "body") if method == "PATCH" else (False, ""))
    assert not other.allowed and not ask(method, "/api/drafts/7000/?project=8").allowed
    assert ask(method, "/api/annotations/700/", OWNER).allowed


@pytest.mark.parametrize("uri", ["/api/projects/7/../8/", "/api/projects%2F8", "//api/projects/", "/a/%2e%2e/b"])
def test_path_tricks_are_refused_for_the_owner_too(uri: str) -> None:
    assert not ask("GET", uri, OWNER).allowed


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "get", "PROPFIND", "MOVE", "", "GET ", "G\x00ET"])
def test_unknown_methods_are_refused(method: str) -> None:
    assert not ask(method, "/api/current-user/whoami").allowed
    assert not ask(method, "/api/projects/", OWNER).allowed


def test_an_authorization_header_is_the_owners_only() -> None:
    assert not ask("GET", "/api/current-user/whoami", authorization="Token abc").allowed
    assert not ask("GET", "/user/login/", Caller(Role.ANONYMOUS), Authorization="Basic eDp5").allowed
    assert ask("GET", "/api/projects/", OWNER, Authorization="Token abc").allowed


@pytest.mark.parametrize("header", ["X-HTTP-Method-Override", "x-http-method", "X-Method-Override"])
def test_method_override_headers_are_refused(header: str) -> None:
    assert not ask("POST", "/api/tasks/70/annotations?project=7", **{header.lower(): "DELETE"}).allowed
    assert not ask("GET", "/api/projects/", OWNER, **{header: "GET"}).allowed


def test_anonymous_callers_reach_login_static_files_and_sign_up_with_an_invite_only() -> None:
    anonymous = Caller(Role.ANONYMOUS)
    assert ask("GET", "/user/login/", anonymous).allowed
    assert ask("POST", "/user/login/?next=/", anonymous).allowed
    assert ask("GET", "/static/css/main.css", anonymous).allowed
    assert ask("GET", "/user/signup/?token=abc", anonymous).allowed
    assert not ask("GET", "/user/signup/", anonymous).allowed
    assert not ask("POST", "/user/signup/?token=", anonymous).allowed
    assert not ask("POST", "/static/css/main.css", anonymous).allowed
    for uri in ("/", "/projects/", "/api/current-user/whoami", "/api/version"):
        assert not ask("GET", uri, anonymous).allowed
        assert not ask("GET", uri, Caller(Role.OUTSIDER)).allowed
