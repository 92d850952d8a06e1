"""What the study gateway (issue 23) costs a worker: next-task and Submit through nginx + the authoriser against the
same calls straight to Label Studio, side by side on one Label Studio.

Target (issue 23): the gateway adds at most 5 ms p95 to Submit and to next-task.

Setup: a fresh Label Studio 1.23 (SQLite, a copy of the tests' migrated template), a three-worker study made by
``create_study`` with the study's ML backend (``posthoc backend serve``) and no project webhook (a webhook's cost,
measured apart in docs/backend.md, would be the same on both sides), and the gateway as ``posthoc ls start
--gateway`` runs it (:class:`posthoc.jobs.gateway_process.GatewayProcesses`: gunicorn authoriser, Debian's
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

Two measures of what the gateway adds: side by side, p95 through the gateway less p95 direct (with a paired
bootstrap interval: each side's p95 moves by tens of ms from run to run with Label Studio's own spread, more than
the target), and nginx's own account per request: its ``$request_time`` less Label Studio's
``$upstream_response_time`` in the gateway's access log (the authoriser's sub-request and nginx's forwarding, 1 ms
resolution), whose p95 the headline holds against the target.

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


def gateway_shares(log: Path, offset: int, *, project_id: int, task_id: int) -> dict[str, list[float]]:
    """Per request of the measured rounds, nginx's own account of the gateway's share (seconds): the request's
    ``$request_time`` less Label Studio's ``$upstream_response_time`` (its access log's format,
    :data:`posthoc.labelstudio.gateway_nginx.TIMING_FORMAT`, ms resolution), read from byte ``offset`` on."""
    calls = {("GET", f"/api/projects/{project_id}/next"): "next-task",
             ("POST", f"/api/tasks/{task_id}/annotations/"): "Submit"}
    shares: dict[str, list[float]] = {"next-task": [], "Submit": []}
    with log.open("rb") as handle:
        handle.seek(offset)
        for line in handle.read().decode("utf-8", "replace").splitlines():
            fields = line.split(" ")
            if len(fields) < 6 or (fields[1], fields[2]) not in calls or fields[5] in ("", "-"):
                continue
            upstream = fields[5].split(",")  # more than one: nginx tried another upstream (it reports each)
            shares[calls[(fields[1], fields[2])]].append(float(fields[4]) - sum(float(u) for u in upstream))
    return shares


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
    from posthoc.jobs.gateway_process import GatewayProcesses
    from posthoc.jobs.setup import SetupTarget, create_study
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.labelstudio.records import int_id
    from posthoc.study.plan.logins import default_accounts_file, read_accounts
    from posthoc.study.plan.study import Study

    with BenchRun("gateway_bench") as run, tempfile.TemporaryDirectory(prefix="gateway-bench-") as folder:
        root = Path(folder)
        server = start_label_studio(root)
        try:
            manifest = small_sample_manifest(root / "manifest.sqlite", name="gwbench", n_documents=6, n_workers=3,
                                             tasks_per_batch=5, control_tasks=False)
            with study_backend(Path(manifest.path), root / "events.sqlite") as backend_url:
                setup = create_study(Study(manifest), SetupTarget(url=server.url, token=server.token,
                                                                  backend_url=backend_url))  # no webhook
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
                log = root / "gateway" / "access.log"
                offset = log.stat().st_size
                with httpx.Client(base_url=gateway.authoriser.url, timeout=60) as authoriser:
                    nexts, submits, served = measure(sides, project_id=project_id, task_id=task_id, body=body,
                                                     rounds=args.rounds, authoriser=authoriser)
                for client in sides.values():
                    client.close()
                shares = gateway_shares(log, offset, project_id=project_id, task_id=task_id)
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
        for call, values in shares.items():
            if len(values) != args.rounds:
                run.fail(f"nginx's log holds {len(values)} {call} requests of the {args.rounds} rounds")
            own = percentiles(values)
            run.print(f"{call:9s} the gateway's own share per request (nginx: request time less Label Studio's): "
                      f"p50 {own[0]:.2f} ms  p95 {own[1]:.2f} ms  p99 {own[2]:.2f} ms (1 ms resolution)")
            added[f"{call} own"] = own[1]
        alone = percentiles(nexts["authorise"])
        run.print(f"the authoriser alone (next-task's sub-request, straight to it, keep-alive): p50 {alone[0]:.2f} ms"
                  f"  p95 {alone[1]:.2f} ms  p99 {alone[2]:.2f} ms")
        met = {call: added[f"{call} own"] <= TARGET_MS for call in ("next-task", "Submit")}
        run.headline(f"the gateway's own share of a request, p95 (nginx's request time less Label Studio's): "
                     f"next-task {added['next-task own']:.2f} ms, Submit {added['Submit own']:.2f} ms (target <= "
                     f"{TARGET_MS:.0f} ms: {'met' if all(met.values()) else 'NOT met'}); side by side, p95 gateway - "
                     f"direct: next-task {added['next-task']:+.2f} ms, Submit {added['Submit']:+.2f} ms ({args.rounds} "
                     f"calls a side, alternating; p50 {added_p50['next-task']:+.2f} / {added_p50['Submit']:+.2f} ms); "
                     f"the authoriser alone answers in {alone[1]:.2f} ms p95; same annotations stored both ways")


if __name__ == "__main__":
    main()
