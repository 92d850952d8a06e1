"""Hostile strings and the check every HTML output of the project must pass.

:func:`assert_safe_html` parses a document with the standard library's HTML parser (as a browser
tokenises it) and fails on: any ``<script`` in the source, any element that runs code or loads a
document (``script``, ``iframe``, ``object``, ``embed``, ``frame``, ``base``, ``form``, ``svg``,
``math``, ``link``, ``meta`` with ``http-equiv``), any ``on*`` event attribute, a ``style``
attribute that loads anything, any ``href`` that is not ``http://`` / ``https://`` (or a ``#fragment`` naming an ``id``
of the same page, the table of contents), any ``src`` that is not an embedded PNG on an ``<img>``,
and an ``<a target=...>`` without ``rel="noopener"``.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

#: Strings an attacker controls in a dataset, an export or a CSV: tags, attribute breakouts, URL schemes.
HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "\x01\tjavascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "//evil.example",
    "vbscript:msgbox(1)",
    "</td></tr></table><script>alert(1)</script>",
    "<!-- --><script>alert(1)</script>",
)

#: URLs that must never become a clickable ``href``.
HOSTILE_URLS = (
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "\x01javascript:alert(1)",
    "\x00javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "javascript&colon;alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "//evil.example",
    "/relative/path",
    "file:///etc/passwd",
    "ftp://evil.example/x",
    "http:evil.example",
    "https:",
    "http://",
    "http://:80/",
    "ht\ttp://evil.example",
    "\x00http://evil.example",
    "http://evil.example/\x00x",
    "http://evil .example",
    '"><img src=x onerror=alert(1)>',
)

_ACTIVE_TAGS = frozenset({"script", "iframe", "object", "embed", "frame", "frameset", "base", "form", "svg", "math",
                          "link", "applet", "template", "noscript"})


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    handle_startendtag = handle_starttag


def parse_tags(document: str) -> list[tuple[str, dict[str, str]]]:
    """Every start tag of ``document`` as ``(name, attributes)`` (attribute values unescaped)."""
    collector = _Collector()
    collector.feed(document)
    collector.close()
    return collector.tags


def hrefs(document: str) -> list[str]:
    """Every ``href`` value of ``document``, unescaped as a browser reads it."""
    return [attrs["href"] for _, attrs in parse_tags(document) if "href" in attrs]


def assert_safe_html(document: str) -> None:
    """Fail on anything in ``document`` that could run code or leave the page by a non-http(s) link."""
    assert "<script" not in document.lower(), "unescaped <script"
    tags = parse_tags(document)
    ids = {attrs["id"] for _, attrs in tags if "id" in attrs}
    for tag, attrs in tags:
        assert tag not in _ACTIVE_TAGS, f"active element <{tag}>"
        if tag == "meta":
            assert "http-equiv" not in attrs, "meta http-equiv"
        for name, value in attrs.items():
            assert not name.startswith("on"), f"event attribute {name}={value!r} on <{tag}>"
            assert name not in ("formaction", "srcdoc", "xlink:href"), f"attribute {name} on <{tag}>"
            if name == "style":
                assert not any(word in value.lower() for word in ("url(", "expression", "javascript", "@import")), value
            if name == "href":
                if value.startswith("#"):
                    assert value[1:] in ids, f"fragment link {value!r} names no id of the page"
                elif value.startswith("explorer.html"):  # the study explorer beside the report: a cell, quoted
                    assert re.fullmatch(r"explorer\.html#cell=[A-Za-z0-9%._~-]+", value), f"explorer link {value!r}"
                else:
                    assert value.startswith(("http://", "https://")), f"href {value!r} is not http(s)"
                    assert value == value.strip() and not any(ord(ch) < 32 or ch.isspace() for ch in value), value
            if name == "src":
                assert tag == "img" and value.startswith("data:image/png;base64,"), f"src {value[:40]!r} on <{tag}>"
        if "target" in attrs:
            assert "noopener" in attrs.get("rel", "").split(), f"<{tag} target> without rel=noopener"


def shown(value: str) -> str:
    """How ``value`` appears in escaped HTML (to check a hostile string did reach the output)."""
    return html.escape(value, quote=True)
