"""What to do about the refusals of Label Studio whose own words do not say it: a token it no longer accepts, and
an ML backend (or webhook) on an address its SSRF protection blocks.

Both are the server's settings, not a fault of this project, and both hit a study owner with a server of their own
(measured on Label Studio 1.20.0, 1.21.0, 1.22.0 and 1.23.2, ``bench/ls_versions_bench.py``):

- **legacy tokens** (``Authorization: Token <key>``) are off in every new organization of 1.20-1.23 (the model
  field ``JWTSettings.legacy_api_tokens_enabled`` defaults to false; ``LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true``
  turns them on for organizations made after it is set). Such a token answers 401 "Authentication token no longer
  valid: legacy token authentication has been disabled for this organization" (``jwt_auth/auth.py``);
- **a backend on a reserved address** (loopback, private, link-local): 1.23 answers 403 "URL resolves to a reserved
  network address (block: 127.0.0.0/8)" when a project adds it, unless the server runs with
  ``ML_BLOCK_LOCAL_IP=false`` and ``SSRF_PROTECTION_ENABLED=false``; 1.20-1.22 allow it.

:func:`refusal_detail` keeps the server's reason, quoted, and adds what the owner can do.
"""

from __future__ import annotations

import json

from posthoc.errors import answer_summary

#: The words of 1.20-1.23's 401 for a legacy token in an organization that has them off.
LEGACY_TOKENS_OFF = "legacy token authentication has been disabled"
#: The words of 1.23's 403 for a URL its SSRF protection blocks.
RESERVED_ADDRESS = "reserved network address"
#: The organization's token settings (admin; ``POST`` with ``{"legacy_api_tokens_enabled": true}`` turns them on).
LEGACY_SWITCH = "/api/jwt/settings"


def server_reason(body: str) -> str:
    """The ``detail`` of a JSON error answer (Django REST framework's shape), else the body as one line."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("detail"), str):
        return " ".join(answer["detail"].split())
    return answer_summary(body)


def refusal_detail(status: int, body: str) -> str | None:
    """The message for a 401 (any) or a 403 naming a reserved address: the server's reason quoted and what to do;
    ``None`` for any other answer (the caller says it as it was)."""
    reason = server_reason(body)
    if status == 401 and LEGACY_TOKENS_OFF in reason.lower():
        return (f'the API token was refused: "{reason}". It is a legacy token and this organization has them off '
                "(the default of Label Studio 1.20-1.23): use a personal access token (Account & Settings > "
                "Personal Access Token), or have an admin turn legacy tokens on (POST "
                f'{LEGACY_SWITCH} {{"legacy_api_tokens_enabled": true}})')
    if status == 401:
        return (f'the API token was refused: "{reason}"; check the token (a personal access token, or a legacy '
                "token where the organization allows them)")
    if status == 403 and RESERVED_ADDRESS in reason.lower():
        return (f'"{reason}": Label Studio refuses to call a backend on a loopback or private address. Serve the '
                "backend on an address Label Studio may reach and give that as --backend-url, or run Label Studio "
                "with ML_BLOCK_LOCAL_IP=false and SSRF_PROTECTION_ENABLED=false (this switches off its protection "
                "against server-side request forgery: only for a server that serves one machine)")
    return None
