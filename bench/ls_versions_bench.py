"""The study block against every supported Label Studio release, as a study owner with their own server runs it.

Each of Label Studio 1.20.0, 1.21.0, 1.22.0 and 1.23.2 (``--versions``) is installed into its own venv under
``--cache`` (``~/.cache/posthoc-ls-versions/label-studio-VERSION``, reused when its ``.installed`` marker is
there; pip from PyPI), started on a fresh SQLite data dir (``label-studio start`` on 127.0.0.1, a free port,
the admin from ``LABEL_STUDIO_USERNAME`` / ``LABEL_STUDIO_PASSWORD``, nothing else changed: legacy tokens stay
off as they are by default), and driven from THIS project's environment, with ``--url`` and a personal access
token (the admin logs in through the form and creates one with ``POST /api/token/``), never ``--data-dir``:

1. ``posthoc study plan`` (examples/study.toml), ``posthoc backend serve`` on 127.0.0.1, ``posthoc study create``;
2. annotations posted by two workers through Label Studio's login form (their session, CSRF cookie; the
   decisions of :func:`posthoc.jobs.simulate.plan_decisions`), then ``posthoc score --periodic`` (exit 0),
   the same again (exit 10: nothing new), two more annotations, ``posthoc score --periodic`` (exit 0) and
   ``posthoc study status`` (exit 0);
3. ``posthoc study status`` with the admin's legacy token as the server has them (off: exit 3, the message naming
   how to turn them on), then after the admin turned them on (``POST /api/jwt/settings``; exit 0).

The judgements of each score must equal the mention decisions posted (one row a decided pre-filled mention,
same worker, task, mention and outcome). Label Studio 1.23 refuses an ML backend on 127.0.0.1 unless the server
runs with ``ML_BLOCK_LOCAL_IP=false`` and ``SSRF_PROTECTION_ENABLED=false``; the bench sets them there (a study
owner's server reaches the backend on a routable address instead: docs/deployment.md).

Baseline: none (a compatibility matrix, not a timing): every cell's exit code and counts are the figures.
Saved to ``bench/results/ls_versions_bench.txt``; the README names the versions it holds for.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from benchlib import BenchRun  # noqa: E402

VERSIONS = ("1.20.0", "1.21.0", "1.22.0", "1.23.2")
CACHE = Path.home() / ".cache" / "posthoc-ls-versions"
ADMIN = ("owner@bench.posthoc.local", "bench-owner-password-1")
#: The releases that refuse an ML backend on a reserved address unless told not to (``ml/serializers.py``).
SSRF_FROM = (1, 23)
OFF_THE_NETWORK = {"LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false", "SENTRY_DSN": "",
                   "FRONTEND_SENTRY_DSN": ""}


def free_port() -> int:
    from posthoc.labelstudio.ports import free_port as pick

    return pick()


def venv_of(version: str, cache: Path, run: BenchRun) -> Path:
    """The venv holding ``label-studio==version``, installed on first use (``.installed`` marks a whole install)."""
    venv = cache / f"label-studio-{version}"
    if (venv / ".installed").is_file():
        return venv
    run.print(f"  installing label-studio=={version} into {venv} ...")
    started = time.monotonic()
    subprocess.run(["rm", "-rf", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"label-studio=={version}"], check=True,
                   timeout=3600)
    (venv / ".installed").write_text(f"label-studio=={version}\n", encoding="utf-8")
    run.print(f"  installed in {time.monotonic() - started:.0f} s")
    return venv


@contextlib.contextmanager
def label_studio(venv: Path, version: str, data_dir: Path) -> Iterator[str]:
    """``label-studio start`` of ``venv`` on a free loopback port and ``data_dir``; its URL once it answers."""
    from posthoc.processes import die_with_parent

    port = free_port()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("LABEL_STUDIO_", "POSTHOC_", "DJANGO_", "POSTGRE")) and key != "PYTHONPATH"}
    env.update(OFF_THE_NETWORK)
    env.update(LABEL_STUDIO_BASE_DATA_DIR=str(data_dir), LABEL_STUDIO_USERNAME=ADMIN[0],
               LABEL_STUDIO_PASSWORD=ADMIN[1])
    if tuple(int(part) for part in version.split(".")[:2]) >= SSRF_FROM:
        env.update(ML_BLOCK_LOCAL_IP="false", SSRF_PROTECTION_ENABLED="false")
    log = (data_dir / "label-studio.log").open("wb")
    process = subprocess.Popen([str(venv / "bin" / "label-studio"), "start", "--no-browser", "--internal-host",
                                "127.0.0.1", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True, preexec_fn=die_with_parent())
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900  # a first start migrates SQLite: 30 s quiet, minutes under load
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/api/version", timeout=5).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"label-studio {version} did not start (exit {process.poll()}); "
                                 f"log {data_dir / 'label-studio.log'}")
            time.sleep(1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def form_login(url: str, email: str, password: str) -> httpx.Client:
    """A person's session: Label Studio's login form, its CSRF cookie kept for the API calls after it."""
    session = httpx.Client(base_url=url, timeout=60, follow_redirects=False)
    session.get("/user/login/")
    answer = session.post("/user/login/", data={"csrfmiddlewaretoken": session.cookies["csrftoken"],
                                                "email": email, "password": password},
                          headers={"Referer": f"{url}/user/login/"})
    if answer.status_code not in (301, 302):
        raise SystemExit(f"{url}: the login form refused {email} (HTTP {answer.status_code})")
    session.headers.update({"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"{url}/"})
    return session


def personal_access_token(url: str) -> str:
    """A personal access token of the admin, made as a study owner makes one (Account & Settings)."""
    with contextlib.closing(form_login(url, *ADMIN)) as session:
        answer = session.post("/api/token/")
        if answer.status_code not in (200, 201):
            raise SystemExit(f"{url}: POST /api/token/ answered {answer.status_code}: {answer.text[:300]}")
        return str(answer.json()["token"])


def legacy_token(url: str, *, enable: bool) -> str:
    """The admin's legacy token (``/api/current-user/token``); with ``enable``, legacy tokens are first turned on
    for the organization as an admin does (``POST /api/jwt/settings``), else left as the server has them."""
    with contextlib.closing(form_login(url, *ADMIN)) as session:
        if enable:
            answer = session.post("/api/jwt/settings", json={"legacy_api_tokens_enabled": True})
            if answer.status_code != 200:
                raise SystemExit(f"{url}: POST /api/jwt/settings answered {answer.status_code}: {answer.text[:300]}")
        return str(session.get("/api/current-user/token").json()["token"])


@dataclass
class Posted:
    """The mention decisions posted so far: ``(worker, task_key, mention_id, outcome)`` a decided mention."""

    rows: set[tuple[str, str, str, str]] = field(default_factory=set)
    annotations: int = 0


def annotate(url: str, manifest_path: Path, workers: dict[str, int], posted: Posted) -> None:
    """Each of ``workers`` (``{worker: tasks to post}``) logs in through the form and posts that many annotations
    from their own project's stream, deciding every pre-filled mention as the simulation plans."""
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.jobs.simulate import SimulationConfig, annotation_result, plan_decisions
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.labelstudio.records import listed_predictions, result_items, task_data
    from posthoc.study.plan.logins import default_accounts_file, read_accounts
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(manifest_path)
    try:
        decisions = plan_decisions(manifest.mentions(), SimulationConfig())
        projects = recorded_project_ids(default_setup_file(manifest_path), study=manifest.study)
    finally:
        manifest.close()
    accounts = read_accounts(default_accounts_file(manifest_path))
    for worker, count in workers.items():
        with contextlib.closing(form_login(url, accounts[worker]["email"], accounts[worker]["password"])) as session:
            project = projects[worker]
            tags = verification_tags(str(session.get(f"/api/projects/{project}").json()["label_config"]))
            for _ in range(count):
                task = session.get(f"/api/projects/{project}/next").json()
                key = str(task_data(task).get("task_key"))
                prediction = (listed_predictions(task) or [])[0]
                mine = decisions[(decisions["worker"] == worker) & (decisions["task_key"] == key)]
                chosen = {str(r.mention_id): (str(r.outcome), r.new_link if isinstance(r.new_link, str) else None)
                          for r in mine.itertuples(index=False)}
                answer = session.post(f"/api/tasks/{task['id']}/annotations/", json={
                    "result": annotation_result(result_items(prediction), chosen, tags), "project": project,
                    "lead_time": float(mine["lead_time"].iloc[0]), "parent_prediction": prediction["id"]})
                if answer.status_code != 201:
                    raise SystemExit(f"{url}: {worker}'s annotation answered {answer.status_code}: {answer.text[:300]}")
                posted.rows |= {(worker, key, mention, outcome) for mention, (outcome, _) in chosen.items()}
                posted.annotations += 1


