"""Simulated annotators with known behaviour, annotating through the Label Studio API as themselves.

For the demo (``posthoc demo --simulate``) and the integration tests: the true parameters are known,
so the scoring job's estimates can be checked against them.

Behaviour (all draws from one ``numpy`` Generator seeded by ``seed`` and the worker id):

* per system, probabilities of verify / edit / remove for each pre-filled mention
  (:data:`DEFAULT_OUTCOME_PROBABILITIES`; paper 000 found systems verified more often than the GT);
* control mentions (system ``CONTROL``): an attentive worker gives the expected outcome with
  probability ``control_accuracy``, otherwise an outcome drawn from the GT probabilities;
* one careless worker (``careless_worker``) verifies everything, quickly;
* a lag-1 sequence bias (paper 004): after a ``verify`` the next decision's probability of ``verify``
  is raised by ``lag1_boost`` (edit / remove scaled down in proportion); decisions are sequential
  over a worker's mentions in the order the stream serves them.

:func:`plan_decisions` is pure (manifest tables in, a decisions table out);
:func:`annotate_study` walks each worker's stream (``GET /api/projects/{id}/next`` with the worker's
own token) and posts one annotation per task built by :func:`annotation_result`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from posthoc.arrays import Floats
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.label_config import VerificationTags
from posthoc.labelstudio.records import (
    ResultItem,
    listed_predictions,
    record_id,
    region_to_name,
    region_value,
    result_items,
    task_data,
)
from posthoc.labelstudio.regions import Part, Region, parse_regions

if TYPE_CHECKING:
    from posthoc.study.plan.manifest import Manifest

OUTCOMES = ("verify", "edit", "remove")
DEFAULT_OUTCOME_PROBABILITIES: dict[str, tuple[float, float, float]] = {
    "GT": (0.80, 0.12, 0.08),
    "E2E": (0.85, 0.10, 0.05),
    "REL": (0.75, 0.15, 0.10),
}
#: columns of :func:`plan_decisions`
DECISION_COLUMNS = ("worker", "task_key", "position", "system", "is_control", "mention_id", "order", "outcome",
                    "new_link", "lead_time")


@dataclass(frozen=True)
class SimulationConfig:
    """Known true parameters of the simulated annotators (see the module docstring)."""

    seed: int = 7
    outcome_probabilities: Mapping[str, tuple[float, float, float]] = field(
        default_factory=lambda: dict(DEFAULT_OUTCOME_PROBABILITIES))
    default_probabilities: tuple[float, float, float] = (0.8, 0.12, 0.08)
    control_accuracy: float = 0.9
    careless_worker: str | None = None
    lag1_boost: float = 0.1

    def probabilities(self, system: str) -> Floats:
        raw = np.asarray(self.outcome_probabilities.get(system, self.default_probabilities), dtype=float)
        if raw.shape != (3,) or (raw < 0).any() or not np.isclose(raw.sum(), 1.0):
            raise PosthocInputError(f"simulation: probabilities of system {system!r} must be 3 numbers summing to 1")
        return raw


def biased(probabilities: Floats, previous: str | None, boost: float) -> Floats:
    """``probabilities`` with P(verify) raised by ``boost`` after a verify (others scaled down), capped at 1."""
    if previous != "verify" or boost == 0:
        return probabilities
    verify = min(1.0, probabilities[0] + boost)
    rest = probabilities[1:]
    scale = (1.0 - verify) / rest.sum() if rest.sum() > 0 else 0.0
    return np.concatenate([[verify], rest * scale])


def _worker_rng(seed: int, worker: str) -> np.random.Generator:
    digest = int.from_bytes(hashlib.sha256(worker.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([seed, digest])


def corrected_link(link: str, surface: str) -> str:
    """The link a simulated worker types on edit: another (plausible) Wikipedia page."""
    if link.startswith("https://") and "/wiki/" in link:
        return f"{link}_(disambiguation)"
    return "https://en.wikipedia.org/wiki/" + "_".join(surface.split())


def plan_decisions(mentions: pd.DataFrame, config: SimulationConfig) -> pd.DataFrame:
    """Every simulated decision, one row a pre-filled mention (columns :data:`DECISION_COLUMNS`).

    ``mentions``: :meth:`posthoc.study.plan.manifest.Manifest.mentions` (``worker, position, task_key,
    system, is_control, mention_id, surface, link, expected_outcome, expected_link``), sorted by
    worker, position and text order. ``lead_time`` is seconds per task (careless: 2-4, others 8-40).
    """
    rows: list[tuple[Any, ...]] = []
    for worker, frame in mentions.groupby("worker", sort=True):
        rng = _worker_rng(config.seed, str(worker))
        careless = worker == config.careless_worker
        previous: str | None = None
        lead: dict[str, float] = {}
        for order, row in enumerate(frame.itertuples(index=False)):
            key = str(row.task_key)
            if key not in lead:
                lead[key] = float(rng.uniform(2, 4) if careless else rng.uniform(8, 40))
            if careless:
                outcome = "verify"
            elif bool(row.is_control) and isinstance(row.expected_outcome, str) and \
                    rng.random() < config.control_accuracy:
                outcome = row.expected_outcome
            else:
                system = "GT" if bool(row.is_control) else str(row.system)
                probs = biased(config.probabilities(system), previous, config.lag1_boost)
                outcome = OUTCOMES[int(rng.choice(3, p=probs))]
            new_link = None
            if outcome == "edit":
                expected = getattr(row, "expected_link", None)
                new_link = expected if isinstance(expected, str) and expected and row.is_control else \
                    corrected_link(str(row.link), str(row.surface))
            position = int(str(row.position))
            rows.append((worker, key, position, str(row.system), bool(row.is_control), str(row.mention_id),
                         order, outcome, new_link, lead[key]))
            previous = outcome
    return pd.DataFrame(rows, columns=list(DECISION_COLUMNS))


def annotation_result(prediction_result: Sequence[ResultItem], decisions: Mapping[str, tuple[str, str | None]],
                      tags: VerificationTags, *, drop: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The ``result`` of an annotation that decides each pre-filled region of a prediction.

    ``decisions``: ``{region id: (outcome, new_link or None)}``; every labels region of the prediction
    needs one. Regions in ``drop`` are left out (an annotator deleting the region: the export counts
    it as remove). Items keep the prediction's ids, offsets and ``value.text``.
    """
    out: list[dict[str, Any]] = []
    for region in parse_regions(list(prediction_result)):
        for item, part in zip(region.items, region.parts, strict=True):
            if part.from_name != tags.labels:
                continue
            if str(region.id) in drop:
                continue
            out.extend(_decided(region, item, part, decisions, tags))
    return out


