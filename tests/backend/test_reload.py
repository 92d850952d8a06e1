"""The ML backend and the gateway's authoriser follow a study's revisions without a restart (issue 28).

:mod:`posthoc_backend.reload`: a manifest replaced on disk the way ``posthoc study extend`` replaces it (a real
revision: :func:`posthoc.study.plan.extend.plan_extension` written by :meth:`Manifest.revise`, then renamed over
the served file) is read again, so ``/predict`` pre-fills the appended tasks; a file that cannot be read keeps
the index read before (one log line, not one a second); the files are looked at no more than once a second. The
authoriser reads the study's workers again at once when its files change, and keeps the old ones when that fails.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from backend.payloads import ls_task, predict_payload
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.plan.config import load_study_config, read_study_inputs
from posthoc.study.plan.design import plan_study
from posthoc.study.plan.extend import plan_extension
from posthoc.study.plan.manifest import Manifest
from posthoc.study.plan.revision import config_of
from posthoc_backend.app import create_app
from posthoc_backend.gateway import Authority, StudyAccess
from posthoc_backend.reload import CHECK_SECONDS, FileWatch, Reloading

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from extend_factory import write_study


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def revised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(planned, extended)``: a small study's manifest and the same study after a real ``extend`` revision."""
    folder = tmp_path_factory.mktemp("reload")
    pilot_toml, study_toml = write_study(folder, n_docs=24, n_pilot=8, n_workers=6, name="reload")
    pilot = load_study_config(pilot_toml)
    planned = folder / "planned.sqlite"
    Manifest.create(planned, plan_study(*read_study_inputs(pilot), pilot)).close()
    extended = folder / "extended.sqlite"
    shutil.copyfile(planned, extended)
    opened = Manifest.open(extended)
    docs, ments = read_study_inputs(load_study_config(study_toml))
    extension = plan_extension(opened.raw_tables(), config_of(opened.config), docs, ments, {"set0": 12, "set1": 12},
                               study=opened.study, revision=1, key_secret=None)
    Manifest.revise(extended, extension.revision.apply(opened.raw_tables(), created="t"),
                    expected_digest=opened.digest).close()
    opened.close()
    return planned, extended


def _replace(source: Path, served: Path) -> None:
    """Put ``source``'s bytes at ``served`` as a revision does: built beside it, renamed over it."""
    built = served.with_name(served.name + ".new")
    shutil.copyfile(source, built)
    os.replace(built, served)


def _predict(client: Any, record: dict[str, Any], config: str) -> Any:
    return client.post("/predict", json=predict_payload([ls_task(record)], config))


def _records(revised: tuple[Path, Path]) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A task of the plan, a task the revision appended, and the appended one's pre-filled mention ids."""
    planned, extended = (Manifest.open(p) for p in revised)
    old = planned.tasks().iloc[0].to_dict()
    appended = extended.tasks().loc[~extended.tasks()["task_key"].isin(planned.tasks()["task_key"])]
    assert len(appended)
    new = appended.iloc[0].to_dict()
    return old, new, list(extended.prefill(new["task_key"])["mention_id"])


def test_the_backend_pre_fills_tasks_a_revision_appended_without_a_restart(
        revised: tuple[Path, Path], config: str, tmp_path: Path) -> None:
    served = tmp_path / "m.sqlite"
    shutil.copyfile(revised[0], served)
    client = create_app(served, events_db=tmp_path / "events.sqlite3").test_client()
    old, new, mention_ids = _records(revised)
    assert _predict(client, old, config).status_code == 200
    refused = _predict(client, new, config)
    assert refused.status_code == 404 and "in no manifest served here" in refused.json["error"]

    _replace(revised[1], served)
    time.sleep(CHECK_SECONDS + 0.1)
    reply = _predict(client, new, config)
    assert reply.status_code == 200, reply.json
    (result,) = reply.json["results"]
    assert [item["id"] for item in result["result"] if item["type"] == "labels"] == mention_ids
    assert _predict(client, old, config).status_code == 200  # the plan's tasks are still served


