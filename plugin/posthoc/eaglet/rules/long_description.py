"""Long description error (LDE, paper 003 Sect. 3.4; Rule 4(b)ii): an annotation that holds a
relative clause or a whole description ("team that won Supporters' Shield in 2014") instead of a
name of the entity. Eaglet's module "checks for the Long Description Error by searching for a
relative clause inside an annotation" (Sect. 4.3) using a POS tagger.

Taggers (``tagger=``)
---------------------
``pattern``  TextBlob's ``PatternTagger`` (PyPI ``textblob``): the Brill-style lexicon and contextual
             rules of CLiPS Pattern, shipped inside the wheel, so nothing is downloaded at run time.
``rules``    a documented rule over word shapes, no dependency: ``who/whom/whose/which`` are
             WP/WDT, ``that`` is WDT, a closed list of auxiliaries and frequent irregular past forms
             plus lower-case words ending in ``-ed`` (longer than 4) are finite verbs (VBD), and a
             lower-case word ending in ``-s`` right after a relative pronoun is VBZ.
``auto``     ``pattern`` when textblob is installed, else ``rules`` (the flag's detail names it).

Decision (the same for every tagger, over Penn tags)
----------------------------------------------------
An annotation of at least ``min_tokens`` tokens is a long description if

1. a *lower-case* relative pronoun (``who, whom, whose, which, that``, or any token tagged
   WDT / WP / WP$) that is not the first token is followed within ``window`` tokens by a verb
   (VB* or MD) -- a relative clause; or
2. a lower-case personal pronoun (PRP: ``he, she, they, ...``) after the first token is followed
   within ``window`` tokens by a verb -- a reduced relative clause ("the company he founded", "the
   city where he was born").

A third rule, "any lower-case finite verb", was tried and dropped: it changed nothing on the
labelled cases and flagged names on the real corpora ("Rio Grande do Sul", "anterior cruciate
ligament", which the Brill lexicon tags as holding verbs).

Right after a relative pronoun, a lower-case word ending in ``-s`` counts as a verb whatever its tag
(out of context the Brill lexicon tags "flows", "borders" NNS).

Lower case keeps titles of works and names ("The Man Who Knew Too Much", "Who Framed Roger
Rabbit") out. Measured accuracy on the labelled cases in ``tests/eaglet/data/long_description_cases.tsv``
is reported in ``docs/eaglet.md`` and asserted by the tests. Suggestion: ``delete`` (Eaglet's ``Deleted``).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from posthoc.eaglet.rules.base import CheckContext, Flag
from posthoc.errors import PosthocInputError

Tagged = list[tuple[str, str]]
RELATIVE_PRONOUNS = frozenset({"who", "whom", "whose", "which", "that"})
_AUXILIARIES = {
    "is": "VBZ", "was": "VBD", "are": "VBP", "were": "VBD", "has": "VBZ", "had": "VBD", "have": "VBP",
    "does": "VBZ", "did": "VBD", "do": "VBP", "can": "MD", "could": "MD", "will": "MD", "would": "MD",
    "shall": "MD", "should": "MD", "may": "MD", "might": "MD", "must": "MD", "be": "VB", "been": "VBN",
}
_IRREGULAR_PAST = frozenset({
    "won", "lost", "led", "made", "became", "began", "wrote", "took", "gave", "went", "came", "saw", "found",
    "built", "ran", "held", "left", "met", "sang", "sold", "told", "thought", "brought", "bought", "fought",
    "taught", "kept", "lay", "grew", "drew", "knew", "flew", "rose", "fell", "stood", "spoke", "broke",
    "chose", "drove", "ate", "got", "hit", "put", "set", "shot", "split", "spent", "struck", "swore",
    "threw", "wore",
})
_PRONOUNS = frozenset({"i", "you", "he", "she", "it", "we", "they"})
_WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def _rules_tag(text: str) -> Tagged:
    words = _WORD.findall(text)
    tagged: Tagged = []
    for i, word in enumerate(words):
        lower = word.lower()
        previous = tagged[i - 1][0].lower() if i else ""
        if lower in ("who", "whom"):
            tag = "WP"
        elif lower == "whose":
            tag = "WP$"
        elif lower in ("which", "that"):
            tag = "WDT"
        elif lower in _AUXILIARIES:
            tag = _AUXILIARIES[lower]
        elif lower in _IRREGULAR_PAST or (len(lower) > 4 and lower.endswith("ed")):
            tag = "VBD"
        elif previous in RELATIVE_PRONOUNS and lower.endswith("s") and len(lower) > 2:
            tag = "VBZ"
        elif lower in _PRONOUNS:
            tag = "PRP"
        elif word[:1].isdigit():
            tag = "CD"
        elif word[:1].isupper():
            tag = "NNP"
        elif word.isalnum():
            tag = "NN"
        else:
            tag = word
        tagged.append((word, tag))
    return tagged


@lru_cache(maxsize=1)
def _pattern_tagger() -> Callable[[str], Tagged]:
    from textblob.en.taggers import PatternTagger

    tagger = PatternTagger()
    return lambda text: [(str(w), str(t)) for w, t in tagger.tag(text)]


def textblob_available() -> bool:
    """True when PyPI ``textblob`` (the ``pattern`` tagger) is installed."""
    return importlib.util.find_spec("textblob") is not None


def get_tagger(name: str) -> tuple[str, Callable[[str], Tagged]]:
    """``(resolved name, tag function)`` for ``pattern``, ``rules`` or ``auto``."""
    if name == "auto":
        name = "pattern" if textblob_available() else "rules"
    if name == "rules":
        return name, _rules_tag
    if name == "pattern":
        if not textblob_available():
            raise PosthocInputError("long description tagger 'pattern' needs the PyPI package textblob "
                                    "(pip install textblob); or choose tagger 'rules'")
        return name, _pattern_tagger()
    raise PosthocInputError(f"unknown long description tagger {name!r}; give pattern, rules or auto")


def is_long_description(tagged: Tagged, *, min_tokens: int = 3, window: int = 3) -> str:
    """The reason ``tagged`` is a long description ("" if it is not); see the module docstring."""
    words = [(w, t) for w, t in tagged if any(c.isalnum() for c in w)]
    if len(words) < min_tokens:
        return ""
    def verb(k: int) -> bool:
        word, tag = words[k]
        after_relative = words[k - 1][0] in RELATIVE_PRONOUNS and word.islower() and word.endswith("s")
        return tag.startswith("VB") or tag == "MD" or after_relative

    for i, (word, tag) in enumerate(words[1:], start=1):
        relative = word in RELATIVE_PRONOUNS or (tag in ("WDT", "WP", "WP$") and word.islower())
        following = range(i + 1, min(len(words), i + 1 + window))
        if relative and any(verb(k) for k in following):
            return f"relative clause at {word!r}"
        if tag == "PRP" and word.islower() and any(verb(k) for k in following):
            return f"reduced relative clause at {word!r}"
    return ""


@dataclass(frozen=True)
class LongDescriptionRule:
    """Flag annotations whose text is a relative clause or a clause, not a name."""

    enabled: bool = True
    tagger: str = "auto"
    min_tokens: int = 3
    window: int = 3
    name: str = "long_description"
    order: ClassVar[int] = 10
    flag_rules: ClassVar[tuple[str, ...]] = ("long_description",)
    pipeline_options: ClassVar[tuple[str, ...]] = ("tagger",)

    def run(self, context: CheckContext) -> list[Flag]:
        tagger_name, tag = get_tagger(self.tagger)
        cache: dict[str, str] = {}
        flags = []
        for items in context.annotations.values():
            for a in items:
                if a.surface not in cache:
                    cache[a.surface] = is_long_description(tag(a.surface), min_tokens=self.min_tokens,
                                                           window=self.window)
                reason = cache[a.surface]
                if reason:
                    flags.append(context.flag(a, self.name, "delete", detail=f"{reason} (tagger {tagger_name})"))
        return flags
