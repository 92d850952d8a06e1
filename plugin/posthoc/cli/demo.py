"""``posthoc demo``: Label Studio, the ML backend and the sample study in one command."""

from __future__ import annotations

from pathlib import Path

import click

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.ports import LOOPBACK, port_is_free


@click.command("demo")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("demo-out"),
              show_default=True,
              help="Folder for everything: Label Studio's data dir, the manifest, accounts (0600), logs, the report.")
@click.option("--simulate", is_flag=True, default=False,
              help="Let simulated annotators (known verify/edit/remove rates per system, one careless worker, a "
                   "lag-1 bias) annotate through the Label Studio API, every worker but the first (left for you "
                   "to label), then run the export-and-score job.")
@click.option("--serve/--no-serve", default=True, show_default=True,
              help="Keep Label Studio and the backend running until Ctrl-C (--no-serve: stop after setup).")
@click.option("--ls-port", type=click.IntRange(1, 65535), default=None,
              help="Label Studio's loopback port (default: a free one).")
@click.option("--backend-port", type=click.IntRange(1, 65535), default=None,
              help="The ML backend's loopback port (default: a free one).")
@click.option("--gateway-port", type=click.IntRange(1, 65535), default=None,
              help="The study gateway's loopback port, the port of every worker link the demo prints (default: the "
                   "last run's while it is free, else a free one; kept in OUT/demo-ports.json).")
@click.option("--seed", type=click.IntRange(min=0), default=20260101, show_default=True,
              help="Seed of the study plan (assignment, per-worker order, control tasks).")
@click.option("--workers", "n_workers", type=click.IntRange(min=1), default=None,
              help="Number of workers (default: one batch of 20 tasks per worker).")
@click.option("--simulation-seed", type=click.IntRange(min=0), default=7, show_default=True,
              help="Seed of the simulated annotators.")
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the report's confidence intervals.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress bars.")
def demo_command(out_dir: Path, simulate: bool, serve: bool, ls_port: int | None, backend_port: int | None,
                 gateway_port: int | None, seed: int, n_workers: int | None, simulation_seed: int, resamples: int,
                 progress: bool) -> None:
    """Start Label Studio and the ML backend locally, build the sample study, print URLs and logins.

    Everything listens on 127.0.0.1 only. The admin login comes from POSTHOC_LS_USERNAME /
    POSTHOC_LS_PASSWORD / POSTHOC_LS_TOKEN or is generated; annotators' passwords are generated
    once. Both are kept in OUT (permissions 0600) and printed on this console on every run. The
    last lines name the link to open and its login. Rerunning on the same OUT reuses everything and
    duplicates nothing.
    """
    from posthoc.jobs.demo import run_demo
    from posthoc.labelstudio.environment import label_studio_version
    from posthoc.processes import restore_interrupt_signals

    label_studio_version("posthoc demo")  # the lean install (no server package): one line, before anything is made

    restore_interrupt_signals()  # Ctrl-C / SIGTERM stop the demo also when SIGINT was inherited as ignored
    if gateway_port is not None and not port_is_free(gateway_port):  # before anything starts or is written
        raise PosthocServiceError(f"port {gateway_port} on {LOOPBACK} is in use; choose another with --gateway-port")

    result = run_demo(out_dir, simulate=simulate, serve=serve, ls_port=ls_port, backend_port=backend_port,
                      gateway_port=gateway_port,
                      seed=seed, n_workers=n_workers, simulation_seed=simulation_seed, n_resamples=resamples,
                      progress=progress, echo=click.echo)
    click.echo(f"Demo folder: {result.out_dir}")
