"""``posthoc study extend`` / ``reassign`` at the edge: a dry run changes nothing; bad input is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from extend_factory import planned_study
from extend_factory import posthoc_cli as _posthoc

from posthoc.study.plan.manifest import Manifest


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planned_study(tmp_path_factory.mktemp("extend-cli"))


def test_dry_run_prints_each_workers_additions_and_changes_nothing(planned: Path) -> None:
    before = (planned / "m.sqlite").read_bytes()
    done = _posthoc("study", "extend", "--manifest", "m.sqlite", "--config", "study.toml", "--target-halfwidth",
                    "0.05", "--runs", "20", "--dry-run", cwd=planned)
    assert done.returncode == 0, done.stderr
    assert "target ± 0.05 in set0" in done.stdout and "extend revision 1 would add:" in done.stdout
    assert [line.split(":")[0].strip() for line in done.stdout.splitlines() if "tasks (" in line] == \
        [f"w{i:03d}" for i in range(1, 9)]
    assert (planned / "m.sqlite").read_bytes() == before
    assert Manifest.open(planned / "m.sqlite").revisions().empty


@pytest.mark.slow
def test_dry_run_on_the_defaults_finds_the_target(planned: Path) -> None:
    """The target search with exactly what a user gets without flags (``--runs`` 200, seed 0, paper 000's rates):
    the same documents each run (seeded), an addition printed, nothing written."""
    before = (planned / "m.sqlite").read_bytes()
    runs = [_posthoc("study", "extend", "--manifest", "m.sqlite", "--config", "study.toml", "--target-halfwidth",
                     "0.05", "--dry-run", cwd=planned) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert "extend revision 1 would add:" in done.stdout
    assert runs[0].stdout == runs[1].stdout
    assert (planned / "m.sqlite").read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["extend", "--config", "study.toml", "--target-halfwidth", "0"], "between 0 and 1"),
    (["extend", "--config", "study.toml", "--target-halfwidth", "-0.1"], "between 0 and 1"),
    (["extend", "--config", "study.toml"], "either --target-halfwidth"),
    (["extend", "--config", "other.toml", "--documents", "set0=12"], "is study 'extend-test'"),
    (["extend", "--config", "study.toml", "--target-halfwidth", "0.05", "--pilot", "bad.csv"], "bad.csv"),
    (["extend", "--config", "study.toml", "--documents", "set0=5"], "not between"),
    (["extend", "--config", "study.toml", "--documents", "set0=12"], "--backend-url"),
    (["reassign", "--failed", "w099"], "unknown worker"),
], ids=["half-width 0", "half-width negative", "no target", "another study's config", "pilot without columns",
        "fewer documents", "no backend url", "reassign an unknown worker"])
def test_bad_input_is_one_line_and_exit_2_with_nothing_written(planned: Path, args: list[str], message: str) -> None:
    (planned / "other.toml").write_text((planned / "study.toml").read_text().replace("extend-test", "other"))
    (planned / "bad.csv").write_text("dataset,system\nset0,GT\n")
    before = (planned / "m.sqlite").read_bytes()
    done = _posthoc("study", args[0], "--manifest", "m.sqlite", *args[1:], cwd=planned)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert (planned / "m.sqlite").read_bytes() == before
