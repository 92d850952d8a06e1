"""Label Studio's prediction and result JSON: built from a mentions frame and a label config, and read back.

The one module that writes the result lists Label Studio stores (the ML backend's ``/predict`` answers and the
predictions ``posthoc study create`` imports inline are both :func:`manifest_prediction`) and reads a
prediction's regions back (:func:`prediction_regions`, what setup checks).

Tag names are never hard-coded: :func:`posthoc.labelstudio.label_config.region_tags` reads them from the label
config with ``label_studio_sdk.label_interface.LabelInterface`` (the ``Labels`` tag that targets a ``Text``
tag, the per-region ``TextArea`` that shows the pre-filled link, the per-region ``Choices`` that
holds the decision), so the same builder serves ``entity_verification.xml``, ``gold_review.xml``
or any config of that shape.

One pre-filled mention becomes (Label Studio 1.23, see docs/label-studio-1.23.md):

- a ``labels`` item ``{from_name: <Labels>, to_name: <Text>, type: "labels", value: {start, end,
  text: text[start:end], labels: [<label>]}, meta: {text: [<link>]}}`` and
- a ``textarea`` item ``{from_name: <link TextArea>, to_name: <Text>, type: "textarea",
  value: {start, end, text: [<link>]}}``

sharing one result ``id``: the manifest's ``mention_id`` (the export joins judgements on it).
Offsets are code points; ``value.text`` is always ``text[start:end]``. No score is ever set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.label_config import RegionTags, label_interface, region_tags
from posthoc.labelstudio.records import region_texts, region_type, result_items
from posthoc.labelstudio.regions import parse_regions

#: The one neutral model version of every prediction, whichever system produced it (blind study).
MODEL_VERSION: Final = "posthoc-v1"
#: The task data field holding the opaque manifest key.
TASK_KEY_FIELD: Final = "task_key"


class RequestError(Exception):
    """A request Label Studio (or anyone) sent that the backend cannot answer; becomes a 4xx JSON reply."""

    def __init__(self, message: str, *, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"error": self.message, "field": self.field}


def build_result(mentions: pd.DataFrame | Sequence[Mapping[str, Any]], text: str, tags: RegionTags, *,
                 label: str | None = None) -> list[dict[str, Any]]:
    """The Label Studio result list pre-filling ``mentions`` on ``text``.

    ``mentions``: a frame (or a list of row mappings) with ``mention_id, start, end, link``
    (``surface`` optional: when present it must equal ``text[start:end]``; ``label`` optional: one
    of the config's label values). ``label`` is the label of every region without a ``label`` value
    (default: the Labels tag's first value). Raises :class:`PosthocInputError` naming the mention
    when an offset is outside ``0 <= start < end <= len(text)`` or the surface differs from the text.
    """
    default_label = label if label is not None else tags.label_values[0]
    if default_label not in tags.label_values:
        raise PosthocInputError(f"label {default_label!r} is not a value of <Labels name={tags.labels_from!r}>")
    rows: Sequence[Mapping[str, Any]] = (
        mentions.to_dict("records") if isinstance(mentions, pd.DataFrame) else mentions  # type: ignore[assignment]
    )
    length = len(text)
    result: list[dict[str, Any]] = []
    for row in rows:
        mention_id = str(row["mention_id"])
        start, end = int(row["start"]), int(row["end"])
        if not 0 <= start < end <= length:
            raise PosthocInputError(
                f"mention {mention_id}: offsets {start}..{end} are outside the text (length {length}); "
                "rebuild the manifest from the same corpus"
            )
        span = text[start:end]
        surface = row.get("surface")
        if isinstance(surface, str) and surface != span:
            raise PosthocInputError(
                f"mention {mention_id}: surface {surface!r} differs from text[{start}:{end}] = {span!r}; "
                "rebuild the manifest from the same corpus"
            )
        region_label = row.get("label")
        if not isinstance(region_label, str) or not region_label:
            region_label = default_label
        link = row.get("link")
        link = link if isinstance(link, str) else ""
        result.append(
            {
                "id": mention_id,
                "from_name": tags.labels_from,
                "to_name": tags.to_name,
                "type": "labels",
                "value": {"start": start, "end": end, "text": span, "labels": [region_label]},
                "meta": {"text": [link]},
            }
        )
        if tags.link_from is not None:
            result.append(
                {
                    "id": mention_id,
                    "from_name": tags.link_from,
                    "to_name": tags.to_name,
                    "type": "textarea",
                    "value": {"start": start, "end": end, "text": [link]},
                }
            )
    return result


def validation_errors(prediction: dict[str, Any], config: str) -> list[str]:
    """Label Studio SDK's checks of ``prediction`` against ``config`` (empty when valid)."""
    # the SDK's validate_prediction is unannotated
    errors = label_interface(config).validate_prediction(prediction, return_errors=True)  # type: ignore[no-untyped-call]
    return list(errors) if isinstance(errors, list) else []


class PredictionMismatch(PosthocInputError):
    """A built prediction the label config rejects (``errors``: the SDK's messages)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(f"the prediction does not fit the label config: {'; '.join(errors[:3])}")
        self.errors = errors


def manifest_prediction(mentions: pd.DataFrame | Sequence[Mapping[str, Any]], text: str, config: str, *,
                        model_version: str, validate: bool = True) -> dict[str, Any]:
    """The prediction pre-filling ``mentions`` on ``text``: ``{"result": [...], "model_version"}``, no score.

    What the ML backend answers for a manifest task and what study setup imports with the task, so both are the
    same JSON. PosthocInputError naming the mention for bad offsets; :class:`PredictionMismatch` when the
    label config rejects the result (``validate=False`` skips only that check, the SDK's
    ``validate_prediction``, ~0.2 ms a task: a caller that built many predictions against one config checks
    one of them, as their tags, types and labels are the same; offsets and surfaces are checked for every one)."""
    prediction = {"result": build_result(mentions, text, region_tags(config)), "model_version": model_version}
    errors = validation_errors(prediction, config) if validate else []
    if errors:
        raise PredictionMismatch(errors)
    return prediction


Regions = dict[str, tuple[int, int, str]]


def prediction_regions(prediction: Mapping[str, Any]) -> Regions:
    """``{result id: (start, end, link)}`` of a stored prediction's labelled regions (the link: ``value.text[0]``
    of its last per-region TextArea item, ``""`` without one)."""
    regions: dict[str, tuple[int, int, str]] = {}
    for region in parse_regions(result_items(prediction)):
        if not region.of_type("labels"):
            continue
        if region.start is None or region.end is None:
            raise PosthocInputError(f"prediction region {region.id}: no value.start / value.end")
        areas = region.of_type("textarea")
        link = str((region_texts(areas[-1]) or [""])[0]) if areas else ""
        regions[str(region.id)] = (region.start, region.end, link)
    return regions


def has_links(prediction: Mapping[str, Any]) -> bool:
    """Whether a prediction carries links (per-region TextArea items)."""
    return any(region_type(item) == "textarea" for item in result_items(prediction))


def regions_differ(got: Regions, expected: Regions, *, links: bool) -> list[str]:
    """Region ids whose offsets (and, with ``links``, link) differ from the manifest, or are missing / extra."""
    width = 3 if links else 2
    return sorted(k for k in set(got) | set(expected) if got.get(k, ())[:width] != expected.get(k, ())[:width])
