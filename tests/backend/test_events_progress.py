"""/webhook into the SQLite event store, and per-worker progress and control results computed from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from backend.payloads import annotation_event, ls_task, predict_payload, region_decisions
from posthoc.study.live.events import EventStore, current_annotations, regions_of
from posthoc.study.live.progress import control_annotation_checks, worker_progress
from posthoc.study.plan.manifest import Manifest


def _predict(client: FlaskClient, record: dict[str, Any], config: str) -> list[dict[str, Any]]:
    reply = client.post("/predict", json=predict_payload([ls_task(record)], config))
    return list(reply.json["results"][0]["result"])


def _annotate(client: FlaskClient, manifest: Manifest, config: str, worker: str, *, n: int | None = None,
              wrong_controls: bool = False, first_id: int = 1) -> int:
    """Post ANNOTATION_CREATED for ``worker``'s first ``n`` tasks; controls decided as expected unless told."""
    records = manifest.tasks(worker).to_dict("records")[:n]
    for offset, record in enumerate(records):
        prediction = _predict(client, record, config)
        expected = manifest.prefill(record["task_key"])
        decisions = {}
        for mention in expected.to_dict("records"):
            want = mention["expected_outcome"] if record["is_control"] else None
            decisions[mention["mention_id"]] = want or "verify"
        if record["is_control"] and wrong_controls:
            first = next(iter(decisions))
            decisions[first] = "verify" if decisions[first] != "verify" else "remove"
        event = annotation_event("ANNOTATION_CREATED", annotation_id=first_id + offset, task_id=first_id + offset,
                                 task_key=record["task_key"], text=record["text"],
                                 result=region_decisions(prediction, decisions))
        reply = client.post("/webhook", json=event)
        assert reply.status_code == 200 and reply.json["queued"] == 1
    return len(records)


def test_regions_of_reads_decisions_and_texts() -> None:
    result = [
        {"id": "m1", "type": "labels", "from_name": "mention", "value": {"start": 0, "end": 3, "labels": ["Entity"]}},
        {"id": "m1", "type": "textarea", "from_name": "link", "value": {"start": 0, "end": 3, "text": ["L"]}},
        {"id": "m1", "type": "choices", "from_name": "decision", "value": {"start": 0, "end": 3, "choices": ["edit"]}},
        {"id": "m1", "type": "textarea", "from_name": "new_link", "value": {"start": 0, "end": 3, "text": ["X"]}},
        {"id": "m2", "type": "labels", "from_name": "mention", "value": {"start": 4, "end": 6, "labels": ["Entity"]}},
        {"type": "relation", "from_id": "m1", "to_id": "m2"},
        "garbage",
    ]
    regions = {r["id"]: r for r in regions_of(result)}
    assert regions["m1"]["decision"] == "edit" and regions["m1"]["texts"] == {"link": ["L"], "new_link": ["X"]}
    assert (regions["m1"]["start"], regions["m1"]["end"]) == (0, 3)
    assert regions["m2"]["decision"] is None
    assert regions_of("not a list") == []


