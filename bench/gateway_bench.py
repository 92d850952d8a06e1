"""What the study gateway (issue 23) costs a worker: next-task and Submit through nginx + the authoriser against the
same calls straight to Label Studio, side by side on one Label Studio.

Target (issue 23): the gateway adds at most 5 ms p95 to Submit and to next-task.

Setup: a fresh Label Studio 1.23 (SQLite, a copy of the tests' migrated template), a three-worker study made by
``create_study`` with the study's ML backend (``posthoc backend serve``) and no project webhook (a webhook's cost,
measured apart in docs/backend.md, would be the same on both sides), and the gateway as ``posthoc ls start
--gateway`` runs it (:class:`posthoc.labelstudio.gateway_process.GatewayProcesses`: gunicorn authoriser, Debian's
nginx). Worker w001 logs in twice with Label Studio's form, once straight and once through the gateway: two
browser-like sessions (session cookie, CSRF header, keep-alive), each its own ``httpx.Client``.

Measured, alternating request by request and which side goes first from round to round:

* next-task: ``GET /api/projects/{id}/next`` (the labelling stream's call);
* the authoriser alone, asked straight about the gateway side's next-task as nginx asks it (what the gateway adds
  per request besides nginx's own forwarding);
* Submit: ``POST /api/tasks/{id}/annotations/`` with the body the labelling interface sends: the task's pre-filled
  regions each decided "verify" (:func:`posthoc.jobs.simulate.annotation_result`), ``lead_time``,
  ``parent_prediction`` and ``project``. Every Submit goes to the batch's *last* task, so ``/next`` keeps serving
  the first one and both sides do the same work throughout.

Checked: every call answered 200 / 201 on both sides, both sides served the same next task, and Label Studio
stores exactly as many annotations from each side (the last task's annotation count grows by 2 x rounds).

Usage: ``python bench/gateway_bench.py [--rounds 300]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from bench_servers import start_label_studio, study_backend
from benchlib import BenchRun

TARGET_MS = 5.0


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p95, p99 of ``samples`` (seconds) in milliseconds (``statistics.quantiles``, inclusive method)."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[94] * 1000, cuts[98] * 1000


def p95_difference_interval(direct: list[float], through: list[float], *, resamples: int = 2000,
                            seed: int = 23) -> tuple[float, float]:
    """A 90% bootstrap interval (ms) of p95(gateway) - p95(direct), rounds resampled in pairs: how far the measured
    difference could move by chance alone (the two sides' p95s are each hundreds of ms wide)."""
    import numpy as np

    pairs = np.asarray([direct, through]) * 1000
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, pairs.shape[1], size=(resamples, pairs.shape[1]))
    sampled = pairs[:, picks]  # 2 x resamples x rounds
    differences = np.percentile(sampled[1], 95, axis=1) - np.percentile(sampled[0], 95, axis=1)
    low, high = np.percentile(differences, [5, 95])
    return float(low), float(high)


