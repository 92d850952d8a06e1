"""The predictor interface: Label Studio ML models and the entity linkers behind them.

Two shapes, one contract (code point offsets, canonical links of :mod:`posthoc.links`):

*A model* is anything shaped like ``label_studio_ml.model.LabelStudioMLBase``: built as
``Model(label_config=<config>)`` and called as ``model.predict(tasks, context=None, **kwargs)`` with Label
Studio tasks (``{"id", "data": {"text": ...}}``), answering one Label Studio prediction per task
(``{"result": [...], "score", "model_version"}``), as a list, a ``{"predictions": [...]}`` / ``{"results":
[...]}`` mapping or an object with a ``predictions`` attribute (label-studio-ml 2's ``ModelResponse``);
items may be dicts or pydantic models. :func:`call_model` accepts every one of those forms and checks
there is exactly one prediction per task. So an existing label-studio-ml class, named by import path, runs
behind this backend (see :mod:`posthoc.predictors.registry`).

*A linker* (:class:`TextLinker`) maps texts to :class:`PredictedMention` lists; the built-in ``dictionary``,
``rel``, ``nif`` and ``spacy`` predictors are linkers. :class:`LinkerModel` turns a linker into a model
(results built by :func:`posthoc.labelstudio.payloads.build_result` from the project's label config), and
:func:`mentions_of_prediction` turns a model's prediction back into mentions, so ``posthoc predict`` runs any
of them over a corpus.

A service that answers something that is not its protocol raises :class:`PredictorAnswerError`; one that is
unreachable, slow or failing raises :class:`PredictorServiceError`. Both name the service and what went
wrong; the caller adds the document or task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.label_config import RegionTags, region_tags
from posthoc.labelstudio.payloads import MODEL_VERSION, build_result
from posthoc.labelstudio.records import answer_predictions, record_score, result_items, stored_result, task_data
from posthoc.labelstudio.regions import parse_regions
from posthoc.links import normalise_link


class PredictorServiceError(PosthocServiceError):
    """A predictor's service is unreachable, too slow, or answered with an HTTP error status."""


class PredictorAnswerError(PosthocServiceError):
    """A predictor answered something that is not its protocol (malformed JSON or RDF, offsets off the text)."""


@dataclass(frozen=True)
class PredictedMention:
    """One predicted mention: ``text[start:end] == surface`` (code points), its canonical ``link``.

    ``link_original`` is the form the predictor gave, ``is_nil`` marks NIL / emerging entities (``link`` is
    then ``nil:`` or ``nil:<Title>``), ``score`` the predictor's confidence when it gives one (never shown
    to annotators).
    """

    start: int
    end: int
    surface: str
    link: str
    link_original: str
    is_nil: bool
    score: float | None = None

    def record(self, *, id_prefix: str = "live") -> dict[str, Any]:
        """The row :func:`posthoc.labelstudio.payloads.build_result` takes (``mention_id`` from the offsets)."""
        return {"mention_id": f"{id_prefix}-{self.start}-{self.end}", "start": self.start, "end": self.end,
                "surface": self.surface, "link": self.link}


def mention(text: str, start: int, end: int, link: str | None, *, score: float | None = None,
            surface: str | None = None, service: str = "predictor") -> PredictedMention:
    """A checked :class:`PredictedMention`: ``0 <= start < end <= len(text)`` and, when the service gave a
    ``surface``, ``text[start:end] == surface``; else :class:`PredictorAnswerError`."""
    if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
        raise PredictorAnswerError(f"{service}: offsets {start!r}..{end!r} are not integers")
    if not 0 <= start < end <= len(text):
        raise PredictorAnswerError(f"{service}: mention {start}..{end} is outside the text (length {len(text)} "
                                   "code points)")
    span = text[start:end]
    if surface is not None and surface != span:
        raise PredictorAnswerError(f"{service}: mention {start}..{end} is {surface!r} but the text there is "
                                   f"{span!r} (offsets not in code points of the text sent?)")
    normal = normalise_link(link)
    return PredictedMention(start, end, span, normal.link, normal.original, normal.is_nil, score)


def sorted_unique(mentions: Sequence[PredictedMention]) -> list[PredictedMention]:
    """Mentions in text order (start, end, link), exact repeats dropped."""
    seen: set[tuple[int, int, str]] = set()
    kept: list[PredictedMention] = []
    for item in sorted(mentions, key=lambda m: (m.start, m.end, m.link)):
        key = (item.start, item.end, item.link)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


@runtime_checkable
class TextLinker(Protocol):
    """An entity linker: texts in, mentions (code point offsets, canonical links) out, one list a text."""

    name: str

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        """Mentions of every text, in order. ``deadline`` (``time.monotonic()`` seconds): a service client
        gives up (:class:`PredictorServiceError`) rather than answer after it."""