def test_webhook_store_is_idempotent_and_follows_updates_and_deletes(client: FlaskClient, tmp_path: Path) -> None:
    result = [{"id": "m1", "type": "choices", "from_name": "decision", "value": {"start": 0, "end": 3,
                                                                                 "choices": ["verify"]}}]
    created = annotation_event("ANNOTATION_CREATED", annotation_id=5, task_id=9, task_key="tk1", text="Ann",
                               result=result, updated_at="2026-11-30T03:10:00Z")
    assert client.post("/webhook", json=created).json["queued"] == 1
    assert client.post("/webhook", json=created).json["queued"] == 1  # queued twice, stored once (below)
    changed = [{**result[0], "value": {**result[0]["value"], "choices": ["remove"]}}]
    updated = annotation_event("ANNOTATION_UPDATED", annotation_id=5, task_id=9, task_key="tk1", text="Ann",
                               result=changed, updated_at="2026-11-30T03:11:00Z")
    assert client.post("/webhook", json=updated).json["queued"] == 1
    other = annotation_event("ANNOTATION_CREATED", annotation_id=6, task_id=10, task_key="tk2", text="Bo",
                             result=[], was_cancelled=True)
    client.post("/webhook", json=other)
    assert client.post("/webhook", json={"action": "TASKS_CREATED", "tasks": [{"id": 1}]}).json["queued"] == 0

    store = EventStore(tmp_path / "events.sqlite3")
    assert b"not-a-real-password" not in store.inbox.read_bytes()  # the inbox holds extracted fields too
    events = store.events()
    assert list(events["action"]) == ["ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATION_CREATED"]
    assert list(events["task_key"]) == ["tk1", "tk1", "tk2"] and list(events["project_id"]) == [1, 1, 1]
    now = current_annotations(events)
    assert list(now["annotation_id"]) == [5, 6]
    assert now.loc[0, "regions"][0]["decision"] == "remove"
    assert list(now["was_cancelled"]) == [False, True]

    deleted = {"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 5}], "project": {"id": 1}}
    assert client.post("/webhook", json=deleted).json["queued"] == 1
    assert list(current_annotations(store.events())["annotation_id"]) == [6]
    raw = (tmp_path / "events.sqlite3").read_bytes()
    assert b"not-a-real-password" not in raw  # only extracted fields are kept, never the payload


@pytest.mark.parametrize("body", [
    {"annotation": {"id": 1}},
    {"action": "ANNOTATION_CREATED"},
    {"action": "ANNOTATION_CREATED", "annotation": {"id": "7"}},
    {"action": "ANNOTATIONS_DELETED", "annotations": "all"},
    {"action": "ANNOTATIONS_DELETED", "annotations": [{"id": None}]},
], ids=["no action", "no annotation", "annotation id a string", "annotations not a list", "annotation id null"])
def test_bad_webhooks_get_400_json(client: FlaskClient, body: dict[str, Any]) -> None:
    reply = client.post("/webhook", json=body)
    assert reply.status_code == 400 and reply.is_json and reply.json["error"]


def test_progress_and_control_results(make_client: Callable[..., FlaskClient], manifest: Manifest, config: str,
                                      tmp_path: Path) -> None:
    client = make_client(events_db=tmp_path / "study.events.sqlite3")
    workers = manifest.workers()
    done_all = _annotate(client, manifest, config, workers[0], first_id=1)
    done_some = _annotate(client, manifest, config, workers[1], n=3, first_id=1000)
    _annotate(client, manifest, config, workers[2], wrong_controls=True, first_id=2000)
    annotations = current_annotations(EventStore(tmp_path / "study.events.sqlite3").events())
    controls = control_annotation_checks(manifest, annotations)
    progress = worker_progress(manifest, annotations, controls).set_index("worker")

    totals = manifest.tasks().groupby("worker")["task_key"].nunique()
    control_totals = manifest.tasks().groupby("worker")["is_control"].sum()
    assert progress.loc[workers[0], "tasks_done"] == done_all == totals[workers[0]]
    assert progress.loc[workers[0], "share_done"] == 1.0
    assert progress.loc[workers[1], "tasks_done"] == done_some == 3
    assert progress.loc[workers[0], "annotators"] == 1 and progress.loc[workers[3], "annotators"] == 0
    assert progress.loc[workers[3], "tasks_done"] == 0 and pd.isna(progress.loc[workers[3], "last_activity"])
    assert progress.loc[workers[0], "controls_total"] == control_totals[workers[0]] >= 1
    assert progress.loc[workers[0], "controls_passed"] == progress.loc[workers[0], "controls_done"] >= 1
    assert progress.loc[workers[2], "controls_done"] >= 1 and progress.loc[workers[2], "controls_passed"] == 0
    failed = controls[controls["worker"] == workers[2]]
    assert (~failed["passed"]).all() and (failed["wrong"] == 1).all()
    assert failed["detail"].str.contains("expected").all()

    # the CLI reads the same store
    from posthoc.cli.status import status_command

    out = tmp_path / "status"
    run = CliRunner().invoke(status_command, ["--manifest", str(manifest.path), "--events-db",
                                              str(tmp_path / "study.events.sqlite3"), "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert workers[0] in run.output and "control tasks" in run.output
    assert (out / "workers.csv").read_text().count("\n") == len(workers) + 1


def test_a_deleted_control_region_counts_as_remove(make_client: Callable[..., FlaskClient], manifest: Manifest,
                                                    config: str, tmp_path: Path) -> None:
    client = make_client(events_db=tmp_path / "e.sqlite3")
    controls = manifest.tasks()
    record = controls[controls["is_control"]].to_dict("records")[0]
    expected = manifest.prefill(record["task_key"]).to_dict("records")
    prediction = _predict(client, record, config)
    removed = {m["mention_id"] for m in expected if m["expected_outcome"] == "remove"}
    decisions = {m["mention_id"]: m["expected_outcome"] for m in expected if m["mention_id"] not in removed}
    kept = [item for item in prediction if item["id"] not in removed]  # the annotator deleted those regions
    event = annotation_event("ANNOTATION_CREATED", annotation_id=1, task_id=1, task_key=record["task_key"],
                             text=record["text"], result=region_decisions(kept, decisions))
    client.post("/webhook", json=event)
    result = control_annotation_checks(manifest, current_annotations(EventStore(tmp_path / "e.sqlite3").events()))
    assert list(result["passed"]) == [True]


def test_study_projects_are_found_by_their_marker_only() -> None:
    from posthoc.study.live.progress import study_project_ids

    projects = [
        {"id": 1, "title": "sample · worker w001", "description": "posthoc-study sample worker w001\n"},
        {"id": 2, "title": "sample copy", "description": ""},
        {"id": 3, "title": "other", "description": "posthoc-study other worker w001"},
    ]
    assert study_project_ids(projects, "sample") == [1]
    assert study_project_ids(projects[1:], "sample") == []  # a title naming the study is not a marker
    assert study_project_ids(projects[2:], "sample") == []  # nor is another study's project


def test_annotations_from_label_studio_tasks() -> None:
    from posthoc.study.live.progress import annotations_from_tasks

    result = [{"id": "m1", "type": "choices", "from_name": "decision",
               "value": {"start": 0, "end": 2, "choices": ["remove"]}}]
    tasks = [{"id": 4, "project": 2, "data": {"text": "Al", "task_key": "k"},
              "annotations": [{"id": 8, "completed_by": {"id": 3, "email": "w@x"}, "result": result,
                               "updated_at": "2026-11-30T03:00:00Z", "was_cancelled": False}]},
             {"id": 5, "project": 2, "data": {"text": "Bo", "task_key": "j"}, "annotations": []}]
    frame = annotations_from_tasks(tasks)
    assert list(frame["annotation_id"]) == [8] and list(frame["completed_by"]) == [3]
    assert frame.loc[0, "regions"][0]["decision"] == "remove" and frame.loc[0, "task_key"] == "k"


def test_a_file_that_is_not_an_event_store_is_an_input_error(tmp_path: Path) -> None:
    from posthoc.errors import PosthocInputError

    bogus = tmp_path / "events.sqlite3"
    bogus.write_text("not a database, just text " * 20, encoding="utf-8")
    with pytest.raises(PosthocInputError, match="event store"):
        EventStore(bogus)


def test_status_on_an_empty_store_and_without_any_source(manifest: Manifest, tmp_path: Path) -> None:
    from posthoc.cli.main import main

    empty = tmp_path / "empty.events.sqlite3"
    EventStore(empty)
    run = CliRunner().invoke(status_command_of(), ["--manifest", str(manifest.path), "--events-db", str(empty)])
    assert run.exit_code == 0 and "0 annotations" in run.output and "none annotated yet" in run.output
    with pytest.raises(SystemExit) as exited:
        main(["study", "status", "--manifest", str(manifest.path), "--events-db", str(tmp_path / "none.sqlite3")])
    assert exited.value.code == 2


def status_command_of() -> Any:
    from posthoc.cli.status import status_command

    return status_command


def test_the_inbox_is_ingested_once_by_concurrent_writers_and_readers(tmp_path: Path) -> None:
    """Eight threads append 50 events each while readers ingest: every event is stored exactly once, a line a
    writer has not finished waits for the next reader, and the inbox is emptied once all of it is in."""
    import threading

    store = EventStore(tmp_path / "events.sqlite3")

    def write(worker: int) -> None:
        for number in range(50):
            event = annotation_event("ANNOTATION_CREATED", annotation_id=worker * 1000 + number, task_id=number,
                                     task_key=f"t{number}", text="Ann", result=[])
            assert store.append(event) == 1

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    readers = [EventStore(tmp_path / "events.sqlite3") for _ in range(2)]
    while any(thread.is_alive() for thread in threads):
        readers[0].ingest()
    for thread in threads:
        thread.join()
    assert sorted(readers[1].events()["annotation_id"]) == sorted(w * 1000 + n for w in range(8) for n in range(50))
    assert store.inbox.stat().st_size == 0  # all of it is in the database: emptied
    with store.inbox.open("ab") as handle:  # a writer in the middle of a line
        handle.write(b'[["2026-12-01T00:00:00+00:00","ANNOTATION_CREATED"')
    assert store.ingest() == 0 and store.inbox.stat().st_size > 0
    assert len(store.events()) == 400


def _copy_manifest(manifest: Manifest, folder: Path) -> Path:
    """The manifest (and its secret) in a folder of its own: nothing beside it, no event store."""
    import shutil

    source = Path(manifest.path)
    for path in source.parent.glob(f"{source.stem}.*"):
        if path.is_file() and not path.name.startswith(f"{source.stem}.events"):
            shutil.copy(path, folder / path.name)
    return folder / source.name


def _status(args: list[str], env: dict[str, str | None], monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``posthoc study status ARGS`` as the command line runs it (errors: one line, an exit code) under ``env``."""
    from posthoc.cli.main import main

    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    code = 0
    try:
        main(["study", "status", *args])
    except SystemExit as exited:
        code = int(exited.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


#: no Label Studio named
NO_LS: dict[str, str | None] = {"POSTHOC_LS_URL": None, "LABEL_STUDIO_TOKEN": None, "POSTHOC_LS_TOKEN": None}


def test_status_by_default_needs_label_studio_and_names_what_to_pass(
        make_client: Callable[..., FlaskClient], manifest: Manifest, config: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No --url, no POSTHOC_LS_URL: a study without the webhook has only Label Studio's API to tell its progress, so
    status says what to pass; the backend's (empty) event store beside the manifest does not count as a source, one
    holding events does."""
    path = _copy_manifest(manifest, tmp_path)
    code, output = _status(["--manifest", str(path)], NO_LS, monkeypatch, capsys)
    assert code == 2, output
    assert "no progress source: give Label Studio's URL with --url (or env POSTHOC_LS_URL)" in output
    assert "Traceback" not in output and output.count("\n") == 1
    store = path.with_name(f"{path.stem}.events.sqlite3")
    EventStore(store)  # what `posthoc backend serve` makes on start
    code, output = _status(["--manifest", str(path)], NO_LS, monkeypatch, capsys)
    assert code == 2 and f"{store} holds no webhook event" in output and "--url" in output, output
    done = _annotate(make_client(events_db=store), manifest, config, manifest.workers()[0], n=2)
    code, output = _status(["--manifest", str(path)], NO_LS, monkeypatch, capsys)
    assert code == 0, output
    assert f"study {manifest.study}: {done} annotations (event store)" in output


@pytest.mark.slow  # waits on a dead service's retries or runs thousands of cases: not in the fast loop
def test_status_reads_the_url_from_posthoc_ls_url(manifest: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``POSTHOC_LS_URL`` (what ``posthoc ls env`` exports) is status's --url: without the token it says which
    variable to set; with one, a server that is down is a service error (exit 3), so the API was asked."""
    import socket

    path = _copy_manifest(manifest, tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}"
    code, output = _status(["--manifest", str(path)], {**NO_LS, "POSTHOC_LS_URL": down}, monkeypatch, capsys)
    assert code == 2 and "no Label Studio API token: set env POSTHOC_LS_TOKEN or LABEL_STUDIO_TOKEN" in output, output
    code, output = _status(["--manifest", str(path)], {"POSTHOC_LS_URL": down, "LABEL_STUDIO_TOKEN": "t0ken"},
                           monkeypatch, capsys)
    assert code == 3, output
    assert down in output and "t0ken" not in output and output.count("\n") == 1
