"""The score job and `posthoc score`: outputs, byte-identical reruns, nothing-new, unreachable LS, lock, bad input."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import filelock
import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.export.synthetic import write_synthetic_export
from posthoc.jobs.score import LOCK_NAME, JudgementSource, ScoreJobLocked, ScoreOptions, run_score_job
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.scores import TABLE_NAMES
from posthoc.study.plan.index import ManifestIndex

RESAMPLES = 30


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled sample corpus planned as a study (k = 3) and two synthetic exports of it (seeds 1 and 2)."""
    from posthoc.study.plan.config import read_study_inputs, sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    folder = tmp_path_factory.mktemp("study")
    config = sample_study_config(name="sample", seed=5, k=3)
    documents, mentions = read_study_inputs(config)
    manifest = Manifest.create(folder / "sample.manifest", plan_study(documents, mentions, config))
    index = ManifestIndex.from_manifest(manifest)
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    tags = verification_tags(label_config("entity_verification"))
    exports = {seed: write_synthetic_export(folder / f"export-{seed}.json", index, tags, texts=texts, seed=seed)
               for seed in (1, 2)}
    return {"manifest": folder / "sample.manifest", "exports": exports, "folder": folder}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != LOCK_NAME}


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", "score", *args], capture_output=True,
                          text=True, env=environment, timeout=600)


def _run(study: dict[str, Any], out: Path, seed: int = 1, **options: Any) -> Any:
    return run_score_job(manifest_path=study["manifest"], out_dir=out,
                         source=JudgementSource(export_files=[study["exports"][seed].path]),
                         options=ScoreOptions(n_resamples=RESAMPLES, **options))


