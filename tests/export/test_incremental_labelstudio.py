"""Incremental ``posthoc score`` against a real Label Studio: only changed projects are exported, outputs stay
byte-identical to a full run after an annotation is updated, deleted or a draft is saved or removed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from ls_tiny_study import TinyStudy, build_tiny_study

from posthoc.export.incremental import CACHE_NAME
from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job

pytestmark = pytest.mark.labelstudio


@pytest.fixture(scope="module")
def study(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TinyStudy]:
    """A tiny study of its own (this module changes its annotations)."""
    with build_tiny_study(ls_server, tmp_path_factory.mktemp("incr"), name="incr") as built:
        yield built


def _outputs(folder: Path) -> dict[str, str]:
    """Every output file (not the lock, not the cache) by relative path -> SHA-256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".posthoc-score.lock" and CACHE_NAME not in p.parts}


def _score(study: TinyStudy, out: Path, *, periodic: bool = True) -> Any:
    return run_score_job(manifest_path=study.manifest_path,
                         source=JudgementSource(ls_url=study.url, token=study.token), out_dir=out,
                         options=ScoreOptions(n_resamples=20, periodic=periodic))


def _same_as_a_full_run(study: TinyStudy, out: Path, fresh: Path) -> None:
    full = _score(study, fresh, periodic=False)
    assert full.reused == () and len(full.exported) == 2  # no cache: everything exported
    assert _outputs(out) == _outputs(fresh)


def test_only_changed_projects_are_exported_and_outputs_equal_a_full_run(study: TinyStudy, tmp_path: Path) -> None:
    w1, w2 = sorted(study.projects)
    headers = {"Authorization": f"Token {study.token}"}
    out = tmp_path / "out"
    first = _score(study, out)
    assert first.status == "updated"
    assert sorted(first.exported) == sorted(study.projects.values()) and first.reused == ()

    second = _score(study, out)  # nothing changed: no export at all
    assert second.status == "nothing-new" and second.exported == ()
    assert second.fingerprint == first.fingerprint and second.n_judgements == first.n_judgements

    # an update of an existing annotation (no count changes): only w002's project is exported again
    key = study.tasks[w2][1]
    kept = study.annotations[key]
    changed = [dict(item, value={**item["value"], "choices": ["remove"]}) if item["from_name"] == "decision"
               and item["id"] == kept["result"][1]["id"] else item for item in kept["result"]]
    assert changed != kept["result"]
    patched = requests.patch(f"{study.url}/api/annotations/{kept['id']}/", json={"result": changed},
                             headers=headers, timeout=60)
    assert patched.status_code == 200, patched.text
    third = _score(study, out)
    assert third.status == "updated"
    assert third.exported == (study.projects[w2],) and third.reused == (study.projects[w1],)
    assert third.fingerprint != first.fingerprint
    _same_as_a_full_run(study, out, tmp_path / "full-after-update")

    # a deleted annotation: the worker's earlier submission of the task is the kept one again
    key = study.tasks[w1][1]
    deleted = requests.delete(f"{study.url}/api/annotations/{study.annotations[key]['id']}/", headers=headers,
                              timeout=60)
    assert deleted.status_code == 204, deleted.text
    fourth = _score(study, out)
    assert fourth.status == "updated" and fourth.exported == (study.projects[w1],)
    _same_as_a_full_run(study, out, tmp_path / "full-after-delete")

    # a draft saved on a task without one (no annotation changes): an exclusion row appears, w001 re-exported
    tasks = requests.get(f"{study.url}/api/tasks/", params={"project": study.projects[w1]}, headers=headers,
                         timeout=60).json()["tasks"]
    task = next(t for t in tasks if t["data"]["task_key"] == study.tasks[w1][1])
    drafted = requests.post(f"{study.url}/api/tasks/{task['id']}/drafts", json={"result": [], "lead_time": 1.0},
                            headers=headers, timeout=60)
    assert drafted.status_code == 201, drafted.text
    fifth = _score(study, out)
    assert fifth.status == "updated" and fifth.exported == (study.projects[w1],)
    _same_as_a_full_run(study, out, tmp_path / "full-after-draft")
    again = _score(study, out)  # the signal counted from the moved baseline is stable: nothing new
    assert again.status == "nothing-new" and again.exported == ()

    # the draft removed (no task update: only the count of tasks holding a draft or updated since the baseline
    # moves): the exclusion row goes, w001 re-exported
    removed = requests.delete(f"{study.url}/api/drafts/{drafted.json()['id']}/", headers=headers, timeout=60)
    assert removed.status_code == 204, removed.text
    undrafted = _score(study, out)
    assert undrafted.status == "updated" and undrafted.exported == (study.projects[w1],)
    assert undrafted.fingerprint == fourth.fingerprint  # the same judgements and exclusions as before the draft
    _same_as_a_full_run(study, out, tmp_path / "full-after-draft-removed")

    # without --periodic nothing changed still rewrites the outputs, from the cache alone, the same bytes
    sixth = _score(study, out, periodic=False)
    assert sixth.status == "updated" and sixth.exported == () and len(sixth.reused) == 2
    _same_as_a_full_run(study, out, tmp_path / "full-at-the-end")


def test_a_nothing_new_cli_run_imports_no_label_config_parser_and_no_scipy(study: TinyStudy, tmp_path: Path) -> None:
    """The periodic job as cron runs it (``posthoc score --periodic``, the defaults otherwise): when nothing changed
    it needs neither the SDK's label-config parser (~0.9 s to import) nor scipy (~0.7 s), and imports neither."""
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    first = run_score_job(manifest_path=study.manifest_path,
                          source=JudgementSource(ls_url=study.url, token=study.token), out_dir=out,
                          options=ScoreOptions(periodic=True))  # the defaults, as the CLI's
    assert first.status == "updated"
    probe = ("import json, runpy, sys\ncode = 0\n"
             "sys.argv = ['posthoc'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('posthoc.cli.main', run_name='__main__')\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "heavy = sorted(m for m in ('label_studio_sdk.label_interface', 'scipy') if m in sys.modules)\n"
             "print(json.dumps({'code': code, 'heavy': heavy}))\n")
    done = subprocess.run([sys.executable, "-c", probe, "score", "--manifest", str(study.manifest_path), "--url",
                           study.url, "--out", str(out), "--periodic", "--quiet"], capture_output=True, text=True,
                          env=dict(os.environ, LABEL_STUDIO_TOKEN=study.token), timeout=300, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines, (done.returncode, done.stderr[-2000:])
    assert lines[-1].startswith("{"), (lines, done.stderr[-2000:])
    answer = json.loads(lines[-1])
    assert answer == {"code": 10, "heavy": []}, done.stderr[-2000:]  # 10: nothing new
