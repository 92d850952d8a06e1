"""Fuzzing the gateway's rules: generated requests (methods, paths with ids of three projects, path tricks, query
parameters, override headers) for a worker; no exception, and nothing allowed that a reference predicate, written
separately and more bluntly (character set, exact strings), denies."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.test_gateway_rules import ADMIN, LOOKUP, OTHER, OWN, WORKER
from posthoc.labelstudio.gateway_rules import GatewayRequest, decide


@dataclass(frozen=True)
class Reference:
    """What a worker may reach, judged bluntly: path (no trailing slash) -> (methods, query names allowed, query
    names required), and the values a query may give an id-naming parameter."""

    paths: dict[str, tuple[str, str, str]]
    good_values: dict[str, set[str]]


def reference_of(project: int, tasks: Iterable[int], annotation: int, draft: int, view: int) -> Reference:
    """The reference for the worker of ``project`` (its ``tasks``) and its one annotation, draft and view."""
    p, a, d, v = str(project), str(annotation), str(draft), str(view)
    own_tasks = {str(t) for t in tasks}
    paths = {
        "": ("GET HEAD", "", ""), "/projects": ("GET HEAD", "", ""),
        f"/projects/{p}/data": ("GET HEAD", "labeling tab task", ""),
        "/api/current-user/whoami": ("GET HEAD", "", ""), "/api/version": ("GET HEAD", "", ""),
        f"/api/projects/{p}": ("GET HEAD", "include", ""), f"/api/projects/{p}/next": ("GET HEAD", "", ""),
        f"/api/projects/{p}/label-stream-history": ("GET HEAD", "project", ""),
        "/api/dm/columns": ("GET HEAD", "project", "project"), "/api/dm/views": ("GET HEAD", "project", "project"),
        "/api/dm/project": ("GET HEAD", "project include interaction", "project"),
        "/api/dm/actions": ("POST", "id project tabID", "id project"),
        "/api/label_links": ("GET HEAD", "project expand", "project"),
        "/api/users": ("GET HEAD", "project", "project"),
        "/api/tasks": ("GET HEAD", "page page_size project view fields", "project"),
        f"/api/annotations/{a}": ("GET HEAD", "project taskID", ""),
        f"/api/drafts/{d}": ("GET HEAD PATCH", "project", ""),
        "/user/login": ("GET HEAD POST", "next", ""), "/user/logout": ("GET HEAD", "", ""),
        "/favicon.ico": ("GET HEAD", "", ""), "/sw.js": ("GET HEAD", "", ""),
        "/user/signup": ("GET HEAD POST", "token next", "token"),
    }
    for task in own_tasks:
        paths[f"/api/tasks/{task}"] = ("GET HEAD", "project", "")
        paths[f"/api/tasks/{task}/annotations"] = ("GET HEAD POST", "project", "")
        paths[f"/api/tasks/{task}/drafts"] = ("GET HEAD POST", "project", "")
    good = {"project": {p}, "view": {v}, "tabID": {v}, "task": own_tasks, "taskID": own_tasks, "id": {"next_task"}}
    return Reference(paths, good)


#: worker 7's reference (the rules' tests' targets)
WORKER_7 = reference_of(OWN.project, WORKER.task_ids, OWN.annotation, OWN.draft, OWN.view)
P, A, D, V = str(OWN.project), str(OWN.annotation), str(OWN.draft), str(OWN.view)


def reference_allows(method: str, uri: str, headers: dict[str, str], reference: Reference = WORKER_7) -> bool:
    """Whether the worker of ``reference`` (default: worker 7) may make this request, judged bluntly."""
    if any((h.lower().startswith("x-") and "method" in h.lower()) or h.lower() == "authorization" for h in headers):
        return False
    if not re.fullmatch(r"/[A-Za-z0-9/_.~-]*(\?[A-Za-z0-9/_.~=&,%-]*)?", uri):
        return False
    path, _, query = uri.partition("?")
    query = query.replace("%2C", ",").replace("%2c", ",")
    if any("%" in pair and not pair.startswith("next=") for pair in query.split("&")):
        return False
    if "//" in path or "/./" in path + "/" or "/../" in path + "/":
        return False
    if method in ("GET", "HEAD") and path.startswith(("/static/", "/react-app/", "/label-studio-frontend/")):
        return True
    pairs = [pair.partition("=") for pair in query.split("&")] if query else []
    names = [name for name, _, _ in pairs]
    if len(set(names)) != len(names) or any(sep != "=" for _, sep, _ in pairs):
        return False
    if path.endswith("/"):
        path = path[:-1]
    if path not in reference.paths:
        return False
    methods, allowed, required = (set(part.split()) for part in reference.paths[path])
    if method not in methods or not set(names) <= allowed or not required <= set(names):
        return False
    if path == "/user/signup":
        return all(value for name, _, value in pairs if name == "token")
    return all(value in reference.good_values[name] for name, _, value in pairs if name in reference.good_values)


METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "get", "CONNECT", "PROPFIND", ""]
IDS = [P, str(OTHER.project), str(ADMIN.project), "70", "71", "80", "10", A, str(OTHER.annotation), D,
       str(OTHER.draft), V, str(OTHER.view), "07", "0", "-7", "%37", "7.0", "99999999999999999999", "", "x"]
TEMPLATES = ["/api/projects/{}/", "/api/projects/{}/next", "/api/tasks/{}/", "/api/tasks/{}/annotations/",
             "/api/tasks/{}/drafts", "/api/annotations/{}/", "/api/drafts/{}", "/projects/{}/data",
             "/api/projects/{}/export", "/api/projects/{}/label-stream-history", "/api/predictions/{}/",
             "/api/dm/views/{}/", "/api/users/{}/", "/api/webhooks/{}/", "/api/ml/{}", "/api/storages/{}",
             "/static/js/{}.js", "/react-app/{}", "/api/dm/actions", "/api/dm/views", "/api/tasks", "/api/users",
             "/api/label_links", "/api/dm/project", "/api/dm/columns", "/", "/projects/", "/user/login/",
             "/user/signup/", "/user/logout", "/api/current-user/whoami", "/api/version", "/api/projects/"]
TRICKS = ["", "/..", "/.", "/%2e%2e", "%2f", "%2F..", "//", "\\", "%5c", "%00", "%252e", " ", "\t", ";x", "/x/..",
          "#f", "\u2215", "%ff", "?", "&"]
QUERY_NAMES = ["project", "task", "taskID", "view", "tabID", "id", "page", "page_size", "include", "interaction",
               "expand", "labeling", "token", "next", "fields", "x", "Project", "project[]"]
QUERY_VALUES = [P, str(OTHER.project), "70", "80", V, str(OTHER.view), "next_task", "delete_tasks", "", "07", "%37",
                "task_count%2Ctask_number", "7%2C8", "%2c",
                "1", "label", "timer", "abc", "7,8", "/"]
HEADERS = [{}, {}, {}, {"x-http-method-override": "DELETE"}, {"X-HTTP-Method": "PUT"}, {"x-method-override": "GET"},
           {"Authorization": "Token abc"}]


def generated(rng: random.Random) -> tuple[str, str, dict[str, str]]:
    """One request: a method, a URI made of a template, an id, a trick and a query, and headers."""
    template = rng.choice(TEMPLATES)
    path = template.format(rng.choice(IDS)) if "{}" in template else template
    trick = rng.choice(TRICKS) if rng.random() < 0.3 else ""
    cut = rng.randrange(len(path) + 1)
    path = path[:cut] + trick + path[cut:]
    pairs = [f"{rng.choice(QUERY_NAMES)}={rng.choice(QUERY_VALUES)}" for _ in range(rng.choice([0, 0, 1, 2, 3]))]
    uri = path + ("?" + "&".join(pairs) if pairs else "")
    return rng.choice(METHODS), uri, dict(rng.choice(HEADERS))


#: what the gateway answers itself, never asking Label Studio (the paths and the methods): these may be "allowed"
#: beyond the reference, since what the worker gets there is the gateway's own answer
GATEWAY_ONLY = {"ml": "/api/ml", "projects": "/api/projects", "tips": "/heidi-tips", "users": "/api/users",
                "stream": ""}


def check(method: str, uri: str, headers: dict[str, str]) -> bool:
    decision = decide(GatewayRequest(method, uri, headers), WORKER, LOOKUP)
    if decision.allowed and decision.answer in GATEWAY_ONLY:
        path = uri.partition("?")[0].rstrip("/")
        assert method in ("GET", "HEAD") and path in (GATEWAY_ONLY[decision.answer], "/projects"), (method, uri)
    elif decision.allowed:
        assert reference_allows(method, uri, headers), (method, uri, headers, decision.reason)
    return decision.allowed


def test_twenty_thousand_generated_requests_raise_nothing_and_allow_nothing_the_reference_denies() -> None:
    rng = random.Random(20261203)
    allowed = sum(check(*generated(rng)) for _ in range(20_000))
    assert 100 < allowed < 19_000  # the generator reaches both sides


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from(METHODS), uri=st.text(alphabet=st.sampled_from(list("/apitskrojec0178.%2feE5c?&=_-#;\\ "
                                                                               "\x00\u2215")), max_size=40),
       header=st.sampled_from(HEADERS))
def test_arbitrary_strings_raise_nothing_and_allow_nothing_the_reference_denies(method: str, uri: str,
                                                                                header: dict[str, str]) -> None:
    check(method, uri, header)
