"""The study explorer: from every cell of the report to the annotations behind it, in their documents (issue 45).

:func:`write_explorer` writes four files into the report folder: ``explorer.html``, ``explorer.css`` and
``explorer.js`` (the page, package data of this module, the same for every study) and ``explorer-data.js`` (the
study: :mod:`posthoc.report.explorer_data`), loaded with ``<script src>``, so the page works opened as a file and
from any static server, with no network access (its Content-Security-Policy allows no connection at all). The
data is columnar: integer codes and index arrays as base64 little-endian int32, strings once in tables, every
cell a union of shared lists, so the paper-sized study's first screen and a 10,000-annotation cell stay fast
(``bench/explorer_bench.py``). The page builds every node with ``textContent`` (no HTML from the data) and makes
only http(s) links clickable.

:class:`CellLinks` gives the report's tables the link of each row's cell (``explorer.html#cell=rates.12``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final
from urllib.parse import quote

import numpy as np
import pandas as pd

from posthoc.arrays import Ints
from posthoc.atomic import write_bytes_atomic, write_text_atomic
from posthoc.report.explorer_cells import build_explorer_data
from posthoc.report.explorer_data import VERDICTS, AnnotationTable, ExplorerData, cell_id, documents_by_key
from posthoc.scores import Scores
from posthoc.tables import OUTCOMES, Documents, Judgements, Mentions

PAGE: Final = "explorer.html"
DATA: Final = "explorer-data.js"
ASSETS: Final = ("explorer.html", "explorer.css", "explorer.js")
__all__ = ["ASSETS", "DATA", "PAGE", "AnnotationTable", "CellLinks", "explorer_payload", "write_explorer"]


@dataclass(frozen=True)
class CellLinks:
    """The explorer link of each row of a score table shown in the report; ``page`` None: no links (a report
    without an explorer beside it).

    Examples:
        >>> import pandas as pd
        >>> CellLinks(PAGE).rows("rates", pd.DataFrame({"value": [0.5]}, index=[12]))
        ['explorer.html#cell=rates.12']
        >>> CellLinks().rows("rates", pd.DataFrame({"value": [0.5]})) is None
        True
    """

    page: str | None = None

    def href(self, cell: str) -> str | None:
        """The link to ``cell`` (an id of :mod:`posthoc.report.explorer_data`)."""
        return None if self.page is None else f"{self.page}#cell={quote(cell, safe='')}"

    def rows(self, table: str, frame: pd.DataFrame) -> list[str | None] | None:
        """The link of every row of ``frame`` (rows of score table ``table``, its index labels kept)."""
        if self.page is None:
            return None
        return [self.href(cell_id(table, label)) for label in frame.index]


NO_LINKS: Final = CellLinks()


def _b64(values: Ints | Sequence[int]) -> str:
    """``values`` as base64 of little-endian int32 (the page reads them as an ``Int32Array``)."""
    array = np.asarray(values, dtype=np.int64)
    if len(array) and (array.max() > 2**31 - 1 or array.min() < -(2**31)):
        raise ValueError("explorer data: a value does not fit in int32")
    return base64.b64encode(array.astype("<i4").tobytes()).decode("ascii")


def _present(values: pd.Series) -> pd.Series:
    """``values`` as strings, an empty one missing."""
    text = values.astype("string")
    return text.where(text != "")


def _codes(values: pd.Series, names: list[str] | None = None) -> tuple[Ints, list[str]]:
    """Integer codes of ``values`` (-1 for a missing or empty value) into ``names`` (default: the sorted values).

    Examples:
        >>> codes, names = _codes(pd.Series(["b", None, "a", "b", ""]))
        >>> codes.tolist(), names
        ([1, -1, 0, 1, -1], ['a', 'b'])
    """
    text = _present(values)
    known = sorted(text.dropna().unique().tolist()) if names is None else names
    codes = pd.Categorical(text, categories=known).codes.astype(np.intp)
    return codes, [str(name) for name in known]


def _csr(groups: Sequence[Ints]) -> tuple[str, str]:
    offsets = np.zeros(len(groups) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(g) for g in groups])
    items = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    return _b64(offsets), _b64(items)


def explorer_payload(data: ExplorerData, documents: Documents, *, title: str = "") -> dict[str, object]:
    """The JSON-able object ``explorer-data.js`` assigns (``window.POSTHOC_EXPLORER_DATA``)."""
    ann = data.annotations
    new_links = _present(data.judgement_new_link)
    links = sorted(set(_present(ann["link"]).dropna().unique().tolist())
                   | set(new_links.dropna().unique().tolist()))
    link_codes, new_link_codes = _codes(ann["link"], links)[0], _codes(new_links, links)[0]
    pairs = pd.MultiIndex.from_arrays([ann["dataset"].astype(str), ann["doc_id"].astype(str)])
    doc_of, doc_keys = pd.factorize(pairs, sort=True)
    texts = documents_by_key(documents)
    dataset_codes, datasets = _codes(ann["dataset"])
    system_codes, systems = _codes(ann["system"])
    origin_codes, origin_names = _codes(ann["origin"])
    origins = ["", *origin_names]
    list_names = list(data.lists)
    list_index = {name: i for i, name in enumerate(list_names)}
    cell_ids = list(data.cells)
    cell_offsets, cell_items = _csr([np.asarray([list_index[n] for n in data.cells[c]], dtype=np.int64)
                                     for c in cell_ids])
    list_offsets, list_items = _csr([data.lists[name] for name in list_names])
    return {
        "title": title, "datasets": datasets, "systems": systems, "workers": data.workers, "links": links,
        "verdicts": list(VERDICTS), "outcomes": list(OUTCOMES), "origins": origins,
        "docs": {"dataset": _b64(_codes(pd.Series(doc_keys.get_level_values(0)), datasets)[0]),
                 "id": [str(i) for i in doc_keys.get_level_values(1)],
                 "text": [texts.get((str(d), str(i))) for d, i in doc_keys]},
        "ann": {"dataset": _b64(dataset_codes), "doc": _b64(doc_of),
                "system": _b64(system_codes), "start": _b64(ann["start"].to_numpy()),
                "end": _b64(ann["end"].to_numpy()),
                "link": _b64(link_codes), "verdict": _b64(ann["verdict"].to_numpy()),
                "origin": _b64(origin_codes + 1)},
        "surface": ann["surface"].astype(str).tolist(),
        "judg": {"offsets": _b64(data.judgement_offsets), "worker": _b64(data.judgement_worker),
                 "outcome": _b64(data.judgement_outcome), "newLink": _b64(new_link_codes),
                 "flags": _b64(data.judgement_flags)},
        "lists": {"offsets": list_offsets, "items": list_items},
        "cells": {"ids": cell_ids, "labels": [data.labels[c] for c in cell_ids],
                  "tables": [data.tables[c] for c in cell_ids], "offsets": cell_offsets, "items": cell_items},
        "facets": [{"table": table, "column": column, "values": values, "ann": _b64(anns), "val": _b64(codes)}
                   for table, column, values, anns, codes in data.facets],
    }


def data_script(payload: dict[str, object]) -> str:
    """``explorer-data.js``: one assignment of ``payload`` as a JSON literal (ASCII only, so no character of the
    data, U+2028 included, can end the literal or the script)."""
    return "window.POSTHOC_EXPLORER_DATA = " + json.dumps(payload, ensure_ascii=True, separators=(",", ":"),
                                                          allow_nan=False) + ";\n"


def write_explorer(folder: str | Path, *, scores: Scores, judgements: Judgements, mentions: Mentions,
                   documents: Documents, annotation_tables: Sequence[AnnotationTable] = (),
                   cell_widths: pd.DataFrame | None = None) -> list[Path]:
    """Write the explorer into ``folder`` (the report's folder) and return the files written, relative to it.

    ``scores``: the study's :class:`~posthoc.scores.Scores` (its tables' rows are the cells);
    ``judgements``: every judgement scored (control rows included); ``mentions``: the source mentions, the ground
    truth included; ``documents``: the study's texts; ``annotation_tables``: more columns by annotation (error
    categories, Eaglet flags: :class:`~posthoc.report.explorer_data.AnnotationTable`), each one more filter and one
    cell per value (:func:`~posthoc.report.explorer_data.annotation_cell_id`); ``cell_widths``: the report's "Stop
    now or go on" table, its rows cells too (``cell_widths.<row>``). Every file is written atomically.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    data = build_explorer_data(scores, judgements, mentions, annotation_tables=annotation_tables,
                               cell_widths=cell_widths)
    payload = explorer_payload(data, documents, title=str(scores.summary.get("study", "")))
    write_text_atomic(target / DATA, data_script(payload))
    assets = resources.files("posthoc.report") / "static"
    for name in ASSETS:
        write_bytes_atomic(target / name, (assets / name).read_bytes())
    return [Path(name) for name in (*ASSETS, DATA)]

