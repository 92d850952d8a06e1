"""A study's cheap commands cost what the study costs, not what the server holds (issue 24).

One study (by default the paper's: 20 workers x 1,500 tasks, ~30,000 tasks, planned by
``study_scale_raw.plan_scale_study``; ``--tasks 20`` the small one of earlier runs) on two fresh Label
Studio 1.23 servers (SQLite, a copy of the tests' migrated template), both up at once: (a) an empty one and (b) one
holding 1,000 other projects (``POST /api/projects/`` with a title and a one-line description, before the study is
made). On each, with the study's ML backend (``posthoc backend serve``):

1. ``posthoc study create`` (the first run, timed once);
2. every task annotated in bulk inside Label Studio (``bench/ls_bulk_annotate.py``, as study_scale_bench does);
3. ``posthoc score --periodic`` into an empty folder (the full score, timed once).

Then, with both servers up, the two cheap commands, each timed on both servers and on both sides, the four
interleaved run by run (:func:`time_interleaved`, the order turning each round; 3 runs each, the median wall time):
``posthoc study create`` with nothing to do and ``posthoc score --periodic`` with nothing new. The servers' ratio
(b)/(a) is thus measured side by side, under the same load, as the sides' ratio is. Both are command-line runs in
their own process (the way a study owner or cron runs them: the interpreter's start is in both sides; bytecode
cached as a second run finds it, in a folder of the bench's, ``PYTHONPYCACHEPREFIX``). The
baseline side is the same command of the code at ``--before`` (default: the merge base with ``main``; ``git
archive`` of ``plugin/`` and ``ml_backend/`` into a temporary folder, on ``PYTHONPATH``). Both sides must print
the same (the same links; the same "nothing new" line) and exit alike (0 and 10). Then, once each:

4. where a nothing-new score's time goes, a side a server: the requests it made to Label Studio (counted in Label
   Studio's log, which writes each request line twice: a line equal to the one before it is not counted again)
   and the CPU time of the ``posthoc`` process itself (its start-up, imports and work; the rest of its wall time
   is waiting for Label Studio);
5. which request of our two cheap commands grows with the server: the requests each made (Label Studio's log), by
   path (ids as ``{id}``, the query's names only), each asked again alone on its server (a GET, as logged), (a)
   and (b) alternating, 3 times: the count and the median seconds of each path on (a) and on (b);
6. the raw Label Studio side of a nothing-new score (:func:`raw_floor`): its requests asked again from one warm
   client (one connection a request, as ours over ``http://``: ``runserver`` answers a reused one ~40 ms late),
   the task queries as many at a time as the command asks them, with no ``posthoc`` process: what any client
   reading the same signal pays Label Studio, as a share of the full score.

Printed: each figure; the ratio (b)/(a) of the rerun and of the nothing-new score for both sides (target <= 1.2x
for ours); nothing-new as a share of the full score on each server (target <= 5%).

    PYTHONPATH=plugin:ml_backend python bench/study_server_bench.py --before c51ae2e   # ~20 min, saved
    PYTHONPATH=plugin:ml_backend python bench/study_server_bench.py --tasks 20 --before c51ae2e   # ~6 min, saved
                                                                    # as study_server_bench_20x20
    PYTHONPATH=plugin:ml_backend python bench/study_server_bench.py --small    # 4 x 10, 100 others, not saved
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bench_servers import start_label_studio, study_backend
from benchlib import BenchRun, Timing

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = 3
#: a request line of Label Studio's log: method, path with query, status
REQUEST_LINE = re.compile(r'"(GET|POST|PUT|PATCH|DELETE|HEAD) (\S+) HTTP/1\.[01]" (\d{3})')
#: an id in a path (``/api/users/12/`` -> ``/api/users/{id}/``)
PATH_ID = re.compile(r"/\d+(?=/|$)")
Command = Callable[[], tuple[int, str]]
#: the commands' bytecode folder (``PYTHONPYCACHEPREFIX``), set by :func:`main`
PYCACHE: list[str] = []
#: the default study: the paper's 20 workers x 1,500 tasks
WORKERS, TASKS = 20, 1500


@dataclass
class Server:
    """One Label Studio with the study on it: the server, its backend's URL, the two commands' arguments and what
    was timed once (seconds)."""

    name: str
    server: Any
    create: tuple[str, ...]
    score: tuple[str, ...]
    created: float = 0.0
    full: float = 0.0
    floor: float = 0.0  # the raw Label Studio side of the nothing-new score (step 6)
    requests: dict[str, list[str]] = field(default_factory=dict)  # command -> the requests it made (step 5)


def baseline_tree(folder: Path, before: str | None) -> tuple[str, str]:
    """``plugin/``, ``ml_backend/`` and the files they read (label configs, the sample corpus) of commit ``before``
    (default: the merge base with ``main``) extracted under ``folder``; returns (commit, the ``PYTHONPATH`` that
    runs it)."""
    asked = ["rev-parse", "--verify", f"{before}^{{commit}}"] if before else ["merge-base", "HEAD", "main"]
    base = subprocess.run(["git", "-C", str(ROOT), *asked], capture_output=True, text=True, check=True).stdout.strip()
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
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # cron's second run finds its bytecode cached
    if PYCACHE:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE[0]

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


def time_interleaved(sides: dict[str, Command], *, runs: int) -> dict[str, Timing]:
    """Time every side the same way, interleaved run by run so load drifts hit all alike: each round runs every
    side once, the order turning by one each round (warm caches favour none); ``gc.collect()`` before each run,
    outside its time (``benchlib.time_both``'s rule, for more than two sides)."""
    timings = {name: Timing() for name in sides}
    names = list(sides)
    for round_ in range(runs):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            gc.collect()
            started = time.perf_counter()
            timings[name].result = sides[name]()
            timings[name].wall.append(time.perf_counter() - started)  # the CPU is the child's: step 4
    return timings


def same_results(run: BenchRun, what: str, timings: dict[str, Timing], expected_exit: int) -> None:
    """Fail unless the sides of one server exited ``expected_exit`` and printed the same."""
    for server in ("a", "b"):
        ours, old = timings[f"ours {server}"].result, timings[f"before {server}"].result
        if ours[0] != expected_exit or old != ours:
            run.fail(f"({server}) {what}: the two sides differ or failed: ours {ours!r}, old {old!r}")


def logged_requests(log: Path, run: Command) -> tuple[list[str], tuple[int, str]]:
    """The requests (``METHOD path?query``) Label Studio logged while ``run`` ran (its log holds each request line
    twice: a line equal to the one before it is not counted again), and what ``run`` returned."""
    offset = log.stat().st_size
    result = run()
    time.sleep(0.5)  # the log is written after the answer
    lines = [line for line in log.read_bytes()[offset:].decode("utf-8", "replace").splitlines()
             if "django.server" in line and " HTTP/1." in line]
    kept = [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]
    return [f"{m[1]} {m[2]}" for m in (REQUEST_LINE.search(line) for line in kept) if m], result


def path_of(request: str) -> str:
    """A logged request by its path: ids as ``{id}``, the query's names only (``GET /api/tasks/?fields&page``)."""
    method, _, target = request.partition(" ")
    path, _, query = target.partition("?")
    names = sorted({part.partition("=")[0] for part in query.split("&") if part})
    return f"{method} {PATH_ID.sub('/{id}', path)}" + (f"?{'&'.join(names)}" if names else "")


def server_figures(run: BenchRun, servers: list[Server], *, ours_path: str, old_path: str) -> None:
    """Steps 4 and 5 of the module docstring, after the timed runs."""
    for server in servers:
        for side in ("ours", "before"):
            cpu: list[float] = []
            made, result = logged_requests(server.server.log_path, command(ours_path, server.server.token,
                                                                             *server.score, cpu=cpu)
                                           if side == "ours" else old_side(server, old_path, cpu))
            if result[0] != 10:
                run.fail(f"({server.name}) nothing-new score, {side}: {result!r}")
            run.print(f"  ({server.name}) nothing-new score, {side}: {len(made)} requests to Label Studio; the "
                      f"posthoc process used {cpu[0]:.2f} s CPU (start-up, imports, its work)")
            if side == "ours":
                server.requests["score"] = made
        made, result = logged_requests(server.server.log_path, command(ours_path, server.server.token,
                                                                       *server.create))
        if result[0] != 0:
            run.fail(f"({server.name}) create rerun: {result!r}")
        server.requests["create"] = made
    for what in ("create", "score"):
        replayed(run, servers, what)
    for server in servers:
        server.floor = raw_floor(server)


def raw_client(server: Server) -> httpx.Client:
    """A plain ``httpx.Client`` on ``server`` with its token, one connection a request (as ours over ``http://``:
    ``runserver`` answers a reused connection ~40 ms late)."""
    return httpx.Client(base_url=server.server.url, timeout=120, limits=httpx.Limits(max_keepalive_connections=0),
                        headers={"Authorization": f"Token {server.server.token}"})


def raw_floor(server: Server) -> float:
    """Step 6: the GETs a nothing-new score made, asked again from one warm client with no ``posthoc`` process:
    the others in order, then the Data Manager task queries ``SIGNAL_THREADS`` at a time as the command asks them;
    the median of ``RUNS`` rounds (seconds)."""
    from concurrent.futures import ThreadPoolExecutor

    from posthoc.export.signals import SIGNAL_THREADS

    gets = [r.partition(" ")[2] for r in server.requests["score"] if r.startswith("GET ")]
    tasks = [g for g in gets if g.startswith("/api/tasks/")]
    others = [g for g in gets if not g.startswith("/api/tasks/")]
    times = []
    with raw_client(server) as http, \
            ThreadPoolExecutor(max_workers=SIGNAL_THREADS) as pool:
        http.get("/api/current-user/whoami").raise_for_status()  # the client warm, outside the time
        for _ in range(RUNS):
            started = time.perf_counter()
            for get in others:
                http.get(get).raise_for_status()
            for answer in pool.map(http.get, tasks):
                answer.raise_for_status()
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def replayed(run: BenchRun, servers: list[Server], what: str) -> None:
    """Step 5 for one command: each GET it made asked again alone on its server, (a) and (b) alternating,
    ``RUNS`` times; printed by path (the sum of its requests' median seconds), the largest difference first."""
    counts = [Counter(path_of(r) for r in server.requests[what]) for server in servers]
    seconds: list[dict[str, float]] = [{}, {}]
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(raw_client(server)) for server in servers]
        gets = [[r.partition(" ")[2] for r in server.requests[what] if r.startswith("GET ")] for server in servers]
        for number in range(max(len(g) for g in gets)):
            for side in (0, 1) if number % 2 == 0 else (1, 0):
                if number < len(gets[side]):
                    times = []
                    for _ in range(RUNS):
                        started = time.perf_counter()
                        clients[side].get(gets[side][number])
                        times.append(time.perf_counter() - started)
                    key = path_of(f"GET {gets[side][number]}")
                    seconds[side][key] = seconds[side].get(key, 0.0) + statistics.median(times)
    paths = sorted(set(counts[0]) | set(counts[1]), key=lambda k: seconds[0].get(k, 0.0) - seconds[1].get(k, 0.0))
    label = {"create": "create rerun", "score": "nothing-new score"}[what]
    run.print(f"  {label}, requests by path on (a) / (b): count, seconds asked again alone (median of {RUNS})")
    for key in paths:
        a, b = seconds[0].get(key, 0.0), seconds[1].get(key, 0.0)
        timed = f"; {a:.3f} s / {b:.3f} s ({b - a:+.3f} s)" if key.startswith("GET ") else "; not a GET"
        run.print(f"    {key}: {counts[0][key]} / {counts[1][key]}{timed}")


