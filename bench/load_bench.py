"""Load test: a study's annotators at once against Label Studio served four ways (Locust, headless).

Configurations, each on a fresh study of ``--workers`` workers (``posthoc study create``,
:func:`posthoc.jobs.setup.create_study`, with the study's ML backend running as its owner runs it):

* ``sqlite-1``: ``label-studio start`` (Django's runserver, one process) on SQLite, the embedded default;
* ``postgresql-2`` / ``postgresql-4``: Label Studio's WSGI app under gunicorn with 2 / 4 workers
  (:class:`posthoc.labelstudio.app_server.AppServer`) on a local PostgreSQL cluster;
* ``nginx-2x2``: two such app servers (2 workers each, their own data dirs, one ``SECRET_KEY``:
  :meth:`AppServer.replica`) sharing that PostgreSQL, behind one nginx (round robin; nginx serves Label Studio's
  ``STATIC_ROOT`` itself and the bench checks a bundle loads).

The scenario is ``bench/load/locustfile.py`` (log in, next task, think the study estimate's 15 s a mention,
paper 000 section 2.1, times ``--time-scale``, a draft on 30% of tasks, Submit), ramped in steps
(``--steps 20,100,300`` users, ``--step-seconds`` each, new users spawned over the step's first 30 s). The
default time scale 1 is the paper's pace (a task of 5 mentions takes 75 s); 0.05 makes an annotator 20x faster,
so that N simulated annotators send the requests of about 20 N real ones (a stress test). Per step, over the step
less its first ``--settle`` seconds (the spawn and its logins): Submit and next-task p50 / p95 / p99 and how many;
errors, submits a second and the machine's 1-minute load over the whole step; then the largest step held with
p95 < 500 ms (Submit and next task) and no error. After every run, checks that fail the bench on PostgreSQL
(:mod:`load.report`): every answered Submit is one annotation in Label Studio's export, every exported annotation
is on a task a Submit was sent for and none beyond the Submits sent, none twice on a task; ``posthoc score``'s
judgements (:func:`posthoc.jobs.score.run_score_job`) hold every annotated worker-task once and ``study status``
(:func:`posthoc.study.live.progress.annotations_from_label_studio`) reads every exported annotation.

    python bench/load_bench.py                      # the full ramp, all four (a quiet machine, ~1.2 h)
    python bench/load_bench.py --smoke              # 5 -> 10 users, 20 s a step, 12 workers; not saved
    python bench/load_bench.py --configs postgresql-2 --steps 20 --step-seconds 60
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_servers import study_backend
from benchlib import BenchRun
from load.nginx import nginx_front
from load.report import StepFigures, check_counts, held, step_figures

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

CONFIGS = ("sqlite-1", "postgresql-2", "postgresql-4", "nginx-2x2")
LOCUSTFILE = HERE / "load" / "locustfile.py"


@dataclasses.dataclass
class Options:
    """What the command line chose."""

    steps: list[int]
    step_seconds: float
    settle: float
    time_scale: float
    workers: int
    tasks: int
    folder: Path


@contextlib.contextmanager
def serving(config: str, folder: Path, template: Path, pg: dict[str, Path]) -> Iterator[tuple[str, Any]]:
    """``(URL, server)`` of Label Studio served as ``config``; stopped on the way out. The PostgreSQL data dir is
    prepared (migrated) once, in ``pg``, and reused by the later PostgreSQL configurations."""
    from lsfixtures import copy_template, postgresql_label_studio
    from posthoc.labelstudio.app_server import AppServer
    from posthoc.labelstudio.database import DatabaseSettings
    from posthoc.labelstudio.server import LabelStudioServer

    if config == "sqlite-1":
        server = LabelStudioServer(copy_template(template, folder / f"ls-{config}")).start()
        try:
            yield server.url, server
        finally:
            server.stop()
        return
    if "data_dir" not in pg:
        prepared, pg["folder"] = postgresql_label_studio(template)
        pg["data_dir"] = prepared.data_dir
    fresh = not (pg["data_dir"] / "database.json").is_file()
    database = DatabaseSettings("postgresql", local_cluster=True) if fresh else None
    workers = int(config.rsplit("-", 1)[1]) if config.startswith("postgresql") else 2
    with AppServer(pg["data_dir"], workers=workers, database=database).start(timeout=600) as first:
        if config.startswith("postgresql"):
            yield first.url, first
            return
        with first.replica(pg["folder"] / "second", workers=2).start(timeout=600) as second, \
                nginx_front([first.url, second.url], folder / "nginx") as url:
            yield url, first


def make_study(url: str, token: str, backend_url: str, manifest: Any) -> Any:
    """The study's projects and accounts (``create_study``, the study's defaults, 4 projects at a time)."""
    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
    from posthoc.study.plan.study import Study

    return create_study(Study(manifest), SetupTarget(url=url, token=token, backend_url=backend_url),
                        SetupOptions(concurrency=4))


def run_locust(users_file: Path, url: str, options: Options, out: Path) -> tuple[Path, list[float]]:
    """Locust headless over the step ramp; returns the samples file and the 1-minute loads seen (the submits
    answered and sent are in ``out`` too, for :func:`load.report.check_counts`)."""
    samples = out / "samples.jsonl"
    env = dict(os.environ, LOAD_USERS=str(users_file), LOAD_SAMPLES=str(samples),
               LOAD_SUBMITS=str(out / "submits.jsonl"), LOAD_SENT=str(out / "sent.jsonl"),
               LOAD_TIME_SCALE=str(options.time_scale), LOAD_STEPS=",".join(map(str, options.steps)),
               LOAD_STEP_SECONDS=str(options.step_seconds), LOAD_SPAWN_SECONDS=str(max(1.0, min(30.0, options.settle))))
    command = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--host", url,
               "--csv", str(out / "locust"), "--only-summary", "--loglevel", "WARNING",
               "--stop-timeout", "30"]
    loads: list[float] = []
    done = threading.Event()

    def sample_load() -> None:
        while not done.wait(5):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample_load, daemon=True)
    sampler.start()
    limit = options.step_seconds * len(options.steps) + 300
    try:
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=limit, check=False)
    finally:
        done.set()
    if finished.returncode not in (0, 1):  # 1: some requests failed, reported in the table
        raise SystemExit(f"locust exited with {finished.returncode}: {finished.stderr[-3000:]}")
    (out / "locust.log").write_text(finished.stdout + finished.stderr, encoding="utf-8")
    return samples, loads


def one_config(run: BenchRun, config: str, options: Options, template: Path, pg: dict[str, Path]
               ) -> tuple[list[StepFigures], list[str]]:
    """Serve, create the study, load it, check the counts; the per-step figures."""
    from study_scale_raw import plan_scale_study

    from posthoc.study.plan.logins import read_accounts

    out = options.folder / config
    out.mkdir(parents=True)
    manifest = plan_scale_study(out / "load.manifest", n_workers=options.workers, tasks_per_worker=options.tasks,
                                name=f"load-{config}")
    with serving(config, options.folder, template, pg) as (url, server), \
            study_backend(manifest.path, out / "load.events.sqlite3") as backend_url:
        started = time.perf_counter()
        setup = make_study(url, server.token, backend_url, manifest)
        accounts = read_accounts(setup.accounts_file)
        projects = setup.project_ids()
        users = [{"email": accounts[w]["email"], "password": accounts[w]["password"], "project": projects[w]}
                 for w in sorted(projects)]
        (out / "users.json").write_text(json.dumps(users), encoding="utf-8")
        run.print(f"[{config}] {url}: study of {len(users)} workers ({options.tasks} tasks a worker asked, "
                  f"{len(manifest.tasks())} planned) set up in {time.perf_counter() - started:.0f} s")
        samples, loads = run_locust(out / "users.json", url, options, out)
        figures = step_figures(samples, options.steps, options.step_seconds, loads, settle=options.settle)
        counts = check_counts(url, server.token, manifest, projects, out)
    for line in counts.lines():
        run.print(f"[{config}]   {line}")
    run.print(f"[{config}]   checks: {'; '.join(counts.problems()) or 'all agree'}")
    return figures, counts.problems()


def table(run: BenchRun, results: dict[str, list[StepFigures]], problems: dict[str, list[str]]) -> None:
    """The per-step table of every configuration and the headline; fails when a PostgreSQL configuration's counts
    disagree (SQLite's are reported: Label Studio replays a request that met SQLite's lock, see docs/deployment.md)."""
    run.print("config        users  submit p50/p95/p99 ms (n)       next p50/p95/p99 ms (n)        errors  "
              "submits/s  load")
    for config, steps in results.items():
        for s in steps:
            run.print(f"{config:<13} {s.users:>5}  {s.submit[0]:>6.0f} {s.submit[1]:>6.0f} {s.submit[2]:>6.0f} "
                      f"({s.measured[0]:>4})   {s.next[0]:>6.0f} {s.next[1]:>6.0f} {s.next[2]:>6.0f} "
                      f"({s.measured[1]:>4})   {s.errors:>6} {s.rate:>9.2f}  {s.load:>4.1f}")
    run.headline("annotators held with p95 < 500 ms and no error: " + ", ".join(
        f"{config} {held(steps)}" + (" (counts disagree)" if problems[config] else "")
        for config, steps in results.items()))
    broken = {c: p for c, p in problems.items() if p and c != "sqlite-1"}
    if broken:
        run.fail(f"counts disagree: {broken}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"any of {', '.join(CONFIGS)}")
    parser.add_argument("--steps", default="20,100,300", help="concurrent annotators, one step each")
    parser.add_argument("--step-seconds", type=float, default=180.0)
    parser.add_argument("--settle", type=float, default=30.0, help="seconds of each step left out of its "
                        "percentiles (new users spawn over them, at most 30 s, and log in)")
    parser.add_argument("--time-scale", type=float, default=1.0, help="x the study estimate's 15 s a mention "
                        "(1: the paper's pace; 0.05: 20x faster, a stress test)")
    parser.add_argument("--workers", type=int, default=None, help="study workers (default: the largest step)")
    parser.add_argument("--tasks", type=int, default=15, help="tasks a worker (at the paper's pace an annotator "
                        "does about 8 in the default ramp's 9 minutes)")
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it (Locust's CSV, "
                        "samples, score outputs) instead of a temporary one")
    parser.add_argument("--smoke", action="store_true", help="5 -> 10 users, 30 s a step (10 s settle), "
                        "annotators 20x the paper's pace, 12 workers x 8 tasks; results not saved")
    args = parser.parse_args(argv)
    if args.smoke:
        args.steps, args.step_seconds, args.settle, args.workers, args.tasks = "5,10", 30.0, 10.0, 12, 8
        args.time_scale = 0.05
    steps = [int(n) for n in args.steps.split(",")]
    configs = [c.strip() for c in args.configs.split(",")]
    unknown = sorted(set(configs) - set(CONFIGS))
    if not 0 <= args.settle < args.step_seconds:
        parser.error(f"--settle {args.settle}: give 0 up to less than --step-seconds {args.step_seconds}")
    if unknown or steps != sorted(steps) or min(steps) < 1:
        parser.error(f"unknown configs {unknown} or steps not rising: {args.steps}")
    from lsfixtures import build_template

    template = build_template(Path(tempfile.gettempdir()) / f"pytest-of-{os.environ.get('USER', 'root')}"
                              / "posthoc-ls")
    results_dir = Path(tempfile.mkdtemp(prefix="load-smoke-")) if args.smoke else None
    pg: dict[str, Path] = {}
    keep = contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory(prefix="load-bench-")
    with keep as tmp, BenchRun("load_bench", results_dir=results_dir) as run:
        options = Options(steps, args.step_seconds, args.settle, args.time_scale, args.workers or max(steps),
                          args.tasks, Path(tmp))
        run.print(f"steps {steps} users, {args.step_seconds:.0f} s each (percentiles leave out each step's first "
                  f"{args.settle:.0f} s); think time {args.time_scale} x 15 s a mention (an annotator "
                  f"{1 / args.time_scale:.3g}x the paper's pace); {options.workers} workers x {args.tasks} tasks a "
                  "configuration")
        try:
            found = {config: one_config(run, config, options, template, pg) for config in configs}
        finally:
            if "folder" in pg:
                import shutil

                shutil.rmtree(pg["folder"], ignore_errors=True)
        table(run, {c: f[0] for c, f in found.items()}, {c: f[1] for c, f in found.items()})


if __name__ == "__main__":
    main()