def browser_session(base_url: str, email: str, password: str) -> httpx.Client:
    """A logged-in session as the browser has it (Label Studio's login form, CSRF header, keep-alive)."""
    session = httpx.Client(base_url=base_url, follow_redirects=False, timeout=60)
    session.get("/user/login/")
    answer = session.post("/user/login/", data={"email": email, "password": password,
                                                "csrfmiddlewaretoken": session.cookies["csrftoken"]},
                          headers={"Referer": f"{base_url}/user/login/"})
    if answer.status_code != 302:
        raise SystemExit(f"login at {base_url} failed: {answer.status_code} {answer.text[:200]}")
    session.headers.update({"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"{base_url}/"})
    return session


def submit_body(admin: Any, project_id: int, task_id: int) -> dict[str, Any]:
    """The labelling interface's Submit body for ``task_id``: every pre-filled region decided "verify"."""
    from posthoc.jobs.simulate import annotation_result
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.labelstudio.records import int_id, region_from_name, region_id, result_items
    from posthoc.paths import label_config

    tags = verification_tags(label_config("entity_verification"))
    (prediction,) = admin.predictions(task_id)
    items = result_items(prediction)
    decisions = {str(region_id(i)): ("verify", None) for i in items if region_from_name(i) == tags.labels}
    return {"result": annotation_result(items, decisions, tags), "lead_time": 3.2,
            "parent_prediction": int_id(prediction), "project": project_id}


def measure(sides: dict[str, httpx.Client], *, project_id: int, task_id: int, body: dict[str, Any],
            rounds: int, authoriser: httpx.Client | None = None
            ) -> tuple[dict[str, list[float]], dict[str, list[float]], set[str]]:
    """``rounds`` of next-task then Submit on each side, alternating; times per side and the next tasks seen. With
    ``authoriser``, each round also asks it alone about the gateway side's next-task, as nginx does (the
    ``authorise`` entry of the first dict)."""
    nexts: dict[str, list[float]] = {name: [] for name in sides}
    nexts["authorise"] = []
    submits: dict[str, list[float]] = {name: [] for name in sides}
    served: set[str] = set()
    names = list(sides)
    for round_ in range(rounds):
        if authoriser is not None:
            start = time.perf_counter()
            answer = authoriser.get("/authorise", headers={
                "X-Original-Method": "GET", "X-Original-URI": f"/api/projects/{project_id}/next",
                "Cookie": f"sessionid={sides['gateway'].cookies['sessionid']}"})
            nexts["authorise"].append(time.perf_counter() - start)
            if answer.status_code != 204:
                raise SystemExit(f"the authoriser answered {answer.status_code}: {answer.text[:200]}")
        for name in names if round_ % 2 == 0 else names[::-1]:
            client = sides[name]
            start = time.perf_counter()
            answer = client.get(f"/api/projects/{project_id}/next")
            nexts[name].append(time.perf_counter() - start)
            if answer.status_code != 200:
                raise SystemExit(f"{name}: next-task answered {answer.status_code}: {answer.text[:200]}")
            served.add(str(answer.json().get("id")))
            start = time.perf_counter()
            answer = client.post(f"/api/tasks/{task_id}/annotations/", json=body)
            submits[name].append(time.perf_counter() - start)
            if answer.status_code != 201:
                raise SystemExit(f"{name}: Submit answered {answer.status_code}: {answer.text[:200]}")
    return nexts, submits, served


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="calls of each kind on each side")
    args = parser.parse_args()
    from lsfixtures import small_sample_manifest
    from posthoc.jobs.setup import create_study
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.labelstudio.gateway_process import GatewayProcesses
    from posthoc.labelstudio.records import int_id
    from posthoc.study.plan.logins import default_accounts_file, read_accounts

    with BenchRun("gateway_bench") as run, tempfile.TemporaryDirectory(prefix="gateway-bench-") as folder:
        root = Path(folder)
        server = start_label_studio(root)
        try:
            manifest = small_sample_manifest(root / "manifest.sqlite", name="gwbench", n_documents=6, n_workers=3,
                                             tasks_per_batch=5, control_tasks=False)
            with study_backend(Path(manifest.path), root / "events.sqlite") as backend_url:
                setup = create_study(manifest, url=server.url, token=server.token, backend_url=backend_url,
                                     webhook=False)
            admin = LabelStudioClient(server.url, server.token)
            project_id = setup.project_ids()["w001"]
            tasks = [int_id(t) for t in admin.tasks(project_id)]
            task_id = tasks[-1]
            body = submit_body(admin, project_id, task_id)
            account = read_accounts(default_accounts_file(Path(manifest.path)))["w001"]
            before = len(admin.request("GET", f"/api/tasks/{task_id}/annotations/"))
            with GatewayProcesses(manifest=Path(manifest.path), ls_url=server.url, token=server.token,
                                  folder=root / "gateway") as gateway:
                sides = {"direct": browser_session(server.url, account["email"], account["password"]),
                         "gateway": browser_session(gateway.url, account["email"], account["password"])}
                measure(sides, project_id=project_id, task_id=task_id, body=body, rounds=10)  # warm both up
                warm = len(admin.request("GET", f"/api/tasks/{task_id}/annotations/"))
                with httpx.Client(base_url=gateway.authoriser.url, timeout=60) as authoriser:
                    nexts, submits, served = measure(sides, project_id=project_id, task_id=task_id, body=body,
                                                     rounds=args.rounds, authoriser=authoriser)
                for client in sides.values():
                    client.close()
            after = len(admin.request("GET", f"/api/tasks/{task_id}/annotations/"))
        finally:
            server.stop()
        if warm - before != 20 or after - warm != 2 * args.rounds or served != {str(tasks[0])}:
            run.fail(f"the sides disagree: {after - warm} annotations stored for {2 * args.rounds} Submits, "
                     f"next tasks served {sorted(served)} (expected {tasks[0]})")
        run.print(f"one Label Studio (SQLite), worker w001's project {project_id} ({len(tasks)} tasks); "
                  f"{args.rounds} rounds, each side alternately first; annotations stored: {after - warm} "
                  f"({args.rounds} a side), next task always {tasks[0]} on both sides")
        added: dict[str, float] = {}
        added_p50: dict[str, float] = {}
        for call, times in (("next-task", nexts), ("Submit", submits)):
            direct, through = percentiles(times["direct"]), percentiles(times["gateway"])
            added[call] = through[1] - direct[1]
            added_p50[call] = through[0] - direct[0]
            run.print(f"{call:9s} direct  p50 {direct[0]:6.2f} ms  p95 {direct[1]:6.2f} ms  p99 {direct[2]:6.2f} ms")
            run.print(f"{call:9s} gateway p50 {through[0]:6.2f} ms  p95 {through[1]:6.2f} ms  p99 {through[2]:6.2f} ms"
                      f"  (added: p50 {through[0] - direct[0]:+.2f}, p95 {added[call]:+.2f}, "
                      f"p99 {through[2] - direct[2]:+.2f} ms)")
            low, high = p95_difference_interval(times["direct"], times["gateway"])
            run.print(f"{call:9s} added p95, 90% bootstrap interval over the paired rounds: {low:+.2f} .. "
                      f"{high:+.2f} ms")
        alone = percentiles(nexts["authorise"])
        run.print(f"the authoriser alone (next-task's sub-request, straight to it, keep-alive): p50 {alone[0]:.2f} ms"
                  f"  p95 {alone[1]:.2f} ms  p99 {alone[2]:.2f} ms")
        met = all(value <= TARGET_MS for value in added.values())
        run.headline(f"the gateway adds {added['next-task']:+.2f} ms p95 to next-task and {added['Submit']:+.2f} ms "
                     f"p95 to Submit ({args.rounds} calls a side, alternating; target <= {TARGET_MS:.0f} ms: "
                     f"{'met' if met else 'NOT met'}); p50 {added_p50['next-task']:+.2f} / "
                     f"{added_p50['Submit']:+.2f} ms; "
                     f"the authoriser alone answers in {alone[1]:.2f} ms p95; same annotations stored both ways")


if __name__ == "__main__":
    main()
