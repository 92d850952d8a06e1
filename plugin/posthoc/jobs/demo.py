"""The one-command demo: Label Studio + the ML backend + the sample study (+ simulated annotators + report).

:func:`run_demo` does, in ``out_dir``:

0. installs the fonts that draw the sample's emoji and CJK text when Debian lacks them (as root, with apt-get;
   otherwise one line names them and the command: :mod:`posthoc.debian`);
1. starts Label Studio on ``out_dir/labelstudio`` (embedded SQLite, loopback,
   :mod:`posthoc.labelstudio.server`; admin credentials from ``POSTHOC_LS_*`` or generated, 0600);
2. plans the bundled sample study (``posthoc.study``, ``posthoc.sample``) into ``out_dir/manifest.sqlite``;
3. starts the ML backend (``posthoc backend serve``, gunicorn) on a loopback port (free, or the last run's);
4. creates the study (:func:`posthoc.jobs.setup.create_study`; annotators' passwords in
   ``out_dir/manifest.accounts.json``, 0600) and starts the study gateway in front of Label Studio (nginx and its
   authoriser, :class:`posthoc.labelstudio.gateway_process.GatewayProcesses`, files in ``out_dir/gateway``): each
   worker's printed link goes through it, so a worker reaches only their own project (without nginx installed, the
   demo says so and prints links to Label Studio itself);
5. with ``simulate``: simulated annotators with known behaviour (:mod:`posthoc.jobs.simulate`;
   the last worker careless, a lag-1 bias) annotate through the API as themselves, every worker but
   the first: that batch is left for the person running the demo ("you"), and the console says which
   link to open and with which login. Then the export-and-score job (``posthoc.jobs.score.run_score_job``)
   writes ``out_dir/report`` from what the simulated annotators did;
6. serves until Ctrl-C (or SIGTERM) unless ``serve=False``, then stops both servers and says so.

Rerunning on the same ``out_dir`` reuses the data dir, the manifest, the accounts and the three ports
(``out_dir/demo-ports.json``, while they are free: :func:`demo_ports`): nothing is duplicated, the printed links
stay right, and simulated annotators only annotate what is not annotated yet.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from posthoc.atomic import write_text_atomic
from posthoc.debian import DEMO_FONTS, ensure_packages
from posthoc.errors import PosthocServiceError
from posthoc.http import answers_ok
from posthoc.labelstudio.ports import LOOPBACK, free_port, port_is_free
from posthoc.labelstudio.server import LabelStudioServer, stop_process_group
from posthoc.processes import die_with_parent

if TYPE_CHECKING:
    from posthoc.jobs.setup import StudySetup
    from posthoc.study.plan.manifest import Manifest

PORTS_FILE = "demo-ports.json"


@dataclass(frozen=True)
class DemoResult:
    """Where everything of a demo run is."""

    out_dir: Path
    ls_url: str
    backend_url: str
    manifest_path: Path
    accounts_file: Path
    setup: StudySetup
    report_path: Path | None


@contextlib.contextmanager
def backend_process(manifest_path: Path, *, port: int | None = None, log_path: Path,
                    timeout: float = 180) -> Iterator[str]:
    """``posthoc backend serve`` (gunicorn, one worker) on loopback for the manifest; yields its URL."""
    chosen = port or free_port()
    command = [sys.executable, "-m", "posthoc.cli.main", "backend", "serve", "--manifest", str(manifest_path),
               "--host", LOOPBACK, "--port", str(chosen), "--workers", "1"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=die_with_parent())
    url = f"http://{LOOPBACK}:{chosen}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                tail = log_path.read_bytes()[-2000:].decode("utf-8", "replace")
                raise PosthocServiceError(f"the ML backend exited with code {process.returncode}: {tail}")
            if answers_ok(f"{url}/health"):
                break
            if time.monotonic() > deadline:
                raise PosthocServiceError(f"the ML backend did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.3)
        yield url
    finally:
        stop_process_group(process.pid, timeout=10)
        with contextlib.suppress(Exception):
            process.wait(timeout=2)


def plan_sample_study(manifest_path: Path, *, seed: int, n_workers: int | None) -> Manifest:
    """Plan the bundled sample study into ``manifest_path`` (the same plan again is a no-op)."""
    from posthoc.study import plan_study, read_study_inputs, sample_study_config
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.secret import key_secret_for, write_key_secret

    config = sample_study_config(name="demo", seed=seed, n_workers=n_workers)
    documents, mentions = read_study_inputs(config)
    secret, new_secret = key_secret_for(manifest_path)
    plan = plan_study(documents, mentions, config, key_secret=secret)
    if new_secret and secret is not None:
        write_key_secret(manifest_path, secret)
    return Manifest.create(manifest_path, plan)


def _score(manifest_path: Path, *, url: str, token: str, out_dir: Path, n_resamples: int,
           progress: bool) -> Path | None:
    try:
        from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
    except ImportError:
        return None
    result = run_score_job(manifest_path=manifest_path, source=JudgementSource(ls_url=url, token=token),
                           out_dir=out_dir, options=ScoreOptions(n_resamples=n_resamples, progress=progress))
    return Path(result.report_path)


def _wait_for_interrupt(echo: Callable[[str], None]) -> None:
    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:  # the echo inside: a signal right after it is still a clean stop
        echo("Serving. Press Ctrl-C to stop Label Studio and the backend.")
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        echo("Stopping...")
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_demo(out_dir: str | os.PathLike[str] = "demo-out", *, simulate: bool = False, serve: bool = True,
             ls_port: int | None = None, backend_port: int | None = None, gateway_port: int | None = None,
             seed: int = 20260101,
             n_workers: int | None = None, simulation_seed: int = 7, n_resamples: int = 1000,
             progress: bool = True, echo: Callable[[str], None] = print) -> DemoResult:
    """Run the demo in ``out_dir`` (see the module docstring); ``echo`` prints the console summary."""
    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study, read_accounts
    from posthoc.study.plan.study import Study

    root = Path(out_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    ensure_packages(DEMO_FONTS, purpose="fonts that draw the sample study's text", echo=echo)  # as root: installed
    ls_port, backend_port, gateway_port = demo_ports(root, ls_port=ls_port, backend_port=backend_port,
                                                     gateway_port=gateway_port)
    echo(f"Starting Label Studio in {root / 'labelstudio'} (the first start migrates its database: ~30 s on a "
         "quiet machine, a few minutes on a busy one)...")
    server = LabelStudioServer(root / "labelstudio", port=ls_port)
    server.start()
    try:
        manifest_path = root / "manifest.sqlite"
        manifest = plan_sample_study(manifest_path, seed=seed, n_workers=n_workers)
        echo(f"Planned the sample study: {manifest.summary['tasks']} tasks for {manifest.summary['workers']} "
             f"workers ({manifest_path})")
        with backend_process(manifest_path, port=backend_port, log_path=root / "backend.log") as backend_url, \
                contextlib.ExitStack() as stack:
            study = Study(manifest)
            accounts_file = study.accounts_file  # the default: where the score job looks for logins

            def reset(email: str, password: str) -> None:
                server.run_command(["reset_password", "--username", email, "--password", password])

            setup = create_study(study, SetupTarget(url=server.url, token=server.token, backend_url=backend_url,
                                                    reset_password=reset),
                                 SetupOptions(progress=progress))
            accounts = read_accounts(accounts_file)
            links = _worker_links(setup, stack, server=server, manifest_path=manifest_path, port=gateway_port,
                                  folder=root / "gateway", echo=echo)
            echo("")
            echo(f"Label Studio: {server.url}  (admin {server.username} / {server.password})")
            echo(f"ML backend:   {backend_url}")
            for project in setup.projects:
                echo(f"  worker {project.worker}: {links[project.worker]}  login {project.email} / "
                     f"{accounts[project.worker]['password']}")
            echo(f"(passwords are kept in {accounts_file} and {server.data_dir / 'credentials.json'}, 0600)")
            report = None
            yours = setup.projects[0]  # left for the person running the demo
            if simulate:
                others = [p.worker for p in setup.projects[1:]]
                echo(f"Simulating workers {', '.join(others)}; worker {yours.worker}'s batch is left for you.")
                simulated = _simulate(manifest, setup, accounts, server=server, seed=simulation_seed,
                                      workers=others, progress=progress)
                echo(f"Simulated annotators posted {simulated} annotations.")
                report = _score(manifest_path, url=server.url, token=server.token, out_dir=root / "report",
                                n_resamples=n_resamples, progress=progress)
                echo(f"Report: {report}" if report else "Scoring is not available in this build (posthoc.jobs.score).")
            left = _unlabelled(server, yours.project_id)
            echo("")
            echo(f"Open this to label as worker {yours.worker} ({left} of {yours.n_tasks} tasks left to label):")
            echo(f"  {links[yours.worker]}")
            echo(f"  login {yours.email} / {accounts[yours.worker]['password']}")
            if serve:
                _wait_for_interrupt(echo)
            result = DemoResult(out_dir=root, ls_url=server.url, backend_url=backend_url,
                                manifest_path=manifest_path, accounts_file=accounts_file, setup=setup,
                                report_path=report)
    finally:
        server.stop()
    if not serve:
        echo("Label Studio and the ML backend are stopped now (--no-serve): the links above open again once you "
             f"run `posthoc demo --out {root}` (it reuses everything, on the same ports {ls_port} and "
             f"{backend_port}; {PORTS_FILE} keeps them)")
    else:
        echo("Label Studio and the ML backend are stopped.")
    return result


def demo_ports(root: Path, *, ls_port: int | None, backend_port: int | None,
               gateway_port: int | None = None) -> tuple[int, int, int]:
    """Label Studio's, the backend's and the gateway's ports for the demo in ``root``: those given, else those of
    the last run (``root/demo-ports.json``) while they are free, else free ones; written back, so the links the
    demo prints (the gateway's port, or Label Studio's) and the backend URL Label Studio keeps in each project stay
    right on a rerun."""
    path = root / PORTS_FILE
    stored: dict[str, object] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        stored = loaded if isinstance(loaded, dict) else {}
    chosen: dict[str, int] = {}
    for name, given in (("labelstudio", ls_port), ("backend", backend_port), ("gateway", gateway_port)):
        last = stored.get(name)
        if given is not None:
            chosen[name] = given
        elif type(last) is int and 0 < last < 65536 and last not in chosen.values() and port_is_free(last):
            chosen[name] = last
        else:
            chosen[name] = next(port for port in iter(free_port, 0) if port not in chosen.values())
    write_text_atomic(path, json.dumps(chosen) + "\n")
    return chosen["labelstudio"], chosen["backend"], chosen["gateway"]


def _worker_links(setup: StudySetup, stack: contextlib.ExitStack, *, server: LabelStudioServer, manifest_path: Path,
                  port: int, folder: Path, echo: Callable[[str], None]) -> dict[str, str]:
    """Each worker's link through the study gateway, started on ``port`` and stopped with ``stack``; links to
    Label Studio itself (and a line saying why) when nginx is not installed or the gateway does not start."""
    from posthoc.jobs.setup import stream_link
    from posthoc.labelstudio.gateway_process import GatewayProcesses

    gateway = GatewayProcesses(manifest=manifest_path, ls_url=server.url, token=server.token, folder=folder,
                               port=port)
    try:
        stack.enter_context(gateway)
    except PosthocServiceError as exc:
        echo(f"posthoc: warning: the study gateway did not start ({exc}); the links below go to Label Studio "
             "itself, where every worker can see every project")
        return {project.worker: project.link for project in setup.projects}
    echo(f"Study gateway: {gateway.url} (workers reach only their own project through it; docs/gateway.md)")
    return {project.worker: stream_link(gateway.url, project.project_id) for project in setup.projects}


def _unlabelled(server: LabelStudioServer, project_id: int) -> int:
    from posthoc.labelstudio.client import LabelStudioClient

    tasks = LabelStudioClient(server.url, server.token).tasks(project_id)
    return sum(1 for t in tasks if int(t.get("total_annotations") or 0) + int(t.get("cancelled_annotations") or 0)
               == 0)


def _simulate(manifest: Manifest, setup: StudySetup, accounts: dict[str, dict[str, str]], *, server: LabelStudioServer,
              seed: int, workers: list[str], progress: bool) -> int:
    from posthoc.jobs.simulate import SimulationConfig, annotate_study
    from posthoc.labelstudio.users import ensure_user
    from posthoc.paths import label_config

    tokens = {}
    for project in setup.projects:
        if project.worker not in workers:
            continue
        entry = accounts[project.worker]
        tokens[project.worker] = ensure_user(server.url, server.token, email=entry["email"],
                                             password=entry["password"]).token
    config = SimulationConfig(seed=seed, careless_worker=workers[-1])
    result = annotate_study(manifest, url=server.url, tokens=tokens, project_ids=setup.project_ids(),
                            label_config=label_config("entity_verification"), config=config,
                            admin_token=server.token, workers=workers, progress=progress)
    return int(result.annotations)
