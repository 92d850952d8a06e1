"""A tiny study set up in a real Label Studio and annotated through its API by two workers.

Cases (per worker, by task position):

- w001, position 0: first region verified, second edited (a title typed into new_link), every other
  region deleted; a region drawn by hand; an annotation by the admin (not the worker);
- w001, position 1: first region removed (kept, decision remove), second moved one character (offsets
  changed), others verified; submitted twice (the earlier all-verify one must be left out);
- w002, position 0: a draft, then skipped (cancelled);
- w002, position 1: every region verified.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import requests

from lsfixtures import make_annotator, make_project
from posthoc.paths import label_config

EDIT_TYPED = "emmanuel macron"
DOCS = [
    ("tiny", "d1", "Jose\u0301 said Obama met 🇫🇷 Macron in big Paris. Merkel stayed in Berlin."),
    ("tiny", "d2", "👩‍👩‍👧 東京 is big. Tokyo Tower and Mount Fuji are famous."),
]
MENTIONS = {
    ("d1", "GT"): [("Obama", "Barack_Obama"), ("Macron", "Emmanuel_Macron"), ("Paris", "Paris")],
    ("d1", "E2E"): [("Obama", "Barack_Obama"), ("Macron", "Macron_(surname)"), ("Merkel", "Angela_Merkel")],
    ("d2", "GT"): [("東京", "Tokyo"), ("Tokyo Tower", "Tokyo_Tower"), ("Mount Fuji", "Mount_Fuji")],
    ("d2", "E2E"): [("東京", "Tokyo_Metropolis"), ("Tokyo Tower", "Tokyo_Tower"), ("Mount Fuji", "Fuji_(volcano)")],
}


def tiny_corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Documents and GT / E2E mentions with emoji, a flag, CJK and a combining mark before the spans."""
    documents = pd.DataFrame(DOCS, columns=["dataset", "doc_id", "text"])
    texts = {doc_id: text for _, doc_id, text in DOCS}
    rows = []
    for (doc_id, system), mentions in MENTIONS.items():
        for surface, title in mentions:
            start = texts[doc_id].index(surface)
            link = f"https://en.wikipedia.org/wiki/{title}"
            rows.append(("tiny", doc_id, system, start, start + len(surface), surface, link, link, False))
    mentions_frame = pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "surface", "link",
                                                 "link_original", "is_nil"])
    return documents, mentions_frame


def plan_tiny_manifest(path: Path, *, name: str = "tiny") -> Any:
    """The tiny study planned with posthoc.study (2 workers, k = 1, no control tasks) and saved at ``path``."""
    from posthoc.study.plan.config import StudyConfig
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    documents, mentions = tiny_corpus()
    config = StudyConfig(name=name, seed=7, k=1, tasks_per_batch=20, control_tasks=False, n_workers=2)
    return Manifest.create(path, plan_study(documents, mentions, config))


def _region(item_id: str, from_name: str, kind: str, start: int, end: int, text: str, value: dict[str, Any],
            origin: str) -> dict[str, Any]:
    return {"id": item_id, "from_name": from_name, "to_name": "text", "type": kind, "origin": origin,
            "value": {"start": start, "end": end, "text": text, **value}}


def decided(prefill: pd.Series, decision: str, *, shift: int = 0, new_link: str | None = None,
            chunk_text: str) -> list[dict[str, Any]]:
    """The result items a worker submits for one pre-filled region (labels + decision [+ new_link])."""
    start, end = int(prefill["start"]) + shift, int(prefill["end"]) + shift
    span = chunk_text[start:end]
    origin = "prediction" if shift == 0 else "prediction-changed"
    items = [
        _region(prefill["mention_id"], "mention", "labels", start, end, span, {"labels": ["Entity"]}, origin),
        _region(prefill["mention_id"], "decision", "choices", start, end, span, {"choices": [decision]}, "manual"),
    ]
    if new_link is not None:
        items.append(_region(prefill["mention_id"], "new_link", "textarea", start, end, span,
                             {"text": [new_link]}, "manual"))
    return items


@dataclass
class TinyStudy:
    """The Label Studio side of the tiny study: manifest, projects, accounts and what was posted."""

    manifest: Any
    manifest_path: Path
    url: str
    token: str
    projects: dict[str, int]
    tasks: dict[str, list[str]]  # worker -> task keys by position
    annotations: dict[str, dict[str, Any]] = field(default_factory=dict)  # task key -> kept annotation JSON
    lead_times: dict[str, float] = field(default_factory=dict)


