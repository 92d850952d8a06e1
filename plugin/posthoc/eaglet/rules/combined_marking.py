"""Combined marking (CM, paper 003 Sect. 3.4; Rule 4(b)i): consecutive annotations that, combined,
name one more specific entity ("December" + "2012" -> "December 2012").

What the paper's module checks (Sect. 4.3 item 4): "consecutive annotations that are separated by a
white space character"; every such pair is merged. What this rule checks, beyond and short of that:

- **Separation.** Neighbours join when only white space lies between them, without a line break
  (``cross_line_breaks=False``: the paper's Sect. 5.2 false alarm "Steve Pagani VIENNA", a by-line
  then a dateline). Touching annotations (nothing between them, e.g. "Morgan" + "MoodyMoody's") are
  never joined by default (``touching=True`` joins them, as Eaglet's code does). A comma (``","``
  then optional spaces, "Grosse Pointe Park, Mich" and "Salem,Ore") separates only a place from its
  state or country (below).
- **Evidence** (``require_evidence=True``, beyond the paper): the paper asks that the combined words
  "can be annotated to a more specific entity"; a merge is proposed only when there is evidence
  that the joined span names one entity, and the evidence is the flag's reason:

  1. ``annotated``: the joined surface (same tokens) is annotated as one mention somewhere in the
     loaded corpora or systems' outputs (any dataset, any system);
  2. ``kb``: the joined surface is a page or a redirect of the KB snapshot (``kb``, when given);
  3. ``date``: a month name with a day and/or a year ("December 2012", "March 3", "3 March 1987");
  4. ``place``: a place followed by its state or country (Sect. 5.2's extension): the right part
     names a U.S. state, Canadian province, Australian state or country (:mod:`posthoc.eaglet.places`,
     by surface or link), the left part names none, and if the left part's link is a
     "City,_State" title its state is that one.

  Parts that all carry the same link are not joined (their union names no more specific entity:
  "International Business Machines Corp" + "IBM", the ticker). Without evidence nothing is
  proposed: employer + person ("Securities and Exchange Commission John Shad"), possessive + name,
  two names split by a lost full stop are left alone. This misses true
  combined markings whose union appears nowhere and is no date or place (short of the paper);
  ``require_evidence=False`` proposes every whitespace-separated chain (the paper's module).

A chain of joinable neighbours is split greedily into the longest runs, from the left, whose union
has evidence. Every part of a run is flagged ``check`` (Eaglet's ``NeedToPair``) with its neighbour as
partner, and the union is proposed as an ``insert`` (Eaglet "generates a larger, combined
annotation"), linked when the evidence gives one link (the marks elsewhere agree on it, or the KB
resolves it), else without a link for the reviewer to choose.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import ClassVar, Final

from posthoc.eaglet.kb import KnowledgeBase
from posthoc.eaglet.places import region_of, region_of_title, title_suffix_region
from posthoc.eaglet.rules.base import Annotation, CheckContext, Flag
from posthoc.eaglet.words import tokens
from posthoc.links import normalise_link

_LINE_BREAKS: Final = "\n\r\u2028\u2029\x0b\x0c\x85"
_MONTH: Final = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
                 r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY: Final = r"(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR: Final = r"(?:1[0-9]{3}|20[0-9]{2})"
DATE: Final = re.compile(rf"^(?:{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_DAY}\s+{_MONTH}(?:,?\s+{_YEAR})?|"
                         rf"{_MONTH},?\s+{_YEAR})$")
_COMMA: Final = re.compile(r"^,[^\S\n\r\u2028\u2029\x0b\x0c\x85]*$")


def _key(surface: str) -> tuple[str, ...]:
    return tuple(t for _, _, t in tokens(surface))


@dataclass(frozen=True)
class _Evidence:
    kind: str
    reason: str
    link: str = ""


@dataclass(frozen=True)
class CombinedMarkingRule:
    """Propose the union of neighbouring annotations that names one entity (see the module docstring)."""

    enabled: bool = True
    cross_line_breaks: bool = False
    touching: bool = False
    require_evidence: bool = True
    kb: KnowledgeBase | None = None
    name: str = "combined_marking"
    order: ClassVar[int] = 40
    flag_rules: ClassVar[tuple[str, ...]] = ("combined_marking",)
    pipeline_options: ClassVar[tuple[str, ...]] = ("cross_line_breaks", "kb")

    def _gap(self, text: str, left: Annotation, right: Annotation) -> str:
        """``space``, ``comma`` or "" (no join) for the text between two neighbours."""
        if right.start < left.end:
            return ""
        gap = text[left.end:right.start]
        if not gap:
            return "space" if self.touching else ""
        if not self.cross_line_breaks and any(c in gap for c in _LINE_BREAKS):
            return ""
        if not gap.strip():
            return "space"
        return "comma" if _COMMA.match(gap) else ""

    def run(self, context: CheckContext) -> list[Flag]:
        runs: list[tuple[str, list[Annotation], list[str]]] = []
        for key, items in context.annotations.items():
            text = context.texts[key]
            # one annotation per span (several links on one span are one marking)
            spans = sorted({(a.start, a.end): a for a in items}.values(), key=lambda a: (a.start, a.end))
            chain: list[Annotation] = []
            gaps: list[str] = []
            for a in [*spans, None]:
                gap = self._gap(text, chain[-1], a) if a is not None and chain else ""
                if gap:
                    chain.append(a)  # type: ignore[arg-type]
                    gaps.append(gap)
                    continue
                if len(chain) > 1:
                    runs.append((text, chain, gaps))
                chain, gaps = ([] if a is None else [a]), []
        if not runs:
            return []
        marked = self._marked_surfaces(context) if self.require_evidence else {}
        resolved = self._kb_answers(runs) if self.require_evidence else {}
        flags: list[Flag] = []
        for text, chain, gaps in runs:
            i = 0
            while i < len(chain) - 1:
                for j in range(len(chain) - 1, i, -1):  # longest run from i first
                    evidence = self._evidence(text, chain[i:j + 1], gaps[i:j], marked, resolved)
                    if evidence is not None:
                        flags.extend(self._flag_run(context, text, chain[i:j + 1], evidence))
                        i = j
                        break
                i += 1
        return flags

    # ---- evidence ----------------------------------------------------------------------------------------

    @staticmethod
    def _marked_surfaces(context: CheckContext) -> dict[tuple[str, ...], Counter[str]]:
        """Token sequence of every mention loaded (all datasets, all systems) -> links it was marked with."""
        marked: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for items in context.annotations.values():
            for a in items:
                marked[_key(a.surface)][a.link] += 1
        if not context.others.empty:
            for surface, link in context.others[["surface", "link"]].itertuples(index=False):
                marked[_key(str(surface))]["" if link is None else str(link)] += 1
        return marked

    def _kb_answers(self, runs: list[tuple[str, list[Annotation], list[str]]]) -> dict[str, str]:
        """Joined surface -> the link it resolves to in the KB (pages and redirects only)."""
        if self.kb is None:
            return {}
        links: dict[str, str] = {}
        for text, chain, gaps in runs:
            for i in range(len(chain)):
                for j in range(i + 1, len(chain)):
                    if "comma" not in gaps[i:j]:
                        surface = text[chain[i].start:chain[j].end]
                        links[surface] = normalise_link(" ".join(surface.split())).link
        statuses = self.kb.lookup(sorted(set(links.values())))
        answers = {}
        for surface, link in links.items():
            status = statuses.get(link)
            if status is not None and status.kind in ("page", "redirect"):
                answers[surface] = status.target if status.kind == "redirect" and status.target else link
        return answers

    def _evidence(self, text: str, parts: list[Annotation], gaps: list[str],
                  marked: dict[tuple[str, ...], Counter[str]], resolved: dict[str, str]) -> _Evidence | None:
        surface = text[parts[0].start:parts[-1].end]
        if not self.require_evidence:
            return None if "comma" in gaps else _Evidence("none", "separated by white space only")
        if len({p.link for p in parts}) == 1 and parts[0].link:
            return None  # the parts already name one entity: their union names no more specific one
        links = marked.get(_key(surface))
        if links:
            count = sum(links.values())
            agreed = next(iter(links)) if len(links) == 1 else ""
            return _Evidence("annotated", f"{surface!r} is annotated as one mention {count} time(s) in the "
                             "corpora loaded" + ("" if agreed or len(links) < 2 else
                                                 f" (with {len(links)} different links)"), agreed)
        if "comma" not in gaps and surface in resolved:
            return _Evidence("kb", f"{surface!r} resolves in the KB to {resolved[surface]}", resolved[surface])
        if "comma" not in gaps and DATE.match(" ".join(surface.split())):
            return _Evidence("date", f"{surface!r} is a date")
        if len(parts) == 2:
            left, right = parts
            region = region_of(right.surface) or region_of_title(right.link)
            if region and not (region_of(left.surface) or region_of_title(left.link)):
                suffix = title_suffix_region(left.link)
                if suffix is None or suffix == region:
                    return _Evidence("place", f"{left.surface!r} is a place followed by its state or country "
                                     f"{right.surface!r} ({region})")
        return None

    def _flag_run(self, context: CheckContext, text: str, run: list[Annotation], evidence: _Evidence) -> list[Flag]:
        flags = []
        start, end = run[0].start, run[-1].end
        for i, part in enumerate(run):
            partner = run[i - 1] if i else run[1]
            flags.append(context.flag(part, self.name, "check", partner_start=partner.start,
                                      partner_end=partner.end, partner_link=partner.link,
                                      detail=f"part of {text[start:end]!r} [{start},{end}); may need pairing: "
                                      + evidence.reason))
        first = run[0]
        choose = ("; choose the most precise entity" if not evidence.link else
                  f"; linked as {'there' if evidence.kind == 'annotated' else 'the KB resolves it'}: {evidence.link}")
        flags.append(Flag(first.dataset, first.doc_id, start, end, text[start:end], evidence.link, self.name,
                          "insert", context.system, partner_start=first.start, partner_end=first.end,
                          partner_link=first.link,
                          detail="combined annotation of " + " + ".join(repr(p.surface) for p in run)
                          + f": {evidence.reason}" + choose))
        return flags
