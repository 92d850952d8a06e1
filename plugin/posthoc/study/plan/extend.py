"""Extend a running study with more documents: the next ones of the study's seeded document ranking.

The **ranking** (:func:`document_ranking`): within each dataset, the documents (sorted by ``doc_id``) in the
random order of ``stream_rng(seed, "document-sample")`` with the study's seed, the rule of
:func:`posthoc.study.planner.replicates.document_order` (which the estimate's target search samples by). The
sample of ``n`` documents of a dataset is its first ``n``. A study planned over the first ``n0`` documents of
each dataset and extended to ``n`` is the study of the first ``n``: its document sample is the one that would
have been planned at that size. A manifest whose documents are not such a prefix is extended all the same: the
documents it lacks are taken in ranking order (:attr:`Extension.prefix` says whether it was a prefix).

:func:`plan_extension` (pure): the new documents are chunked as the plan chunks them (:func:`study_chunking`
keeps the stored chunks' ids and checks that the stored documents still chunk the same), every (chunk, system)
pair with an annotation becomes an item judged ``k`` times, the slots go to the active workers (not those a
reassignment took out) by :func:`posthoc.study.plan.revision.assign_balanced` and are appended to each worker's
sequence in new batches with a control task each (:func:`posthoc.study.plan.revision.sequence_revision`). The
number of documents per dataset comes from the caller: ``posthoc study extend`` asks the estimate's machinery
(:func:`posthoc.study.planner.extension_target.documents_for_study_target`) or takes ``--documents``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import control_pool
from posthoc.study.plan.design import _normalise
from posthoc.study.plan.keys import stream_rng
from posthoc.study.plan.revision import (
    ITEM_PREFILL_COLUMNS,
    Revision,
    Tables,
    assign_balanced,
    assignment_rng,
    next_number,
    reject_duplicates,
    sequence_revision,
    study_chunking,
    taken_out,
)


def document_ranking(documents: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``dataset, doc_id, rank`` of every document: its place in its dataset's seeded order (module docstring)."""
    keys = documents[["dataset", "doc_id"]].astype(str).drop_duplicates().sort_values(["dataset", "doc_id"])
    keys = keys.reset_index(drop=True)
    rng = stream_rng(seed, "document-sample")
    rank = np.empty(len(keys), dtype=np.int64)
    for dataset in sorted(set(keys["dataset"])):
        members = np.flatnonzero((keys["dataset"] == dataset).to_numpy())
        rank[members[rng.permutation(len(members))]] = np.arange(len(members))
    return keys.assign(rank=rank)


@dataclass(frozen=True)
class Extension:
    """The new documents per dataset and the revision that adds them."""

    revision: Revision
    documents_before: dict[str, int]
    documents_after: dict[str, int]
    prefix: bool


def _check_inputs(tables: Tables, docs: pd.DataFrame, config: StudyConfig, study: str) -> None:
    if config.name != study:
        raise PosthocInputError(f"the config plans study {config.name!r} but the manifest is study {study!r}: "
                                "give the config the manifest was planned from")
    stored = tables["documents"]
    pool = dict(zip(zip(docs["dataset"], docs["doc_id"], strict=True), docs["text"], strict=True))
    for d, i, text in zip(stored["dataset"], stored["doc_id"], stored["text"], strict=True):
        if pool.get((str(d), str(i))) != str(text):
            what = "lack" if (str(d), str(i)) not in pool else "hold another text for"
            raise PosthocInputError(f"the config's inputs {what} document {i!r} of dataset {d!r} of the manifest: "
                                    "give the config the manifest was planned from")