def judged(out: Path) -> set[tuple[str, str, str, str]]:
    """``(worker, task_key, mention_id, outcome)`` of every row of the judgements file ``score`` wrote."""
    with (out / "judgements.csv").open(encoding="utf-8", newline="") as handle:
        return {(row["worker"], row["task_key"], row["mention_id"], row["outcome"]) for row in csv.DictReader(handle)}


@dataclass
class Cell:
    """One server's row of the table."""

    version: str
    release: str = "?"
    exits: dict[str, int] = field(default_factory=dict)
    counts: list[str] = field(default_factory=list)
    warnings: int = 0
    ok: bool = True


def posthoc(cell: Cell, step: str, args: list[str], env: dict[str, str], *, expect: int, run: BenchRun,
            says: str = "") -> None:
    """``posthoc ARGS`` from this project's environment; its exit code is the table's cell ``step`` (and its
    stderr must hold ``says``)."""
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=1800, check=False)
    cell.exits[step] = done.returncode
    cell.warnings += sum("warning" in line.lower() and "label studio" in line.lower()
                         for line in done.stderr.splitlines())
    if done.returncode != expect or says not in done.stderr:
        cell.ok = False
        run.print(f"  {step}: exit {done.returncode} (expected {expect}): {done.stderr.strip()[-600:]}")


