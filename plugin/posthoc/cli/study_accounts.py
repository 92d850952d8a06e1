"""``posthoc study login`` and ``posthoc study retire``: a worker's login printed again, and a finished study taken
off a shared Label Studio (its projects exported first). The work is :mod:`posthoc.jobs.retire`'s."""

from __future__ import annotations

from pathlib import Path

import click

from posthoc.cli.labelstudio_access import require_api_token, require_url, url_option


def worker_login_line(worker: str, link: str, email: str, n_tasks: int) -> str:
    """A worker's line as ``posthoc study create`` prints it: link, login e-mail, number of tasks."""
    return f"  {worker}: {link}  login {email}  ({n_tasks} tasks)"


_MANIFEST = click.option("--manifest", "manifest_path", required=True, type=click.Path(dir_okay=False,
                                                                                        path_type=Path),
                         help="The study manifest (from `posthoc study plan`; `posthoc study create` set it up).")


@click.command("login")
@_MANIFEST
@click.option("--worker", required=True, help="The worker id, as the manifest names it (e.g. w003).")
@url_option("Label Studio's URL: the worker's project is looked up there")
@click.option("--gateway-url", envvar="POSTHOC_GATEWAY_URL", default=None,
              help="The study gateway as workers reach it (env POSTHOC_GATEWAY_URL, as `posthoc ls env` exports "
                   "it): the link goes through it, as `posthoc study create` printed it.")
@click.option("--accounts-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The workers' accounts (0600) `posthoc study create` wrote [default: <manifest>.accounts.json].")
def login_command(manifest_path: Path, worker: str, ls_url: str | None, gateway_url: str | None,
                  accounts_file: Path | None) -> None:
    """Print one worker's link and login again, as `posthoc study create` printed them, and that worker's password
    (from the accounts file; give it to that worker only). No other secret is printed."""
    from posthoc.jobs.retire import worker_login
    from posthoc.labelstudio.url import check_url

    url = require_url(ls_url)
    if gateway_url is not None:
        check_url(gateway_url, what="--gateway-url")
    found = worker_login(manifest_path, worker, url=url, token=require_api_token(), gateway_url=gateway_url,
                         accounts_file=accounts_file)
    click.echo(worker_login_line(found.worker, found.link, found.email, found.n_tasks))
    click.echo(f"  password: {found.password}  (from {found.accounts_file}, 0600)")


@click.command("retire")
@_MANIFEST
@url_option("Label Studio's URL: the study's projects and accounts are found there")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder (0700) for the exports, one JSON file (0600) a project, as `posthoc score --export-file` "
                   "reads them; written first, also without --yes.")
@click.option("--yes", is_flag=True, default=False,
              help="Delete: the study's projects and its workers' accounts (those in the study's own login domain). "
                   "Without it nothing in Label Studio changes: the command lists what it would delete.")
def retire_command(manifest_path: Path, ls_url: str | None, out_dir: Path, yes: bool) -> None:
    """Take a finished study off a shared Label Studio: export every project of the study to OUT first, then (only
    with --yes) delete its projects and its workers' accounts.

    Accounts whose login is not in the study's own domain (<worker>@<study>.posthoc.local, `posthoc study create`'s
    default) may serve another study: they are kept and listed. A rerun finds nothing left and changes nothing.
    Local files (manifest, accounts file, setup record) are left as they are.
    """
    from posthoc.jobs.retire import retire_study

    done = retire_study(manifest_path, url=require_url(ls_url), token=require_api_token(), out_dir=out_dir,
                        apply=yes)
    to_delete = done.deleted_accounts
    if not done.projects and not to_delete:
        click.echo(f"study {done.study}: no project and no account of its own in Label Studio at {done.url}; "
                   "nothing to export or delete")
    else:
        click.echo(f"study {done.study}: {len(done.projects)} projects exported to {out_dir}")
    verb = "deleted" if done.applied else "would delete (give --yes)"
    for project in done.projects:
        click.echo(f"  {verb}: project {project.project_id} of {project.worker} ({project.n_tasks} tasks; export "
                   f"{project.export})")
    for account in done.accounts:
        what = f"{verb}: account" if account.kept is None else "kept: account"
        click.echo(f"  {what} {account.email} of {account.worker}" + (f" ({account.kept})" if account.kept else ""))
    if not done.applied and (done.projects or to_delete):
        click.echo("nothing in Label Studio was changed; rerun with --yes to delete the above")
