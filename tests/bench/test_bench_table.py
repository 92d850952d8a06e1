"""benchlib's saved runs and scripts/bench_table.py: the README's table comes from the saved files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


benchlib = _module(ROOT / "bench" / "benchlib.py", "benchlib")
bench_table = _module(ROOT / "scripts" / "bench_table.py", "bench_table")

README = "# Project\n\n## Benchmarks\n\n<!-- bench-table:start -->\nold table\n<!-- bench-table:end -->\n\nAfter.\n"


def _save(results: Path, name: str, *lines: str, headlines: tuple[str, ...] = ()) -> None:
    with benchlib.BenchRun(name, argv=["--runs", "2"], results_dir=results) as run:
        for line in lines:
            run.print(line)
        for text in headlines:
            run.headline(text)


def test_a_saved_run_has_the_conditions_and_its_headlines(tmp_path):
    _save(tmp_path, "alpha_bench", "figure 1", headlines=("3.1x faster | same numbers",))
    text = (tmp_path / "alpha_bench.txt").read_text(encoding="utf-8")
    assert text.startswith("# alpha_bench  --runs 2\n")
    assert "nproc" in text and "load before" in text and "load after" in text and "numpy" in text
    run = bench_table.parse_run(tmp_path / "alpha_bench.txt")
    assert run.name == "alpha_bench"
    assert run.figures == ("3.1x faster | same numbers",)
    assert run.load == text.split("load before ")[1].split("/")[0].strip()


def test_a_failed_bench_saves_nothing_and_exits_non_zero(tmp_path):
    with pytest.raises(SystemExit) as stopped, benchlib.BenchRun("beta_bench", argv=[], results_dir=tmp_path) as run:
        run.print("half way")
        run.fail("the two sides disagree")
    assert "FAILED: the two sides disagree" in str(stopped.value.code)
    assert not list(tmp_path.iterdir())


def test_the_table_has_one_row_per_saved_run_and_replaces_only_the_block(tmp_path):
    results = tmp_path / "results"
    _save(results, "alpha_bench", headlines=("first", "second"))
    _save(results, "gamma_bench", "no headline; target < 1 s: met", "other line")
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    assert bench_table.main(["--results", str(results), "--readme", str(readme), "--check"]) == 1
    assert bench_table.main(["--results", str(results), "--readme", str(readme)]) == 0
    updated = readme.read_text(encoding="utf-8")
    assert "old table" not in updated and updated.endswith("<!-- bench-table:end -->\n\nAfter.\n")
    rows = [line for line in updated.splitlines() if line.startswith("| [`")]
    assert len(rows) == 2
    assert "first<br>second" in rows[0] and "at load" in rows[0]
    assert "no headline; target < 1 s: met" in rows[1] and "other line" not in rows[1]
    assert bench_table.main(["--results", str(results), "--readme", str(readme), "--check"]) == 0


def test_a_file_that_is_not_a_saved_run_is_named(tmp_path, capsys):
    (tmp_path / "stray.txt").write_text("hello\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    assert bench_table.main(["--results", str(tmp_path), "--readme", str(readme)]) == 2
    assert "stray.txt" in capsys.readouterr().err
    assert readme.read_text(encoding="utf-8") == README


@pytest.mark.slow
def test_time_both_runs_both_sides_alike():
    calls: list[str] = []
    ours, base = benchlib.time_both(lambda: calls.append("a") or 1, lambda: calls.append("b") or 2, runs=4)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]  # the first side alternates
    assert (len(ours.wall), len(base.cpu), ours.result, base.result) == (4, 4, 1, 2)


def test_the_readme_rows_match_the_saved_runs():
    """Every row of the README's table shows what its saved run says (the figures are never typed by hand)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index(bench_table.START) : readme.index(bench_table.END)]
    rows = [line for line in block.splitlines() if line.startswith("| [`")]
    for row in rows:
        name = row.split("`")[1]
        saved = ROOT / "bench" / "results" / f"{name}.txt"
        assert saved.is_file(), f"README row for {name} but no {saved}"
        assert row == bench_table.table_row(bench_table.parse_run(saved)), f"{name}: run python scripts/bench_table.py"
