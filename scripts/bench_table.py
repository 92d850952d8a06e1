"""Build the README's benchmark table from the saved bench runs (``bench/results/*.txt``).

Every bench writes what it printed through ``bench/benchlib.py`` (``BenchRun``): a header with the date,
the commit, ``nproc`` and the load average before the run, its figures, and ``headline: ...`` lines for
this table. One row per results file, whatever bench wrote it (a new bench joins by saving a file):

    | bench | one run on DATE at load L (nproc), commit | figures (headline lines) |

A file without headline lines shows its lines that name a target. The table replaces whatever stands
between ``<!-- bench-table:start -->`` and ``<!-- bench-table:end -->`` in the README.

    python scripts/bench_table.py            # rewrite README.md's table
    python scripts/bench_table.py --check    # exit 1 if README.md's table differs from the saved runs
    python scripts/bench_table.py --print    # print the table only
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- bench-table:start -->"
END = "<!-- bench-table:end -->"
HEADLINE = "headline: "


@dataclass(frozen=True)
class SavedRun:
    """What the table shows of one ``bench/results/NAME.txt``."""

    name: str
    date: str
    commit: str
    load: str
    nproc: str
    figures: tuple[str, ...]


def parse_run(path: Path) -> SavedRun:
    """One results file (the format of ``benchlib.BenchRun``); raises ``ValueError`` naming the file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next((line for line in lines if line.startswith("date ")), None)
    load_line = next((line for line in lines if line.startswith("load before ")), None)
    if header is None or load_line is None:
        raise ValueError(f"{path}: not a saved bench run (no 'date ...' / 'load before ...' lines of benchlib)")
    found = re.match(r"date (?P<date>.+?), commit (?P<commit>\S+), nproc (?P<nproc>\S+)", header)
    if found is None:
        raise ValueError(f"{path}: unreadable header line {header!r}")
    load = load_line[len("load before ") :].split(";")[0].split("/")[0].strip()
    figures = tuple(line[len(HEADLINE) :].strip() for line in lines if line.startswith(HEADLINE))
    if not figures:
        figures = tuple(line.strip() for line in lines if "target" in line)
    name = lines[0][2:].split()[0] if lines and lines[0].startswith("# ") and len(lines[0]) > 2 else path.stem
    return SavedRun(name, found["date"], found["commit"], load, found["nproc"], figures)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def build_table(results: Path) -> str:
    """The markdown table of every saved run in ``results`` (sorted by file name)."""
    runs = [parse_run(path) for path in sorted(results.glob("*.txt"))]
    if not runs:
        return "No saved bench runs yet: run `bash bench/run_all.sh`."
    out = ["| bench | when | figures (from `bench/results/NAME.txt`) |", "|---|---|---|"]
    out.extend(table_row(run) for run in runs)
    return "\n".join(out)


def table_row(run: SavedRun) -> str:
    """The README row of one saved run."""
    when = f"one run on {run.date} at load {run.load} ({run.nproc} cores), commit {run.commit}"
    figures = "<br>".join(_cell(figure) for figure in run.figures) or "(no figure lines)"
    return f"| [`{run.name}`](bench/results/{run.name}.txt) | {when} | {figures} |"


def replace_table(readme: str, table: str) -> str:
    """``readme`` with the text between the markers replaced by ``table``; ``ValueError`` without markers."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README has no {START} ... {END} block")
    return readme[: start + len(START)] + "\n" + table + "\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results", help="saved runs")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md", help="the README to update")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the README's table is not up to date")
    mode.add_argument("--print", action="store_true", help="print the table, change nothing")
    args = parser.parse_args(argv)
    try:
        table = build_table(args.results)
        if args.print:
            print(table)
            return 0
        readme = args.readme.read_text(encoding="utf-8")
        updated = replace_table(readme, table)
    except (OSError, ValueError) as exc:
        print(f"bench_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if updated != readme:
            print(f"bench_table: {args.readme} differs from the saved runs; run python scripts/bench_table.py",
                  file=sys.stderr)
            return 1
        return 0
    if updated != readme:
        partial = args.readme.with_name(args.readme.name + ".partial")
        partial.write_text(updated, encoding="utf-8")
        os.replace(partial, args.readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