def plan_extension(tables: Tables, config: StudyConfig, documents: pd.DataFrame, mentions: pd.DataFrame,
                   documents_per_dataset: Mapping[str, int], *, study: str, revision: int,
                   key_secret: bytes | None, inactive: Collection[str] = ()) -> Extension:
    """The revision that brings each dataset to ``documents_per_dataset[dataset]`` documents (module docstring).

    ``tables``: the manifest's stored tables (:meth:`~posthoc.study.plan.manifest.Manifest.raw_tables`);
    ``documents``/``mentions``: the study config's inputs (the pool); ``config``: the manifest's settings, with
    its name; a dataset not named keeps its documents. The new slots go to every worker but those an earlier
    reassignment took out (:func:`~posthoc.study.plan.revision.taken_out`) and those in ``inactive``.
    Raises PosthocInputError for inputs of another study, an unknown dataset or a count below the study's.
    """
    docs, ments = _normalise(documents, mentions)
    _check_inputs(tables, docs, config, study)
    ranking = document_ranking(docs, config.seed)
    have = set(zip(tables["documents"]["dataset"].astype(str), tables["documents"]["doc_id"].astype(str),
                   strict=True))
    ranking["have"] = [(d, i) in have for d, i in zip(ranking["dataset"], ranking["doc_id"], strict=True)]
    before = {str(d): int(n) for d, n in ranking.groupby("dataset")["have"].sum().items()}
    unknown = sorted(set(documents_per_dataset) - set(before))
    if unknown:
        raise PosthocInputError(f"unknown dataset(s) {unknown}; the study's datasets: {sorted(before)}")
    prefix = all(bool(g.sort_values("rank")["have"].iloc[:before[str(d)]].all())
                 for d, g in ranking.groupby("dataset"))
    chosen: list[pd.DataFrame] = []
    after = dict(before)
    for dataset, n in sorted(documents_per_dataset.items()):
        size = int((ranking["dataset"] == dataset).sum())
        if not 0 < int(n) <= size or int(n) < before[dataset]:
            raise PosthocInputError(f"dataset {dataset!r}: {n} documents is not between the {before[dataset]} "
                                    f"the study has and the {size} its inputs hold")
        lacking = ranking.loc[(ranking["dataset"] == dataset) & ~ranking["have"]].sort_values("rank")
        chosen.append(lacking.iloc[:int(n) - before[dataset]])
        after[dataset] = int(n)
    new_keys = pd.concat(chosen, ignore_index=True) if chosen else ranking.iloc[:0]
    parameters = {"documents": after}
    if not len(new_keys):
        return Extension(Revision(revision, "extend", parameters), before, after, prefix)
    wanted = set(zip(new_keys["dataset"], new_keys["doc_id"], strict=True))
    new_docs = docs.loc[[(d, i) in wanted for d, i in zip(docs["dataset"], docs["doc_id"], strict=True)]]
    new_ments = ments.loc[[(d, i) in wanted for d, i in zip(ments["dataset"], ments["doc_id"], strict=True)]]
    all_docs = pd.concat([tables["documents"], new_docs], ignore_index=True)
    all_ments = pd.concat([tables["source_mentions"], new_ments], ignore_index=True)
    chunking, new_chunk = study_chunking(all_docs, all_ments, tables["chunks"], max_chars=config.max_chars)
    new_chunk_ids = set(chunking.chunks.loc[new_chunk, "chunk_id"])
    cm = chunking.mentions.loc[chunking.mentions["chunk_id"].isin(new_chunk_ids)]
    if cm.empty:
        raise PosthocInputError("the new documents hold no annotations: there is nothing to add")
    item_keys = cm.groupby(["chunk_id", "system"], sort=True).size().reset_index(name="n_mentions")
    first = next_number(tables["items"]["item_id"], "i")
    item_keys["item_id"] = [f"i{first + n:06d}" for n in range(len(item_keys))]
    slots = item_keys.loc[item_keys.index.repeat(config.k)].reset_index(drop=True)
    slots["replicate"] = np.tile(np.arange(config.k), len(item_keys))
    out = set(map(str, inactive)) | taken_out(tables["revisions"])
    workers = [str(w) for w in tables["workers"]["worker"] if str(w) not in out]
    slots["worker"] = assign_balanced(slots, workers, {}, assignment_rng(config.seed, revision))
    item_prefill = cm.merge(item_keys[["chunk_id", "system", "item_id"]], on=["chunk_id", "system"])
    item_prefill = item_prefill.sort_values(["item_id", "start", "end", "link"], kind="stable", na_position="first")
    pool = control_pool(chunking) if config.control_tasks else None
    sequenced = sequence_revision(tables, slots, item_prefill[list(ITEM_PREFILL_COLUMNS)], config=config,
                                  revision=revision, chunking=chunking, pool=pool, key_secret=key_secret)
    reject_duplicates(tables, sequenced.tasks)
    items = pd.DataFrame({"item_id": item_keys["item_id"], "chunk_id": item_keys["chunk_id"],
                          "system": item_keys["system"], "replicates": config.k,
                          "n_mentions": item_keys["n_mentions"].astype("int64"), "is_control": False})
    chunks = chunking.chunks.loc[new_chunk]
    return Extension(Revision(revision, "extend", parameters, tasks=sequenced.tasks, prefill=sequenced.prefill,
                              items=pd.concat([items, sequenced.items], ignore_index=True), chunks=chunks,
                              documents=new_docs, source_mentions=new_ments),
                     before, after, prefix)
