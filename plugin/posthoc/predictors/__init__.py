"""Predictors: the models that pre-fill text in no manifest, and that ``posthoc predict`` runs over a corpus.

See :mod:`posthoc.predictors.base` (the interface), :mod:`.registry` (choosing one by name) and the
built-ins :mod:`.stored` (``manifest``, ``dictionary``), :mod:`.rel`, :mod:`.nif` and :mod:`.spacy_linker`.
"""

from __future__ import annotations

from posthoc.predictors.base import (
    LinkerModel,
    PredictedMention,
    PredictorAnswerError,
    PredictorServiceError,
    TextLinker,
    call_model,
    mentions_of_prediction,
)
from posthoc.predictors.registry import BUILT_IN, ModelFactory, PredictorSpec, load_class

__all__ = ["BUILT_IN", "LinkerModel", "ModelFactory", "PredictedMention", "PredictorAnswerError",
           "PredictorServiceError", "PredictorSpec", "TextLinker", "call_model", "load_class",
           "mentions_of_prediction"]
