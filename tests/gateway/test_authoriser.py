"""The authoriser's app (:mod:`posthoc_backend.gateway`) on a real Label Studio (``ls_server``): real accounts
with real session cookies (logged in through Label Studio's form), three real projects with their tasks,
annotations, drafts and views, the real admin client and object lookup. The session's user decides the role;
answers are 204 / 401 / 403 with a JSON reason; sessions are kept briefly (also across Label Studio's re-signed
cookies) and forgotten at logout; 10,000 generated requests through ``/authorise`` raise nothing and allow nothing
that the reference predicate of ``test_gateway_fuzz`` denies.

Nothing of Label Studio is stood in for: ``whoami`` is only *counted* (a spy that calls the real one), and the
fuzz's symbolic ids (project 7, its tasks 70-72...) are mapped onto the real objects' ids before a request is
sent, and the reference predicate judges the real request with w001's real ids."""

from __future__ import annotations

import contextlib
import random
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

import posthoc_backend.gateway as gateway
from gateway.live_study import SIMPLE_CONFIG, login, target_of
from gateway.matrix import Target
from gateway.test_gateway_fuzz import GATEWAY_ONLY, Reference, generated, reference_allows, reference_of
from gateway.test_gateway_rules import ADMIN, OTHER, OWN, WORKER
from lsfixtures import make_annotator, make_project
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.gateway_cookie import read_session
from posthoc.labelstudio.gateway_lookup import ProjectObjects, SessionUser
from posthoc_backend.gateway import Authority, StudyAccess, create_gateway_app, session_key

pytestmark = pytest.mark.labelstudio


@dataclass
class RealStudy:
    """The real objects: ``access`` (owner, w001 on ``own``, w002 on ``other``), a logged-in ``sessions`` client
    per role (owner, w001, w002, outsider), the three targets, and the symbolic-to-real id map of the fuzz."""

    url: str
    admin: LabelStudioClient
    access: StudyAccess
    sessions: dict[str, httpx.Client]
    own: Target
    other: Target
    admins: Target
    own_tasks: list[int]
    ids: dict[str, str]

    def reference(self) -> Reference:
        """w001's reference predicate with the real ids."""
        return reference_of(self.own.project, self.own_tasks, self.own.annotation, self.own.draft, self.own.view)

    def cookie(self, role: str) -> str:
        """The raw ``Cookie`` header of ``role``'s session as a browser sends it."""
        return "; ".join(f"{name}={value}" for name, value in self.sessions[role].cookies.items())


def _id_map(own: Target, own_tasks: list[int], other: Target, admins: Target) -> dict[str, str]:
    """Symbolic id (``test_gateway_rules``' targets) -> the real object's id (not one to one: Label Studio numbers
    projects, tasks, annotations... each from 1, so a project and a task may share a number; the reference judges
    the real request with the real ids, so that makes no difference)."""
    pairs = [(OWN.project, own.project), (OWN.annotation, own.annotation), (OWN.draft, own.draft),
             (OWN.view, own.view), (OWN.prediction, own.prediction),
             (OTHER.project, other.project), (OTHER.task, other.task), (OTHER.annotation, other.annotation),
             (OTHER.draft, other.draft), (OTHER.view, other.view), (OTHER.prediction, other.prediction),
             (ADMIN.project, admins.project), (ADMIN.task, admins.task), (ADMIN.annotation, admins.annotation),
             (ADMIN.draft, admins.draft), (ADMIN.view, admins.view), (ADMIN.prediction, admins.prediction)]
    pairs += list(zip(sorted(WORKER.task_ids), own_tasks, strict=True))
    return {str(symbolic): str(real) for symbolic, real in pairs}


def to_real(uri: str, ids: dict[str, str]) -> str:
    """``uri`` with every whole number that is a symbolic id replaced by the real one (one pass: no real id is
    replaced again)."""
    return re.sub(r"\d+", lambda number: ids.get(number.group(0), number.group(0)), uri)


