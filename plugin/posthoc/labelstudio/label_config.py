"""A label config's tags, read in one place with Label Studio's own parser (tag names are never hard-coded).

Label Studio 1.23 (docs/label-studio-1.23.md) parses a project's XML with
``label_studio_sdk.label_interface.LabelInterface``; this module asks it two questions:

- :func:`region_tags` (:class:`RegionTags`): the tags pre-filled text regions use (the ``Labels`` on a
  ``Text``, the per-region ``TextArea`` showing the link, the per-region ``Choices`` or the ``Labels`` holding
  the decision), what the ML backend, study setup and the Eaglet review build and read regions with;
- :func:`verification_tags` (:class:`VerificationTags`): the four tags of a verification config (paper 000,
  section 2.1: verify / edit / remove a pre-filled link), what the export flattener and the score job read
  annotations with; stricter (exactly one of each), with its own error message naming ``where``.

Both take their tags from one cached reading of the XML (each control's kind, targets, values, ``perRegion`` and
``editable`` read once): Label Studio sends the same config with every request.
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


# ---- the one reading of a config's tags ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Control:
    """A control tag, read once: ``kind`` (its tag in lower case: ``labels``, ``choices``, ``textarea``, ...),
    ``to_name`` (the object tags it targets), ``values`` (its ``Label`` / ``Choice`` values), ``per_region``
    (``perRegion="true"``) and ``read_only`` (``editable="false"``)."""

    name: str
    kind: str
    to_name: tuple[str, ...]
    values: tuple[str, ...]
    per_region: bool
    read_only: bool

    @property
    def decides(self) -> bool:
        """Whether its values hold verify / edit / remove (the decision's tag)."""
        return set(OUTCOMES) <= set(self.values)


@dataclass(frozen=True)
class _Tags:
    """The tags of a config: its ``Text`` objects (``{name: value}``, e.g. ``$text``) and its controls."""

    texts: dict[str, str]
    controls: tuple[_Control, ...]

    def of_kind(self, kind: str) -> list[_Control]:
        """Its controls of tag ``kind`` (lower case), in config order."""
        return [c for c in self.controls if c.kind == kind]

    def names(self, kind: str, **wanted: bool) -> list[str]:
        """The names of its controls of tag ``kind`` whose flags (``decides``, ``per_region``, ``read_only``) are
        as ``wanted``."""
        return [c.name for c in self.of_kind(kind) if all(getattr(c, flag) == value for flag, value in wanted.items())]


def _attribute(tag: Any, name: str, default: str) -> str:
    return str(tag.attr.get(name, default)).lower()


@lru_cache(maxsize=32)
def _tags(config: str) -> _Tags:
    """The one reading of ``config``'s tags (cached; a parse error propagates, each reader words it)."""
    interface = _parse(config)
    texts = {obj.name: str(obj.value or "") for obj in interface.objects if obj.tag.lower() == "text"}
    controls = tuple(_Control(name=c.name, kind=c.tag.lower(), to_name=tuple(c.to_name or ()),
                              values=tuple(getattr(c, "labels", None) or ()),
                              per_region=_attribute(c, "perRegion", "") == "true",
                              read_only=_attribute(c, "editable", "true") == "false")
                     for c in interface.controls)
    return _Tags(texts=texts, controls=controls)


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


def label_interface(config: str) -> LabelInterface:
    """The parsed config (cached: Label Studio sends the same config with every request); :class:`PosthocInputError`
    when the XML does not parse."""
    try:
        return _parse(config)
    except Exception as exc:  # the SDK raises assorted parse errors on broken XML
        raise PosthocInputError(
            f"label_config: not a valid Label Studio config ({exc}); send the project's config"
        ) from exc


def region_tags(config: str) -> RegionTags:
    """The :class:`RegionTags` of ``config``; :class:`PosthocInputError` if it has no Labels on a Text tag."""
    label_interface(config)  # a config that does not parse fails here, in its words
    tags = _tags(config)
    labels_tag, to_name, text_key = _labels_on_text(tags)
    on_text = [c for c in tags.controls if to_name in c.to_name and c.per_region]
    areas = [c for c in on_text if c.kind == "textarea"]
    link_tag = next((c for c in areas if c.read_only), areas[0] if areas else None)
    return RegionTags(labels_from=labels_tag.name, to_name=to_name, text_key=text_key,
                      label_values=labels_tag.values, link_from=None if link_tag is None else link_tag.name,
                      decision_from=_decision_tag(labels_tag, [c for c in on_text if c.kind == "choices"]))


def _labels_on_text(tags: _Tags) -> tuple[_Control, str, str]:
    """The first Labels tag on a Text tag, that Text's name and its data key; :class:`PosthocInputError` if none."""
    labels = [c for c in tags.of_kind("labels") if any(n in tags.texts for n in c.to_name)]
    if not labels:
        raise PosthocInputError(
            "label_config: no <Labels> tag targets a <Text> tag; a config for pre-filled text regions needs one"
        )
    to_name = next(n for n in labels[0].to_name if n in tags.texts)
    value = tags.texts[to_name]
    if not value.startswith("$") or len(value) < 2:
        raise PosthocInputError(f"label_config: <Text name={to_name!r}> needs value=\"$field\" naming the task data")
    if not labels[0].values:
        raise PosthocInputError(f"label_config: <Labels name={labels[0].name!r}> has no <Label> values")
    return labels[0], to_name, value[1:]


def _decision_tag(labels_tag: _Control, choices: list[_Control]) -> str | None:
    """A per-region Choices with verify / edit / remove, else the Labels tag when its values hold them, else the
    first per-region Choices, else ``None``."""
    decided = [c for c in choices if c.decides]
    if decided:
        return decided[0].name
    if labels_tag.decides:
        return labels_tag.name
    return choices[0].name if choices else None


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
        tags = _tags(label_config)
    except Exception as exc:  # the SDK raises several types for bad XML
        raise PosthocInputError(f"{where}: not a valid Label Studio label config ({exc})") from exc
    labels = tags.names("labels")
    decisions = tags.names("choices", decides=True) or tags.names("labels", decides=True)  # else: the region's label
    read_only = tags.names("textarea", per_region=True, read_only=True)
    editable = tags.names("textarea", per_region=True, read_only=False)
    if len(labels) != 1 or len(decisions) != 1 or len(read_only) != 1 or len(editable) != 1:
        raise PosthocInputError(
            f"{where}: expected one <Labels>, one per-region <Choices> (or the <Labels> itself) with "
            f"{', '.join(OUTCOMES)}, one read-only "
            f"and one editable per-region <TextArea>; found labels={labels}, decision={decisions}, "
            f"link={read_only}, new_link={editable} (use label_configs/entity_verification.xml)"
        )
    return VerificationTags(labels=labels[0], decision=decisions[0], link=read_only[0], new_link=editable[0])
