"""The setup record (posthoc.jobs.setup_record): what a rerun of study create trusts, and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.jobs.setup_record import SetupRecord, default_setup_file


def _listed(project_id: int = 7, tasks: int = 20, predictions: int = 20, version: str = "posthoc-v1") -> dict:
    """A project as Label Studio's project listing gives it (the fields the record compares)."""
    return {"id": project_id, "task_number": tasks, "total_predictions_number": predictions, "model_version": version}


def test_a_checked_project_is_trusted_only_while_label_studios_counts_agree(tmp_path: Path) -> None:
    path = default_setup_file(tmp_path / "study.manifest")
    assert path == tmp_path / "study.setup.json"
    SetupRecord(path, study="s").checked("w1", 7, 20, "posthoc-v1")
    again = SetupRecord(path, study="s")  # read back from the file, as a rerun does
    assert again.trusted("w1", _listed(), 20)
    assert not again.trusted("w1", _listed(), 21)  # the plan has another number of tasks
    assert not again.trusted("w1", _listed(project_id=8), 20)  # another project
    assert not again.trusted("w1", _listed(tasks=19), 20)  # a task deleted in Label Studio
    assert not again.trusted("w1", _listed(predictions=19), 20)  # a prediction deleted
    assert not again.trusted("w1", _listed(predictions=21), 20)  # a second prediction somewhere
    assert not again.trusted("w1", _listed(version="other"), 20)
    assert not again.trusted("w2", _listed(), 20)  # never checked
    assert not SetupRecord(path, study="another study").trusted("w1", _listed(), 20)
    assert not SetupRecord(path, study="s", trust=False).trusted("w1", _listed(), 20)  # --verify


def test_the_record_vouches_for_the_backend_a_project_was_checked_with(tmp_path: Path) -> None:
    """Without the webhook no listing shows the backend connected: the record names it (issue 24)."""
    path = tmp_path / "study.setup.json"
    SetupRecord(path, study="s").checked("w1", 7, 20, "posthoc-v1", backend="http://127.0.0.1:9090")
    SetupRecord(path, study="s").checked("w2", 8, 20, "posthoc-v1")  # a record from before it named the backend
    again = SetupRecord(path, study="s")
    assert again.connected("w1", 7, "http://127.0.0.1:9090")
    assert not again.connected("w1", 7, "http://127.0.0.1:9091")  # another --backend-url
    assert not again.connected("w1", 8, "http://127.0.0.1:9090")  # another project
    assert not again.connected("w2", 8, "http://127.0.0.1:9090")  # not named
    assert again.trusted("w2", _listed(project_id=8), 20)  # still trusted for its counts
    assert not SetupRecord(path, study="s", trust=False).connected("w1", 7, "http://127.0.0.1:9090")  # --verify


def test_records_of_two_studies_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.setup.json"
    SetupRecord(path, study="a").checked("w1", 1, 5, "v")
    SetupRecord(path, study="b").checked("w1", 2, 6, "v")
    saved = json.loads(path.read_text())["studies"]
    assert saved == {"a": {"w1": {"project_id": 1, "tasks": 5, "model_version": "v"}},
                     "b": {"w1": {"project_id": 2, "tasks": 6, "model_version": "v"}}}


@pytest.mark.parametrize("text", ["{not json", "[]", '{"studies": []}', '{"studies": {"s": {"w1": 3}}}', "{}"])
def test_a_broken_record_is_an_input_error_naming_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "study.setup.json"
    path.write_text(text)
    with pytest.raises(PosthocInputError) as caught:
        SetupRecord(path, study="s")
    assert str(path) in str(caught.value) and "remove it" in str(caught.value)
