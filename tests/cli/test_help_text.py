"""Every ``posthoc ... --help`` is plain text for people: no reST markup, the papers called papers.

The papers are "paper 000" to "paper 004" in user-facing text; "seed 000" would read like the many
``--seed`` options (random seeds). The study plan help points at the shipped example configs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from posthoc.cli.main import cli

MARKUP = re.compile(r"``|:(func|mod|class|data|attr|meth):|\bseeds?[ /]00\d")
ROOT = Path(__file__).resolve().parents[2]


def _commands(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    yield path
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield from _commands(sub, [*path, name])


COMMANDS = list(_commands(cli, []))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "posthoc")
def test_help_is_plain_text(path: list[str]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="posthoc")
    assert result.exit_code == 0, result.output
    bad = [line.strip() for line in result.output.splitlines() if MARKUP.search(line)]
    assert not bad, bad


def test_study_plan_help_points_at_the_examples_that_exist() -> None:
    output = CliRunner().invoke(cli, ["study", "plan", "--help"], prog_name="posthoc").output
    named = set(re.findall(r"examples/[\w.-]+\.toml", " ".join(output.split())))
    assert named == {"examples/study.toml", "examples/study-k3.toml"}
    assert all((ROOT / name).is_file() for name in named)
    assert len(COMMANDS) > 10  # the walk found the subcommands too


@pytest.mark.parametrize(("name", "k"), [("study.toml", 1), ("study-k3.toml", 3)],
                         ids=["study.toml k=1", "study-k3.toml k=3"])
def test_the_examples_plan_the_sample_corpus_from_any_folder(name: str, k: int, tmp_path: Path) -> None:
    """As from a fresh clone: the example's input paths are relative to the file, not to the shell's folder."""
    import json
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "plan", "--config",
                           str(ROOT / "examples" / name), "--out", str(tmp_path / "manifest.sqlite"), "--json",
                           "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ}, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["k"] == k and summary["systems"] == ["E2E", "GT", "REL"] and summary["documents"] == 20
    assert (tmp_path / "manifest.sqlite").is_file()


def test_study_create_has_no_webhook_by_default_and_its_help_gives_the_measured_cost() -> None:
    """``--webhook`` is an option whose help says what it costs: the figures of the saved study_scale bench run."""
    from posthoc.cli.setup import create_command

    webhook = next(p for p in create_command.params if p.name == "webhook")
    assert webhook.default is False
    output = " ".join(CliRunner().invoke(cli, ["study", "create", "--help"], prog_name="posthoc").output.split())
    saved = (ROOT / "bench" / "results" / "study_scale_bench.txt").read_text(encoding="utf-8")
    measured = re.findall(r"webhook serialisation and POST: \+([\d.]+) ms p50, \+([\d.]+) ms p95", saved)
    assert len(measured) == 2, measured
    (a50, a95), (b50, b95) = measured
    assert f"+{a50} ms p50 / +{a95} ms p95" in output and f"+{b50} / +{b95} ms" in output, output
    assert "bench/results/study_scale_bench.txt" in output and "[default: no-webhook]" in output


def _command(path: list[str]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


def _help(path: list[str]) -> str:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="posthoc", terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


LEAVES = [path for path in COMMANDS if not isinstance(_command(path), click.Group)]
#: exit codes beyond 0, 2 (bad input) and 3 (a service) that a command has
SPECIAL_EXIT_CODES = {"score": {10, 4}, "ls status": {1}, "ls env": {1}}


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_help_lists_its_exit_codes(path: list[str]) -> None:
    """README: 0 done, 2 bad input, 3 a service; and a command's own codes (those its function raises too)."""
    import inspect

    command = _command(path)
    assert command.callback is not None
    source = inspect.getsource(command.callback)
    raised = {int(code) for code in re.findall(r"SystemExit\((\d+)\)", source)} - {0}
    expected = {0, 2, 3} | SPECIAL_EXIT_CODES.get(" ".join(path), set()) | raised
    text = _help(path)
    assert "Exit codes:" in text, text
    listed = {int(code) for code in re.findall(r"^\s+(\d+)\s{2,}\S", text.split("Exit codes:")[1], re.MULTILINE)}
    assert expected <= listed, (expected, listed)


def test_score_help_cron_example_keeps_the_token_off_the_crontab_line() -> None:
    """README: the token lives in a 0600 env file read by scripts/score-periodic.sh; the manifest is manifest.sqlite."""
    text = _help(["score"])
    cron_lines = [line for line in text.splitlines() if re.match(r"\s*\*/\d+ \* \* \* \*", line)]
    assert cron_lines, text
    assert not any("TOKEN=" in line for line in cron_lines), cron_lines
    assert "study.manifest" not in text and "manifest.sqlite" in text and "chmod 600" in text
    named = set(re.findall(r"scripts/[\w.-]+", text))
    assert "scripts/score-periodic.sh" in named and all((ROOT / name).is_file() for name in named), named


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_option_says_what_it_is(path: list[str]) -> None:
    undescribed = [p.opts for p in _command(path).params if isinstance(p, click.Option) and not p.hidden
                   and not (p.help or "").strip()]
    assert not undescribed, undescribed


def test_ls_help_names_both_databases() -> None:
    text = " ".join(_help(["ls"]).split())
    assert "embedded SQLite" not in text and "SQLite" in text and "PostgreSQL" in text
    assert "--database" in " ".join(_help(["ls", "start"]).split())  # where the choice is made
