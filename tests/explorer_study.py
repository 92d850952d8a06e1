"""A hand-built study for the explorer's tests: emoji, CJK and combining marks in the text, nested, touching and
overlapping spans, a NIL link, a hostile surface and link, k = 2 on one document, a control task and a worker who
fails it (excluded)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from posthoc.metrics import ScoringOptions, score_judgements
from posthoc.scores import Scores

WIKI = "https://en.wikipedia.org/wiki/"
ZOE = "Zoe\u0308"  # e and a combining diaeresis: two code points
TEXT_1 = "👩‍👩‍👧 " + ZOE + " visited 北京大学 and the Seine in Paris, Île-de-France."  # ZWJ family, combining ë
TEXT_2 = "<script>window.__pwned=1</script> met 🇫🇷 Macron in Lyon."
DOCUMENTS = pd.DataFrame([("news", "d1", TEXT_1), ("news", "d2", TEXT_2)], columns=["dataset", "doc_id", "text"])


def span(text: str, surface: str, nth: int = 0) -> tuple[int, int]:
    """Code-point offsets of the ``nth`` occurrence of ``surface`` in ``text`` (Python ``str`` indices)."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(surface, start + 1)
    return start, start + len(surface)


def _mention(doc: str, system: str, surface: str, link: str, *, nested: str | None = None) -> dict[str, Any]:
    text = TEXT_1 if doc == "d1" else TEXT_2
    start, end = span(text, surface)
    return {"dataset": "news", "doc_id": doc, "system": system, "start": start, "end": end, "surface": surface,
            "link": link, "link_original": link, "is_nil": link == "NIL"}


MENTIONS = pd.DataFrame([
    _mention("d1", "GT", ZOE, WIKI + ZOE),
    _mention("d1", "GT", "北京大学", WIKI + "Peking_University"),
    _mention("d1", "GT", "Paris", WIKI + "Paris"),
    _mention("d1", "GT", "Île-de-France", WIKI + "Île-de-France"),
    _mention("d1", "A", ZOE, WIKI + ZOE),                     # same span, same link as GT
    _mention("d1", "A", "北京", WIKI + "Beijing"),                  # nested in GT's span, other link
    _mention("d1", "A", "Seine", "NIL"),                           # no GT mention there, NIL
    _mention("d1", "A", "Paris, Île", WIKI + "Paris"),             # overlaps two GT mentions
    _mention("d1", "B", "北京大学", WIKI + "Peking_University"),
    _mention("d1", "B", "Paris", WIKI + "Paris_(mythology)"),      # same span, other link
    _mention("d1", "B", "Île-de-France", WIKI + "Île-de-France"),  # touches A's? no: B's own
    _mention("d2", "GT", "Macron", WIKI + "Emmanuel_Macron"),
    _mention("d2", "GT", "Lyon", "javascript:alert(1)"),
    _mention("d2", "A", "<script>window.__pwned=1</script>", WIKI + "Script"),
    _mention("d2", "A", "🇫🇷", WIKI + "France"),
    _mention("d2", "B", "Macron", WIKI + "Emmanuel_Macron"),
    _mention("d2", "B", "Lyon", "javascript:alert(1)"),
])


def _judgement(mention: pd.Series, worker: str, outcome: str, new_link: str | None = None, *,
               control: bool = False, expected: str | None = None) -> dict[str, Any]:
    return {"study": "hand", "dataset": mention["dataset"], "doc_id": mention["doc_id"],
            "chunk_id": f"{mention['doc_id']}#c0", "item_id": f"{mention['doc_id']}|{mention['system']}",
            "task_key": f"t-{mention['doc_id']}-{mention['system']}-{worker}", "mention_id": "m",
            "system": mention["system"], "start": mention["start"], "end": mention["end"],
            "surface": mention["surface"], "link": mention["link"], "worker": worker, "outcome": outcome,
            "new_link": new_link, "deleted_region": False, "position": 0, "created_at": "2026-01-01T00:00:00Z",
            "lead_time": 1.0, "is_control": control, "expected_outcome": expected}


#: outcome of each mention by its row in MENTIONS, worker w1 (and w2 on d2: k = 2 there)
OUTCOMES_W1 = ["verify", "verify", "edit", "remove", "verify", "remove", "verify", "verify", "verify", "verify",
               "verify", "verify", "remove", "remove", "verify", "verify", "verify"]
OUTCOMES_W2 = {11: "verify", 12: "verify", 13: "remove", 14: "edit", 15: "remove", 16: "verify"}


def judgements() -> pd.DataFrame:
    """Every judgement: w1 on all, w2 on document 2, controls of w1 (passed) and w9 (failed, then excluded)."""
    rows = []
    for i, mention in MENTIONS.iterrows():
        edit = WIKI + "Paris_Saint-Germain" if OUTCOMES_W1[int(i)] == "edit" else None
        rows.append(_judgement(mention, "w1", OUTCOMES_W1[int(i)], edit))
        if int(i) in OUTCOMES_W2:
            rows.append(_judgement(mention, "w2", OUTCOMES_W2[int(i)],
                                   WIKI + "France" if OUTCOMES_W2[int(i)] == "edit" else None))
    control = pd.Series({"dataset": "news", "doc_id": "control", "system": "GT", "start": 0, "end": 5,
                         "surface": "Paris", "link": WIKI + "Paris"})
    rows.append(_judgement(control, "w1", "verify", control=True, expected="verify"))
    rows.append(_judgement(control, "w9", "remove", control=True, expected="verify"))
    rows.append(_judgement(MENTIONS.iloc[0], "w9", "remove"))  # an excluded worker's judgement: never counted
    return pd.DataFrame(rows)


def scored() -> tuple[Scores, pd.DataFrame]:
    """The study's scores (few resamples) and its judgements."""
    table = judgements()
    return score_judgements(table, MENTIONS, options=ScoringOptions(n_resamples=20, interval="percentile")), table
