"""Inconsistent marking (IM, paper 003 Sect. 3.4 and 4.3 item 6; Rule 5c): a surface form marked in
one place and left unmarked elsewhere in the same dataset.

Algorithm, linear in corpus size
--------------------------------
1. Index: every annotation that no earlier rule flagged (``context.faulty``), as the paper says,
   keyed by its token sequence (:func:`posthoc.eaglet.words.tokens`, normalised by ``normalise``),
   per dataset, with the links it was marked with; plus, per first token, the set of key lengths.
2. One pass over each document's tokens: at each token not covered by an annotation, try the key
   lengths for that first token, longest first (at most the number of distinct lengths, bounded by
   the longest marked surface), and take the first sequence that is in the index and whose tokens no
   annotation touches (Rule 2 holds: tokens are whole words). The match is proposed and the pass
   jumps past it. Coverage is found with one bisect per annotation.

Cost: O(tokens x distinct lengths + annotations x log tokens) -- linear in corpus size for a bounded
surface length (``bench/eaglet_bench.py`` measures the exponent).

Beyond the paper's module (which inserts every such occurrence):

- **Inside a longer name** (``inside_names=False``, the default): a match that is a strict part of a
  longer capitalised sequence left unmarked at that place is not proposed ("U.S." in "U.S. Bureau
  of Land Management", "Ireland" in "Republic of Ireland", "New York" in "New York City"), unless
  that longer sequence is itself marked elsewhere in the dataset. A capitalised sequence
  (:func:`name_runs`) is a run of capitalised words joined by one space or nothing, with name
  connectors between two of them ("of", "de", "&", ... :data:`CONNECTORS`), a full stop right after
  a capitalised word of at most four letters ("U.S.", "Corp.") and a hyphen inside a word pair
  ("Prudential-Bache"); sentence-initial function words and forms of address
  (:data:`NOT_NAMES`: "The", "Mr", "Last") do not extend it. ``inside_names=True`` is the paper.
- **Links** (``links="fitting"``, the default): a proposal copies the link of the marks it learnt
  from only when they all agree and the link's title names the surface itself (:func:`link_fits`:
  "Obama" -> Barack_Obama, "FBI" -> Federal_Bureau_of_Investigation, but not "Baltimore" ->
  Baltimore_Orioles: the paper's own caveat, "a URI that is linked to a word in one document does
  not need to fit to the same word in a different document"); ``links="agreed"`` drops the title
  test. When the marks disagree the proposal has no link and ``detail`` lists
  the links with their counts (the gold standard's own truncated marks, "U.S." linked to USCIS, are
  not spread), and only when at least ``min_link_marks`` marks support it (default 1, as the paper's
  own example copies Seattle's one mark; 2 keeps a single wrong mark, "Canada" linked to
  General_Motors_Canada, from spreading, and names the link seen in ``detail`` instead). ``links="majority"`` takes
  the most frequent link (ties: the smallest) whatever the count, as the paper's module does.
- **Short forms** (``links="fitting"``): a link whose title only ends with the surface (a surname:
  "Ryan" -> Paul_Ryan, "Holloway" -> nil:Corrie_Holloway) or a one-word NIL id ("nil:Lee") is copied
  only into a document that already uses that link; elsewhere the same short form is as likely
  another entity (another Ryan, another Lee), so the proposal has no link and ``detail`` names the
  link seen. Full titles ("Detroit"), qualified ones ("Washington, D.C.") and initials ("FBI") are
  copied as before.
- **Not names, or part of a more specific entity** (:mod:`posthoc.eaglet.rules.inconsistent_filters`):
  with ``common_words=False`` (the default) numbers, lower-case words, a month or weekday alone and
  one-word adjectives ("Dutch") are not proposed; with ``inside_names=False`` neither is a state or
  country right after a place name and a comma ("Pasadena, California", Sect. 5.2) nor a name
  followed by a currency unit or a security ("U.S. dollar", "Treasury notes", "Federal funds").
  ``common_words=True, inside_names=True, links="majority"`` is the paper's module.
- ``detail`` says how many marks support the proposal ("marked 4 time(s) elsewhere in Reuters-128").

Not checked: how many marks support a proposal is reported, not required (one mark is enough, as
for the paper's Seattle; in the labelled sample the count did not separate right from wrong
proposals), and a word inside a name that goes on in lower case ("U.S. women's basketball team",
"the Holloway fire") is still proposed.

``normalise``: ``exact`` (token strings as written), ``casefold``, or ``lemma`` (case-folded, each
token singularised with TextBlob's rule-based inflector -- the paper compares lemma sequences; the
same function is applied on both sides, so "Americans" matches a marked "American"). The name test
reads the tokens as written. ``min_chars`` skips surface forms shorter than that. Every proposal is
an ``insert`` flagged as a proposal.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Final
from urllib.parse import unquote

from posthoc.eaglet.rules.base import CheckContext, DocKey, Flag
from posthoc.eaglet.rules.inconsistent_filters import not_a_name, part_of_more_specific
from posthoc.eaglet.words import tokens
from posthoc.errors import PosthocInputError
from posthoc.links import NIL_PREFIX, title_of

Key = tuple[str, ...]

#: Lower-case words (and "&") that join two capitalised words into one name ("Bank of America").
CONNECTORS: Final = frozenset({"of", "de", "du", "des", "la", "le", "del", "della", "di", "da", "do", "dos",
                               "van", "von", "der", "den", "for", "&"})
#: Capitalised words that do not start or extend a name: sentence-initial function words and forms
#: of address ("The U.S.", "Mr Smith", "Last year").
NOT_NAMES: Final = frozenset(str.split(
    "The A An In On At For But And Or If When While As By From With To Of It He She They We I You Its His Her "
    "Their Our This That These Those There Here After Before Since Until Under Over Also Then Now Last Next "
    "Some Many Most All Both Each Every No Not One Two Three Such What Which Who Where Why How Yet So Thus "
    "However Meanwhile Earlier Later Today Yesterday Tomorrow Mr Mrs Ms Miss Dr Sir"))


def _is_name_word(token: str) -> bool:
    return token[:1].isupper() and token not in NOT_NAMES


_ACRONYM_SKIP: Final = frozenset({"of", "the", "and", "for", "&", "de", "du", "la"})
#: Title words after the surface that keep the same entity ("Seattle Sounders FC", "Apple Inc.").
LEGAL_SUFFIXES: Final = frozenset({"fc", "f.c.", "afc", "cf", "sc", "inc", "inc.", "corp", "corp.", "corporation",
                                   "co", "co.", "company", "ltd", "ltd.", "plc", "llc", "group", "sa", "s.a.", "ag",
                                   "nv", "n.v.", "gmbh"})


def link_fits(surface: str, link: str) -> bool:
    """Whether ``link``'s title names ``surface`` itself, so the link may be copied to another place.

    It does when the title is the surface, the surface with a qualifier ("Washington, D.C.",
    "Donald Young (tennis)") or a legal suffix ("Seattle Sounders FC"), ends with it ("Barack
    Obama", "Arizona Cardinals") or has it as its initials ("FBI", "U.S."). A title that only
    starts with it ("Baltimore Orioles" for "Baltimore", "England cricket team" for "England") is a
    metonym that fits its own context.
    """
    title = _title(link)
    if not title:
        return False
    name, title = " ".join(surface.split()).casefold(), title.casefold()
    if title == name or title.startswith((name + ",", name + " (")) or title.endswith(" " + name):
        return True
    if title.startswith(name + " ") and all(w in LEGAL_SUFFIXES for w in title[len(name):].split()):
        return True
    letters = "".join(c for c in name if c.isalnum())
    initials = "".join(w[0] for w in re.split(r"[\s._-]+", title) if w and w not in _ACRONYM_SKIP)
    return len(letters) >= 2 and letters == initials


def _title(link: str) -> str | None:
    if link.startswith(NIL_PREFIX):
        return unquote(link[len(NIL_PREFIX):]).replace("_", " ")
    return title_of(link)


def short_form(surface: str, link: str) -> bool:
    """Whether ``surface`` names ``link`` only as a short form: the title ends with it and is longer
    ("Ryan" for Paul_Ryan) or the link is a one-word NIL id ("nil:Lee"). Such a link is copied only
    into a document that already uses it (module docstring)."""
    title = _title(link)
    if not title:
        return False
    name, title = " ".join(surface.split()).casefold(), " ".join(title.split()).casefold()
    if title.endswith(" " + name):
        return True
    return link.startswith(NIL_PREFIX) and " " not in title


def name_runs(text: str, toks: list[tuple[int, int, str]]) -> tuple[list[int], list[int]]:
    """For every token, the first and last token index of the capitalised sequence it belongs to
    (itself when it belongs to none); see the module docstring. One pass, linear."""
    n = len(toks)
    word = [_is_name_word(t) for _, _, t in toks]
    gap = [""] + [text[toks[k - 1][1]:toks[k][0]] for k in range(1, n)]  # gap[k]: between k-1 and k
    near = [k > 0 and gap[k] in ("", " ") for k in range(n)]
    member = list(word)
    for k in range(1, n):
        piece = toks[k][2]
        if member[k] or not near[k]:
            continue
        stop = piece == "." and gap[k] == "" and word[k - 1] and len(toks[k - 1][2]) <= 4  # U.S. / Corp.
        between = k + 1 < n and near[k + 1] and word[k - 1] and word[k + 1]
        joiner = piece in CONNECTORS or (piece == "-" and gap[k] == "" and gap[k + 1] == "")  # of / Prudential-Bache
        # "and" joins when two name words follow: Bridgemont Community and Technical College
        conjunction = piece == "and" and k + 2 < n and near[k + 2] and word[k + 2]
        member[k] = stop or (between and (joiner or conjunction))
    first, last = list(range(n)), list(range(n))
    for k in range(1, n):
        if member[k] and member[k - 1] and near[k]:
            first[k] = first[k - 1]
    for k in range(n - 2, -1, -1):
        if member[k] and member[k + 1] and near[k + 1]:
            last[k] = last[k + 1]
    # every run holds a capitalised word: connectors and stops join only next to one
    return first, last


def normaliser(name: str) -> Callable[[str], str]:
    """The token normaliser for ``exact``, ``casefold`` or ``lemma``."""
    if name == "exact":
        return lambda token: token
    if name == "casefold":
        return str.casefold
    if name == "lemma":
        try:
            from textblob.en.inflect import singularize
        except ImportError:
            raise PosthocInputError("normalise='lemma' needs the PyPI package textblob; "
                                    "or use exact / casefold") from None
        return lambda token: str(singularize(token.casefold()))
    raise PosthocInputError(f"unknown normalise {name!r}; give exact, casefold or lemma")


@dataclass(frozen=True)
class InconsistentMarkingRule:
    """Propose the unmarked occurrences of marked surface forms (see the module docstring)."""

    enabled: bool = True
    normalise: str = "exact"
    min_chars: int = 2
    inside_names: bool = False
    common_words: bool = False
    links: str = "fitting"
    min_link_marks: int = 1
    name: str = "inconsistent_marking"
    order: ClassVar[int] = 60
    flag_rules: ClassVar[tuple[str, ...]] = ("inconsistent_marking",)
    pipeline_options: ClassVar[tuple[str, ...]] = ("normalise", "common_words")

    def run(self, context: CheckContext) -> list[Flag]:
        if self.links not in ("fitting", "agreed", "majority"):
            raise PosthocInputError("inconsistent marking: links must be fitting, agreed or majority, "
                                    f"not {self.links!r}")
        norm = normaliser(self.normalise)
        cache: dict[str, str] = {}

        def key_of(token: str) -> str:
            value = cache.get(token)
            if value is None:
                value = cache[token] = norm(token)
            return value

        index: dict[str, dict[Key, Counter[str]]] = defaultdict(dict)
        lengths: dict[str, dict[str, list[int]]] = defaultdict(dict)
        for (dataset, _), items in context.annotations.items():
            for a in items:
                if a.index in context.faulty or len(a.surface.strip()) < self.min_chars:
                    continue
                written = [t for _, _, t in tokens(a.surface)]
                key = tuple(key_of(t) for t in written)
                if not key or not any(c.isalnum() for c in "".join(key)):
                    continue
                if not self.common_words and not_a_name(a.surface, written):
                    continue
                index[dataset].setdefault(key, Counter())[a.link] += 1
                known = lengths[dataset].setdefault(key[0], [])
                if len(key) not in known:
                    known.append(len(key))
                    known.sort(reverse=True)
        flags: list[Flag] = []
        for doc_key, text in context.texts.items():
            dataset = doc_key[0]
            if dataset in index:
                flags.extend(self._scan(context, doc_key, text, index[dataset], lengths[dataset], key_of))
        return flags

    def _scan(self, context: CheckContext, doc_key: DocKey, text: str, index: dict[Key, Counter[str]],
              lengths: dict[str, list[int]], key_of: Callable[[str], str]) -> list[Flag]:
        toks = tokens(text)
        starts = [s for s, _, _ in toks]
        ends = [e for _, e, _ in toks]
        covered = [0] * (len(toks) + 1)  # difference array over token indices
        for a in context.annotations.get(doc_key, []):
            first = bisect_right(ends, a.start)  # first token ending after a.start
            last = bisect_left(starts, a.end)  # first token starting at or after a.end
            if first < last:
                covered[first] += 1
                covered[last] -= 1
        running, blocked = 0, [0] * (len(toks) + 1)  # blocked[i]: covered tokens before i
        for i in range(len(toks)):
            running += covered[i]
            blocked[i + 1] = blocked[i] + (1 if running > 0 else 0)
        keys = [key_of(t) for _, _, t in toks]
        runs = None if self.inside_names else name_runs(text, toks)
        flags = []
        doc_links: set[str] | None = None
        i = 0
        while i < len(toks):
            candidates = lengths.get(keys[i])
            matched = 0
            if candidates and blocked[i + 1] == blocked[i]:
                for length in candidates:
                    j = i + length
                    if j <= len(toks) and blocked[j] == blocked[i] and tuple(keys[i:j]) in index:
                        matched = length
                        break
            if not matched:
                i += 1
                continue
            j = i + matched
            if runs is not None and (runs[0][i] < i or runs[1][j - 1] > j - 1) \
                    and tuple(keys[runs[0][i]:runs[1][j - 1] + 1]) not in index:
                i += 1  # a strict part of a longer unmarked name (module docstring)
                continue
            start, end = starts[i], ends[j - 1]
            if not self.common_words and not_a_name(text[start:end], [t for _, _, t in toks[i:j]]):
                i += 1  # a number, a lower-case word, ... (casefold / lemma match them in the text)
                continue
            if runs is not None:
                before = i - 2 if i >= 2 and _is_name_word(toks[i - 2][2]) else None
                previous = None if before is None else (runs[0][before], before + 1)
                if part_of_more_specific(text, toks, i, j, previous):
                    i += 1  # a region after its place, a currency or security name (module docstring)
                    continue
            links = index[tuple(keys[i:j])]
            marked = sum(links.values())
            if doc_links is None:
                doc_links = {a.link for a in context.annotations.get(doc_key, [])}
            link, how = self._link(links, marked, text[start:end], local=doc_links)
            flags.append(Flag(doc_key[0], doc_key[1], start, end, text[start:end], link, self.name, "insert",
                              context.system, partner_link=link,
                              detail=f"marked {marked} time(s) elsewhere in {doc_key[0]}, {how}; proposal"))
            i = j
        return flags

    def _link(self, links: Counter[str], marked: int, surface: str, *, local: set[str]) -> tuple[str, str]:
        """The link to propose ("" for none) and how the marks were linked (for ``detail``);
        ``local``: the links this document's annotations already use."""
        if len(links) > 1:
            counted = ", ".join(f"{value or '(none)'} x{count}" for value, count in
                                sorted(links.items(), key=lambda item: (-item[1], item[0])))
            if self.links == "majority":
                best = max(sorted(links), key=lambda value: links[value])
                return best, f"with {len(links)} different links ({counted}): the most frequent is proposed"
            return "", f"with {len(links)} different links ({counted}): no link copied, choose one"
        only = next(iter(links))
        fits = self.links == "agreed" or not only or (
            link_fits(surface, only) and (only in local or not short_form(surface, only)))
        if self.links == "majority" or (marked >= self.min_link_marks and fits):
            return only, f"all linked to {only}" if only else "all without a link"
        why = (f"fewer than {self.min_link_marks} marks" if marked < self.min_link_marks else
               "its title does not name the surface itself, so it may fit only where it was marked"
               if not link_fits(surface, only) else
               "a short form (a surname, a one-word NIL id) names it only in documents that use the link")
        return "", f"linked to {only} there; not copied: {why}, check it"
