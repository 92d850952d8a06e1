"""A study's cheap commands cost what the study costs, not what the server holds (issue 24).

One study (20 workers x 20 tasks by default, planned by ``study_scale_raw.plan_scale_study``) on two fresh Label
Studio 1.23 servers (SQLite, a copy of the tests' migrated template), one after the other: (a) an empty one and (b)
one holding 1,000 other projects (``POST /api/projects/`` with a title and a one-line description, before the study
is made). On each, with the study's ML backend (``posthoc backend serve``):

1. ``posthoc study create`` (the first run, timed once);
2. every task annotated in bulk inside Label Studio (``bench/ls_bulk_annotate.py``, as study_scale_bench does);
3. ``posthoc score --periodic`` into an empty folder (the full score, timed once);
4. the two cheap commands, each side by side with the code before this change, interleaved run by run
   (``benchlib.time_both``, 3 runs a side, the median wall time): ``posthoc study create`` with nothing to do and
   ``posthoc score --periodic`` with nothing new. Both are command-line runs in their own process (the way a
   study owner or cron runs them: the interpreter's start is in both sides). The baseline side is the same command
   of the code at the merge base with ``main`` (``git archive`` of ``plugin/`` and ``ml_backend/`` into a temporary
   folder, on ``PYTHONPATH``). Both sides must print the same (the same links; the same "nothing new" line) and
   exit alike (0 and 10);
5. where a nothing-new score's time goes, once a side: the requests it made to Label Studio (counted in Label
   Studio's log, which writes each request line twice: a line equal to the one before it is not counted again)
   and the CPU time of the ``posthoc`` process itself (its start-up, imports and work; the rest of its wall time
   is waiting for Label Studio).

Printed: each figure; the ratio (b)/(a) of the rerun and of the nothing-new score for both sides (target <= 1.2x
for ours); nothing-new as a share of the full score on each server (target <= 5%).

    PYTHONPATH=plugin:ml_backend python bench/study_server_bench.py            # ~10 min, saved
    PYTHONPATH=plugin:ml_backend python bench/study_server_bench.py --small    # 4 x 10, 100 others, not saved
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from bench_servers import start_label_studio, study_backend
from benchlib import BenchRun, Timing, time_both

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = 3


@dataclass
class Figures:
    """What one server measured (seconds; ``ours`` / ``old``: the two sides of the cheap commands)."""

    name: str
    create: float = 0.0
    full: float = 0.0
    rerun: tuple[Timing, Timing] | None = None
    nothing_new: tuple[Timing, Timing] | None = None


def baseline_tree(folder: Path) -> tuple[str, str]:
    """``plugin/``, ``ml_backend/`` and the files they read (label configs, the sample corpus) of the merge base
    with ``main`` extracted under ``folder``; returns (commit, the ``PYTHONPATH`` that runs it)."""
    base = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True,
                          check=True).stdout.strip()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "plugin", "ml_backend",
                              "label_configs", "examples"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return base[:7], f"{folder / 'plugin'}{os.pathsep}{folder / 'ml_backend'}"


def command(pythonpath: str, token: str, *args: str,
            cpu: list[float] | None = None) -> Callable[[], tuple[int, str]]:
    """A ``posthoc`` command line run on the code at ``pythonpath``; returns (exit code, what it printed) and, given
    ``cpu``, appends the CPU seconds (user + system) the command's process used."""
    env = dict(os.environ, PYTHONPATH=pythonpath, POSTHOC_LS_TOKEN=token, LABEL_STUDIO_TOKEN=token)

    def run() -> tuple[int, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                              env=env, check=False, timeout=1800)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return done.returncode, done.stdout.strip() + (f"\n{done.stderr.strip()[-2000:]}" if done.returncode
                                                       not in (0, 10) else "")

    return run


def requests_made(log: Path, run: Callable[[], tuple[int, str]]) -> tuple[int, tuple[int, str]]:
    """How many requests Label Studio logged while ``run`` ran (its log holds each request line twice: a line
    equal to the one before it is not counted), and what ``run`` returned."""
    offset = log.stat().st_size
    result = run()
    time.sleep(0.5)  # the log is written after the answer
    lines = [line for line in log.read_bytes()[offset:].decode("utf-8", "replace").splitlines()
             if "django.server" in line and " HTTP/1." in line]
    return sum(1 for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]), result


def warm_up(url: str, token: str, *, seconds: float = 60) -> None:
    """Wait until the new server answers the token's ``whoami`` (on a busy machine its first call answered 500)."""
    deadline = time.monotonic() + seconds
    while httpx.get(f"{url}/api/current-user/whoami", headers={"Authorization": f"Token {token}"},
                    timeout=30).status_code != 200:
        if time.monotonic() > deadline:
            raise SystemExit(f"Label Studio at {url} does not answer whoami")
        time.sleep(0.5)


