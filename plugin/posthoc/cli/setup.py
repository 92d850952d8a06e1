"""``posthoc study create``: set a planned study up in Label Studio (one project per worker, pre-filled)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from posthoc.cli.labelstudio_access import api_token, url_option
from posthoc.cli.study_accounts import worker_login_line
from posthoc.errors import PosthocInputError

if TYPE_CHECKING:
    from posthoc.study.plan.study import Study


@click.command("create")
@click.option("--manifest", "manifest_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study manifest written by `posthoc study plan`.")
@url_option("Label Studio's URL [default: the server of --data-dir]")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A local Label Studio started by `posthoc ls start`: its URL and admin token are read from "
                   "there (and accounts with a lost password are repaired on its database).")
@click.option("--backend-url", required=True, envvar="POSTHOC_BACKEND_URL",
              help="The ML backend (`posthoc backend serve`) as Label Studio reaches it, e.g. http://127.0.0.1:9090.")
@click.option("--accounts-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where annotators' generated passwords are kept (0600). Default: <manifest>.accounts.json.")
@click.option("--email-domain", default=None,
              help="Annotator logins are <worker>@<domain>. Default: the study's own domain, <study>.posthoc.local, "
                   "so studies on one server never share a login. Logins an earlier run made are kept (a different "
                   "--email-domain is then refused); after a failed attempt the flag applies to every worker.")
@click.option("--webhook/--no-webhook", default=False, show_default=True,
              help="Keep the project webhook Label Studio makes for the backend: every annotation event reaches "
                   "the backend's event store, which `posthoc study status` then reads without --url. It costs "
                   "every annotator's Submit: Label Studio serialises and posts the webhook inside it, +36.0 ms p50 "
                   "/ +40.0 ms p95 (20 workers x 1500 tasks) and +19.9 / +31.7 ms (300 workers) on SQLite "
                   "(bench/results/study_scale_bench.txt), +54-64 ms on PostgreSQL, even to a receiver that answers "
                   "at once. Default: no webhook (removed, also from a study made with --webhook); `posthoc study "
                   "status` reads progress and control tasks from Label Studio's API, and the backend's live "
                   "pre-filling does not need the webhook.")
@click.option("--verify", is_flag=True, default=False,
              help="Read every project's tasks and predictions back and check them, also those an earlier run "
                   "recorded as checked in <manifest>.setup.json (by default a rerun trusts that record where Label "
                   "Studio's task and prediction counts agree, and reads no task).")
@click.option("--backend-wait", type=click.FloatRange(min=0), default=60, show_default=True,
              help="Seconds to wait for the ML backend to answer /health first (one started in the background just "
                   "before takes a few seconds); a backend that does not answer is an error, also on a rerun.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
@click.option("--gateway-url", envvar="POSTHOC_GATEWAY_URL", default=None,
              help="The study gateway as workers reach it (env POSTHOC_GATEWAY_URL; `posthoc ls start --gateway` "
                   "and `posthoc ls env` give it): the printed links go through it. Default: the gateway of "
                   "--data-dir's server when it runs one, else links to Label Studio itself.")
@click.option("--kb", "kb_index", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="KB index of `posthoc kb build`: a pre-filled link that redirects is shown in the task's KB pages "
                   "with the page a reader lands on (tasks already imported keep theirs).")
def create_command(manifest_path: Path, ls_url: str | None, data_dir: Path | None, backend_url: str,
                   accounts_file: Path | None, email_domain: str | None, webhook: bool, verify: bool,
                   backend_wait: float, progress: bool, gateway_url: str | None, kb_index: Path | None) -> None:
    """Create the study's projects in Label Studio and print each worker's link.

    One project per worker (Sequential sampling, one annotation per task), the worker's tasks
    imported in their planned order, an account per worker, the ML backend connected and every task
    pre-filled; it checks that each task holds exactly one pre-filled prediction. Rerunning completes
    an interrupted setup and never duplicates projects, tasks, users or predictions.

    The admin token comes from env POSTHOC_LS_TOKEN (or LABEL_STUDIO_TOKEN, as `posthoc score` reads it),
    else from --data-dir's credentials file; the backend's shared secret (if any) from env
    POSTHOC_BACKEND_SECRET.
    """
    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
    from posthoc.labelstudio.credentials import read_credentials
    from posthoc.labelstudio.environment import run_label_studio_command
    from posthoc.labelstudio.server_log import read_state

    token = api_token()
    reset = None
    if data_dir is not None:
        credentials = read_credentials(data_dir)
        state = read_state(data_dir)
        if credentials is None:
            raise PosthocInputError(f"--data-dir {data_dir}: no credentials.json; start it with `posthoc ls start`")
        token = token or credentials.token
        if ls_url is None and state is not None:
            ls_url = str(state["url"])
        if gateway_url is None and state is not None and isinstance(state.get("gateway_url"), str):
            gateway_url = str(state["gateway_url"])

        def reset(email: str, password: str) -> None:
            run_label_studio_command(data_dir, credentials, ["reset_password", "--username", email,
                                                             "--password", password])
    if ls_url is None:
        raise PosthocInputError("give --url (or env POSTHOC_LS_URL) or the --data-dir of a running `posthoc ls start`")
    from posthoc.labelstudio.url import check_url

    check_url(ls_url)
    check_url(backend_url, what="--backend-url", label_studio=False)
    if gateway_url is not None:
        check_url(gateway_url, what="--gateway-url")
    if not token:
        raise PosthocInputError("no admin token: set env POSTHOC_LS_TOKEN or LABEL_STUDIO_TOKEN "
                                "(or give --data-dir of a local server)")
    from posthoc.study.plan.study import Study

    study = Study.open(manifest_path)
    if kb_index is not None:
        from posthoc.readers.wiki_index import WikiIndex

        WikiIndex(kb_index).close()  # not an index: exit 2 before anything is made
    _warn_of_load(study, ls_url, data_dir)
    target = SetupTarget(url=ls_url, token=token, backend_url=backend_url,
                         backend_secret=os.environ.get("POSTHOC_BACKEND_SECRET") or None, reset_password=reset)
    options = SetupOptions(accounts_file=accounts_file, email_domain=email_domain, webhook=webhook, verify=verify,
                           backend_wait=backend_wait, progress=progress, kb_index=kb_index)
    result = create_study(study, target, options)
    click.echo(f"study {result.study}: {len(result.projects)} worker projects on {result.url} "
               f"({result.created_projects} created, {result.imported_tasks} tasks imported, "
               f"{result.created_users} accounts created, {result.predicted_tasks} tasks pre-filled, "
               f"{result.deleted_duplicates} duplicate predictions removed)")
    if gateway_url is not None:
        from posthoc.jobs.setup import stream_link

        click.echo(f"workers' links go through the study gateway {gateway_url} (each reaches only their project)")
    for project in result.projects:
        link = stream_link(gateway_url, project.project_id) if gateway_url is not None else project.link
        click.echo(worker_login_line(project.worker, link, project.email, project.n_tasks))
    click.echo(f"passwords: {result.accounts_file} (permissions 0600)")


def _warn_of_load(study: Study, ls_url: str, data_dir: Path | None) -> None:
    """Warn (stderr) when the plan's workers, all at once, are beyond the server's SQLite with one process; said
    for a server whose database is known here (``--data-dir``, or the default data dir's server)."""
    from posthoc.labelstudio.capacity import sqlite_load_warning
    from posthoc.labelstudio.database import read_database
    from posthoc.labelstudio.server_log import local_engine

    engine = read_database(data_dir).engine if data_dir is not None else local_engine(ls_url)
    if engine != "sqlite":
        return
    workers = len(study.workers)
    warning = sqlite_load_warning(workers, engine=engine)
    if warning is not None:
        click.echo(f"posthoc: warning: this study has {workers} workers; {warning}", err=True)
