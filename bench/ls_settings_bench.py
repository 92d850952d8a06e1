"""Label Studio's CPU per task cycle with its own settings and with the project's deployment settings (issue 41).

One PostgreSQL data dir (a local cluster, the tests' migrated template), served by Label Studio's WSGI app under
gunicorn with 2 workers (:class:`posthoc.labelstudio.app_server.AppServer`), restarted between rounds that
alternate the two settings (interleaved, so a drift of the machine falls on both):

* ``label-studio``: the project's settings module with ``POSTHOC_LS_CONN_MAX_AGE=0``, i.e. Label Studio's own
  behaviour (a new PostgreSQL connection a request);
* ``deployment``: :mod:`posthoc.labelstudio.deployment_settings` as every server the project starts uses it
  (connections kept 600 s, health-checked).

A round: ``--annotators`` annotators logged in through the login form, each working tasks at the paper's pace
(``--think`` seconds between their requests; 15 s a mention, paper 000 section 2.1, a one-mention task by
default): next task (``GET /api/projects/N/next``), think, Submit (``POST /api/tasks/T/annotations/``). Server
CPU from ``/proc`` (utime + stime of gunicorn's workers, and of PostgreSQL's postmaster with its reaped and live
backends: a backend that lived for one request is counted through its parent's ``cutime``), divided by the
cycles done; latency p50 / p95 beside it. Both sides must store every Submit once (checked in the export).

    python bench/ls_settings_bench.py                 # 3 rounds a side, 10 annotators, 15 s think (~10 min)
    python bench/ls_settings_bench.py --rounds 1 --think 2 --seconds 30   # a quick look; not the paper's pace
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests
from benchlib import BenchRun

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="choice" toName="text"><Choice value="yes"/><Choice value="no"/></Choices></View>"""
SIDES = {"label-studio": "0", "deployment": "600"}
TICKS = os.sysconf("SC_CLK_TCK")


def _ticks(pid: int, *, children: bool) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    own = int(fields[11]) + int(fields[12])  # utime, stime
    return own + (int(fields[13]) + int(fields[14]) if children else 0)  # cutime, cstime


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def server_cpu_seconds(app: Any) -> float:
    """gunicorn workers' CPU plus PostgreSQL's (postmaster, its live backends, and the reaped ones via cutime)."""
    from posthoc.labelstudio.database import LocalCluster

    total = sum(_ticks(pid, children=False) for pid in app.worker_pids())
    postmaster = LocalCluster(app.data_dir).pid()
    if postmaster is not None:
        total += _ticks(postmaster, children=True)
        total += sum(_ticks(pid, children=False) for pid in _children(postmaster))
    return total / TICKS


