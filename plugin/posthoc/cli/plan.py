"""``posthoc study plan``: read a study config, plan the study, write its manifest, print a summary."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from posthoc.errors import PosthocInputError


def _summary_lines(summary: dict[str, object], path: Path, *, written: bool) -> list[str]:
    return [
        f"study {summary['study']!s} (seed {summary['seed']}, k = {summary['k']}): "
        + (f"manifest written to {path}" if written else f"manifest {path} already holds this plan (unchanged)"),
        f"  documents              {summary['documents']}",
        f"  chunks                 {summary['chunks']} ({summary['oversized_chunks']} grown past max_chars to keep "
        "a mention whole)",
        f"  systems                {', '.join(map(str, summary['systems']))}",  # type: ignore[call-overload]
        f"  items (chunk x system) {summary['items']}",
        f"  workers                {summary['workers']}",
        f"  tasks                  {summary['tasks']}",
        f"  tasks per worker       {summary['tasks_per_worker_min']}-{summary['tasks_per_worker_max']}",
        f"  control tasks          {summary['control_tasks']}",
        f"  annotations to verify  {summary['annotations']} (+ {summary['control_annotations']} control annotations)",
    ]


@click.command("plan", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study.toml: [study] name, seed, k, tasks_per_batch, max_chars, n_workers, control_tasks "
                   "and one [[inputs]] table (path, system, format, dataset) per file; paths relative to it. "
                   "Ready examples over the bundled sample corpus: examples/study.toml (one judge per item) and "
                   "examples/study-k3.toml (three judges per item).")
@click.option("--out", "out_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the manifest (an SQLite file). Default: manifest.sqlite beside the config.")
@click.option("--overwrite", is_flag=True, default=False,
              help="Replace an existing manifest that holds a different plan (the same plan is never rewritten).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Override [study] seed: a different seed gives another assignment, order and control tasks.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show progress bars while reading the input files.")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the summary as one JSON object instead of text.")
def plan_command(config_path: Path, out_path: Path | None, overwrite: bool, seed: int | None, progress: bool,
                 as_json: bool) -> None:
    """Plan a posthoc verification study and write its manifest.

    Reads every input of the config (the ground truth and the systems' outputs), splits documents
    into chunks of at most max_chars characters (never cutting a mention), makes one item per chunk
    and system, gives each item to k different workers in batches of tasks_per_batch tasks with one
    control task each, orders every worker's tasks by their own seeded shuffle, and writes it all to
    one manifest file with opaque task keys. The same config and inputs give a byte-identical file.

    Prints: documents, chunks, items, workers, tasks per worker (min-max) and control tasks.

    Example, from the repository root:

    \b
    posthoc study plan --config examples/study.toml --out study/manifest.sqlite
    """
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.secret import key_secret_for, write_key_secret

    config = load_study_config(config_path)
    if seed is not None:
        config = dataclasses.replace(config, seed=seed)
    target = out_path if out_path is not None else config_path.parent / "manifest.sqlite"
    if target.exists() and target.is_dir():
        raise PosthocInputError(f"--out {target} is a folder; give a file path for the manifest")
    documents, mentions = read_study_inputs(config, progress=progress)
    secret, new_secret = key_secret_for(target, overwrite=overwrite)
    plan = plan_study(documents, mentions, config, key_secret=secret)
    existed = target.exists()
    before = target.stat().st_mtime_ns if existed else None
    if new_secret and secret is not None:
        write_key_secret(target, secret)
    manifest = Manifest.create(target, plan, overwrite=overwrite)
    written = not existed or target.stat().st_mtime_ns != before
    manifest.close()
    if as_json:
        click.echo(json.dumps({**plan.summary, "manifest": str(target), "written": written}, sort_keys=True))
    else:
        for line in _summary_lines(plan.summary, target, written=written):
            click.echo(line)
