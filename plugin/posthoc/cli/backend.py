"""``posthoc backend serve``: run the ML backend under gunicorn.

The backend (``posthoc_backend``) speaks Label Studio's ML backend protocol; see docs/backend.md.
Configuration reaches the gunicorn workers through the environment (``POSTHOC_MANIFEST``,
``POSTHOC_ALIAS_FILES``, ``POSTHOC_EVENTS_DB``, ``POSTHOC_PREDICTOR*``, ``POSTHOC_PREDICT_BUDGET``);
the shared secret is read only from ``POSTHOC_BACKEND_SECRET``
and is never a command-line argument (it would show in ``ps``).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
from pathlib import Path

import click

from posthoc.cli.predictor_options import predictor_options
from posthoc.errors import PosthocInputError
from posthoc.predictors.registry import PredictorSpec


def default_events_db(manifest: Path) -> Path:
    """Where the webhook event store lives unless told: beside the manifest, ``<stem>.events.sqlite3``."""
    return manifest.with_name(f"{manifest.stem}.events.sqlite3")


def gunicorn_command(*, host: str, port: int, workers: int, timeout: int = 120) -> list[str]:
    """The gunicorn command line serving ``posthoc_backend.wsgi:app``. Without the control socket of gunicorn
    25+ (not used here): every gunicorn would otherwise share its one default path, ``~/.gunicorn/gunicorn.ctl``."""
    return [
        sys.executable, "-m", "gunicorn",
        "--bind", f"{host}:{port}",
        "--workers", str(workers),
        "--timeout", str(timeout),
        "--access-logfile", "-",
        # the method and path, never the query string or the Referer (a sign-up's holds the invite token)
        "--access-logformat", '%(h)s %(t)s "%(m)s %(U)s" %(s)s %(b)s %(L)s',
        *(["--no-control-socket"] if _has_control_socket() else []),
        "posthoc_backend.wsgi:app",
    ]


def _has_control_socket() -> bool:
    from gunicorn.config import KNOWN_SETTINGS

    return any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS)


def check_listen_address(host: str, port: int) -> None:
    """PosthocInputError unless ``host:port`` can be listened on now (gunicorn would fail in many log lines)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise PosthocInputError(f"--host {host}: not an address of this machine ({exc}); give e.g. 127.0.0.1") \
            from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise PosthocInputError(f"--host {host} --port {port}: cannot listen there ({exc.strerror}); "
                                    "choose a free port or an address of this machine") from None


