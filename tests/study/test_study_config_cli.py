"""study.toml validation and the ``posthoc study plan`` command (real files, real subprocess)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from posthoc.errors import PosthocInputError
from posthoc.study import load_study_config

SAMPLE = Path(__file__).resolve().parents[2] / "plugin" / "posthoc" / "sample"

GOOD = """
[study]
name = "sample"
seed = 20260101
k = 1
tasks_per_batch = 20
max_chars = 300
n_workers = 4
control_tasks = true

[[inputs]]
path = "gt.jsonl"
format = "jsonl"
dataset = "sample-news"
system = "GT"

[[inputs]]
path = "e2e.jsonl"
dataset = "sample-news"
system = "E2E"

[[inputs]]
path = "rel.jsonl"
dataset = "sample-news"
system = "REL"
"""


@pytest.fixture()
def study_dir(tmp_path: Path) -> Path:
    for name in ("gt.jsonl", "e2e.jsonl", "rel.jsonl"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    (tmp_path / "study.toml").write_text(GOOD, encoding="utf-8")
    return tmp_path


def test_load_good_config(study_dir: Path) -> None:
    config = load_study_config(study_dir / "study.toml")
    assert (config.name, config.seed, config.k, config.n_workers, config.real_tasks_per_batch) == (
        "sample", 20260101, 1, 4, 19)
    assert [i.system for i in config.inputs] == ["GT", "E2E", "REL"]
    assert config.inputs[0].path == (study_dir / "gt.jsonl").resolve()
    assert config.inputs[0].sha256 == hashlib.sha256((study_dir / "gt.jsonl").read_bytes()).hexdigest()
    record = json.loads(config.to_json())
    assert record["inputs"][0]["path"] == "gt.jsonl"  # as written: the manifest does not depend on the folder


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("seed = 20260101", 'seed = "x"', r"\[study\] seed must be an integer"),
        ("k = 1", "k = 0", r"\[study\] k must be an integer >= 1"),
        ("max_chars = 300", "max_chars = -5", r"\[study\] max_chars"),
        ("tasks_per_batch = 20", "tasks_per_batch = 1", r"\[study\] tasks_per_batch"),
        ("n_workers = 4", "n_workers = 0", r"\[study\] n_workers"),
        ("control_tasks = true", 'control_tasks = "yes"', r"\[study\] control_tasks"),
        ('name = "sample"', 'name = ""', r"\[study\] name"),
        ('name = "sample"', 'nmae = "sample"', r"unknown key\(s\) \['nmae'\]"),
        ('path = "gt.jsonl"', 'path = "missing.jsonl"', r"\[\[inputs\]\] #1 path 'missing.jsonl' does not exist"),
        ('system = "GT"', "system = 3", r"\[\[inputs\]\] #1 system"),
        ('format = "jsonl"', "format = 1", r"\[\[inputs\]\] #1 format"),
        ("[study]", "[stduy]", r"unknown table"),
    ],
    ids=["seed a string", "k 0", "max_chars negative", "tasks_per_batch 1", "n_workers 0", "control_tasks a string",
         "name empty", "unknown key", "input missing", "system a number", "format a number", "unknown table"],
)
def test_bad_config_names_file_and_key(study_dir: Path, old: str, new: str, message: str) -> None:
    path = study_dir / "study.toml"
    assert old in GOOD
    path.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(PosthocInputError, match=message) as error:
        load_study_config(path)
    assert str(path) in str(error.value)


def test_not_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="does not exist"):
        load_study_config(tmp_path / "nope.toml")
    (tmp_path / "bad.toml").write_text("[study\nname=", encoding="utf-8")
    with pytest.raises(PosthocInputError, match="not valid TOML"):
        load_study_config(tmp_path / "bad.toml")


def _posthoc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)


def test_cli_plans_writes_manifest_and_is_idempotent(study_dir: Path) -> None:
    from posthoc.cli.main import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["study", "plan", "--config", str(study_dir / "study.toml"), "--no-progress"])
    assert result.exit_code == 0, result.output
    manifest = study_dir / "manifest.sqlite"
    assert manifest.is_file()
    for label in ("documents", "chunks", "items", "workers", "tasks per worker", "control tasks"):
        assert label in result.output
    assert "documents              20" in result.output and "workers                4" in result.output
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()
    secret = study_dir / "manifest.secret"
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    (study_dir / "copy.secret").write_bytes(secret.read_bytes())  # the same study secret: the same keys
    again = runner.invoke(cli, ["study", "plan", "--config", str(study_dir / "study.toml"), "--no-progress",
                                "--json", "--out", str(study_dir / "copy.sqlite")])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.output)
    assert summary["workers"] == 4 and summary["control_tasks"] >= 4 and summary["written"] is True
    assert hashlib.sha256((study_dir / "copy.sqlite").read_bytes()).hexdigest() == digest
    same = runner.invoke(cli, ["study", "plan", "--config", str(study_dir / "study.toml"), "--no-progress"])
    assert "unchanged" in same.output


def test_cli_bad_config_is_one_line_exit_2_and_writes_nothing(study_dir: Path) -> None:
    (study_dir / "study.toml").write_text(GOOD.replace("k = 1", "k = 0"), encoding="utf-8")
    result = _posthoc("study", "plan", "--config", "study.toml", "--out", "m.sqlite", cwd=study_dir)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "[study] k" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (study_dir / "m.sqlite").exists()


def test_cli_refuses_another_plan_without_overwrite(study_dir: Path) -> None:
    first = _posthoc("study", "plan", "--config", "study.toml", "--no-progress", cwd=study_dir)
    assert first.returncode == 0, first.stderr
    before = hashlib.sha256((study_dir / "manifest.sqlite").read_bytes()).hexdigest()
    refused = _posthoc("study", "plan", "--config", "study.toml", "--seed", "7", "--no-progress", cwd=study_dir)
    assert refused.returncode == 2 and "--overwrite" in refused.stderr
    assert hashlib.sha256((study_dir / "manifest.sqlite").read_bytes()).hexdigest() == before
    replaced = _posthoc("study", "plan", "--config", "study.toml", "--seed", "7", "--overwrite", "--no-progress",
                        cwd=study_dir)
    assert replaced.returncode == 0 and "seed 7" in replaced.stdout


def test_cli_help_explains_every_option(study_dir: Path) -> None:
    result = _posthoc("study", "plan", "--help", cwd=study_dir)
    assert result.returncode == 0
    for option in ("--config", "--out", "--overwrite", "--seed", "--progress", "--json", "--help"):
        assert option in result.stdout


def test_sample_study_config_plans() -> None:
    from posthoc.study import plan_study, read_study_inputs, sample_study_config

    config = sample_study_config(n_workers=5)
    documents, mentions = read_study_inputs(config)
    plan = plan_study(documents, mentions, config)
    assert plan.summary["workers"] == 5 and plan.summary["documents"] == len(documents)
    assert set(plan.summary["systems"]) == {"GT", "E2E", "REL"}


def test_two_processes_write_byte_identical_manifests(study_dir: Path) -> None:
    """Separate processes (each with its own PYTHONHASHSEED) give the same bytes: no salted hash() anywhere."""
    digests = []
    (study_dir / "a.secret").write_text("ab" * 32 + "\n")  # one study secret for both (kept beside each manifest)
    (study_dir / "b.secret").write_text("ab" * 32 + "\n")
    for name, hash_seed in (("a.sqlite", "1"), ("b.sqlite", "2")):
        result = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "plan", "--config", "study.toml",
                                 "--out", name, "--no-progress"], cwd=study_dir, capture_output=True, text=True,
                                timeout=300, check=False, env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert result.returncode == 0, result.stderr
        digests.append(hashlib.sha256((study_dir / name).read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_a_system_named_in_the_config_and_otherwise_in_the_file_is_refused(study_dir: Path) -> None:
    """system = "REL" over lines saying "system": "rel" was planned as rel; now one line, exit 2."""
    rel = study_dir / "rel.jsonl"
    rel.write_text(rel.read_text(encoding="utf-8").replace('"system": "REL"', '"system": "rel"'), encoding="utf-8")
    result = _posthoc("study", "plan", "--config", "study.toml", "--out", "m.sqlite", "--no-progress", cwd=study_dir)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = result.stderr.strip()
    assert line.count("\n") == 0 and "[[inputs]] #3 (rel.jsonl) says system = 'REL'" in line
    assert "its lines say \"system\": 'rel'" in line and "system = 'rel' in the config" in line
    assert not (study_dir / "m.sqlite").exists()
    unnamed = GOOD.replace('path = "rel.jsonl"\ndataset = "sample-news"\nsystem = "REL"',
                           'path = "rel.jsonl"\ndataset = "sample-news"')
    (study_dir / "study.toml").write_text(unnamed, encoding="utf-8")
    planned = _posthoc("study", "plan", "--config", "study.toml", "--out", "m.sqlite", "--no-progress", "--json",
                       cwd=study_dir)
    assert planned.returncode == 0, planned.stderr  # the config names nothing: the file's names are taken
