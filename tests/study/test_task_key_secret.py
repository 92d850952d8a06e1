"""Task keys are keyed by a per-study secret kept beside the manifest (0600): nobody can recompute them from the
study's public facts (name, seed, worker ids, item counter), and planning again with the secret is byte-identical."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from posthoc.cli.main import cli
from posthoc.errors import PosthocInputError
from posthoc.study import plan_study, read_study_inputs, sample_study_config
from posthoc.study.plan.keys import mention_key, task_key
from posthoc.study.plan.secret import key_secret_for, read_key_secret, secret_path


@pytest.fixture(scope="module")
def sample_inputs():
    config = sample_study_config(name="keyed", seed=11, n_workers=6)
    return config, *read_study_inputs(config)


def test_keys_depend_on_the_secret_and_cannot_be_recomputed_without_it(sample_inputs) -> None:
    config, documents, mentions = sample_inputs
    one = plan_study(documents, mentions, config, key_secret=b"a" * 32)
    same = plan_study(documents, mentions, config, key_secret=b"a" * 32)
    other = plan_study(documents, mentions, config, key_secret=b"b" * 32)
    assert one.tasks["task_key"].tolist() == same.tasks["task_key"].tolist()
    assert not set(one.tasks["task_key"]) & set(other.tasks["task_key"])
    assert not set(one.prefill["mention_id"]) & set(other.prefill["mention_id"])
    # the order, assignment and everything else do not depend on the secret
    columns = [c for c in one.tasks.columns if c != "task_key"]
    assert one.tasks[columns].equals(other.tasks[columns])
    public = {task_key(config.name, config.seed, row.worker, row.item_id, row.replicate)
              for row in one.tasks.itertuples()}
    assert not public & set(one.tasks["task_key"])  # the unkeyed digests of the public facts match nothing
    keyed = {task_key(config.name, config.seed, row.worker, row.item_id, row.replicate, key=b"a" * 32)
             for row in one.tasks.itertuples()}
    assert keyed == set(one.tasks["task_key"])  # with the secret they are exactly the plan's keys
    first = one.prefill.iloc[0]
    assert first["mention_id"] == mention_key(config.name, config.seed, first["task_key"], 0, key=b"a" * 32)


@pytest.fixture
def study_config(tmp_path: Path) -> Path:
    from test_study_config_cli import GOOD, SAMPLE

    for name in ("gt.jsonl", "e2e.jsonl", "rel.jsonl"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    (tmp_path / "study.toml").write_text(GOOD, encoding="utf-8")
    return tmp_path / "study.toml"


def test_study_plan_writes_a_0600_secret_reuses_it_and_a_failed_plan_writes_none(study_config: Path,
                                                                                tmp_path: Path) -> None:
    examples = study_config
    runner = CliRunner()
    out = tmp_path / "m.sqlite"
    first = runner.invoke(cli, ["study", "plan", "--config", str(examples), "--out", str(out), "--no-progress"])
    assert first.exit_code == 0, first.output
    secret = secret_path(out)
    assert secret == tmp_path / "m.secret"
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    stored = secret.read_bytes()
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    again = runner.invoke(cli, ["study", "plan", "--config", str(examples), "--out", str(out), "--no-progress"])
    assert again.exit_code == 0 and "unchanged" in again.output
    assert secret.read_bytes() == stored and hashlib.sha256(out.read_bytes()).hexdigest() == digest
    with sqlite3.connect(out) as db:
        keys = [row[0] for row in db.execute("SELECT task_key FROM tasks")]
    assert stored.strip().decode() not in out.read_bytes().decode("latin-1")  # the manifest holds no secret
    assert keys and all(k.startswith("t") and len(k) == 21 for k in keys)

    bad = tmp_path / "bad.toml"
    bad.write_text(examples.read_text(encoding="utf-8").replace("k = 1", "k = 0"), encoding="utf-8")
    failed = runner.invoke(cli, ["study", "plan", "--config", str(bad), "--out", str(tmp_path / "x.sqlite"),
                                 "--no-progress"])
    assert failed.exit_code != 0
    assert not (tmp_path / "x.sqlite").exists() and not (tmp_path / "x.secret").exists()


def test_a_manifest_planned_before_keyed_keys_stays_unkeyed_and_a_broken_secret_is_named(tmp_path: Path) -> None:
    manifest = tmp_path / "old.sqlite"
    manifest.write_bytes(b"")  # an existing manifest without a secret beside it
    assert key_secret_for(manifest) == (None, False)
    secret, new = key_secret_for(manifest, overwrite=True)
    assert new and secret is not None and len(secret) == 32
    secret_path(manifest).write_text("not hex\n")
    with pytest.raises(PosthocInputError, match=r"old\.secret"):
        read_key_secret(manifest)