def _post(url: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = requests.post(f"{url}{path}", json=body, headers={"Authorization": f"Token {token}"}, timeout=60)
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


@contextlib.contextmanager
def build_tiny_study(ls_server: Any, folder: Path, *, name: str = "tiny") -> Iterator[TinyStudy]:
    """Set the tiny study up on ``ls_server`` (manifest in ``folder``); projects are deleted on exit.
    ``name``: the study's name (another name is another study, found apart by its projects' markers)."""
    from posthoc.labelstudio.label_config import region_tags
    from posthoc.labelstudio.payloads import build_result
    from posthoc.labelstudio.tasks import study_task_data
    from posthoc.labelstudio.users import worker_email

    config = label_config("entity_verification")
    tags = region_tags(config)
    manifest_path = folder / f"{name}.manifest"
    manifest = plan_tiny_manifest(manifest_path, name=name)
    client = ls_server.client()
    accounts = {w: make_annotator(ls_server, worker_email(w)) for w in manifest.workers()}
    study = TinyStudy(manifest=manifest, manifest_path=manifest_path, url=ls_server.url, token=ls_server.token,
                      projects={}, tasks={})
    with contextlib.ExitStack() as stack:
        for worker in manifest.workers():
            from posthoc.study.live.projects import marker_html, project_marker

            # the marker where setup keeps it (an invisible meta tag), so no page shows it to annotators
            project = stack.enter_context(make_project(ls_server, config, title=f"{name} {worker}",
                                                       expert_instruction=marker_html(project_marker(name, worker))))
            study.projects[worker] = int(project.id)
            tasks = manifest.tasks(worker=worker)
            payload = []
            for task in tasks.itertuples(index=False):
                prefill = manifest.prefill(task.task_key)
                payload.append({"data": study_task_data(task.task_key, task.text, prefill.to_dict("records")),
                                "predictions": [{"model_version": "posthoc",
                                                 "result": build_result(prefill, task.text, tags)}]})
            client.projects.import_tasks(id=project.id, request=payload)
            study.tasks[worker] = list(tasks["task_key"])
        _annotate(study, client, accounts)
        yield study


def _ls_task_ids(client: Any, project_id: int) -> dict[str, int]:
    return {str(t.data["task_key"]): int(t.id) for t in client.tasks.list(project=project_id)}


def _annotate(study: TinyStudy, admin: Any, accounts: dict[str, Any]) -> None:
    manifest = study.manifest
    w1, w2 = manifest.workers()
    ids = {**_ls_task_ids(admin, study.projects[w1]), **_ls_task_ids(admin, study.projects[w2])}

    def text_of(key: str) -> str:
        return str(manifest.task(key).text)

    def submit(worker: str, key: str, result: list[dict[str, Any]], *, lead_time: float,
               cancelled: bool = False, token: str | None = None) -> dict[str, Any]:
        body = {"result": result, "lead_time": lead_time, "was_cancelled": cancelled}
        annotation = _post(study.url, token or accounts[worker].token, f"/api/tasks/{ids[key]}/annotations/", body)
        time.sleep(0.01)  # distinct created_at
        return annotation

    # w001, position 0: verify, edit, delete the rest; a manual region; a foreign annotation by the admin
    key = study.tasks[w1][0]
    text = text_of(key)
    prefill = manifest.prefill(key)
    result = decided(prefill.iloc[0], "verify", chunk_text=text)
    result += decided(prefill.iloc[1], "edit", new_link=EDIT_TYPED, chunk_text=text)
    word = text.index("big")
    result += [_region("handdrawn1", "mention", "labels", word, word + 3, "big", {"labels": ["Entity"]}, "manual"),
               _region("handdrawn1", "decision", "choices", word, word + 3, "big", {"choices": ["verify"]},
                       "manual")]
    submit(w1, key, decided(prefill.iloc[0], "remove", chunk_text=text), lead_time=1.0, token=study.token)
    study.annotations[key] = submit(w1, key, result, lead_time=12.5)
    study.lead_times[key] = 12.5

    # w001, position 1: remove (kept), moved region, others verified; submitted twice
    key = study.tasks[w1][1]
    text = text_of(key)
    prefill = manifest.prefill(key)
    submit(w1, key, [i for _, p in prefill.iterrows() for i in decided(p, "verify", chunk_text=text)], lead_time=2.0)
    result = decided(prefill.iloc[0], "remove", chunk_text=text)
    result += decided(prefill.iloc[1], "verify", shift=1, chunk_text=text)
    for _, row in prefill.iloc[2:].iterrows():
        result += decided(row, "verify", chunk_text=text)
    study.annotations[key] = submit(w1, key, result, lead_time=7.25)
    study.lead_times[key] = 7.25

    # w002, position 0: a draft, then skipped
    key = study.tasks[w2][0]
    prefill = manifest.prefill(key)
    _post(study.url, accounts[w2].token, f"/api/tasks/{ids[key]}/drafts",
          {"result": decided(prefill.iloc[0], "verify", chunk_text=text_of(key)), "lead_time": 3.0})
    submit(w2, key, [], lead_time=0.5, cancelled=True)

    # w002, position 1: all verified
    key = study.tasks[w2][1]
    text = text_of(key)
    prefill = manifest.prefill(key)
    study.annotations[key] = submit(
        w2, key, [i for _, p in prefill.iterrows() for i in decided(p, "verify", chunk_text=text)], lead_time=4.0)
    study.lead_times[key] = 4.0
