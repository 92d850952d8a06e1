"""Live mode: tasks that are in no manifest, pre-filled by the chosen predictor, in batches, within a budget.

Label Studio waits ``ML_TIMEOUT_PREDICT`` (100 s by default) for a ``/predict`` answer and drops the whole
reply after that, and the Data Manager's "retrieve predictions" sends every selected task in one request.
So the live tasks of a request are given to the predictor ``batch_size`` at a time while the request is
younger than ``budget`` seconds (default 80); the ``rel`` and ``nif`` clients get the same deadline and stop
waiting at it. Tasks not reached in time get a per-task error (status 503, no ``result``): Label Studio
stores no prediction for them and asks again when one is opened, while the tasks done are pre-filled.

Every live prediction is made blind and checked before it leaves, whoever wrote the predictor: only its
``result`` is kept (no ``score``, neither the prediction's nor a region's), under the backend's one
neutral ``model_version``; every region's
offsets must lie in the task's text with ``value.text == text[start:end]`` when given; then
``LabelInterface.validate_prediction`` must accept it. A predictor that fails or answers nonsense fails its
batch's tasks (status 502, the reason in the error) and no other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.payloads import validation_errors
from posthoc.labelstudio.regions import parse_regions
from posthoc.predictors.base import LinkerModel, call_model
from posthoc.predictors.registry import ModelFactory
from posthoc_backend.protocol import RequestError, TaskInput

logger = logging.getLogger("posthoc_backend")

#: seconds of one /predict request spent on live predictions (Label Studio's ML_TIMEOUT_PREDICT is 100 s)
DEFAULT_BUDGET = 80.0
#: live tasks given to the predictor at once
DEFAULT_BATCH_SIZE = 32
#: seconds: with less left before the deadline no service call is started (predictors/http.py: the same)
MIN_ATTEMPT = 0.05


@dataclass(frozen=True)
class LiveTask:
    """A task waiting for a live prediction: the parsed task and the task object as Label Studio sent it."""

    task: TaskInput
    raw: dict[str, Any]


def check_prediction(prediction: Mapping[str, Any], task: TaskInput, config: str, *,
                     model_version: str) -> dict[str, Any]:
    """The blind, checked prediction of one task (module docstring); :class:`RequestError` 422 if it is wrong."""
    where = f"tasks[{task.index}]"
    result = ls.stored_result(prediction)
    if not isinstance(result, list):
        raise RequestError(f"{where}: the predictor's result is not a list", field=where, status=502)
    length = len(task.text)
    for part in (part for region in parse_regions(result) for part in region.parts if part.has_span):
        start, end = part.start, part.end
        if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= length:
            raise RequestError(f"{where}: the predictor's region {start!r}..{end!r} is outside the text (length "
                               f"{length} code points)", field=where, status=502)
        if isinstance(part.text, str) and part.text != task.text[start:end]:
            raise RequestError(f"{where}: the predictor's region {start}..{end} says {part.text!r} but the text "
                               f"there is {task.text[start:end]!r} (offsets must be code points)", field=where,
                               status=502)
    blind = [{k: v for k, v in item.items() if k != "score"} if isinstance(item, Mapping) else item for item in result]
    checked = {"result": blind, "model_version": model_version}
    errors = validation_errors(checked, config)
    if errors:
        raise RequestError(f"{where}: the predictor's prediction does not fit the label config: "
                           f"{'; '.join(errors[:3])}", field="label_config", status=422)
    return checked


class LivePredictor:
    """The live predictor of the backend (see the module docstring)."""

    def __init__(self, factory: ModelFactory, *, model_version: str, budget: float = DEFAULT_BUDGET,
                 batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if budget <= 0 or batch_size < 1:
            raise ValueError("budget must be > 0 and batch_size >= 1")
        self.factory = factory
        self.model_version = model_version
        self.budget = budget
        self.batch_size = batch_size

    def predict(self, pending: list[LiveTask], config: str, *, started: float,
                context: dict[str, Any] | None = None) -> dict[int, dict[str, Any] | RequestError]:
        """Task index -> checked prediction, or the :class:`RequestError` that task gets."""
        deadline = started + self.budget
        answers: dict[int, dict[str, Any] | RequestError] = {}
        model = self.factory.model(config)
        name = self.factory.name
        for first in range(0, len(pending), self.batch_size):
            batch = pending[first:first + self.batch_size]
            if time.monotonic() >= deadline - MIN_ATTEMPT:  # no call can start in what is left
                late = RequestError(f"not pre-filled: the predictor {name} used this request's {self.budget:.0f} s "
                                    "budget (Label Studio waits 100 s); Label Studio asks again when the task is "
                                    "opened", field=None, status=503)
                answers.update({live.task.index: late for live in batch})
                continue
            extra = {"label_config": config, "deadline": deadline} if isinstance(model, LinkerModel) else {}
            try:
                predictions = call_model(model, [live.raw for live in batch], context=context, name=name, **extra)
            except (PosthocServiceError, PosthocInputError) as exc:
                failed = RequestError(f"not pre-filled: {exc}", field=None, status=502)
                answers.update({live.task.index: failed for live in batch})
                continue
            except Exception as exc:  # a user's model class may raise anything; its tasks fail, not the request
                logger.exception("live predictor %s failed", name)
                failed = RequestError(f"not pre-filled: the predictor {name} raised {type(exc).__name__}",
                                      field=None, status=502)
                answers.update({live.task.index: failed for live in batch})
                continue
            for live, prediction in zip(batch, predictions, strict=True):
                try:
                    answers[live.task.index] = check_prediction(prediction, live.task, config,
                                                                model_version=self.model_version)
                except RequestError as exc:
                    answers[live.task.index] = exc
        return answers
