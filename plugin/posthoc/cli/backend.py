"""``posthoc backend serve``: run the ML backend under gunicorn.

The backend (``posthoc_backend``) speaks Label Studio's ML backend protocol; see docs/backend.md.
Configuration reaches the gunicorn workers through the environment (``POSTHOC_MANIFEST``,
``POSTHOC_ALIAS_FILES``, ``POSTHOC_EVENTS_DB``); the shared secret is read only from
``POSTHOC_BACKEND_SECRET`` and is never a command-line argument (it would show in ``ps``).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import click

from posthoc.errors import PosthocInputError


def default_events_db(manifest: Path) -> Path:
    """Where the webhook event store lives unless told: beside the manifest, ``<stem>.events.sqlite3``."""
    return manifest.with_name(f"{manifest.stem}.events.sqlite3")


def gunicorn_command(*, host: str, port: int, workers: int, timeout: int = 120) -> list[str]:
    """The gunicorn command line serving ``posthoc_backend.wsgi:app``."""
    return [
        sys.executable, "-m", "gunicorn",
        "--bind", f"{host}:{port}",
        "--workers", str(workers),
        "--timeout", str(timeout),
        "--access-logfile", "-",
        "posthoc_backend.wsgi:app",
    ]


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
                        case_insensitive: bool = False) -> dict[str, str]:
    """The environment of the gunicorn process (the current one plus the backend's settings)."""
    env = dict(os.environ)
    for key in ("POSTHOC_MANIFEST", "POSTHOC_ALIAS_FILES", "POSTHOC_EVENTS_DB", "POSTHOC_ALIAS_CASE_INSENSITIVE"):
        env.pop(key, None)
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
@click.option("--alias-file", "alias_files", type=click.Path(path_type=Path), multiple=True,
              help="A mentions file for the live-mode dictionary linker: CSV or Parquet with surface and link "
                   "columns, or any format the readers know (JSONL, NIF, WNED, AIDA TSV, REL); repeat for several. "
                   "Without it, live mode is off and tasks without a known key are refused.")
@click.option("--case-insensitive", is_flag=True, help="Match aliases ignoring case in live mode.")
@click.option("--events-db", type=click.Path(path_type=Path), default=None,
              help="SQLite file recording annotation webhooks for `posthoc study status` "
                   "[default: beside the manifest, <manifest stem>.events.sqlite3].")
@click.option("--timeout", type=click.IntRange(5, 3600), default=120, show_default=True,
              help="gunicorn worker timeout in seconds.")
def serve_command(manifest: Path | None, host: str, port: int, workers: int, alias_files: tuple[Path, ...],
                  case_insensitive: bool, events_db: Path | None, timeout: int) -> None:
    """Serve the ML backend for Label Studio (gunicorn, Label Studio's ML backend protocol).

    Connect it in Label Studio under Settings > Model with the URL http://HOST:PORT. Set the
    environment variable POSTHOC_BACKEND_SECRET to require a shared secret: then connect with
    "Basic Authentication" and the secret as password (any user name).
    """
    if manifest is None and not alias_files:
        raise PosthocInputError("give --manifest (a study manifest) or --alias-file (live mode), or both")
    if manifest is not None and not manifest.is_file():
        what = "a folder, not a manifest file" if manifest.is_dir() else "no such file"
        raise PosthocInputError(f"--manifest {manifest}: {what}; run `posthoc study plan` first")
    for path in alias_files:
        if not path.is_file():
            what = "a folder, not a mentions file" if path.is_dir() else "no such file"
            raise PosthocInputError(f"--alias-file {path}: {what}")
    if manifest is not None:
        from posthoc.study.manifest import Manifest

        Manifest.open(manifest).close()  # fail here, once, rather than in every worker
    if alias_files:
        from posthoc_backend.linker import AliasTable, frames_from_files

        AliasTable.from_mentions(frames_from_files([str(p) for p in alias_files]))  # as the workers will
    check_listen_address(host, port)
    if events_db is None and manifest is not None:
        events_db = default_events_db(manifest)
    if events_db is not None:
        from posthoc_backend.events import EventStore

        EventStore(events_db)  # created (or checked) here, as every worker does on start
    env = backend_environment(manifest=manifest, alias_files=alias_files, events_db=events_db,
                              case_insensitive=case_insensitive)
    command = gunicorn_command(host=host, port=port, workers=workers, timeout=timeout)
    secret_note = "on (POSTHOC_BACKEND_SECRET)" if env.get("POSTHOC_BACKEND_SECRET") else "off"
    click.echo(f"posthoc backend on http://{host}:{port} ({workers} workers, auth {secret_note}, "
               f"live mode {'on' if alias_files else 'off'}, events {events_db})", err=True)
    os.execvpe(command[0], command, env)  # noqa: S606 (replaces this process with gunicorn)