@pytest.fixture(scope="module")
def study(ls_server: Any) -> Iterator[RealStudy]:
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    tag = secrets.token_hex(3)
    with contextlib.ExitStack() as stack:
        projects = [stack.enter_context(make_project(ls_server, SIMPLE_CONFIG, title=f"authoriser {tag}: {name}"))
                    for name in ("w001", "w002", "admin's")]
        admin.import_tasks(projects[0].id, [{"data": {"text": f"Task {n} of w001."}} for n in range(3)])
        for project in projects[1:]:
            admin.import_tasks(project.id, [{"data": {"text": "Rome is old."}}])
        own, other, admins = (target_of(admin, project.id) for project in projects)
        own_tasks = sorted(int(t["id"]) for t in admin.tasks(own.project))
        accounts = {role: make_annotator(ls_server, f"{role}-{tag}@authoriser.local")
                    for role in ("owner", "w001", "w002", "outsider")}
        sessions = {role: login(ls_server.url, account.email, account.password) for role, account in accounts.items()}
        for session in sessions.values():
            stack.callback(session.close)
        access = StudyAccess(frozenset({accounts["owner"].email}),
                             {accounts["w001"].email: ("w001", own.project),
                              accounts["w002"].email: ("w002", other.project)})
        yield RealStudy(ls_server.url, admin, access, sessions, own, other, admins, own_tasks,
                        _id_map(own, own_tasks, other, admins))


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cookies the authoriser asked Label Studio's whoami about (the real call, counted)."""
    calls: list[str] = []
    real = gateway.session_user

    def counted(url: str, cookie: str, *, timeout: float = 5.0) -> SessionUser | None:
        calls.append(cookie)
        return real(url, cookie, timeout=timeout)

    monkeypatch.setattr(gateway, "session_user", counted)
    return calls


def authority_of(study: RealStudy, **settings: Any) -> Authority:
    return Authority(url=study.url, client=study.admin, load_access=lambda: study.access,
                     lookup=ProjectObjects(study.admin), **settings)


@pytest.fixture
def client(study: RealStudy, asked: list[str]) -> Any:
    return create_gateway_app(authority_of(study)).test_client(use_cookies=False)


#: the gateway's host as a browser names it; requests are sent from a page of it (its Origin) unless told
GATEWAY_HOST = "gateway.test:8090"


def authorise(client: Any, method: str, uri: str, cookie: str | None = None, **headers: str) -> Any:
    if cookie is not None:
        headers["Cookie"] = cookie
    return client.get("/authorise", headers={"X-Original-Method": method, "X-Original-URI": uri,
                                             "X-Original-Host": GATEWAY_HOST, "Origin": f"http://{GATEWAY_HOST}",
                                             **headers})


def test_roles_from_real_sessions(client: Any, study: RealStudy) -> None:
    own, other = f"/api/projects/{study.own.project}/", f"/api/projects/{study.other.project}/"
    assert authorise(client, "GET", own, study.cookie("w001")).status_code == 204
    assert authorise(client, "GET", other, study.cookie("w001")).status_code == 403
    assert authorise(client, "GET", own, study.cookie("w002")).status_code == 403
    assert authorise(client, "DELETE", other, study.cookie("owner")).status_code == 204
    assert authorise(client, "GET", own, study.cookie("outsider")).status_code == 403
    assert authorise(client, "GET", own, "sessionid=forged").status_code == 401
    assert authorise(client, "GET", own).status_code == 401
    answered = authorise(client, "GET", "/api/projects/", study.cookie("w001"))  # the gateway's own answer (issue 47)
    assert answered.status_code == 204 and answered.headers["X-Posthoc-Via"] == "gateway"
    refused = authorise(client, "GET", "/api/organizations/", study.cookie("w001"))
    assert refused.json["detail"] == "refused by the study gateway" and "labelling stream" in refused.json["reason"]


def test_object_ids_are_checked_against_the_workers_project(client: Any, study: RealStudy) -> None:
    """Annotation, draft and view ids are looked up in Label Studio: w001's pass, w002's and the admin's do not."""
    cookie = study.cookie("w001")
    mine = study.own
    assert authorise(client, "GET", f"/api/annotations/{mine.annotation}/", cookie).status_code == 204
    assert authorise(client, "GET", f"/api/drafts/{mine.draft}", cookie).status_code == 204
    for theirs in (study.other, study.admins):
        assert authorise(client, "GET", f"/api/annotations/{theirs.annotation}/", cookie).status_code == 403
        assert authorise(client, "GET", f"/api/drafts/{theirs.draft}", cookie).status_code == 403
        assert authorise(client, "POST", f"/api/tasks/{theirs.task}/annotations/?project={mine.project}",
                         cookie).status_code == 403


def test_a_session_is_asked_once_while_kept_and_refused_after_logout(client: Any, study: RealStudy,
                                                                     asked: list[str]) -> None:
    cookie = study.cookie("w002")
    for _ in range(5):
        assert authorise(client, "GET", "/api/current-user/whoami", cookie).status_code == 204
    assert len(asked) == 1
    assert authorise(client, "GET", "/user/logout/", cookie).status_code == 204
    assert authorise(client, "GET", "/api/current-user/whoami", cookie).status_code == 401


