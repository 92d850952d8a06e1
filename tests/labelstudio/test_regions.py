"""posthoc.labelstudio.regions: one reading of a result list (each item's part, the region's fields) and
label_config's two tag readers on one reading of the config."""

from __future__ import annotations

import pytest

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.label_config import region_tags, verification_tags
from posthoc.labelstudio.regions import Part, parse_regions
from posthoc.paths import label_config

SPAN = {"start": 4, "end": 9, "text": "Tokyo"}
RESULT = [
    {"id": "m1", "type": "labels", "from_name": "label", "to_name": "text", "origin": "prediction", "score": 0.5,
     "value": {**SPAN, "labels": ["verify"]}, "meta": {"text": ["https://en.wikipedia.org/wiki/Tokyo"]}},
    {"id": "m1", "type": "textarea", "from_name": "link", "to_name": "text",
     "value": {**SPAN, "text": ["https://en.wikipedia.org/wiki/Tokyo"]}},
    {"id": "m2", "type": "labels", "from_name": "label", "to_name": "text", "value": {"start": 11, "end": 14,
                                                                                   "labels": "not a list"}},
    {"id": "m2", "type": "choices", "from_name": "decision", "value": {"start": 12, "end": 14, "choices": ["edit"]}},
    {"id": "m2", "type": "textarea", "from_name": "new_link", "value": {"start": 11, "end": 14}},
    {"type": "relation", "from_id": "m1", "to_id": "m2"},
    "not an item",
]


def test_each_item_is_read_once_into_its_part() -> None:
    first, second = parse_regions(RESULT)
    assert first.parts == (Part("label", "labels", 4, 9, "Tokyo", 0.5),
                           Part("link", "textarea", 4, 9, ["https://en.wikipedia.org/wiki/Tokyo"], None))
    assert [part.has_span for part in second.parts] == [True, True, True]
    assert second.spans == [(11, 14), (12, 14), (11, 14)]  # the choices item disagrees: a reader sees it moved


def test_the_region_fields_come_from_the_parts() -> None:
    first, second = parse_regions(RESULT)
    assert (first.id, first.start, first.end, first.text, first.labels, first.label_from) == (
        "m1", 4, 9, "Tokyo", ("verify",), "label")
    assert first.meta_link == "https://en.wikipedia.org/wiki/Tokyo" and first.origin == "prediction"
    assert first.texts == {"link": ("https://en.wikipedia.org/wiki/Tokyo",)} and first.decision == "verify"
    assert second.labels == () and second.label_from is None  # labels that are no list are no labels
    assert second.choices == {"decision": ("edit",)} and second.decision == "edit"
    assert second.texts == {"new_link": ()}  # a TextArea without text has no lines (not "None")
    assert [len(r.of_tag("label")) for r in (first, second)] == [1, 1]


def test_relations_are_kept_only_when_asked() -> None:
    assert [r.id for r in parse_regions(RESULT)] == ["m1", "m2"]
    with_relations = parse_regions(RESULT, relations=True)
    assert [r.id for r in with_relations] == ["m1", "m2", None]
    assert with_relations[-1].parts[0].kind == "relation" and not with_relations[-1].spans
    assert parse_regions({"result": RESULT}) == []


@pytest.mark.parametrize("name", ["entity_verification"], ids=["entity_verification.xml"])
def test_region_and_verification_tags_name_the_same_tags(name: str) -> None:
    config = label_config(name)
    regions, verification = region_tags(config), verification_tags(config)
    assert (regions.labels_from, regions.link_from, regions.decision_from) == (
        verification.labels, verification.link, verification.decision)
    assert verification.new_link not in (regions.link_from, regions.labels_from)


def test_a_config_without_the_verification_tags_names_what_it_found() -> None:
    config = label_config("rating")
    with pytest.raises(PosthocInputError, match=r"^rating config: expected one <Labels>.*found labels=\[\]"):
        verification_tags(config, where="rating config")
    with pytest.raises(PosthocInputError, match="no <Labels> tag targets a <Text> tag"):
        region_tags(config)
