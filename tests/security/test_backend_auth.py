"""The backend's shared secret (POSTHOC_BACKEND_SECRET): what tests/backend/test_app.py does not already cover.

Every route of the app but ``/health`` (enumerated from its URL map, so a new route is covered too),
unknown paths, wrong methods, HEAD and OPTIONS answer 401 JSON to: no header, a wrong secret, a prefix
or an extension of it, the secret in the user-name field, other schemes, a bare header. Basic auth
and bearer are accepted whatever the case of the scheme word (RFC 7235), with the secret's bytes in UTF-8
(curl, browsers) or latin-1 (requests, so Label Studio's basic auth). No answer ever echoes the
secret or the Authorization header.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from flask.testing import FlaskClient
from requests.auth import HTTPBasicAuth

from posthoc.paths import label_config
from posthoc.study.plan.manifest import Manifest
from posthoc_backend.app import create_app

SECRET = "Sëcret-0123456789-abcdef"


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")}


def _latin1(value: str) -> str:
    """A header value as a UTF-8 client (curl, a browser) puts it on the wire: the test client sends str
    headers as latin-1 bytes, so this string's latin-1 bytes are ``value``'s UTF-8 bytes."""
    return value.encode("utf-8").decode("latin-1")


def _label_studio_basic(user: str, password: str) -> dict[str, str]:
    """The header Label Studio sends for its ML backend's basic auth (requests' HTTPBasicAuth: latin-1)."""
    prepared = requests.Request("GET", "http://127.0.0.1/", auth=HTTPBasicAuth(user, password)).prepare()
    return {"Authorization": prepared.headers["Authorization"]}


WRONG: dict[str, dict[str, str]] = {
    "none": {},
    "empty": {"Authorization": ""},
    "wrong bearer": {"Authorization": "Bearer " + _latin1(SECRET.replace("0", "1"))},
    "bearer prefix": {"Authorization": "Bearer " + _latin1(SECRET[:-1])},
    "bearer extension": {"Authorization": "Bearer " + _latin1(SECRET + "x")},
    "bearer twice": {"Authorization": f"Bearer {_latin1(SECRET)} {_latin1(SECRET)}"},
    "bearer empty": {"Authorization": "Bearer "},
    "bearer word only": {"Authorization": "Bearer"},
    "basic prefix": _basic("label-studio", SECRET[:8]),
    "basic extension": _basic("label-studio", SECRET + " "),
    "basic empty password": _basic(SECRET, ""),
    "secret as user name": _basic(SECRET, "wrong"),
    "basic without colon": {"Authorization": "Basic " + base64.b64encode(SECRET.encode()).decode("ascii")},
    "basic not base64": {"Authorization": "Basic " + _latin1(SECRET)},
    "token scheme": {"Authorization": "Token " + _latin1(SECRET)},
    "bare secret": {"Authorization": _latin1(SECRET)},
}

RIGHT: dict[str, dict[str, str]] = {
    "basic (UTF-8 password)": _basic("label-studio", SECRET),
    "basic as Label Studio sends it (latin-1 password)": _label_studio_basic("labelstudio", SECRET),
    "bearer as requests sends it (latin-1)": {"Authorization": "Bearer " + SECRET},
    "basic, any user": _basic("", SECRET),
    "basic, colon in password": _basic("u", SECRET),
    "bearer (UTF-8)": {"Authorization": "Bearer " + _latin1(SECRET)},
    "bearer, lower case scheme": {"Authorization": "bearer " + _latin1(SECRET)},
    "basic, upper case scheme": {"Authorization": "BASIC " + _basic("u", SECRET)["Authorization"][6:]},
}


@pytest.fixture(scope="module")
def app(manifest_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    manifest = Manifest.open(manifest_path)
    try:
        yield create_app(manifest, secret=SECRET, events_db=tmp_path_factory.mktemp("events") / "events.sqlite3")
    finally:
        manifest.close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _requests(app: Flask) -> list[tuple[str, str]]:
    """(method, path) for every route and method of the app but /health, plus an unknown path and wrong methods."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "health":
            continue
        path = rule.rule.replace("<path:filename>", "x.txt")
        found.extend((method, path) for method in sorted(rule.methods or ()))
    assert {path for _, path in found} >= {"/setup", "/versions", "/predict", "/webhook"}
    return [*found, ("GET", "/no-such-endpoint"), ("POST", "/no-such-endpoint"), ("GET", "/predict"),
            ("DELETE", "/webhook"), ("PUT", "/setup")]


