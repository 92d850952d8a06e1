"""A baseline dictionary linker for text that is in no study manifest ("live mode").

The linker is a plain alias table: every surface form seen in any mentions table is mapped to
the link it was most often given (ties broken by the smallest link, so the table is
deterministic). On new text it returns the non-overlapping, leftmost-longest alias matches that
start and end on token boundaries. It is a baseline to make the backend useful on new data,
not a system under study (paper 000 verifies systems' outputs; this only pre-fills regions).

Tokens
------
A token is a run of word characters (``\\w``) with any combining marks, variation selectors and
skin-tone modifiers attached; a single CJK ideograph or kana (scripts written without spaces,
so an alias may start or end inside a run of them); a flag (two regional indicators); or one other non-space
character with its marks and zero-width-joiner sequence (an emoji stays whole). An alias matches when the exact
text between the first and the last of a run of tokens equals it (case-sensitively by default),
so a match never cuts a word, a combining sequence or an emoji. Offsets are code points.

Matching is a dictionary lookup per token n-gram (n from the longest alias down to 1), so it is
linear in the text length times the longest alias (in tokens), whatever the size of the table.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.tables import require_columns

_CJK: Final = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_MARKS: Final = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u064b-\u065f\u0900-\u0903\u093a-\u094f\u1ab0-\u1aff"
    "\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f"
)
_TOKEN: Final = re.compile(
    r"[\U0001f1e6-\U0001f1ff]{2}"  # a flag: a pair of regional indicators
    rf"|[{_CJK}][{_MARKS}]*"
    rf"|[^\W{_CJK}](?:[^\W{_CJK}]|[{_MARKS}])*"
    rf"|[^\s\w{_MARKS}](?:[{_MARKS}]|\u200d[^\s\w])*"
    rf"|[{_MARKS}]+"
)
#: Aliases longer than this many tokens are ignored (they would only slow matching down).
MAX_ALIAS_TOKENS: Final = 12


def tokens(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` code point offsets of the tokens of ``text`` (see the module docstring)."""
    return [match.span() for match in _TOKEN.finditer(text)]


@dataclass(frozen=True)
class LinkedSpan:
    """One alias match: ``text[start:end] == surface``, linked to ``link``."""

    start: int
    end: int
    surface: str
    link: str


class AliasTable:
    """Surface form -> most frequent link, with the number of tokens of the longest surface.

    Build it with :meth:`from_mentions` from any mentions tables (columns ``surface`` and
    ``link``; rows with ``is_nil`` True are left out unless ``include_nil``).
    """

    def __init__(self, links: dict[str, str], *, case_sensitive: bool = True) -> None:
        self.case_sensitive = case_sensitive
        self._links: dict[str, str] = {}
        longest = 0
        for surface, link in links.items():
            n = len(tokens(surface))
            if n == 0 or n > MAX_ALIAS_TOKENS or not link:
                continue
            key = surface if case_sensitive else surface.lower()
            self._links.setdefault(key, link)
            longest = max(longest, n)
        self.max_tokens = longest

    def __len__(self) -> int:
        return len(self._links)

    def get(self, surface: str) -> str | None:
        """The link of ``surface`` (exact, or lower-cased when the table is case-insensitive)."""
        return self._links.get(surface if self.case_sensitive else surface.lower())

    @classmethod
    def from_mentions(cls, frames: Iterable[pd.DataFrame], *, case_sensitive: bool = True,
                      include_nil: bool = False) -> AliasTable:
        """The alias table of one or more mentions tables (``surface``, ``link``, optional ``is_nil``)."""
        counts: Counter[tuple[str, str]] = Counter()
        for frame in frames:
            require_columns(frame, ("surface", "link"), message="alias table: mentions lack column(s) {missing}; "
                            "give a mentions table with surface and link columns")
            rows = frame
            if not include_nil and "is_nil" in frame.columns:
                rows = frame[~frame["is_nil"].fillna(False).astype(bool)]
            pairs = rows[["surface", "link"]].dropna().astype(str)
            if not case_sensitive:
                pairs = pairs.assign(surface=pairs["surface"].str.lower())
            counts.update(zip(pairs["surface"], pairs["link"], strict=True))
        best: dict[str, tuple[int, str]] = {}
        for (surface, link), count in counts.items():
            if not surface.strip() or not link.strip():
                continue
            current = best.get(surface)
            # most frequent link; on a tie the smallest link, so the table is deterministic
            if current is None or (-count, link) < (-current[0], current[1]):
                best[surface] = (count, link)
        return cls({surface: link for surface, (_, link) in best.items()}, case_sensitive=case_sensitive)