def backend_environment(*, manifest: Path | None, alias_files: tuple[Path, ...], events_db: Path | None,
                        case_insensitive: bool = False, predictor: dict[str, str] | None = None,
                        predict_budget: float | None = None) -> dict[str, str]:
    """The environment of the gunicorn process (the current one plus the backend's settings).

    ``predictor``: :meth:`posthoc.predictors.registry.PredictorSpec.to_env` of the live predictor
    (then the alias files travel inside it, not as ``POSTHOC_ALIAS_FILES``).
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("POSTHOC_PREDICT")}
    for key in ("POSTHOC_MANIFEST", "POSTHOC_ALIAS_FILES", "POSTHOC_EVENTS_DB", "POSTHOC_ALIAS_CASE_INSENSITIVE"):
        env.pop(key, None)
    if predictor:
        env.update(predictor)
        alias_files = ()
    if predict_budget is not None:
        env["POSTHOC_PREDICT_BUDGET"] = str(predict_budget)
    if manifest is not None:
        env["POSTHOC_MANIFEST"] = str(manifest.resolve())
    if alias_files:
        env["POSTHOC_ALIAS_FILES"] = os.pathsep.join(str(p.resolve()) for p in alias_files)
    if events_db is not None:
        env["POSTHOC_EVENTS_DB"] = str(events_db.resolve())
    if case_insensitive:
        env["POSTHOC_ALIAS_CASE_INSENSITIVE"] = "1"
    return env


@click.command("serve")
@click.option("--manifest", type=click.Path(path_type=Path), default=None,
              help="The study manifest (from `posthoc study plan`); tasks' opaque keys are looked up in it.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Keep the loopback address unless Label Studio runs on another host.")
@click.option("--port", type=click.IntRange(1, 65535), default=9090, show_default=True, help="Port to listen on.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="gunicorn worker processes.")
@click.option("--events-db", type=click.Path(path_type=Path), default=None,
              help="SQLite file recording annotation webhooks for `posthoc study status`; only a study made with "
                   "`posthoc study create --webhook` sends them (by default status reads Label Studio's API) "
                   "[default: beside the manifest, <manifest stem>.events.sqlite3].")
@click.option("--timeout", type=click.IntRange(5, 3600), default=120, show_default=True,
              help="gunicorn worker timeout in seconds.")
@predictor_options("serve", predictor_help="Pre-fill tasks that are in no manifest with this predictor (live mode; "
                   "default: the dictionary when --alias-file is given, else none):")
@click.option("--predict-budget", type=click.FloatRange(min=1), default=80.0, show_default=True,
              help="Seconds of one /predict request spent on live predictions; the tasks left get no prediction "
                   "and Label Studio asks again when they are opened. Keep it below Label Studio's "
                   "ML_TIMEOUT_PREDICT (100 s) and --timeout.")
def serve_command(manifest: Path | None, host: str, port: int, workers: int, events_db: Path | None, timeout: int,
                  predictor: PredictorSpec, predict_budget: float) -> None:
    """Serve the ML backend for Label Studio (gunicorn, Label Studio's ML backend protocol).

    Connect it in Label Studio under Settings > Model with the URL http://HOST:PORT. Set the
    environment variable POSTHOC_BACKEND_SECRET to require a shared secret: then connect with
    "Basic Authentication" and the secret as password (any user name).
    """
    alias_files = tuple(Path(p) for p in predictor.alias_files)
    live = predictor.name != "manifest"
    if manifest is None and not alias_files and not live:
        raise PosthocInputError("give --manifest (a study manifest) or --alias-file / --predictor (live mode), or both")
    if predict_budget >= timeout:
        raise PosthocInputError(f"--predict-budget {predict_budget:g} must be below --timeout {timeout} (gunicorn "
                                "would kill the worker first)")
    if manifest is not None and not manifest.is_file():
        what = "a folder, not a manifest file" if manifest.is_dir() else "no such file"
        raise PosthocInputError(f"--manifest {manifest}: {what}; run `posthoc study plan` first")
    for path in alias_files:
        if not path.is_file():
            what = "a folder, not a mentions file" if path.is_dir() else "no such file"
            raise PosthocInputError(f"--alias-file {path}: {what}")
    if manifest is not None:
        from posthoc.study.plan.manifest import Manifest

        Manifest.open(manifest).close()  # fail here, once, rather than in every worker
    predictor_env: dict[str, str] | None = None
    if live:
        spec = dataclasses.replace(predictor, alias_files=tuple(str(p.resolve()) for p in alias_files))
        spec.check(backend=True)
        spec.linker()  # built here once (alias table, spaCy pipeline), as every worker will
        predictor_env = spec.to_env()
    elif alias_files:
        from posthoc.predictors.linker import AliasTable, frames_from_files

        AliasTable.from_mentions(frames_from_files([str(p) for p in alias_files]))  # as the workers will
    check_listen_address(host, port)
    if events_db is None and manifest is not None:
        events_db = default_events_db(manifest)
    if events_db is not None:
        from posthoc.study.live.events import EventStore

        EventStore(events_db)  # created (or checked) here, as every worker does on start
    env = backend_environment(manifest=manifest, alias_files=alias_files, events_db=events_db,
                              case_insensitive=predictor.case_insensitive, predictor=predictor_env,
                              predict_budget=predict_budget)
    command = gunicorn_command(host=host, port=port, workers=workers, timeout=timeout)
    live_note = f"on ({predictor.name})" if live else ("on (dictionary)" if alias_files else "off")
    secret_note = "on (POSTHOC_BACKEND_SECRET)" if env.get("POSTHOC_BACKEND_SECRET") else "off"
    click.echo(f"posthoc backend on http://{host}:{port} ({workers} workers, auth {secret_note}, "
               f"live mode {live_note}, events {events_db})", err=True)
    os.execvpe(command[0], command, env)  # noqa: S606 (replaces this process with gunicorn)