def _decided(region: Region, item: ResultItem, part: Part, decisions: Mapping[str, tuple[str, str | None]],
             tags: VerificationTags) -> list[dict[str, Any]]:
    """The items deciding one pre-filled ``labels`` item of a prediction (``part``: that item, read)."""
    rid = str(region.id)
    if rid not in decisions:
        raise PosthocInputError(f"no decision for pre-filled region {rid}")
    outcome, new_link = decisions[rid]
    value = region_value(item) or {}
    span = {"start": part.start, "end": part.end, "text": part.text if isinstance(part.text, str) else ""}
    base = {"id": rid, "to_name": region_to_name(item), "origin": "prediction"}
    labelled = {**value, "labels": [outcome]} if tags.decision_in_labels else dict(value)
    out: list[dict[str, Any]] = [{**base, "from_name": tags.labels, "type": "labels", "value": labelled}]
    out.extend({**base, **link, "origin": "prediction"} for link in region.of_tag(tags.link))
    if not tags.decision_in_labels:
        out.append({**base, "from_name": tags.decision, "type": "choices", "value": {**span, "choices": [outcome]}})
    if outcome == "edit" and new_link:
        out.append({**base, "from_name": tags.new_link, "type": "textarea", "value": {**span, "text": [new_link]}})
    return out


@dataclass(frozen=True)
class SimulationResult:
    """What :func:`annotate_study` posted: one row a decision, and the number of annotations."""

    decisions: pd.DataFrame
    annotations: int


