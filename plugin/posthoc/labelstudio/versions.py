"""The Label Studio releases this project holds for, and one warning line for a server outside them.

The study block (``study plan``, ``study create``, annotations through the login form, ``score``, a periodic rerun,
``study status``) runs with ``--url`` and a personal access token against Label Studio 1.20.0, 1.21.0, 1.22.0 and
1.23.2 (:data:`TESTED`), each on a fresh server: ``bench/ls_versions_bench.py``, saved in
``bench/results/ls_versions_bench.txt``. The suite itself runs on one release (the newest the ``server`` extra
installs). A server outside 1.20-1.23 is not refused, only named: ``GET /api/version`` (no token needed) gives its
release, and :func:`warn_if_unsupported` prints one line before the job goes on.
"""

from __future__ import annotations

import re
import sys

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.calls import ApiCalls

#: The releases the version bench runs the study block against.
TESTED = ("1.20.0", "1.21.0", "1.22.0", "1.23.2")
#: The (major, minor) range held for, both ends included.
SUPPORTED = ((1, 20), (1, 23))
SUPPORTED_RANGE = "1.20-1.23"
_warned: set[str] = set()


def release_of(text: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a release string such as ``"1.23.2"`` or ``"1.24.0.dev0"``; ``None`` when unreadable."""
    found = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def version_warning(url: str, release: str) -> str | None:
    """The warning line for a server at ``url`` answering ``release``; ``None`` inside :data:`SUPPORTED` or when the
    release is unreadable (nothing to say for sure)."""
    parsed = release_of(release)
    if parsed is None or SUPPORTED[0] <= parsed <= SUPPORTED[1]:
        return None
    return (f"Label Studio at {url} is version {release}, outside the versions this project holds for "
            f"({SUPPORTED_RANGE}, bench/results/ls_versions_bench.txt); going on, but a call may fail")


def server_release(client: ApiCalls) -> str | None:
    """The server's ``release`` from ``GET /api/version`` (no token), or ``None`` when it does not say."""
    try:
        answer = client.request("GET", "/api/version", ok=(200,), auth=False, timeout=10)
    except PosthocServiceError:
        return None
    release = answer.get("release") if isinstance(answer, dict) else None
    return str(release) if release else None


def warn_if_unsupported(client: ApiCalls) -> None:
    """Print :func:`version_warning`'s line on stderr, once a server a process, when the server is outside the
    supported range (one ``GET /api/version``; a server that does not answer it gets no warning)."""
    if client.url in _warned:
        return
    _warned.add(client.url)
    release = server_release(client)
    warning = version_warning(client.url, release) if release else None
    if warning is not None:
        print(f"posthoc: warning: {warning}", file=sys.stderr, flush=True)
