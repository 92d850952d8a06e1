"""What every bench shares: run conditions, one timing rule for both sides, and a saved copy of its output.

Every bench in this folder follows the same rules (DEVELOPERS' guide, "Benchmarks, not timed tests"):

* the baseline is what a competent engineer would write, named and explained in the bench;
* both sides are timed the same way, with :func:`time_both` (same number of runs, the same statistic, CPU and
  wall time), and the bench checks both give the same numbers before it prints a ratio;
* what the bench printed is saved, with the date, the commit, ``nproc``, the load average before and after and
  the Python / numpy / pandas versions, to ``bench/results/NAME.txt`` (overwritten by the next run; committed).

Use::

    from benchlib import BenchRun, time_both

    with BenchRun("score_bench") as run:
        run.print("...")                  # printed and saved
        ours, base = time_both(lambda: f(x), lambda: g(x), runs=5)
        if not same(ours.result, base.result):
            run.fail("the two sides disagree")   # nothing is saved, exit status 1
        run.headline(f"{base.wall_median / ours.wall_median:.1f}x faster than the loop")

``run.headline(text)`` prints and saves ``headline: text``; ``scripts/bench_table.py`` builds the README's
benchmark table from the headline lines of every ``bench/results/*.txt`` (and ``bench/run_all.sh`` runs
every ``bench/*_bench.py``), so a new bench joins both by using :class:`BenchRun` and :meth:`BenchRun.headline`.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: Prefix of the lines ``scripts/bench_table.py`` puts in the README's table.
HEADLINE = "headline: "


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(  # saved results do not make the tree dirty: a run of all benches rewrites them
            ["git", "-C", str(Path(__file__).resolve().parent), "status", "--porcelain", "--untracked-files=no",
             "--", ":(top)", ":(top,exclude)bench/results"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _versions() -> str:
    parts = [f"python {platform.python_version()}"]
    for name in ("numpy", "pandas"):
        try:
            module = __import__(name)
            parts.append(f"{name} {module.__version__}")
        except ImportError:
            parts.append(f"{name} absent")
    return ", ".join(parts)


def load_average() -> str:
    """The 1 / 5 / 15 minute load averages as ``"1.23 / 0.98 / 0.75"``."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


@dataclass
class Timing:
    """Times of repeated runs of one side: wall and CPU seconds per run, and the last result."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    result: Any = None

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def wall_min(self) -> float:
        return min(self.wall)

    @property
    def cpu_min(self) -> float:
        return min(self.cpu)

    def summary(self) -> str:
        return (
            f"wall median {self.wall_median:.4f} s (min {self.wall_min:.4f}), "
            f"CPU median {self.cpu_median:.4f} s (min {self.cpu_min:.4f}), {len(self.wall)} runs"
        )


def _timed(func: Callable[[], Any], timing: Timing) -> None:
    gc.collect()  # garbage of the previous run is not charged to this one
    wall0, cpu0 = time.perf_counter(), time.process_time()
    timing.result = func()
    timing.cpu.append(time.process_time() - cpu0)
    timing.wall.append(time.perf_counter() - wall0)


def time_runs(func: Callable[[], Any], *, runs: int) -> Timing:
    """Run ``func`` ``runs`` times; wall (``perf_counter``) and process CPU (``process_time``) per run."""
    timing = Timing()
    for _ in range(runs):
        _timed(func, timing)
    return timing


def time_both(ours: Callable[[], Any], baseline: Callable[[], Any], *, runs: int) -> tuple[Timing, Timing]:
    """Time both sides the same way, interleaved run by run so load drifts hit both alike.

    The side that goes first alternates from round to round (warm caches favour neither), and a
    ``gc.collect()`` precedes every run, outside its time.
    """
    mine, theirs = Timing(), Timing()
    for round_ in range(runs):
        pairs = ((ours, mine), (baseline, theirs))
        for func, timing in pairs if round_ % 2 == 0 else pairs[::-1]:
            _timed(func, timing)
    return mine, theirs


class BenchRun:
    """Context manager: a header with the run's conditions; :meth:`print` prints and keeps each line; on a
    clean exit the whole output, with the load average after, is written to ``bench/results/NAME.txt``.

    A bench that fails (an exception, or :meth:`fail`) saves nothing and exits non-zero."""

    def __init__(self, name: str, *, argv: list[str] | None = None, results_dir: Path | None = None) -> None:
        self.name = name
        self.lines: list[str] = []
        self.results_dir = results_dir or RESULTS_DIR
        self.argv = sys.argv[1:] if argv is None else argv
        self.started = 0.0

    def __enter__(self) -> BenchRun:
        self.started = time.perf_counter()
        self.print(f"# {self.name}  {' '.join(self.argv)}".rstrip())
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.print(f"date {now}, commit {_commit()}, nproc {os.cpu_count()}")
        self.print(f"load before {load_average()}; {_versions()}")
        return self

    def print(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)

    def headline(self, text: str) -> None:
        """A figure for the README's table (``scripts/bench_table.py``): printed and saved as ``headline: text``."""
        self.print(f"{HEADLINE}{text}")

    def fail(self, message: str) -> NoReturn:
        """Stop the bench: the two sides disagree, or a target check cannot run (exit status 1, nothing saved)."""
        raise SystemExit(f"{self.name}: FAILED: {message}")

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is not None:
            return
        self.print(f"load after {load_average()}; bench wall {time.perf_counter() - self.started:.1f} s")
        self.results_dir.mkdir(parents=True, exist_ok=True)
        target = self.results_dir / f"{self.name}.txt"
        partial = target.with_suffix(".txt.partial")
        partial.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        os.replace(partial, target)
        print(f"(saved to {target})", flush=True)
