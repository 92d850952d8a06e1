"""Combined marking (CM, paper 003 Sect. 3.4; Rule 4(b)i): consecutive annotations separated only by
whitespace that together may name a more precise entity ("December" + "2012" -> "December 2012").

A chain is a maximal run of annotations in which each next one starts after the previous one ends
with only whitespace between them (``cross_line_breaks=False``, the default, stops a chain at a line
break: the paper's Sect. 5.2 reports "Steve Pagani VIENNA", a by-line followed by a dateline, as a
false alarm; ``True`` is Eaglet's behaviour). Every part is flagged ``check`` (Eaglet's
``NeedToPair``) with its neighbour as partner, and the combined span is proposed as an ``insert``
without a link (the reviewer chooses the more precise entity), as Eaglet "generates a larger,
combined annotation".
"""

from __future__ import annotations

from dataclasses import dataclass

from posthoc.eaglet.flags import Flag
from posthoc.eaglet.rules.base import Annotation, CheckContext


@dataclass(frozen=True)
class CombinedMarkingRule:
    """Flag chains of whitespace-separated consecutive annotations and propose their union."""

    enabled: bool = True
    cross_line_breaks: bool = False
    name: str = "combined_marking"

    def _joins(self, text: str, left: Annotation, right: Annotation) -> bool:
        if right.start < left.end:
            return False
        gap = text[left.end:right.start]
        if gap.strip():
            return False
        return self.cross_line_breaks or not any(c in gap for c in "\n\r\u2028\u2029\x0b\x0c\x85")

    def run(self, context: CheckContext) -> list[Flag]:
        flags: list[Flag] = []
        for key, items in context.annotations.items():
            text = context.texts[key]
            # one annotation per span (several links on one span are one marking)
            spans = list({(a.start, a.end): a for a in items}.values())
            spans.sort(key=lambda a: (a.start, a.end))
            chain: list[Annotation] = []
            for a in [*spans, None]:
                if a is not None and chain and self._joins(text, chain[-1], a):
                    chain.append(a)
                    continue
                if len(chain) > 1:
                    flags.extend(self._flag_chain(context, text, chain))
                chain = [] if a is None else [a]
        return flags

    def _flag_chain(self, context: CheckContext, text: str, chain: list[Annotation]) -> list[Flag]:
        flags = []
        start, end = chain[0].start, chain[-1].end
        for i, part in enumerate(chain):
            partner = chain[i - 1] if i else chain[1]
            flags.append(context.flag(part, self.name, "check", partner_start=partner.start,
                                      partner_end=partner.end, partner_link=partner.link,
                                      detail=f"part of {text[start:end]!r} [{start},{end}); may need pairing"))
        first = chain[0]
        flags.append(Flag(first.dataset, first.doc_id, start, end, text[start:end], "", self.name, "insert",
                          context.system, partner_start=first.start, partner_end=first.end,
                          partner_link=first.link,
                          detail="combined annotation of " + " + ".join(repr(p.surface) for p in chain)
                          + "; choose the most precise entity"))
        return flags
