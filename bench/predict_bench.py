"""Benchmark of the ML backend's /predict under gunicorn (the production setup of `posthoc backend serve`).

Builds a study manifest from the bundled sample corpus copied ``--copies`` times (distinct
documents, so more tasks), starts gunicorn with ``--workers`` workers on a free loopback port,
then measures:

1. sequential /predict latency (p50, p95) for batches of 1 task and of 100 tasks;
2. requests per second and errors with ``--clients`` concurrent clients (threads, one
   ``requests.Session`` each) sending ``--requests`` single-task /predict requests in total.

Baseline: the floor of this server and client on this machine now, ``GET /health`` on the same gunicorn
(it does no work: parsing, routing and JSON of a tiny reply only). Sequential single-task /predict and
/health requests are timed with ``benchlib.time_both`` (interleaved, the same number of requests, the same
statistic, wall and CPU of this client process); the concurrent phase sends the same number of requests
with the same clients to both. Same numbers: a sample of /predict replies from gunicorn must equal the
replies of the same app called in-process (Flask's test client, no HTTP server); the bench fails otherwise.

Targets (issue 3): p50 under 20 ms for one task, over 200 requests/s, 0 errors. The figures
depend on the machine; they are printed next to the targets, never asserted.

Usage: ``python bench/predict_bench.py [--copies 10] [--workers 2] [--clients 20] [--requests 2000]``
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import requests
from benchlib import BenchRun, Timing, time_both


def build_manifest(folder: Path, copies: int) -> Path:
    """The sample corpus copied ``copies`` times (doc ids suffixed), planned and written as a manifest."""
    from posthoc.sample import sample_corpus
    from posthoc.study.plan.config import sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    corpus = sample_corpus()
    documents = pd.concat([corpus.documents.assign(doc_id=corpus.documents["doc_id"] + f"-{i}")
                           for i in range(copies)], ignore_index=True)
    mentions = pd.concat([corpus.mentions.assign(doc_id=corpus.mentions["doc_id"] + f"-{i}")
                          for i in range(copies)], ignore_index=True)
    plan = plan_study(documents, mentions, sample_study_config(name="bench"))
    path = folder / "bench.manifest.sqlite"
    Manifest.create(path, plan, overwrite=True).close()
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_gunicorn(manifest: Path | None, events: Path | None, *, workers: int,
                   predictor: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """gunicorn serving the backend (``predictor``: the live predictor's environment, as `--predictor` sets)."""
    from posthoc.cli.backend import backend_environment, gunicorn_command

    port = free_port()
    env = backend_environment(manifest=manifest, alias_files=(), events_db=events, predictor=predictor)
    env.pop("POSTHOC_BACKEND_SECRET", None)
    command = [c for c in gunicorn_command(host="127.0.0.1", port=port, workers=workers)
               if c not in {"--access-logfile", "-"}]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=5).status_code == 200:
                # every worker builds its index on boot: give the other ones a moment too
                for _ in range(workers * 3):
                    requests.get(f"{url}/health", timeout=30)
                return process, url
        except requests.RequestException:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit("gunicorn did not come up within 120 s")


def payload(records: list[dict[str, Any]], config: str) -> dict[str, Any]:
    tasks = [{"id": i + 1, "data": {"text": r["text"], "task_key": r["task_key"]}, "project": 1}
             for i, r in enumerate(records)]
    return {"tasks": tasks, "project": "1.1796005017", "label_config": config, "params": {"context": None}}


def sequential(url: str, bodies: list[dict[str, Any]]) -> tuple[list[float], int]:
    """Latencies in ms of one request after another (one session), and the number of errors."""
    latencies: list[float] = []
    errors = 0
    with requests.Session() as session:
        for body in bodies:
            start = time.perf_counter()
            reply = session.post(f"{url}/predict", json=body, timeout=60)
            latencies.append((time.perf_counter() - start) * 1000)
            errors += reply.status_code != 200 or "errors" in reply.json()
    return latencies, errors


def concurrent(url: str, bodies: list[dict[str, Any]], *, clients: int,
               path: str = "/predict") -> tuple[float, int, list[float]]:
    """Wall time in s for all ``bodies`` sent by ``clients`` threads, the error count and the latencies.

    ``path="/health"`` sends GETs instead: the floor of this client and server on this machine now.
    """
    lock = threading.Lock()
    position = 0
    errors = 0
    latencies: list[float] = []

    def client() -> None:
        nonlocal position, errors
        with requests.Session() as session:
            while True:
                with lock:
                    if position >= len(bodies):
                        return
                    body = bodies[position]
                    position += 1
                start = time.perf_counter()
                try:
                    if path == "/health":
                        reply = session.get(f"{url}/health", timeout=60)
                    else:
                        reply = session.post(f"{url}{path}", json=body, timeout=60)
                    bad = reply.status_code != 200 or "errors" in reply.json()
                except requests.RequestException:
                    bad = True
                elapsed = (time.perf_counter() - start) * 1000
                with lock:
                    errors += bad
                    latencies.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, errors, latencies


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


@dataclass(frozen=True)
class Phases:
    """What the timed phases measured: sequential single and health timings, 100-task batches (ms), the concurrent
    runs' wall times and latencies, and every error counted."""

    single_timing: Timing
    health_timing: Timing
    batch: list[float]
    wall: float
    conc_latencies: list[float]
    health_wall: float
    all_errors: int


