"""``posthoc ls start | stop | status | env``: a local Label Studio on loopback, on SQLite or PostgreSQL, and with
``--gateway MANIFEST`` the study gateway (nginx + its authoriser, docs/gateway.md) beside it."""

from __future__ import annotations

from pathlib import Path

import click

from posthoc.cli.exit_codes import exit_codes_epilog
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.capacity import SQLITE_ANNOTATORS_AT_ONCE, sqlite_load_warning
from posthoc.labelstudio.database import read_database
from posthoc.labelstudio.environment import label_studio_version
from posthoc.labelstudio.ports import LOOPBACK, port_is_free
from posthoc.labelstudio.server import (
    GATEWAY_FOLDER,
    START_TIMEOUT,
    database_choice,
    server_status,
    start_detached,
    stop_detached,
)
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
@click.option("--gateway", "gateway_manifest", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, metavar="MANIFEST",
              help="Also start the study gateway for the study of MANIFEST (made by `posthoc study plan`): nginx on "
                   "127.0.0.1 in front of Label Studio, asking the authoriser about every request, so each worker "
                   "reaches only their own project (docs/gateway.md). Give it to the workers instead of Label "
                   "Studio's URL. It is not on by default because the authoriser needs the manifest (who the "
                   "workers are, and which project is whose).")
@click.option("--gateway-port", type=click.IntRange(1, 65535), default=None,
              help="Loopback port of the gateway; default: a free port.")
@click.option("--workers", type=int, default=None, metavar="N",
              help="Serve Label Studio's WSGI app under gunicorn with N worker processes (as its own Docker image "
                   "serves it) instead of `label-studio start`'s one process; more than one needs --database "
                   "postgresql (SQLite takes one writer at a time). Label Studio serves its static files itself "
                   "(docs/deployment.md).")
def start_command(data_dir: Path, port: int | None, timeout: float, database: str | None,
                  annotators: int | None, gateway_manifest: Path | None, gateway_port: int | None,
                  workers: int | None) -> None:
    """Start Label Studio in the background on 127.0.0.1, off the network.

    The admin login comes from POSTHOC_LS_USERNAME / POSTHOC_LS_PASSWORD / POSTHOC_LS_TOKEN, or is
    generated and stored in DATA_DIR/credentials.json (permissions 0600). The server may call an ML
    backend on 127.0.0.1 (SSRF protection off: local use only).

    Choose PostgreSQL for a Label Studio kept for months, above about 100,000 tasks, or with many annotators
    at once (Label Studio's own guidance says five; measured here, one process on SQLite answers about 100
    annotators' pace and fails at 250's: --annotators N warns); SQLite is right for a demo or a small study.

    A keeper process holds the servers (Label Studio and, with --gateway, nginx and the authoriser): if this
    command is killed before they answer, all of them stop; `posthoc ls stop` stops all of them.

    Needs the Label Studio server package: pip install 'posthoc-review[server]'.
    """
    label_studio_version("posthoc ls start")  # the lean install: one line (exit 2) before DATA_DIR is made
    if port is not None and read_state(data_dir) is None and not port_is_free(port):
        # before DATA_DIR or its credentials are made: a failed start leaves nothing behind
        raise PosthocServiceError(f"port {port} on {LOOPBACK} is in use; choose another with --port")
    if gateway_port is not None and not port_is_free(gateway_port):
        raise PosthocServiceError(f"port {gateway_port} on {LOOPBACK} is in use; choose another with --gateway-port")
    settings = database_choice(database)
    engine = settings.engine if settings is not None else read_database(data_dir).engine
    if workers is not None:
        from posthoc.labelstudio.app_server import check_workers

        check_workers(workers, engine=engine)  # before DATA_DIR is made or anything starts
    warning = sqlite_load_warning(annotators or 0, engine=engine)
    if warning is not None:  # before the start (a first start migrates for 30 s or more): the user may stop
        click.echo(f"posthoc: warning: {warning}", err=True)
    server, state = start_detached(data_dir, port=port, timeout=timeout, database=database,
                                   gateway_manifest=gateway_manifest, gateway_port=gateway_port, workers=workers)
    click.echo(f"Label Studio is running at {server.url}" + (" (give workers the gateway below)"
                                                             if gateway_manifest else ""))
    on_sqlite = server.database.engine == "sqlite"
    click.echo(f"  database: {server.database.describe()}" + (
        f" (up to about {SQLITE_ANNOTATORS_AT_ONCE} annotators at once; more: --database postgresql)"
        if on_sqlite else ""))
    if workers is not None:
        click.echo(f"  served by gunicorn, {workers} worker process{'es' if workers > 1 else ''} (log "
                   f"{server.data_dir / 'gunicorn.log'}; Label Studio serves its static files itself)")
    click.echo(f"  admin login: {server.username} (password and API token in {server.data_dir / 'credentials.json'})")
    click.echo(f"  log: {server.log_path}")
    if gateway_manifest is not None:
        click.echo(f"  study gateway: {state.get('gateway_url')} (study {gateway_manifest}; nginx and authoriser "
                   f"files in {server.data_dir / GATEWAY_FOLDER}); `posthoc ls env` exports it as "
                   "POSTHOC_GATEWAY_URL for `posthoc study create`")
    click.echo("  stop it with: posthoc ls stop" + ("" if data_dir == DEFAULT_DATA_DIR else f" --data-dir {data_dir}"))


@click.command("stop")
@_DATA_DIR
def stop_command(data_dir: Path) -> None:
    """Stop the Label Studio started by "posthoc ls start" on DATA_DIR, and its gateway if it has one."""
    gateway = server_status(data_dir).gateway_url
    if stop_detached(data_dir):
        click.echo(f"stopped Label Studio of {data_dir}" + (f" and its gateway {gateway}" if gateway else ""))
    else:
        click.echo(f"no Label Studio was running for {data_dir}")


@click.command("status", epilog=exit_codes_epilog({1: "no Label Studio runs for DATA_DIR"},
                                                 done="running (answering or not: the line says)"))
@_DATA_DIR
def status_command(data_dir: Path) -> None:
    """Say whether the Label Studio of DATA_DIR runs, where, and whether it answers (exit 1 if not running)."""
    status = server_status(data_dir)
    if not status.running:
        click.echo(f"not running (data dir {status.data_dir})")
        raise SystemExit(1)
    state = "answering" if status.answering else "NOT answering"
    workers = (read_state(status.data_dir) or {}).get("workers")
    served = f"gunicorn with {workers} workers" if isinstance(workers, int) else "label-studio start"
    click.echo(f"running, pid {status.pid}, {status.url}, {state}; {served}; admin {status.username}; "
               f"data dir {status.data_dir}; database {read_database(status.data_dir).describe()}")
    if status.gateway_url is not None:
        click.echo(f"study gateway {status.gateway_url}, "
                   + ("answering" if status.gateway_answering else "NOT answering"))


@click.command("env", epilog=exit_codes_epilog({1: "no Label Studio runs for DATA_DIR: nothing printed on "
                                                  "stdout"}, done="the exports printed"))
@_DATA_DIR
def env_command(data_dir: Path) -> None:
    """Print shell exports of the running server of DATA_DIR: POSTHOC_LS_URL and LABEL_STUDIO_TOKEN (the admin's
    API token, from DATA_DIR/credentials.json), and POSTHOC_GATEWAY_URL when it runs with a study gateway, for the
    commands that read them (study create and status, score):

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
    if status.gateway_url is not None:
        click.echo(f"export POSTHOC_GATEWAY_URL={shlex.quote(status.gateway_url)}")
