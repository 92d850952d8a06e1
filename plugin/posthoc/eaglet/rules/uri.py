"""URI errors (paper 003, Sect. 3.4; Rule 4b) in one module with three switches (Sect. 4.3 item 5).

``invalid_uri``         the annotation has no link (an empty ``link_original``), a malformed one
                        (white space or ``<>"{}|\\^``` inside a URI, a bare title with characters
                        MediaWiki forbids ``#<>[]|{}`` or control characters, a KB URI with an empty
                        title), or -- when the KB snapshot lists titles -- a title the KB does not
                        have (detail "not in the KB"). Explicit NIL markers (``NIL``, ``--NME--``,
                        ``notInWiki/X``) are emerging entities, valid. Suggestion ``check``.
``outdated_uri``        the KB says the title is a redirect: suggestion ``update-uri`` with the
                        redirect target (chains followed) as ``partner_link``.
``disambiguation_uri``  the KB says the title is a disambiguation page: suggestion ``check``; the
                        candidates the page lists (when known) are in ``detail``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from posthoc.eaglet.kb import KnowledgeBase
from posthoc.eaglet.rules.base import CheckContext, Flag
from posthoc.links import NIL_PREFIX

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_BAD_IN_URI = re.compile(r'[\s<>"{}|\\^`]')
_BAD_IN_TITLE = re.compile(r"[#<>\[\]|{}\x00-\x1f\x7f]")
_EMPTY_TITLE = re.compile(r"^https?://[^/]+/(?:wiki|resource|page)/?$", re.IGNORECASE)


def invalid_reason(original: str, link: str, is_nil: bool) -> str:
    """Why ``original`` is not a usable link ("" when it is)."""
    text = original.strip()
    if not text:
        return "empty URI"
    if is_nil:
        return ""
    if _SCHEME.match(text):
        if _BAD_IN_URI.search(text):
            return "malformed URI (white space or a character URIs do not allow)"
        if _EMPTY_TITLE.match(text) or link.endswith("/wiki/"):
            return "KB URI without a title"
        return ""
    if _BAD_IN_TITLE.search(text):
        return "malformed title (a character MediaWiki titles do not allow)"
    return ""


@dataclass(frozen=True)
class UriRule:
    """Invalid, outdated and disambiguation URIs; ``kb`` None checks only the form (invalid)."""

    kb: KnowledgeBase | None = None
    enabled: bool = True
    invalid: bool = True
    outdated: bool = True
    disambiguation: bool = True
    name: str = "uri"
    order: ClassVar[int] = 50
    flag_rules: ClassVar[tuple[str, ...]] = ("invalid_uri", "outdated_uri", "disambiguation_uri")
    pipeline_options: ClassVar[tuple[str, ...]] = ("kb",)

    def run(self, context: CheckContext) -> list[Flag]:
        flags = []
        annotations = [a for items in context.annotations.values() for a in items]
        statuses = {}
        if self.kb is not None:
            links = {a.link for a in annotations if a.link and not a.is_nil and not a.link.startswith(NIL_PREFIX)}
            statuses = self.kb.lookup(sorted(links))
        for a in annotations:
            reason = invalid_reason(a.link_original, a.link, a.is_nil)
            status = statuses.get(a.link)
            if self.invalid and reason:
                flags.append(context.flag(a, "invalid_uri", "check", detail=reason))
                continue
            if status is None:
                continue
            if self.invalid and status.kind == "missing":
                flags.append(context.flag(a, "invalid_uri", "check", detail=status.detail or "title not in the KB"))
            elif self.outdated and status.kind == "redirect":
                flags.append(context.flag(a, "outdated_uri", "update-uri", partner_link=status.target,
                                          detail=f"redirects to {status.target}"
                                                 + (f" ({status.detail})" if status.detail else "")))
            elif self.disambiguation and status.kind == "disambiguation":
                shown = ", ".join(status.candidates[:10]) + (" ..." if len(status.candidates) > 10 else "")
                flags.append(context.flag(a, "disambiguation_uri", "check",
                                          detail="disambiguation page" + (f"; candidates: {shown}" if shown else "")))
        return flags
