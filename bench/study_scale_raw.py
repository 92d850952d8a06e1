"""Label Studio's raw set-up of a study, the baseline ``posthoc study create`` is held against (issue 11).

The fewest plain Label Studio calls that reach the same end state as ``posthoc study create``: per worker one
``POST /api/projects/`` with the study's settings and one import per 500 tasks with each task's prediction
inline; per annotator one sign-up form POST with the invite token (the one way open-source Label Studio 1.23
gives an account a password through HTTP; one GET for the form's CSRF cookie a run). The payloads (task data and
predictions) are built before the clock starts: only Label Studio's work is timed. No ML backend, no checks.

:func:`plan_scale_study` plans a study of ``n_workers`` x ``tasks_per_worker`` tasks from the synthetic
Table-1 corpus of ``bench/plan_bench.py`` (seeded); :func:`raw_create` times the baseline. Run on its own, this
script measures both sides once on a Label Studio it starts (``--workers 10 --tasks 200``)::

    python bench/study_scale_raw.py --workers 10 --tasks 200
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from posthoc.study import StudyConfig, plan_study
from posthoc.study.plan.manifest import Manifest
from posthoc.study.plan.study import Study

MODEL_VERSION = "posthoc-v1"


def plan_scale_study(path: Path, *, n_workers: int, tasks_per_worker: int, name: str = "scale",
                     seed: int = 1) -> Manifest:
    """A manifest of about ``n_workers * tasks_per_worker`` tasks (one control task a batch) over the
    synthetic corpus shaped like paper 000's Table 1."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from plan_bench import synthesise

    documents, mentions = synthesise(seed)
    config = StudyConfig(name=name, seed=seed, k=1, tasks_per_batch=tasks_per_worker, n_workers=n_workers,
                         control_tasks=True)
    # the first documents of each dataset in turn until the plan holds enough real tasks (3 systems a chunk)
    wanted = n_workers * (tasks_per_worker - 1)
    chosen: list[tuple[str, str]] = []
    by_dataset = [list(group["doc_id"]) for _, group in documents.groupby("dataset", sort=True)]
    keys = set(zip(mentions["dataset"], mentions["doc_id"], strict=True))
    counts = mentions.groupby(["dataset", "doc_id"]).size().to_dict()
    total = 0
    position = 0
    while total < wanted * 1.16:
        for dataset_docs, (dataset, _) in zip(by_dataset, documents.groupby("dataset", sort=True), strict=True):
            if position < len(dataset_docs) and (dataset, dataset_docs[position]) in keys:
                chosen.append((dataset, dataset_docs[position]))
                total += max(1, counts[(dataset, dataset_docs[position])] // 4)
        position += 1
    keep = set(chosen)
    docs = documents[[k in keep for k in zip(documents["dataset"], documents["doc_id"], strict=True)]]
    ments = mentions[[k in keep for k in zip(mentions["dataset"], mentions["doc_id"], strict=True)]]
    return Manifest.create(path, plan_study(docs, ments, dataclasses.replace(config)))


def raw_payloads(manifest: Manifest, label_config: str) -> dict[str, list[dict[str, Any]]]:
    """Per worker, the tasks to import (data + prediction inline), built with the same task data and result."""
    from posthoc.jobs.setup import import_items
    from posthoc.study.plan.index import ManifestIndex

    index = ManifestIndex.from_manifest(manifest)
    payloads = {}
    for worker in manifest.workers():
        keys = [str(k) for k in manifest.tasks(worker)["task_key"]]
        payloads[worker] = import_items(index, keys, range(len(keys)), label_config=label_config,
                                        model_version=MODEL_VERSION)
    return payloads


def raw_create(url: str, token: str, study: str, payloads: dict[str, list[dict[str, Any]]], label_config: str, *,
               email_domain: str = "raw.posthoc.local", concurrency: int = 1) -> float:
    """Seconds Label Studio takes for the raw set-up (module docstring); ``concurrency``: workers at once."""
    headers = {"Authorization": f"Token {token}"}
    started = time.perf_counter()
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        invite = client.get("/api/invite").raise_for_status().json()["token"]
        with httpx.Client(base_url=url, timeout=60) as form:
            form.get("/user/signup/")
            csrf = str(form.cookies.get("csrftoken"))
        def one(worker: str) -> None:
            project = client.post("/api/projects/", json={
                "title": f"raw {study} {worker}"[:50], "label_config": label_config, "sampling": "Sequential sampling",
                "maximum_annotations": 1, "show_skip_button": False, "show_instruction": False,
                "evaluate_predictions_automatically": False}).raise_for_status().json()
            tasks = payloads[worker]
            for start in range(0, len(tasks), 500):
                client.post(f"/api/projects/{project['id']}/import", json=tasks[start:start + 500],
                            params={"commit_to_project": "true", "return_task_ids": "true"}).raise_for_status()
            with httpx.Client(base_url=url, timeout=60, cookies={"csrftoken": csrf}) as person:
                answer = person.post(f"/user/signup/?token={invite}", data={
                    "csrfmiddlewaretoken": csrf, "email": f"{worker}@{email_domain}".lower(),
                    "password": f"raw-{worker}-password", "how_find_us": "", "elaborate": ""},
                    headers={"Referer": f"{url}/user/signup/?token={invite}"})
                if answer.status_code not in (301, 302):
                    raise RuntimeError(f"raw sign-up of {worker}: HTTP {answer.status_code}")

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, sorted(payloads)))
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--raw-concurrency", type=int, default=1)
    args = parser.parse_args(argv)
    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
    from posthoc.labelstudio.server import LabelStudioServer
    from posthoc.paths import label_config

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from lsfixtures import build_template, copy_template, run_backend

    config = label_config("entity_verification")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        manifest = plan_scale_study(folder / "scale.manifest", n_workers=args.workers, tasks_per_worker=args.tasks)
        print(f"study: {len(manifest.workers())} workers, {len(manifest.tasks())} tasks", flush=True)
        payloads = raw_payloads(manifest, config)
        # a migrated data dir copied from the tests' template (built once: a cold start migrates for ~40 s)
        template = build_template(Path(tempfile.gettempdir()) / "posthoc-bench-ls")
        server = LabelStudioServer(copy_template(template, folder / "ls")).start()
        try:
            with run_backend(manifest.path) as backend_url:
                raw = raw_create(server.url, server.token, "scale", payloads, config,
                                 concurrency=args.raw_concurrency)
                print(f"raw create + import with predictions + users: {raw:.1f} s", flush=True)
                started = time.perf_counter()
                target = SetupTarget(url=server.url, token=server.token, backend_url=backend_url)
                options = SetupOptions(concurrency=args.concurrency)
                first = create_study(Study(manifest), target, options)
                ours = time.perf_counter() - started
                print(f"posthoc study create: {ours:.1f} s ({ours / raw:.2f}x raw); imported {first.imported_tasks}",
                      flush=True)
                started = time.perf_counter()
                again = create_study(Study(manifest), target, options)
                rerun = time.perf_counter() - started
                print(f"rerun: {rerun:.2f} s ({100 * rerun / ours:.1f}% of the first); imported "
                      f"{again.imported_tasks}", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