def one_version(version: str, cache: Path, run: BenchRun) -> Cell:
    cell = Cell(version)
    venv = venv_of(version, cache, run)
    from posthoc.processes import die_with_parent

    with tempfile.TemporaryDirectory(prefix=f"ls-{version}-") as scratch:
        work = Path(scratch)
        (work / "ls").mkdir()
        started = time.monotonic()
        with label_studio(venv, version, work / "ls") as url:
            cell.release = str(httpx.get(f"{url}/api/version", timeout=10).json().get("release", "?"))
            run.print(f"  Label Studio {cell.release} answered at {url} after {time.monotonic() - started:.0f} s")
            env = {key: value for key, value in os.environ.items()
                   if key not in {"POSTHOC_LS_URL", "POSTHOC_LS_TOKEN", "LABEL_STUDIO_TOKEN"}}
            env["LABEL_STUDIO_TOKEN"] = personal_access_token(url)
            manifest = work / "study" / "manifest.sqlite"
            posthoc(cell, "plan", ["study", "plan", "--config", "examples/study.toml", "--out", str(manifest)], env,
                    expect=0, run=run)
            port = free_port()
            backend = subprocess.Popen([sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest",
                                        str(manifest), "--port", str(port)], env=env, cwd=ROOT,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                                       preexec_fn=die_with_parent())
            try:
                posthoc(cell, "create", ["study", "create", "--manifest", str(manifest), "--url", url,
                                         "--backend-url", f"http://127.0.0.1:{port}", "--backend-wait", "60"],
                        env, expect=0, run=run)
                if not cell.ok:
                    return cell
                posted = Posted()
                scores = work / "study" / "scores"
                score = ["score", "--manifest", str(manifest), "--url", url, "--out", str(scores), "--periodic",
                         "--quiet", "--resamples", "200"]
                annotate(url, manifest, {"w001": 2, "w002": 2}, posted)
                posthoc(cell, "score", score, env, expect=0, run=run)
                cell.counts.append(f"{len(judged(scores))}/{len(posted.rows)}")
                cell.ok &= judged(scores) == posted.rows
                posthoc(cell, "rerun", score, env, expect=10, run=run)
                annotate(url, manifest, {"w001": 1, "w002": 1}, posted)
                posthoc(cell, "score+2", score, env, expect=0, run=run)
                cell.counts.append(f"{len(judged(scores))}/{len(posted.rows)}")
                cell.ok &= judged(scores) == posted.rows
                status = ["study", "status", "--manifest", str(manifest), "--url", url]
                posthoc(cell, "status", status, env, expect=0, run=run)
                legacy = {**env, "LABEL_STUDIO_TOKEN": legacy_token(url, enable=False)}
                posthoc(cell, "legacy", status, legacy, expect=3, run=run, says="legacy_api_tokens_enabled")
                legacy_token(url, enable=True)
                posthoc(cell, "legacy-on", status, legacy, expect=0, run=run)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(backend.pid, signal.SIGTERM)
                backend.wait(timeout=30)
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", default=",".join(VERSIONS), help="comma-separated Label Studio releases")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the venvs are kept (reused)")
    args = parser.parse_args()
    with BenchRun("ls_versions_bench") as run:
        cells: list[Cell] = []
        for version in args.versions.split(","):
            run.print(f"label-studio=={version}:")
            cells.append(one_version(version, args.cache, run))
        steps = ("plan", "create", "score", "rerun", "score+2", "status", "legacy", "legacy-on")
        run.print()
        run.print("exit codes (rerun: --periodic with nothing new, 10 expected; legacy: study status with the admin's "
                  "legacy token as the server has them, off, 3 expected with the fix named; legacy-on: once the admin "
                  "turned them on); judgements scored / mention decisions posted")
        run.print(f"{'label-studio':<13}{'/api/version':<14}" + "".join(f"{s:>10}" for s in steps)
                  + f"{'judgements':>20}{'warnings':>10}  verdict")
        for cell in cells:
            run.print(f"{cell.version:<13}{cell.release:<14}"
                      + "".join(f"{cell.exits.get(s, '-')!s:>10}" for s in steps)
                      + f"{' then '.join(cell.counts) or '-':>20}{cell.warnings:>10}  {'ok' if cell.ok else 'FAILED'}")
        failed = [cell.version for cell in cells if not cell.ok]
        if failed:
            run.fail(f"not every step gave the expected exit code and counts on {', '.join(failed)}")
        run.headline(f"study block on Label Studio {', '.join(c.version for c in cells)} with --url and a personal "
                     "access token: every exit as expected, judgements = decisions posted")


if __name__ == "__main__":
    main()
