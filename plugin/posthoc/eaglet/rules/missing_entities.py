"""Missing entities (paper 003 Sect. 3.4 "Missing Entity" and Sect. 4.2, the completion module;
Rule 5c): annotations that a majority of the *other* systems agree on and the checked one lacks.

The votes are the mention rows of every system other than the checked one (the checked one is
usually ``GT``; with a verification union as the checked system the ground truth votes too).
``match="span"`` (default) counts systems that marked the same span, whatever the link;
``match="span_link"`` counts systems that marked the same span with the same link. A candidate is
proposed when at least ``min_votes`` systems agree (default: a strict majority of the systems
present, ``n // 2 + 1``; the paper used 5 of 10) and no annotation of the checked system
intersects it (a span that intersects one is a boundary question for the reviewer, not a missing
entity). Proposal: ``insert`` with the link most of the agreeing systems gave (ties: the smallest);
``detail`` names the systems.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import ClassVar

from posthoc.eaglet.rules.base import CheckContext, Flag
from posthoc.errors import PosthocInputError


@dataclass(frozen=True)
class MissingEntitiesRule:
    """Propose spans most other systems marked and the checked system did not (majority vote)."""

    enabled: bool = True
    match: str = "span"
    min_votes: int | None = None
    name: str = "missing_entity"
    order: ClassVar[int] = 70
    flag_rules: ClassVar[tuple[str, ...]] = ("missing_entity",)
    pipeline_options: ClassVar[tuple[str, ...]] = ("match", "min_votes")

    def run(self, context: CheckContext) -> list[Flag]:
        if self.match not in ("span", "span_link"):
            raise PosthocInputError(f"missing entities: match must be span or span_link, not {self.match!r}")
        others = context.others
        if others.empty:
            return []
        systems = sorted(set(others["system"].astype(str)))
        needed = self.min_votes if self.min_votes is not None else len(systems) // 2 + 1
        votes: dict[tuple[str, str, int, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for dataset, doc_id, system, start, end, link in others[
                ["dataset", "doc_id", "system", "start", "end", "link"]].itertuples(index=False):
            votes[(str(dataset), str(doc_id), int(start), int(end))][str(link)].add(str(system))
        flags = []
        for (dataset, doc_id, start, end), by_link in sorted(votes.items()):
            if self.match == "span":
                voters = set().union(*by_link.values())
                link_votes = Counter({link: len(s) for link, s in by_link.items()})
                best = max(sorted(link_votes), key=lambda link: link_votes[link])
            else:
                best = max(sorted(by_link), key=lambda link: len(by_link[link]))
                voters = by_link[best]
            if len(voters) < needed:
                continue
            annotations = context.annotations.get((dataset, doc_id), [])
            if any(a.start < end and start < a.end for a in annotations):
                continue
            text = context.texts.get((dataset, doc_id))
            if text is None or end > len(text):
                continue
            flags.append(Flag(dataset, doc_id, start, end, text[start:end], best, self.name, "insert",
                              context.system, partner_link=best,
                              detail=f"{len(voters)} of {len(systems)} systems: {', '.join(sorted(voters))}; proposal"))
        return flags
