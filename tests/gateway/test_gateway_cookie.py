"""One reading of the request (issue 47), each hole written as the attack: the exact ``Cookie`` / ``Origin`` /
credential headers a hostile annotator sent on the demo, through the authoriser's app (``/authorise``).

Label Studio's ``whoami`` is the one thing stood in for here (``test_authoriser`` asks the real one): a session
is valid when its cookie value is exactly one Label Studio signed (``signed``), as Django's signature check
answers; any other value, a copied payload with a wrong signature too, is anonymous. The differential test reads
10,000 generated ``Cookie`` headers with the authoriser's reader and Django's own ``parse_cookie``."""

from __future__ import annotations

import stat
import string
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posthoc_backend.gateway as gateway
from posthoc.labelstudio.gateway_cookie import read_session, reimplemented_parse_cookie
from posthoc.labelstudio.gateway_lookup import SessionUser
from posthoc.labelstudio.gateway_rules import Role
from posthoc_backend.gateway import Authority, StudyAccess, create_gateway_app
from posthoc_backend.gateway_logouts import LogoutStore

django_cookie = pytest.importorskip("django.http.cookie", reason="Django (installed with Label Studio) reads cookies")

HOST = "gateway.test:8090"
OWN_PAGE = f"http://{HOST}"
#: each user's signed session cookies (``payload:timestamp:signature``), as Label Studio set them
SIGNED = {"w001@study.test": ["w001payload:1kq2:Sig1", "w001payload:1kq3:Sig2"],
          "w002@study.test": ["w002payload:1kq2:Sig3"]}
ACCESS = StudyAccess(frozenset({"owner@study.test"}), {"w001@study.test": ("w001", 7),
                                                       "w002@study.test": ("w002", 8)})


class Tasks:
    """The admin client's one call the authoriser makes for a worker: their project's task ids."""

    def tasks(self, project_id: int, **_: object) -> list[dict[str, int]]:
        return [{"id": project_id * 10 + n} for n in range(3)]


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Label Studio's whoami as its signature check answers it; the cookies it was asked with, in order."""
    calls: list[str] = []

    def whoami(url: str, cookie: str, *, timeout: float = 5.0) -> SessionUser | None:
        calls.append(cookie)
        value = django_cookie.parse_cookie(cookie).get("sessionid")
        for number, (email, values) in enumerate(SIGNED.items()):
            if value in values:
                return SessionUser(number + 1, email)
        return None

    monkeypatch.setattr(gateway, "session_user", whoami)
    return calls


@pytest.fixture
def clock() -> list[float]:
    return [0.0]


@pytest.fixture
def authority(asked: list[str], clock: list[float]) -> Authority:
    return Authority(url="http://ls.test", client=Tasks(), load_access=lambda: ACCESS,  # type: ignore[arg-type]
                     clock=lambda: clock[0])


@pytest.fixture
def app(authority: Authority) -> Any:
    return create_gateway_app(authority).test_client(use_cookies=False)


def authorise(app: Any, method: str, uri: str, cookie: str | None = None, **headers: str) -> Any:
    if cookie is not None:
        headers["Cookie"] = cookie
    return app.get("/authorise", headers={"X-Original-Method": method, "X-Original-URI": uri,
                                          "X-Original-Host": HOST, **headers})


W001, W001_RESIGNED, W002 = SIGNED["w001@study.test"][0], SIGNED["w001@study.test"][1], SIGNED["w002@study.test"][0]


def test_a_doubled_sessionid_is_refused_whichever_parser_stops_where(app: Any, asked: list[str]) -> None:
    """The demo's attack: a pair SimpleCookie cannot parse (``a=b"c``) hid a second ``sessionid`` from the
    authoriser while Label Studio used it. Any header naming ``sessionid`` twice is refused, never the login page."""
    for cookie in (f'sessionid={W001}; a=b"c; sessionid={W002}', f"sessionid={W001}; sessionid={W002}",
                   f"sessionid={W001};sessionid =x", f' sessionid={W001}; csrftoken=t; sessionid="{W002}"'):
        answer = authorise(app, "GET", "/api/projects/8/", cookie)
        assert answer.status_code == 403 and "names sessionid 2 times" in answer.json["reason"], cookie
    assert asked == []


def test_the_session_after_an_unparsable_pair_is_the_one_judged(app: Any) -> None:
    """``a=b"c; sessionid=<w002's>``: the old reader saw no session (SimpleCookie stops at ``a=b"c``), Label Studio
    sees w002's: now the authoriser judges w002 too, and a logged-out one stays out."""
    cookie = f'a=b"c; sessionid={W002}'
    assert authorise(app, "GET", "/api/projects/8/", cookie).status_code == 204
    assert authorise(app, "GET", "/api/projects/7/", cookie).status_code == 403
    assert authorise(app, "GET", "/logout/", f"sessionid={W002}").status_code == 204
    for hidden in (cookie, f'x=1; a=b"c; sessionid={W002}', f'a="b; sessionid={W002}'):
        assert authorise(app, "GET", "/api/projects/8/", hidden).status_code == 401, hidden