def other_projects(url: str, token: str, n: int) -> float:
    """``n`` projects that are not the study's (a title and a one-line description each); seconds taken."""
    started = time.perf_counter()
    with httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=120) as http:
        for number in range(n):
            http.post("/api/projects/", json={"title": f"another team's project {number}",
                                               "description": f"Some other work on this server, number {number}."}
                      ).raise_for_status()
    return time.perf_counter() - started


def annotate_all(run: BenchRun, server: Any, manifest: Any, folder: Path) -> None:
    """Every task of the study annotated in bulk inside Label Studio (``bench/ls_bulk_annotate.py``)."""
    from study_scale_bench import _decisions

    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.study.plan.logins import default_accounts_file, read_accounts

    accounts = read_accounts(default_accounts_file(Path(manifest.path)))
    recorded = recorded_project_ids(default_setup_file(Path(manifest.path)), study=str(manifest.study))
    if set(recorded) != set(manifest.workers()):
        run.fail(f"the setup record names projects of {sorted(recorded)}, not of every worker")
    projects = {str(p): accounts[w]["email"] for w, p in recorded.items()}
    plan = folder / "annotate.json"
    plan.write_text(json.dumps({"projects": projects, "decisions": _decisions(manifest, seed=7), "leave": 0}),
                    encoding="utf-8")
    done = subprocess.run([sys.executable, str(HERE / "ls_bulk_annotate.py"), str(plan)], env=server.environment(),
                          capture_output=True, text=True, check=False, timeout=3600)
    if done.returncode != 0:
        run.fail(f"bulk annotation failed: {done.stderr[-2000:]}")
    run.print(f"  simulated annotation: {done.stdout.strip()} tasks (bulk, Label Studio's models)")


def same_sides(run: BenchRun, what: str, ours: Timing, old: Timing, expected_exit: int) -> None:
    """Fail unless both sides exited ``expected_exit`` and printed the same."""
    if ours.result[0] != expected_exit or old.result != ours.result:
        run.fail(f"{what}: the two sides differ or failed: ours {ours.result!r}, old {old.result!r}")


def nothing_new(run: BenchRun, name: str, server: Any, score: tuple[str, ...], *, ours_path: str,
                old_path: str) -> tuple[Timing, Timing]:
    """``posthoc score --periodic`` with nothing new, each side on its own copy of the full score's folder (each
    keeps its change signals in its own form in ``.posthoc-cache/state.json``; the before side's first run there
    makes its state, untimed), timed side by side; then each side once more, counting its requests and CPU."""
    ours_out = Path(score[-1])
    old_out = ours_out.with_name(f"{ours_out.name}-before")
    shutil.copytree(ours_out, old_out)
    old_score = (*score[:-1], str(old_out))

    def old_side(cpu: list[float] | None = None) -> Callable[[], tuple[int, str]]:
        """The before side, its folder named as ours in what it printed (both must print the same)."""
        inner = command(old_path, server.token, *old_score, cpu=cpu)

        def answer() -> tuple[int, str]:
            code, printed = inner()
            return code, printed.replace(str(old_out), str(ours_out))

        return answer

    if old_side()()[0] != 10:
        run.fail(f"({name}) the before side's first periodic run on its copy did not find nothing new")
    timed = time_both(command(ours_path, server.token, *score), old_side(), runs=RUNS)
    same_sides(run, f"({name}) nothing-new score", *timed, expected_exit=10)
    for side, make in (("ours", lambda cpu: command(ours_path, server.token, *score, cpu=cpu)), ("before", old_side)):
        cpu: list[float] = []
        count, result = requests_made(server.log_path, make(cpu))
        if result[0] != 10:
            run.fail(f"({name}) nothing-new score, {side}: {result!r}")
        run.print(f"  nothing-new score, {side}: {count} requests to Label Studio; the posthoc process used "
                  f"{cpu[0]:.2f} s CPU (start-up, imports, its work)")
    return timed


