"""Pull snapshot exports of Label Studio projects (full predictions, expanded users, drafts) to files.

The plain ``/export`` endpoint gives prediction ids only; a snapshot export with
:data:`SERIALIZATION_OPTIONS` gives each annotation's full prediction, ``completed_by`` with the
user's e-mail and the drafts, which the flattener needs (docs/label-studio-1.23.md, Export).
Downloads are streamed to disk and written atomically: a file is complete or absent. Every call goes
through :class:`posthoc.labelstudio.client.LabelStudioClient`, so every network failure is one
:class:`~posthoc.errors.PosthocServiceError` line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from posthoc.atomic import atomic_open
from posthoc.labelstudio.client import SNAPSHOT_OPTIONS, LabelStudioClient

SERIALIZATION_OPTIONS: dict[str, Any] = SNAPSHOT_OPTIONS
HEALTH_TIMEOUT = 10.0


def connect(url: str, token: str, *, timeout: float = 60.0) -> LabelStudioClient:
    """A client for ``url`` after checking it answers ``/health`` and accepts the token; PosthocServiceError if
    it does not (PosthocInputError if ``url`` is not an http(s) URL).

    Examples:
        No request is made for a URL that is not http(s) with a host: the check fails first.

        >>> from posthoc.export.fetch import connect
        >>> connect("localhost:8080", "token")
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: --url 'localhost:8080' is not an http(s) URL with a host; give e.g. http://127.0.0.1:8080
    """
    from posthoc.labelstudio.url import check_url

    client = LabelStudioClient(check_url(url), token, timeout=timeout)
    client.health(timeout=HEALTH_TIMEOUT)
    client.whoami()
    return client


def project_label_config(client: LabelStudioClient, project_id: int) -> str:
    """The label config (XML) of a project.

    Examples:
        An in-process stand-in for the client, answering ``project`` as Label Studio's project record would; a project
        without a config gives ``""``.

        >>> from posthoc.export.fetch import project_label_config
        >>> class Client:
        ...     def project(self, project_id):
        ...         return {"id": project_id, "label_config": "<View/>"} if project_id == 3 else {"id": project_id}
        >>> project_label_config(Client(), 3), project_label_config(Client(), 4)
        ('<View/>', '')
    """
    return str(client.project(project_id).get("label_config") or "")


def fetch_export(client: LabelStudioClient, project_id: int, dest: str | os.PathLike[str], *,
                 poll_seconds: float = 0.5, timeout_seconds: float = 1800.0) -> Path:
    """Create a snapshot export of ``project_id``, wait for it, stream its JSON to ``dest`` atomically.

    Examples:
        An in-process stand-in for the client whose snapshot export streams ``[`` and ``]``: the file holds what was
        streamed, and the snapshot is titled ``posthoc score``.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.export.fetch import fetch_export
        >>> class Client:
        ...     def export_snapshot_to(self, project_id, write, *, title, poll_seconds, timeout_seconds):
        ...         print(project_id, title)
        ...         write(iter([b"[", b"]"]))
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = fetch_export(Client(), 3, Path(folder, "project-3.json"))
        ...     print(path.name, path.read_text())
        3 posthoc score
        project-3.json []
    """
    target = Path(dest)

    def write(chunks: Iterator[bytes]) -> None:
        with atomic_open(target, "wb", encoding=None) as handle:
            for chunk in chunks:
                handle.write(chunk)

    client.export_snapshot_to(project_id, write, title="posthoc score", poll_seconds=poll_seconds,
                              timeout_seconds=timeout_seconds)
    return target
