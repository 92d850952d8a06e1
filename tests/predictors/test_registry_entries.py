"""A predictor is one registry entry and both commands take one option set made from it (issue 43)."""

from __future__ import annotations

import dataclasses

import click
import pytest

from posthoc.cli.backend import serve_command
from posthoc.cli.predict import predict_command
from posthoc.cli.predictor_options import take_spec
from posthoc.predictors.registry import PREDICTORS, SETTING, SETTINGS, PredictorSpec

COMMANDS = {"predict": predict_command, "serve": serve_command}
REQUIRED = {"predict": ["corpus.jsonl", "--out", "o.jsonl"], "serve": []}


def _spellings(command: click.Command) -> set[str]:
    return {name for param in command.params for name in getattr(param, "opts", [])}


def _spec(command: str, args: list[str]) -> PredictorSpec:
    with COMMANDS[command].make_context(command, [*args, *REQUIRED[command]]) as context:
        return take_spec(dict(context.params), command)


def test_every_spec_field_is_one_setting_and_every_needed_setting_is_read() -> None:
    fields = {f.name for f in dataclasses.fields(PredictorSpec)} - {"name", "_documents"}
    assert fields == {setting.field for setting in SETTINGS}
    for entry in PREDICTORS.values():
        assert set(entry.needs) <= set(entry.settings), entry.name
        assert all(SETTING[name].needed for name in entry.needs), entry.name


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=str)
def test_each_command_takes_every_setting_meant_for_it_in_every_spelling(command: str) -> None:
    taken = _spellings(COMMANDS[command])
    for setting in SETTINGS:
        assert (set(setting.spellings_in(command)) <= taken) == (command in setting.commands), setting.field


@pytest.mark.parametrize(("command", "url_flag", "timeout_flag", "timeout"), [
    ("predict", "--url", "--timeout", 30.0), ("predict", "--predictor-url", "--predictor-timeout", 30.0),
    ("serve", "--url", "--predictor-timeout", 20.0), ("serve", "--predictor-url", "--predictor-timeout", 20.0),
], ids=["predict-short", "predict-documented", "serve-url", "serve-predictor-url"])
def test_both_spellings_give_the_same_spec_and_each_command_keeps_its_defaults(
        command: str, url_flag: str, timeout_flag: str, timeout: float) -> None:
    default = _spec(command, ["--predictor", "rel", url_flag, "http://x/"])
    assert (default.name, default.url, default.timeout) == ("rel", "http://x/", timeout)
    given = _spec(command, ["--predictor", "nif", url_flag, "http://y/", timeout_flag, "7.5", "--nif-offsets", "utf16"])
    assert (given.url, given.timeout, given.nif_offsets) == ("http://y/", 7.5, "utf16")


def test_serve_without_predictor_is_the_manifest_and_keeps_its_alias_files() -> None:
    spec = _spec("serve", ["--alias-file", "a.csv", "--alias-file", "b.csv", "--case-insensitive"])
    assert (spec.name, spec.alias_files, spec.case_insensitive) == ("manifest", ("a.csv", "b.csv"), True)


def test_the_predictor_help_names_every_built_in_in_both_commands() -> None:
    for command in COMMANDS.values():
        help_text = next(p for p in command.params if p.name == "predictor_name").help or ""
        assert all(f"{name} (" in help_text for name in PREDICTORS), help_text
