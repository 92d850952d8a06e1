"""Extending and reassigning a planned study, pure: the revision's rules hold and old tasks never change.

Properties (:mod:`posthoc.study.plan.revision`, :mod:`posthoc.study.plan.extend`, :mod:`posthoc.study.plan.reassign`):
no item twice per worker, exactly k judges an item over the passing workers, systems balanced within one per
worker among a revision's new tasks, each worker's new tasks after their old ones in their seeded order, old rows
unchanged, reproducible, the extended documents the prefix of the seeded ranking; a rerun is an empty revision.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from extend_factory import write_study

from posthoc.errors import PosthocInputError
from posthoc.study.plan.assignment import worker_order
from posthoc.study.plan.config import load_study_config, read_study_inputs
from posthoc.study.plan.design import plan_study
from posthoc.study.plan.extend import document_ranking, plan_extension
from posthoc.study.plan.manifest import Manifest
from posthoc.study.plan.reassign import FAILED, LEFT, plan_reassignment
from posthoc.study.plan.revision import config_of


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("extend")
    pilot_toml, study_toml = write_study(folder)
    pilot = load_study_config(pilot_toml)
    plan = plan_study(*read_study_inputs(pilot), pilot)
    manifest = Manifest.create(folder / "m.sqlite", plan)
    docs, ments = read_study_inputs(load_study_config(study_toml))
    return {"folder": folder, "manifest": manifest, "docs": docs, "ments": ments}


def _extend(study: dict[str, object], wanted: dict[str, int], revision: int = 1) -> object:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    return plan_extension(manifest.raw_tables(), config_of(manifest.config), study["docs"], study["ments"],  # type: ignore[arg-type]
                          wanted, study=manifest.study, revision=revision, key_secret=None)


def _check_sequences(tasks: pd.DataFrame, k: int) -> None:
    """Positions 0..n-1 per worker, no item (nor chunk) twice per worker, a control task in every batch on a chunk
    the worker does not judge, k judges per item."""
    for worker, group in tasks.groupby("worker"):
        assert sorted(group["position"]) == list(range(len(group))), worker
        real = group.loc[~group["is_control"]]
        assert not real["item_id"].duplicated().any(), f"{worker} judges an item twice"
        assert not real["chunk_id"].duplicated().any(), f"{worker} sees a chunk twice"
        controls = group.loc[group["is_control"]]
        assert set(controls["chunk_id"]).isdisjoint(real["chunk_id"]), f"{worker}: a control on a chunk they judge"
        assert set(controls["batch"]) == set(group["batch"]), f"{worker}: a batch without its control task"
    real = tasks.loc[~tasks["is_control"]]
    assert (real.groupby("item_id").size() == k).all()


def test_extension_appends_the_next_seeded_documents_in_each_workers_order(study: dict[str, object]) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    extension = _extend(study, {"set0": 16, "set1": 12})
    again = _extend(study, {"set0": 16, "set1": 12})
    revision = extension.revision  # type: ignore[attr-defined]
    assert revision.digest() == again.revision.digest()  # type: ignore[attr-defined]
    assert extension.prefix and extension.documents_after == {"set0": 16, "set1": 12}  # type: ignore[attr-defined]
    # the study's documents are now the first 16 / 12 of the seeded ranking
    ranking = document_ranking(study["docs"], manifest.seed)  # type: ignore[arg-type]
    tables = revision.apply(manifest.raw_tables(), created="2026-01-01T00:00:00Z")
    have = set(zip(tables["documents"]["dataset"], tables["documents"]["doc_id"], strict=True))
    first = ranking.loc[ranking["rank"] < ranking["dataset"].map({"set0": 16, "set1": 12})]
    assert have == set(zip(first["dataset"], first["doc_id"], strict=True))
    old = manifest.raw_tables()
    for name in ("tasks", "prefill", "items", "chunks", "documents"):  # old rows unchanged, new ones after them
        pd.testing.assert_frame_equal(tables[name].iloc[:len(old[name])].reset_index(drop=True), old[name])
    assert not set(revision.tasks["task_key"]) & set(old["tasks"]["task_key"])
    assert not set(revision.prefill["mention_id"]) & set(old["prefill"]["mention_id"])
    merged = tables["tasks"].astype({"is_control": bool})
    _check_sequences(merged, manifest.k)
    for worker, new in revision.tasks.groupby("worker"):
        before = old["tasks"].loc[old["tasks"]["worker"] == worker]
        assert new["position"].min() == before["position"].max() + 1
        real = new.loc[~new["is_control"].astype(bool)]
        canonical = real.sort_values(["item_id", "replicate"])["task_key"].to_numpy()
        permutation, sizes, _ = worker_order(manifest.seed, f"{worker}/revision-1", len(real), 19, controls=True)
        assert list(real.sort_values("position")["task_key"]) == list(canonical[permutation]), worker
        assert list(real.groupby("batch").size()) == sizes
    per_system = revision.tasks.loc[~revision.tasks["is_control"].astype(bool)].groupby(["system", "worker"]).size()
    for system, counts in per_system.groupby(level=0):
        assert counts.max() - counts.min() <= 1, f"system {system} unbalanced: {counts.to_dict()}"


def test_revision_written_and_reread_and_rerun_adds_nothing(study: dict[str, object], tmp_path: Path) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    copy = tmp_path / "m.sqlite"
    copy.write_bytes(Path(manifest.path).read_bytes())
    opened = Manifest.open(copy)
    extension = _extend({**study, "manifest": opened}, {"set0": 14})
    revised = Manifest.revise(copy, extension.revision.apply(opened.raw_tables(), created="t"),  # type: ignore[attr-defined]
                              expected_digest=opened.digest)
    assert list(revised.revisions()["kind"]) == ["extend"]
    marks = revised.task_revisions()
    assert (marks.groupby("revision").size().to_dict()
            == {0: len(opened.tasks()), 1: len(extension.revision.tasks)})  # type: ignore[attr-defined]
    assert list(revised.tasks().columns) == list(opened.tasks().columns)
    rerun = _extend({**study, "manifest": revised}, {"set0": 14}, revision=2)
    assert rerun.revision.empty  # type: ignore[attr-defined]
    with pytest.raises(PosthocInputError, match="changed while"):
        Manifest.revise(copy, opened.raw_tables(), expected_digest=opened.digest)


def test_reassignment_keeps_k_judges_over_passing_workers(study: dict[str, object]) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    tables = manifest.raw_tables()
    tasks = tables["tasks"]
    done = set(tasks.loc[tasks["position"] < 11, "task_key"])  # everyone did half their tasks
    config = config_of(manifest.config)
    revision = plan_reassignment(tables, config, done, failed=["w003"], left=["w006"], new_workers=1, revision=1,
                                 key_secret=None)
    withdrawn = revision.withdrawn.set_index("task_key")["reason"]
    undone = tasks.loc[tasks["worker"].isin(["w003", "w006"]) & ~tasks["task_key"].isin(done)]
    assert set(withdrawn.index) == set(undone["task_key"])
    assert set(withdrawn[undone.loc[undone["worker"] == "w003", "task_key"]]) == {FAILED}
    assert set(withdrawn[undone.loc[undone["worker"] == "w006", "task_key"]]) == {LEFT}
    assert revision.workers == ("w009",)
    assert not set(revision.tasks["worker"]) & {"w003", "w006"}
    after = revision.apply(tables, created="t")
    merged = after["tasks"].astype({"is_control": bool})
    gone = set(withdrawn.index)
    live = merged.loc[~merged["task_key"].isin(gone)]
    real = live.loc[~live["is_control"] & (live["worker"] != "w003")]
    assert (real.groupby("item_id").size() == config.k).all()
    for worker, group in merged.groupby("worker"):
        mine = group.loc[~group["is_control"]]
        assert not mine["item_id"].duplicated().any(), worker
        assert sorted(group["position"]) == list(range(len(group)))
    rerun = plan_reassignment(revision.apply(tables, created="t"), config, done, failed=["w003"], left=["w006"],
                              new_workers=1, revision=2, key_secret=None)
    assert rerun.empty


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"failed": ["w099"]}, "unknown worker"),
    ({"failed": ["w001"], "left": ["w001"]}, "both failed and left"),
], ids=["unknown worker", "failed and left"])
def test_reassignment_refuses_bad_input(study: dict[str, object], kwargs: dict[str, list[str]], message: str) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    with pytest.raises(PosthocInputError, match=message):
        plan_reassignment(manifest.raw_tables(), config_of(manifest.config), set(), revision=1, key_secret=None,
                          **kwargs)  # type: ignore[arg-type]


def test_extension_refuses_another_studys_inputs_and_fewer_documents(study: dict[str, object]) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    with pytest.raises(PosthocInputError, match="not between"):
        _extend(study, {"set0": 5})
    with pytest.raises(PosthocInputError, match="unknown dataset"):
        _extend(study, {"nope": 12})
    other = study["docs"].assign(text=study["docs"]["text"] + " ")  # type: ignore[union-attr]
    with pytest.raises(PosthocInputError, match="another text"):
        _extend({**study, "docs": other}, {"set0": 12})


def test_a_manifest_from_before_revisions_reads_as_revision_zero(study: dict[str, object], tmp_path: Path) -> None:
    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    old = tmp_path / "old.sqlite"
    old.write_bytes(Path(manifest.path).read_bytes())
    with sqlite3.connect(old) as connection:
        connection.execute("DROP TABLE revisions")
        connection.execute("DROP TABLE task_revisions")
    opened = Manifest.open(old)
    assert opened.revisions().empty and opened.withdrawn() == {}
    assert (opened.task_revisions()["revision"] == 0).all()
    assert len(opened.raw_tables()["task_revisions"]) == 0
    assert np.array_equal(opened.tasks()["task_key"], manifest.tasks()["task_key"])


def test_predicted_cell_widths_are_the_target_searchs_and_shrink_with_documents(study: dict[str, object]) -> None:
    """``predicted_halfwidths`` (the bench's "predicted" beside the real score, issue 28) gives every cell; its widest
    per dataset is what ``documents_for_target`` calls ``widest_now``; more documents, narrower cells."""
    from posthoc.study.planner.extension_target import documents_for_target, predicted_halfwidths
    from posthoc.study.planner.rates import OutcomeRates

    manifest = study["manifest"]
    assert isinstance(manifest, Manifest)
    config, current = config_of(manifest.config), {"set0": 10, "set1": 10}
    docs, ments = study["docs"], study["ments"]
    now = predicted_halfwidths(docs, ments, config, current, OutcomeRates(), runs=20)  # type: ignore[arg-type]
    assert list(now.columns) == ["dataset", "system", "halfwidth"] and len(now) == 4
    found = documents_for_target(docs, ments, config, current, OutcomeRates(), target=0.99, runs=20)  # type: ignore[arg-type]
    assert now.groupby("dataset")["halfwidth"].max().to_dict() == {d: row["widest_now"] for d, row in found.items()}
    later = predicted_halfwidths(docs, ments, config, {"set0": 30, "set1": 30}, OutcomeRates(), runs=20)  # type: ignore[arg-type]
    assert (later["halfwidth"].to_numpy() < now["halfwidth"].to_numpy()).all()
