"""Label Studio-shaped JSON exports of a study with simulated decisions (for tests, benches and demos).

:func:`write_synthetic_export` writes, task by task (never the whole array in memory), the export a
snapshot of the study's projects would give if every worker had annotated every task with decisions
drawn from a seeded generator: the prediction as the ML backend pre-fills it (a ``labels`` and a link
``textarea`` item per mention, result id = ``mention_id``), and one submitted annotation whose regions
carry a ``decision`` (verify / edit / remove) or are deleted. The counts of what was written come back,
so a reader can be checked against known true values.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posthoc.atomic import atomic_open
from posthoc.labelstudio.label_config import UNDECIDED, VerificationTags
from posthoc.labelstudio.tasks import kb_pages_html
from posthoc.study.plan.index import ManifestIndex, Prefill, TaskInfo

DECISIONS = ("verify", "edit", "remove", "deleted")


@dataclass(frozen=True)
class SyntheticExport:
    """What was written: number of tasks and judgements, and judgements per decision (``deleted`` apart)."""

    path: Path
    n_tasks: int
    n_judgements: int
    decisions: Mapping[str, int]


def _region(prefill: Prefill, text: str, from_name: str, kind: str, value: dict[str, Any],
            origin: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"id": prefill.mention_id, "from_name": from_name, "to_name": "text", "type": kind,
                            "value": {"start": prefill.start, "end": prefill.end,
                                      "text": text[prefill.start:prefill.end], **value}}
    if origin:
        item["origin"] = origin
    return item


def write_synthetic_export(path: str | os.PathLike[str], index: ManifestIndex, tags: VerificationTags, *,
                           texts: Mapping[str, str] | None = None, seed: int = 0,
                           probabilities: tuple[float, float, float, float] = (0.8, 0.1, 0.05, 0.05),
                           emails: Mapping[str, str] | None = None,
                           control_accuracy: float = 1.0) -> SyntheticExport:
    """Write an export of every task of ``index`` (``texts``: task key -> chunk text, default the index's own)
    annotated at random.

    ``probabilities`` of :data:`DECISIONS`; ``emails``: worker -> login e-mail (default
    ``<worker>@posthoc.local``). Timestamps are fixed functions of the task, so the file is reproducible.

    Examples:
        The task of :func:`~posthoc.export.flatten.flatten_exports`' example (two pre-filled mentions) with every
        decision verify: one task, two judgements, both verify; the annotation is the worker's default login.

        >>> import json
        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.export.synthetic import write_synthetic_export
        >>> index, tags = example_index()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     written = write_synthetic_export(Path(folder, "e.json"), index, tags, probabilities=(1, 0, 0, 0))
        ...     tasks = json.loads(written.path.read_text(encoding="utf-8"))
        >>> written.n_tasks, written.n_judgements, written.decisions
        (1, 2, {'verify': 2})
        >>> annotation = tasks[0]["annotations"][0]
        >>> annotation["completed_by"]["email"], [(r["id"], r["value"]["labels"]) for r in annotation["result"]]
        ('w1@posthoc.local', [('m1', ['verify']), ('m2', ['verify'])])
    """
    rng = np.random.default_rng(seed)
    texts = texts if texts is not None else index.texts
    prefilled = UNDECIDED if tags.decision_in_labels else "Entity"  # the label the backend pre-fills
    counts: Counter[str] = Counter()
    target = Path(path)
    n_tasks = 0
    with atomic_open(target, "w") as handle:
        handle.write("[")
        for number, (key, info) in enumerate(sorted(index.tasks.items(), key=lambda kv: (kv[1].worker,
                                                                                          kv[1].position))):
            text = texts[key]
            prefills = index.prefills.get(key, ())
            prediction_result = []
            for prefill in prefills:
                prediction_result.append(_region(prefill, text, tags.labels, "labels", {"labels": [prefilled]}))
                prediction_result.append(_region(prefill, text, tags.link, "textarea", {"text": [prefill.link]}))
            prediction = {"id": number + 1, "model_version": "posthoc", "score": None, "result": prediction_result,
                          "task": number + 1}
            result = []
            for prefill, choice in zip(prefills, rng.choice(len(DECISIONS), size=len(prefills), p=probabilities),
                                       strict=True):
                decision = DECISIONS[int(choice)]
                if prefill.expected_outcome in DECISIONS and rng.random() < control_accuracy:
                    decision = prefill.expected_outcome
                counts[decision] += 1
                if decision == "deleted":
                    continue
                if tags.decision_in_labels:  # the decision is the region's label
                    result.append(_region(prefill, text, tags.labels, "labels", {"labels": [decision]},
                                          "prediction-changed"))
                else:
                    result.append(_region(prefill, text, tags.labels, "labels", {"labels": [prefilled]},
                                          "prediction"))
                    result.append(_region(prefill, text, tags.decision, "choices", {"choices": [decision]},
                                          "manual"))
                if decision == "edit":
                    result.append(_region(prefill, text, tags.new_link, "textarea",
                                          {"text": [f"Corrected {prefill.surface}"]}, "manual"))
            email = (emails or {}).get(info.worker, f"{info.worker}@posthoc.local")
            stamp = f"2026-01-01T00:{(number // 60) % 60:02d}:{number % 60:02d}.000000Z"
            kb_pages = kb_pages_html([{"surface": p.surface, "link": p.link} for p in prefills])
            task = {
                "id": number + 1, "data": {"text": text, "task_key": key, "kb_pages": kb_pages},
                "annotations": [{"id": number + 1, "completed_by": {"id": 2, "email": email, "first_name": "",
                                                                   "last_name": ""},
                                 "result": result, "was_cancelled": False, "ground_truth": False,
                                 "created_at": stamp, "updated_at": stamp, "lead_time": 1.0 + (number % 7),
                                 "prediction": prediction, "parent_prediction": None, "draft_created_at": None,
                                 "unique_id": f"00000000-0000-4000-8000-{number:012d}", "import_id": None,
                                 "last_action": None, "bulk_created": False, "task": number + 1, "project": 1,
                                 "updated_by": 2, "parent_annotation": None, "last_created_by": None}],
                "drafts": [], "predictions": [prediction], "meta": {}, "created_at": stamp, "project": 1,
            }
            handle.write(("," if number else "") + json.dumps(task, ensure_ascii=False))
            n_tasks += 1
        handle.write("]")
    return SyntheticExport(path=target, n_tasks=n_tasks, n_judgements=sum(counts.values()),
                           decisions=dict(counts))


def example_index() -> tuple[ManifestIndex, VerificationTags]:
    """A one-task study and the verification config's tags, the input of the export examples: worker ``w1``'s task
    ``k1`` (system ``A``, document ``d/1``) with the text "Paris and Seine" and its two pre-filled mentions.

    Examples:
        >>> index, tags = example_index()
        >>> index.texts["k1"], [prefill.surface for prefill in index.prefills["k1"]], tags.decision
        ('Paris and Seine', ['Paris', 'Seine'], 'label')
    """
    index = ManifestIndex(study="s", tasks={"k1": TaskInfo("w1", 0, "i1", "c1", "d", "1", "A", False)},
                          prefills={"k1": (Prefill("m1", 0, 5, 0, 5, "Paris", "Paris", None),
                                           Prefill("m2", 10, 15, 10, 15, "Seine", "Seine", None))},
                          texts={"k1": "Paris and Seine"})
    return index, VerificationTags(labels="label", decision="label", link="link", new_link="new_link")
