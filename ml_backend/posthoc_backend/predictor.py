"""Predictions for one ``/predict`` batch: manifest look-ups, the live linker, validation.

For each task, in order:

1. the task is checked (:func:`posthoc_backend.protocol.parse_task`);
2. a task with a ``task_key`` found in the manifest gets that item's system's mentions
   (the manifest's pre-filled mentions, held in memory by :class:`ManifestIndex`; a manifest file served is read
   again when a revision replaced it, :mod:`posthoc_backend.reload`), after
   checking that the task's text is exactly the manifest's chunk text (otherwise the offsets
   would point at the wrong characters);
3. a task without a key, or with a key the manifest does not know, gets the live predictor's prediction
   when live mode is on (a predictor was chosen: :mod:`posthoc_backend.live`, in batches within Label
   Studio's predict timeout), else an error;
4. the prediction ``{"result": [...], "model_version": MODEL_VERSION}`` (no score) is checked with
   ``LabelInterface.validate_prediction`` before it is returned.

A task that fails any step gets, in its place in ``results``, ``{"error", "field", "task",
"model_version"}`` and no ``result`` key: Label Studio then logs the error and stores no
prediction for that task (so it asks again when the task is opened), while the other tasks of
the batch are pre-filled. The reply also lists every error under ``errors``. A batch in which no
task could be predicted is answered with the first task's 4xx status instead.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records
from posthoc.labelstudio.label_config import region_tags
from posthoc.labelstudio.payloads import PredictionMismatch, manifest_prediction
from posthoc.predictors.linker import DictionaryLinker
from posthoc.predictors.registry import ModelFactory
from posthoc.predictors.stored import DictionaryTextLinker
from posthoc.study.plan.index import ManifestIndex, ManifestLike
from posthoc_backend.live import DEFAULT_BATCH_SIZE, DEFAULT_BUDGET, LivePredictor, LiveTask
from posthoc_backend.protocol import MODEL_VERSION, TASK_KEY_FIELD, RequestError, TaskInput, parse_task
from posthoc_backend.reload import Reloading


@dataclass
class BatchPrediction:
    """The reply to one batch: ``results`` (one element per task) and the per-task ``errors``."""

    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def predicted(self) -> int:
        """How many tasks got a prediction."""
        return len(self.results) - len(self.errors)


class Predictor:
    """Pre-fills tasks from a manifest (blind: one neutral model version) or, in live mode, a predictor.

    ``live``: a :class:`~posthoc.predictors.registry.ModelFactory` (any predictor), a
    :class:`~posthoc.predictors.linker.DictionaryLinker` (the dictionary baseline) or ``None`` (live mode off).
    ``manifest``: a manifest, its index, or a :class:`~posthoc_backend.reload.Reloading` index (the backend
    serving a manifest file: it follows the study's revisions, :mod:`posthoc_backend.reload`), or ``None``.
    ``budget`` / ``batch_size``: see :mod:`posthoc_backend.live`.
    """

    def __init__(self, manifest: ManifestLike | ManifestIndex | Reloading[ManifestIndex] | None,
                 live: ModelFactory | DictionaryLinker | None, *, model_version: str = MODEL_VERSION,
                 budget: float = DEFAULT_BUDGET, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if manifest is not None and not isinstance(manifest, ManifestIndex | Reloading):
            manifest = ManifestIndex.from_manifest(manifest)
        self._manifest = manifest
        if isinstance(live, DictionaryLinker):
            live = ModelFactory(linker=DictionaryTextLinker(live), model_version=model_version)
        self.live_predictor = (LivePredictor(live, model_version=model_version, budget=budget, batch_size=batch_size)
                               if live is not None and live.live else None)
        self.model_version = model_version

    @property
    def manifest(self) -> ManifestIndex | None:
        """The manifest's index now (a reloading one is read again when its file changed)."""
        return self._manifest.get() if isinstance(self._manifest, Reloading) else self._manifest

    @property
    def live(self) -> bool:
        """Whether text in no manifest is pre-filled by a live predictor."""
        return self.live_predictor is not None

    def _manifest_mentions(self, task: TaskInput, manifest: ManifestIndex | None) -> list[dict[str, Any]] | None:
        """The manifest's mentions of the task; ``None`` when the task is for the live predictor."""
        where = f"tasks[{task.index}].data"
        if task.task_key is not None and manifest is not None:
            text = manifest.text(task.task_key)
            if text is not None:
                if text != task.text:
                    raise RequestError(
                        f"{where}.text differs from the manifest's chunk text of task_key {task.task_key!r}; "
                        "re-import the tasks from this manifest (the text must be imported unchanged)",
                        field=f"{where}.text", status=422,
                    )
                return manifest.prefill_rows(task.task_key)
        if self.live:
            return None
        if task.task_key is None:
            raise RequestError(
                f"{where} has no {TASK_KEY_FIELD} and live mode is off (start the backend with --predictor or "
                "--alias-file to pre-fill new text)", field=f"{where}.{TASK_KEY_FIELD}", status=422,
            )
        raise RequestError(
            f"{where}.{TASK_KEY_FIELD} {task.task_key!r} is in no manifest served here "
            + ("" if manifest is not None else "(no manifest loaded) ")
            + "and live mode is off; serve this study's manifest",
            field=f"{where}.{TASK_KEY_FIELD}", status=404,
        )

    def _from_manifest(self, mentions: list[dict[str, Any]], task: TaskInput, config: str) -> dict[str, Any]:
        index = task.index
        try:
            return manifest_prediction(mentions, task.text, config, model_version=self.model_version)
        except PredictionMismatch as exc:
            raise RequestError(f"tasks[{index}]: {exc}", field="label_config", status=422) from exc
        except PosthocInputError as exc:
            raise RequestError(f"tasks[{index}]: {exc}", field=f"tasks[{index}]", status=422) from exc

    def predict(self, tasks: Sequence[object], config: str, *, context: object = None) -> BatchPrediction:
        """Predictions for a batch, one element per task in order (see the module docstring)."""
        started = time.monotonic()
        try:
            tags = region_tags(config)
        except PosthocInputError as exc:
            raise RequestError(str(exc), field="label_config", status=422) from exc
        manifest = self.manifest  # one view of the manifest for the whole batch
        answers: dict[int, dict[str, Any] | RequestError] = {}
        pending: list[LiveTask] = []
        for index, raw_task in enumerate(tasks):
            try:
                task = parse_task(raw_task, index, text_key=tags.text_key)
                mentions = self._manifest_mentions(task, manifest)
                if mentions is None:
                    pending.append(LiveTask(task, raw_task if isinstance(raw_task, dict) else {}))
                else:
                    answers[index] = self._from_manifest(mentions, task, config)
            except RequestError as exc:
                answers[index] = exc
        if pending and self.live_predictor is not None:
            live_context = context if isinstance(context, dict) else None  # label-studio-ml's context is a JSON object
            answers.update(self.live_predictor.predict(pending, config, started=started, context=live_context))
        batch = BatchPrediction()
        for index, raw_task in enumerate(tasks):
            answer = answers[index]
            if isinstance(answer, RequestError):
                task_id = records.record_id(raw_task) if isinstance(raw_task, dict) else None
                entry = {**answer.body(), "task": task_id, "status": answer.status}
                batch.errors.append(entry)
                batch.results.append({**entry, "model_version": self.model_version})
            else:
                batch.results.append(answer)
        return batch
