"""Adding a system to a study, pure: reused against novel, the sample's size and draw, the revision's tasks.

Hand-worked: a two-document study with emoji, combining marks and CJK (offsets are code points) where the new
system's annotations are reused only with the same document, span and canonical link (a DBpedia form of a study
link is the same link); the sample sizes of ``--fraction`` and ``--target-halfwidth`` from the formula of
:mod:`posthoc.study.planner.added_system` worked by hand, and its half-width against simulated cluster samples.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from study_factory import make_corpus

import posthoc.study.plan.add_system as add_system_module
import posthoc.study.planner.added_system as added_system_module
from posthoc.errors import PosthocInputError
from posthoc.study.plan.add_system import (
    REUSED,
    SAMPLED,
    UNPLACED,
    UNSAMPLED,
    added_before,
    place_system,
    plan_added_system,
    sample_chunks,
)
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.design import plan_study
from posthoc.study.plan.manifest import Manifest
from posthoc.study.planner.added_system import (
    AddedDesign,
    chunk_correlation,
    chunks_for_fraction,
    chunks_for_halfwidth,
    weighted_size,
)
from posthoc.tables import MENTION_COLUMNS

TEXT_A = "Zoë 🎉 flew to 東京. She met Léa there."
TEXT_B = "Nguyễn visited São Paulo. Then Paris."


def _span(text: str, word: str) -> tuple[int, int]:
    start = text.index(word)
    return start, start + len(word)


def _mention(doc: str, text: str, system: str, word: str, link: str) -> tuple[object, ...]:
    start, end = _span(text, word)
    return ("news", doc, system, start, end, word, link, link, link == "nil:")


def _hand_study(tmp_path: Path) -> tuple[dict[str, pd.DataFrame], StudyConfig]:
    documents = pd.DataFrame({"dataset": ["news", "news"], "doc_id": ["a", "b"], "text": [TEXT_A, TEXT_B]})
    rows = [
        _mention("a", TEXT_A, "GT", "Zoë", "https://en.wikipedia.org/wiki/Zo%C3%AB"),
        _mention("a", TEXT_A, "GT", "東京", "https://en.wikipedia.org/wiki/Tokyo"),
        _mention("a", TEXT_A, "E2E", "東京", "https://en.wikipedia.org/wiki/Tokyo_Station"),
        _mention("a", TEXT_A, "E2E", "Léa", "https://en.wikipedia.org/wiki/L%C3%A9a"),
        _mention("b", TEXT_B, "GT", "São Paulo", "https://en.wikipedia.org/wiki/S%C3%A3o_Paulo"),
        _mention("b", TEXT_B, "E2E", "Paris", "https://en.wikipedia.org/wiki/Paris"),
    ]
    mentions = pd.DataFrame(rows, columns=list(MENTION_COLUMNS))
    config = StudyConfig(name="hand", seed=5, k=1, tasks_per_batch=3, max_chars=20, n_workers=4, control_tasks=False)
    plan = plan_study(documents, mentions, config)
    return Manifest.create(tmp_path / "m.sqlite", plan).raw_tables(), config


def test_reused_only_with_the_same_document_span_and_canonical_link(tmp_path: Path) -> None:
    tables, _ = _hand_study(tmp_path)
    documents = tables["documents"]
    rows = [
        _mention("a", TEXT_A, "NEW", "Zoë", "dbr:Zoë"),  # GT's link in DBpedia form: reused from GT
        _mention("a", TEXT_A, "NEW", "東京", "Tokyo"),  # a bare title of GT's link: reused from GT
        _mention("a", TEXT_A, "NEW", "Léa", "https://en.wikipedia.org/wiki/Lea"),  # E2E's span, another link: novel
        _mention("a", TEXT_A, "NEW", "🎉", "https://en.wikipedia.org/wiki/Party"),  # a new span: novel
        _mention("b", TEXT_B, "NEW", "Paris", "http://en.m.wikipedia.org/wiki/Paris"),  # E2E's, mobile URL: reused
        _mention("b", TEXT_B, "NEW", "Nguyễn", "nil:"),  # a new NIL span: novel
    ]
    new = place_system(tables, documents, pd.DataFrame(rows, columns=list(MENTION_COLUMNS)), system="NEW")
    got = new.annotations.set_index("surface")
    assert got.loc[["Zoë", "東京", "Paris"], "reused"].all()
    assert not got.loc[["Léa", "🎉", "Nguyễn"], "reused"].any()
    assert got.loc["Zoë", "reused_from"] == "GT" and got.loc["Paris", "reused_from"] == "E2E"
    assert got.loc["東京", "reused_from"] == "GT"  # E2E had 東京 with another link
    # offsets are code points: 🎉 is one, at 4; the chunk's text holds the span at its chunk-relative offset
    assert (got.loc["🎉", "start"], got.loc["🎉", "end"]) == (4, 5)
    chunks = tables["chunks"].set_index("chunk_id")
    for surface, row in got.iterrows():
        text = chunks.loc[row["chunk_id"], "text"]
        offset = int(chunks.loc[row["chunk_id"], "chunk_start"])
        assert text[row["start"] - offset:row["end"] - offset] == surface
    # a hook that refuses every reuse leaves every annotation novel
    refused = place_system(tables, documents, pd.DataFrame(rows, columns=list(MENTION_COLUMNS)), system="NEW",
                           reusable=lambda frame: np.zeros(len(frame), dtype=bool))
    assert not refused.annotations["reused"].any() and refused.annotations["reused_from"].notna().sum() == 3


def test_the_revision_shows_every_annotation_of_a_sampled_chunk_and_records_each_status(tmp_path: Path) -> None:
    tables, config = _hand_study(tmp_path)
    rows = [_mention("a", TEXT_A, "NEW", "Zoë", "dbr:Zoë"), _mention("a", TEXT_A, "NEW", "🎉", "Party"),
            _mention("b", TEXT_B, "NEW", "Paris", "Paris"), _mention("b", TEXT_B, "NEW", "Nguyễn", "Nguyễn")]
    new = place_system(tables, tables["documents"], pd.DataFrame(rows, columns=list(MENTION_COLUMNS)), system="NEW")
    novel = new.novel_chunks()
    chunk_of = dict(zip(new.annotations["surface"], new.annotations["chunk_id"], strict=True))
    assert novel == sorted({chunk_of["🎉"], chunk_of["Nguyễn"]})
    revision = plan_added_system(tables, config, new, [chunk_of["🎉"]], revision=1, key_secret=None)
    status = dict(zip(revision.added_annotations["surface"], revision.added_annotations["status"], strict=True))
    assert status == {"Zoë": REUSED, "🎉": SAMPLED, "Paris": REUSED, "Nguyễn": UNSAMPLED}
    (task,) = revision.tasks.itertuples()
    assert task.system == "NEW" and task.chunk_id == chunk_of["🎉"]
    shown = revision.prefill.loc[revision.prefill["task_key"] == task.task_key]
    # Zoë (reused) and 🎉 share the chunk: the task shows both, in text order, at chunk offsets
    assert list(shown["surface"]) == ["Zoë", "🎉"] and list(shown["start"]) == [0, 4]
    old = tables["tasks"]
    assert chunk_of["🎉"] not in set(old.loc[old["worker"] == task.worker, "chunk_id"])  # blind: a fresh worker
    assert task.position == int(old.loc[old["worker"] == task.worker, "position"].max()) + 1
    assert json.loads(json.dumps(revision.parameters))["sampled_chunks"] == [chunk_of["🎉"]]


def test_an_annotation_across_a_stored_cut_is_unplaced(tmp_path: Path) -> None:
    tables, config = _hand_study(tmp_path)
    chunks = tables["chunks"].loc[tables["chunks"]["doc_id"] == "a"].sort_values("chunk_start")
    assert len(chunks) >= 2
    end_of_first = int(chunks["chunk_end"].iloc[0])
    start, end = end_of_first - 2, int(chunks["chunk_start"].iloc[1]) + 2
    row = ("news", "a", "NEW", start, end, TEXT_A[start:end], "X", "X", False)
    new = place_system(tables, tables["documents"], pd.DataFrame([row], columns=list(MENTION_COLUMNS)),
                       system="NEW")
    revision = plan_added_system(tables, config, new, [], revision=1, key_secret=None)
    assert list(revision.added_annotations["status"]) == [UNPLACED] and not len(revision.tasks)
    assert not revision.empty  # the manifest records the system all the same


@pytest.mark.parametrize(("change", "message"), [
    ("other document", "is not in the study"),
    ("other text", "another text"),
    ("missing document", "lacks 1 of the study's 2 documents"),
    ("other system", "not 'NEW'"),
])
def test_another_document_set_or_system_is_refused(tmp_path: Path, change: str, message: str) -> None:
    tables, _ = _hand_study(tmp_path)
    documents = tables["documents"][["dataset", "doc_id", "text"]].copy()
    rows = [_mention("a", TEXT_A, "NEW", "Zoë", "Zoë")]
    if change == "other document":
        documents.loc[len(documents)] = ["news", "c", "Other."]
    elif change == "other text":
        documents.loc[1, "text"] = TEXT_B + " More."
    elif change == "missing document":
        documents = documents.iloc[:1]
    else:
        rows.append(_mention("a", TEXT_A, "REL", "東京", "Tokyo"))
    with pytest.raises(PosthocInputError, match=message):
        place_system(tables, documents, pd.DataFrame(rows, columns=list(MENTION_COLUMNS)), system="NEW")


def test_a_study_system_name_is_refused_and_a_rerun_finds_the_earlier_revision(tmp_path: Path) -> None:
    tables, config = _hand_study(tmp_path)
    rows = pd.DataFrame([_mention("a", TEXT_A, "E2E", "Zoë", "Zoë")], columns=list(MENTION_COLUMNS))
    with pytest.raises(PosthocInputError, match="already in the study"):
        added_before(tables, place_system(tables, tables["documents"], rows, system="E2E"))
    rows["system"] = "NEW"
    new = place_system(tables, tables["documents"], rows, system="NEW")
    assert added_before(tables, new) is None
    revision = plan_added_system(tables, config, new, new.novel_chunks(), revision=1, key_secret=None)
    after = revision.apply(tables, created="2026-01-01T00:00:00Z")
    assert added_before(after, new) == 1
    other = place_system(after, after["documents"], rows.assign(link="Zoe"), system="NEW")
    with pytest.raises(PosthocInputError, match="with other annotations"):
        added_before(after, other)


def test_fraction_rounds_up_and_the_draw_is_seeded_and_nested() -> None:
    assert [chunks_for_fraction(c, f) for c, f in ((20, 0.25), (21, 0.25), (10, 1.0), (7, 0.5), (0, 0.5))] == \
        [5, 6, 10, 4, 0]
    with pytest.raises(PosthocInputError):
        chunks_for_fraction(10, 0)
    chunks = [f"c{i:06d}" for i in range(40)]
    draws = [sample_chunks(chunks, n, seed=11, system="NEW") for n in (5, 10, 40)]
    assert draws[0] == sample_chunks(chunks, 5, seed=11, system="NEW")
    assert set(draws[0]) <= set(draws[1]) and draws[2] == chunks
    assert draws[1] != sample_chunks(chunks, 10, seed=12, system="NEW")
    assert draws[1] != sample_chunks(chunks, 10, seed=11, system="OTHER")


def test_target_halfwidth_sample_size_worked_by_hand() -> None:
    # M = 100 annotations, N = 60 novel in C = 20 chunks (m = 3), p = 0.9, rho = 0:
    # h(n) = 1.96 * 0.6 * sqrt((1 - n/20) * 0.09 / (3 n)); h(9) = 0.05035 > 0.05 >= h(10) = 0.04555
    design = AddedDesign(annotations=100, novel=60, novel_chunks=20, verified=0.9)
    assert design.halfwidth(9) == pytest.approx(1.96 * 0.6 * np.sqrt(11 / 20 * 0.09 / 27), rel=1e-4)
    assert chunks_for_halfwidth(design, 0.05) == 10
    assert chunks_for_halfwidth(design, 0.5) == 2  # never fewer than two chunks
    assert chunks_for_halfwidth(design, 1e-6) == 20  # only all of them reach an interval of nothing
    # rho = 0.5 with m = 3: design effect 2, so the variance at n doubles
    clustered = AddedDesign(annotations=100, novel=60, novel_chunks=20, verified=0.9, correlation=0.5)
    assert clustered.design_effect == pytest.approx(2.0)
    assert clustered.halfwidth(10) == pytest.approx(np.sqrt(2) * design.halfwidth(10))
    assert chunks_for_halfwidth(clustered, 0.05) == 13  # h(12) = 0.0526, h(13) = 0.0473


def test_the_halfwidth_matches_simulated_cluster_samples() -> None:
    """200 chunks of 1-6 novel annotations with a shared chunk effect (rho ~ 0.15), 60 sampled, the ratio
    estimator: the formula's half-width (rho from the verdicts, the size-weighted chunk size) against 1.96 x the
    standard deviation of the estimated precision over 4,000 simulated samples, in four simulated studies."""
    for seed in (3, 4, 5, 6):
        rng = np.random.default_rng(seed)
        n_chunks, reused, verified_reused = 200, 400, 360
        sizes = rng.integers(1, 7, n_chunks)
        probability = np.clip(0.85 + rng.normal(0, 0.2, n_chunks), 0, 1)
        verdicts = [rng.random(m) < q for m, q in zip(sizes, probability, strict=True)]
        novel, verified = int(sizes.sum()), np.array([v.sum() for v in verdicts])
        estimates = []
        for _ in range(4000):
            pick = rng.choice(n_chunks, 60, replace=False)
            estimates.append((verified_reused + novel * verified[pick].sum() / sizes[pick].sum()) / (reused + novel))
        judgements = pd.DataFrame({"task_key": np.repeat(np.arange(n_chunks), sizes).astype(str),
                                   "outcome": np.where(np.concatenate(verdicts), "verify", "edit")})
        rho = chunk_correlation(judgements)
        assert 0.05 < rho < 0.4
        design = AddedDesign(annotations=reused + novel, novel=novel, novel_chunks=n_chunks,
                             verified=float(np.concatenate(verdicts).mean()), correlation=rho,
                             weighted_size=weighted_size(sizes.tolist()))
        assert design.halfwidth(60) == pytest.approx(1.96 * np.std(estimates), rel=0.1), seed


def test_chunk_correlation_worked_by_hand() -> None:
    # tasks a = (1, 1, 0), b = (0, 0, 0): MSB = 2/3, MSW = 1/6, n0 = 3: rho = (2/3 - 1/6) / (2/3 + 2/6) = 0.5
    frame = pd.DataFrame({"task_key": list("aaabbb"), "outcome": ["verify", "verify", "edit", "edit", "remove",
                                                                   "edit"]})
    assert chunk_correlation(frame) == pytest.approx(0.5)
    assert chunk_correlation(frame.iloc[:3]) == 0.0  # one task: nothing to estimate


def test_a_synthetic_study_gets_k_blind_judges_a_sampled_chunk_reproducibly() -> None:
    documents, mentions = make_corpus(24, systems=("GT", "E2E", "REL"), datasets=2, seed=4)
    study = mentions.loc[mentions["system"] != "REL"]
    config = StudyConfig(name="add", seed=9, k=2, tasks_per_batch=6, n_workers=10)
    plan = plan_study(documents, study, config)
    tables = {"workers": pd.DataFrame({"worker": list(plan.workers), "ord": range(len(plan.workers))}),
              "documents": plan.documents, "source_mentions": plan.source_mentions, "chunks": plan.chunks,
              "items": plan.items, "tasks": plan.tasks, "prefill": plan.prefill.assign(
                  ord=plan.prefill.groupby("task_key", sort=False).cumcount()),
              "revisions": pd.DataFrame({c: [] for c in ("number", "kind", "created", "parameters", "digest")}),
              "task_revisions": pd.DataFrame({c: [] for c in ("task_key", "revision", "withdrawn_in",
                                                              "withdrawn_reason")})}
    new = place_system(tables, documents, mentions.loc[mentions["system"] == "REL"], system="REL")
    assert new.annotations["reused"].any() and new.novel.any()
    n = chunks_for_fraction(len(new.novel_chunks()), 0.5)
    sampled = sample_chunks(new.novel_chunks(), n, seed=config.seed, system="REL")
    revision = plan_added_system(tables, config, new, sampled, revision=1, key_secret=None)
    again = plan_added_system(tables, config, new, sample_chunks(new.novel_chunks(), n, seed=config.seed,
                                                                 system="REL"), revision=1, key_secret=None)
    assert revision.digest() == again.digest()
    real = revision.tasks.loc[~revision.tasks["is_control"].astype(bool)]
    assert sorted(set(real["chunk_id"])) == sampled and (real.groupby("chunk_id").size() == 2).all()
    old = plan.tasks
    for worker, group in real.groupby("worker"):
        assert set(group["chunk_id"]).isdisjoint(old.loc[old["worker"] == worker, "chunk_id"]), worker
    controls = revision.tasks.loc[revision.tasks["is_control"].astype(bool)]
    assert set(controls["batch"]) >= set(real["batch"])  # every new batch has its control task
    # every task shows every REL annotation of its chunk
    rel = new.annotations.loc[new.annotations["chunk_id"].isin(sampled)]
    for key, chunk in zip(real["task_key"], real["chunk_id"], strict=True):
        shown = revision.prefill.loc[revision.prefill["task_key"] == key]
        assert len(shown) == int((rel["chunk_id"] == chunk).sum())
    status = revision.added_annotations["status"]
    assert set(status) <= {REUSED, SAMPLED, UNSAMPLED, UNPLACED}
    assert int((status == SAMPLED).sum()) == int((new.novel & new.annotations["chunk_id"].isin(sampled)).sum())


def test_examples() -> None:
    for module in (add_system_module, added_system_module):
        assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_new_accounts_take_a_chunk_every_worker_has_seen(tmp_path: Path) -> None:
    tables, config = _hand_study(tmp_path)
    tasks = tables["tasks"]
    new = place_system(tables, tables["documents"], pd.DataFrame(
        [_mention("a", TEXT_A, "NEW", "東京", "Kyoto")], columns=list(MENTION_COLUMNS)), system="NEW")
    (chunk,) = new.novel_chunks()
    seen_by = set(tasks.loc[tasks["chunk_id"] == chunk, "worker"])  # GT's and E2E's judges of the chunk
    assert len(seen_by) == 2
    narrowed = {**tables, "workers": tables["workers"].loc[tables["workers"]["worker"].isin(seen_by)]}
    with pytest.raises(PosthocInputError, match="new-workers"):
        plan_added_system(narrowed, config, new, [chunk], revision=1, key_secret=None)
    revision = plan_added_system(narrowed, config, new, [chunk], revision=1, key_secret=None, new_workers=2)
    assert len(revision.workers) == 1 and list(revision.tasks["worker"]) == list(revision.workers)
    assert revision.workers[0] not in set(tables["workers"]["worker"])
