"""The one parser of result items into regions: a result list (annotation, prediction, draft) -> :class:`Region`.

Label Studio 1.23 (docs/label-studio-1.23.md, "Export") stores one region as several result items sharing an
``id``: the ``labels`` item with the span (``value: {start, end, text, labels}``, ``meta``), and one item per
per-region control (``choices``, ``textarea``, ``number``) holding that control's value. Paper 000, section 2.1:
a pre-filled region is one mention, its ``id`` the manifest's ``mention_id``, its link in a per-region TextArea.

:func:`parse_regions` groups the items by ``id`` (first appearance order) and reads each item once (a
:class:`Part`: tag, type, span, text, score) and the region's fields from them, through the accessors of
:mod:`posthoc.labelstudio.records`; every reader (setup's prediction check, the webhook store, the export
flattener, the Eaglet review, the predictor adapter, the simulated annotators, the ML backend's live check) takes
what it needs from the :class:`Region` and keeps its own checks and error messages.
The parser does not validate: an item that is not an object is skipped, an item without ``id`` is a region of
its own (``id`` ``None``), and a value of the wrong type is left out of the parsed fields (the raw items stay
in :attr:`Region.items`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from posthoc.labelstudio.records import (
    ResultItem,
    meta_link,
    record_score,
    region_choices,
    region_end,
    region_from_name,
    region_id,
    region_labels,
    region_origin,
    region_start,
    region_texts,
    region_type,
    region_value,
)
from posthoc.tables import OUTCOMES

__all__ = ["Part", "Region", "parse_regions"]


@dataclass(frozen=True)
class Part:
    """One result item of a region, read: its tag (``from_name``), ``type`` (``kind``), ``value.start`` /
    ``value.end`` and ``value.text`` as stored (``None`` / ``[]`` when absent: a reader checks their types and
    words its own error), and its ``score`` (a prediction's region; ``None`` if absent)."""

    from_name: str | None
    kind: str | None
    start: object
    end: object
    text: object
    score: object

    @property
    def has_span(self) -> bool:
        """Whether its value has a ``start`` (the span it marks; the items of one region repeat it)."""
        return self.start is not None


@dataclass(frozen=True)
class Region:
    """One region: its result items (in result order), each read (:attr:`parts`), and the fields read from them.

    ``start`` / ``end``: the last integer ``value.start`` / ``value.end`` of its items; ``text``: the
    ``labels`` item's ``value.text`` (the marked span) when a string; ``labels`` / ``label_from``: the last
    ``labels`` item's ``value.labels`` and tag; ``choices`` / ``texts``: the ``choices`` values and the
    ``textarea`` lines by tag (``from_name``); ``meta_link``: the ``labels`` item's ``meta.text[0]`` (the link
    a pre-fill shows in the info panel); ``decision``: the first of verify / edit / remove in its ``choices``
    items, else in its labels (``entity_verification.xml``: the region's label is its decision).
    """

    id: str | None
    items: tuple[ResultItem, ...]
    parts: tuple[Part, ...] = ()
    start: int | None = None
    end: int | None = None
    text: str | None = None
    labels: tuple[str, ...] = ()
    label_from: str | None = None
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    texts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    meta_link: str | None = None
    origin: str | None = None
    decision: str | None = None

    @property
    def has_value(self) -> bool:
        """Whether one of its items has a ``value`` object."""
        return any(isinstance(region_value(item), Mapping) for item in self.items)

    @property
    def spans(self) -> list[tuple[object, object]]:
        """``(value.start, value.end)`` as stored of each of its items that has a span, in result order (a region
        whose items disagree was moved or resized by hand)."""
        return [(part.start, part.end) for part in self.parts if part.has_span]

    def of_type(self, kind: str) -> list[ResultItem]:
        """Its items of ``type`` ``kind`` (``labels``, ``choices``, ``textarea``, ...), in result order."""
        return [item for item in self.items if region_type(item) == kind]

    def of_tag(self, from_name: str | None) -> list[ResultItem]:
        """Its items of tag ``from_name``, in result order."""
        return [item for item in self.items if region_from_name(item) == from_name]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _part(item: ResultItem) -> Part:
    return Part(from_name=region_from_name(item), kind=region_type(item), start=region_start(item),
                end=region_end(item), text=region_texts(item), score=record_score(item))


def _region(key: str | None, items: list[ResultItem]) -> Region:
    fields: dict[str, object] = {}
    labels: tuple[str, ...] = ()
    label_from: str | None = None
    choices: dict[str, tuple[str, ...]] = {}
    texts: dict[str, tuple[str, ...]] = {}
    decided: str | None = None
    parts = tuple(_part(item) for item in items)
    for item, part in zip(items, parts, strict=True):
        if not isinstance(region_value(item), Mapping):
            continue
        for bound, number in (("start", _int(part.start)), ("end", _int(part.end))):
            if number is not None:
                fields[bound] = number
        tag = str(part.from_name or "")
        if part.kind == "labels":
            if values := region_labels(item):
                labels, label_from = tuple(values), part.from_name
            if isinstance(part.text, str):
                fields["text"] = part.text
            fields["meta_link"] = meta_link(item)
        elif part.kind == "choices" and (chosen := region_choices(item)):
            choices[tag] = tuple(chosen)
            decided = decided or next((c for c in chosen if c in OUTCOMES), None)
        elif part.kind == "textarea":
            texts[tag] = tuple(str(v) for v in part.text) if isinstance(part.text, list) else (str(part.text),)
        if isinstance(origin := region_origin(item), str):
            fields["origin"] = origin
    decision = decided or next((v for v in labels if v in OUTCOMES), None)
    return Region(id=key, items=tuple(items), parts=parts, labels=labels, label_from=label_from, choices=choices,
                  texts=texts, decision=decision, **fields)  # type: ignore[arg-type]


def parse_regions(result: object, *, relations: bool = False) -> list[Region]:
    """The regions of a result list, in the order their first item appears (``[]`` when ``result`` is no list).

    ``relations``: keep ``relation`` items too (they have no ``id``; each is a region of its own)."""
    if not isinstance(result, list):
        return []
    grouped: dict[str, list[ResultItem]] = {}
    order: list[tuple[str | None, list[ResultItem]]] = []
    for raw in result:
        if not isinstance(raw, Mapping) or (not relations and region_type(raw) == "relation"):
            continue
        item = cast(ResultItem, raw)
        rid = region_id(item)
        if rid is None:
            order.append((None, [item]))
        elif (key := str(rid)) in grouped:
            grouped[key].append(item)
        else:
            grouped[key] = [item]
            order.append((key, grouped[key]))
    return [_region(key, items) for key, items in order]
