"""One module per error type of paper 003 (Sect. 3.4), each a configurable, independent rule."""

from posthoc.eaglet.rules.base import Annotation, CheckContext, Rule
from posthoc.eaglet.rules.combined_marking import CombinedMarkingRule
from posthoc.eaglet.rules.inconsistent_marking import InconsistentMarkingRule
from posthoc.eaglet.rules.long_description import LongDescriptionRule
from posthoc.eaglet.rules.missing_entities import MissingEntitiesRule
from posthoc.eaglet.rules.overlapping import OverlappingRule
from posthoc.eaglet.rules.positioning import PositioningRule
from posthoc.eaglet.rules.uri import UriRule

__all__ = [
    "Annotation",
    "CheckContext",
    "CombinedMarkingRule",
    "InconsistentMarkingRule",
    "LongDescriptionRule",
    "MissingEntitiesRule",
    "OverlappingRule",
    "PositioningRule",
    "Rule",
    "UriRule",
]
