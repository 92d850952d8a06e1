"""The tag names of a verification label config, found with Label Studio's own parser (never hard-coded)."""

from __future__ import annotations

from dataclasses import dataclass

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.client import label_interface
from posthoc.tables import OUTCOMES

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
        interface = label_interface(label_config)
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