def before_score(server: Server) -> tuple[str, ...]:
    """The before side's score command: its own copy of the full score's folder (each side keeps its change
    signals in its own form in ``.posthoc-cache/state.json``)."""
    out = Path(server.score[-1])
    return (*server.score[:-1], str(out.with_name(f"{out.name}-before")))


def old_side(server: Server, old_path: str, cpu: list[float] | None = None) -> Command:
    """The before side's nothing-new score, its folder named as ours in what it printed (both must print the
    same)."""
    old_score = before_score(server)
    inner = command(old_path, server.server.token, *old_score, cpu=cpu)

    def answer() -> tuple[int, str]:
        code, printed = inner()
        return code, printed.replace(old_score[-1], server.score[-1])

    return answer


def set_up(run: BenchRun, stack: contextlib.ExitStack, name: str, manifest: Any, folder: Path, *, others: int,
           ours_path: str, old_path: str) -> Server:
    """Steps 1 to 3 of the module docstring on a fresh server holding ``others`` other projects; the server and
    the study's backend stay up until ``stack`` closes."""
    ls = start_label_studio(folder)
    stack.callback(ls.stop)
    warm_up(ls.url, ls.token)
    if others:
        seconds = other_projects(ls.url, ls.token, others)
        run.print(f"  {others} other projects made in {seconds:.1f} s")
    backend_url = stack.enter_context(study_backend(Path(manifest.path), folder / "events.sqlite3"))
    server = Server(name, ls, create=("study", "create", "--manifest", str(manifest.path), "--url", ls.url,
                                              "--backend-url", backend_url, "--no-progress"),
                    score=("score", "--manifest", str(manifest.path), "--url", ls.url, "--periodic", "--quiet",
                           "--out", str(folder / "score")))
    started = time.perf_counter()
    code, printed = command(ours_path, ls.token, *server.create)()
    server.created = time.perf_counter() - started
    if code != 0:
        run.fail(f"({name}) study create: exit {code}: {printed}\nLabel Studio's log ends: "
                 f"{ls.log_path.read_text(errors='replace')[-3000:]}")
    run.print(f"  study create {server.created:.1f} s")
    annotate_all(run, ls, manifest, folder)
    started = time.perf_counter()
    code, printed = command(ours_path, ls.token, *server.score)()
    server.full = time.perf_counter() - started
    if code != 0:
        run.fail(f"({name}) full score: exit {code}: {printed}")
    run.print(f"  posthoc score, full: {server.full:.1f} s: {printed}")
    shutil.copytree(server.score[-1], before_score(server)[-1])
    if old_side(server, old_path)()[0] != 10:  # the before side's first run there makes its state, untimed
        run.fail(f"({name}) the before side's first periodic run on its copy did not find nothing new")
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--tasks", type=int, default=TASKS, help="tasks a worker (default: the paper's 1,500; "
                        "another size is saved as study_server_bench_<workers>x<tasks>)")
    parser.add_argument("--others", type=int, default=1000, help="other projects on server (b)")
    parser.add_argument("--small", action="store_true", help="4 workers x 10 tasks, 100 others; not saved")
    parser.add_argument("--before", metavar="COMMIT", help="the code the before side runs (default: the merge base "
                        "with main, which on main itself is this tree: give the last measured stop there)")
    args = parser.parse_args(argv)
    workers, tasks, others = (4, 10, 100) if args.small else (args.workers, args.tasks, args.others)
    results_dir = Path(tempfile.mkdtemp(prefix="study-server-small-")) if args.small else None
    from study_scale_raw import plan_scale_study

    ours_path = f"{ROOT / 'plugin'}{os.pathsep}{ROOT / 'ml_backend'}"
    name = "study_server_bench" if (workers, tasks) == (WORKERS, TASKS) else f"study_server_bench_{workers}x{tasks}"
    with BenchRun(name, results_dir=results_dir) as run, \
            tempfile.TemporaryDirectory(prefix="study-server-") as tmp, contextlib.ExitStack() as stack:
        PYCACHE[:] = [str(Path(tmp) / "pycache")]
        base, old_path = baseline_tree(Path(tmp), args.before)
        run.print(f"before = the same command at {base} ({'--before' if args.before else 'the merge base with main'});"
                  " ours = this tree")
        servers: list[Server] = []
        for name, n_others in (("a", 0), ("b", others)):
            folder = Path(tmp) / name
            folder.mkdir()
            manifest = plan_scale_study(folder / "server.manifest", n_workers=workers, tasks_per_worker=tasks)
            run.print(f"({name}) {len(manifest.workers())} workers, {len(manifest.tasks())} tasks, on a server "
                      f"holding {n_others} other projects")
            servers.append(set_up(run, stack, name, manifest, folder, others=n_others, ours_path=ours_path,
                                  old_path=old_path))
            manifest.close()
        run.print(f"both servers up: each cheap command on (a) and (b), ours and before, interleaved, {RUNS} runs each")
        rerun = time_interleaved({f"{side} {s.name}": command(path, s.server.token, *s.create) for s in servers
                                  for side, path in (("ours", ours_path), ("before", old_path))}, runs=RUNS)
        same_results(run, "create rerun", rerun, expected_exit=0)
        new = time_interleaved({f"{side} {s.name}": (command(ours_path, s.server.token, *s.score) if side == "ours"
                                                     else old_side(s, old_path)) for s in servers
                                for side in ("ours", "before")}, runs=RUNS)
        same_results(run, "nothing-new score", new, expected_exit=10)
        for what, timings in (("create rerun, nothing to do", rerun), ("score --periodic, nothing new", new)):
            for s in servers:
                ours, old = timings[f"ours {s.name}"], timings[f"before {s.name}"]
                run.print(f"  ({s.name}) {what}: ours {ours.wall_median:.2f} s (min {ours.wall_min:.2f}), before "
                          f"{old.wall_median:.2f} s (min {old.wall_min:.2f}): before / ours "
                          f"{old.wall_median / ours.wall_median:.2f}x; both printed the same")
        server_figures(run, servers, ours_path=ours_path, old_path=old_path)
        report(run, servers, rerun, new, others=others, size=f"{workers} workers x {tasks:,} tasks")


