"""Every command that talks to Label Studio finds it the same way: ``--url`` or env ``POSTHOC_LS_URL`` (what
``posthoc ls env`` exports), the token from ``POSTHOC_LS_TOKEN`` or ``LABEL_STUDIO_TOKEN``
(:mod:`posthoc.cli.labelstudio_access`); as a new user runs them after ``eval "$(posthoc ls env)"``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cli.test_help_text import COMMANDS
from posthoc.cli.labelstudio_access import TOKEN_ENVS, URL_ENV
from posthoc.cli.main import cli
from posthoc.labelstudio.ports import free_port

#: the commands that talk to Label Studio (a new one belongs here: the test below then checks it)
LABEL_STUDIO_COMMANDS = ["study create", "study status", "study extend", "study reassign", "study add-system",
                         "study login", "study retire", "score", "flags review", "flags apply", "gateway config",
                         "gateway serve", "gateway run"]


def _command(path: list[str]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


def _label_studio_urls(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and set(p.opts) & {"--url", "--ls-url"}
            and "Label Studio" in (p.help or "")]


@pytest.mark.parametrize("path", [p for p in COMMANDS if " ".join(p) in LABEL_STUDIO_COMMANDS],
                         ids=lambda p: " ".join(p))
def test_every_label_studio_command_reads_its_url_from_posthoc_ls_url(path: list[str]) -> None:
    options = _label_studio_urls(_command(path))
    assert options, f"{' '.join(path)}: no Label Studio URL option"
    assert all(o.envvar == URL_ENV and URL_ENV in (o.help or "") for o in options), [o.opts for o in options]


def test_the_list_names_every_command_with_a_label_studio_url_or_a_token_option() -> None:
    """No command asks for Label Studio's URL or a token variable outside the shared reading."""
    found = set()
    for path in COMMANDS:
        command = _command(path)
        if _label_studio_urls(command) or any(p.name == "token_env" for p in command.params):
            found.add(" ".join(path))
        token_env = [p for p in command.params if p.name == "token_env"]
        assert all(p.default is None for p in token_env), path  # None: POSTHOC_LS_TOKEN, else LABEL_STUDIO_TOKEN
    assert found == set(LABEL_STUDIO_COMMANDS)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from lsfixtures import small_sample_manifest

    path = tmp_path_factory.mktemp("study") / "manifest.sqlite"
    small_sample_manifest(path, name="access", n_documents=3, n_workers=3, control_tasks=False)
    return path


def _environment(**values: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in {URL_ENV, *TOKEN_ENVS}}
    return {**clean, **values}


@pytest.mark.slow  # waits on a dead service's retries or runs thousands of cases: not in the fast loop
@pytest.mark.parametrize("token_env", TOKEN_ENVS)
def test_score_exports_from_posthoc_ls_url_with_either_token_variable(manifest: Path, tmp_path: Path,
                                                                      token_env: str) -> None:
    """Without --url, ``posthoc score`` goes to POSTHOC_LS_URL (here a closed port: exit 3 naming it), not an input
    error asking for --url; the token comes from either variable."""
    port = free_port()
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "score", "--manifest", str(manifest),
                           "--out", str(tmp_path / "report"), "--quiet"], capture_output=True, text=True,
                          timeout=300, check=False,
                          env=_environment(**{URL_ENV: f"http://127.0.0.1:{port}", token_env: "t" * 40}))
    assert done.returncode == 3, done.stderr
    assert f"127.0.0.1:{port}" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("command", ["review", "apply"])
def test_flags_review_and_apply_read_the_url_and_token_from_the_environment(command: str, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import posthoc.eaglet.review as review

    seen: dict[str, Any] = {}

    def record(flags_dir: Path, **options: Any) -> Any:
        seen.update(options)
        raise click.ClickException("stopped by the test")

    monkeypatch.setattr(review, "create_review_project" if command == "review" else "apply_review", record)
    extra = ["--out", str(tmp_path / "out")] if command == "apply" else []
    result = CliRunner().invoke(cli, ["flags", command, "--flags", str(tmp_path), *extra], prog_name="posthoc",
                                env={URL_ENV: "http://127.0.0.1:8080", "POSTHOC_LS_TOKEN": None,
                                     "LABEL_STUDIO_TOKEN": "a-token-from-ls-env"})
    assert "stopped by the test" in result.output, result.output
    assert seen["url"] == "http://127.0.0.1:8080" and seen["token"] == "a-token-from-ls-env"
