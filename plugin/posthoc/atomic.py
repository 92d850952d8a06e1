"""Atomic file writes: a job either leaves a complete file or the previous one, never a partial one.

:func:`write_summary_json` writes every ``summary.json`` (:func:`json_ready`: NaN and infinities as ``null``,
numpy scalars as Python numbers; keys sorted, indent 2), so each is valid JSON. :func:`owner_only_umask` makes
everything a process (and the processes it starts) creates readable by its owner alone.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any


def owner_only_umask() -> None:
    """Make every file and folder this process and its children create from now on its owner's alone (files 0600,
    folders 0700), whatever the umask it was started with (issue 47): a study's files hold who is who (the
    manifest: each task's system, the control tasks' answers), Label Studio's database every user's API token, the
    logs the organisation's invite link. Called first by the ``posthoc`` command and the WSGI entry points."""
    os.umask(os.umask(0o077) | 0o077)


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


@contextlib.contextmanager
def folder_kept_if_written(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """``folder`` made (with its missing parents) for the body; when the body fails (also on Ctrl-C) the folders it
    made are removed again while they are empty, so a run that wrote nothing leaves nothing behind."""
    target = Path(folder)
    missing = [p for p in (target, *target.parents) if not p.exists()]  # deepest first
    target.mkdir(parents=True, exist_ok=True)
    try:
        yield target
    except BaseException:
        for made in missing:
            try:
                made.rmdir()
            except OSError:  # not empty (something was written there), or gone
                break
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, *, permissions: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", permissions=permissions) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, permissions: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", encoding=None, permissions=permissions) as handle:
        handle.write(data)


def json_ready(value: object) -> object:
    """``value`` as plain JSON values: NaN and infinities None, numpy scalars Python ones, tuples lists, keys str."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return json_ready(value.item())
    return value


def summary_json(summary: Mapping[str, object]) -> str:
    """The text of a ``summary.json``: :func:`json_ready`, keys sorted, indent 2, other values as ``str``."""
    return json.dumps(json_ready(summary), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False,
                      default=str) + "\n"


def write_summary_json(path: str | os.PathLike[str], summary: Mapping[str, object], *,
                       permissions: int | None = None) -> None:
    """Write :func:`summary_json` of ``summary`` atomically."""
    write_text_atomic(path, summary_json(summary), permissions=permissions)
