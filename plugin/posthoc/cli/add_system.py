"""``posthoc study add-system``: score a new system against a study with part of its annotations judged (issue 46).

Reads the new system's output with the readers ``posthoc study plan`` uses, splits its annotations into reused
and novel (:func:`posthoc.study.plan.add_system.place_system`), sizes the sample of the chunks holding novel ones
(:mod:`posthoc.study.planner.added_system`), plans their tasks
(:func:`posthoc.study.plan.add_system.plan_added_system`) and applies the revision as ``posthoc study extend``
does (:func:`posthoc.cli.extend._apply`: the setup checks Label Studio, the manifest is rewritten atomically, the
new tasks are imported at the end of each worker's project).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from posthoc.cli.extend import _apply, _label_studio_options, _now, _print_revision
from posthoc.errors import PosthocInputError


def _read_output(inputs: tuple[str, ...], *, fmt: str | None, dataset: str | None, system: str,
                 documents: Any, progress: bool) -> tuple[Any, Any]:
    """``(documents, mentions)`` of the new system's files (``PATH`` or ``DATASET=PATH``, a dataset of the
    study), read against the study's texts."""
    from posthoc.readers import read_mentions

    datasets = set(documents["dataset"].astype(str))
    corpus: Any = None
    for value in inputs:
        name, _, rest = value.partition("=")
        own, path = (name, rest) if rest and name in datasets else (dataset, value)
        read = read_mentions(Path(path), fmt=fmt, dataset=own, system=system, documents=documents,
                             progress=progress)
        corpus = read if corpus is None else corpus.merge(read)
    return corpus.documents, corpus.mentions


def _design_line(design: Any, n: int, target: float | None, fraction: float | None) -> str:
    rule = f"--fraction {fraction:g}" if fraction is not None else f"--target-halfwidth {target:g}"
    width = design.halfwidth(n) if n else float("nan")
    return (f"sample ({rule}): {n} of the {design.novel_chunks} chunks with novel annotations; predicted 95% "
            f"half-width of its posthoc precision ± {width:.4f} (verified share {design.verified:.3f}, design "
            f"effect {design.design_effect:.2f} over chunks)")


