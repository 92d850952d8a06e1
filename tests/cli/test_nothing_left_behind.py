"""A run that wrote nothing leaves nothing behind, as a new user meets it: an empty export scored, a linker that
does not answer, Ctrl-C in a first ``posthoc score`` (a real process and SIGINT)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from posthoc.labelstudio.ports import free_port
from posthoc.sample import sample_paths


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from lsfixtures import small_sample_manifest

    path = tmp_path_factory.mktemp("study") / "manifest.sqlite"
    small_sample_manifest(path, name="leftovers", n_documents=3, n_workers=3, control_tasks=False)
    return path


def _posthoc(*args: str, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          timeout=300, check=False, **options)  # type: ignore[call-overload]


def test_an_empty_export_says_so_in_one_line_and_writes_nothing(manifest: Path, tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text("[]", encoding="utf-8")
    out = tmp_path / "new" / "report"
    done = _posthoc("score", "--manifest", str(manifest), "--export-file", str(export), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and "no judgements in" in lines[0] and str(export) in lines[0], done.stdout
    assert "nothing scored" in lines[0] and f"{out} not written" in lines[0]
    assert not out.exists()


def test_an_empty_export_keeps_an_earlier_report(manifest: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.html").write_text("earlier", encoding="utf-8")
    export = tmp_path / "export.json"
    export.write_text("[]", encoding="utf-8")
    done = _posthoc("score", "--manifest", str(manifest), "--export-file", str(export), "--out", str(out), "--quiet")
    assert done.returncode == 0 and "outputs in" in done.stdout and "kept" in done.stdout, done.stdout
    assert sorted(p.name for p in out.iterdir() if p.name != ".posthoc-score.lock") == ["report.html"]
    assert (out / "report.html").read_text(encoding="utf-8") == "earlier"


def test_predict_against_an_unreachable_linker_leaves_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "rel.jsonl"
    done = _posthoc("predict", str(sample_paths()["GT"]), "--predictor", "rel", "--url",
                    f"http://127.0.0.1:{free_port()}/", "--retries", "0", "--out", str(out), "--no-progress")
    assert done.returncode == 3, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "new").exists()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # also when this test runs with SIGINT ignored (a background job)


def test_ctrl_c_in_a_first_score_leaves_no_folder_and_no_lock(manifest: Path, tmp_path: Path) -> None:
    """Label Studio accepts the connection and never answers; the user presses Ctrl-C while score waits."""
    out = tmp_path / "report"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        silent.settimeout(120)
        env = {**os.environ, "POSTHOC_LS_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
               "LABEL_STUDIO_TOKEN": "t" * 40}
        process = subprocess.Popen([sys.executable, "-m", "posthoc.cli.main", "score", "--manifest", str(manifest),
                                    "--out", str(out), "--quiet"], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)
        try:
            connection, _ = silent.accept()  # score is waiting for Label Studio's answer now
            with connection:
                assert out.is_dir() and (out / ".posthoc-score.lock").exists()  # the run had taken the lock
                process.send_signal(signal.SIGINT)
                _, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert not out.exists(), sorted(p.name for p in out.iterdir())
