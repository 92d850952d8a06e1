"""The admin account of a local Label Studio: its login, password and API token, and where they are kept.

Environment variables (read by :func:`resolve_credentials`):

``POSTHOC_LS_USERNAME``
    the admin's login (an e-mail address); default ``admin@posthoc.local``.
``POSTHOC_LS_PASSWORD``
    the admin's password; generated when unset.
``POSTHOC_LS_TOKEN``
    the admin's API token (legacy ``Token`` scheme, more than 5 characters); generated when unset.

Generated values are stored in ``<data dir>/credentials.json`` with permissions 0600 and reused on
the next start, so the admin of a data directory never changes.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError

DEFAULT_USERNAME = "admin@posthoc.local"
CREDENTIALS_FILE = "credentials.json"


@dataclass(frozen=True)
class Credentials:
    """The admin account of a local Label Studio: login, password and API token."""

    username: str
    password: str
    token: str

    def __repr__(self) -> str:  # never print secrets by accident
        return f"Credentials(username={self.username!r}, password=***, token=***)"


def read_credentials(data_dir: Path) -> Credentials | None:
    """The credentials stored in ``data_dir/credentials.json``, or ``None`` when there are none."""
    path = Path(data_dir) / CREDENTIALS_FILE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Credentials(username=raw["username"], password=raw["password"], token=raw["token"])
    except (ValueError, KeyError, TypeError) as exc:
        raise PosthocInputError(f"{path}: not a credentials file ({exc}); delete it to generate new ones") from exc


def write_credentials(data_dir: Path, credentials: Credentials) -> Path:
    """Store ``credentials`` in ``data_dir/credentials.json`` with permissions 0600 (atomically)."""
    path = Path(data_dir) / CREDENTIALS_FILE
    write_text_atomic(path, json.dumps(asdict(credentials), indent=2) + "\n", permissions=0o600)
    return path


def resolve_credentials(data_dir: Path, *, environ: dict[str, str] | None = None) -> Credentials:
    """The admin credentials: environment first (``POSTHOC_LS_*``), then the stored file, else generated.

    Whatever is resolved is written back to ``data_dir/credentials.json`` (0600) so later commands
    (``posthoc ls status``, ``posthoc study create`` on the same data dir) find them.
    """
    env = os.environ if environ is None else environ
    stored = read_credentials(data_dir)
    username = env.get("POSTHOC_LS_USERNAME") or (stored.username if stored else DEFAULT_USERNAME)
    password = env.get("POSTHOC_LS_PASSWORD") or (stored.password if stored else secrets.token_urlsafe(18))
    token = env.get("POSTHOC_LS_TOKEN") or (stored.token if stored else secrets.token_hex(20))
    if len(token) <= 5:
        raise PosthocInputError("POSTHOC_LS_TOKEN: Label Studio ignores tokens of 5 characters or fewer; "
                                "use a longer one")
    if "@" not in username:
        raise PosthocInputError(f"POSTHOC_LS_USERNAME={username!r}: Label Studio logins are e-mail addresses")
    credentials = Credentials(username=username, password=password, token=token)
    if credentials != stored:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        write_credentials(data_dir, credentials)
    return credentials
