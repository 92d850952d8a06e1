"""The ``rel`` predictor: a client of REL's HTTP API (Radboud Entity Linker, van Hulst et al., SIGIR 2020).

Protocol (REL's README, "Querying our API", and ``REL/server.py``; github.com/informagi/REL): end-to-end
linking is ``POST <url>`` with the JSON body ``{"text": <text>, "spans": []}``; the answer is a JSON list
with one row a linked mention, ``[start, length, mention, entity, ED confidence, MD (NER) score, tag]``,
``start`` and ``length`` in characters of the text sent (REL is Python: code points), ``entity`` a Wikipedia
title with underscores (``Charles_Bukowski``); REL leaves NIL mentions out. An empty text is answered ``[]``
without a request. REL's own server answers a failure with 400 and ``[]``.

Each row is checked: a list of at least 4 items, integer offsets inside the text, and ``mention ==
text[start:start+length]`` (REL's server replaces ``&amp;`` by ``&`` before linking, which shifts the
offsets of a text holding it: such an answer is refused, naming the mention). Links go through
:func:`posthoc.links.normalise_link` (a title becomes ``https://en.wikipedia.org/wiki/<Title>``).

Long texts are sent in pieces of at most ``max_chars`` code points (default 5,000), cut after the last line
break, else sentence end, else space before the limit (never inside a combining sequence), and every
piece's offsets are shifted back to the whole text. Requests run ``concurrency`` at a time.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from posthoc.predictors.base import PredictedMention, PredictorAnswerError, mention, sorted_unique
from posthoc.predictors.http import ServiceClient

DEFAULT_MAX_CHARS = 5000
_JOINERS = {"\u200d", "\u200c", "\u034f"}


def _joins_previous(char: str) -> bool:
    """Whether ``char`` belongs to the character before it (a mark, a joiner, a variation selector...)."""
    return (unicodedata.category(char) in {"Mn", "Me", "Mc"} or char in _JOINERS or "\ufe00" <= char <= "\ufe0f"
            or "\U0001f3fb" <= char <= "\U0001f3ff" or "\U000e0020" <= char <= "\U000e007f")


def split_text(text: str, max_chars: int) -> list[tuple[int, str]]:
    """``(offset, piece)`` pairs covering ``text`` in order, each piece at most ``max_chars`` code points."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    pieces: list[tuple[int, str]] = []
    start = 0
    while len(text) - start > max_chars:
        window = text[start:start + max_chars + 1]
        cut = window.rfind("\n", 0, max_chars) + 1
        if cut <= 0:
            ends = [window.rfind(mark, 0, max_chars) for mark in (". ", "! ", "? ", "。", "！", "？")]
            best = max(ends)
            cut = best + 1 if best >= 0 else 0
        if cut <= 0:
            cut = max(window.rfind(" ", 0, max_chars), window.rfind("\t", 0, max_chars)) + 1
        if cut <= 0:
            cut = max_chars
            while cut > 1 and (_joins_previous(window[cut]) or window[cut - 1] == "\u200d"):
                cut -= 1
        pieces.append((start, text[start:start + cut]))
        start += cut
    pieces.append((start, text[start:]))
    return pieces


class RELLinker:
    """REL's HTTP API as a :class:`~posthoc.predictors.base.TextLinker` (see the module docstring)."""

    name = "rel"

    def __init__(self, url: str, *, timeout: float = 30.0, retries: int = 2, max_chars: int = DEFAULT_MAX_CHARS,
                 concurrency: int = 2, backoff: float = 0.5) -> None:
        if max_chars < 1 or concurrency < 1:
            raise ValueError("rel: max_chars and concurrency must be at least 1")
        self.client = ServiceClient("REL", url, timeout=timeout, retries=retries, backoff=backoff)
        self.max_chars = max_chars
        self.concurrency = concurrency

    def _piece(self, piece: str, offset: int, deadline: float | None) -> list[PredictedMention]:
        if not piece.strip():
            return []
        reply = self.client.post(json={"text": piece, "spans": []}, deadline=deadline)
        try:
            rows: Any = reply.json()
        except ValueError:
            raise PredictorAnswerError(f"REL at {self.client.shown_url}: the answer is not JSON "
                                       f"({reply.text[:80]!r}); is this a REL server?") from None
        if not isinstance(rows, list):
            raise PredictorAnswerError(f"REL at {self.client.shown_url}: the answer is a JSON {type(rows).__name__}, "
                                       "not a list of [start, length, mention, entity, ...] rows")
        found: list[PredictedMention] = []
        url = self.client.shown_url
        for index, row in enumerate(rows):
            if not isinstance(row, list | tuple) or len(row) < 4:
                raise PredictorAnswerError(f"REL at {url}: row {index} is {str(row)[:80]}, not "
                                           "[start, length, mention, entity, ...]")
            start, length, surface, entity = row[:4]
            if isinstance(length, bool) or not isinstance(length, int) or not isinstance(start, int):
                raise PredictorAnswerError(f"REL at {url}: row {index} has start {start!r} and length "
                                           f"{length!r}; both must be integers")
            if surface is not None and not isinstance(surface, str):
                raise PredictorAnswerError(f"REL at {url}: row {index}'s mention is not a string")
            if entity is not None and not isinstance(entity, str):
                raise PredictorAnswerError(f"REL at {url}: row {index}'s entity is not a string")
            score = row[4] if len(row) > 4 and isinstance(row[4], int | float) and not isinstance(row[4], bool) \
                else None
            item = mention(piece, start, start + length, entity, surface=surface, score=score,
                           service=f"REL at {url}, row {index}")
            found.append(PredictedMention(item.start + offset, item.end + offset, item.surface, item.link,
                                          item.link_original, item.is_nil, item.score))
        return found

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        jobs = [(number, offset, piece) for number, text in enumerate(texts)
                for offset, piece in split_text(text, self.max_chars)]
        results: list[list[PredictedMention]] = [[] for _ in texts]
        if self.concurrency == 1 or len(jobs) == 1:
            answers = [self._piece(piece, offset, deadline) for _, offset, piece in jobs]
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs) or 1)) as pool:
                answers = list(pool.map(lambda job: self._piece(job[2], job[1], deadline), jobs))
        for (number, _, _), found in zip(jobs, answers, strict=True):
            results[number].extend(found)
        return [sorted_unique(found) for found in results]
