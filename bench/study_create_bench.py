"""Bench: ``posthoc study create`` against Label Studio's raw set-up at the paper's size, in interleaved rounds.

Issue 11's first target on its own: scenario (a) of ``bench/study_scale_bench.py`` (20 workers x 1,500 tasks,
about the paper's 31,000) set up by both sides, each round on two fresh Label Studio 1.23 servers (SQLite,
copies of one migrated template) so that neither side works on a database the other filled:

ours  :func:`posthoc.jobs.setup.create_study` with its defaults, against the study's backend as a study
      owner runs it (``posthoc backend serve``), then a rerun with nothing to do;
raw   ``bench/study_scale_raw.py``: the fewest plain calls that reach the same end state (per worker one project
      create and one import per 500 tasks with each prediction inline, one sign-up form POST per annotator;
      the payloads built before its clock starts, so only Label Studio's work is timed).

The sides alternate which goes first in each round (``--rounds``, default 2); medians of wall time. Both end
states are checked alike (each worker's project holds the planned tasks, each with one prediction); the bench
fails otherwise.

    python bench/study_create_bench.py              # 20 x 1,500, 2 rounds (~8 min; under the heavy lock)
    python bench/study_create_bench.py --workers 300 --tasks 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from benchlib import BenchRun

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

TARGET_RATIO = 1.5
TARGET_RERUN = 0.05


def _counts(url: str, token: str, title: str) -> dict[str, tuple[int, int]]:
    """``{project title: (tasks, predictions)}`` of the projects whose title starts with ``title``."""
    found: dict[str, tuple[int, int]] = {}
    with httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=120) as http:
        page = 1
        while True:
            answer = http.get("/api/projects/", params={"page": page, "page_size": 100}).json()
            for project in answer.get("results", []):
                if str(project["title"]).startswith(title):
                    found[str(project["title"])] = (int(project["task_number"]),
                                                    int(project["total_predictions_number"]))
            if not answer.get("next"):
                return found
            page += 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    from bench_servers import study_backend
    from study_scale_bench import _plan
    from study_scale_raw import raw_create, raw_payloads

    from lsfixtures import build_template, copy_template
    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
    from posthoc.labelstudio.server import LabelStudioServer
    from posthoc.paths import label_config
    from posthoc.study.plan.study import Study

    config = label_config("entity_verification")
    with BenchRun("study_create_bench") as run, tempfile.TemporaryDirectory(prefix="study-create-") as tmp:
        folder = Path(tmp)
        manifest = _plan(folder, args.workers, args.tasks)  # the same study as study_scale_bench's scenario
        planned = {w: len(manifest.tasks(w)) for w in manifest.workers()}
        run.print(f"study: {len(planned)} workers, {sum(planned.values())} tasks, {len(manifest.mentions())} "
                  f"pre-filled annotations; {args.rounds} rounds, each side on its own fresh Label Studio")
        payloads = raw_payloads(manifest, config)  # built before the raw clock, as the baseline's docstring says
        template = build_template(Path(tempfile.gettempdir()) / "posthoc-bench-ls")
        ours: list[float] = []
        raws: list[float] = []
        reruns: list[float] = []

        def fresh(name: str) -> Any:
            return LabelStudioServer(copy_template(template, folder / name)).start()

        def raw_side(number: int) -> None:
            server = fresh(f"raw-{number}")
            try:
                raws.append(raw_create(server.url, server.token, "scale", payloads, config))
                counts = _counts(server.url, server.token, "raw scale")
            finally:
                server.stop()
            if sorted(counts.values()) != sorted((n, n) for n in planned.values()):
                run.fail(f"round {number}: the raw baseline's projects hold other counts than planned")
            run.print(f"  round {number}: raw {raws[-1]:.1f} s")

        def our_side(number: int) -> None:
            server = fresh(f"ours-{number}")
            try:
                with study_backend(manifest.path, folder / f"events-{number}.sqlite3") as backend_url:
                    accounts = folder / f"accounts-{number}.json"
                    record = folder / f"setup-{number}.json"
                    target = SetupTarget(url=server.url, token=server.token, backend_url=backend_url)
                    options = SetupOptions(accounts_file=accounts, setup_file=record)
                    started = time.perf_counter()
                    create_study(Study(manifest), target, options)
                    ours.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    again = create_study(Study(manifest), target, options)
                    reruns.append(time.perf_counter() - started)
                counts = _counts(server.url, server.token, "scale · worker")
            finally:
                server.stop()
            if again.imported_tasks or sorted(counts.values()) != sorted((n, n) for n in planned.values()):
                run.fail(f"round {number}: study create's projects hold other counts than planned")
            run.print(f"  round {number}: study create {ours[-1]:.1f} s, rerun {reruns[-1]:.2f} s")

        for number in range(1, args.rounds + 1):
            sides = (raw_side, our_side) if number % 2 else (our_side, raw_side)
            for side in sides:
                side(number)
        create, raw, rerun = statistics.median(ours), statistics.median(raws), statistics.median(reruns)
        ratio = create / raw
        run.print(f"study create: median {create:.1f} s ({', '.join(f'{v:.1f}' for v in ours)}); raw: median "
                  f"{raw:.1f} s ({', '.join(f'{v:.1f}' for v in raws)}); rerun median {rerun:.2f} s")
        run.headline(f"{len(planned)} workers x ~{args.tasks} tasks ({sum(planned.values())}): study create "
                     f"{ratio:.2f}x Label Studio's raw set-up, median of {args.rounds} interleaved rounds "
                     f"({create:.1f} s vs {raw:.1f} s; {'met' if ratio <= TARGET_RATIO else 'MISSED'}, target "
                     f"<= {TARGET_RATIO}x); rerun with nothing to do {100 * rerun / create:.1f}% of the first "
                     f"({'met' if rerun <= TARGET_RERUN * create else 'MISSED'}, target <= 5%)")


if __name__ == "__main__":
    main()
