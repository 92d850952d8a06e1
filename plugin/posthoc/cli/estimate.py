"""``posthoc study estimate``: hours, cost and expected interval widths of a planned study, before anyone annotates."""

from __future__ import annotations

import json
from pathlib import Path

import click

from posthoc.study.planner.rates import DEFAULT_HOURLY_RATE, DEFAULT_SECONDS_PER_REGION


@click.command("estimate", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The study.toml (as for `posthoc study plan`); the study is planned from it in memory.")
@click.option("--pilot", "pilot_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="judgements.csv (or .parquet) of a first batch, as `posthoc score` writes it: its outcomes "
                   "give the rates per cell, its lead_time the seconds a region, and only the rest is predicted.")
@click.option("--seconds-per-region", type=float, default=None,
              help=f"Seconds an annotator takes a region (default: from --pilot, else {DEFAULT_SECONDS_PER_REGION:g}, "
                   "paper 000 section 2.1).")
@click.option("--hourly-rate", type=float, default=DEFAULT_HOURLY_RATE, show_default=True,
              help="Pay per annotator-hour (paper 000 paid about 9 USD an hour).")
@click.option("--runs", type=click.IntRange(min=2), default=200, show_default=True,
              help="Simulated studies behind each expected half-width.")
@click.option("--resamples", "n_resamples", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Bootstrap resamples the study will be scored with (`posthoc score --resamples`): they set how "
                   "much the achieved half-width itself varies (3.0% at 1000), hence which cells are assured "
                   "within 15%.")
@click.option("--target-halfwidth", type=float, default=None,
              help="Also find the smallest seeded sample of documents (and, for k > 1, number of judges) that "
                   "brings every cell's 95% half-width under this value, e.g. 0.02.")
@click.option("--max-judges", type=click.IntRange(min=2), default=5, show_default=True,
              help="With --target-halfwidth and k > 1: try 2 to this many judges an item.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the simulated studies and of the document sample.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for estimate.json and estimate.csv. Default: beside the config (where `posthoc study "
                   "plan` puts the manifest, so the study report can set the plan against the outcome).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bars on stderr.")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print estimate.json instead of the table.")
def estimate_command(config_path: Path, pilot_path: Path | None, seconds_per_region: float | None, hourly_rate: float,
                     runs: int, n_resamples: int, target_halfwidth: float | None, max_judges: int, seed: int,
                     out_dir: Path | None, progress: bool, as_json: bool) -> None:
    """Estimate what a planned study will cost and how precise its answers will be.

    Plans the study of the config (nothing is written but the estimate), counts tasks, regions to
    judge, workers and control tasks, turns them into annotator-hours and cost, and simulates the
    study --runs times through the scoring code to give the expected 95% half-width of posthoc
    precision and recall for every dataset x system cell (and of Fleiss' kappa and Krippendorff's
    alpha per dataset when k > 1). Without --pilot the outcome shares are paper 000's (verify / edit /
    remove 0.893 / 0.088 / 0.019); docs/study.md says what the estimate assumes and how far to trust it.
    """
    from posthoc.study.plan.config import load_study_config, read_study_inputs
    from posthoc.study.plan.design import plan_study
    from posthoc.study.planner.estimate import describe, estimate_study
    from posthoc.study.planner.rates import read_pilot

    config = load_study_config(config_path)
    pilot = read_pilot(pilot_path) if pilot_path is not None else None
    target = out_dir if out_dir is not None else config_path.parent
    if target.exists() and not target.is_dir():
        raise click.BadParameter(f"{target} is a file; give a folder", param_hint="--out")
    documents, mentions = read_study_inputs(config, progress=progress)
    plan = plan_study(documents, mentions, config)
    estimate = estimate_study(plan, pilot=pilot, seconds_per_region=seconds_per_region, hourly_rate=hourly_rate,
                              runs=runs, seed=seed, target_halfwidth=target_halfwidth, max_judges=max_judges,
                              n_resamples=n_resamples, progress=progress)
    json_path, csv_path = estimate.write(target)
    if as_json:
        click.echo(json.dumps(estimate.record(), sort_keys=True, ensure_ascii=False))
        return
    for line in describe(estimate):
        click.echo(line)
    click.echo(f"written: {json_path}, {csv_path}")