def print_figures(run: BenchRun, args: argparse.Namespace, phases: Phases) -> None:
    """The bench's table and headlines, from the phases' figures."""
    single_timing, health_timing, batch = phases.single_timing, phases.health_timing, phases.batch
    conc_latencies, all_errors = phases.conc_latencies, phases.all_errors
    single = [t * 1000 for t in single_timing.wall]
    health_single = [t * 1000 for t in health_timing.wall]
    rps = args.requests / phases.wall
    health_rps = args.requests / phases.health_wall
    run.print(f"sequential, {args.single} requests each, interleaved: /predict 1 task "
              f"{single_timing.summary()}; GET /health {health_timing.summary()}")
    run.print()
    run.print(f"{'measure':<44}{'figure':>14}   target")
    run.print(f"{'/predict 1 task, p50 (sequential)':<44}{statistics.median(single):>11.2f} ms   < 20 ms")
    run.print(f"{'/predict 1 task, p95 (sequential)':<44}{pct(single, 95):>11.2f} ms")
    run.print(f"{'GET /health (floor), p50 (sequential)':<44}{statistics.median(health_single):>11.2f} ms")
    run.print(f"{'/predict 100 tasks, p50 (sequential)':<44}{statistics.median(batch):>11.2f} ms")
    run.print(f"{'/predict 100 tasks, p95 (sequential)':<44}{pct(batch, 95):>11.2f} ms")
    run.print(f"{f'{args.clients} clients, {args.requests} requests: rate':<44}{rps:>9.1f} req/s   > 200 req/s")
    run.print(f"{f'{args.clients} clients: latency p50 / p95':<44}"
              f"{statistics.median(conc_latencies):>6.1f} / {pct(conc_latencies, 95):.1f} ms")
    run.print(f"{f'{args.clients} clients, GET /health (floor): rate':<44}{health_rps:>9.1f} req/s")
    run.print(f"{'/predict rate / /health rate':<44}{rps / health_rps:>14.2f}")
    run.print(f"{'errors (all phases)':<44}{all_errors:>14d}   0")
    run.print()
    run.headline(f"/predict 1 task p50 {statistics.median(single):.2f} ms (GET /health floor "
                 f"{statistics.median(health_single):.2f} ms; target < 20 ms); 100 tasks p50 "
                 f"{statistics.median(batch):.1f} ms")
    run.headline(f"{args.clients} clients: {rps:.0f} req/s (/health floor {health_rps:.0f} req/s; target > 200), "
                 f"{all_errors} errors; replies equal the in-process app's")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10, help="copies of the sample corpus in the manifest")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients")
    parser.add_argument("--requests", type=int, default=2000, help="requests sent by the concurrent clients")
    parser.add_argument("--single", type=int, default=300, help="sequential single-task requests")
    parser.add_argument("--batches", type=int, default=30, help="sequential 100-task requests")
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()

    from posthoc.paths import label_config
    from posthoc.study.plan.manifest import Manifest
    from posthoc_backend.app import create_app

    config = label_config("entity_verification")
    rng = np.random.default_rng(args.seed)
    with BenchRun("predict_bench") as run, tempfile.TemporaryDirectory(prefix="posthoc-bench-") as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        manifest_path = build_manifest(folder, args.copies)
        manifest = Manifest.open(manifest_path)
        records = manifest.tasks().to_dict("records")
        mentions = len(manifest.mentions())
        manifest.close()
        run.print(f"manifest: {len(records)} tasks, {mentions} pre-filled mentions "
                  f"(sample corpus x {args.copies}), built in {time.perf_counter() - started:.1f} s")
        in_process = create_app(manifest_path).test_client()
        process, url = start_gunicorn(manifest_path, folder / "events.sqlite3", workers=args.workers)
        try:
            run.print(f"gunicorn: {args.workers} sync workers on {url}")

            def pick(n: int) -> list[dict[str, Any]]:
                return [records[i] for i in rng.integers(0, len(records), size=n)]

            sequential(url, [payload(pick(1), config) for _ in range(20)])  # warm-up
            mismatches = 0
            with requests.Session() as session:
                for body in [payload(pick(5), config) for _ in range(20)]:
                    served = session.post(f"{url}/predict", json=body, timeout=60).json()
                    mismatches += served != in_process.post("/predict", json=body).get_json()
            if mismatches:
                run.fail(f"{mismatches} of 20 /predict replies from gunicorn differ from the in-process app's")
            run.print("same replies: 20 of 20 /predict replies (5 tasks each) equal the in-process app's")
            bad_replies = [0]
            bodies = iter([payload(pick(1), config) for _ in range(args.single)])
            with requests.Session() as predict_session, requests.Session() as health_session:

                def one_predict() -> None:
                    reply = predict_session.post(f"{url}/predict", json=next(bodies), timeout=60)
                    bad_replies[0] += reply.status_code != 200 or "errors" in reply.json()

                def one_health() -> None:
                    bad_replies[0] += health_session.get(f"{url}/health", timeout=60).status_code != 200

                single_timing, health_timing = time_both(one_predict, one_health, runs=args.single)
            batch, batch_errors = sequential(url, [payload(pick(100), config) for _ in range(args.batches)])
            wall, conc_errors, conc_latencies = concurrent(
                url, [payload(pick(1), config) for _ in range(args.requests)], clients=args.clients)
            health_wall, health_errors, _ = concurrent(url, [{}] * args.requests, clients=args.clients,
                                                       path="/health")
            errors = bad_replies[0]
        finally:
            process.terminate()
            process.wait(timeout=30)

        print_figures(run, args, Phases(single_timing, health_timing, batch, wall, conc_latencies, health_wall,
                                        errors + batch_errors + conc_errors + health_errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