def test_whoami_is_asked_with_exactly_the_session_cookie_judged(app: Any, asked: list[str]) -> None:
    authorise(app, "GET", "/api/projects/7/", f'csrftoken=abc; a=b"c; sessionid={W001}; theme=dark')
    assert asked == [f"sessionid={W001}"]


def test_a_forged_signature_copy_never_changes_what_the_real_session_gets(app: Any, asked: list[str],
                                                                           clock: list[float]) -> None:
    """The demo's attack: a copy of w001's payload with a wrong signature, sent every 10 s, made the background
    refresh store "no user" under the real session and sent w001 to the login page. Now whoami is asked with the
    verified cookie only: the copy gets the real cookie's kept answer (Label Studio, checking the signature itself,
    answers the copy as anonymous) and is never asked about or stored; a copy sent before any real cookie is asked
    about alone (anonymous) and changes nothing either."""
    forged = "w001payload:1kq2:WRONG"
    assert authorise(app, "GET", "/api/projects/7/", f"sessionid={forged}").status_code == 401  # before: alone
    assert authorise(app, "GET", "/api/projects/7/", f"sessionid={W001}").status_code == 204
    asked_about_forged = asked.count(f"sessionid={forged}")
    for second in range(1, 60, 10):
        clock[0] = float(second) + gateway.SESSION_SECONDS
        authorise(app, "GET", "/api/projects/7/", f"sessionid=w001payload:{second}:WRONG")
        assert authorise(app, "GET", "/api/projects/7/", f"sessionid={W001}").status_code == 204
        assert authorise(app, "GET", "/api/projects/7/", f"sessionid={W001_RESIGNED}").status_code == 204
    assert asked_about_forged == 1 and all(c in (f"sessionid={forged}", f"sessionid={W001}") for c in asked), asked


def test_a_logout_ends_every_copy_and_made_up_logouts_cannot_flush_it(authority: Authority) -> None:
    """Label Studio re-signs the session on every answer: logging out with one copy ends the others. The demo's
    attack: public logouts with made-up cookies flushed the FIFO of logouts; 100,001 of them now change nothing."""
    def status(method: str, uri: str, cookie: str) -> tuple[bool, str]:
        decision, caller = authority.decide(method, uri, {"cookie": cookie}, host=HOST)
        return decision.allowed, caller.role.value

    assert status("GET", "/api/projects/7/", f"sessionid={W001}") == (True, "worker")
    assert status("GET", "/user/logout", f"sessionid={W001_RESIGNED}") == (True, "worker")
    for n in range(100_001):
        authority.decide("GET", "/logout/", {"cookie": f"sessionid=made-up-{n}:1kq2:x"}, host=HOST)
    assert len(authority._revoked) == 1
    for cookie in (W001, W001_RESIGNED, "w001payload:1kq9:Forged"):
        assert status("GET", "/api/projects/7/", f"sessionid={cookie}") == (False, "anonymous")


def test_a_logout_outlives_a_restart_of_the_authoriser(asked: list[str], tmp_path: Path) -> None:
    """Issue 47: logouts were remembered in memory only, so a restarted authoriser let a logged-out session's copy
    in again. They are kept in an owner-only SQLite file (the digest of the session, never the cookie)."""
    store = tmp_path / "study.gateway-logouts.sqlite"

    def started() -> Authority:
        return Authority(url="http://ls.test", client=Tasks(), load_access=lambda: ACCESS,  # type: ignore[arg-type]
                         logouts=LogoutStore(store, max_age=3600))

    first = started()
    assert first.decide("GET", "/logout/", {"cookie": f"sessionid={W001}"}, host=HOST)[1].role is Role.WORKER
    assert stat.S_IMODE(store.stat().st_mode) == 0o600 and W001.encode() not in store.read_bytes()
    again = started()
    for cookie in (W001, W001_RESIGNED):
        decision, caller = again.decide("GET", "/api/projects/7/", {"cookie": f"sessionid={cookie}"}, host=HOST)
        assert (decision.allowed, caller.role) == (False, Role.ANONYMOUS), cookie
    assert again.decide("GET", "/api/projects/8/", {"cookie": f"sessionid={W002}"}, host=HOST)[0].allowed


