"""``posthoc ls start | stop | status``: a local Label Studio on loopback, on SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import click

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.capacity import SQLITE_ANNOTATORS_AT_ONCE, sqlite_load_warning
from posthoc.labelstudio.database import (
    LOCAL_DB_NAME,
    DatabaseSettings,
    read_database,
    settings_from_environment,
)
from posthoc.labelstudio.ports import LOOPBACK, port_is_free
from posthoc.labelstudio.server import START_TIMEOUT, server_status, start_detached, stop_detached
from posthoc.labelstudio.server_log import DEFAULT_DATA_DIR, read_state

_DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DATA_DIR,
                         show_default=True,
                         help="Label Studio's data directory (SQLite database, media, credentials.json, log).")


@click.command("start")
@_DATA_DIR
@click.option("--port", type=click.IntRange(1, 65535), default=None,
              help="Loopback port to listen on; default: a free port. Fails if the port is taken.")
@click.option("--timeout", type=float, default=START_TIMEOUT, show_default=True,
              help="Seconds to wait for the server to answer (the first start migrates the database: ~30 s on a "
                   "quiet machine, 2.5-3.5 min measured on a busy one; later starts 5-8 s).")
@click.option("--database", type=click.Choice(["sqlite", "postgresql"]), default=None,
              help="Label Studio's database. Default: what DATA_DIR already uses, SQLite for a new one. "
                   "postgresql: the server named by POSTHOC_LS_DATABASE_URL (postgresql://USER:PASSWORD@HOST:PORT/"
                   "NAME) or Label Studio's POSTGRE_* variables, else a local cluster initialised in "
                   "DATA_DIR/postgres (Debian's postgresql package; run as the postgres user when this is root).")
@click.option("--annotators", type=click.IntRange(min=1), default=None,
              help="How many annotators will work at once (e.g. a study's workers): warns when that is beyond "
                   f"SQLite with one Label Studio process (more than {SQLITE_ANNOTATORS_AT_ONCE}, measured; "
                   "docs/labelstudio.md 'How many at once').")
def start_command(data_dir: Path, port: int | None, timeout: float, database: str | None,
                  annotators: int | None) -> None:
    """Start Label Studio in the background on 127.0.0.1, off the network.

    The admin login comes from POSTHOC_LS_USERNAME / POSTHOC_LS_PASSWORD / POSTHOC_LS_TOKEN, or is
    generated and stored in DATA_DIR/credentials.json (permissions 0600). The server may call an ML
    backend on 127.0.0.1 (SSRF protection off: local use only).

    Choose PostgreSQL for a Label Studio kept for months, above about 100,000 tasks, or with many annotators
    at once (Label Studio's own guidance says five; measured here, one process on SQLite answers about 100
    annotators' pace and fails at 250's: --annotators N warns); SQLite is right for a demo or a small study.
    """
    if port is not None and read_state(data_dir) is None and not port_is_free(port):
        # before DATA_DIR or its credentials are made: a failed start leaves nothing behind
        raise PosthocServiceError(f"port {port} on {LOOPBACK} is in use; choose another with --port")
    settings: DatabaseSettings | None = None
    if database == "sqlite":
        settings = DatabaseSettings()
    elif database == "postgresql":
        settings = settings_from_environment() or DatabaseSettings(
            "postgresql", host=LOOPBACK, name=LOCAL_DB_NAME, local_cluster=True)
    engine = settings.engine if settings is not None else read_database(data_dir).engine
    warning = sqlite_load_warning(annotators or 0, engine=engine)
    if warning is not None:  # before the start (a first start migrates for 30 s or more): the user may stop
        click.echo(f"posthoc: warning: {warning}", err=True)
    server = start_detached(data_dir, port=port, timeout=timeout, database=settings)
    click.echo(f"Label Studio is running at {server.url}")
    on_sqlite = server.database.engine == "sqlite"
    click.echo(f"  database: {server.database.describe()}" + (
        f" (up to about {SQLITE_ANNOTATORS_AT_ONCE} annotators at once; more: --database postgresql)"
        if on_sqlite else ""))
    click.echo(f"  admin login: {server.username} (password and API token in {server.data_dir / 'credentials.json'})")
    click.echo(f"  log: {server.log_path}")
    click.echo("  stop it with: posthoc ls stop" + ("" if data_dir == DEFAULT_DATA_DIR else f" --data-dir {data_dir}"))


@click.command("stop")
@_DATA_DIR
def stop_command(data_dir: Path) -> None:
    """Stop the Label Studio started by "posthoc ls start" on DATA_DIR (its whole process group)."""
    if stop_detached(data_dir):
        click.echo(f"stopped Label Studio of {data_dir}")
    else:
        click.echo(f"no Label Studio was running for {data_dir}")


@click.command("status")
@_DATA_DIR
def status_command(data_dir: Path) -> None:
    """Say whether the Label Studio of DATA_DIR runs, where, and whether it answers (exit 1 if not running)."""
    status = server_status(data_dir)
    if not status.running:
        click.echo(f"not running (data dir {status.data_dir})")
        raise SystemExit(1)
    state = "answering" if status.answering else "NOT answering"
    click.echo(f"running, pid {status.pid}, {status.url}, {state}; admin {status.username}; "
               f"data dir {status.data_dir}; database {read_database(status.data_dir).describe()}")


@click.command("env")
@_DATA_DIR
def env_command(data_dir: Path) -> None:
    """Print shell exports of the running server of DATA_DIR: POSTHOC_LS_URL and LABEL_STUDIO_TOKEN (the admin's
    API token, from DATA_DIR/credentials.json), for the commands that read them (study create and status, score):

        eval "$(posthoc ls env --data-dir study/labelstudio)"

    The token is printed on purpose here (eval keeps it out of the shell's history): print it nowhere else.
    Exit 1 when no server of DATA_DIR runs.
    """
    import shlex

    from posthoc.labelstudio.credentials import read_credentials

    status = server_status(data_dir)
    credentials = read_credentials(status.data_dir)
    if not status.running or status.url is None or credentials is None:
        click.echo(f"posthoc: error: no Label Studio runs for {status.data_dir}; start it with `posthoc ls start"
                   f"{'' if data_dir == DEFAULT_DATA_DIR else f' --data-dir {data_dir}'}`", err=True)
        raise SystemExit(1)
    click.echo(f"export POSTHOC_LS_URL={shlex.quote(status.url)}")
    click.echo(f"export LABEL_STUDIO_TOKEN={shlex.quote(credentials.token)}")