def test_a_manifest_that_cannot_be_read_keeps_the_index_read_before(
        revised: tuple[Path, Path], config: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    served = tmp_path / "m.sqlite"
    shutil.copyfile(revised[0], served)
    client = create_app(served, events_db=tmp_path / "events.sqlite3").test_client()
    old, new, _ = _records(revised)
    broken = tmp_path / "broken"
    broken.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # looks like SQLite, is not a manifest
    caplog.set_level(logging.INFO, logger="posthoc_backend")
    _replace(broken, served)
    for _ in range(2):  # the broken file is seen once and said once, not once a second
        time.sleep(CHECK_SECONDS + 0.1)
        assert _predict(client, old, config).status_code == 200
    said = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert len(said) == 1 and str(served) in said[0], said

    _replace(revised[1], served)  # mended: the next revision is read
    time.sleep(CHECK_SECONDS + 0.1)
    assert _predict(client, new, config).status_code == 200


def test_the_files_are_looked_at_once_a_second_and_a_change_is_told_once(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "m"
    path.write_text("one")
    watch = FileWatch([path, tmp_path / "missing"], clock=clock)
    loads: list[str] = []

    def load() -> str:
        loads.append(path.read_text())
        if loads[-1] == "broken":
            raise PosthocServiceError("cannot read it")
        return loads[-1]

    value = Reloading(load, watch, what="the test file")
    path.write_text("two!")
    clock.now += CHECK_SECONDS / 2
    assert value.get() == "one"  # too soon to look
    clock.now += CHECK_SECONDS / 2
    assert value.get() == "two!" and value.get() == "two!"
    assert loads == ["one", "two!"]
    path.write_text("broken")
    clock.now += CHECK_SECONDS
    assert value.get() == "two!" and value.failures == 1
    clock.now += CHECK_SECONDS
    assert value.get() == "two!" and loads == ["one", "two!", "broken"]  # the same broken file is not read again
    (tmp_path / "missing").write_text("now here")  # a watched file appearing is a change too
    path.write_text("three")
    clock.now += CHECK_SECONDS
    assert value.get() == "three" and value.reloads == 2


def test_the_authoriser_reads_the_workers_again_when_the_study_changes(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    files = [tmp_path / "m.sqlite", tmp_path / "m.accounts.json"]
    for file in files:
        file.write_text("0")
    before = StudyAccess(frozenset({"owner@x"}), {"w001@x": ("w001", 1)})
    after = StudyAccess(frozenset({"owner@x"}), {"w001@x": ("w001", 1), "w021@x": ("w021", 2)})
    answers: list[StudyAccess | Exception] = [before, after, PosthocServiceError("Label Studio is down")]

    def load() -> StudyAccess:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    authority = Authority(url="http://127.0.0.1:9", client=LabelStudioClient("http://127.0.0.1:9", "t" * 40),
                          load_access=load, clock=clock, watch=FileWatch(files, clock=clock))
    assert authority.access() == before
    authority._tasks[1] = (clock(), frozenset({10, 11}))  # w001's task ids as read before the revision
    clock.now += 2.0  # well within the 60 s the access is kept for
    assert authority.access() == before  # nothing changed: nothing read
    files[1].write_text("1, with w021")  # reassign wrote a new account
    clock.now += CHECK_SECONDS
    assert authority.access() == after  # read again at once, not after STUDY_SECONDS
    assert authority._tasks == {}  # task ids are read again on their next request (extend appended tasks)
    caplog.set_level(logging.INFO, logger="posthoc_backend.gateway")
    files[0].write_text("2")
    clock.now += CHECK_SECONDS
    assert authority.access() == after  # the new read failed: the workers read before are kept
    assert [r.levelname for r in caplog.records if "could not be read again" in r.getMessage()] == ["WARNING"]
