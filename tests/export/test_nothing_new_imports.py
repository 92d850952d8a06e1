"""``posthoc score --periodic`` as cron runs it, against a real Label Studio: a run that finds nothing new imports
neither pandas nor numpy (nor the SDK, pydantic or pyarrow), and a run that finds a change still writes what a
full run writes, byte for byte (issue 24)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from ls_tiny_study import TinyStudy, build_tiny_study

from posthoc.export.incremental import CACHE_NAME
from posthoc.jobs.score import LOCK_NAME, JudgementSource, ScoreOptions, run_score_job

pytestmark = pytest.mark.labelstudio

#: what a nothing-new run must not import (pandas and numpy ~0.9 s of a ~1.2 s start; the SDK ~3 s)
HEAVY = ("label_studio_sdk", "numpy", "pandas", "pyarrow", "pydantic")
#: runs the command line's main as ``posthoc`` would, then prints its exit code and which of HEAVY it imported
PROBE = f"""
import json, runpy, sys
sys.argv = ["posthoc", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("posthoc.cli.main", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"code": code, "imported": sorted(m for m in {HEAVY!r} if m in sys.modules)}}))
"""


@pytest.fixture(scope="module")
def study(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyStudy]:
    """A tiny study of its own (a test here changes an annotation)."""
    with build_tiny_study(ls_server, tmp_path_factory.mktemp("imports"), name="imports") as built:
        yield built


def periodic_cli(study: TinyStudy, out: Path) -> dict[str, Any]:
    """``posthoc score --periodic --quiet`` (the defaults otherwise) in a fresh interpreter: its exit code and
    which of :data:`HEAVY` it imported."""
    done = subprocess.run([sys.executable, "-c", PROBE, "score", "--manifest", str(study.manifest_path), "--url",
                           study.url, "--out", str(out), "--periodic", "--quiet"], capture_output=True, text=True,
                          env=dict(os.environ, LABEL_STUDIO_TOKEN=study.token), timeout=600, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    answer: dict[str, Any] = json.loads(lines[-1])
    answer["printed"] = "\n".join(lines[:-1])
    return answer


def outputs(folder: Path) -> dict[str, str]:
    """Every output file (not the lock, not the cache) by relative path -> SHA-256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != LOCK_NAME and CACHE_NAME not in p.parts}


def test_a_nothing_new_run_imports_neither_pandas_nor_numpy(study: TinyStudy, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = periodic_cli(study, out)
    assert first["code"] == 0 and first["printed"].startswith("updated:"), first
    assert {"numpy", "pandas"} <= set(first["imported"])  # the probe sees them when a run scores
    written = outputs(out)
    second = periodic_cli(study, out)
    assert second["code"] == 10 and second["printed"].startswith("nothing new:"), second
    assert second["imported"] == [], second  # nothing new: decided without pandas, numpy, the SDK, pydantic
    assert outputs(out) == written


def test_a_run_that_finds_a_change_writes_what_a_full_run_writes(study: TinyStudy, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert periodic_cli(study, out)["code"] == 0
    before = outputs(out)
    w2 = sorted(study.projects)[1]
    kept = study.annotations[study.tasks[w2][1]]  # w002's all-verified task: one decision becomes remove
    changed = [dict(item, value={**item["value"], "choices": ["remove"]}) if item["from_name"] == "decision"
               and item["id"] == kept["result"][0]["id"] else item for item in kept["result"]]
    assert changed != kept["result"]
    patched = requests.patch(f"{study.url}/api/annotations/{kept['id']}/", json={"result": changed},
                             headers={"Authorization": f"Token {study.token}"}, timeout=60)
    assert patched.status_code == 200, patched.text
    again = periodic_cli(study, out)
    assert again["code"] == 0 and "(1 of 2 projects exported, 1 unchanged)" in again["printed"], again
    assert outputs(out) != before
    full = run_score_job(manifest_path=study.manifest_path, source=JudgementSource(ls_url=study.url,
                                                                                   token=study.token),
                         out_dir=tmp_path / "full", options=ScoreOptions())  # in this process, no cache
    assert full.status == "updated" and full.reused == ()
    assert outputs(out) == outputs(tmp_path / "full")
