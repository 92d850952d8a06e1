"""label_configs/entity_verification.xml: Label Studio's own validation, LabelInterface, a real prediction."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
import requests
from label_studio_sdk.label_interface import LabelInterface

from posthoc.paths import label_config, label_configs_dir

CONFIGS = sorted(p.stem for p in label_configs_dir().glob("*.xml"))


def _validate(server, xml: str) -> requests.Response:
    return requests.post(f"{server.url}/api/projects/validate/", json={"label_config": xml},
                         headers={"Authorization": f"Token {server.token}"}, timeout=30)


@pytest.mark.labelstudio
@pytest.mark.parametrize("name", CONFIGS)
def test_every_config_passes_label_studio_validation(ls_server, name: str) -> None:
    response = _validate(ls_server, label_config(name))
    assert response.status_code in (200, 204), response.text


@pytest.mark.labelstudio
def test_validation_endpoint_rejects_a_broken_config(ls_server) -> None:
    broken = label_config("entity_verification").replace('toName="text" perRegion="true" required', 'toName="txt" '
                                                         'perRegion="true" required')
    assert broken != label_config("entity_verification")
    assert _validate(ls_server, broken).status_code == 400


@pytest.mark.parametrize("name", CONFIGS)
def test_every_config_parses_with_label_interface(name: str) -> None:
    interface = LabelInterface(label_config(name))
    assert interface.controls and interface.objects


def test_entity_verification_tags() -> None:
    interface = LabelInterface(label_config("entity_verification"))
    controls = {c.name: c for c in interface.controls}
    assert {"mention", "link", "undecided", "new_link"} <= set(controls)
    assert controls["mention"].tag == "Labels" and controls["mention"].to_name == ["text"]
    root = ElementTree.fromstring(label_config("entity_verification"))  # noqa: S314 - our own file
    labels = next(e for e in root.iter("Labels") if e.get("name") == "mention")
    # the decision is the region's label: pre-filled undecided (first value; key 4, named and explained rather
    # than left to Label Studio's automatic numbering: issue 29), then 1 / 2 / 3
    assert [(c.get("value"), c.get("hotkey")) for c in labels.iter("Label")] == [
        ("undecided", "4"), ("verify", "1"), ("edit", "2"), ("remove", "3")]
    assert "4 puts" in (next(labels.iter("Label")).get("hint") or "")
    assert len({c.get("background") for c in labels.iter("Label")}) == 4  # one colour per decision
    guard = controls["undecided"]  # blocks Submit while a region is still undecided
    assert guard.attr["perRegion"] == "true" and guard.attr["required"] == "true"
    assert guard.attr["whenLabelValue"] == "undecided" and "undecided" in guard.attr["requiredMessage"]
    assert not {"verify", "edit", "remove"} & set(guard.labels)
    text = next(e for e in root.iter("Text") if e.get("name") == "text")
    assert text.get("selectionEnabled") == "false"  # no new mentions (paper 000, section 2.1)
    assert text.get("showLabels") == "true"  # each decision written beside its mention, not only coloured
    assert controls["link"].attr["editable"] == "false" and controls["new_link"].attr["perRegion"] == "true"
    objects = {o.name: o for o in interface.objects}
    assert objects["text"].value == "$text" and objects["kb_pages"].tag == "HyperText"
    assert any(e.get("value") == "$batch_position" for e in root.iter("Header"))


def test_a_backend_style_prediction_validates() -> None:
    config = label_config("entity_verification")
    text = "Paris 🇫🇷 is in France."
    start = text.index("France")
    prediction = {"model_version": "posthoc-v1", "result": [
        {"id": "m1", "from_name": "mention", "to_name": "text", "type": "labels",
         "value": {"start": start, "end": start + 6, "text": "France", "labels": ["undecided"]}},
        {"id": "m1", "from_name": "link", "to_name": "text", "type": "textarea",
         "value": {"start": start, "end": start + 6, "text": ["https://en.wikipedia.org/wiki/France"]}},
    ]}
    interface = LabelInterface(config)
    assert interface.validate_prediction(prediction) is True
    wrong = {"model_version": "x", "result": [dict(prediction["result"][0], from_name="entity")]}
    assert interface.validate_prediction(wrong) is False
