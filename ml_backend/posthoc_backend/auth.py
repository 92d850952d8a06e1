"""Optional shared-secret authentication of the backend.

When a secret is configured (environment ``POSTHOC_BACKEND_SECRET``, never a command-line
argument), every endpoint except ``/health`` requires either HTTP basic auth whose password is
the secret (Label Studio's ML backend setting ``auth_method: BASIC_AUTH`` with
``basic_auth_user`` / ``basic_auth_pass``; the user name is not checked) or
``Authorization: Bearer <secret>``, the secret's bytes in UTF-8 or latin-1 (``requests``, and so Label
Studio, sends latin-1). Comparison is constant-time (``hmac.compare_digest``).

``/webhook`` also accepts ``Authorization: Bearer <webhook token>``, a token derived from the
secret (:func:`webhook_token`). Label Studio sends webhooks with the fixed headers stored on the
project's webhook, which every member of the organisation can read through its API; storing the
derived token there lets Label Studio post annotation events without exposing the secret itself
(the derived token opens ``/webhook`` only).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac

from posthoc.labelstudio.backend import webhook_token as webhook_token  # the app and tests use it from here

#: Endpoints open without the secret (Label Studio's health check and load balancers use it).
OPEN_ENDPOINTS = frozenset({"health"})


def _secret_bytes(secret: str) -> list[bytes]:
    """The byte strings a client may send for ``secret``: its UTF-8 and, when it has one, its latin-1 form.

    HTTP clients differ: ``requests`` (and so Label Studio's basic auth) encodes a password or a header
    as latin-1, curl and browsers send UTF-8. For an ASCII secret both are the same bytes.
    """
    forms = [secret.encode("utf-8")]
    with contextlib.suppress(UnicodeEncodeError):
        forms.append(secret.encode("latin-1"))
    return forms


def _matches(received: bytes, secret: str) -> bool:
    results = [hmac.compare_digest(received, expected) for expected in _secret_bytes(secret)]
    return any(results)


def authorised(header: str | None, secret: str) -> bool:
    """Whether an ``Authorization`` header carries ``secret`` (basic auth password or bearer token).

    ``header`` is the WSGI string of the header (its bytes read as latin-1, PEP 3333).
    """
    if not header:
        return False
    scheme, _, credentials = header.strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() == "bearer":
        try:
            received = credentials.encode("latin-1")
        except UnicodeEncodeError:
            return False
        return bool(credentials) and _matches(received, secret)
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials, validate=True)
        except (binascii.Error, ValueError):
            return False
        _, sep, password = decoded.partition(b":")
        return bool(sep) and _matches(password, secret)
    return False