@pytest.fixture(scope="module")
def scored(study: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scored")
    result = _run(study, out)
    assert result.status == "updated"
    return out


def test_the_job_writes_report_tables_judgements_summary_and_gold(study: dict[str, Any], scored: Path) -> None:
    for name in TABLE_NAMES:
        assert (scored / "tables" / f"{name}.csv").is_file(), name
    umask = os.umask(0)
    os.umask(umask)
    for name in ("report.html", "judgements.csv", "summary.json", "corrected_gold.jsonl", "corrected_gold.ttl"):
        assert (scored / name).stat().st_size > 0, name
        assert (scored / name).stat().st_mode & 0o777 == 0o666 & ~umask, name
    judgements = pd.read_csv(scored / "judgements.csv")
    written = study["exports"][1]
    assert len(judgements) == written.n_judgements
    summary = json.loads((scored / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_judgements_exported"] == written.n_judgements
    assert summary["n_resamples"] == RESAMPLES and summary["resample_unit"] == "doc_id"
    comparisons = pd.read_csv(scored / "tables" / "comparisons.csv")
    systems = pd.read_csv(scored / "tables" / "rates.csv").groupby("dataset")["system"].nunique()
    assert len(comparisons) == sum(n * (n - 1) // 2 for n in systems) * 4  # every pair, four metrics
    assert summary["interval"] == "bca" and summary["comparisons"]["method"] == "jackknife_t"  # pairs: issue 46
    assert set(summary["comparisons"]["datasets"]) == set(systems.index)
    assert "fingerprint" in summary and not re.search(r"\d{4}-\d\d-\d\dT", json.dumps(summary))
    html = (scored / "report.html").read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    # Figures 3-6, the paired comparisons (RQ1) and the sequence-effects figure (this study has several workers)
    assert len(images) == 6 and all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert 'id="comparisons"' in html and "Which system is better (RQ1)" in html
    assert 'id="sequence"' in html
    rates = pd.read_csv(scored / "tables" / "rates.csv")
    assert set(rates["system"]) == {"GT", "E2E", "REL"}
    assert f"{RESAMPLES} resamples of doc_id" in html


def test_the_job_writes_the_explorer_and_every_report_row_links_to_one_of_its_cells(scored: Path) -> None:
    from urllib.parse import unquote

    for name in ("explorer.html", "explorer.css", "explorer.js", "explorer-data.js"):
        assert (scored / name).stat().st_size > 0, name
    script = (scored / "explorer-data.js").read_text(encoding="utf-8")
    cells = set(json.loads(script[script.index("=") + 1:].rstrip().rstrip(";"))["cells"]["ids"])
    links = re.findall(r'href="explorer\.html#cell=([^"]+)"', (scored / "report.html").read_text(encoding="utf-8"))
    rates = pd.read_csv(scored / "tables" / "rates.csv")
    shown = rates.index[~rates["metric"].str.endswith("_share")]  # the report's rates table: the rates, not shares
    assert len(shown) and {f"rates.{i}" for i in shown} <= {unquote(link) for link in links}
    assert {unquote(link) for link in links} <= cells
    widths = pd.read_csv(scored / "tables" / "cell_widths.csv")  # "Stop now or go on" links too
    assert len(widths) and {f"cell_widths.{i}" for i in widths.index} <= {unquote(link) for link in links}


@pytest.mark.slow
def test_the_same_data_gives_byte_identical_outputs(study: dict[str, Any], scored: Path, tmp_path: Path) -> None:
    _run(study, tmp_path / "again")
    assert _files(tmp_path / "again") == _files(scored)


@pytest.mark.slow
def test_parquet_outputs_are_byte_identical_too(study: dict[str, Any], tmp_path: Path) -> None:
    _run(study, tmp_path / "a", fmt="parquet")
    _run(study, tmp_path / "b", fmt="parquet")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert len(pd.read_parquet(tmp_path / "a" / "judgements.parquet")) == study["exports"][1].n_judgements


def test_periodic_run_on_the_same_data_is_nothing_new_and_rewrites_nothing(study: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(study, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p.name != LOCK_NAME}
    result = _run(study, out, periodic=True)
    assert result.status == "nothing-new" and result.exit_code == 10
    assert {p: p.stat().st_mtime_ns for p in before} == before
    changed = _run(study, out, seed=2, periodic=True)
    assert changed.status == "updated" and changed.fingerprint != result.fingerprint
    assert len(pd.read_csv(out / "judgements.csv")) == study["exports"][2].n_judgements


@pytest.mark.slow
def test_cli_exit_codes_updated_then_nothing_new(study: dict[str, Any], tmp_path: Path) -> None:
    args = ["--manifest", str(study["manifest"]), "--out", str(tmp_path / "o"), "--export-file",
            str(study["exports"][1].path), "--resamples", str(RESAMPLES), "--quiet"]
    first = _cli(*args, "--periodic")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("updated:")
    second = _cli(*args, "--periodic")
    assert second.returncode == 10, second.stderr
    assert second.stdout.startswith("nothing new")
    third = _cli(*args)  # without --periodic an unchanged study still exits 0
    assert third.returncode == 0, third.stderr


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_unreachable_label_studio_is_one_line_exit_3_and_outputs_untouched(scored: Path, study: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    out = tmp_path / "kept"
    _run(study, out)
    before = _files(out)
    secret = "s3cret-token-never-printed"
    done = _cli("--manifest", str(study["manifest"]), "--out", str(out), "--url",
                f"http://127.0.0.1:{_dead_port()}", "--quiet", env={"LABEL_STUDIO_TOKEN": secret})
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "unreachable" in lines[0] and "Traceback" not in done.stderr
    assert secret not in done.stderr + done.stdout
    assert _files(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".posthoc-score-")], "temporary files left behind"


def test_a_held_lock_refuses_a_second_run(study: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "locked"
    out.mkdir()
    with filelock.FileLock(str(out / LOCK_NAME), timeout=0):
        with pytest.raises(ScoreJobLocked):
            _run(study, out)
        done = _cli("--manifest", str(study["manifest"]), "--out", str(out), "--export-file",
                    str(study["exports"][1].path), "--quiet")
    assert done.returncode == 4
    assert "lock" in done.stderr and "Traceback" not in done.stderr
    assert not (out / "report.html").exists()


@pytest.mark.parametrize("problem", ["no-manifest", "not-json", "no-source"])
def test_bad_input_is_one_line_exit_2_and_no_output(study: dict[str, Any], tmp_path: Path, problem: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    args = {"no-manifest": ["--manifest", str(tmp_path / "missing.manifest"), "--export-file", str(bad)],
            "not-json": ["--manifest", str(study["manifest"]), "--export-file", str(bad)],
            "no-source": ["--manifest", str(study["manifest"])]}[problem]
    done = _cli(*args, "--out", str(tmp_path / "o"), "--quiet", env={"LABEL_STUDIO_TOKEN": ""})
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "o" / "report.html").exists()


@pytest.mark.slow
def test_workers_with_other_logins_are_matched_through_the_accounts_file(study: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    import shutil

    from posthoc.study.plan.manifest import Manifest

    manifest_path = tmp_path / "copy.manifest"
    shutil.copy(study["manifest"], manifest_path)
    manifest = Manifest.open(manifest_path)
    index = ManifestIndex.from_manifest(manifest)
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    emails = {worker: f"{worker}.person@lab.example" for worker in manifest.workers()}
    export = write_synthetic_export(tmp_path / "export.json", index, verification_tags(label_config(
        "entity_verification")), texts=texts, seed=1, emails=emails)

    unmatched = run_score_job(manifest_path=manifest_path, out_dir=tmp_path / "a",
                              source=JudgementSource(export_files=[export.path]), options=ScoreOptions(n_resamples=0))
    assert unmatched.n_judgements == 0
    kinds = set(pd.read_csv(tmp_path / "a" / "tables" / "exclusions.csv")["kind"])
    assert "foreign_annotator" in kinds

    accounts = {w: {"email": e, "password": "x"} for w, e in emails.items()}
    (tmp_path / "copy.accounts.json").write_text(json.dumps(accounts), encoding="utf-8")
    matched = run_score_job(manifest_path=manifest_path, out_dir=tmp_path / "b",
                            source=JudgementSource(export_files=[export.path]), options=ScoreOptions(n_resamples=0))
    assert matched.n_judgements == export.n_judgements
    assert "foreign_annotator" not in set(pd.read_csv(tmp_path / "b" / "tables" / "exclusions.csv")["kind"])


@pytest.mark.slow
def test_union_option_is_reported_and_default_is_exact(study: dict[str, Any], scored: Path, tmp_path: Path) -> None:
    default = json.loads((scored / "summary.json").read_text(encoding="utf-8"))
    assert default["union"] == "exact"
    rates = pd.read_csv(scored / "tables" / "rates.csv")
    mention = rates.loc[rates["metric"] == "mention_rate"].set_index(["dataset", "system"])["value"]
    verified = rates.loc[rates["metric"] == "verification_rate"].set_index(["dataset", "system"])["value"]
    assert (mention >= verified).all() and len(mention) == len(verified)  # verify or edit >= verify
    html = (scored / "report.html").read_text(encoding="utf-8")
    assert "Verification union: exact" in html and "mention rate" in html
    args = ["--manifest", str(study["manifest"]), "--out", str(tmp_path / "o"), "--export-file",
            str(study["exports"][1].path), "--resamples", str(RESAMPLES), "--quiet", "--union", "overlap"]
    done = _cli(*args)
    assert done.returncode == 0, done.stderr
    overlap = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert overlap["union"] == "overlap" and overlap["fingerprint"] != default["fingerprint"]
    for dataset, entry in overlap["datasets"].items():  # merging overlapping members never grows the union
        assert entry["verification_union"] <= default["datasets"][dataset]["verification_union"]
    assert "Verification union: overlap" in (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    helped = _cli("--help")
    assert "--union [exact|overlap]" in helped.stdout and "mention_rate" in helped.stdout


def test_the_interval_option_reaches_the_tables_and_the_summary(study: dict[str, Any], scored: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "percentile"
    assert _run(study, out, interval="percentile").status == "updated"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interval"] == "percentile" and summary["comparisons"]["method"] == "percentile"
    old, new = (pd.read_csv(folder / "tables" / "comparisons.csv") for folder in (out, scored))
    assert set(old["method"]) == {"percentile"} and set(new["method"]) == {"jackknife_t"}  # issue 46
    assert (old["difference"] == new["difference"]).all()  # same draws, same point values
    assert not np.allclose(old["ci_low"], new["ci_low"])  # other bounds
    with pytest.raises(PosthocInputError, match="interval method"):
        _run(study, tmp_path / "bad", interval="studentized")


def test_a_summary_with_nan_inf_and_numpy_values_is_valid_json(study: dict[str, Any], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The score job's summary goes through the one summary writer (tests/cli/test_summary_json.py)."""
    from tests.cli.hostile_summary import EXPECTED, HOSTILE, strict_load

    import posthoc.atomic

    write = posthoc.atomic.write_summary_json
    monkeypatch.setattr(posthoc.atomic, "write_summary_json",
                        lambda path, summary, **options: write(path, {**summary, **HOSTILE}, **options))
    out = tmp_path / "hostile"
    assert _run(study, out).status == "updated"
    summary = strict_load(out / "summary.json")
    assert {key: summary[key] for key in EXPECTED} == EXPECTED and summary["study"]
