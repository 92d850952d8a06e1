"""Inconsistent marking against a brute-force reference on random corpora (hypothesis).

The reference re-derives the rule of paper 003 Sect. 4.3 item 6 the slow way: every token window of
every length, leftmost-longest, skipping windows any annotation intersects and (the default) windows
that are a strict part of a longer unmarked capitalised sequence, found by walking outwards word by
word; with the defaults also not a number, a lower-case word, a month or weekday or an adjective
alone, nor a region right after a place and a comma, nor a name before a currency or security word;
links are copied only when all marks agree and the title fits (``link_fits``, tested on its own),
and a short form's link (``short_form``) only into a document using it. The fast module must propose
exactly the same spans and links, with the defaults and with the paper's settings
(``inside_names=True``, ``common_words=True``, ``links="majority"``).
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.eaglet.helpers import build_corpus

from posthoc.eaglet.pipeline import Pipeline
from posthoc.eaglet.places import region_of
from posthoc.eaglet.rules.inconsistent_filters import CURRENCIES_AND_SECURITIES, MONTHS_AND_DAYS, adjectives
from posthoc.eaglet.rules.inconsistent_marking import (
    CONNECTORS,
    NOT_NAMES,
    InconsistentMarkingRule,
    link_fits,
    short_form,
)
from posthoc.eaglet.words import tokens
from posthoc.links import normalise_link

WORDS = ["Rio", "de", "Janeiro", "São", "Paulo", "東京", "FC", "Cafe\u0301", "2012", "and", ",", "👍", "U.S.",
         "The", "bank", "Texas", "dollar", "-", "Dutch", "May"]
LINKS = ["A", "B", "Rio", "FC", "São_Paulo", "nil:Paulo"]


def _not_a_name(surface: str) -> bool:
    letters = [c for c in surface if c.isalpha()]
    words = surface.split()
    if not letters or (any(c.islower() for c in letters) and not any(c.isupper() for c in letters)):
        return True
    return len(words) == 1 and (words[0].lower() in MONTHS_AND_DAYS or words[0] in adjectives())


def _more_specific(text: str, toks: list[tuple[int, int, str]], i: int, j: int) -> bool:
    """A region after "<name> ," (the name no region), or a currency / security word after the window."""
    surface = text[toks[i][0]:toks[j - 1][1]]
    before = toks[i - 2][2] if i >= 2 else ""
    if toks[i - 1][2] == "," and region_of(surface) and before[:1].isupper() and before not in NOT_NAMES:
        left = i - 2
        while left > 0 and _in_name(text, toks, left - 1) and text[toks[left - 1][1]:toks[left][0]] in ("", " "):
            left -= 1
        if not region_of(text[toks[left][0]:toks[i - 2][1]]):
            return True
    rest = text[toks[j - 1][1]:]
    gap = re.match(r"-(?=[^\W_])|[^\S\n]*", rest)
    following = tokens(rest[gap.end():] if gap else rest)[:1]
    return bool(following) and following[0][0] == 0 and following[0][2].casefold() in CURRENCIES_AND_SECURITIES


def _in_name(text: str, toks: list[tuple[int, int, str]], k: int) -> bool:
    """Whether token k belongs to a capitalised sequence (the module docstring's definition)."""
    def word(i: int) -> bool:
        return 0 <= i < len(toks) and toks[i][2][:1].isupper() and toks[i][2] not in NOT_NAMES

    def near(i: int) -> bool:  # token i follows token i - 1 after one space or nothing
        return 0 < i < len(toks) and text[toks[i - 1][1]:toks[i][0]] in ("", " ")

    token = toks[k][2]
    if word(k):
        return True
    if not near(k):
        return False
    if token == "." and toks[k - 1][1] == toks[k][0] and word(k - 1) and len(toks[k - 1][2]) <= 4:
        return True
    between = word(k - 1) and word(k + 1) and near(k + 1)
    if between and (token in CONNECTORS or (token == "-" and toks[k - 1][1] == toks[k][0] == toks[k + 1][0] - 1)):
        return True
    return token == "and" and between and word(k + 2) and near(k + 2)


def _strict_part(text: str, toks: list[tuple[int, int, str]], i: int, j: int) -> tuple[int, int] | None:
    """The longer capitalised sequence around window [i, j), or None when the window is not inside one."""
    def joined(a: int, b: int) -> bool:
        return _in_name(text, toks, a) and _in_name(text, toks, b) and text[toks[a][1]:toks[b][0]] in ("", " ")

    left, right = i, j - 1
    while left > 0 and joined(left - 1, left):
        left -= 1
    while right + 1 < len(toks) and joined(right, right + 1):
        right += 1
    return (left, right + 1) if (left, right + 1) != (i, j) else None


def brute_force(docs: dict[str, tuple[str, list[tuple[int, int, str]]]], *,
                paper: bool = False) -> set[tuple[str, int, int, str]]:
    links: dict[tuple[str, ...], Counter[str]] = {}
    for text, marks in docs.values():
        for start, end, link in marks:
            key = tuple(t for _, _, t in tokens(text[start:end]))
            if len(text[start:end].strip()) >= 2 and any(c.isalnum() for c in "".join(key)) \
                    and (paper or not _not_a_name(text[start:end])):
                links.setdefault(key, Counter())[normalise_link(link).link] += 1
    longest = max((len(k) for k in links), default=0)
    found = set()
    for doc_id, (text, marks) in docs.items():
        toks = tokens(text)
        i = 0
        while i < len(toks):
            for length in range(min(longest, len(toks) - i), 0, -1):
                window = toks[i:i + length]
                key = tuple(t for _, _, t in window)
                touched = any(s < te and ts < e for s, e, _ in marks for ts, te, _ in window)
                if key in links and not touched:
                    longer = None if paper else _strict_part(text, toks, i, i + length)
                    if longer and tuple(t for _, _, t in toks[longer[0]:longer[1]]) not in links:
                        i += 1
                        break
                    if not paper and _more_specific(text, toks, i, i + length):
                        i += 1
                        break
                    counts = links[key]
                    if paper:
                        best = max(sorted(counts), key=lambda link, c=counts: c[link])
                    else:
                        only = next(iter(counts))
                        surface = text[window[0][0]:window[-1][1]]
                        used = {normalise_link(link).link for _, _, link in marks}
                        fits = link_fits(surface, only) and (only in used or not short_form(surface, only))
                        best = only if len(counts) == 1 and fits else ""
                    found.add((doc_id, window[0][0], window[-1][1], best))
                    i += length
                    break
            else:
                i += 1
    return found


@st.composite
def corpora(draw: st.DrawFn) -> dict[str, tuple[str, list[tuple[int, int, str]]]]:
    docs = {}
    for d in range(draw(st.integers(1, 4))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14))
        text, starts = "", []
        for word in words:
            starts.append(len(text))
            text += word + " "
        marks, i = [], 0
        while i < len(words):
            if draw(st.booleans()) and draw(st.booleans()):
                length = draw(st.integers(1, 3))
                j = min(len(words), i + length)
                link = draw(st.sampled_from(LINKS))
                marks.append((starts[i], starts[j - 1] + len(words[j - 1]), link))
                i = j
            else:
                i += 1
        docs[str(d)] = (text, marks)
    return docs


@settings(max_examples=80, deadline=None)
@given(corpora())
def test_matches_the_brute_force_reference(docs: dict[str, tuple[str, list[tuple[int, int, str]]]]) -> None:
    corpus = build_corpus({k: (text, list(marks)) for k, (text, marks) in docs.items()})
    flags = Pipeline((InconsistentMarkingRule(),)).run(corpus.documents, corpus.mentions)
    got = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in flags.itertuples()}
    assert got == brute_force(docs)


@settings(max_examples=40, deadline=None)
@given(corpora())
def test_paper_settings_match_the_brute_force_reference(docs: dict[str, tuple[str, list[tuple[int, int, str]]]]
                                                        ) -> None:
    corpus = build_corpus({k: (text, list(marks)) for k, (text, marks) in docs.items()})
    rule = InconsistentMarkingRule(inside_names=True, common_words=True, links="majority")
    flags = Pipeline((rule,)).run(corpus.documents, corpus.mentions)
    got = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in flags.itertuples()}
    assert got == brute_force(docs, paper=True)
