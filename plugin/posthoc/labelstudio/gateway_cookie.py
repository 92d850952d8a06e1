"""One reading of a ``Cookie`` header for the study gateway (issue 47): Label Studio's own.

Label Studio (Django) reads a ``Cookie`` header with ``django.http.cookie.parse_cookie``: split at ``;``, each
chunk ``name=value`` (no ``=``: an empty name), both stripped, the value unquoted as ``http.cookies`` does, the
*last* chunk of a name winning. Python's ``SimpleCookie`` (what the authoriser read before) stops at the first
chunk it cannot parse (``a=b"c``) and keeps the *first* ``sessionid``: placed after such a chunk, a second
``sessionid`` was read by Label Studio and not by the authoriser. Here the header is read with Django's function
when Django is installed (beside Label Studio it is), else with :func:`reimplemented_parse_cookie`, the same
algorithm (``tests/gateway/test_gateway_cookie.py`` checks they agree on generated headers), and a header that
names ``sessionid`` more than once is refused outright (:func:`read_session`), so whichever occurrence a reader
keeps, there is only one.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from http import cookies

#: Label Studio's session cookie (Django's default name; 1.23 keeps the session *in* it, signed)
SESSION_COOKIE = "sessionid"


def reimplemented_parse_cookie(header: str) -> dict[str, str]:
    """Django 5.2's ``django.http.cookie.parse_cookie``, line for line (name -> unquoted value, last one wins)."""
    found: dict[str, str] = {}
    for chunk in header.split(";"):
        name, value = chunk.split("=", 1) if "=" in chunk else ("", chunk)
        name, value = name.strip(), value.strip()
        if name or value:
            found[name] = cookies._unquote(value)
    return found


def _django_parse_cookie() -> Callable[[str], dict[str, str]] | None:
    try:
        module = importlib.import_module("django.http.cookie")
    except ImportError:
        return None
    parse: Callable[[str], dict[str, str]] = module.parse_cookie
    return parse


#: the parser Label Studio runs (Django's own when importable, else the same algorithm)
parse_cookie: Callable[[str], dict[str, str]] = _django_parse_cookie() or reimplemented_parse_cookie


@dataclass(frozen=True)
class SessionRead:
    """A ``Cookie`` header read for its session: ``value`` (unquoted, as Label Studio reads it; ``None``: no
    session), ``raw`` (the chunk's value as sent, to ask ``whoami`` with exactly that cookie), or ``refusal``
    (why the header is refused: it names ``sessionid`` more than once)."""

    value: str | None = None
    raw: str = ""
    refusal: str | None = None

    def whoami_cookie(self) -> str:
        """The one-cookie header that asks Label Studio about exactly this session (``""``: none)."""
        return f"{SESSION_COOKIE}={self.raw}" if self.value else ""

    def payload_key(self) -> str | None:
        """A digest of the session's signed payload (``payload:timestamp:signature``; Label Studio re-signs it on
        every answer, the payload stays): every copy of one session has it (``None``: no session)."""
        if not self.value:
            return None
        payload = self.value.rsplit(":", 2)[0] if self.value.count(":") >= 2 else self.value
        return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()


def read_session(header: str) -> SessionRead:
    """The session of a raw ``Cookie`` header as Label Studio reads it, or a refusal when it names ``sessionid``
    more than once (two readers could keep different ones)."""
    raws = []
    for chunk in header.split(";"):
        name, value = chunk.split("=", 1) if "=" in chunk else ("", chunk)
        if name.strip() == SESSION_COOKIE:
            raws.append(value.strip())
    if len(raws) > 1:
        return SessionRead(refusal=f"the Cookie header names {SESSION_COOKIE} {len(raws)} times")
    session = parse_cookie(header).get(SESSION_COOKIE)
    if not raws or not session:
        return SessionRead()
    return SessionRead(value=session, raw=raws[0])
