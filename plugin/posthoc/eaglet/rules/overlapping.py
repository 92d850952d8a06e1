"""Overlapping error (OE, paper 003 Sect. 3.4; Rule 5b): two annotations of a document intersect.

Our rule is strict: spans ``[s1, e1)`` and ``[s2, e2)`` overlap when ``s1 < e2 and s2 < e1`` (they
share at least one code point). Eaglet's own code also counts *touching* spans (``e1 >= s2``);
``touching=True`` reproduces that. Two annotations on the *same* span (one phrase with several
links) are not an overlap of markings and are not flagged. Both annotations of a pair are flagged
``check``, each naming the other as partner (Eaglet names the partner on one of them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from posthoc.eaglet.rules.base import Annotation, CheckContext, Flag


@dataclass(frozen=True)
class OverlappingRule:
    """Flag every pair of intersecting annotations in a document (sweep over sorted spans)."""

    enabled: bool = True
    touching: bool = False
    name: str = "overlapping"
    order: ClassVar[int] = 30
    flag_rules: ClassVar[tuple[str, ...]] = ("overlapping",)
    pipeline_options: ClassVar[tuple[str, ...]] = ("touching",)

    def run(self, context: CheckContext) -> list[Flag]:
        flags = []
        for items in context.annotations.values():
            active: list[Annotation] = []
            for a in items:  # sorted by start
                active = [b for b in active if (b.end >= a.start if self.touching else b.end > a.start)]
                for b in active:
                    if (b.start, b.end) == (a.start, a.end):
                        continue
                    for x, y in ((b, a), (a, b)):
                        flags.append(context.flag(x, self.name, "check", partner_start=y.start, partner_end=y.end,
                                                  partner_link=y.link,
                                                  detail=f"overlaps {y.surface!r} [{y.start},{y.end})"))
                active.append(a)
        return flags