def test_label_studios_re_signed_cookies_of_one_session_are_one_session(client: Any, study: RealStudy,
                                                                        asked: list[str]) -> None:
    """Label Studio re-signs its cookie session on every answer (``payload:timestamp:signature``): the cookies of
    five answers differ, the authoriser asks ``whoami`` once, with exactly the first cookie (the others, copies of
    its payload, get its answer), and a logout with one ends every copy."""
    session = study.sessions["w001"]
    cookies = []
    for _ in range(5):
        assert session.get("/api/current-user/whoami").status_code == 200
        cookies.append(study.cookie("w001"))
        time.sleep(1.1)  # the signature's timestamp has a resolution of a second
    assert len(set(cookies)) == 5 and len({session_key(c) for c in cookies}) == 1
    for cookie in cookies + cookies:
        assert authorise(client, "GET", "/api/current-user/whoami", cookie).status_code == 204
    assert asked == [read_session(cookies[0]).whoami_cookie()]
    assert authorise(client, "GET", "/logout/", cookies[-1]).status_code == 204
    assert authorise(client, "GET", "/api/current-user/whoami", cookies[0]).status_code == 401


def test_a_kept_session_is_asked_again_in_the_background_not_in_the_request(study: RealStudy,
                                                                          asked: list[str]) -> None:
    """Past ``SESSION_SECONDS`` the kept user still decides at once while one background thread asks again; past
    ``STALE_FACTOR`` times that, the request itself asks."""
    now = [0.0]
    authority = authority_of(study, clock=lambda: now[0])
    app = create_gateway_app(authority).test_client(use_cookies=False)
    cookie = study.cookie("w001")
    assert authorise(app, "GET", "/api/current-user/whoami", cookie).status_code == 204 and len(asked) == 1
    now[0] = gateway.SESSION_SECONDS + 1
    assert authorise(app, "GET", "/api/current-user/whoami", cookie).status_code == 204
    deadline = time.monotonic() + 30
    while (len(asked) < 2 or authority._refreshing) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the background thread has asked *and* stored its answer (at clock time now)
    assert len(asked) == 2  # asked once more, by the background thread
    now[0] += gateway.SESSION_SECONDS * gateway.STALE_FACTOR + 1
    asked_before = len(asked)
    assert authorise(app, "GET", "/api/current-user/whoami", cookie).status_code == 204
    assert len(asked) == asked_before + 1  # too old to give: asked in the request


def test_headers_of_the_original_request_count_but_not_a_forged_original_uri(client: Any, study: RealStudy) -> None:
    cookie = study.cookie("w001")
    uri = f"/api/tasks/{study.own_tasks[0]}/annotations/?project={study.own.project}"
    assert authorise(client, "POST", uri, cookie).status_code == 204
    assert authorise(client, "POST", uri, cookie, **{"X-HTTP-Method-Override": "DELETE"}).status_code == 403
    assert authorise(client, "GET", f"/api/projects/{study.other.project}/", cookie,
                     **{"X-Original-Uri-Forged": "/"}).status_code == 403
    assert authorise(client, "", "", cookie).status_code == 403


def test_ten_thousand_generated_requests_through_the_authoriser(study: RealStudy) -> None:
    """Each generated request (symbolic ids) is sent with the real ids as w001 with a real session; whatever the
    authoriser allows, the reference allows (judged with w001's real ids). An allowed logout revokes the session in
    the authoriser's memory: the run goes on with a new authoriser (Label Studio's session itself stays valid)."""
    rng = random.Random(23)
    statuses: dict[int, int] = {}
    app = create_gateway_app(authority_of(study)).test_client(use_cookies=False)
    cookie = study.cookie("w001")
    reference = study.reference()
    for _ in range(10_000):
        method, symbolic, headers = generated(rng)
        uri = to_real(symbolic, study.ids)
        try:
            uri.encode("latin-1")
        except UnicodeEncodeError:
            continue  # not a header value nginx could send
        answer = authorise(app, method, uri, cookie, **headers)
        statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        assert answer.status_code in (204, 403), (method, uri, answer.status_code, answer.json)
        path = uri.partition("?")[0].rstrip("/")
        gateway_only = answer.headers.get("X-Posthoc-Via") == "gateway" and method in ("GET", "HEAD") \
            and path in {*GATEWAY_ONLY.values(), "/projects"}  # answered by the gateway, not Label Studio
        if answer.status_code == 204 and not gateway_only:
            assert reference_allows(method, uri, headers, reference), (method, symbolic, uri, headers)
            if gateway.LOGOUT.fullmatch(uri):
                app = create_gateway_app(authority_of(study)).test_client(use_cookies=False)
    assert sum(statuses.values()) >= 9_000 and statuses.get(204, 0) > 50
