"""The acceptance scenario of ``posthoc study extend`` and ``reassign`` (issue 28) on a real Label Studio.

A study of 20 workers (k = 2, two systems, two datasets) planned over the first documents of its seeded ranking
is created and run to a pilot (every worker's first batch, simulated annotators posting through their own
logins; w004 and w011 verify everything and fail their control tasks); the pilot is scored; the study is extended
until every cell's predicted 95% half-width is under 0.85 x the target (the estimate's own 15% assurance margin,
docs/study.md); w007 stops half-way through their tasks; the failed and departed workers' work is reassigned (one
new account allowed); the rest is simulated and the study scored with the defaults. Side by side per cell: the
half-width the extension predicted and the one the real score reports (their ratio). Checks (the bench fails
otherwise): every cell of the real score under the target, every item judged by exactly k passing workers, no
task twice in a project, every project's tasks in its worker's manifest order (the simulated annotators also
check /next serves exactly that order), and reruns of both commands change neither the manifest nor Label Studio.

    python bench/study_extend_bench.py [--workers 20] [--docs 60] [--pilot-docs 12]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from bench_servers import start_label_studio, study_backend
from benchlib import BenchRun

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "study"))
from extend_factory import write_study

CAREFUL = 0.85  # extend to this share of the target: the estimate's 15% assurance margin


def _posthoc(folder: Path, server: Any, backend: str, *args: str) -> str:
    env = {**os.environ, "POSTHOC_LS_TOKEN": server.token}
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", *args, "--manifest", "m.sqlite",
                           "--url", server.url, "--backend-url", backend, "--no-progress"],
                          capture_output=True, text=True, cwd=folder, env=env, timeout=3600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"posthoc study {args[0]} failed: {done.stderr}")
    return done.stdout


def _halfwidths(out: Path) -> pd.DataFrame:
    rates = pd.read_csv(out / "tables" / "rates.csv")
    rates = rates.loc[rates["metric"].isin(["posthoc_precision", "posthoc_recall"])]
    return rates.assign(halfwidth=(rates["high"] - rates["low"]) / 2)[["dataset", "system", "metric", "halfwidth"]]


def _score(manifest: Path, server: Any, out: Path) -> pd.DataFrame:
    from posthoc.jobs.score import JudgementSource, run_score_job

    run_score_job(manifest_path=manifest, out_dir=out, source=JudgementSource(ls_url=server.url, token=server.token))
    return pd.read_csv(out / "judgements.csv", dtype={"worker": str, "item_id": str, "task_key": str})


def _run(run: BenchRun, folder: Path, server: Any, args: argparse.Namespace) -> None:
    from posthoc.jobs.revision_sim import project_task_keys, simulate_workers
    from posthoc.jobs.simulate import SimulationConfig
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.revision import config_of
    from posthoc.study.planner.extension_target import documents_for_target
    from posthoc.study.planner.rates import rates_from_pilot

    write_study(folder, n_docs=2 * args.docs, n_pilot=args.pilot_docs, n_workers=args.workers, k=2,
                name="acceptance")
    manifest = folder / "m.sqlite"
    subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "plan", "--config", "pilot.toml", "--out",
                    str(manifest), "--no-progress"], check=True, capture_output=True, timeout=600, cwd=folder)
    simulation = SimulationConfig(seed=7, careless_worker="w004", control_accuracy=1.0)
    sim = {"url": server.url, "admin_token": server.token, "config": simulation}
    with study_backend(manifest, folder / "events.sqlite3") as backend:
        _posthoc(folder, server, backend, "create")
        workers = Manifest.open(manifest).workers()
        simulate_workers(manifest, workers=workers, first_batch=True, careless=["w011"], **sim)  # type: ignore[arg-type]
        pilot = _score(manifest, server, folder / "pilot")
        pilot.to_csv(folder / "pilot.csv", index=False)
        opened = Manifest.open(manifest)
        documents, mentions = read_study_inputs(load_study_config(folder / "study.toml"))
        current = {str(d): int(n) for d, n in opened.documents().groupby("dataset").size().items()}
        now = documents_for_target(documents, mentions, config_of(opened.config), current, rates_from_pilot(pilot),
                                   target=0.99)
        target = round(0.7 * max(row["widest_now"] for row in now.values()), 3)  # the pilot's size misses it
        goal = round(CAREFUL * target, 4)
        widest_now = max(row["widest_now"] for row in now.values())
        run.print(f"pilot: {current} documents, widest predicted half-width {widest_now:.4f}; target {target}, "
                  f"extended to predict under {goal}")
        for line in _posthoc(folder, server, backend, "extend", "--config", "study.toml", "--pilot", "pilot.csv",
                             "--target-halfwidth", str(goal)).splitlines():
            run.print(f"  {line}")
        half = len(Manifest.open(manifest).tasks("w007")) // 2
        simulate_workers(manifest, workers=["w007"], stop_at={"w007": half}, **sim)  # type: ignore[arg-type]
        for line in _posthoc(folder, server, backend, "reassign", "--failed-from", str(folder / "pilot"), "--left",
                             "w007", "--new-workers", "1").splitlines():
            run.print(f"  {line}")
        final = Manifest.open(manifest)
        active = [w for w in final.workers() if w not in ("w004", "w011", "w007")]
        simulate_workers(manifest, workers=active, careless=["w011"], **sim)  # type: ignore[arg-type]
        judgements = _score(manifest, server, folder / "final")
        _check(run, folder, server, backend, final, judgements, target, goal, project_task_keys)


def _check(run: BenchRun, folder: Path, server: Any, backend: str, final: Any, judgements: pd.DataFrame,
           target: float, goal: float, project_task_keys: Any) -> None:
    from posthoc.study.plan.manifest import Manifest

    controls = pd.read_csv(folder / "final" / "tables" / "controls.csv", dtype={"worker": str})
    failing = set(controls.loc[controls["excluded"].astype(bool), "worker"])
    real = judgements.loc[~judgements["is_control"].astype(bool) & ~judgements["worker"].isin(failing)]
    items = final.items()
    judges = real.groupby("item_id")["worker"].nunique()
    every_k = set(judges.index) == set(items.loc[~items["is_control"].astype(bool), "item_id"]) and \
        bool((judges == final.k).all())
    served = project_task_keys(final.path, url=server.url, admin_token=server.token)
    in_order = served == {w: list(final.tasks(w)["task_key"]) for w in final.workers()}
    no_duplicate = all(len(keys) == len(set(keys)) for keys in served.values())
    achieved = _halfwidths(folder / "final")
    run.print(f"final: {final.documents().groupby('dataset').size().to_dict()} documents, {len(final.workers())} "
              f"workers, {len(final.tasks())} tasks, {len(final.withdrawn())} withdrawn; failing {sorted(failing)}")
    run.print("cell                       metric             achieved   target   achieved / target")
    for row in achieved.itertuples(index=False):
        run.print(f"  {row.dataset:8} {row.system:6} {row.metric:22} {row.halfwidth:.4f}   {target:.4f}   "
                  f"{row.halfwidth / target:.3f}")
    digest = final.digest
    _posthoc(folder, server, backend, "extend", "--config", "study.toml", "--pilot", "pilot.csv",
             "--target-halfwidth", str(goal))
    _posthoc(folder, server, backend, "reassign", "--failed-from", str(folder / "pilot"), "--left", "w007",
             "--new-workers", "1")
    rerun_same = Manifest.open(final.path).digest == digest and \
        project_task_keys(final.path, url=server.url, admin_token=server.token) == served
    widest = float(achieved["halfwidth"].max())
    checks = {"every cell under the target": widest <= target, "every item k passing judges": every_k,
              "no task twice": no_duplicate, "served order = manifest order": in_order,
              "reruns change nothing": rerun_same, "failing = the two careless workers": failing == {"w004", "w011"}}
    for name, ok in checks.items():
        run.print(f"check {name}: {'yes' if ok else 'NO'}")
    if not all(checks.values()):
        run.fail("a check failed: " + ", ".join(n for n, ok in checks.items() if not ok))
    run.headline(f"{len(final.workers())} workers (one new), k = 2, extended to {len(final.documents())} documents: "
                 "widest real half-width "
                 f"{widest:.4f} <= target {target} ({widest / target:.2f}); every item {final.k} passing judges; "
                 "no task twice; served order = plan; reruns change nothing")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--docs", type=int, default=60, help="documents per dataset in the pool")
    parser.add_argument("--pilot-docs", type=int, default=12, help="documents per dataset planned first")
    args = parser.parse_args(argv)
    with BenchRun("study_extend_bench", argv=argv) as run, tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        server = start_label_studio(folder)
        try:
            study = folder / "study"
            study.mkdir()
            _run(run, study, server, args)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
