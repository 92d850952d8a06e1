"""Checking a Label Studio URL given on the command line, before anything is contacted or written."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from posthoc.errors import PosthocInputError

#: The first path segment of Label Studio's own pages and API, as a browser's address bar shows them
#: (``/projects/3/data``, ``/user/login/``, ``/organization``, ``/api/projects``): a URL holding one was copied from
#: a page, not the server's base URL. A prefix before them (a server behind a proxy at ``/labelstudio``) is kept.
LABEL_STUDIO_PAGE = re.compile(r"/(projects|user|organization|api|data|tasks|models|version)(/.*)?$")


def check_url(url: str, *, what: str = "--url", label_studio: bool = True) -> str:
    """``url`` without a trailing slash; :class:`PosthocInputError` unless it is an http(s) URL with a host, and (for
    a Label Studio URL, ``label_studio``) unless its path names one of Label Studio's pages (:data:`LABEL_STUDIO_PAGE`).

    ``localhost:8080`` or ``127.0.0.1`` (no scheme) would otherwise reach ``requests`` and come back as
    an "unreachable service" (exit 3) although the fix is in the user's input (exit 2); so would
    ``http://host:8080/projects`` (every API call then answers 404 or an HTML page).
    """
    try:
        parts = urlsplit(str(url))
        has_host = bool(parts.hostname)
    except ValueError:  # e.g. an invalid port or IPv6 literal
        has_host = False
    if not has_host or parts.scheme not in ("http", "https"):
        raise PosthocInputError(f"{what} {url!r} is not an http(s) URL with a host; give e.g. http://127.0.0.1:8080")
    page = LABEL_STUDIO_PAGE.search(parts.path) if label_studio else None
    if page is not None:
        base = f"{parts.scheme}://{parts.netloc}{parts.path[:page.start()]}"
        raise PosthocInputError(f"{what} {url!r} names a Label Studio page ({page.group(0)}); give the server's base "
                                f"URL, without the path: {base}")
    return str(url).rstrip("/")
