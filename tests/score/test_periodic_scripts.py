"""scripts/: the periodic export-and-score job for cron and systemd, run as cron would run it.

The wrapper reads its settings from an env file, runs ``posthoc score --periodic --quiet`` and turns
"nothing new" (posthoc's exit 10) into 0; a Label Studio that does not answer stays exit 3. The cron
line and the systemd units point at the wrapper.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from posthoc.export.synthetic import write_synthetic_export
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.study.plan.index import ManifestIndex

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
WRAPPER = SCRIPTS / "score-periodic.sh"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from posthoc.study.plan.config import read_study_inputs, sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.manifest import Manifest

    folder = tmp_path_factory.mktemp("periodic")
    config = sample_study_config(name="sample", seed=5)
    documents, mentions = read_study_inputs(config)
    manifest = Manifest.create(folder / "sample.manifest", plan_study(documents, mentions, config))
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    export = write_synthetic_export(folder / "export.json", ManifestIndex.from_manifest(manifest),
                                    verification_tags(label_config("entity_verification")), texts=texts, seed=1)
    return {"folder": folder, "manifest": folder / "sample.manifest", "export": export.path}


def _run(env_file: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("POSTHOC_")}
    environment |= {"POSTHOC_SCORE_ENV": str(env_file), "POSTHOC_BIN": f"{sys.executable} -m posthoc.cli.main"}
    return subprocess.run(["bash", str(WRAPPER), *extra], capture_output=True, text=True, env=environment,
                          timeout=600, check=False)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and not p.name.startswith(".posthoc-score")}


@pytest.mark.slow
def test_the_wrapper_updates_then_reports_nothing_new_as_success(study: dict[str, Path]) -> None:
    report = study["folder"] / "report"
    env_file = study["folder"] / "score.env"
    env_file.write_text(f"POSTHOC_MANIFEST={study['manifest']}\nPOSTHOC_REPORT_DIR={report}\n", encoding="utf-8")
    first = _run(env_file, "--export-file", str(study["export"]), "--resamples", "20")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("updated:") and (report / "report.html").is_file()
    before = _files(report)
    second = _run(env_file, "--export-file", str(study["export"]), "--resamples", "20")
    assert second.returncode == 0, second.stderr  # posthoc's 10 ("nothing new") is success for cron
    assert second.stdout.startswith("nothing new") and _files(report) == before


@pytest.mark.slow  # waits on a dead service's retries or runs thousands of cases: not in the fast loop
def test_an_unreachable_label_studio_stays_exit_3_in_one_line(study: dict[str, Path]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env_file = study["folder"] / "dead.env"
    env_file.write_text(f"POSTHOC_MANIFEST={study['manifest']}\nPOSTHOC_REPORT_DIR={study['folder'] / 'r2'}\n"
                        f"POSTHOC_LS_URL=http://127.0.0.1:{port}\nLABEL_STUDIO_TOKEN=not-a-real-token\n",
                        encoding="utf-8")
    done = _run(env_file)
    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "unreachable" in lines[0] and "not-a-real-token" not in done.stderr


def test_a_missing_setting_is_named(tmp_path: Path) -> None:
    done = _run(tmp_path / "absent.env")
    assert done.returncode != 0 and "POSTHOC_MANIFEST" in done.stderr


def test_cron_and_systemd_examples_run_the_wrapper() -> None:
    cron = [line for line in (SCRIPTS / "posthoc-score.cron").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(cron) == 1 and len(cron[0].split(None, 5)) == 6 and "scripts/score-periodic.sh" in cron[0]
    service = (SCRIPTS / "posthoc-score.service").read_text()
    assert "Type=oneshot" in service and "ExecStart=/opt/posthoc-review/scripts/score-periodic.sh" in service
    assert "EnvironmentFile=/etc/posthoc/score.env" in service
    timer = (SCRIPTS / "posthoc-score.timer").read_text()
    assert "[Timer]" in timer and "OnCalendar=" in timer and "WantedBy=timers.target" in timer
    assert os.access(WRAPPER, os.X_OK)
