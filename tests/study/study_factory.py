"""Synthetic corpora for the study tests: documents and mentions tables built with a seeded generator."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.tables import DOCUMENT_COLUMNS, MENTION_COLUMNS

ENTITIES = ("Paris", "Berlin", "Barack Obama", "東京", "Zoë", "Ångström", "São Paulo", "Nguyễn", "Κρήτη", "Léa 🎉")
FILLER = ("the", "a", "quick", "report", "said", "on", "with", "and", "café", "了", "😀", "e\u0301te\u0301",
          "👩\u200d💻")


def make_corpus(n_docs: int = 30, *, systems: tuple[str, ...] = ("GT", "E2E", "REL"), datasets: int = 3,
                seed: int = 0, words: tuple[int, int] = (20, 160)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(documents, mentions)``: texts of sentences with entity names; each system keeps ~75% of them,
    with its own links, so systems differ and every chunk tends to have annotations of several systems."""
    rng = np.random.default_rng(seed)
    doc_rows: list[tuple[str, str, str]] = []
    mention_rows: list[tuple[object, ...]] = []
    for d in range(n_docs):
        dataset = f"set{d % datasets}"
        doc_id = f"doc{d:04d}"
        text = ""
        spans: list[tuple[int, int, str]] = []
        n_words = int(rng.integers(words[0], words[1]))
        for w in range(n_words):
            if w:
                text += ". " if w % 12 == 0 else " "
            if rng.random() < 0.25:
                name = str(ENTITIES[int(rng.integers(len(ENTITIES)))])
                spans.append((len(text), len(text) + len(name), name))
                text += name
            else:
                text += str(FILLER[int(rng.integers(len(FILLER)))])
        text += "."
        doc_rows.append((dataset, doc_id, text))
        for system in systems:
            for start, end, name in spans:
                if rng.random() < 0.75:
                    link = f"https://en.wikipedia.org/wiki/{name.replace(' ', '_')}"
                    if system != "GT" and rng.random() < 0.2:
                        link += "_(disambiguation)"
                    mention_rows.append((dataset, doc_id, system, start, end, name, link, link, False))
    documents = pd.DataFrame(doc_rows, columns=list(DOCUMENT_COLUMNS))
    mentions = pd.DataFrame(mention_rows, columns=list(MENTION_COLUMNS))
    return documents, mentions
