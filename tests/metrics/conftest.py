"""A tiny study whose every number is worked by hand in the tests (seed 000 sections 3 and 4).

Dataset ``D``, systems ``GT`` and ``S``, one judge per annotation (k = 1), links ``W/x``.

GT (judged by worker ``g``)          S (judged by worker ``s``)
d1 [0, 5)   L1  verify              d1 [0, 5)   L1  verify   same span, same link as GT     -> A
d1 [10, 15) L2  edit -> L2b         d1 [10, 20) L2  verify   overlaps GT [10,15) L2         -> C
d2 [0, 4)   L3  verify              d1 [3, 12)  L9  verify   overlaps GT L1 and L2, not L9  -> D
                                    d2 [0, 4)   L4  verify   same span as GT L3, other link -> B
                                    d2 [20, 25) L5  remove
                                    d2 [30, 35) L6  edit -> L6b
                                    d2 [40, 45) L7  verify   overlaps nothing in GT         -> E
Worker ``c`` also judged S's d2 [20, 25) L5 (``verify``) and failed one of three control annotations
(pass rate 2/3): excluded by default, its judgement makes a 1-1 tie with ``s``'s ``remove`` when kept.
Worker ``g`` passed 3 of 3; ``s`` did no control task.
"""

from __future__ import annotations

import pandas as pd
import pytest

from posthoc.tables import JUDGEMENT_COLUMNS, MENTION_COLUMNS

W = "https://en.wikipedia.org/wiki/"


def _mention(system: str, doc: str, start: int, end: int, link: str) -> dict[str, object]:
    return {
        "dataset": "D",
        "doc_id": doc,
        "system": system,
        "start": start,
        "end": end,
        "surface": "x" * (end - start),
        "link": W + link,
        "link_original": W + link,
        "is_nil": False,
    }


GT_ROWS = [("d1", 0, 5, "L1", "verify"), ("d1", 10, 15, "L2", "edit"), ("d2", 0, 4, "L3", "verify")]
S_ROWS = [
    ("d1", 0, 5, "L1", "verify"),
    ("d1", 10, 20, "L2", "verify"),
    ("d1", 3, 12, "L9", "verify"),
    ("d2", 0, 4, "L4", "verify"),
    ("d2", 20, 25, "L5", "remove"),
    ("d2", 30, 35, "L6", "edit"),
    ("d2", 40, 45, "L7", "verify"),
]


def judgement(system: str, doc: str, start: int, end: int, link: str, outcome: str, worker: str, **extra: object):
    row = {column: None for column in JUDGEMENT_COLUMNS}
    row.update(_mention(system, doc, start, end, link))
    row.update(
        {
            "study": "tiny",
            "chunk_id": f"{doc}#c0",
            "item_id": f"{doc}#c0|{system}",
            "task_key": f"{doc}-{system}",
            "mention_id": f"{system}:{doc}:{start}-{end}",
            "worker": worker,
            "outcome": outcome,
            "new_link": (link + "b") if outcome == "edit" else None,
            "deleted_region": False,
            "position": 0,
            "created_at": "2026-01-01T00:00:00Z",
            "lead_time": 1.0,
            "is_control": False,
            "expected_outcome": None,
        }
    )
    row.update(extra)
    return {c: row[c] for c in JUDGEMENT_COLUMNS}


def control(worker: str, outcome: str, expected: str, n: int):
    return judgement("GT", "ctl", 10 * n, 10 * n + 3, "C", outcome, worker, is_control=True, expected_outcome=expected)


@pytest.fixture
def tiny_mentions() -> pd.DataFrame:
    rows = [_mention("GT", d, s, e, link) for d, s, e, link, _ in GT_ROWS]
    rows += [_mention("S", d, s, e, link) for d, s, e, link, _ in S_ROWS]
    return pd.DataFrame(rows, columns=list(MENTION_COLUMNS))


@pytest.fixture
def tiny_judgements() -> pd.DataFrame:
    rows = [judgement("GT", d, s, e, link, outcome, "g") for d, s, e, link, outcome in GT_ROWS]
    rows += [judgement("S", d, s, e, link, outcome, "s") for d, s, e, link, outcome in S_ROWS]
    rows.append(judgement("S", "d2", 20, 25, "L5", "verify", "c"))  # the failing worker's only real judgement
    rows += [control("g", o, o, i) for i, o in enumerate(["verify", "edit", "remove"])]
    rows += [control("c", "verify", o, i) for i, o in enumerate(["verify", "edit", "verify"])]
    return pd.DataFrame(rows, columns=list(JUDGEMENT_COLUMNS))
