"""Atomic file writes: a job either leaves a complete file or the previous one, never a partial one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                permissions: int | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success fsync and rename it over ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was.
    ``permissions`` (e.g. ``0o600``) is applied before the rename, so a secret never exists
    with wider permissions.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    binary = "b" in mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, *, permissions: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", permissions=permissions) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, permissions: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", encoding=None, permissions=permissions) as handle:
        handle.write(data)