@click.command("add-system", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--manifest", "manifest_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study manifest (`posthoc study plan`).")
@click.option("--input", "inputs", required=True, multiple=True,
              help="The new system's output on the study's documents, PATH or DATASET=PATH (repeat for several "
                   "files, e.g. one a dataset); any format `posthoc study plan` reads.")
@click.option("--system", required=True, help="The new system's name (not one of the study's).")
@click.option("--format", "fmt", default=None, help="The inputs' format (default: detected, as for the plan).")
@click.option("--dataset", default=None, help="The inputs' dataset (default: the study's only dataset, else the "
                                              "reader's default, the file's stem or the lines' own).")
@click.option("--fraction", type=float, default=None,
              help="Judge this fraction (0-1] of the chunks holding a novel annotation (rounded up).")
@click.option("--target-halfwidth", type=float, default=None,
              help="Judge the fewest chunks whose predicted 95% half-width of the new system's posthoc precision "
                   "is at most this (the study's rates: --pilot).")
@click.option("--pilot", "pilot_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="judgements.csv of the study (`posthoc score`): its verification rate and its correlation "
                   "within chunks drive --target-halfwidth (default: paper 000's rates, no correlation).")
@click.option("--new-workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="New accounts that may take tasks (needed when every worker has seen some sampled chunk).")
@_label_studio_options
@click.pass_context
def add_system_command(ctx: click.Context, /, manifest_path: Path, inputs: tuple[str, ...], system: str,
                       fmt: str | None, dataset: str | None, fraction: float | None, target_halfwidth: float | None,
                       pilot_path: Path | None, new_workers: int, dry_run: bool, **setup: Any) -> None:
    """Add a new system to a study: reuse the verdicts it shares, judge a seeded sample of the rest.

    Each annotation of the new system with the same document, span and canonical link as one a study system
    had pre-filled (judged or to be judged, blind) keeps that verdict (reused); the others are novel. A seeded
    random sample of the chunks holding novel annotations (--fraction, or --target-halfwidth predicted from the
    study's rates) gets a task of the new system showing all its annotations in the chunk, judged k times by
    workers who have not seen the chunk, appended in new batches with a control task each, in each worker's
    seeded order. The manifest records the system, its sampled chunks and each annotation's status (reused,
    sampled, unsampled, unplaced). A rerun with the same output adds nothing.
    """
    from posthoc.study.plan.add_system import added_before, place_system, plan_added_system, sample_chunks
    from posthoc.study.plan.manifest import Manifest
    from posthoc.study.plan.revision import Revision, config_of
    from posthoc.study.plan.secret import read_key_secret

    if (fraction is None) == (target_halfwidth is None):
        raise PosthocInputError("give either --fraction F or --target-halfwidth H")
    manifest = Manifest.open(manifest_path)
    tables, digest = manifest.raw_tables(), manifest.digest
    config = config_of(manifest.config)
    datasets = sorted(set(tables["documents"]["dataset"].astype(str)))
    if dataset is None and len(datasets) == 1:
        dataset = datasets[0]
    documents, mentions = _read_output(inputs, fmt=fmt, dataset=dataset, system=system,
                                       documents=tables["documents"][["dataset", "doc_id", "text"]],
                                       progress=bool(setup["progress"]))
    new = place_system(tables, documents, mentions, system=system)
    number = len(tables["revisions"]) + 1
    earlier = added_before(tables, new)
    manifest.close()
    if earlier is not None:
        click.echo(f"system {system!r} was added in revision {earlier} with this output: nothing to change")
        if not dry_run:
            _apply(ctx, manifest_path, Revision(number, "add-system", {}), _now(), digest, tables, setup)
        return
    design = _design(new, config.k, pilot_path)
    n = _sample_size(design, fraction, target_halfwidth)
    sampled = sample_chunks(new.novel_chunks(), n, seed=config.seed, system=system)
    rule = {"fraction": fraction} if fraction is not None else {"target_halfwidth": target_halfwidth}
    revision = plan_added_system(tables, config, new, sampled, revision=number, key_secret=read_key_secret(
        manifest_path), new_workers=new_workers, parameters={**rule, "verified_share": design.verified,
                                                              "chunk_correlation": design.correlation})
    _print_split(new, revision, design, n, target_halfwidth, fraction, config.k)
    _print_revision("add-system", number, revision.per_worker(), dry_run=dry_run)
    if not dry_run:
        _apply(ctx, manifest_path, revision, _now(), digest, tables, setup)


def _design(new: Any, k: int, pilot_path: Path | None) -> Any:
    """The :class:`~posthoc.study.planner.added_system.AddedDesign` of the new system at the study's rates."""
    from posthoc.study.planner.added_system import AddedDesign, chunk_correlation, verified_share, weighted_size
    from posthoc.study.planner.rates import OutcomeRates, rates_from_pilot

    rates, correlation = OutcomeRates(), 0.0
    if pilot_path is not None:
        from posthoc.study.planner.rates import read_pilot

        pilot = read_pilot(pilot_path)
        rates, correlation = rates_from_pilot(pilot), chunk_correlation(pilot)
    placed = int(new.annotations["chunk_id"].notna().sum())
    sizes = new.annotations.loc[new.novel].groupby("chunk_id").size().tolist()
    return AddedDesign(annotations=placed, novel=int(new.novel.sum()), novel_chunks=len(new.novel_chunks()),
                       verified=verified_share(rates, k), correlation=correlation,
                       weighted_size=weighted_size(sizes))


def _sample_size(design: Any, fraction: float | None, target: float | None) -> int:
    from posthoc.study.planner.added_system import chunks_for_fraction, chunks_for_halfwidth

    if fraction is not None:
        return chunks_for_fraction(design.novel_chunks, fraction)
    assert target is not None
    return chunks_for_halfwidth(design, target)


def _print_split(new: Any, revision: Any, design: Any, n: int, target: float | None, fraction: float | None,
                 k: int) -> None:
    """What the new system's annotations are and what its sample costs."""
    from posthoc.study.plan.add_system import REUSED, SAMPLED, UNPLACED, UNSAMPLED

    status = revision.added_annotations["status"].value_counts()
    chunks = new.annotations["chunk_id"].dropna().nunique()
    click.echo(f"system {new.system!r}: {len(new.annotations)} annotations in {chunks} chunks: "
               f"{int(status.get(REUSED, 0))} reused, {design.novel} novel in {design.novel_chunks} chunks "
               f"({int(status.get(SAMPLED, 0))} sampled, {int(status.get(UNSAMPLED, 0))} unsampled), "
               f"{int(status.get(UNPLACED, 0))} in no stored chunk (unplaced)")
    click.echo(_design_line(design, n, target, fraction))
    shown = int(revision.added_annotations["chunk_sampled"].sum())
    click.echo(f"judgements: {n} items x k = {k}: {n * k} tasks, {shown * k} annotation judgements (+ control "
               f"tasks); a full posthoc study of it: {chunks * k} tasks, {design.annotations * k} annotation "
               "judgements")
