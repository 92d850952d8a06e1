"""Positioning error (PE, paper 003 Sect. 3.4; Rules 2 and 4a): a span starts or ends inside a word.

Inside a word means a word character (letter, digit or combining mark, see
:mod:`posthoc.eaglet.words`) on both sides of the boundary: the "foot" of "football" is one;
``e`` + U+0301 cut after the ``e`` is one too. Suggestion ``delete`` (Eaglet's ``Deleted``), with
the span widened to whole words in ``detail`` for the reviewer who prefers to modify it.
"""

from __future__ import annotations

from dataclasses import dataclass

from posthoc.eaglet.flags import Flag
from posthoc.eaglet.rules.base import CheckContext
from posthoc.eaglet.words import enclosing_word_span, inside_word


@dataclass(frozen=True)
class PositioningRule:
    """Flag annotations whose start or end falls inside a word."""

    enabled: bool = True
    name: str = "positioning"

    def run(self, context: CheckContext) -> list[Flag]:
        flags = []
        for key, items in context.annotations.items():
            text = context.texts[key]
            for a in items:
                cut_start, cut_end = inside_word(text, a.start), inside_word(text, a.end)
                if not (cut_start or cut_end):
                    continue
                where = " and ".join(s for s, c in (("starts", cut_start), ("ends", cut_end)) if c)
                word_start, word_end = enclosing_word_span(text, a.start, a.end)
                detail = f"{where} inside a word; whole words: [{word_start},{word_end}) {text[word_start:word_end]!r}"
                flags.append(context.flag(a, self.name, "delete", detail=detail))
        return flags
