"""Setup's prediction check (``posthoc study create``) compares each region's offsets *and* link with the manifest.

The predictions are the ML backend's own results (``posthoc.labelstudio.payloads.build_result`` on the bundled
entity verification config), read back the way setup reads a stored prediction.
"""

from __future__ import annotations

import pandas as pd

from posthoc.labelstudio.label_config import region_tags
from posthoc.labelstudio.payloads import build_result, prediction_regions, regions_differ
from posthoc.paths import label_config

TEXT = "Zoë met 王小明 👋🏽 in São Paulo."
MENTIONS = pd.DataFrame({"mention_id": ["a", "b", "c"], "start": [0, 8, 18], "end": [3, 11, 27],
                         "surface": ["Zoë", "王小明", "São Paulo"],
                         "link": ["https://en.wikipedia.org/wiki/Zo%C3%AB", "nil:Wang", ""]})


def _stored(mentions: pd.DataFrame) -> dict[str, tuple[int, int, str]]:
    prediction = {"result": build_result(mentions, TEXT, region_tags(label_config("entity_verification")))}
    return prediction_regions(prediction)


def _expected() -> dict[str, tuple[int, int, str]]:
    return {r.mention_id: (int(r.start), int(r.end), str(r.link)) for r in MENTIONS.itertuples(index=False)}


def test_the_backends_own_prediction_matches_the_manifest() -> None:
    got = _stored(MENTIONS)
    assert got["b"] == (8, 11, "nil:Wang")  # code-point offsets past CJK, links read from the link TextArea
    assert regions_differ(got, _expected(), links=True) == []


def test_a_prediction_with_another_link_is_caught() -> None:
    other = MENTIONS.assign(link=["https://en.wikipedia.org/wiki/Zo%C3%AB", "nil:Wang_Xiaoming", ""])
    got = _stored(other)
    assert regions_differ(got, _expected(), links=True) == ["b"]
    # the offsets alone agree: a check on offsets only (the old one) would have passed it
    assert regions_differ(got, _expected(), links=False) == []


def test_moved_missing_and_extra_regions_are_caught() -> None:
    got = _stored(MENTIONS.assign(start=[0, 9, 18], surface=None))  # one code point off
    assert regions_differ(got, _expected(), links=True) == ["b"]
    fewer = _stored(MENTIONS.iloc[:2])
    assert regions_differ(fewer, _expected(), links=True) == ["c"]
    assert regions_differ(_expected() | {"z": (1, 2, "x")}, _expected(), links=True) == ["z"]
