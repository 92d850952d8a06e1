"""Bulk-annotate a study's tasks inside Label Studio's own environment (Django ORM), for bench/study_scale_bench.py.

31,000 annotations posted one by one through the API take about an hour (~110 ms a POST on this machine); this
script writes the same rows Label Studio's API would, in bulk, in the server's own database through its own
models: one ``Annotation`` per task (``completed_by`` the project's worker, ``result`` the task's prediction
regions with a decision as label, a ``new_link`` text for an edit, a region left out for a deletion,
``parent_prediction`` the task's prediction, ``lead_time``), then per task what ``Annotation.save()`` would have
updated (``is_labeled``, ``total_annotations``, ``updated_at``). Real API POSTs are timed apart by the bench (a
sample of submits, and the one new task scored incrementally).

Run with Label Studio's environment (``LabelStudioServer.environment()``):
``python bench/ls_bulk_annotate.py PLAN.json`` where the plan is ``{"projects": {project id: worker e-mail},
"decisions": {task key: {mention id: verify|edit|remove|deleted}}, "leave": n}``: the last ``leave`` tasks of each
project (in id order) stay unannotated. Prints ``annotated N``.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys


def main(plan_path: str) -> None:
    import label_studio

    sys.path.insert(0, str(pathlib.Path(label_studio.__file__).parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "label_studio.core.settings.label_studio")
    import django

    django.setup()
    from django.db import transaction
    from django.utils import timezone
    from tasks.models import Annotation, Prediction, Task
    from users.models import User

    plan = json.loads(pathlib.Path(plan_path).read_text(encoding="utf-8"))
    decisions: dict[str, dict[str, str]] = plan["decisions"]
    leave = int(plan["leave"])
    total = 0
    for project_id, email in plan["projects"].items():
        user = User.objects.get(email=email)
        tasks = list(Task.objects.filter(project_id=int(project_id)).order_by("id").only("id", "data"))
        chosen = tasks[:max(len(tasks) - leave, 0)]
        predictions = {p.task_id: p for p in Prediction.objects.filter(task_id__in=[t.id for t in chosen])}
        annotations = []
        for number, task in enumerate(chosen):
            prediction = predictions[task.id]
            wanted = decisions.get(str(task.data.get("task_key")), {})
            result = []
            for item in prediction.result:
                decision = wanted.get(str(item.get("id")), "verify")
                if decision == "deleted":
                    continue
                if item.get("type") == "labels":
                    result.append({**item, "origin": "prediction-changed",
                                   "value": {**item["value"], "labels": [decision]}})
                    if decision == "edit":
                        result.append({"id": item["id"], "from_name": "new_link", "to_name": item["to_name"],
                                       "type": "textarea", "origin": "manual",
                                       "value": {"start": item["value"]["start"], "end": item["value"]["end"],
                                                 "text": [f"Corrected {item['value'].get('text', '')}"]}})
                else:
                    result.append(item)
            annotations.append(Annotation(task_id=task.id, project_id=int(project_id), completed_by=user,
                                          result=result, lead_time=1.0 + number % 7, was_cancelled=False,
                                          ground_truth=False, parent_prediction=prediction,
                                          result_count=len({r["id"] for r in result})))
        with transaction.atomic():
            Annotation.objects.bulk_create(annotations, batch_size=500)
            Task.objects.filter(id__in=[t.id for t in chosen]).update(
                is_labeled=True, total_annotations=1, updated_at=timezone.now())
        total += len(annotations)
    print(f"annotated {total}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
