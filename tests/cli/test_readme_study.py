"""The README's "A study from start to finish" block runs as written (issue 29), under root's umask 022: what it
writes is its owner's alone and no log holds a secret (issue 47).

The block is read from README.md and run by bash, line by line with ``set -euo pipefail`` (a line that fails
stops it), in a folder laid out as the project root (``examples/`` copied, ``plugin/`` linked: the study config's
inputs are relative to it). Two changes only: the backend's port 9090 becomes a free one, and Label Studio's data
dir starts as a copy of the migrated template (the first start's ~30 s migration is tested elsewhere).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lsfixtures import copy_template

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def readme_study_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"A study from start to finish.*?```bash\n(.*?)```", text, re.S)
    assert found, "README.md has no ```bash block after 'A study from start to finish'"
    return found.group(1)


def test_the_block_names_every_step_a_newcomer_needs() -> None:
    block = readme_study_block()
    for step in ("posthoc study plan", "posthoc ls start", 'eval "$(posthoc ls env', "posthoc backend serve",
                 "posthoc study create", "posthoc study status", "posthoc score", "[ $? -eq 10 ]",
                 "posthoc ls stop"):
        assert step in block, step
    assert ":8080" not in block  # `posthoc ls start` picks a free port; the URL comes from `posthoc ls env`


def test_the_readme_study_block_runs_as_written(ls_template: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = readme_study_block().replace("9090", str(port))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "plugin").symlink_to(ROOT / "plugin")
    copy_template(ls_template, tmp_path / "study" / "labelstudio")
    before = set(tmp_path.rglob("*"))
    env = {key: value for key, value in os.environ.items()
           if key not in {"POSTHOC_LS_URL", "LABEL_STUDIO_TOKEN", "POSTHOC_LS_TOKEN"}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's `posthoc`
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: os.umask(0o022))  # root's umask: posthoc must not follow it
    try:
        stdout, stderr = process.communicate(timeout=1200)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        subprocess.run([sys.executable, "-m", "posthoc.cli.main", "ls", "stop", "--data-dir",
                        str(tmp_path / "study" / "labelstudio")], capture_output=True, timeout=60, check=False)
    assert process.returncode == 0, f"{stdout[-3000:]}\n{stderr[-3000:]}"
    assert "Label Studio is running at http://127.0.0.1:" in stdout
    workers = re.findall(r"^  (w\d+): http://127\.0\.0\.1:\d+/projects/\d+/data\?labeling=1  login ", stdout, re.M)
    assert len(workers) >= 3
    # nobody has annotated yet: the score says so in one line and writes no report of empty tables (issue 43)
    assert "no judgements in" in stdout and "nothing scored" in stdout
    assert not (tmp_path / "study" / "scores").exists()
    assert "stopped Label Studio" in stdout
    token = json.loads((tmp_path / "study" / "labelstudio" / "credentials.json").read_text())["token"]
    assert token not in stdout + stderr  # `ls env` output went to eval, never to the screen
    with socket.socket() as probe:  # `kill %1` stopped the backend
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    # issue 47: under umask 022, everything the block wrote in the study folder is its owner's alone, and no log
    # holds the admin's token or password, nor (but Label Studio's own dev-server log) a sign-up link's query
    credentials = json.loads((tmp_path / "study" / "labelstudio" / "credentials.json").read_text())
    # Label Studio's own export files (media/): Django writes them 0644 whatever the umask (FILE_UPLOAD_PERMISSIONS),
    # inside the data folder posthoc keeps 0700
    media = tmp_path / "study" / "labelstudio" / "media"
    assert stat.S_IMODE((tmp_path / "study" / "labelstudio").stat().st_mode) == 0o700
    written = [path for path in (tmp_path / "study").rglob("*") if path not in before and not path.is_symlink()
               and media not in path.parents]
    assert written and [str(p) for p in written if p.stat().st_mode & 0o077] == []
    logs = [path for path in tmp_path.rglob("*.log") if path.is_file()]
    assert "labelstudio.log" in {log.name for log in logs}, logs
    for log in logs:
        content = log.read_text(encoding="utf-8", errors="replace")
        assert credentials["token"] not in content and credentials["password"] not in content, log
        if log.name != "labelstudio.log":  # Label Studio's own dev-server log: request lines whole (security.md)
            assert "token=" not in content and "signup/?" not in content, log
