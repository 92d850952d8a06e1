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

from posthoc.labelstudio.client import LabelStudioClient
from posthoc_backend.auth import webhook_token

#: The user name Label Studio sends with basic auth (not checked by the backend).
BASIC_AUTH_USER = "label-studio"


@dataclass(frozen=True)
class Connection:
    """The Label Studio ML backend record and the id of the project webhook pointing at ``/webhook``."""

    ml_backend_id: int
    webhook_id: int | None


def connect_backend(ls_url: str, token: str, project_id: int, backend_url: str, *, secret: str | None = None,
                    title: str = "posthoc") -> Connection:
    """Add the backend at ``backend_url`` to project ``project_id``; the token is used, never stored.
    Calls go through :class:`posthoc.labelstudio.client.LabelStudioClient` (errors: one line, secrets blanked)."""
    backend = backend_url.rstrip("/")
    client = LabelStudioClient(ls_url, token, timeout=120, hide=[secret])
    body: dict[str, Any] = {"url": backend, "project": project_id, "title": title, "is_interactive": False}
    if secret:
        body.update(auth_method="BASIC_AUTH", basic_auth_user=BASIC_AUTH_USER, basic_auth_pass=secret)
    created = client.post("/api/ml", body)
    hooks = client.webhooks(project_id)
    hook_id = next((int(h["id"]) for h in hooks if str(h.get("url", "")).rstrip("/") == f"{backend}/webhook"), None)
    if secret and hook_id is not None:
        client.patch(f"/api/webhooks/{hook_id}/", {"headers": {"Authorization": f"Bearer {webhook_token(secret)}"}})
    return Connection(ml_backend_id=int(created["id"]), webhook_id=hook_id)
