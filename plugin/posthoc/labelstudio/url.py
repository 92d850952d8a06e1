"""Checking a Label Studio URL given on the command line, before anything is contacted or written."""

from __future__ import annotations

from urllib.parse import urlsplit

from posthoc.errors import PosthocInputError


def check_url(url: str, *, what: str = "--url") -> str:
    """``url`` without a trailing slash; :class:`PosthocInputError` unless it is an http(s) URL with a host.

    ``localhost:8080`` or ``127.0.0.1`` (no scheme) would otherwise reach ``requests`` and come back as
    an "unreachable service" (exit 3) although the fix is in the user's input (exit 2).
    """
    try:
        parts = urlsplit(str(url))
        has_host = bool(parts.hostname)
    except ValueError:  # e.g. an invalid port or IPv6 literal
        has_host = False
    if not has_host or parts.scheme not in ("http", "https"):
        raise PosthocInputError(f"{what} {url!r} is not an http(s) URL with a host; give e.g. http://127.0.0.1:8080")
    return str(url).rstrip("/")