def test_x_api_key_is_the_owners_like_authorization(app: Any) -> None:
    """Label Studio 1.23 reads ``X-Api-Key`` as ``Authorization: Token`` (``core.middleware``)."""
    for header in ("X-Api-Key", "x-api-key", "Authorization"):
        answer = authorise(app, "GET", "/api/projects/7/", f"sessionid={W001}", **{header: "0123abcd"})
        assert answer.status_code == 403 and "the owner's" in answer.json["reason"], header


@pytest.mark.parametrize(("headers", "allowed"), [
    ({"Origin": OWN_PAGE}, True),
    ({"Referer": f"{OWN_PAGE}/projects/7/data?labeling=1"}, True),
    ({}, False),
    ({"Origin": "http://evil.example"}, False),
    ({"Origin": "null"}, False),
    ({"Origin": "http://evil.example", "Referer": f"{OWN_PAGE}/projects/7/data"}, False),
    ({"Origin": f"http://{HOST}.evil.example"}, False),
    ({"Referer": f"http://evil.example/?{HOST}"}, False),
])
def test_a_workers_write_comes_from_a_page_of_the_gateway(app: Any, headers: dict[str, str], allowed: bool) -> None:
    """The demo's attack: a form POST from a foreign page created an annotation (Label Studio 1.23 disables CSRF
    checks). A worker's write needs the gateway's own Origin (or, without one, Referer)."""
    answer = authorise(app, "POST", "/api/tasks/70/annotations/?project=7", f"sessionid={W001}", **headers)
    assert answer.status_code == (204 if allowed else 403), answer.json
    if not allowed:
        assert "cross-site request forgery" in answer.json["reason"]


def test_log_out_at_both_paths_and_log_in_back_to_the_page_asked_for(app: Any) -> None:
    for path in ("/logout", "/logout/", "/user/logout", "/user/logout/"):
        assert authorise(app, "GET", path).status_code == 204, path
    answer = authorise(app, "GET", "/projects/7/data?labeling=1")
    assert answer.status_code == 401
    login = "/user/login/" + answer.headers["X-Posthoc-Login-Next"]
    assert login == "/user/login/?next=/projects/7/data%3Flabeling%3D1"
    assert authorise(app, "GET", login).status_code == 204
    assert authorise(app, "GET", "/api/projects/7/").headers["X-Posthoc-Login-Next"] == ""


# the differential test: headers of name=value chunks (or bare values) and separators, made of what a hostile
# header is made of: both readers' session name spelt nearly right, quotes, octal escapes, colons, stray = and ;
NAMES = st.sampled_from(["sessionid", "sessionid", " sessionid", "sessionid ", "SessionID", "sessionid\t",
                         "csrftoken", "a", "", "$Path", '"sessionid"'])
VALUES = st.one_of(st.sampled_from(['b"c', '"q"', '"a\\073b"', '"\\"', "p:1kq2:Sig", "=x", '"', "x y", ""]),
                   st.text(string.ascii_letters + string.digits + ':="\\ ,$%', max_size=10))
CHUNKS = st.one_of(st.tuples(NAMES, VALUES).map("=".join), VALUES)
HEADERS = st.lists(st.tuples(CHUNKS, st.sampled_from(["; ", ";", " ;", ";;", ", "])), max_size=6).map(
    lambda chunks: "".join(chunk + separator for chunk, separator in chunks))


def old_reading(header: str) -> str | None:
    """The session the authoriser read before issue 47 (``SimpleCookie``: the first ``sessionid``, nothing after a
    pair it cannot parse)."""
    try:
        morsel = SimpleCookie(header).get("sessionid")
    except CookieError:
        return None
    return morsel.value if morsel is not None and morsel.value else None


@pytest.mark.slow  # waits on a dead service's retries or runs thousands of cases: not in the fast loop
def test_ten_thousand_cookie_headers_name_one_session_for_both_readers() -> None:
    """Whatever the header, the authoriser refuses it or names the session Django's ``parse_cookie`` names (and
    its own reimplementation of that parser reads every header exactly as Django does). The old reader named a
    different session on some of the same headers: the test counts them, so it shows it can tell."""
    read: list[str] = []
    old_differs: list[str] = []

    @settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(HEADERS)
    def one_reading(header: str) -> None:
        read.append(header)
        django_reads = django_cookie.parse_cookie(header)
        assert reimplemented_parse_cookie(header) == django_reads
        session = read_session(header)
        if old_reading(header) != (django_reads.get("sessionid") or None):
            old_differs.append(header)
        if session.refusal is None:
            assert session.value == (django_reads.get("sessionid") or None), header
            if session.value is not None:
                assert django_cookie.parse_cookie(session.whoami_cookie()) == {"sessionid": session.value}, header

    one_reading()
    assert len(read) >= 10_000 and old_differs, (len(read), len(old_differs))
