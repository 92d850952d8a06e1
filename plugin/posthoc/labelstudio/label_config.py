"""A label config's tags, read in one place with Label Studio's own parser (tag names are never hard-coded).

Label Studio 1.23 (docs/label-studio-1.23.md) parses a project's XML with
``label_studio_sdk.label_interface.LabelInterface``; this module asks it two questions:

- :func:`region_tags` (:class:`RegionTags`): the tags pre-filled text regions use (the ``Labels`` on a
  ``Text``, the per-region ``TextArea`` showing the link, the per-region ``Choices`` or the ``Labels`` holding
  the decision), what the ML backend, study setup and the Eaglet review build and read regions with;
- :func:`verification_tags` (:class:`VerificationTags`): the four tags of a verification config (paper 000,
  section 2.1: verify / edit / remove a pre-filled link), what the export flattener and the score job read
  annotations with; stricter (exactly one of each), with its own error message naming ``where``.

Both share one cached parse of the XML: Label Studio sends the same config with every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.client import label_interface as parse_label_config
from posthoc.tables import OUTCOMES

if TYPE_CHECKING:
    from posthoc.labelstudio.client import LabelInterface

__all__ = ["UNDECIDED", "RegionTags", "VerificationTags", "label_interface", "region_tags", "verification_tags"]


@lru_cache(maxsize=32)
def _parse(config: str) -> LabelInterface:
    """The SDK's parse of ``config`` (cached; a parse error propagates, each reader words it)."""
    return parse_label_config(config)


# ---- the tags of pre-filled text regions ----------------------------------------------------------------------


@dataclass(frozen=True)
class RegionTags:
    """The tags of a label config that pre-filled text regions use.

    ``labels_from``: the Labels tag; ``to_name``: the Text tag it targets; ``text_key``: the task
    data key of that Text tag (``$text`` -> ``text``); ``label_values``: its label values;
    ``link_from``: the per-region TextArea that shows the link (one with ``editable="false"`` if
    there is one, else the first per-region TextArea), ``None`` if the config has none;
    ``decision_from``: the tag holding verify / edit / remove: a per-region Choices with them, else the
    Labels tag when its values hold them (``entity_verification.xml``: the region's label is its decision,
    pre-filled with the first value, ``undecided``), else the first per-region Choices, ``None`` if none.
    """

    labels_from: str
    to_name: str
    text_key: str
    label_values: tuple[str, ...]
    link_from: str | None
    decision_from: str | None


def _per_region(tag: Any) -> bool:
    return str(tag.attr.get("perRegion", "")).lower() == "true"


def label_interface(config: str) -> LabelInterface:
    """The parsed config (cached: Label Studio sends the same config with every request); :class:`PosthocInputError`
    when the XML does not parse."""
    try:
        return _parse(config)
    except Exception as exc:  # the SDK raises assorted parse errors on broken XML
        raise PosthocInputError(
            f"label_config: not a valid Label Studio config ({exc}); send the project's config"
        ) from exc


@lru_cache(maxsize=32)
def region_tags(config: str) -> RegionTags:
    """The :class:`RegionTags` of ``config``; :class:`PosthocInputError` if it has no Labels on a Text tag."""
    interface = label_interface(config)
    texts = {obj.name: obj for obj in interface.objects if obj.tag.lower() == "text"}
    labels = [c for c in interface.controls if c.tag.lower() == "labels" and any(n in texts for n in c.to_name)]
    if not labels:
        raise PosthocInputError(
            "label_config: no <Labels> tag targets a <Text> tag; a config for pre-filled text regions needs one"
        )
    labels_tag = labels[0]
    to_name = next(n for n in labels_tag.to_name if n in texts)
    value = str(texts[to_name].value or "")
    if not value.startswith("$") or len(value) < 2:
        raise PosthocInputError(f"label_config: <Text name={to_name!r}> needs value=\"$field\" naming the task data")
    if not labels_tag.labels:
        raise PosthocInputError(f"label_config: <Labels name={labels_tag.name!r}> has no <Label> values")
    on_text = [c for c in interface.controls if to_name in c.to_name and _per_region(c)]
    areas = [c for c in on_text if c.tag.lower() == "textarea"]
    read_only = [c for c in areas if str(c.attr.get("editable", "true")).lower() == "false"]
    link_tag = (read_only or areas or [None])[0]
    choices = [c for c in on_text if c.tag.lower() == "choices"]
    outcomes = {"verify", "edit", "remove"}
    decided = [c for c in choices if outcomes <= set(c.labels or [])]
    decision_tag = (decided[0].name if decided else labels_tag.name if outcomes <= set(labels_tag.labels)
                    else choices[0].name if choices else None)
    return RegionTags(
        labels_from=labels_tag.name,
        to_name=to_name,
        text_key=value[1:],
        label_values=tuple(labels_tag.labels),
        link_from=None if link_tag is None else link_tag.name,
        decision_from=decision_tag,
    )


# ---- the tags of a verification config ----------------------------------------------------------------------

#: the label every pre-filled region starts with when the decision is the region's label
UNDECIDED = "undecided"


@dataclass(frozen=True)
class VerificationTags:
    """``from_name`` values of the regions' parts in a project's label config.

    ``labels``: the span (``<Labels>``); ``decision``: the tag holding verify / edit / remove, either a
    per-region ``<Choices>`` (configs before issue 13) or the ``<Labels>`` tag itself when its values
    include them (``entity_verification.xml``: the region's label is its decision, pre-filled as
    ``undecided``); ``link``: the read-only per-region ``<TextArea>`` showing the pre-filled link;
    ``new_link``: the per-region ``<TextArea>`` where an annotator types a corrected link.
    """

    labels: str
    decision: str
    link: str
    new_link: str

    @property
    def decision_in_labels(self) -> bool:
        """Whether the decision is the region's label (``labels`` item) rather than a ``choices`` item."""
        return self.decision == self.labels


def verification_tags(label_config: str, *, where: str = "label config") -> VerificationTags:
    """Parse ``label_config`` (XML) and name its verification tags; :class:`PosthocInputError` if absent."""
    try:
        interface = _parse(label_config)
    except Exception as exc:  # the SDK raises several types for bad XML
        raise PosthocInputError(f"{where}: not a valid Label Studio label config ({exc})") from exc
    labels = [c.name for c in interface.controls if c.tag == "Labels"]
    decisions = [
        c.name for c in interface.controls
        if c.tag == "Choices" and set(OUTCOMES) <= set(getattr(c, "labels", []) or [])
    ]
    if not decisions:  # the decision is the region's label
        decisions = [c.name for c in interface.controls
                     if c.tag == "Labels" and set(OUTCOMES) <= set(getattr(c, "labels", []) or [])]
    textareas = [c for c in interface.controls if c.tag == "TextArea" and str(c.attr.get("perRegion")) == "true"]
    read_only = [c.name for c in textareas if str(c.attr.get("editable", "true")).lower() == "false"]
    editable = [c.name for c in textareas if c.name not in read_only]
    if len(labels) != 1 or len(decisions) != 1 or len(read_only) != 1 or len(editable) != 1:
        raise PosthocInputError(
            f"{where}: expected one <Labels>, one per-region <Choices> (or the <Labels> itself) with "
            f"{', '.join(OUTCOMES)}, one read-only "
            f"and one editable per-region <TextArea>; found labels={labels}, decision={decisions}, "
            f"link={read_only}, new_link={editable} (use label_configs/entity_verification.xml)"
        )
    return VerificationTags(labels=labels[0], decision=decisions[0], link=read_only[0], new_link=editable[0])
