"""Sign-up without the invite link is off on every Label Studio this project starts (issue 23):
``LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK=true`` (:data:`posthoc.labelstudio.environment.ACCESS_ENV`)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from posthoc.labelstudio.client import LabelStudioClient

pytestmark = pytest.mark.labelstudio


def _signup(url: str, email: str, *, token: str | None) -> httpx.Response:
    """The sign-up form as a browser posts it (CSRF cookie and field, Referer), with or without ``?token=``."""
    path = "/user/signup/" + (f"?token={token}" if token is not None else "")
    with httpx.Client(base_url=url, follow_redirects=False, timeout=60) as browser:
        assert browser.get(path).status_code == 200
        csrf = browser.cookies["csrftoken"]
        return browser.post(path, data={"email": email, "password": "signup-test-pw-1", "csrfmiddlewaretoken": csrf,
                                        "how_find_us": "Other", "elaborate": "posthoc test"},
                            headers={"Referer": f"{url}{path}"})


def _emails(admin: LabelStudioClient) -> set[str]:
    return {str(user.get("email", "")).lower() for user in admin.request("GET", "/api/users/")}


def test_signup_without_the_invite_link_is_refused(ls_server: Any) -> None:
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    stranger = f"stranger-{uuid.uuid4().hex[:8]}@signup.posthoc.local"
    refused = _signup(ls_server.url, stranger, token=None)
    assert refused.status_code == 403, refused.text[:300]
    wrong = _signup(ls_server.url, stranger, token="not-the-invite-token")
    assert wrong.status_code == 403, wrong.text[:300]
    assert stranger not in _emails(admin)
    invited = f"invited-{uuid.uuid4().hex[:8]}@signup.posthoc.local"
    accepted = _signup(ls_server.url, invited, token=admin.invite_token())
    assert accepted.status_code == 302, accepted.text[:300]
    assert invited in _emails(admin)
