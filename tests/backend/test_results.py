"""Result lists built from a mentions frame and a label config (tag names read from the config)."""

from __future__ import annotations

import pandas as pd
import pytest
from label_studio_sdk.label_interface import LabelInterface

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.label_config import region_tags
from posthoc.labelstudio.payloads import build_result, validation_errors

OTHER_CONFIG = """<View>
  <Text name="doc" value="$body"/>
  <TextArea name="note" toName="doc" perRegion="true" rows="1"/>
  <Labels name="span" toName="doc"><Label value="Flagged"/><Label value="Other"/></Labels>
  <TextArea name="shown" toName="doc" perRegion="true" editable="false"/>
  <Choices name="verdict" toName="doc" perRegion="true"><Choice value="accept"/><Choice value="reject"/></Choices>
</View>"""


def test_tags_come_from_the_entity_verification_config(config: str) -> None:
    tags = region_tags(config)
    assert (tags.labels_from, tags.to_name, tags.text_key) == ("mention", "text", "text")
    assert (tags.link_from, tags.decision_from) == ("link", "mention")
    assert tags.label_values == ("undecided", "verify", "edit", "remove")  # pre-filled as the first: undecided


def test_tags_of_another_config_prefer_the_read_only_textarea() -> None:
    tags = region_tags(OTHER_CONFIG)
    assert (tags.labels_from, tags.to_name, tags.text_key) == ("span", "doc", "body")
    assert (tags.link_from, tags.decision_from, tags.label_values) == ("shown", "verdict", ("Flagged", "Other"))


def test_result_on_another_config_is_valid_and_shares_ids() -> None:
    text = "Zoë met 王小明 👋🏽 in São Paulo."
    mentions = pd.DataFrame({"mention_id": ["a", "b", "c"], "start": [0, 8, 18], "end": [3, 11, 27],
                             "surface": ["Zoë", "王小明", "São Paulo"], "link": ["L:Zoë", "L:Wang", None],
                             "label": ["Other", None, "Flagged"]})
    tags = region_tags(OTHER_CONFIG)
    result = build_result(mentions, text, tags)
    assert validation_errors({"result": result}, OTHER_CONFIG) == []
    assert LabelInterface(OTHER_CONFIG).validate_prediction({"result": result}, return_errors=True) == []
    assert [(r["id"], r["type"], r["from_name"]) for r in result] == [
        ("a", "labels", "span"), ("a", "textarea", "shown"), ("b", "labels", "span"), ("b", "textarea", "shown"),
        ("c", "labels", "span"), ("c", "textarea", "shown")]
    labels = [r["value"]["labels"] for r in result if r["type"] == "labels"]
    assert labels == [["Other"], ["Flagged"], ["Flagged"]]
    assert [r["value"]["text"] for r in result if r["type"] == "labels"] == ["Zoë", "王小明", "São Paulo"]
    assert result[-1]["value"]["text"] == [""]  # a missing link is shown as an empty box, not "None"


@pytest.mark.parametrize(("start", "end", "surface"), [(-1, 3, None), (3, 3, None), (0, 99, None), (0, 3, "Zoe")],
                         ids=["start before the text", "empty span", "end after the text", "surface not the text"])
def test_bad_offsets_or_surfaces_are_input_errors(config: str, start: int, end: int, surface: str | None) -> None:
    mentions = [{"mention_id": "m1", "start": start, "end": end, "surface": surface, "link": "x"}]
    with pytest.raises(PosthocInputError, match="m1"):
        build_result(mentions, "Zoë met Ann.", region_tags(config))


def test_configs_without_text_regions_are_input_errors() -> None:
    with pytest.raises(PosthocInputError, match="Labels"):
        region_tags('<View><Text name="t" value="$t"/><Choices name="c" toName="t"><Choice value="a"/></Choices>'
                    "</View>")
    with pytest.raises(PosthocInputError, match="value"):
        region_tags('<View><Text name="t" value="fixed"/><Labels name="l" toName="t"><Label value="A"/></Labels>'
                    "</View>")


def test_validation_reports_labels_the_config_lacks(config: str) -> None:
    result = build_result([{"mention_id": "m", "start": 0, "end": 3, "link": "x", "label": "Person"}], "Ann",
                          region_tags(config))
    errors = validation_errors({"result": result}, config)
    assert errors and "Person" in errors[0]


def _region_configs() -> list[str]:
    from posthoc.paths import label_configs_dir

    names = []
    for path in sorted(label_configs_dir().glob("*.xml")):
        try:
            region_tags(path.read_text(encoding="utf-8"))
        except PosthocInputError:
            continue
        names.append(path.stem)
    return names


@pytest.mark.parametrize("name", _region_configs())
def test_every_region_config_of_the_project_gets_valid_predictions(name: str) -> None:
    from posthoc.paths import label_config

    config = label_config(name)
    tags = region_tags(config)
    text = "Ça va? 🇧🇪 Brussels and 北京."
    rows = [{"mention_id": f"m{i}", "start": text.index(s), "end": text.index(s) + len(s), "surface": s,
             "link": f"https://en.wikipedia.org/wiki/{s}", "label": tags.label_values[-1]}
            for i, s in enumerate(["Brussels", "北京"])]
    result = build_result(rows, text, tags)
    assert validation_errors({"result": result}, config) == []
    assert {r["value"]["labels"][0] for r in result if r["type"] == "labels"} == {tags.label_values[-1]}
