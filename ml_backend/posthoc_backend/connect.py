"""Connect a Label Studio project to this backend (Label Studio 1.23's REST API).

``POST /api/ml`` adds the backend (Label Studio checks ``/health`` and ``/setup`` on the spot and
auto-creates a project webhook to ``<backend>/webhook`` for all actions). With a shared secret
the backend is added with ``auth_method: BASIC_AUTH`` (the secret as password) and the webhook
gets ``Authorization: Bearer <webhook token>`` (:func:`posthoc_backend.auth.webhook_token`), so
annotation events reach the event store without the secret being readable in the webhook list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

from posthoc.errors import PosthocServiceError
from posthoc_backend.auth import webhook_token

#: The user name Label Studio sends with basic auth (not checked by the backend).
BASIC_AUTH_USER = "label-studio"


@dataclass(frozen=True)
class Connection:
    """The Label Studio ML backend record and the id of the project webhook pointing at ``/webhook``."""

    ml_backend_id: int
    webhook_id: int | None


def _call(session: requests.Session, method: str, url: str, *, hide: tuple[str | None, ...] = (),
          **kwargs: Any) -> Any:
    """One call; an error answer's text (which may echo the request) is shown without the ``hide`` values."""
    try:
        reply = session.request(method, url, timeout=120, **kwargs)
    except requests.RequestException as exc:
        raise PosthocServiceError(f"Label Studio at {url}: {type(exc).__name__}") from None
    if reply.status_code >= 400:
        detail = reply.text
        for value in hide:
            detail = detail.replace(value, "***") if value else detail
        raise PosthocServiceError(f"Label Studio {method} {url}: {reply.status_code} {detail[:300]}")
    return reply.json() if reply.content else None


def connect_backend(ls_url: str, token: str, project_id: int, backend_url: str, *, secret: str | None = None,
                    title: str = "posthoc") -> Connection:
    """Add the backend at ``backend_url`` to project ``project_id``; the token is used, never stored."""
    base = ls_url.rstrip("/")
    backend = backend_url.rstrip("/")
    with requests.Session() as session:
        session.headers["Authorization"] = f"Token {token}"
        body: dict[str, Any] = {"url": backend, "project": project_id, "title": title, "is_interactive": False}
        if secret:
            body.update(auth_method="BASIC_AUTH", basic_auth_user=BASIC_AUTH_USER, basic_auth_pass=secret)
        hide = (token, secret)
        created = _call(session, "POST", f"{base}/api/ml", json=body, hide=hide)
        hooks = _call(session, "GET", f"{base}/api/webhooks/", params={"project": project_id}, hide=hide) or []
        hook_id = next((int(h["id"]) for h in hooks if str(h.get("url", "")).rstrip("/") == f"{backend}/webhook"),
                       None)
        if secret and hook_id is not None:
            _call(session, "PATCH", f"{base}/api/webhooks/{hook_id}/",
                  json={"headers": {"Authorization": f"Bearer {webhook_token(secret)}"}}, hide=hide)
    return Connection(ml_backend_id=int(created["id"]), webhook_id=hook_id)
