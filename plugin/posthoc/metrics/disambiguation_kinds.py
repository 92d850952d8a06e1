"""The kinds of a disambiguation error (ELEVANT's ``label_disambiguation_errors``), and the knowledge base they read.

ELEVANT (``ad-freiburg/elevant``, ``src/elevant/evaluation/errors.py``) labels a disambiguation error, in this
order: ``demonym`` (``is_demonym``: the mention is a demonym and the GT entity a location, ethnicity or languoid),
``metonymy`` (``is_metonymy_error``: the mention's most popular candidate is a location, the GT entity none of
location, person, ethnicity, fictional character, the prediction a location), ``partial_name``
(``is_partial_name``: the GT entity's name has a space and holds the shorter mention), ``rare``
(``is_rare_case``: the most popular candidate is not the GT entity, and the prediction is it), else ``other``.
Every kind but ``partial_name`` needs a knowledge base (:class:`CategoryKB`); without one such an error is
``not_classified``. Used by :mod:`posthoc.metrics.strict_categories` (issue 45).
"""

from __future__ import annotations

import re
from typing import Final, Protocol

import numpy as np
import pandas as pd

from posthoc.arrays import Strings
from posthoc.links import NIL_PREFIX, title_of
from posthoc.metrics.tuple_codes import dense_codes

#: the kind of a disambiguation error whose two links are one article through the KB index's redirects (issue 42;
#: set by :mod:`posthoc.metrics.strict_categories` from the ``entity`` column, not by ELEVANT's chain)
REDIRECT_ONLY: Final = "redirect_only"
DISAMBIGUATION_KINDS: Final = ("demonym", "metonymy", "partial_name", "rare", "other", "not_classified", REDIRECT_ONLY)
#: ELEVANT's types (``settings.TYPE_*_QID``) as a :class:`CategoryKB` names them.
DEMONYM_TYPES: Final = frozenset({"location", "ethnicity", "languoid"})
NOT_METONYMY_TYPES: Final = frozenset({"location", "person", "ethnicity", "fictional_character"})
_QUALIFIER = re.compile(r"\s+\([^()]*\)$")


class CategoryKB(Protocol):
    """What the knowledge-base kinds of a disambiguation error read (ELEVANT's ``EntityDatabase``), by link.

    ``types``: the entity's types among ``location, person, ethnicity, languoid, fictional_character``;
    ``is_demonym``: the mention is a demonym; ``most_popular``: the canonical links most often linked from this
    mention text (ELEVANT's ``get_most_popular_candidate_for_hyperlink``), empty when none; ``name``: the entity's
    name, None to take it from the link.
    """

    def types(self, link: str) -> frozenset[str]: ...

    def is_demonym(self, surface: str) -> bool: ...

    def most_popular(self, surface: str) -> frozenset[str]: ...

    def name(self, link: str) -> str | None: ...


def non_named(surface: str) -> bool:
    """ELEVANT's ``is_non_named_entity``: the first alphabetic character is not upper-case, or there is none.

    Examples:
        >>> [non_named(text) for text in ["Paris", "the city", "3 Musketeers", "42", "東京", "e\\u0301cole", "Éire"]]
        [False, True, False, True, True, True, False]
    """
    for character in surface:
        if character.isalpha():
            return not character.isupper()
    return True


def entity_name(link: str) -> str:
    """The entity's name read off a canonical link: its title without a parenthesised qualifier ("" for NIL).

    Examples:
        >>> entity_name("https://en.wikipedia.org/wiki/Paris_(mythology)"), entity_name("nil:")
        ('Paris', '')
    """
    title = title_of(link)
    return "" if title is None else _QUALIFIER.sub("", title)



def disambiguation_kinds(surface: Strings, gt_link: Strings, system_link: Strings, *,
                         kb: CategoryKB | None = None) -> Strings:
    """The kind of each disambiguation error (ELEVANT's ``label_disambiguation_errors``; module docstring).

    Examples:
        "Obama" linked elsewhere where GT says Barack Obama: a partial name; "Paris" where GT says Paris Hilton is
        one too; "Jordan" is not classified without a knowledge base.

        >>> wiki = "https://en.wikipedia.org/wiki/"
        >>> disambiguation_kinds(np.array(["Obama", "Paris", "Jordan"]),
        ...                      np.array([wiki + "Barack_Obama", wiki + "Paris_Hilton", wiki + "Jordan"]),
        ...                      np.array([wiki + "Obama,_Fukui", wiki + "Paris", wiki + "Michael_Jordan"])).tolist()
        ['partial_name', 'partial_name', 'not_classified']
    """
    n = len(surface)
    if n == 0:
        return np.zeros(0, dtype=object)
    surface = np.asarray(surface, dtype=object)
    gt_link, system_link = np.asarray(gt_link, dtype=object), np.asarray(system_link, dtype=object)
    surface_code, surfaces = pd.factorize(surface)
    link_code, links = pd.factorize(gt_link)
    # per distinct link: its entity's name, and whether it is a known (non-NIL) entity; per distinct pair: the test
    names = [(kb.name(str(link)) if kb is not None else None) or entity_name(str(link)) for link in links]
    known_link = np.asarray([bool(link) and not str(link).startswith(NIL_PREFIX) for link in links], dtype=bool)
    pair, first = dense_codes(surface_code, link_code)
    partial_pair = np.fromiter(
        (known_link[link] and " " in names[link] and len(str(surfaces[text])) < len(names[link])
         and str(surfaces[text]) in names[link] for text, link in zip(surface_code[first], link_code[first],
                                                                        strict=True)),
        dtype=bool, count=len(first))
    partial, known = partial_pair[pair], known_link[link_code]
    if kb is None:
        return np.where(partial, "partial_name", "not_classified").astype(object)
    kinds = np.empty(n, dtype=object)
    for i in range(n):  # only the disambiguation errors, and a KB lookup each: no vector form
        kinds[i] = _kb_kind(str(surface[i]), str(gt_link[i]), str(system_link[i]), bool(known[i]),
                            bool(partial[i]), kb)
    return kinds


def _kb_kind(surface: str, gt: str, predicted: str, known: bool, partial: bool, kb: CategoryKB) -> str:
    """ELEVANT's chain for one disambiguation error: demonym, metonymy, partial name, rare, other."""
    gt_types = kb.types(gt) if known else frozenset()
    if kb.is_demonym(surface) and gt_types & DEMONYM_TYPES:
        return "demonym"
    popular = kb.most_popular(surface)
    if known and not gt_types & NOT_METONYMY_TYPES and popular and \
            any("location" in kb.types(candidate) for candidate in popular) and "location" in kb.types(predicted):
        return "metonymy"
    if partial:
        return "partial_name"
    if popular and gt not in popular and predicted in popular:
        return "rare"
    return "other"
