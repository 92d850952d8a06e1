"""Label Studio's refusals that a study owner's own server gives, said with what to do (issue 44), against a real
server: a legacy token where the organization has them off, an ML backend on 127.0.0.1 with SSRF protection on;
and the one warning line for a server outside the supported versions, with the real server's version.

The second server (``guarded``) runs as a study owner's does: without this project's local settings
``ML_BLOCK_LOCAL_IP=false`` / ``SSRF_PROTECTION_ENABLED=false`` (``allow_local_ml=False``); started once for the
module on a copy of the migrated template and stopped after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsfixtures import copy_template, run_backend, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


@pytest.fixture(scope="module")
def guarded(ls_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Label Studio with its SSRF protection on (as deployed), for this module only."""
    from posthoc.labelstudio.server import LabelStudioServer

    server = LabelStudioServer(copy_template(ls_template, tmp_path_factory.mktemp("guarded")), allow_local_ml=False)
    server.start(timeout=400)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def personal(guarded: Any) -> str:
    """A personal access token of the guarded server's admin, made as a person makes one: logged in,
    ``POST /api/token/`` (one a user: a second answers 409)."""
    from posthoc.labelstudio.users import login

    server = guarded
    session = login(server.url, server.username, server.password)
    assert session is not None
    try:
        csrf = str(session.http.cookies["csrftoken"])
        answer = session.http.post(f"{server.url}/api/token/", headers={"X-CSRFToken": csrf,
                                                                        "Referer": f"{server.url}/"})
        assert answer.status_code == 201, answer.text
        return str(answer.json()["token"])
    finally:
        session.close()


def legacy_tokens(server: Any, token: str, *, enabled: bool) -> None:
    """Turn the organization's legacy tokens on or off as its admin does (``POST /api/jwt/settings``)."""
    LabelStudioClient(server.url, token).request("POST", "/api/jwt/settings",
                                                 json={"legacy_api_tokens_enabled": enabled}, ok=(200,))


def test_a_refused_legacy_token_quotes_the_server_and_says_how_to_go_on(guarded: Any, personal: str) -> None:
    legacy_tokens(guarded, personal, enabled=False)
    try:
        with pytest.raises(PosthocServiceError) as refused:
            LabelStudioClient(guarded.url, guarded.token).whoami()
    finally:
        legacy_tokens(guarded, personal, enabled=True)
    message = str(refused.value)
    assert "\n" not in message
    assert "answered 401" in message
    assert '"Authentication token no longer valid: legacy token authentication has been disabled for this ' \
           'organization"' in message  # the server's own reason, quoted
    assert "personal access token" in message
    assert 'POST /api/jwt/settings {"legacy_api_tokens_enabled": true}' in message
    assert guarded.token not in message
    # what the message says works: the same token is accepted again once legacy tokens are on
    assert LabelStudioClient(guarded.url, guarded.token).whoami()["email"] == guarded.username


def test_a_backend_on_loopback_names_the_two_settings_and_the_alternative(guarded: Any, personal: str,
                                                                          tmp_path: Path) -> None:
    from posthoc.jobs.setup import create_study
    from posthoc.jobs.setup_options import SetupTarget
    from posthoc.study.plan.study import Study

    manifest = small_sample_manifest(tmp_path / "m.sqlite", name="ssrf")
    with run_backend(Path(manifest.path)) as backend_url, pytest.raises(PosthocServiceError) as refused:
        create_study(Study(manifest), SetupTarget(url=guarded.url, token=personal, backend_url=backend_url))
    message = str(refused.value)
    assert "\n" not in message
    assert re.search(r"answered 403: \"URL resolves to a reserved network address \(block: 127\.0\.0\.0/8\)\"",
                     message), message
    assert "ML_BLOCK_LOCAL_IP=false and SSRF_PROTECTION_ENABLED=false" in message
    assert "an address Label Studio may reach" in message and "--backend-url" in message


def test_the_real_server_version_is_read_and_only_a_version_outside_the_range_is_named(
        ls_server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from posthoc.labelstudio import versions
    from posthoc.labelstudio.environment import label_studio_version

    client = LabelStudioClient(ls_server.url, ls_server.token)
    release = versions.server_release(client)
    assert release == label_studio_version()  # /api/version answers the installed server's release
    assert versions.version_warning(ls_server.url, release) is None  # the suite's server is in the range
    versions.warn_if_unsupported(client)
    assert capsys.readouterr().err == ""

    major, minor = versions.release_of(release) or (0, 0)
    monkeypatch.setattr(versions, "SUPPORTED", ((major, minor + 1), (major, minor + 4)))
    monkeypatch.setattr(versions, "_warned", set())
    versions.warn_if_unsupported(client)
    versions.warn_if_unsupported(client)  # once a server a process
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"posthoc: warning: Label Studio at {ls_server.url} is version {release}, outside ")
