"""Pull snapshot exports of Label Studio projects (full predictions, expanded users, drafts) to files.

The plain ``/export`` endpoint gives prediction ids only; a snapshot export with
:data:`SERIALIZATION_OPTIONS` gives each annotation's full prediction, ``completed_by`` with the
user's e-mail and the drafts, which the flattener needs (docs/label-studio-1.23.md, Export).
Downloads are streamed to disk and written atomically: a file is complete or absent.
Every network failure becomes one :class:`~posthoc.errors.PosthocServiceError` line.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from label_studio_sdk import LabelStudio
from label_studio_sdk.types import SerializationOptionsRequest

from posthoc.atomic import atomic_open
from posthoc.errors import PosthocServiceError

SERIALIZATION_OPTIONS: dict[str, Any] = {
    "predictions": {"only_id": False},
    "annotations__completed_by": {"only_id": False},
    "drafts": {"only_id": False},
}
HEALTH_TIMEOUT = 10.0


DOWNLOAD_TRIES = 5  # the first try and 4 retries, 0.5 s backoff doubling


@contextlib.contextmanager
def service_errors(url: str, what: str) -> Iterator[None]:
    """Turn any failure talking to Label Studio into one PosthocServiceError line naming ``what``."""
    try:
        yield
    except PosthocServiceError:
        raise
    except Exception as exc:
        status = getattr(exc, "status_code", None)
        if status in (401, 403):
            raise PosthocServiceError(f"Label Studio at {url} refused the API token while trying to {what} "
                                      f"(HTTP {status}); check the token in the environment") from exc
        reason = f"HTTP {status}" if status else type(exc).__name__
        raise PosthocServiceError(f"Label Studio at {url} failed to {what} ({reason})") from exc


def connect(url: str, token: str, *, timeout: float = 60.0) -> LabelStudio:
    """A client for ``url`` after checking it answers ``/health``; PosthocServiceError if it does not
    (PosthocInputError if ``url`` is not an http(s) URL)."""
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.labelstudio.url import check_url

    base = check_url(url)
    # retried on a dropped connection and 502/503/504 like every idempotent call of the client
    LabelStudioClient(base, token, timeout=HEALTH_TIMEOUT).request("GET", "/health", ok=(200,))
    client = LabelStudio(base_url=base, api_key=token, timeout=timeout)
    with service_errors(base, "accept the API token"):
        client.users.whoami()
    return client


def _base(client: LabelStudio) -> str:
    wrapper = getattr(client, "_client_wrapper", None)
    getter = getattr(wrapper, "get_base_url", None)
    return str(getter()) if callable(getter) else "Label Studio"


def project_label_config(client: LabelStudio, project_id: int) -> str:
    """The label config (XML) of a project."""
    with service_errors(_base(client), f"read project {project_id}"):
        return str(client.projects.get(id=project_id).label_config)


def fetch_export(client: LabelStudio, project_id: int, dest: str | os.PathLike[str], *,
                 poll_seconds: float = 0.5, timeout_seconds: float = 1800.0) -> Path:
    """Create a snapshot export of ``project_id``, wait for it, stream its JSON to ``dest`` atomically."""
    base = _base(client)
    target = Path(dest)
    with service_errors(base, f"create an export of project {project_id}"):
        export = client.projects.exports.create(id=project_id, title="posthoc score",
                                                serialization_options=SerializationOptionsRequest(
                                                    **SERIALIZATION_OPTIONS))
    export_id = export.id
    assert export_id is not None
    deadline = time.monotonic() + timeout_seconds
    status = export.status
    while status not in ("completed", "failed"):
        if time.monotonic() > deadline:
            raise PosthocServiceError(f"Label Studio at {base}: export {export_id} of project {project_id} "
                                      f"not finished after {timeout_seconds:.0f} s")
        time.sleep(poll_seconds)
        with service_errors(base, f"poll export {export_id} of project {project_id}"):
            status = client.projects.exports.get(id=project_id, export_pk=export_id).status
    if status == "failed":
        raise PosthocServiceError(f"Label Studio at {base}: export {export_id} of project {project_id} failed")
    for attempt in range(DOWNLOAD_TRIES):  # a streamed download is not retried by the SDK itself
        try:
            with service_errors(base, f"download export {export_id} of project {project_id}"), \
                    atomic_open(target, "wb", encoding=None) as handle:
                for chunk in client.projects.exports.download(id=project_id, export_pk=export_id,
                                                              export_type="JSON"):
                    handle.write(chunk)
            break
        except PosthocServiceError as exc:
            status = getattr(exc.__cause__, "status_code", None)
            transient = status in (502, 503, 504) or (status is None and exc.__cause__ is not None)
            if not transient or attempt == DOWNLOAD_TRIES - 1:
                raise
            time.sleep(0.5 * 2**attempt)
    with service_errors(base, f"delete export {export_id} of project {project_id}"), \
            contextlib.suppress(Exception):
        client.projects.exports.delete(id=project_id, export_pk=export_id)
    return target
