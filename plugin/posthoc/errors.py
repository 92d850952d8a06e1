"""The one exception type that crosses the edge of the program.

Every reader, config loader and job validates its input once, at the edge, and raises
:class:`PosthocInputError` (a ``ValueError``) with a message that names the file, document,
task or field at fault and says what to fix. The CLI prints that message as one line and
exits non-zero; it never shows a traceback for bad input.
"""

from __future__ import annotations

import html
import re


class PosthocInputError(ValueError):
    """Bad input from a user: a file, a config, a Label Studio export or a request.

    The message must name *where* (file, document id, mention, task, field) and *what to fix*.
    """


class PosthocServiceError(RuntimeError):
    """A service the job depends on (Label Studio, the ML backend) is unreachable or refused."""


def connection_failure(exc: BaseException) -> str:
    """A few words for why an HTTP call failed (``connection refused``, ``timed out``), never the whole
    urllib3 chain: the CLI prints service errors as one line."""
    text = str(exc)
    name = type(exc).__name__
    if "Connection refused" in text or "Errno 111" in text:
        return "connection refused: is it running, and is the URL right?"
    if "Name or service not known" in text or "getaddrinfo" in text or "nodename nor servname" in text:
        return "the host name does not resolve"
    if "timed out" in text.lower() or "Timeout" in name:
        return "timed out"
    if "SSL" in text or "SSL" in name:
        return "TLS/SSL handshake failed"
    return name


def answer_summary(body: str, *, limit: int = 300) -> str:
    """One line for a server's error answer: a JSON or text body with its white space collapsed, or for an HTML
    page (a crashed request answered by Django or a proxy) only its ``<title>``; at most ``limit`` characters.
    The CLI prints service errors as one line, so a 500 page never spills a hundred lines of HTML."""
    text = body.strip()
    if re.match(r"(?is)\s*(<!doctype html|<html)", text):
        title = re.search(r"(?is)<title[^>]*>(.*?)</title>", text)
        words = " ".join(html.unescape(title.group(1)).split()) if title else ""
        return f"an HTML page ({words})" if words else f"an HTML page of {len(body)} characters"
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."