def _assert_no_echo(reply: Any, headers: dict[str, str]) -> None:
    body = reply.get_data(as_text=True)
    assert SECRET not in body and _latin1(SECRET) not in body and SECRET[:12] not in body
    header = headers.get("Authorization", "")
    if len(header) > 8:
        assert header not in body and header.split(" ")[-1] not in body
    for name, value in reply.headers.items():
        assert SECRET[:12] not in value and _latin1(SECRET)[:12] not in value, name


@pytest.mark.parametrize("case", list(WRONG))
def test_every_endpoint_but_health_refuses_a_wrong_secret_with_401_json(app: Flask, client: FlaskClient,
                                                                       case: str) -> None:
    headers = WRONG[case]
    for method, path in _requests(app):
        reply = client.open(path, method=method, headers=headers, json={"project": "1.1"})
        assert reply.status_code == 401, (method, path, reply.status_code)
        assert reply.headers["WWW-Authenticate"].startswith("Basic")
        if method != "HEAD":
            assert reply.is_json and "authentication required" in reply.json["error"]
        _assert_no_echo(reply, headers)
    health = client.get("/health", headers=headers)
    assert health.status_code == 200 and health.json["status"] == "UP"


@pytest.mark.parametrize("case", list(RIGHT))
def test_basic_auth_and_bearer_with_the_secret_are_accepted(client: FlaskClient, manifest_path: Path,
                                                            case: str) -> None:
    headers = RIGHT[case]
    assert client.get("/versions", headers=headers).status_code == 200
    setup = client.post("/setup", headers=headers, json={"project": "1.1", "schema": label_config(
        "entity_verification"), "hostname": "http://127.0.0.1:8080", "access_token": "ls-access-token-abc"})
    assert setup.status_code == 200
    assert "ls-access-token-abc" not in setup.get_data(as_text=True)  # Label Studio's own token is not echoed
    hook = client.post("/webhook", headers=headers, json={"action": "PROJECT_UPDATED"})
    assert hook.status_code == 200 and hook.json["status"] == "ok"


def test_error_answers_to_an_authorised_client_do_not_echo_the_secret(client: FlaskClient) -> None:
    headers = RIGHT["bearer (UTF-8)"]
    replies = [
        client.post("/predict", headers=headers, data="not json", content_type="application/json"),
        client.post("/predict", headers=headers, json={"tasks": [{"id": 1, "data": {"text": "x"}}]}),
        client.post("/predict", headers=headers, json={"tasks": "nope", "secret": SECRET}),
        client.post("/setup", headers=headers, json={"schema": SECRET}),
        client.post("/setup", headers=headers, json={"schema": 7, "access_token": SECRET}),
        client.get("/no-such-endpoint", headers=headers),
        client.get("/predict", headers=headers),
    ]
    for reply in replies:
        assert 400 <= reply.status_code < 500 and reply.is_json, reply.status_code
        assert reply.json["error"]
        _assert_no_echo(reply, headers)


def test_without_a_secret_nothing_asks_for_one(manifest_path: Path) -> None:
    manifest = Manifest.open(manifest_path)
    try:
        client = create_app(manifest).test_client()
        assert client.get("/versions").status_code == 200
        assert client.post("/webhook", json={"action": "PROJECT_UPDATED"}).status_code == 200
    finally:
        manifest.close()
