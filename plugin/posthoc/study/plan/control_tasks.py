"""Control tasks (system ``CONTROL``): a chunk a worker does not otherwise see, with three annotations whose
right answers are known (paper 000, section 2.1: one control task of three control annotations per batch).

Ground-truth annotations left as they are (expected ``verify``), ground-truth annotations whose link is
swapped for another entity's link (expected ``edit``; the original link is kept as ``expected_link``) and
spans over a word that no system annotated, given a random link (expected ``remove``). The mix is drawn at
random: 1 or 2 correct, the rest corrupted (:data:`CONTROL_MIXES`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

import numpy as np
import pandas as pd

from posthoc.arrays import Objects
from posthoc.errors import PosthocInputError
from posthoc.study.plan._columns import object_values
from posthoc.study.plan.chunking import Chunking
from posthoc.tables import GT_SYSTEM

CONTROL_SYSTEM = "CONTROL"
#: control compositions (verify, edit, remove): one or two correct annotations, the rest corrupted
CONTROL_MIXES = ((2, 1, 0), (2, 0, 1), (1, 2, 0), (1, 0, 2), (1, 1, 1))

_WORD = re.compile(r"\w+")


class ControlAnnotation(TypedDict):
    """One annotation of a control task, offsets in its chunk, with the answer expected of the worker."""

    start: int
    end: int
    surface: str
    link: str
    is_nil: bool
    expected_outcome: str
    expected_link: str | None


class ControlTask(NamedTuple):
    """A control task of the plan: its item id (``q000000``, ...), its chunk's row in the chunks table, the index
    of the worker it is for and its three annotations."""

    item_id: str
    chunk_row: int
    worker: int
    annotations: list[ControlAnnotation]


@dataclass
class ControlPool:
    """Chunks that can hold a control task: their usable annotations, and (lazily) their free words."""

    chunk_rows: list[int]  # chunks with at least one usable ground-truth annotation, in order
    mentions: dict[int, list[tuple[int, int, str, str]]]  # chunk row -> [(start, end, surface, link)]
    spans: dict[int, list[tuple[int, int]]]  # chunk row -> every system's spans
    texts: Objects
    links: list[str]
    _words: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)

    def words(self, row: int) -> list[tuple[int, int, str]]:
        """Words of the chunk that no system annotated (lowercase ones if there are any)."""
        found = self._words.get(row)
        if found is None:
            text = str(self.texts[row])
            mask = bytearray(len(text))
            for s, e in self.spans.get(row, []):
                mask[s:e] = b"\x01" * (e - s)
            free = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)
                    if mask.find(1, m.start(), m.end()) < 0]
            found = [w for w in free if w[2].islower() and len(w[2]) >= 2] or free
            self._words[row] = found
        return found

    def preferred(self, row: int) -> bool:
        """Whether every control mix can be drawn from this chunk."""
        return len(self.mentions[row]) >= 3 and len(self.links) >= 2 and len(self.words(row)) >= 2


def control_pool(chunking: Chunking) -> ControlPool:
    """The chunks a control task can use: each one's non-overlapping linked ground-truth annotations (another
    system's when there is no GT) and every system's spans."""
    ments = chunking.mentions
    system = ments["system"].to_numpy(dtype=object)
    systems = sorted(set(system.tolist()))
    source = GT_SYSTEM if GT_SYSTEM in systems else (systems[0] if systems else None)
    link = object_values(ments["link"])
    is_nil = ments["is_nil"].to_numpy(dtype=bool)
    linked = ~is_nil & np.array([x is not None and str(x) != "" for x in link], dtype=bool)
    links = sorted({str(x) for x in link[linked]})
    chunk_codes = pd.Index(chunking.chunks["chunk_id"]).get_indexer(ments["chunk_id"])
    starts = ments["start"].to_numpy(dtype=np.int64)
    ends = ments["end"].to_numpy(dtype=np.int64)
    surface = object_values(ments["surface"])
    usable: dict[int, list[tuple[int, int, str, str]]] = {}
    chosen = np.flatnonzero((system == source) & linked)
    chosen = chosen[np.lexsort((link[chosen].astype(str), ends[chosen], starts[chosen], chunk_codes[chosen]))]
    for i in chosen.tolist():
        row = int(chunk_codes[i])
        kept = usable.setdefault(row, [])
        if kept and starts[i] < kept[-1][1]:
            continue  # keep a non-overlapping subset, in text order
        kept.append((int(starts[i]), int(ends[i]), str(surface[i]), str(link[i])))
    spans: dict[int, list[tuple[int, int]]] = {}
    for row, s, e in zip(chunk_codes.tolist(), starts.tolist(), ends.tolist(), strict=True):
        if row in usable:
            spans.setdefault(row, []).append((s, e))
    return ControlPool(chunk_rows=sorted(usable), mentions=usable, spans=spans,
                        texts=chunking.chunks["text"].to_numpy(dtype=object), links=links)


def pick_control_chunk(pool: ControlPool, seen: set[int], used: set[int], rng: np.random.Generator,
                        worker: str) -> int:
    """A random control chunk the worker does not see otherwise: preferably one that allows every mix and
    is not yet used for this worker; rejection sampling first (a worker sees few chunks of a large pool)."""
    rows = pool.chunk_rows
    for _ in range(64 if rows else 0):
        row = rows[int(rng.integers(len(rows)))]
        if row not in seen and row not in used and pool.preferred(row):
            return row
    preferred = [r for r in rows if r not in seen and pool.preferred(r)]
    feasible = [r for r in rows if r not in seen and feasible_mixes(pool, r)]
    for candidates in ([r for r in preferred if r not in used], preferred, [r for r in feasible if r not in used],
                       feasible):
        if candidates:
            return candidates[int(rng.integers(len(candidates)))]
    raise PosthocInputError(
        f"cannot build a control task for worker {worker}: no chunk it does not already see has a ground-truth "
        "annotation with a link and a word that no system annotated (three of them together); add documents, "
        "raise n_workers or set control_tasks = false"
    )


def feasible_mixes(pool: ControlPool, row: int) -> list[tuple[int, int, int]]:
    """The :data:`CONTROL_MIXES` that chunk ``row`` has enough annotations, free words and links for."""
    n_mentions, n_words = len(pool.mentions.get(row, [])), len(pool.words(row))
    can_edit = len(pool.links) >= 2
    can_remove = len(pool.links) >= 1
    return [
        (v, e, r) for v, e, r in CONTROL_MIXES
        if v + e <= n_mentions and r <= n_words and (e == 0 or can_edit) and (r == 0 or can_remove)
    ]


def control_annotations(pool: ControlPool, row: int, rng: np.random.Generator) -> list[ControlAnnotation]:
    """Three control annotations over chunk ``row``, in text order, with their expected outcomes."""
    mixes = feasible_mixes(pool, row)
    n_verify, n_edit, n_remove = mixes[int(rng.integers(len(mixes)))]
    mentions = pool.mentions[row]
    picked = sorted(rng.choice(len(mentions), size=n_verify + n_edit, replace=False).tolist())
    kinds = ["verify"] * n_verify + ["edit"] * n_edit
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    annotations: list[ControlAnnotation] = []
    for index, kind in zip(picked, kinds, strict=True):
        start, end, surface, link = mentions[index]
        shown = link
        if kind == "edit":
            others = [x for x in pool.links if x != link]
            shown = others[int(rng.integers(len(others)))]
        annotations.append({"start": start, "end": end, "surface": surface, "link": shown, "is_nil": False,
                            "expected_outcome": kind, "expected_link": link})
    words = pool.words(row)
    for index in sorted(rng.choice(len(words), size=n_remove, replace=False).tolist()) if n_remove else []:
        start, end, word = words[index]
        link = pool.links[int(rng.integers(len(pool.links)))]
        annotations.append({"start": start, "end": end, "surface": word, "link": link, "is_nil": False,
                            "expected_outcome": "remove", "expected_link": None})
    return sorted(annotations, key=lambda a: (a["start"], a["end"]))
