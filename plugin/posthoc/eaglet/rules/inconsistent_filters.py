"""What inconsistent marking leaves out by default, beyond the paper's module (paper 003, Sect. 3.2).

Two kinds, each with the reason a reviewer would give (issue 17, measured on labelled samples):

- :func:`not_a_name`, on a surface form itself (``common_words=False``): a form with no letter (a
  number or a year: "64" in "Round of 64", "1986" in "11 July 1986"; a date is combined marking's
  business), a form whose letters are all lower case (a common noun: "rivals", "division"; whether a
  concept is an entity depends on the gold standard's type set, Rule 3, and corpora of Wikipedia
  anchors link a concept at its first use only, so an unmarked repeat is their convention, not an
  inconsistency), a month or weekday name alone (part of a date, the more specific entity, as the
  paper's own "December 2012"), and a one-word adjective ("Dutch", "Japanese": the lexicon of
  TextBlob's Brill tagger tags the capitalised word ``JJ``; a nationality adjective mentions a country
  only under some type sets, and its link is rarely the most precise entity, Rule 4(b)i).
- :func:`part_of_more_specific`, on the place of a match in the text: the match is a state,
  province or country right after a place name and a comma ("Pasadena, California": the pair is one
  place, Sect. 5.2 and Rule 4(b)i's dbr:Portland,_Oregon), unless that name is itself a region (a
  list: "France, Germany"); or the match is followed by a currency unit or a security ("U.S. dollar",
  "U.S.-dlr", "Treasury notes", "Federal funds": the compound names the currency or the instrument,
  the more specific entity). These are ``inside_names=False``'s cases beside a longer capitalised name.

Characters without case (CJK) are neither lower nor upper case, so "東京" stays a name.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Final

from posthoc.eaglet.places import region_of

#: Month and weekday names: alone they are part of a date or a generic time.
MONTHS_AND_DAYS: Final = frozenset(str.split(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday"))
#: Currency units and securities that, after a name, make the compound a more specific entity.
CURRENCIES_AND_SECURITIES: Final = frozenset(str.split(
    "dollar dollars dlr dlrs yen franc francs pound pounds sterling peso pesos lira lire rupee rupees euro euros "
    "yuan renminbi rouble roubles ruble rubles krona kronor krone kroner shekel shekels dinar dinars riyal riyals "
    "ringgit baht rupiah notes bonds bills securities funds"))


@lru_cache(maxsize=1)
def adjectives() -> frozenset[str]:
    """Capitalised words the Brill lexicon shipped with PyPI ``textblob`` tags ``JJ`` ("Dutch").

    The lexicon file is read directly (no import of textblob or nltk); without textblob the set is
    empty and no form is left out as an adjective.
    """
    spec = importlib.util.find_spec("textblob")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = Path(next(iter(spec.submodule_search_locations))) / "en" / "en-lexicon.txt"
    if not path.is_file():
        return frozenset()
    found = set()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            word, _, tag = line.rstrip("\n").partition(" ")
            if tag == "JJ" and word[:1].isupper():
                found.add(word)
    return frozenset(found)


def not_a_name(surface: str, words: list[str]) -> str | None:
    """Why ``surface`` (its tokens ``words``) is not proposed as a name, or None (module docstring)."""
    if not any(c.isalpha() for c in surface):
        return "a number"
    if any(c.islower() for c in surface) and not any(c.isupper() for c in surface):
        return "a lower-case word"
    if len(words) == 1:
        if words[0].casefold() in MONTHS_AND_DAYS:
            return "a month or weekday"
        if words[0] in adjectives():
            return "an adjective"
    return None


def part_of_more_specific(text: str, toks: list[tuple[int, int, str]], i: int, j: int,
                          previous_name: tuple[int, int] | None) -> str | None:
    """Why the match ``toks[i:j]`` is part of a more specific entity's mention, or None.

    ``previous_name``: the token range of the capitalised sequence that ends two tokens before the
    match (before a comma), if any.
    """
    surface = text[toks[i][0]:toks[j - 1][1]]
    if previous_name is not None and i >= 2 and toks[i - 1][2] == "," and region_of(surface):
        left = text[toks[previous_name[0]][0]:toks[previous_name[1] - 1][1]]
        if not region_of(left):
            return "a region after a place and a comma"
    if j < len(toks):
        after = j
        if toks[j][2] == "-" and toks[j][0] == toks[j - 1][1] and j + 1 < len(toks) and \
                toks[j + 1][0] == toks[j][1]:
            after = j + 1
        gap = text[toks[after - 1][1]:toks[after][0]]
        if gap.strip() == "" and "\n" not in gap and toks[after][2].casefold() in CURRENCIES_AND_SECURITIES:
            return "part of a currency or security name"
    return None
