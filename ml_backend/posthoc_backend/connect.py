"""Connect a Label Studio project to this backend (Label Studio 1.23's REST API).

``POST /api/ml`` adds the backend (Label Studio checks ``/health`` and ``/setup`` on the spot and
auto-creates a project webhook to ``<backend>/webhook`` for all actions). That webhook is removed unless
``webhook=True``: Label Studio sends it inside every Submit (+36.0 ms p50 / +40.0 ms p95 in
``bench/results/study_scale_bench.txt``, (a)). With a shared secret the backend is added with
``auth_method: BASIC_AUTH`` (the secret as password) and a kept webhook gets ``Authorization: Bearer
<webhook token>`` (:func:`posthoc.labelstudio.backend.webhook_token`), so annotation events reach the event
store without the secret being readable in the webhook list.
"""

from __future__ import annotations

from posthoc.labelstudio.backend import BASIC_AUTH_USER, BackendLink, Connection
from posthoc.labelstudio.client import LabelStudioClient

__all__ = ["BASIC_AUTH_USER", "Connection", "connect_backend"]


def connect_backend(ls_url: str, token: str, project_id: int, backend_url: str, *, secret: str | None = None,
                    title: str = "posthoc", webhook: bool = False) -> Connection:
    """Add the backend at ``backend_url`` to project ``project_id``; the token is used, never stored
    (:class:`posthoc.labelstudio.backend.BackendLink`; errors: one line, secrets blanked). ``webhook=True``:
    keep the project webhook Label Studio makes for the backend (the event store's source)."""
    client = LabelStudioClient(ls_url, token, timeout=120, hide=[secret])
    return BackendLink(client, backend_url, secret, title=title, webhook=webhook).connect(project_id, new=True)
