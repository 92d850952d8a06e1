"""``posthoc study extend`` and ``posthoc study reassign``: revise a running study, on its manifest and in Label Studio.

Both compute a revision with a pure function (:func:`posthoc.study.plan.extend.plan_extension`,
:func:`posthoc.study.plan.reassign.plan_reassignment`), print what it adds and withdraws per worker, and (without
``--dry-run``) apply it: first ``posthoc study create``'s setup checks that Label Studio holds every worker's
planned tasks as a prefix (it completes an interrupted setup and changes nothing when all is there), then the
manifest is rewritten atomically with the revision (:meth:`posthoc.study.plan.manifest.Manifest.revise`), then
the same setup imports each worker's missing suffix and makes new workers' accounts and projects. A rerun with
the same inputs finds an empty revision: nothing is written, and the setup finds nothing to import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from posthoc.cli.labelstudio_access import api_token, url_option
from posthoc.errors import PosthocInputError


def _label_studio_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``posthoc study create`` takes, to apply a revision through it."""
    options = [
        url_option("Label Studio's URL [default: the server of --data-dir]"),
        click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="A local Label Studio started by `posthoc ls start` (its URL and admin token)."),
        click.option("--backend-url", envvar="POSTHOC_BACKEND_URL", default=None,
                     help="The ML backend as Label Studio reaches it (as for `posthoc study create`); needed "
                          "unless --dry-run."),
        click.option("--accounts-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                     help="As for `posthoc study create` (default <manifest>.accounts.json)."),
        click.option("--webhook/--no-webhook", default=False, show_default=True,
                     help="As for `posthoc study create`: give --webhook for a study made with it."),
        click.option("--backend-wait", type=click.FloatRange(min=0), default=60, show_default=True,
                     help="Seconds to wait for the ML backend's /health."),
        click.option("--dry-run", is_flag=True, default=False,
                     help="Print per worker the tasks that would be added and withdrawn and the new accounts; "
                          "change nothing (neither the manifest nor Label Studio)."),
        click.option("--progress/--no-progress", default=False, show_default=True, help="Progress bars."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _connection(ls_url: str | None, data_dir: Path | None) -> tuple[str, str]:
    """Label Studio's URL and an admin token: env POSTHOC_LS_TOKEN / LABEL_STUDIO_TOKEN, else --data-dir's."""
    from posthoc.labelstudio.credentials import read_credentials
    from posthoc.labelstudio.server_log import read_state
    from posthoc.labelstudio.url import check_url

    token = api_token()
    if data_dir is not None:
        credentials, state = read_credentials(data_dir), read_state(data_dir)
        token = token or (credentials.token if credentials is not None else None)
        if ls_url is None and state is not None:
            ls_url = str(state["url"])
    if ls_url is None:
        raise PosthocInputError("give --url (or env POSTHOC_LS_URL) or the --data-dir of a running `posthoc ls start`")
    check_url(ls_url)
    if not token:
        raise PosthocInputError("no admin token: set env POSTHOC_LS_TOKEN or LABEL_STUDIO_TOKEN (or give --data-dir)")
    return ls_url, token


def _print_revision(kind: str, number: int, per_worker: Any, *, dry_run: bool) -> None:
    if not len(per_worker):
        click.echo(f"{kind}: nothing to change (the study already is as asked); no revision written")
        return
    verb = "would add" if dry_run else "adds"
    click.echo(f"{kind} revision {number} {verb}:")
    for row in per_worker.to_dict("records"):
        new = "  (new account)" if row["new_account"] else ""
        click.echo(f"  {row['worker']}: +{row['added']} tasks ({row['added_control']} control), "
                   f"{row['withdrawn']} withdrawn{new}")


def _apply(ctx: click.Context, manifest_path: Path, revision: Any, created: str, digest: str,
           tables: dict[str, Any], setup: dict[str, Any]) -> None:
    """Check Label Studio against the manifest (the setup, a no-op when in step), write the revision, import it."""
    from posthoc.cli.setup import create_command
    from posthoc.study.plan.manifest import Manifest

    if setup.get("backend_url") is None:
        raise PosthocInputError("give --backend-url (or env POSTHOC_BACKEND_URL) to apply the revision, or --dry-run")
    arguments = {"manifest_path": manifest_path, "email_domain": None, "verify": False, "gateway_url": None, **setup}
    if not revision.empty:
        ctx.invoke(create_command, **arguments)
        Manifest.revise(manifest_path, revision.apply(tables, created=created), expected_digest=digest).close()
        click.echo(f"manifest {manifest_path}: revision {revision.number} ({revision.kind}) written")
    ctx.invoke(create_command, **arguments)


def _documents_option(values: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        dataset, _, number = value.rpartition("=")
        if not dataset or not number.isdigit():
            raise PosthocInputError(f"--documents {value!r}: give DATASET=N (documents the dataset should have)")
        out[dataset] = int(number)
    return out


def _cells_option(values: tuple[str, ...]) -> list[tuple[str, str]] | None:
    cells = []
    for value in values:
        dataset, _, system = value.rpartition("/")
        if not dataset or not system:
            raise PosthocInputError(f"--cell {value!r}: give DATASET/SYSTEM")
        cells.append((dataset, system))
    return cells or None


@click.command("extend", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--manifest", "manifest_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study manifest (`posthoc study plan`).")
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study.toml the manifest was planned from; its inputs may hold more documents (the pool "
                   "the extension draws from).")
@click.option("--target-halfwidth", type=float, default=None,
              help="Add the fewest next documents that bring every cell's predicted 95% half-width (posthoc "
                   "precision and recall, the estimate's) under this value.")
@click.option("--runs", type=click.IntRange(min=2), default=200, show_default=True,
              help="Simulated studies behind each prediction.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the simulated studies (the documents' ranking is the study's own seed).")
@click.option("--pilot", "pilot_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="judgements.csv of the pilot (`posthoc score`): its outcome rates drive the prediction "
                   "(default: paper 000's rates).")
@click.option("--cell", "cells", multiple=True, help="DATASET/SYSTEM: only these cells must reach the target "
                                                     "(repeat; default every cell).")
@click.option("--documents", "documents", multiple=True,
              help="DATASET=N: extend the dataset to its first N documents of the seeded ranking (repeat; instead "
                   "of --target-halfwidth).")
@_label_studio_options
@click.pass_context
def extend_command(ctx: click.Context, /, manifest_path: Path, config_path: Path, target_halfwidth: float | None,
                   pilot_path: Path | None, cells: tuple[str, ...], documents: tuple[str, ...], runs: int, seed: int,
                   dry_run: bool, **setup: Any) -> None:
    """Extend a running study with the next documents of its seeded sample.

    The study's documents are ranked within each dataset by its seed; the extension takes the next ones in
    that order (so the extended study has the sample it would have been planned with at that size), chunks
    them, makes their items, gives each to k different workers (systems balanced), and appends each worker's
    new tasks after the ones they have, in new batches with a control task each, in the worker's own seeded
    order. The manifest records the revision; Label Studio gets the new tasks at the end of each project.
    """
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.extend import plan_extension
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.revision import config_of
    from posthoc.study.plan.secret import read_key_secret

    if (target_halfwidth is None) == (not documents):
        raise PosthocInputError("give either --target-halfwidth W or --documents DATASET=N")
    if target_halfwidth is not None and not 0 < target_halfwidth < 1:
        raise PosthocInputError(f"--target-halfwidth must be between 0 and 1 (e.g. 0.05), got {target_halfwidth}")
    manifest = Manifest.open(manifest_path)
    tables, digest = manifest.raw_tables(), manifest.digest
    config = config_of(manifest.config)
    study_config = load_study_config(config_path)
    pilot = None
    if pilot_path is not None:
        from posthoc.study.planner.rates import read_pilot

        pilot = read_pilot(pilot_path)
    pool_docs, pool_ments = read_study_inputs(study_config, progress=False)
    if study_config.name != manifest.study:
        raise PosthocInputError(f"--config plans study {study_config.name!r} but the manifest is study "
                                f"{manifest.study!r}: give the config the manifest was planned from")
    wanted = _documents_option(documents)
    if target_halfwidth is not None:
        from posthoc.study.planner.extension_target import documents_for_study_target

        found = documents_for_study_target(tables["documents"], pool_docs, pool_ments, config, pilot,
                                           target=target_halfwidth, cells=_cells_option(cells), runs=runs, seed=seed)
        _print_target(found, target_halfwidth)
        wanted = {d: int(row["documents"]) for d, row in found.items()}
    number = len(tables["revisions"]) + 1
    extension = plan_extension(tables, config, pool_docs, pool_ments, wanted, study=manifest.study, revision=number,
                               key_secret=read_key_secret(manifest_path))
    manifest.close()
    for dataset in sorted(extension.documents_after):
        click.echo(f"  {dataset}: {extension.documents_before[dataset]} -> {extension.documents_after[dataset]} "
                   "documents")
    if not extension.prefix:
        click.echo("note: the study's documents were not the first of its seeded ranking; the ones it lacks are "
                   "added in ranking order")
    _print_revision("extend", number, extension.revision.per_worker(), dry_run=dry_run)
    if not dry_run:
        _apply(ctx, manifest_path, extension.revision, _now(), digest, tables, setup)


def _print_target(found: Mapping[str, Mapping[str, Any]], target: float) -> None:
    """One line a dataset: the widest cell now and at the documents found for ``target``
    (:func:`posthoc.study.planner.extension_target.documents_for_study_target`)."""
    for dataset, row in found.items():
        state = "reached" if row["reached"] else "NOT reachable with every document"
        click.echo(f"target ± {target:g} in {dataset}: widest cell {row['widest_now']:.4f} now, "
                   f"{row['widest']:.4f} at {row['documents']} of {row['of']} documents ({state})")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _failed_from(score_dir: Path | None) -> set[str]:
    """Workers the score job excluded for failing their control tasks (``tables/controls.csv``, ``excluded``)."""
    if score_dir is None:
        return set()
    import pandas as pd

    path = score_dir / "tables" / "controls.csv"
    if not path.is_file():
        raise PosthocInputError(f"--failed-from {score_dir}: no tables/controls.csv (a `posthoc score` output folder)")
    controls = pd.read_csv(path, dtype={"worker": str})
    if not {"worker", "excluded"} <= set(controls.columns):
        raise PosthocInputError(f"{path} lacks the columns worker and excluded")
    return set(controls.loc[controls["excluded"].astype(str).str.lower() == "true", "worker"])


@click.command("reassign", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--manifest", "manifest_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study manifest.")
@click.option("--failed", multiple=True, help="A worker who failed the control tasks (repeat): all their items go "
                                              "to others; what they judged stays in the export, excluded.")
@click.option("--failed-from", "failed_from", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="A `posthoc score` output folder: the workers its control check excluded count as --failed.")
@click.option("--left", multiple=True, help="A worker who stopped (repeat): the tasks they have not done go to "
                                            "others; what they did stays.")
@click.option("--new-workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="New accounts (w021, ...) that may take the work; one that gets none is not made.")
@_label_studio_options
@click.pass_context
def reassign_command(ctx: click.Context, /, manifest_path: Path, failed: tuple[str, ...], failed_from: Path | None,
                     left: tuple[str, ...], new_workers: int, dry_run: bool, **setup: Any) -> None:
    """Give the work of failed or departed workers to others, keeping k judges an item.

    Which tasks each worker has done is read from Label Studio. The failed and departed workers' undone
    tasks are withdrawn in the manifest; they are NOT deleted from Label Studio (each project serves its
    tasks in import order, and the setup checks that order), and the score job leaves out any judgement of a
    withdrawn task. Every item short of k judges over the passing workers gets new ones from workers who have
    not seen its chunk (systems balanced, new accounts first), appended in their seeded order.
    """
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.study.live.progress import annotations_from_label_studio
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.reassign import plan_reassignment
    from posthoc.study.plan.revision import config_of
    from posthoc.study.plan.secret import read_key_secret

    manifest = Manifest.open(manifest_path)
    tables, digest = manifest.raw_tables(), manifest.digest
    unknown = sorted({*failed, *left} - set(manifest.workers()))
    if unknown:  # before Label Studio is asked anything
        raise PosthocInputError(f"unknown worker(s) {unknown}; the study's workers: {', '.join(manifest.workers())}")
    url, token = _connection(setup["ls_url"], setup["data_dir"])
    known = recorded_project_ids(default_setup_file(manifest_path), study=str(manifest.study)).values()
    annotations = annotations_from_label_studio(url, token, manifest, known_ids=known)
    done = set(annotations.loc[~annotations["was_cancelled"].astype(bool), "task_key"].astype(str))
    number = len(tables["revisions"]) + 1
    revision = plan_reassignment(tables, config_of(manifest.config), done, failed={*failed, *_failed_from(failed_from)},
                                 left=set(left), new_workers=new_workers, revision=number,
                                 key_secret=read_key_secret(manifest_path))
    manifest.close()
    _print_revision("reassign", number, revision.per_worker(), dry_run=dry_run)
    if not dry_run:
        _apply(ctx, manifest_path, revision, _now(), digest, tables, setup)
