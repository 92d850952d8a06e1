"""The one Label Studio client against a real Label Studio: personal access tokens (JWT refresh tokens) on both
of its routes (the SDK's typed calls and its own calls), paged listings, and the one error line."""

from __future__ import annotations

import pytest

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient

pytestmark = pytest.mark.labelstudio


@pytest.fixture
def personal_tokens(ls_server):
    """Personal access tokens enabled for the organisation (legacy tokens stay on), restored afterwards."""
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    before = admin.get("/api/jwt/settings")
    admin.post("/api/jwt/settings", {"api_tokens_enabled": True, "legacy_api_tokens_enabled": True})
    yield admin
    admin.post("/api/jwt/settings", {key: before[key] for key in ("api_tokens_enabled", "legacy_api_tokens_enabled")})


def test_a_personal_access_token_works_for_typed_and_raw_calls(personal_tokens, ls_annotator) -> None:
    account = ls_annotator("pat-user@client.posthoc.local")
    pat = str(LabelStudioClient(personal_tokens.url, account.token).post("/api/token/", {})["token"])
    assert pat.count(".") == 2 and pat != account.token  # a JWT refresh token, not the legacy key
    client = LabelStudioClient(personal_tokens.url, pat)
    assert client.whoami()["email"] == "pat-user@client.posthoc.local"  # the SDK's route (it exchanges the token)
    members = {m["email"] for m in client.members()}  # our own route: access token from the SDK's tokens.refresh
    assert "pat-user@client.posthoc.local" in members
    assert client.get("/api/current-user/whoami")["id"] == account.user_id


def test_a_refused_token_is_one_line_naming_the_call(ls_server) -> None:
    client = LabelStudioClient(ls_server.url, "not-a-token-of-this-server")
    with pytest.raises(PosthocServiceError) as typed:
        client.whoami()
    with pytest.raises(PosthocServiceError) as raw:
        client.get("/api/projects/")
    for error in (typed.value, raw.value):
        assert "401" in str(error) and "\n" not in str(error) and "not-a-token" not in str(error)
    assert "whoami" in str(typed.value) and "/api/projects/" in str(raw.value)


def test_listings_are_paged_past_one_page(ls_server, ls_project) -> None:
    from posthoc.paths import label_config

    project = ls_project(label_config("entity_verification"), title="paged listing")
    client = LabelStudioClient(ls_server.url, ls_server.token)
    data = [{"text": f"t{i}", "task_key": f"k{i}", "batch_position": "", "kb_pages": ""} for i in range(230)]
    ids = client.import_tasks(int(project.id), [{"data": d} for d in data])
    assert len(ids) == 230
    listed = list(client.tasks(int(project.id), fields="task_only"))
    assert [t["data"]["task_key"] for t in listed] == [f"k{i}" for i in range(230)]  # 3 pages of 100, in order
    assert [t["predictions"] for t in client.tasks_with_predictions(int(project.id))] == [[]] * 230


def _client_ports(http) -> list[int]:
    """A hook on an ``httpx.Client`` collecting each answer's local port (httpcore's public ``network_stream``
    extension, read while the answer is still open)."""
    ports: list[int] = []
    http.event_hooks["response"].append(
        lambda response: ports.append(response.extensions["network_stream"].get_extra_info("client_addr")[1]))
    return ports


def test_over_plain_http_every_call_has_its_own_connection(ls_server) -> None:
    """Django's ``runserver`` answers a reused connection ~40 ms late (headers and body in two sends, Nagle and the
    client's delayed ACK: the client module's docstring), so over ``http://`` nothing is kept alive; a plain
    ``httpx.Client`` on the same server reuses one connection, which shows the hook sees the difference."""
    import httpx

    client = LabelStudioClient(ls_server.url, ls_server.token)
    ours = _client_ports(client.http)
    for _ in range(3):
        client.whoami()
        client.get("/api/projects/", params={"page_size": 1})
    assert len(ours) == 6 and len(set(ours)) == 6
    with httpx.Client(headers={"Authorization": f"Token {ls_server.token}"}) as plain:
        theirs = _client_ports(plain)
        for _ in range(3):
            plain.get(f"{ls_server.url}/api/current-user/whoami").raise_for_status()
    assert len(theirs) == 3 and len(set(theirs)) == 1
