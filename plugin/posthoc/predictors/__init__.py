"""Predictors: the models that pre-fill text in no manifest, and that ``posthoc predict`` runs over a corpus.

- :mod:`.base`: the interface (``TextLinker``, ``PredictModel``, ``LinkerModel``) and :func:`call_model`, which
  reads any label-studio-ml answer form back as predictions;
- :mod:`.registry`: a predictor chosen by name: one ``Predictor`` entry a built-in (``PREDICTORS``), one
  ``Setting`` a setting (``SETTINGS``, from which both commands make their options), ``PredictorSpec``,
  ``ModelFactory``;
- the built-ins: :mod:`.stored` (``manifest``, ``dictionary`` on :mod:`.linker`'s dictionary linker),
  :mod:`.rel`, :mod:`.nif` (services, called through :mod:`.http`) and :mod:`.spacy_linker`;
- :mod:`.run`: ``posthoc predict``'s job, a predictor over a corpus into one system's JSONL.
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
