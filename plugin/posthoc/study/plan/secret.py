"""The per-study secret of the task keys, kept beside the manifest (``<manifest stem>.secret``, mode 0600).

``posthoc study plan`` and the demo reuse the secret when the file exists, so planning the same study again
gives the same keys and a byte-identical manifest; they write a new one (32 random bytes, hex) only together
with a new manifest. Keep the file with the manifest and out of anything annotators can read: with it, and the
study's public facts, task keys can be traced back to workers and items (:mod:`posthoc.study.plan.keys`).
"""

from __future__ import annotations

from pathlib import Path

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError
from posthoc.study.plan.keys import KEY_SECRET_BYTES, new_key_secret


def secret_path(manifest_path: str | Path) -> Path:
    """``<manifest stem>.secret`` beside the manifest."""
    path = Path(manifest_path)
    return path.with_name(f"{path.stem}.secret")


def read_key_secret(manifest_path: str | Path) -> bytes | None:
    """The study's secret stored beside ``manifest_path``, or ``None`` when there is none yet."""
    path = secret_path(manifest_path)
    if not path.is_file():
        return None
    text = path.read_text(encoding="ascii", errors="replace").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != KEY_SECRET_BYTES:
        raise PosthocInputError(f"{path}: not a task-key secret ({KEY_SECRET_BYTES * 2} hex digits expected); "
                                "restore it from a backup, or delete it and plan again with --overwrite "
                                "(every task key changes)")
    return secret


def key_secret_for(manifest_path: str | Path, *, overwrite: bool = False) -> tuple[bytes | None, bool]:
    """The secret to plan ``manifest_path`` with, and whether it is new (write it with :func:`write_key_secret`
    once the plan is valid, so a failed plan leaves no file behind).

    A manifest that exists without a secret beside it was planned before keys were keyed: it is planned
    unkeyed again (``None``) so that rerunning setup on it duplicates nothing; ``overwrite`` (a new plan
    anyway) gives it a secret."""
    stored = read_key_secret(manifest_path)
    if stored is not None:
        return stored, False
    if Path(manifest_path).exists() and not overwrite:
        return None, False
    return new_key_secret(), True


def write_key_secret(manifest_path: str | Path, secret: bytes) -> Path:
    """Store ``secret`` beside ``manifest_path`` (0600, atomically)."""
    path = secret_path(manifest_path)
    write_text_atomic(path, secret.hex() + "\n", permissions=0o600)
    return path
