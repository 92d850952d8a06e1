"""The authoriser's app (:mod:`posthoc_backend.gateway`) with Flask's test client, Label Studio stood in for: the
session's user decides the role, answers are 204 / 401 / 403 with a JSON reason, sessions are kept briefly and
forgotten at logout, and 10,000 generated requests through ``/authorise`` raise nothing and allow nothing that
the reference predicate of ``test_gateway_fuzz`` denies."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

import posthoc_backend.gateway as gateway
from gateway.test_gateway_fuzz import generated, reference_allows
from gateway.test_gateway_rules import LOOKUP, OWN, WORKER
from posthoc.labelstudio.gateway_lookup import SessionUser
from posthoc_backend.gateway import Authority, StudyAccess, create_gateway_app, session_key

SESSIONS = {"s-owner": "owner@x.local", "s-w001": "w001@study.local", "s-w002": "w002@study.local",
            "s-out": "someone@else.local"}
ACCESS = StudyAccess(frozenset({"owner@x.local"}), {"w001@study.local": ("w001", OWN.project),
                                                    "w002@study.local": ("w002", 8)})


class FakeClient:
    def tasks(self, project_id: int, **_: Any) -> list[dict[str, int]]:
        return [{"id": t} for t in (WORKER.task_ids if project_id == OWN.project else {80, 81})]


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Label Studio's whoami, stood in for: the cookies it was asked about."""
    calls: list[str] = []

    def session_user(url: str, cookie: str, *, timeout: float = 5.0) -> SessionUser | None:
        calls.append(cookie)
        value = cookie.partition("sessionid=")[2].partition(";")[0].partition(".")[0]  # "s-w001.17": w001's too
        return SessionUser(1, SESSIONS[value]) if value in SESSIONS else None

    monkeypatch.setattr(gateway, "session_user", session_user)
    return calls


@pytest.fixture
def client(asked: list[str]) -> Any:
    authority = Authority(url="http://ls.invalid", client=FakeClient(), load_access=lambda: ACCESS,  # type: ignore[arg-type]
                          lookup=LOOKUP)
    return create_gateway_app(authority).test_client(use_cookies=False)


def authorise(client: Any, method: str, uri: str, session: str | None = None, **headers: str) -> Any:
    if session is not None:
        headers["Cookie"] = f"csrftoken=abc; sessionid={session}"
    return client.get("/authorise", headers={"X-Original-Method": method, "X-Original-URI": uri, **headers})


def test_roles_from_the_session(client: Any) -> None:
    own = f"/api/projects/{OWN.project}/"
    assert authorise(client, "GET", own, "s-w001").status_code == 204
    assert authorise(client, "GET", "/api/projects/8/", "s-w001").status_code == 403
    assert authorise(client, "GET", own, "s-w002").status_code == 403
    assert authorise(client, "DELETE", "/api/projects/8/", "s-owner").status_code == 204
    assert authorise(client, "GET", own, "s-out").status_code == 403
    assert authorise(client, "GET", own, "forged").status_code == 401
    assert authorise(client, "GET", own).status_code == 401
    refused = authorise(client, "GET", "/api/projects/", "s-w001")
    assert refused.json["detail"] == "refused by the study gateway" and "labelling stream" in refused.json["reason"]


def test_a_session_is_asked_once_while_kept_and_refused_after_logout(client: Any, asked: list[str]) -> None:
    for _ in range(5):
        assert authorise(client, "GET", "/api/current-user/whoami", "s-w001").status_code == 204
    assert len(asked) == 1
    assert authorise(client, "GET", "/user/logout/", "s-w001").status_code == 204
    assert authorise(client, "GET", "/api/current-user/whoami", "s-w001").status_code == 401


def test_a_re_signed_cookie_of_the_same_session_is_the_same_session(client: Any, asked: list[str]) -> None:
    """Label Studio re-signs its cookie session on every answer (``payload:timestamp:signature``, a new timestamp
    and signature each time): the authoriser keys a session by its payload, so it asks once and a logout ends
    every copy."""
    for stamp in range(5):
        assert authorise(client, "GET", "/api/current-user/whoami", f"s-w001.p:1x{stamp}:sig{stamp}").status_code == 204
    assert len(asked) == 1
    assert session_key("sessionid=s-w001.p:1xa:sa") == session_key("sessionid=s-w001.p:1xb:sb")
    assert session_key("sessionid=s-w001.p:1xa:sa") != session_key("sessionid=s-w001.q:1xa:sa")
    assert authorise(client, "GET", "/user/logout/", "s-w001.p:1x9:sig9").status_code == 204
    assert authorise(client, "GET", "/api/current-user/whoami", "s-w001.p:1x0:sig0").status_code == 401


def test_a_kept_session_is_asked_again_in_the_background_not_in_the_request(asked: list[str]) -> None:
    """Past ``SESSION_SECONDS`` the kept user still decides at once while one background thread asks again; past
    ``STALE_FACTOR`` times that, the request itself asks."""
    now = [0.0]
    authority = Authority(url="http://ls.invalid", client=FakeClient(), load_access=lambda: ACCESS,  # type: ignore[arg-type]
                          lookup=LOOKUP, clock=lambda: now[0])
    app = create_gateway_app(authority).test_client(use_cookies=False)
    assert authorise(app, "GET", "/api/current-user/whoami", "s-w001").status_code == 204 and len(asked) == 1
    now[0] = gateway.SESSION_SECONDS + 1
    assert authorise(app, "GET", "/api/current-user/whoami", "s-w001").status_code == 204
    deadline = time.monotonic() + 10
    while (len(asked) < 2 or authority._refreshing) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the background thread has asked *and* stored its answer (at clock time now)
    assert len(asked) == 2  # asked once more, by the background thread
    now[0] += gateway.SESSION_SECONDS * gateway.STALE_FACTOR + 1
    asked_before = len(asked)
    assert authorise(app, "GET", "/api/current-user/whoami", "s-w001").status_code == 204
    assert len(asked) == asked_before + 1  # too old to give: asked in the request


def test_headers_of_the_original_request_count_but_not_a_forged_original_uri(client: Any) -> None:
    uri = f"/api/tasks/{OWN.task}/annotations/?project={OWN.project}"
    assert authorise(client, "POST", uri, "s-w001").status_code == 204
    assert authorise(client, "POST", uri, "s-w001", **{"X-HTTP-Method-Override": "DELETE"}).status_code == 403
    assert authorise(client, "GET", "/api/projects/8/", "s-w001", **{"X-Original-Uri-Forged": "/"}).status_code == 403
    assert authorise(client, "", "", "s-w001").status_code == 403


def test_ten_thousand_generated_requests_through_the_authoriser(client: Any) -> None:
    rng = random.Random(23)
    statuses: dict[int, int] = {}
    for number in range(10_000):
        method, uri, headers = generated(rng)
        try:
            uri.encode("latin-1")
        except UnicodeEncodeError:
            continue  # not a header value nginx could send
        answer = authorise(client, method, uri, f"s-w001.{number}", **headers)  # a logout ends only its own
        statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        assert answer.status_code in (204, 403), (method, uri, answer.status_code)
        if answer.status_code == 204:
            assert reference_allows(method, uri, headers), (method, uri, headers)
    assert sum(statuses.values()) >= 9_000 and statuses.get(204, 0) > 50
