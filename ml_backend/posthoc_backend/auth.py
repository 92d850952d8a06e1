"""Optional shared-secret authentication of the backend.

When a secret is configured (environment ``POSTHOC_BACKEND_SECRET``, never a command-line
argument), every endpoint except ``/health`` requires either HTTP basic auth whose password is
the secret (Label Studio's ML backend setting ``auth_method: BASIC_AUTH`` with
``basic_auth_user`` / ``basic_auth_pass``; the user name is not checked) or
``Authorization: Bearer <secret>``. Comparison is constant-time (``hmac.compare_digest``).

``/webhook`` also accepts ``Authorization: Bearer <webhook token>``, a token derived from the
secret (:func:`webhook_token`). Label Studio sends webhooks with the fixed headers stored on the
project's webhook, which every member of the organisation can read through its API; storing the
derived token there lets Label Studio post annotation events without exposing the secret itself
(the derived token opens ``/webhook`` only).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

#: Endpoints open without the secret (Label Studio's health check and load balancers use it).
OPEN_ENDPOINTS = frozenset({"health"})


def webhook_token(secret: str) -> str:
    """The token that opens ``/webhook`` only: HMAC-SHA256 of a fixed label under the secret (hex)."""
    return hmac.new(secret.encode("utf-8"), b"posthoc-backend webhook", hashlib.sha256).hexdigest()


def authorised(header: str | None, secret: str) -> bool:
    """Whether an ``Authorization`` header carries ``secret`` (basic auth password or bearer token)."""
    if not header:
        return False
    scheme, _, credentials = header.strip().partition(" ")
    credentials = credentials.strip()
    expected = secret.encode("utf-8")
    if scheme.lower() == "bearer":
        return hmac.compare_digest(credentials.encode("utf-8"), expected)
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials, validate=True)
        except (binascii.Error, ValueError):
            return False
        _, sep, password = decoded.partition(b":")
        return bool(sep) and hmac.compare_digest(password, expected)
    return False
