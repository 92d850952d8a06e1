"""Inconsistent marking against a brute-force reference on random corpora (hypothesis).

The reference re-derives the rule of paper 003 Sect. 4.3 item 6 the slow way: every token window of
every length, leftmost-longest, skipping windows any annotation intersects; the fast module must
propose exactly the same spans and links.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.eaglet.helpers import build_corpus

from posthoc.eaglet.pipeline import Pipeline
from posthoc.eaglet.rules import InconsistentMarkingRule
from posthoc.eaglet.words import tokens

WORDS = ["Rio", "de", "Janeiro", "São", "Paulo", "東京", "FC", "Cafe\u0301", "2012", "and", ",", "👍"]


def brute_force(docs: dict[str, tuple[str, list[tuple[int, int, str]]]]) -> set[tuple[str, int, int, str]]:
    links: dict[tuple[str, ...], Counter[str]] = {}
    for text, marks in docs.values():
        for start, end, link in marks:
            key = tuple(t for _, _, t in tokens(text[start:end]))
            if len(text[start:end].strip()) >= 2 and any(c.isalnum() for c in "".join(key)):
                links.setdefault(key, Counter())["https://en.wikipedia.org/wiki/" + link] += 1
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
                    best = max(sorted(links[key]), key=lambda link, k=key: links[k][link])
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
                marks.append((starts[i], starts[j - 1] + len(words[j - 1]), draw(st.sampled_from(["A", "B"]))))
                i = j
            else:
                i += 1
        docs[str(d)] = (text, marks)
    return docs


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_matches_the_brute_force_reference(docs: dict[str, tuple[str, list[tuple[int, int, str]]]]) -> None:
    corpus = build_corpus({k: (text, list(marks)) for k, (text, marks) in docs.items()})
    flags = Pipeline((InconsistentMarkingRule(),)).run(corpus.documents, corpus.mentions)
    got = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in flags.itertuples()}
    assert got == brute_force(docs)