def on_server(run: BenchRun, name: str, manifest: Any, folder: Path, *, others: int, old_path: str) -> Figures:
    """Steps 1 to 4 of the module docstring on a fresh server holding ``others`` other projects."""
    figures = Figures(name)
    ours_path = f"{ROOT / 'plugin'}{os.pathsep}{ROOT / 'ml_backend'}"
    server = start_label_studio(folder)
    try:
        warm_up(server.url, server.token)
        if others:
            seconds = other_projects(server.url, server.token, others)
            run.print(f"  {others} other projects made in {seconds:.1f} s")
        with study_backend(Path(manifest.path), folder / "events.sqlite3") as backend_url:
            create = ("study", "create", "--manifest", str(manifest.path), "--url", server.url, "--backend-url",
                      backend_url, "--no-progress")
            started = time.perf_counter()
            code, printed = command(ours_path, server.token, *create)()
            figures.create = time.perf_counter() - started
            if code != 0:
                run.fail(f"({name}) study create: exit {code}: {printed}\nLabel Studio's log ends: "
                         f"{server.log_path.read_text(errors='replace')[-3000:]}")
            run.print(f"  study create {figures.create:.1f} s")
            annotate_all(run, server, manifest, folder)
            score = ("score", "--manifest", str(manifest.path), "--url", server.url, "--periodic", "--quiet",
                     "--out", str(folder / "score"))
            started = time.perf_counter()
            code, printed = command(ours_path, server.token, *score)()
            figures.full = time.perf_counter() - started
            if code != 0:
                run.fail(f"({name}) full score: exit {code}: {printed}")
            run.print(f"  posthoc score, full: {figures.full:.1f} s: {printed}")
            figures.rerun = time_both(command(ours_path, server.token, *create),
                                      command(old_path, server.token, *create), runs=RUNS)
            same_sides(run, f"({name}) create rerun", *figures.rerun, expected_exit=0)
            figures.nothing_new = nothing_new(run, name, server, score, ours_path=ours_path, old_path=old_path)
            for what, (ours, old) in (("create rerun, nothing to do", figures.rerun),
                                      ("score --periodic, nothing new", figures.nothing_new)):
                run.print(f"  {what}: ours {ours.wall_median:.2f} s (min {ours.wall_min:.2f}), before "
                          f"{old.wall_median:.2f} s (min {old.wall_min:.2f}): before / ours "
                          f"{old.wall_median / ours.wall_median:.2f}x, {RUNS} runs a side interleaved; both printed "
                          "the same")
            ours_new = figures.nothing_new[0].wall_median
            run.print(f"  nothing-new score {100 * ours_new / figures.full:.1f}% of the full score "
                      f"(before: {100 * figures.nothing_new[1].wall_median / figures.full:.1f}%)")
    finally:
        server.stop()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=20, help="tasks a worker")
    parser.add_argument("--others", type=int, default=1000, help="other projects on server (b)")
    parser.add_argument("--small", action="store_true", help="4 workers x 10 tasks, 100 others; not saved")
    args = parser.parse_args(argv)
    workers, tasks, others = (4, 10, 100) if args.small else (args.workers, args.tasks, args.others)
    results_dir = Path(tempfile.mkdtemp(prefix="study-server-small-")) if args.small else None
    from study_scale_raw import plan_scale_study

    with BenchRun("study_server_bench", results_dir=results_dir) as run, \
            tempfile.TemporaryDirectory(prefix="study-server-") as tmp:
        base, old_path = baseline_tree(Path(tmp))
        run.print(f"before = the same command at {base} (the merge base with main); ours = this tree")
        found: list[Figures] = []
        for name, n_others in (("a", 0), ("b", others)):
            folder = Path(tmp) / name
            folder.mkdir()
            manifest = plan_scale_study(folder / "server.manifest", n_workers=workers, tasks_per_worker=tasks)
            run.print(f"({name}) {len(manifest.workers())} workers, {len(manifest.tasks())} tasks, on a server "
                      f"holding {n_others} other projects")
            found.append(on_server(run, name, manifest, folder, others=n_others, old_path=old_path))
            manifest.close()
        report(run, found[0], found[1], others=others)


def report(run: BenchRun, a: Figures, b: Figures, *, others: int) -> None:
    """The ratios (b)/(a), the shares of the full score, the headline and the targets."""
    assert a.rerun and b.rerun and a.nothing_new and b.nothing_new
    rerun = [b.rerun[i].wall_median / a.rerun[i].wall_median for i in (0, 1)]
    new = [b.nothing_new[i].wall_median / a.nothing_new[i].wall_median for i in (0, 1)]
    share = [100 * a.nothing_new[0].wall_median / a.full, 100 * b.nothing_new[0].wall_median / b.full]
    run.print(f"(b)/(a): create rerun ours {rerun[0]:.2f}x (before {rerun[1]:.2f}x); nothing-new score ours "
              f"{new[0]:.2f}x (before {new[1]:.2f}x)")
    before = [100 * a.nothing_new[1].wall_median / a.full, 100 * b.nothing_new[1].wall_median / b.full]
    run.headline(f"nothing-new score {share[0]:.1f}% / {share[1]:.1f}% of a full score ({a.full:.0f} / {b.full:.0f} s; "
                 f"before {before[0]:.1f}% / {before[1]:.1f}%, target <= 5%); {others:,} other projects cost a create "
                 f"rerun {rerun[0]:.2f}x (before {rerun[1]:.2f}x) and a nothing-new score {new[0]:.2f}x (before "
                 f"{new[1]:.2f}x)")
    checks = {"create rerun (b)/(a) <= 1.2x": rerun[0] <= 1.2, "nothing-new score (b)/(a) <= 1.2x": new[0] <= 1.2,
              "(a) nothing-new <= 5% of the full score": share[0] <= 5, "(b) nothing-new <= 5% of the full score":
              share[1] <= 5}
    for check, ok in checks.items():
        run.print(f"  {check}: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
