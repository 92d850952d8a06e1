"""The one parser of result items into regions: a result list (annotation, prediction, draft) -> :class:`Region`.

Label Studio 1.23 (docs/label-studio-1.23.md, "Export") stores one region as several result items sharing an
``id``: the ``labels`` item with the span (``value: {start, end, text, labels}``, ``meta``), and one item per
per-region control (``choices``, ``textarea``, ``number``) holding that control's value. Paper 000, section 2.1:
a pre-filled region is one mention, its ``id`` the manifest's ``mention_id``, its link in a per-region TextArea.

:func:`parse_regions` groups the items by ``id`` (first appearance order) and reads each region's parts once;
every reader (setup's prediction check, the webhook store, the export flattener, the Eaglet review, the
predictor adapter) takes what it needs from the :class:`Region` and keeps its own checks and error messages.
The parser does not validate: an item that is not an object is skipped, an item without ``id`` is a region of
its own (``id`` ``None``), and a value of the wrong type is left out of the parsed fields (the raw items stay
in :attr:`Region.items`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from posthoc.labelstudio.records import (
    RegionValue,
    ResultItem,
    region_from_name,
    region_id,
    region_type,
    region_value,
)
from posthoc.tables import OUTCOMES

__all__ = ["Region", "meta_link", "parse_regions"]


@dataclass(frozen=True)
class Region:
    """One region: its result items (in result order) and the fields read from them.

    ``start`` / ``end``: the last integer ``value.start`` / ``value.end`` of its items; ``text``: the
    ``labels`` item's ``value.text`` (the marked span) when a string; ``labels`` / ``label_from``: the last
    ``labels`` item's ``value.labels`` and tag; ``choices`` / ``texts``: the ``choices`` values and the
    ``textarea`` lines by tag (``from_name``); ``meta_link``: the ``labels`` item's ``meta.text[0]`` (the link
    a pre-fill shows in the info panel); ``decision``: the first of verify / edit / remove in its ``choices``
    items, else in its labels (``entity_verification.xml``: the region's label is its decision).
    """

    id: str | None
    items: tuple[ResultItem, ...]
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

    def of_type(self, kind: str) -> list[ResultItem]:
        """Its items of ``type`` ``kind`` (``labels``, ``choices``, ``textarea``, ...), in result order."""
        return [item for item in self.items if region_type(item) == kind]

    def by_tag(self) -> dict[str, ResultItem]:
        """``{str(from_name): item}`` of its items (the last item of a tag wins)."""
        return {str(region_from_name(item)): item for item in self.items}

    def item(self, from_name: str | None) -> ResultItem | None:
        """Its last item of tag ``from_name``, ``None`` if it has none."""
        return next((item for item in reversed(self.items) if region_from_name(item) == from_name), None)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def meta_link(item: ResultItem) -> str | None:
    """``meta.text[0]`` of a result item (the link a pre-filled ``labels`` item shows), ``None`` without one."""
    meta = item.get("meta")
    texts = meta.get("text") if isinstance(meta, Mapping) else None
    return str(texts[0]) if isinstance(texts, list) and texts else None


def _region(key: str | None, items: list[ResultItem]) -> Region:
    fields: dict[str, object] = {}
    labels: tuple[str, ...] = ()
    label_from: str | None = None
    choices: dict[str, tuple[str, ...]] = {}
    texts: dict[str, tuple[str, ...]] = {}
    decided: str | None = None
    for item in items:
        value: RegionValue | None = region_value(item)
        if not isinstance(value, Mapping):
            continue
        for bound in ("start", "end"):
            if (number := _int(value.get(bound))) is not None:
                fields[bound] = number
        kind, tag = region_type(item), str(region_from_name(item, ""))
        if kind == "labels":
            if isinstance(value.get("labels"), list):
                labels, label_from = tuple(str(v) for v in value.get("labels") or []), region_from_name(item)
            if isinstance(value.get("text"), str):
                fields["text"] = value.get("text")
            fields["meta_link"] = meta_link(item)
        elif kind == "choices" and isinstance(value.get("choices"), list):
            choices[tag] = tuple(str(v) for v in value.get("choices") or [])
            decided = decided or next((c for c in choices[tag] if c in OUTCOMES), None)
        elif kind == "textarea":
            text = value.get("text")
            texts[tag] = tuple(str(v) for v in text) if isinstance(text, list) else (str(text),)
        origin = item.get("origin")
        if isinstance(origin, str):
            fields["origin"] = origin
    decision = decided or next((v for v in labels if v in OUTCOMES), None)
    return Region(id=key, items=tuple(items), labels=labels, label_from=label_from, choices=choices, texts=texts,
                  decision=decision, **fields)  # type: ignore[arg-type]


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