def annotate_stream(client: LabelStudioClient, project_id: int, decisions: pd.DataFrame,
                    tags: VerificationTags, *, done: frozenset[str] = frozenset(),
                    on_posted: Callable[[int], object] | None = None) -> int:
    """Walk one worker's stream with their own ``client`` and post their decisions; returns annotations posted.

    Checks that ``/next`` serves the tasks in the planned order (``decisions``' positions); raises
    PosthocServiceError otherwise. Tasks whose keys are in ``done`` (already annotated: a rerun) are
    not expected from the stream. ``on_posted(1)`` is called after each annotation (a progress bar).
    """
    by_task = {key: frame for key, frame in decisions.groupby("task_key", sort=False)}
    planned = [key for key in decisions.drop_duplicates("task_key").sort_values("position")["task_key"]
               if key not in done]
    posted = 0
    for expected_key in planned:
        task = client.next_task(project_id)
        if task is None:
            raise PosthocServiceError(f"project {project_id}: the stream ended before task {expected_key}")
        key = str(task_data(task).get("task_key"))
        if key != expected_key:
            raise PosthocServiceError(f"project {project_id}: /next served {key}, the plan says {expected_key}")
        predictions = listed_predictions(task) or []
        if len(predictions) != 1:
            raise PosthocServiceError(f"project {project_id}, task {record_id(task)}: {len(predictions)} predictions")
        rows = by_task[key]
        chosen = {str(r.mention_id): (str(r.outcome), r.new_link if isinstance(r.new_link, str) else None)
                  for r in rows.itertuples(index=False)}
        result = annotation_result(result_items(predictions[0]), chosen, tags)
        client.post(f"/api/tasks/{record_id(task)}/annotations/",
                    {"result": result, "lead_time": float(rows["lead_time"].iloc[0]),
                     "parent_prediction": record_id(predictions[0]), "project": project_id})
        posted += 1
        if on_posted is not None:
            on_posted(1)
    return posted


def annotate_study(manifest: Manifest, *, url: str, tokens: Mapping[str, str], project_ids: Mapping[str, int],
                   label_config: str, config: SimulationConfig | None = None, admin_token: str | None = None,
                   workers: Collection[str] | None = None, progress: bool = False) -> SimulationResult:
    """Simulate every worker of ``manifest`` (or only ``workers``; tokens by worker id) in their own project.

    With ``admin_token``, tasks that already hold an annotation are left alone (a rerun continues
    where the last one stopped and never annotates a task twice). ``progress``: one bar over the
    annotations to post, advanced as each is posted.
    """
    from posthoc.labelstudio.label_config import verification_tags

    settings = config or SimulationConfig()
    tags = verification_tags(label_config)
    from tqdm import tqdm

    decisions = plan_decisions(manifest.mentions(), settings)
    chosen = sorted(decisions["worker"].unique()) if workers is None else sorted(workers)
    decisions = decisions[decisions["worker"].isin(chosen)].reset_index(drop=True)
    done: dict[str, frozenset[str]] = {}
    for worker in chosen:
        if worker not in tokens or worker not in project_ids:
            raise PosthocInputError(f"simulation: no account or project for worker {worker}")
        done[worker] = frozenset()
        if admin_token is not None:
            admin = LabelStudioClient(url, admin_token)
            done[worker] = frozenset(
                str(task_data(t).get("task_key")) for t in admin.tasks(project_ids[worker])
                if int(t.get("total_annotations") or 0) + int(t.get("cancelled_annotations") or 0) > 0)
    to_post = sum(len(set(decisions.loc[decisions["worker"] == w, "task_key"]) - done[w]) for w in chosen)
    posted = 0
    with tqdm(total=to_post, desc="simulated annotations", unit=" task", disable=not progress) as bar:
        for worker in chosen:
            client = LabelStudioClient(url, tokens[worker])
            posted += annotate_stream(client, project_ids[worker], decisions[decisions["worker"] == worker], tags,
                                      done=done[worker], on_posted=bar.update)
    return SimulationResult(decisions=decisions, annotations=posted)
