"""``posthoc gateway config|serve|run``: the study gateway in front of Label Studio (issue 23).

* ``config`` prints the nginx configuration (:func:`posthoc.labelstudio.gateway_nginx.nginx_config`), for a
  deployed Label Studio too;
* ``serve`` runs the authoriser (:mod:`posthoc_backend.gateway`) under gunicorn, one process (it remembers
  logouts in memory) with threads; the admin token comes from ``POSTHOC_LS_TOKEN`` or ``LABEL_STUDIO_TOKEN``;
* ``run`` runs nginx in the foreground on a loopback port until Ctrl-C / SIGTERM (and it stops when this command
  is killed), its pid, logs and temp files in a kept folder (``--prefix``, reused by the next run: a killed run
  leaves no temp folder behind). ``posthoc ls start --gateway MANIFEST`` starts both beside a local Label Studio.

Label Studio itself should listen on 127.0.0.1 only: the gateway is then the only door annotators get.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from posthoc.cli.labelstudio_access import require_api_token, url_option
from posthoc.errors import PosthocInputError, PosthocServiceError

#: ``gateway run``'s kept folder, beside ``posthoc ls start``'s default data dir (``.posthoc/labelstudio``)
DEFAULT_PREFIX = Path(".posthoc") / "gateway"
_LS_URL = url_option("Label Studio as nginx reaches it, e.g. http://127.0.0.1:8080", name="--ls-url",
                     required=True)
_AUTHORISER_URL = click.option("--authoriser-url", required=True,
                               help="The authoriser (posthoc gateway serve) as nginx reaches it.")


@click.command("config")
@_LS_URL
@_AUTHORISER_URL
@click.option("--listen", default="127.0.0.1:8081", show_default=True, help="host:port nginx listens on.")
@click.option("--prefix", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A private folder for a foreground nginx of one user (pid, logs, temp files); omit for a "
                   "server's own nginx.")
def config_command(ls_url: str, authoriser_url: str, listen: str, prefix: Path | None) -> None:
    """Print the gateway's nginx configuration."""
    from posthoc.labelstudio.gateway_nginx import nginx_config

    click.echo(nginx_config(ls_url=ls_url, authoriser_url=authoriser_url, listen=listen,
                            prefix=prefix.resolve() if prefix else None), nl=False)


@click.command("serve")
@click.option("--manifest", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The study manifest (its accounts file beside it names the workers' logins).")
@url_option("Label Studio's URL, as the authoriser reaches it", required=True)
@click.option("--accounts-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The workers' accounts (default: <manifest stem>.accounts.json beside the manifest).")
@click.option("--owner", "owners", multiple=True, help="E-mail of a study owner who passes (repeatable); the "
                                                      "admin token's user always does.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address the authoriser listens on; nginx alone asks it, so keep the loopback address unless "
                   "nginx runs on another host.")
@click.option("--port", type=click.IntRange(1, 65535), default=9093, show_default=True,
              help="Port the authoriser listens on: the --authoriser-url of `posthoc gateway config` / `run`.")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True,
              help="Threads of its one gunicorn process (one process: it keeps logouts in memory), i.e. requests "
                   "it answers at once.")
def serve_command(manifest: Path, ls_url: str, accounts_file: Path | None, owners: tuple[str, ...], host: str,
                  port: int, threads: int) -> None:
    """Serve the gateway's authoriser (gunicorn) for nginx's auth_request."""
    from posthoc.cli.backend import check_listen_address, gunicorn_command

    token = require_api_token()
    if not manifest.is_file():
        raise PosthocInputError(f"--manifest {manifest}: no such file")
    check_listen_address(host, port)
    env = {**os.environ, "POSTHOC_MANIFEST": str(manifest.resolve()), "LABEL_STUDIO_URL": ls_url,
           "LABEL_STUDIO_TOKEN": token, "POSTHOC_GATEWAY_OWNERS": ",".join(owners)}
    env.pop("POSTHOC_ACCOUNTS_FILE", None)
    if accounts_file is not None:
        env["POSTHOC_ACCOUNTS_FILE"] = str(accounts_file.resolve())
    command = [*gunicorn_command(host=host, port=port, workers=1)[:-1], "--threads", str(threads),
               "--config", "python:posthoc_backend.gateway_gunicorn", "posthoc_backend.gateway_wsgi:app"]
    click.echo(f"posthoc gateway authoriser on http://{host}:{port} (Label Studio {ls_url})", err=True)
    os.execvpe(command[0], command, env)  # noqa: S606 (replaces this process with gunicorn)


@click.command("run")
@_LS_URL
@_AUTHORISER_URL
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Loopback port (default: a free one).")
@click.option("--prefix", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_PREFIX,
              show_default=True, help="nginx's folder (configuration, pid, logs, temp files), kept and reused; one "
                                      "gateway at a time per folder.")
def run_command(ls_url: str, authoriser_url: str, port: int | None, prefix: Path) -> None:
    """Run the gateway (nginx) on 127.0.0.1 in the foreground until Ctrl-C."""
    from posthoc.labelstudio.gateway_nginx import NginxGateway
    from posthoc.processes import restore_interrupt_signals

    restore_interrupt_signals()
    with NginxGateway(ls_url=ls_url, authoriser_url=authoriser_url, port=port, prefix=prefix) as gateway:
        click.echo(f"posthoc gateway on {gateway.url} (Label Studio {ls_url}); Ctrl-C stops it", err=True)
        process = gateway.process
        assert process is not None
        try:
            while process.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            return
        raise PosthocServiceError(f"nginx stopped by itself: {gateway.error_log().strip()[-300:]}")