def report(run: BenchRun, servers: list[Server], rerun: dict[str, Timing], new: dict[str, Timing], *,
           others: int, size: str) -> None:
    """The ratios (b)/(a), the shares of the full score, the headline and the targets."""
    a, b = servers

    def ratio(timings: dict[str, Timing], side: str) -> float:
        return timings[f"{side} b"].wall_median / timings[f"{side} a"].wall_median

    def share(server: Server, side: str) -> float:
        return 100 * new[f"{side} {server.name}"].wall_median / server.full

    run.print(f"full score: (a) {a.full:.1f} s, (b) {b.full:.1f} s")
    for server in servers:
        run.print(f"  ({server.name}) nothing-new score {share(server, 'ours'):.1f}% of the full score (before: "
                  f"{share(server, 'before'):.1f}%); raw Label Studio side, its {len(server.requests['score'])} "
                  f"requests from a warm client and no posthoc process: {server.floor:.2f} s = "
                  f"{100 * server.floor / server.full:.1f}% of the full score")
    run.print(f"(b)/(a), side by side: create rerun ours {ratio(rerun, 'ours'):.2f}x (before "
              f"{ratio(rerun, 'before'):.2f}x); nothing-new score ours {ratio(new, 'ours'):.2f}x (before "
              f"{ratio(new, 'before'):.2f}x)")
    run.headline(f"{size}: nothing-new score {share(a, 'ours'):.1f}% / {share(b, 'ours'):.1f}% of a full score "
                 f"({a.full:.0f} / {b.full:.0f} s; before {share(a, 'before'):.1f}% / {share(b, 'before'):.1f}%, "
                 f"target <= 5%); "
                 f"{others:,} other projects cost a create rerun {ratio(rerun, 'ours'):.2f}x (before "
                 f"{ratio(rerun, 'before'):.2f}x) and a nothing-new score {ratio(new, 'ours'):.2f}x (before "
                 f"{ratio(new, 'before'):.2f}x), both servers up, interleaved")
    checks = {"create rerun (b)/(a) <= 1.2x": ratio(rerun, "ours") <= 1.2,
              "nothing-new score (b)/(a) <= 1.2x": ratio(new, "ours") <= 1.2,
              "(a) nothing-new <= 5% of the full score": share(a, "ours") <= 5,
              "(b) nothing-new <= 5% of the full score": share(b, "ours") <= 5}
    for check, ok in checks.items():
        run.print(f"  {check}: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