def _login(url: str, email: str, password: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{url}/user/login/", timeout=60)
    answer = session.post(f"{url}/user/login/", timeout=60, allow_redirects=False,
                          data={"csrfmiddlewaretoken": session.cookies["csrftoken"], "email": email,
                                "password": password})
    if answer.status_code != 302:
        raise SystemExit(f"login of {email} answered {answer.status_code}")
    session.headers["X-CSRFToken"] = session.cookies.get("csrftoken", "")
    return session


def _work(url: str, project: int, session: requests.Session, *, think: float, until: float,
          cycles: list[tuple[float, float]], errors: list[str]) -> None:
    result = [{"from_name": "choice", "to_name": "text", "type": "choices", "value": {"choices": ["yes"]}}]
    while time.monotonic() < until:
        started = time.perf_counter()
        task = session.get(f"{url}/api/projects/{project}/next", timeout=60)
        next_ms = (time.perf_counter() - started) * 1000
        if task.status_code != 200:
            errors.append(f"next {task.status_code}")
            return
        time.sleep(think)
        started = time.perf_counter()
        sent = session.post(f"{url}/api/tasks/{task.json()['id']}/annotations/?project={project}", timeout=60,
                            json={"result": result, "lead_time": think, "was_cancelled": False})
        if sent.status_code != 201:
            errors.append(f"submit {sent.status_code}")
            return
        cycles.append((next_ms, (time.perf_counter() - started) * 1000))
        time.sleep(think)


def one_round(data_dir: Path, side: str, args: argparse.Namespace) -> dict[str, float]:
    """One server start with ``side``'s settings; a project, annotators at work for ``args.seconds``."""
    from lsfixtures import make_annotator
    from posthoc.labelstudio.app_server import AppServer
    from posthoc.labelstudio.database import DatabaseSettings

    os.environ["POSTHOC_LS_CONN_MAX_AGE"] = SIDES[side]
    fresh = not (data_dir / "database.json").is_file()  # the first start makes the data dir's cluster
    database = DatabaseSettings("postgresql", local_cluster=True) if fresh else None
    with AppServer(data_dir, workers=2, database=database).start(timeout=600) as app:
        admin = requests.Session()
        admin.headers["Authorization"] = f"Token {app.token}"
        project = admin.post(f"{app.url}/api/projects/", timeout=60, json={
            "title": f"settings bench {side} {time.time_ns()}", "label_config": CONFIG}).json()["id"]
        imported = admin.post(f"{app.url}/api/projects/{project}/import", timeout=300,
                              json=[{"text": f"document {i}"} for i in range(args.annotators * 40)])
        if imported.status_code != 201:
            raise SystemExit(f"import answered {imported.status_code}")
        people = [make_annotator(app) for _ in range(args.annotators)]
        sessions = [_login(app.url, person.email, person.password) for person in people]
        cycles: list[tuple[float, float]] = []
        errors: list[str] = []
        before = server_cpu_seconds(app)
        until = time.monotonic() + args.seconds
        threads = [threading.Thread(target=_work, args=(app.url, project, s),
                                    kwargs={"think": args.think, "until": until, "cycles": cycles, "errors": errors})
                   for s in sessions]
        for thread in threads:  # arrivals spread over one think time
            thread.start()
            time.sleep(args.think / len(threads))
        for thread in threads:
            thread.join()
        cpu = server_cpu_seconds(app) - before
        exported = admin.get(f"{app.url}/api/projects/{project}/export?exportType=JSON", timeout=300).json()
        stored = sum(len(task.get("annotations") or []) for task in exported)
        admin.delete(f"{app.url}/api/projects/{project}/", timeout=300)
    if errors or stored != len(cycles):
        raise SystemExit(f"{side}: errors {errors[:5]}, {stored} stored for {len(cycles)} Submits answered")
    submits = sorted(s for _, s in cycles)
    nexts = sorted(n for n, _ in cycles)
    return {"cycles": len(cycles), "cpu_ms": cpu * 1000 / max(len(cycles), 1),
            "next_p50": statistics.median(nexts), "submit_p50": statistics.median(submits),
            "submit_p95": submits[int(0.95 * (len(submits) - 1))]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds a side, alternating (default 3)")
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--think", type=float, default=15.0, help="seconds between an annotator's requests")
    parser.add_argument("--seconds", type=float, default=75.0, help="a round's working time")
    args = parser.parse_args(argv)
    from lsfixtures import build_template, postgresql_label_studio

    template = build_template(Path(tempfile.gettempdir()) / f"pytest-of-{os.environ.get('USER', 'root')}"
                              / "posthoc-ls")
    prepared, folder = postgresql_label_studio(template)
    found: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    try:
        with BenchRun("ls_settings_bench") as run:
            run.print(f"AppServer 2 workers on a local PostgreSQL; {args.annotators} annotators, {args.think:.0f} s "
                      f"between an annotator's requests, {args.seconds:.0f} s a round, {args.rounds} rounds a side")
            for round_ in range(args.rounds):
                for side in SIDES if round_ % 2 == 0 else list(SIDES)[::-1]:
                    figures = one_round(prepared.data_dir, side, args)
                    found[side].append(figures)
                    run.print(f"round {round_ + 1} {side:<13} cycles {figures['cycles']:>4.0f}  CPU "
                              f"{figures['cpu_ms']:6.1f} ms a cycle  next p50 {figures['next_p50']:6.1f} ms  "
                              f"Submit p50 {figures['submit_p50']:6.1f} / p95 {figures['submit_p95']:6.1f} ms")
            median = {side: statistics.median(f["cpu_ms"] for f in rows) for side, rows in found.items()}
            run.print(f"median server CPU a cycle: label-studio {median['label-studio']:.1f} ms, deployment "
                      f"{median['deployment']:.1f} ms; every Submit stored once on both sides")
            run.headline(f"Label Studio CPU a task cycle (next + Submit, 2 workers, PostgreSQL, {args.think:.0f} s "
                         f"think): {median['label-studio']:.0f} -> {median['deployment']:.0f} ms with persistent "
                         f"connections ({median['deployment'] / median['label-studio']:.2f}x)")
    finally:
        os.environ.pop("POSTHOC_LS_CONN_MAX_AGE", None)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