class LinkerModel:
    """A :class:`TextLinker` as a label-studio-ml-shaped model (``predict(tasks, context=None, **kwargs)``).

    ``label_config`` gives the region tags (default: the one the request carries as ``label_config=``);
    predictions carry ``model_version`` (the backend's neutral one) and no score.
    """

    def __init__(self, linker: TextLinker, *, project_id: str | None = None, label_config: str | None = None,
                 model_version: str = MODEL_VERSION, **_: object) -> None:
        self.linker = linker
        self.project_id = project_id
        self.label_config = label_config
        self.model_version = model_version

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: Any) -> list[dict[str, Any]]:
        """One prediction a task: the linker's mentions of ``task["data"][<text key>]`` as Label Studio regions."""
        config = kwargs.get("label_config") or self.label_config
        if not config:
            raise ValueError("LinkerModel.predict needs a label config (constructor or label_config=)")
        tags = region_tags(config)
        texts = [str(task_data(task)[tags.text_key]) for task in tasks]
        found = self.linker.link_texts(texts, deadline=kwargs.get("deadline"))
        return [self._prediction(mentions, text, tags) for mentions, text in zip(found, texts, strict=True)]

    def _prediction(self, mentions: list[PredictedMention], text: str, tags: RegionTags) -> dict[str, Any]:
        return {"result": build_result([m.record() for m in mentions], text, tags), "model_version": self.model_version}


class PredictModel(Protocol):
    """A label-studio-ml-shaped model: ``predict(tasks, context=None, **kwargs)`` answering in one of the forms of
    the module docstring (:class:`LinkerModel`, or a class named by ``--predictor package.module:Class``)."""

    def predict(self, tasks: list[dict[str, Any]], context: dict[str, Any] | None = None,
                **kwargs: object) -> object: ...


def _plain(item: object) -> object:
    """A pydantic model (label-studio-ml 2's ``ModelResponse`` / the SDK's ``PredictionValue``) as a dict of
    the fields the model set (``exclude_unset``, nested too); anything else unchanged.

    ``PredictionValue`` declares ``score: Optional[float] = 0.00`` (label-studio-sdk 2.1.2,
    label_interface/objects.py), so a model that gives no score would otherwise read as scoring every
    mention 0.0; only a score the model set (0.0 included) is kept.
    """
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None) or getattr(item, "dict", None)  # pydantic 2, else 1
    return dump(exclude_unset=True) if callable(dump) else item


def call_model(model: PredictModel, tasks: list[dict[str, Any]], *, context: dict[str, Any] | None = None,
               name: str = "the predictor", **kwargs: object) -> list[dict[str, Any]]:
    """``model.predict(tasks, context=context, **kwargs)`` as a list of prediction dicts, one a task.

    Accepts the answer forms of the module docstring; :class:`PredictorAnswerError` for any other form or a
    count that differs from the tasks'.
    """
    answer = _plain(model.predict(tasks, context=context, **kwargs))
    if isinstance(answer, Mapping):
        answer = answer_predictions(answer)
    elif answer is not None and not isinstance(answer, list | tuple):
        answer = getattr(answer, "predictions", answer)
    if not isinstance(answer, list | tuple):
        raise PredictorAnswerError(f"{name}: predict() returned {type(answer).__name__}, not a list of predictions")
    predictions = [_plain(item) for item in answer]
    if len(predictions) != len(tasks):
        raise PredictorAnswerError(f"{name}: predict() returned {len(predictions)} prediction(s) for "
                                   f"{len(tasks)} task(s); give one a task, in order")
    checked: list[dict[str, Any]] = []
    for index, item in enumerate(predictions):
        if not isinstance(item, Mapping) or not isinstance(stored_result(item), list):
            raise PredictorAnswerError(f"{name}: prediction {index} is not an object with a result list")
        checked.append(dict(item))
    return checked


def mentions_of_prediction(prediction: Mapping[str, Any], text: str, *, name: str = "the predictor",
                           tags: RegionTags | None = None) -> list[PredictedMention]:
    """The mentions of a Label Studio prediction on ``text``.

    Every ``labels`` item (of ``tags.labels_from`` when given) with ``value.start`` / ``value.end`` is a
    mention, checked against the text (``value.text`` must equal it when present); its link is the
    ``textarea`` item with the same ``id`` (``value.text[0]``), else ``meta.text[0]``, else NIL.
    """
    found: list[PredictedMention] = []
    for region in parse_regions(result_items(prediction)):
        lines = [p.text for p in region.parts if p.kind == "textarea" and isinstance(p.text, list) and p.text]
        region_link = str(lines[-1][0]) if lines and region.id is not None else None
        for part in region.parts:
            if part.kind != "labels" or (tags is not None and part.from_name != tags.labels_from):
                continue
            if part.start is None or part.end is None:
                raise PredictorAnswerError(f"{name}: a labels region has no value.start / value.end")
            link = region_link if region_link is not None else region.meta_link
            surface = part.text if isinstance(part.text, str) else None
            score = _score(part.score if part.score is not None else record_score(prediction))
            start, end = part.start, part.end  # as stored: mention() checks they are integers
            found.append(mention(text, start, end, link, surface=surface, service=name,  # type: ignore[arg-type]
                                 score=score))
    return sorted_unique(found)


def _score(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