class DictionaryLinker:
    """Leftmost-longest, non-overlapping alias matching on token boundaries."""

    def __init__(self, table: AliasTable) -> None:
        self.table = table

    def link(self, text: str) -> list[LinkedSpan]:
        """The alias matches in ``text``, left to right, never overlapping."""
        spans = tokens(text)
        found: list[LinkedSpan] = []
        longest = self.table.max_tokens
        i, count = 0, len(spans)
        while i < count:
            start = spans[i][0]
            for n in range(min(longest, count - i), 0, -1):
                end = spans[i + n - 1][1]
                surface = text[start:end]
                link = self.table.get(surface)
                if link is not None:
                    found.append(LinkedSpan(start, end, surface, link))
                    i += n
                    break
            else:
                i += 1
        return found

    def link_records(self, text: str, *, id_prefix: str = "live") -> list[dict[str, Any]]:
        """The matches as mention rows ``mention_id, start, end, surface, link`` for the result builder."""
        return [
            {"mention_id": f"{id_prefix}-{span.start}-{span.end}", "start": span.start, "end": span.end,
             "surface": span.surface, "link": span.link}
            for span in self.link(text)
        ]

    def link_frame(self, text: str, *, id_prefix: str = "live") -> pd.DataFrame:
        """The matches as a mentions frame ``mention_id, start, end, surface, link``."""
        return pd.DataFrame(self.link_records(text, id_prefix=id_prefix),
                            columns=["mention_id", "start", "end", "surface", "link"])


def frames_from_files(paths: Sequence[str]) -> list[pd.DataFrame]:
    """Mentions tables of alias files: ``.csv`` / ``.parquet`` tables with ``surface`` and ``link``
    columns (a mentions table or a plain alias list), any other file through
    :func:`posthoc.readers.read_mentions` (JSONL, NIF, WNED, AIDA TSV, REL; format detected)."""
    frames: list[pd.DataFrame] = []
    for path in paths:
        lower = path.lower()
        if not Path(path).exists():
            raise PosthocInputError(f"alias file {path}: no such file; give an existing mentions file")
        try:
            if lower.endswith(".parquet"):
                frame = pd.read_parquet(path)
            elif lower.endswith(".csv"):
                frame = pd.read_csv(path, dtype=str, keep_default_na=False)
            else:
                from posthoc.readers import read_mentions  # the study's readers

                frame = read_mentions(path).mentions
        except PosthocInputError:
            raise
        except (ValueError, OSError, pd.errors.ParserError) as exc:  # bad CSV/Parquet bytes, not UTF-8
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise PosthocInputError(f"alias file {path}: not a readable mentions table ({reason}); give a CSV or "
                                    "Parquet with surface and link columns, or a file the readers know") from None
        require_columns(frame, ("surface", "link"), message=f"alias file {path}: no column(s) {{missing}}; give a "
                        "mentions table with surface and link columns")
        if "is_nil" in frame.columns and frame["is_nil"].dtype == object:
            frame = frame.assign(is_nil=frame["is_nil"].astype(str).str.lower().isin(["true", "1"]))
        frames.append(frame)
    return frames
