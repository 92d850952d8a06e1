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

``normalise``: ``exact`` (token strings as written), ``casefold``, or ``lemma`` (case-folded, each
token singularised with TextBlob's rule-based inflector -- the paper compares lemma sequences; the
same function is applied on both sides, so "Americans" matches a marked "American").
Each proposal is an ``insert`` with the link the surface form was marked with most often (ties:
the smallest), flagged as a proposal; ``min_chars`` skips surface forms shorter than that.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from posthoc.eaglet.flags import Flag
from posthoc.eaglet.rules.base import CheckContext, DocKey
from posthoc.eaglet.words import tokens
from posthoc.errors import PosthocInputError

Key = tuple[str, ...]


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
    name: str = "inconsistent_marking"

    def run(self, context: CheckContext) -> list[Flag]:
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
                key = tuple(key_of(t) for _, _, t in tokens(a.surface))
                if not key or not any(c.isalnum() for c in "".join(key)):
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
        flags = []
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
            links = index[tuple(keys[i:i + matched])]
            best = max(sorted(links), key=lambda link: links[link])
            start, end = starts[i], ends[i + matched - 1]
            marked = sum(links.values())
            flags.append(Flag(doc_key[0], doc_key[1], start, end, text[start:end], best, self.name, "insert",
                              context.system, partner_link=best,
                              detail=f"marked {marked} time(s) elsewhere in the dataset"
                              + (f"; links: {', '.join(sorted(links))}" if len(links) > 1 else "")
                              + "; proposal"))
            i += matched
        return flags
