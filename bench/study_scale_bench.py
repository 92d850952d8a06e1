"""A paper-size study against a real Label Studio it starts: set-up, annotation, scoring and Submit latency.

Scenarios (issue 11): (a) 20 workers x 1,500 tasks (about the paper's 31,000 tasks) and (b) 300 workers x 20
tasks, each on a fresh Label Studio 1.23 (SQLite, a copy of a migrated data dir) with the study's ML backend
(``posthoc backend serve``: gunicorn, its own process, with its event store). For each, in one run:

1. ``posthoc study create`` (:func:`posthoc.jobs.setup.create_study`) against the baseline of
   ``bench/study_scale_raw.py``: the fewest plain Label Studio calls that reach the same end state (per worker
   a project and imports of 500 tasks with each prediction inline, per annotator a sign-up form POST; payloads
   built before its clock starts). Both end states are checked alike (tasks and predictions per project). Then
   a rerun of ``study create`` with nothing to do.
2. Simulated annotation of every task but a few per project: bulk, inside Label Studio's own environment
   through its Django models (``bench/ls_bulk_annotate.py``: the rows its API would write, and the task fields
   ``Annotation.save`` would update), since 31,000 API POSTs at ~110 ms take about an hour. The tasks left are
   annotated through the API (real POSTs) in step 3 and 4.
3. Submit latency: real ``POST /api/tasks/{id}/annotations/`` (the request the labeling screen's Submit
   sends), interleaved round by round over three settings of the project's webhook: the study's receiver
   (``/webhook`` of the backend, which Label Studio calls inside the request), a receiver that answers 200 at
   once (the standard library's HTTP server, in its own process like the backend), and no webhook, 300 submits
   a setting (a p95 of 100 rests on its 5 slowest and moved by +-8 ms between runs of the same code). p50 / p95
   of each; the difference of the first
   two is what our receiver adds, the difference of the last two what Label Studio's own serialisation and POST
   cost. Also the receivers alone: p50 / p95 of POSTing a recorded Label Studio payload straight to each.
4. ``posthoc score --periodic`` (the defaults: 1,000 bootstrap resamples, CSV) as a subprocess: a full run
   into an empty folder; a second with nothing new; a third after one worker submitted one more task through
   the API (it must export exactly one project); then a full run into another empty folder, whose files must
   equal the third run's byte for byte.

    python bench/study_scale_bench.py             # both scenarios (~30 min; under the heavy lock)
    python bench/study_scale_bench.py --small     # quick iteration: 3 x 40 and 8 x 10, not saved
    python bench/study_scale_bench.py --scenarios a
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from bench_servers import instant_receiver, start_label_studio, study_backend
from benchlib import BenchRun

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

SCENARIOS = {"a": (20, 1500), "b": (300, 20)}
SMALL = {"a": (4, 150), "b": (12, 20)}
MODES = ("study receiver", "answers 200 at once", "no webhook")


@dataclass
class Figures:
    """What one scenario measured."""

    name: str
    create: float = 0.0
    raw: float = 0.0
    rerun: float = 0.0
    annotate: float = 0.0
    full: float = 0.0
    nothing_new: float = 0.0
    one_new: float = 0.0
    full_again: float = 0.0
    one_new_exported: int = -1
    identical: bool = False
    submit_p50: dict[str, float] = field(default_factory=dict)
    submit_p95: dict[str, float] = field(default_factory=dict)
    alone_p95: dict[str, float] = field(default_factory=dict)


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _posthoc(*args: str, token: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = dict(os.environ, LABEL_STUDIO_TOKEN=token)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          env=env, check=False, timeout=3600)
    return time.perf_counter() - started, done


def _outputs(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".posthoc-score.lock" and ".posthoc-cache" not in p.parts}


def _decisions(manifest: Any, seed: int) -> dict[str, dict[str, str]]:
    """A seeded decision for every pre-filled region (the expected one on control tasks)."""
    rng = np.random.default_rng(seed)
    mentions = manifest.mentions()
    draws = rng.choice(["verify", "edit", "remove", "deleted"], size=len(mentions), p=[0.8, 0.1, 0.05, 0.05])
    plan: dict[str, dict[str, str]] = {}
    expected = mentions["expected_outcome"] if "expected_outcome" in mentions else [None] * len(mentions)
    for key, mention, want, draw in zip(mentions["task_key"], mentions["mention_id"], expected, draws, strict=True):
        plan.setdefault(str(key), {})[str(mention)] = str(want) if isinstance(want, str) and want else str(draw)
    return plan


def _list_projects(http: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    projects: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = http.get("/api/projects/", params={"page": page, "page_size": 100, **params}).json()
        projects += answer.get("results", [])
        if not answer.get("next"):
            return projects
        page += 1


class Study:
    """The study's projects on the server: ids, workers' user ids, tasks left unannotated."""

    def __init__(self, http: httpx.Client, manifest: Any) -> None:
        from posthoc.study.live.projects import study_projects

        found = study_projects(_list_projects(http), str(manifest.study), manifest.workers())
        self.projects = {worker: int(project["id"]) for worker, project in found.items()}
        self.counts = {worker: (int(p.get("task_number") or 0), int(p.get("total_predictions_number") or 0))
                       for worker, p in found.items()}
        users = {str(u["email"]).lower(): int(u["id"]) for u in http.get("/api/users/").json()}
        from posthoc.labelstudio.users import worker_email

        self.emails = {worker: worker_email(worker) for worker in self.projects}
        self.users = {worker: users[email] for worker, email in self.emails.items()}


def _open_tasks(http: httpx.Client, project_id: int) -> list[dict[str, Any]]:
    answer = http.get("/api/tasks/", params={"project": project_id, "page_size": 100, "fields": "all",
                                             "query": json.dumps({"filters": {"conjunction": "and", "items": [
                                                 {"filter": "filter:tasks:total_annotations", "operator": "equal",
                                                  "type": "Number", "value": 0}]}})}).json()
    return sorted(answer["tasks"], key=lambda t: int(t["id"]))


def _result_for(task: dict[str, Any], decisions: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    predictions = task.get("predictions") or []
    prediction = predictions[0] if predictions else {"result": []}
    wanted = decisions.get(str(task["data"].get("task_key")), {})
    result = []
    for item in prediction.get("result") or []:
        decision = wanted.get(str(item.get("id")), "verify")
        if decision == "deleted":
            continue
        if item.get("type") == "labels":
            result.append({**item, "origin": "prediction-changed", "value": {**item["value"], "labels": [decision]}})
        else:
            result.append(item)
    return result


def _submit(http: httpx.Client, task: dict[str, Any], user: int, decisions: dict[str, dict[str, str]]) -> float:
    body = {"result": _result_for(task, decisions), "lead_time": 3.0, "was_cancelled": False, "completed_by": user}
    started = time.perf_counter()
    answer = http.post(f"/api/tasks/{task['id']}/annotations/", json=body)
    elapsed = time.perf_counter() - started
    if answer.status_code != 201:
        raise SystemExit(f"submit of task {task['id']}: HTTP {answer.status_code} {answer.text[:300]}")
    return elapsed


def _set_webhook(http: httpx.Client, project_id: int, hook: dict[str, Any], mode: str, instant: str,
                 study_url: str) -> None:
    if mode == "no webhook":
        http.patch(f"/api/webhooks/{hook['id']}/", json={"is_active": False}).raise_for_status()
    else:
        url = study_url if mode == "study receiver" else f"{instant}/webhook"
        http.patch(f"/api/webhooks/{hook['id']}/", json={"is_active": True, "url": url}).raise_for_status()


def submit_latency(run: BenchRun, figures: Figures, http: httpx.Client, study: Study,
                   decisions: dict[str, dict[str, str]], *, per_mode: int, backend_url: str) -> None:
    """Step 3 of the module docstring: Submit p50 / p95 under the three webhook settings, and the receivers alone."""
    open_tasks = {w: _open_tasks(http, p) for w, p in study.projects.items()}
    # round-robin over the projects; each project keeps its last open task for step 4
    queue = [(w, v[i]) for i in range(max(len(v) for v in open_tasks.values()))
             for w, v in sorted(open_tasks.items()) if i < len(v) - 1]
    if len(queue) < per_mode * len(MODES):
        raise SystemExit(f"only {len(queue)} open tasks for {per_mode * len(MODES)} submits")
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    study_hook = f"{backend_url}/webhook"
    with instant_receiver() as instant:
        hooks: dict[int, dict[str, Any]] = {}
        for project_id in study.projects.values():
            found = [h for h in http.get("/api/webhooks/", params={"project": project_id}).json()
                     if str(h.get("url", "")).rstrip("/") == study_hook]
            if not found:  # a study made with --no-webhook: the bench adds the receiver's hook itself
                found = [http.post("/api/webhooks/", json={"project": project_id, "url": study_hook,
                                                           "send_payload": True, "send_for_all_actions": True}
                                   ).raise_for_status().json()]
            hooks[project_id] = found[0]
        for round_ in range(per_mode):
            order = MODES if round_ % 2 == 0 else MODES[::-1]
            for mode in order:
                worker, task = queue.pop(0)
                project_id = study.projects[worker]
                _set_webhook(http, project_id, hooks[project_id], mode, instant, study_hook)
                times[mode].append(_submit(http, task, study.users[worker], decisions))
        for project_id, hook in hooks.items():  # back to the study's receiver
            _set_webhook(http, project_id, hook, "study receiver", instant, study_hook)
        alone = _receivers_alone(backend_url, instant, runs=200)
    for mode in MODES:
        values = [1000 * v for v in times[mode]]
        run.print(f"  Submit via the API, {mode}: p50 {_percentile(values, 50):.1f} ms, p95 "
                  f"{_percentile(values, 95):.1f} ms ({len(values)} submits)")
    p95 = {mode: _percentile([1000 * v for v in times[mode]], 95) for mode in MODES}
    p50 = {mode: _percentile([1000 * v for v in times[mode]], 50) for mode in MODES}
    run.print(f"  our receiver adds {p95['study receiver'] - p95['answers 200 at once']:+.1f} ms to Submit p95 "
              f"({p50['study receiver'] - p50['answers 200 at once']:+.1f} ms p50) over one answering at once; "
              f"Label Studio's own webhook serialisation and POST: "
              f"{p50['answers 200 at once'] - p50['no webhook']:+.1f} ms p50, "
              f"{p95['answers 200 at once'] - p95['no webhook']:+.1f} ms p95 over no webhook")
    for name, values in alone.items():
        run.print(f"  receiver alone, {name}: p50 {_percentile(values, 50):.2f} ms, p95 {_percentile(values, 95):.2f} "
                  f"ms (200 POSTs of a Label Studio ANNOTATION_CREATED payload)")
    figures.submit_p50, figures.submit_p95 = p50, p95
    figures.alone_p95 = {name: _percentile(values, 95) for name, values in alone.items()}


def _receivers_alone(backend_url: str, instant: str, *, runs: int) -> dict[str, list[float]]:
    from backend.payloads import annotation_event

    event = annotation_event("ANNOTATION_CREATED", annotation_id=10**9, task_id=1, task_key="bench-task",
                             text="Obama met Macron in Paris. " * 20,
                             result=[{"id": f"m{i}", "type": "labels", "from_name": "mention", "to_name": "text",
                                      "value": {"start": i, "end": i + 3, "labels": ["verify"]}} for i in range(8)])
    body = json.dumps(event).encode("utf-8")
    found: dict[str, list[float]] = {"study receiver": [], "answers 200 at once": []}
    with httpx.Client(timeout=30, headers={"Content-Type": "application/json"}) as client:
        for number in range(runs):
            for name, url in (("study receiver", f"{backend_url}/webhook"), ("answers 200 at once",
                                                                              f"{instant}/webhook")):
                started = time.perf_counter()
                answer = client.post(url, content=body)
                elapsed = time.perf_counter() - started
                if answer.status_code != 200:
                    raise SystemExit(f"{name}: HTTP {answer.status_code} {answer.text[:200]}")
                if number >= 5:  # warm-up
                    found[name].append(1000 * elapsed)
    return found


def _plan(folder: Path, n_workers: int, n_tasks: int) -> Any:
    """A manifest of about ``n_workers x n_tasks`` tasks over the synthetic Table-1 corpus of plan_bench (seeded;
    ``study_scale_raw.plan_scale_study``, with one control task a batch)."""
    from study_scale_raw import plan_scale_study

    manifest = plan_scale_study(folder / "scale.manifest", n_workers=n_workers, tasks_per_worker=n_tasks)
    planned = len(manifest.tasks())
    if planned < 0.97 * n_workers * n_tasks:  # the planner's batches are not exact: ask for more, once
        manifest.close()
        (folder / "scale.manifest").unlink()
        asked = round(n_tasks * n_workers * n_tasks / planned)
        manifest = plan_scale_study(folder / "scale.manifest", n_workers=n_workers, tasks_per_worker=asked)
    return manifest


def scenario(run: BenchRun, name: str, n_workers: int, n_tasks: int, *, per_mode: int, folder: Path,
             skip_create: bool = False) -> Figures:
    from posthoc.paths import label_config

    figures = Figures(name)
    config = label_config("entity_verification")
    manifest = _plan(folder, n_workers, n_tasks)
    run.print(f"({name}) {len(manifest.workers())} workers x {n_tasks} tasks: {len(manifest.tasks())} tasks, "
              f"{len(manifest.mentions())} pre-filled annotations")
    from study_scale_raw import raw_create, raw_payloads

    from posthoc.jobs.setup import SetupTarget, create_study
    from posthoc.study.plan.study import Study as OpenedStudy  # this bench's own Study is the raw side's

    server = start_label_studio(folder)
    try:
        with study_backend(manifest.path, folder / "scale.events.sqlite3") as backend_url, \
                httpx.Client(base_url=server.url, headers={"Authorization": f"Token {server.token}"},
                             timeout=600) as http:
            target = SetupTarget(url=server.url, token=server.token, backend_url=backend_url)
            if skip_create:
                started = time.perf_counter()
                create_study(OpenedStudy(manifest), target)
                run.print(f"  NOT MEASURED here (--skip-create): study create against raw; set up by study create in "
                          f"{time.perf_counter() - started:.1f} s")
                study = Study(http, manifest)
            else:
                payloads = raw_payloads(manifest, config)
                figures.raw = raw_create(server.url, server.token, "scale", payloads, config)
                started = time.perf_counter()
                first = create_study(OpenedStudy(manifest), target)
                figures.create = time.perf_counter() - started
                started = time.perf_counter()
                again = create_study(OpenedStudy(manifest), target)
                figures.rerun = time.perf_counter() - started
                study = Study(http, manifest)
                raw_counts = {str(p["title"]).rsplit(" ", 1)[-1]: (int(p["task_number"]),
                                                                    int(p["total_predictions_number"]))
                              for p in _list_projects(http, title="raw scale")}
                if raw_counts != study.counts:
                    run.fail(f"({name}) the raw baseline's projects differ from study create's (tasks, predictions)")
                run.print(f"  study create {figures.create:.1f} s (imported {first.imported_tasks} tasks) against "
                          f"raw {figures.raw:.1f} s: {figures.create / figures.raw:.2f}x; rerun {figures.rerun:.2f} s "
                          f"({100 * figures.rerun / figures.create:.1f}% of the first, imported "
                          f"{again.imported_tasks})")
            expected = {w: len(manifest.tasks(w)) for w in manifest.workers()}
            if study.counts != {w: (n, n) for w, n in expected.items()}:
                run.fail(f"({name}) the study's projects hold other task / prediction counts than planned: "
                         f"{study.counts} vs {expected}")
            decisions = _decisions(manifest, seed=7)
            leave = 1 + 2 * -(-per_mode * len(MODES) // len(study.projects))
            plan = folder / "annotate.json"
            plan.write_text(json.dumps({"projects": {str(p): study.emails[w] for w, p in study.projects.items()},
                                        "decisions": decisions, "leave": leave}), encoding="utf-8")
            started = time.perf_counter()
            done = subprocess.run([sys.executable, str(HERE / "ls_bulk_annotate.py"), str(plan)],
                                  env=server.environment(), capture_output=True, text=True, check=False,
                                  timeout=3600)
            figures.annotate = time.perf_counter() - started
            if done.returncode != 0:
                run.fail(f"bulk annotation failed: {done.stderr[-2000:]}")
            run.print(f"  simulated annotation: {done.stdout.strip()} tasks in {figures.annotate:.1f} s (bulk, "
                      f"Label Studio's models); {leave} a project left for real API submits")
            submit_latency(run, figures, http, study, decisions, per_mode=per_mode, backend_url=backend_url)
            figures = _score_runs(run, figures, http, study, decisions, manifest, server, folder)
    finally:
        server.stop()
    return figures


def _score_runs(run: BenchRun, figures: Figures, http: httpx.Client, study: Study,
                decisions: dict[str, dict[str, str]], manifest: Any, server: Any, folder: Path) -> Figures:
    out = folder / "score"
    common = ("--manifest", str(manifest.path), "--url", server.url, "--periodic", "--quiet")
    figures.full, done = _posthoc("score", *common, "--out", str(out), token=server.token)
    if done.returncode != 0:
        run.fail(f"full score: exit {done.returncode}: {done.stderr[-2000:]}")
    run.print(f"  posthoc score, full: {figures.full:.1f} s: {done.stdout.strip()}")
    figures.nothing_new, done = _posthoc("score", *common, "--out", str(out), token=server.token)
    if done.returncode != 10:
        run.fail(f"nothing-new score: exit {done.returncode} (not 10): {done.stdout} {done.stderr[-2000:]}")
    run.print(f"  posthoc score, nothing new: {figures.nothing_new:.2f} s "
              f"({100 * figures.nothing_new / figures.full:.1f}% of the full run): {done.stdout.strip()}")
    worker = sorted(study.projects)[0]
    task = _open_tasks(http, study.projects[worker])[0]
    _submit(http, task, study.users[worker], decisions)
    figures.one_new, done = _posthoc("score", *common, "--out", str(out), token=server.token)
    if done.returncode != 0:
        run.fail(f"one-new score: exit {done.returncode}: {done.stderr[-2000:]}")
    line = done.stdout.strip()
    figures.one_new_exported = int(line.split(" of ")[0].rsplit("(", 1)[-1]) if " projects exported" in line else -1
    run.print(f"  posthoc score after one more task: {figures.one_new:.1f} s "
              f"({100 * figures.one_new / figures.full:.1f}% of the full run): {line}")
    fresh = folder / "score-full"
    figures.full_again, done = _posthoc("score", *common, "--out", str(fresh), token=server.token)
    if done.returncode != 0:
        run.fail(f"second full score: exit {done.returncode}: {done.stderr[-2000:]}")
    figures.identical = _outputs(out) == _outputs(fresh)
    run.print(f"  posthoc score, full into an empty folder: {figures.full_again:.1f} s; files identical to the "
              f"incremental run's: {figures.identical} ({len(_outputs(out))} files)")
    if figures.one_new_exported != 1:
        run.fail(f"the one-new-task run exported {figures.one_new_exported} projects, not 1")
    if not figures.identical:
        run.fail("the incremental run's files differ from a full run's")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="3 x 40 and 8 x 10 tasks, 5 submits a setting; "
                        "results are not saved")
    parser.add_argument("--scenarios", default="a,b", help="which of a (20 x 1,500) and b (300 x 20) to run")
    parser.add_argument("--submits", type=int, default=None, help="submits per webhook setting (default 300)")
    parser.add_argument("--skip-create", action="store_true", help="set the study up by study create, untimed, "
                        "without the raw baseline")
    args = parser.parse_args(argv)
    sizes = SMALL if args.small else SCENARIOS
    per_mode = args.submits or (5 if args.small else 300)
    results_dir = Path(tempfile.mkdtemp(prefix="study-scale-small-")) if args.small else None
    chosen = [name.strip() for name in args.scenarios.split(",")]
    title = "study_scale_bench" if sorted(chosen) == ["a", "b"] else f"study_scale_bench_{'_'.join(chosen)}"
    with BenchRun(title, results_dir=results_dir) as run:
        run.print("raw = Label Studio's own project create + import with predictions inline + sign-up form "
                  "(bench/study_scale_raw.py); annotation bulk through Label Studio's models, submits through "
                  "the API")
        found: list[Figures] = []
        for name in chosen:
            workers, tasks = sizes[name]
            with tempfile.TemporaryDirectory(prefix=f"study-scale-{name}-") as tmp:
                found.append(scenario(run, name.strip(), workers, tasks, per_mode=per_mode, folder=Path(tmp),
                                      skip_create=args.skip_create))
        parts = []
        for figures in found:
            created = "create not measured"
            if figures.raw:
                created = (f"create {figures.create / figures.raw:.2f}x raw, rerun "
                           f"{100 * figures.rerun / figures.create:.1f}%")
            parts.append(f"({figures.name}) {created}, nothing-new score "
                         f"{100 * figures.nothing_new / figures.full:.1f}% of full ({figures.full:.0f} s), "
                         f"one new task: {figures.one_new_exported} project exported, identical; our webhook "
                         f"receiver adds {figures.submit_p95['study receiver'] - figures.submit_p95[MODES[1]]:+.1f} "
                         f"ms to Submit p95 (receiver alone p95 {figures.alone_p95['study receiver']:.1f} ms)")
        run.headline("; ".join(parts))
        for figures in found:
            checks = {} if not figures.raw else {
                "create within 1.5x of raw": figures.create <= 1.5 * figures.raw,
                "rerun <= 5% of the first": figures.rerun <= 0.05 * figures.create}
            checks |= {"receiver adds <= 5 ms to Submit p95": figures.submit_p95["study receiver"]
                       - figures.submit_p95[MODES[1]] <= 5.0,
                       "receiver alone p95 < 5 ms": figures.alone_p95["study receiver"] < 5.0}
            if figures.name == "a":
                checks["nothing-new score <= 5% of full"] = figures.nothing_new <= 0.05 * figures.full
            for check, ok in checks.items():
                run.print(f"  ({figures.name}) {check}: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
