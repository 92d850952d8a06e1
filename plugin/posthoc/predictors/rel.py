"""The ``rel`` predictor: a client of REL's HTTP API (Radboud Entity Linker, van Hulst et al., SIGIR 2020).

Protocol (REL's README, "Querying our API", and ``REL/server.py``; github.com/informagi/REL): end-to-end
linking is ``POST <url>`` with the JSON body ``{"text": <text>, "spans": []}``; the answer is a JSON list
with one row a linked mention, ``[start, length, mention, entity, ED confidence, MD (NER) score, tag]``,
``start`` and ``length`` in characters of the text REL linked (REL is Python: code points), ``entity`` a
Wikipedia title with underscores (``Charles_Bukowski``); REL leaves NIL mentions out. An empty text is
answered ``[]`` without a request.

Two things REL's server does that the answer must be read through (``REL/server.py``, ``GetHandler``; lines
88 and 55-77 at informagi/REL 0a479bc):

* ``read_json`` rewrites the text, ``text = text.replace("&amp;", "&")``, before linking, so offsets and
  mentions are of the rewritten text. :func:`rel_rewrite` makes the same rewriting and notes where each
  ``&`` it made stands; every offset is mapped back exactly (each ``&amp;`` before it adds 4 code points,
  a mention holding one covers all 5) and the surface is the original text's. An answer whose mentions fit
  the text as sent instead (a server without that line) is read as it stands.
* ``do_POST`` sends ``200`` and ends the headers before it reads the request; an exception while linking
  is then written into that 200's body as ``send_response(400)``, ``end_headers()`` and ``[]``, so the body
  starts ``HTTP/1.0 400 Bad Request``. Such an answer is a :class:`PredictorServiceError` quoting REL's
  status line and body (the exception itself is only in REL's console log).

Each row is checked: a list of at least 4 items, integer offsets inside the text, and ``mention ==
text[start:start+length]``, else :class:`PredictorAnswerError` naming the row. Links go through
:func:`posthoc.links.normalise_link` (a title becomes ``https://en.wikipedia.org/wiki/<Title>``).

Long texts are sent in pieces of at most ``max_chars`` code points (default 5,000), cut after the last line
break, else sentence end, else space before the limit (never inside a combining sequence), and every
piece's offsets are shifted back to the whole text. Requests run ``concurrency`` at a time.
"""

from __future__ import annotations

import bisect
import json
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from posthoc.predictors.base import (
    PredictedMention,
    PredictorAnswerError,
    PredictorServiceError,
    mention,
    sorted_unique,
)
from posthoc.predictors.http import ServiceClient

DEFAULT_MAX_CHARS = 5000
_JOINERS = {"\u200d", "\u200c", "\u034f"}
#: what REL's read_json rewrites, and to what
_AMP, _AMP_REWRITTEN = "&amp;", "&"
Row = tuple[int, int, str | None, str | None, float | None]


def rel_rewrite(text: str) -> tuple[str, list[int]]:
    """REL's ``text.replace("&amp;", "&")`` and the positions, in the rewritten text, of each ``&`` it made."""
    positions: list[int] = []
    at = text.find(_AMP)
    while at >= 0:
        positions.append(at - (len(_AMP) - 1) * len(positions))
        at = text.find(_AMP, at + len(_AMP))
    return text.replace(_AMP, _AMP_REWRITTEN), positions


def original_offset(index: int, positions: list[int]) -> int:
    """The offset in the text sent of offset ``index`` of the rewritten text (``positions``: :func:`rel_rewrite`)."""
    return index + (len(_AMP) - 1) * bisect.bisect_left(positions, index)


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

    def _rows(self, reply_content: bytes, reply_text: str) -> list[Row]:
        """The answer's rows, each checked for shape (offsets not yet against the text)."""
        url = self.client.shown_url
        if reply_content.startswith(b"HTTP/1."):  # REL/server.py: the error written after its 200
            head, _, rest = reply_text.partition("\r\n\r\n")
            raise PredictorServiceError(
                f"REL at {url} failed on this text: it answered 200, then {head.splitlines()[0]!r} with "
                f"{rest.strip()[:80]!r} in the body (REL's server sends 200 before linking and reports an "
                "exception this way; the exception is in the REL server's log)")
        try:
            rows: object = json.loads(reply_content)
        except ValueError:
            raise PredictorAnswerError(f"REL at {url}: the answer is not JSON ({reply_text[:80]!r}); is this a "
                                       "REL server?") from None
        if not isinstance(rows, list):
            raise PredictorAnswerError(f"REL at {url}: the answer is a JSON {type(rows).__name__}, not a list of "
                                       "[start, length, mention, entity, ...] rows")
        checked: list[Row] = []
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
            checked.append((start, start + length, surface, entity, score))
        return checked

    def _piece(self, piece: str, offset: int, deadline: float | None) -> list[PredictedMention]:
        if not piece.strip():
            return []
        reply = self.client.post(json={"text": piece, "spans": []}, deadline=deadline)
        rows = self._rows(reply.content, reply.text)
        rewritten, positions = rel_rewrite(piece)
        if positions and all(0 <= start < end <= len(rewritten) and surface in (None, rewritten[start:end])
                             for start, end, surface, _, _ in rows):  # REL linked the rewritten text
            rows = [(original_offset(start, positions), original_offset(end, positions), None, entity, score)
                    for start, end, _, entity, score in rows]
        found: list[PredictedMention] = []
        for index, (start, end, surface, entity, score) in enumerate(rows):
            item = mention(piece, start, end, entity, surface=surface, score=score,
                           service=f"REL at {self.client.shown_url}, row {index}")
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
