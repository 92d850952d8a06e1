"""Positioning error (PE, paper 003 Sect. 3.4; Rules 2 and 4a): a span does not start and end at word
boundaries.

Rule 2: a word starts at the beginning of the document or after white space and ends at the end of
the document or "before a white space or punctuation character"; Rule 4a: an annotation is a
sequence of whole words. Two cases are flagged:

- **Inside a word** (the paper's module, Sect. 4.3 item 2): a word character (letter, digit or
  combining mark, :mod:`posthoc.eaglet.words`) on both sides of the start or the end: the "foot" of
  "football"; ``e`` + U+0301 cut after the ``e``.
- **Outside the words** (beyond Eaglet's module, which compares positions only): the span starts or
  ends with white space ("Merck and Co Inc ") or with punctuation that Rule 2 leaves outside a word
  (":func:`edge_problem`": "...(MITI),"). Kept inside a name, and not flagged: a full stop that ends
  an abbreviation ("U.S.", "Corp.", "Jr.": after a single letter or a word of :data:`ABBREVIATIONS`),
  a closing bracket or quote whose opening one is inside the span ("(MITI)"), an opening one whose
  closing one is inside, and a final "!" or "?" ("Yahoo!"). Symbols and emoji are not punctuation.

Suggestions: inside a word, ``delete`` (Eaglet's ``Deleted``), with the whole-word span in ``detail``
for the reviewer who prefers to modify it; outside the words, ``update-span`` to the trimmed span
(``partner_start``/``partner_end``, same link): accepting it trims the annotation rather than
deleting a right mention (``delete`` when nothing would be left).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import ClassVar, Final

from posthoc.eaglet.rules.base import CheckContext, Flag
from posthoc.eaglet.words import enclosing_word_span, inside_word

#: Words that end with a full stop as abbreviations (compared case-insensitively, without the stop).
ABBREVIATIONS: Final = frozenset(str.split(
    "inc corp co cos ltd llc plc bhd cie jr sr bros st mt ft dr mr mrs ms messrs prof gen col lt sgt capt cmdr "
    "adm gov sen rep pres hon rev no nos vol dept univ assn ave blvd rd jan feb mar apr jun jul aug sep sept "
    "oct nov dec ala ariz ark calif colo conn del fla ga ill ind kan kans ky la md mass mich minn miss mo mont "
    "neb nev okla ore pa penn tenn tex va vt wash wis wyo ont que alta sask nfld etc intl natl mfg"))
_OPENERS: Final = {"(": ")", "[": "]", "{": "}", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb",
                   '"': '"', "'": "'"}
_CLOSERS: Final = {close: open_ for open_, close in _OPENERS.items()}
_LAST_WORD: Final = re.compile(r"(\w+)\.$")


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")


def _abbreviation_stop(surface: str) -> bool:
    match = _LAST_WORD.search(surface)
    return match is not None and (len(match.group(1)) == 1 or match.group(1).casefold() in ABBREVIATIONS)


def edge_problem(surface: str) -> tuple[str, int, int]:
    """``(problem, cut_left, cut_right)`` for a span that starts or ends outside the words (module
    docstring); ``problem`` is "" for a clean span, the cuts are how many code points to trim."""
    left = len(surface) - len(surface.lstrip())
    right = len(surface) - len(surface.rstrip())
    problems = []
    if left:
        problems.append("starts with white space")
    if right:
        problems.append("ends with white space")
    core = surface.strip()
    while core and _is_punctuation(core[0]) and not (core[0] in _OPENERS and _OPENERS[core[0]] in core[1:]):
        problems.append(f"starts with {core[0]!r}")
        left += 1
        core = core[1:]
        left += len(core) - len(core.lstrip())
        core = core.lstrip()
    while core and _is_punctuation(core[-1]):
        char = core[-1]
        if char in _CLOSERS and _CLOSERS[char] in core[:-1]:
            break
        if char in "!?" or (char == "." and _abbreviation_stop(core)):
            break
        problems.append(f"ends with {char!r}")
        right += 1
        core = core[:-1]
        right += len(core) - len(core.rstrip())
        core = core.rstrip()
    return "; ".join(dict.fromkeys(problems)), left, right


@dataclass(frozen=True)
class PositioningRule:
    """Flag annotations that start or end inside a word or outside the words (module docstring)."""

    enabled: bool = True
    edges: bool = True
    name: str = "positioning"
    order: ClassVar[int] = 20
    flag_rules: ClassVar[tuple[str, ...]] = ("positioning",)
    pipeline_options: ClassVar[tuple[str, ...]] = ()

    def run(self, context: CheckContext) -> list[Flag]:
        flags = []
        for key, items in context.annotations.items():
            text = context.texts[key]
            for a in items:
                cut_start, cut_end = inside_word(text, a.start), inside_word(text, a.end)
                if cut_start or cut_end:
                    where = " and ".join(s for s, c in (("starts", cut_start), ("ends", cut_end)) if c)
                    word_start, word_end = enclosing_word_span(text, a.start, a.end)
                    detail = (f"{where} inside a word (Rule 2); whole words: [{word_start},{word_end}) "
                              f"{text[word_start:word_end]!r}")
                    flags.append(context.flag(a, self.name, "delete", detail=detail))
                    continue
                problem, left, right = edge_problem(a.surface) if self.edges else ("", 0, 0)
                if not problem:
                    continue
                start, end = a.start + left, a.end - right
                detail = f"{problem}, which Rule 2 leaves outside a word"
                if start < end:
                    flags.append(context.flag(a, self.name, "update-span", partner_start=start, partner_end=end,
                                              partner_link=a.link,
                                              detail=f"{detail}; trimmed: [{start},{end}) {text[start:end]!r}"))
                else:
                    flags.append(context.flag(a, self.name, "delete", detail=f"{detail}; nothing is left"))
        return flags
