"""Model classes written the way label-studio-ml models are, named by import path in the tests.

``HandWrittenModel`` follows label-studio-ml 2's ``LabelStudioMLBase`` (github.com/HumanSignal/label-studio-ml-backend,
label_studio_ml/model.py): ``__init__(project_id=None, label_config=None)`` then ``setup()``,
``predict(tasks, context=None, **kwargs)`` answering a ``ModelResponse``-like object whose ``predictions``
carry a score and the model's own version (the backend must drop both). ``RealLSMLModel`` subclasses the
real ``label_studio_ml.model.LabelStudioMLBase`` of PyPI's label-studio-ml 1.0.9 when it imports (installed
with ``--no-deps`` beside Flask 3; its ``__init__(label_config=None, train_output=None, **kwargs)`` parses the
config into ``parsed_label_config``) and answers a plain list, as 1.x models do.

``SDKScoredModel`` / ``SDKUnscoredModel`` answer as current label-studio-ml-backend models do on
label-studio-sdk 2.1.2: a ``ModelResponse`` (label_studio_ml/response.py: a pydantic ``BaseModel`` with
``model_version: Optional[str] = None`` and ``predictions: List[Union[List[PredictionValue], PredictionValue]]``,
its ``set_version`` filling each prediction's unset ``model_version``) of the SDK's real ``PredictionValue``
(label_studio_sdk/label_interface/objects.py: ``score: Optional[float] = 0.00``); one gives ``score=``, the
other none, so the SDK fills in 0.0 that the model never said.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, ClassVar

from label_studio_sdk.label_interface.objects import PredictionValue
from pydantic import BaseModel

from predictors.conftest import ALIASES
from predictors.standins import find_aliases


def regions(text: str, from_name: str, to_name: str, link_name: str | None, label: str) -> list[dict[str, Any]]:
    """Label Studio regions of the alias matches in ``text`` (what such a model would build)."""
    result: list[dict[str, Any]] = []
    for number, (start, end, surface, title) in enumerate(find_aliases(text, ALIASES)):
        result.append({"id": f"m{number}", "from_name": from_name, "to_name": to_name, "type": "labels",
                       "value": {"start": start, "end": end, "text": surface, "labels": [label]},
                       "score": 0.9})
        if link_name:
            result.append({"id": f"m{number}", "from_name": link_name, "to_name": to_name, "type": "textarea",
                           "value": {"start": start, "end": end, "text": [title]}})
    return result


def config_names(label_config: str) -> tuple[str, str, str, str | None, str]:
    """(labels from_name, text to_name, text data key, per-region textarea name, first label) from the XML."""
    root = ET.fromstring(label_config)  # noqa: S314 (the project's own config)
    text = next(el for el in root.iter() if el.tag == "Text")
    labels = next(el for el in root.iter() if el.tag == "Labels")
    area = next((el for el in root.iter() if el.tag == "TextArea" and el.get("perRegion") == "true"), None)
    first = next(el for el in labels.iter() if el.tag == "Label").get("value", "")
    return labels.get("name", ""), text.get("name", ""), text.get("value", "$text")[1:], \
        None if area is None else area.get("name"), first


class ModelResponseLike:
    """Shaped like ``label_studio_ml.response.ModelResponse``: ``model_version`` and ``predictions``."""

    def __init__(self, predictions: list[dict[str, Any]], model_version: str) -> None:
        self.predictions = predictions
        self.model_version = model_version


class HandWrittenBase:
    """The shape of label-studio-ml 2's LabelStudioMLBase (no cache, no Label Studio client)."""

    def __init__(self, project_id: str | None = None, label_config: str | None = None) -> None:
        self.project_id = project_id or ""
        self.label_config = label_config
        self.model_version = "0.0.1"
        self.setup()

    def setup(self) -> None:
        pass

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: Any) -> Any:
        raise NotImplementedError


class HandWrittenModel(HandWrittenBase):
    """Alias matching as a label-studio-ml-style model."""

    calls: ClassVar[list[int]] = []

    def setup(self) -> None:
        self.model_version = "alias-model-0.3"

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: Any) -> ModelResponseLike:
        assert self.label_config is not None
        from_name, to_name, key, link, label = config_names(self.label_config)
        HandWrittenModel.calls.append(len(tasks))
        predictions = [{"result": regions(task["data"][key], from_name, to_name, link, label), "score": 0.5,
                        "model_version": self.model_version} for task in tasks]
        return ModelResponseLike(predictions, self.model_version)


class OffTextModel(HandWrittenBase):
    """A model whose regions point outside the text (the backend must refuse them)."""

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: Any) -> list[dict[str, Any]]:
        assert self.label_config is not None
        from_name, to_name, key, _, label = config_names(self.label_config)
        return [{"result": [{"id": "x", "from_name": from_name, "to_name": to_name, "type": "labels",
                             "value": {"start": 0, "end": len(task["data"][key]) + 5, "labels": [label]}}]}
                for task in tasks]


try:
    from label_studio_ml.model import LabelStudioMLBase
except Exception:  # label-studio-ml is optional (installed with --no-deps); the test using it skips
    LabelStudioMLBase = None

if LabelStudioMLBase is not None:

    class RealLSMLModel(LabelStudioMLBase):  # type: ignore[misc, valid-type]
        """A real label-studio-ml (1.0.9) subclass, written as its docs show."""

        def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                    **kwargs: Any) -> list[dict[str, Any]]:
            from_name, info = next((name, info) for name, info in self.parsed_label_config.items()
                                   if info["type"] == "Labels")
            to_name, key = info["to_name"][0], info["inputs"][0]["value"]
            link = next((name for name, item in self.parsed_label_config.items() if item["type"] == "TextArea"), None)
            label = info["labels"][0]
            return [{"result": regions(task["data"][key], from_name, to_name, link, label), "score": 0.7,
                     "model_version": "real-1.0"} for task in tasks]


class ModelResponse(BaseModel):  # label_studio_ml/response.py (GitHub main), which PyPI's 1.0.9 lacks
    model_config = {"protected_namespaces": ()}
    model_version: str | None = None
    predictions: list[list[PredictionValue] | PredictionValue]  # type: ignore[valid-type]

    def set_version(self, version: str) -> None:
        self.model_version = version
        for prediction in self.predictions:
            for item in prediction if isinstance(prediction, list) else [prediction]:
                if not item.model_version:
                    item.model_version = version

class SDKUnscoredModel(HandWrittenBase):
    """A current label-studio-ml model that gives no score: ``PredictionValue(result=...)``."""

    score: ClassVar[float | None] = None

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: Any) -> Any:
        assert self.label_config is not None
        from_name, to_name, key, link, label = config_names(self.label_config)
        predictions = []
        for task in tasks:
            result = regions(task["data"][key], from_name, to_name, link, label)
            for item in result:
                item.pop("score", None)
            given = {} if self.score is None else {"score": self.score}
            predictions.append(PredictionValue(result=result, **given))
        response = ModelResponse(predictions=predictions)
        response.set_version("sdk-model-2")
        return response

class SDKScoredModel(SDKUnscoredModel):
    """The same model giving ``score=0.0``: a score it gave, kept."""

    score: ClassVar[float | None] = 0.0
