"""The study manifest: round trip of every table, exact offsets with emoji/CJK/combining marks,
byte-identical files, refusal to overwrite another plan, opaque keys, errors for non-manifests."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pandas as pd
import pytest
from study_factory import make_corpus

from posthoc.errors import PosthocInputError
from posthoc.study import StudyConfig, plan_study
from posthoc.study.plan.design import TASK_COLUMNS, StudyPlan
from posthoc.study.plan.keys import task_key
from posthoc.study.plan.manifest import Manifest, TaskRecord


@pytest.fixture(scope="module")
def plan() -> StudyPlan:
    documents, mentions = make_corpus(25, seed=9)
    return plan_study(documents, mentions, StudyConfig(name="m", seed=5, k=2, n_workers=8, max_chars=120))


@pytest.fixture(scope="module")
def manifest(plan: StudyPlan, tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    return Manifest.create(tmp_path_factory.mktemp("manifest") / "study.sqlite", plan)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_metadata_and_workers(manifest: Manifest, plan: StudyPlan) -> None:
    assert (manifest.study, manifest.seed, manifest.k) == ("m", 5, 2)
    assert manifest.workers() == [f"w{i:03d}" for i in range(1, 9)]
    assert manifest.summary == plan.summary
    assert manifest.config["k"] == 2 and manifest.config["max_chars"] == 120
    assert manifest.digest == hashlib.sha256(manifest.path.read_bytes()).hexdigest()


def test_tasks_round_trip(manifest: Manifest, plan: StudyPlan) -> None:
    tasks = manifest.tasks()
    assert list(tasks.columns) == list(TASK_COLUMNS)
    expected = plan.tasks[list(TASK_COLUMNS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(tasks, expected, check_dtype=False)
    one = manifest.tasks("w003")
    assert one["position"].tolist() == list(range(len(one))) and set(one["worker"]) == {"w003"}
    record = manifest.task(tasks["task_key"].iloc[5])
    assert isinstance(record, TaskRecord)
    assert record == TaskRecord(**tasks.iloc[5].to_dict())
    assert manifest.task("tnosuchkey") is None


def test_prefill_and_mentions_map_back_exactly(manifest: Manifest, plan: StudyPlan) -> None:
    mentions = manifest.mentions()
    assert len(mentions) == len(plan.prefill)
    assert mentions["mention_id"].is_unique
    texts = {(d, i): t for d, i, t in manifest.documents().itertuples(index=False)}
    tasks = manifest.tasks().set_index("task_key")
    for row in mentions.itertuples():
        task = tasks.loc[row.task_key]
        assert task["text"][row.start:row.end] == row.surface
        assert texts[(row.dataset, row.doc_id)][row.doc_start:row.doc_end] == row.surface
        assert row.doc_start == task["chunk_start"] + row.start
    key = tasks.index[0]
    prefill = manifest.prefill(key)
    assert list(prefill.columns) == ["mention_id", "start", "end", "surface", "link", "is_nil", "expected_outcome"]
    assert prefill["start"].is_monotonic_increasing
    assert prefill["mention_id"].tolist() == mentions.loc[mentions["task_key"] == key, "mention_id"].tolist()
    assert manifest.prefill("tnosuchkey").empty


def test_unicode_round_trips_through_the_manifest(tmp_path: Path) -> None:
    text = ("Zoë met 東京 friends 👩\u200d💻 at the Café\u0301 in São Paulo. "
            "🇫🇷 Ñandú and Nguyễn visited 𠀋𠀋 again. " * 6)
    spans = [(m, m + len(s)) for s in ("Zoë", "東京", "Café\u0301", "São Paulo", "Nguyễn", "𠀋𠀋")
             for m in [i for i in range(len(text)) if text.startswith(s, i)]]
    rows = [("ds", "d1", system, s, e, text[s:e], f"L{s}", f"L{s}", False) for system in ("GT", "X") for s, e in spans]
    documents = pd.DataFrame({"dataset": ["ds"], "doc_id": ["d1"], "text": [text]})
    mentions = pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "surface", "link",
                                           "link_original", "is_nil"])
    plan = plan_study(documents, mentions, StudyConfig(name="u", seed=1, max_chars=60, n_workers=3))
    manifest = Manifest.create(tmp_path / "u.sqlite", plan)
    assert manifest.documents()["text"].iloc[0] == text
    source = manifest.source_mentions()
    assert sorted(zip(source["start"], source["end"], source["surface"], strict=True)) == sorted(
        (s, e, text[s:e]) for _, _, _, s, e, *_ in rows)
    for chunk in manifest.chunks().itertuples():
        assert text[chunk.chunk_start:chunk.chunk_end] == chunk.text
    found = manifest.mentions()
    assert (found["surface"] == [text[s:e] for s, e in zip(found["doc_start"], found["doc_end"], strict=True)]).all()
    assert set(found.loc[found["expected_outcome"].isna(), "surface"]) == {text[s:e] for s, e in spans}


def test_same_inputs_give_byte_identical_files(plan: StudyPlan, tmp_path: Path) -> None:
    documents, mentions = make_corpus(25, seed=9)
    again = plan_study(documents.sample(frac=1.0, random_state=1), mentions.sample(frac=1.0, random_state=2),
                       StudyConfig(name="m", seed=5, k=2, n_workers=8, max_chars=120))
    Manifest.create(tmp_path / "a.sqlite", plan)
    Manifest.create(tmp_path / "b.sqlite", again)
    assert _sha256(tmp_path / "a.sqlite") == _sha256(tmp_path / "b.sqlite")
    other = plan_study(documents, mentions, StudyConfig(name="m", seed=6, k=2, n_workers=8, max_chars=120))
    Manifest.create(tmp_path / "c.sqlite", other)
    assert _sha256(tmp_path / "c.sqlite") != _sha256(tmp_path / "a.sqlite")


def test_same_plan_is_a_no_op_and_another_plan_is_refused(plan: StudyPlan, tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Manifest.create(path, plan)
    stat = path.stat()
    Manifest.create(path, plan)
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    documents, mentions = make_corpus(25, seed=9)
    other = plan_study(documents, mentions, StudyConfig(name="m", seed=99, k=2, n_workers=8, max_chars=120))
    with pytest.raises(PosthocInputError, match="different study plan"):
        Manifest.create(path, other)
    assert _sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert Manifest.open(path).seed == 5
    replaced = Manifest.create(path, other, overwrite=True)
    assert replaced.seed == 99 and Manifest.open(path).seed == 99
    assert [p.name for p in tmp_path.iterdir()] == ["s.sqlite"]  # no temporary files left behind


def test_open_refuses_missing_and_foreign_files(tmp_path: Path, plan: StudyPlan) -> None:
    with pytest.raises(PosthocInputError, match="does not exist"):
        Manifest.open(tmp_path / "none.sqlite")
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello", encoding="utf-8")
    with pytest.raises(PosthocInputError, match="not a study manifest"):
        Manifest.open(text_file)
    import sqlite3

    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE x (y)")
    connection.close()
    with pytest.raises(PosthocInputError, match="not a study manifest"):
        Manifest.open(foreign)
    with pytest.raises(PosthocInputError, match="not a study manifest"):
        Manifest.create(foreign, plan)
    assert Manifest.create(foreign, plan, overwrite=True).study == "m"


def test_keys_are_opaque(manifest: Manifest) -> None:
    tasks = manifest.tasks()
    mentions = manifest.mentions()
    for key in [*tasks["task_key"], *mentions["mention_id"]]:
        assert len(key) == 21 and int(key[1:], 16) >= 0 and key[0] in "tm"
    assert tasks["task_key"].is_unique and mentions["mention_id"].is_unique
    # a key is a digest of (study, seed, worker, neutral item counter, replicate): no system, no dataset in it
    replicate = manifest._reader.frame("SELECT task_key, replicate FROM tasks").set_index("task_key")["replicate"]
    for row in tasks.head(50).itertuples():
        assert row.task_key == task_key(manifest.study, manifest.seed, row.worker, row.item_id,
                                        int(replicate[row.task_key]))
    assert tasks["item_id"].str.fullmatch(r"[iq]\d{6}").all() and tasks["chunk_id"].str.fullmatch(r"c\d{6}").all()


def test_lookups_work_from_other_threads(manifest: Manifest) -> None:
    keys = manifest.tasks()["task_key"].tolist()
    found: list[bool] = []

    def look() -> None:
        found.extend(manifest.task(k) is not None for k in keys[:20])
        manifest.close()

    threads = [threading.Thread(target=look) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [True] * 80


def test_manifest_is_read_only_for_readers(manifest: Manifest) -> None:
    import sqlite3

    with pytest.raises(sqlite3.OperationalError):
        manifest._reader.connection().execute("DELETE FROM tasks")
    assert os.access(manifest.path, os.R_OK)


@pytest.mark.slow
def test_a_manifest_locked_by_another_program_is_one_line_not_a_bad_file(manifest: Manifest) -> None:
    """Another program holding an exclusive lock on the manifest (SQLite's ``database is locked`` after the
    reader's 5 s): the CLI says so in one line, exit 3 (a service, retry), not "is not a study manifest"."""
    import sqlite3
    import subprocess
    import sys

    holder = sqlite3.connect(manifest.path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "status", "--manifest",
                                 str(manifest.path)], capture_output=True, text=True, timeout=120, check=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 3, result.stderr
    assert result.stderr.strip() == (f"posthoc: service error: study manifest {manifest.path}: SQLite says 'database "
                                     "is locked': another program holds a lock on it (it has the file open for "
                                     "writing); retry when it has finished")
    again = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "status", "--manifest",
                            str(manifest.path)], capture_output=True, text=True, timeout=120, check=False)
    # the lock gone, the manifest opens: status goes on to ask for the annotations (none here)
    assert again.returncode == 2 and "no progress source" in again.stderr, again.stderr
