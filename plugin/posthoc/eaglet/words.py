"""Words as paper 003 defines them (Sect. 3.2, Rule 2), Unicode-aware.

A *word character* is a letter or digit (``str.isalnum``) or a combining mark (categories Mn, Mc,
Me), so ``e`` + U+0301 is one word and a span that ends between them ends inside a word. A *token*
is a maximal run of word characters, or any other single non-space character (punctuation, an
emoji code point). Offsets are code points.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    marks = "".join(f"\\U{a:08x}-\\U{b:08x}" if a != b else f"\\U{a:08x}" for a, b in ranges)
    # A word: a letter/digit (not underscore), then letters/digits/marks; or a mark run on its own.
    word = f"(?:[^\\W_]|[{marks}])+"
    return re.compile(f"{word}|[^\\s]")


def is_word_char(char: str) -> bool:
    """True for a letter, a digit or a combining mark."""
    return char.isalnum() or unicodedata.category(char) in ("Mn", "Mc", "Me")


def tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` for every token of ``text`` (see the module docstring)."""
    return [(m.start(), m.end(), m.group()) for m in _token_pattern().finditer(text)]


def inside_word(text: str, offset: int) -> bool:
    """True if ``offset`` (a boundary between two code points) falls inside a word."""
    return 0 < offset < len(text) and is_word_char(text[offset - 1]) and is_word_char(text[offset])


def enclosing_word_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` widened to whole words (Rule 2)."""
    while inside_word(text, start):
        start -= 1
    while inside_word(text, end):
        end += 1
    return start, end
