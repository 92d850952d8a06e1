"""The messages of issue 44 without a server: Label Studio's refusals with what to do, a URL copied from a page,
the version range, and the one line of a command that needs the server package (the real-server side of the first
two: test_server_refusals.py)."""

from __future__ import annotations

import json

import pytest

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.refusals import refusal_detail
from posthoc.labelstudio.url import check_url
from posthoc.labelstudio.versions import TESTED, version_warning

LEGACY_OFF = ("Authentication token no longer valid: legacy token authentication has been disabled for this "
              "organization")


def test_a_refused_legacy_token_keeps_the_servers_reason_and_names_both_ways_out() -> None:
    detail = refusal_detail(401, json.dumps({"detail": LEGACY_OFF}))
    assert detail is not None
    assert f'"{LEGACY_OFF}"' in detail
    assert "personal access token" in detail and "legacy_api_tokens_enabled" in detail


def test_any_other_refused_token_keeps_the_servers_reason() -> None:
    detail = refusal_detail(401, json.dumps({"detail": "Invalid token."}))
    assert detail is not None and detail.startswith('the API token was refused: "Invalid token."')
    assert "legacy_api_tokens_enabled" not in detail


def test_a_reserved_address_names_the_two_settings_and_the_alternative() -> None:
    reason = "URL resolves to a reserved network address (block: 10.0.0.0/8)"
    detail = refusal_detail(403, json.dumps({"detail": reason}))
    assert detail is not None and detail.startswith(f'"{reason}"')
    assert "ML_BLOCK_LOCAL_IP=false and SSRF_PROTECTION_ENABLED=false" in detail
    assert "an address Label Studio may reach" in detail


@pytest.mark.parametrize(("status", "body"), [(403, '{"detail": "You do not have permission"}'), (404, "{}"),
                                              (500, "<html><title>Server Error</title></html>")])
def test_other_answers_are_left_as_they_were(status: int, body: str) -> None:
    assert refusal_detail(status, body) is None


@pytest.mark.parametrize(("url", "base", "page"), [
    ("http://ls.example.org:8080/projects", "http://ls.example.org:8080", "/projects"),
    ("http://127.0.0.1:8080/projects/3/data?tab=1", "http://127.0.0.1:8080", "/projects/3/data"),
    ("https://host/labelstudio/user/login/", "https://host/labelstudio", "/user/login/"),
    ("http://host:8080/api/", "http://host:8080", "/api/"),
])
def test_a_url_copied_from_a_page_says_to_drop_the_path(url: str, base: str, page: str) -> None:
    with pytest.raises(PosthocInputError) as refused:
        check_url(url)
    message = str(refused.value)
    assert f"({page})" in message and message.endswith(f"without the path: {base}")


@pytest.mark.parametrize("url", ["http://host:8080", "http://host:8080/", "https://host/labelstudio"])
def test_a_base_url_and_a_prefix_pass(url: str) -> None:
    assert check_url(url) == url.rstrip("/")


def test_a_backend_url_may_have_any_path() -> None:
    assert check_url("http://10.0.0.5:9090/models", what="--backend-url", label_studio=False) == \
        "http://10.0.0.5:9090/models"


@pytest.mark.parametrize("release", [*TESTED, "1.23.9", "1.21.1.dev3"])
def test_the_tested_releases_get_no_warning(release: str) -> None:
    assert version_warning("http://h", release) is None


@pytest.mark.parametrize("release", ["1.19.3", "1.24.0", "2.0.0", "0.9.1"])
def test_a_release_outside_the_range_is_named_in_one_line(release: str) -> None:
    warning = version_warning("http://h:8080", release)
    assert warning is not None and "\n" not in warning
    assert f"Label Studio at http://h:8080 is version {release}, outside " in warning and "1.20-1.23" in warning


def test_an_unreadable_release_is_not_guessed_at() -> None:
    assert version_warning("http://h", "develop") is None


def test_a_missing_server_package_is_one_line_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from posthoc.labelstudio import environment

    def absent(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", absent)
    with pytest.raises(PosthocInputError) as refused:
        environment.label_studio_executable("posthoc ls start")
    message = str(refused.value)
    assert message.startswith("posthoc ls start needs the Label Studio server package (label-studio)")
    assert "pip install 'posthoc-review[server]'" in message and "\n" not in message
