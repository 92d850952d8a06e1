"""Study design: items, judgements, assignment to workers, control tasks, per-worker order.

Implements paper 000, section 2.1 (one worker verifies every annotation of a system in a chunk;
batches ("HITs") of 20 tasks with one control task of three control annotations; workers get
"annotations randomly drawn from model/dataset combinations") and paper 004, section 4 ("providing
each individual worker with a separate dataset that has been randomised, such that no two workers
see the same ordered data").

Rules, all seeded by ``config.seed`` and pure (tables in, tables out):

* **items** = chunk x system, only for pairs where the system has at least one annotation in the
  chunk (a task with nothing to verify would only waste a worker's time); ``item_id`` is ``i000000``,
  ... in (chunk, system) order and is never shown to workers.
* each item is judged ``k`` times, by ``k`` different workers (replicates ``0..k-1``).
* **assignment**: chunks are taken in a seeded random order; all slots of a chunk (its items times
  ``k``) go to *distinct* workers, the least loaded ones with random tie-breaking. Hence no worker sees
  one chunk twice (neither from two systems nor the same item twice), loads differ by at most one
  task, and each worker's tasks are a random draw over datasets and systems.
* **workers**: ``n_workers`` if set, else as many as there are batches (one batch a worker, as with
  the paper's HITs), and never fewer than the largest number of slots of one chunk.
* **order**: each worker's real tasks, in canonical (item, replicate) order, are permuted by a
  generator seeded with ``(seed, sha256(worker id))`` (:func:`posthoc.study.plan.keys.worker_rng`), cut into
  batches of ``tasks_per_batch - 1`` (sizes as equal as possible), and the batch's control task is put
  at a random place in it by the same generator.
* **control tasks** (system ``CONTROL``): a chunk the worker does not otherwise see, with exactly three
  annotations: ground-truth annotations left as they are (expected ``verify``), ground-truth
  annotations whose link is swapped for another entity's link (expected ``edit``; the original link
  is kept as ``expected_link``) and spans over a word that no system annotated, given a random link
  (expected ``remove``). The mix is drawn at random: 1 or 2 correct, the rest corrupted.

This module makes the items and the plan's tables; the workers, the assignment and each worker's order are
:mod:`posthoc.study.plan.assignment`, the control tasks :mod:`posthoc.study.plan.control_tasks`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from posthoc.arrays import Ints
from posthoc.errors import PosthocInputError
from posthoc.study.plan._columns import object_values
from posthoc.study.plan.assignment import TaskRow, assign_slots, sequence_tasks, study_workers
from posthoc.study.plan.chunking import chunk_documents
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import CONTROL_SYSTEM, ControlTask, control_pool
from posthoc.study.plan.keys import mention_keys, stream_rng, task_key
from posthoc.tables import DOCUMENT_COLUMNS, MENTION_COLUMNS, require_columns

#: columns of :attr:`StudyPlan.tasks` (the order of :meth:`posthoc.study.plan.manifest.Manifest.tasks`)
TASK_COLUMNS = ("task_key", "worker", "position", "batch", "item_id", "chunk_id", "dataset", "doc_id", "system",
                "is_control", "text", "chunk_start")
#: columns of :attr:`StudyPlan.prefill`
PREFILL_COLUMNS = ("task_key", "mention_id", "start", "end", "doc_start", "doc_end", "surface", "link", "is_nil",
                   "expected_outcome", "expected_link")


@dataclass(frozen=True)
class StudyPlan:
    """A planned study: every table the manifest stores (see :mod:`posthoc.study.plan.manifest`).

    ``items``: ``item_id, chunk_id, system, replicates, n_mentions, is_control``;
    ``tasks``: :data:`TASK_COLUMNS` plus ``replicate``, sorted by worker then position;
    ``prefill``: :data:`PREFILL_COLUMNS`, sorted by task (as in ``tasks``) then text order;
    ``chunks``: see :class:`posthoc.study.plan.chunking.Chunking`.
    """

    config: StudyConfig
    documents: pd.DataFrame
    source_mentions: pd.DataFrame
    chunks: pd.DataFrame
    items: pd.DataFrame
    tasks: pd.DataFrame
    prefill: pd.DataFrame
    workers: tuple[str, ...]
    summary: dict[str, Any] = field(default_factory=dict)

    def digest(self) -> str:
        """SHA-256 over the config and every table: equal digests mean equal plans (computed once)."""
        cached = self.__dict__.get("_digest")
        if cached is None:
            hasher = hashlib.sha256(self.config.to_json().encode("utf-8"))
            for name in ("documents", "source_mentions", "chunks", "items", "tasks", "prefill"):
                frame: pd.DataFrame = getattr(self, name)
                hasher.update(f"{name}:{','.join(map(str, frame.columns))}:{len(frame)}".encode())
                for column in frame.columns:
                    series = frame[column]
                    if series.dtype.kind in "biu":
                        hasher.update(series.to_numpy(dtype=np.int64).tobytes())
                    else:  # strings (None as U+0000), one U+001E between values
                        values = object_values(series).tolist()
                        joined = "\x1e".join("\x00" if v is None else str(v) for v in values)
                        hasher.update(joined.encode("utf-8", "surrogatepass"))
            hasher.update("|".join(self.workers).encode("utf-8"))
            cached = hasher.hexdigest()
            self.__dict__["_digest"] = cached
        return str(cached)


def _normalise(documents: pd.DataFrame, mentions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    require_columns(documents, DOCUMENT_COLUMNS, table="documents")
    require_columns(mentions, MENTION_COLUMNS, table="mentions")
    for column in ("dataset", "doc_id", "system", "start", "end"):
        missing = mentions[column].isna()
        if missing.any():
            row = mentions[missing].iloc[0]
            raise PosthocInputError(
                f"mentions table: {int(missing.sum())} row(s) lack {column} (first: document {row['doc_id']!r} of "
                f"dataset {row['dataset']!r}, system {row['system']!r}); give every mention a value"
            )
    docs = pd.DataFrame({c: documents[c].astype(str).to_numpy(dtype=object) for c in DOCUMENT_COLUMNS})
    docs = docs.sort_values(["dataset", "doc_id"], kind="stable").reset_index(drop=True)
    ments = pd.DataFrame({
        "dataset": mentions["dataset"].astype(str).to_numpy(dtype=object),
        "doc_id": mentions["doc_id"].astype(str).to_numpy(dtype=object),
        "system": mentions["system"].astype(str).to_numpy(dtype=object),
        "start": mentions["start"].astype("int64").to_numpy(),
        "end": mentions["end"].astype("int64").to_numpy(),
        "surface": mentions["surface"].astype(object).where(mentions["surface"].notna(), None).to_numpy(),
        "link": mentions["link"].astype(object).where(mentions["link"].notna(), None).to_numpy(),
        "link_original": mentions["link_original"].astype(object).where(mentions["link_original"].notna(), None)
        .to_numpy(),
        "is_nil": mentions["is_nil"].fillna(False).astype(bool).to_numpy(),
    })
    if (ments["system"] == CONTROL_SYSTEM).any():
        raise PosthocInputError(f"system name {CONTROL_SYSTEM!r} is reserved for control tasks; rename that system")
    ments = ments.sort_values(["dataset", "doc_id", "system", "start", "end", "link"], kind="stable",
                              na_position="first").reset_index(drop=True)
    return docs, ments


def plan_study(documents: pd.DataFrame, mentions: pd.DataFrame, config: StudyConfig, *,
               key_secret: bytes | None = None) -> StudyPlan:
    """Plan a study over ``documents`` (``dataset, doc_id, text``) and ``mentions`` (all systems, GT included).

    Pure and seeded by ``config.seed``: the same tables and config give an identical plan (also when
    the rows come in another order). See the module docstring for the rules. Raises
    :class:`PosthocInputError` when there is nothing to verify, when ``n_workers`` is too small for
    a chunk's slots or larger than the number of tasks, or when control tasks cannot be built.

    ``key_secret``: the study's secret for the task keys and mention ids (:mod:`posthoc.study.plan.keys`);
    ``posthoc study plan`` and the demo always pass the one kept beside the manifest. ``None`` gives
    unkeyed keys that anyone can recompute from the study's name, seed and worker ids: simulations only.
    """
    docs, ments = _normalise(documents, mentions)
    chunking = chunk_documents(docs, ments, max_chars=config.max_chars)
    chunks = chunking.chunks
    cm = chunking.mentions
    if cm.empty:
        raise PosthocInputError("the inputs hold no annotations: there is nothing to verify")

    # items = (chunk, system) pairs with at least one annotation; each judged k times (a slot a judgement)
    item_keys = cm.groupby(["chunk_id", "system"], sort=True).size().reset_index(name="n_mentions")
    item_keys["item_id"] = [f"i{i:06d}" for i in range(len(item_keys))]
    k = config.k
    n_items = len(item_keys)
    chunk_codes, _ = pd.factorize(item_keys["chunk_id"], sort=True)
    slot_item = np.repeat(np.arange(n_items), k)
    slot_replicate = np.tile(np.arange(k), n_items)
    workers = study_workers(config, np.bincount(chunk_codes) * k, n_items * k)
    slot_worker = assign_slots(chunk_codes[slot_item], len(workers), stream_rng(config.seed, "assignment"))

    pool = control_pool(chunking) if config.control_tasks else None
    chunk_row_of_id = {cid: i for i, cid in enumerate(chunks["chunk_id"])}
    item_chunk_row = np.array([chunk_row_of_id[c] for c in item_keys["chunk_id"]], dtype=np.int64)
    task_rows, control_tasks = sequence_tasks(workers, slot_worker, slot_item, slot_replicate, item_chunk_row, pool,
                                              seed=config.seed, real_per_batch=config.real_tasks_per_batch)

    tasks = _task_table(task_rows, item_keys, item_chunk_row, control_tasks, chunks, config, key_secret)
    prefill = _prefill_table(tasks, cm, control_tasks, chunks, config, key_secret)
    items = _items_table(item_keys, control_tasks, chunks, k)
    plan_chunks = chunks[["dataset", "doc_id", "chunk_id", "chunk_index", "chunk_start", "chunk_end", "text", "cut",
                          "oversized"]].reset_index(drop=True)
    return StudyPlan(config=config, documents=docs, source_mentions=ments.reset_index(drop=True), chunks=plan_chunks,
                     items=items, tasks=tasks, prefill=prefill, workers=workers,
                     summary=_summary(config, docs, chunks, cm, n_items, workers, tasks, prefill, control_tasks))


def _summary(config: StudyConfig, docs: pd.DataFrame, chunks: pd.DataFrame, cm: pd.DataFrame, n_items: int,
             workers: tuple[str, ...], tasks: pd.DataFrame, prefill: pd.DataFrame,
             control_tasks: list[ControlTask]) -> dict[str, Any]:
    """The plan's counts, as ``posthoc study plan`` prints them."""
    per_worker = tasks.groupby("worker").size()
    return {
        "study": config.name,
        "seed": config.seed,
        "k": config.k,
        "documents": len(docs),
        "chunks": len(chunks),
        "oversized_chunks": int(chunks["oversized"].sum()),
        "systems": sorted(set(cm["system"])),
        "items": n_items,
        "workers": len(workers),
        "tasks": len(tasks),
        "tasks_per_worker_min": int(per_worker.min()),
        "tasks_per_worker_max": int(per_worker.max()),
        "control_tasks": len(control_tasks),
        "annotations": int((prefill["expected_outcome"].isna()).sum()),
        "control_annotations": int(prefill["expected_outcome"].notna().sum()),
    }


def _task_table(task_rows: list[TaskRow], item_keys: pd.DataFrame, item_chunk_row: Ints,
                controls: list[ControlTask], chunks: pd.DataFrame,
                config: StudyConfig, key_secret: bytes | None) -> pd.DataFrame:
    raw = pd.DataFrame(task_rows, columns=["worker", "position", "batch", "item", "replicate", "control"])
    item_index = raw["item"].to_numpy()
    control_index = raw["control"].to_numpy()
    is_control = item_index < 0
    control_rows = np.array([control.chunk_row for control in controls], dtype=np.int64)
    control_ids = np.array([control.item_id for control in controls], dtype=object)
    chunk_row = np.where(is_control, control_rows[np.maximum(control_index, 0)] if len(controls) else 0,
                         item_chunk_row[np.maximum(item_index, 0)])
    item_ids = item_keys["item_id"].to_numpy(dtype=object)
    systems = item_keys["system"].to_numpy(dtype=object)
    control_item = control_ids[np.maximum(control_index, 0)] if len(controls) else np.full(len(raw), "")
    item_id = np.where(is_control, control_item, item_ids[np.maximum(item_index, 0)])
    tasks = pd.DataFrame({
        "task_key": [task_key(config.name, config.seed, w, i, r, key=key_secret)
                     for w, i, r in zip(raw["worker"], item_id, raw["replicate"], strict=True)],
        "worker": raw["worker"].to_numpy(dtype=object),
        "position": raw["position"].astype("int64"),
        "batch": raw["batch"].astype("int64"),
        "item_id": item_id,
        "chunk_id": chunks["chunk_id"].to_numpy(dtype=object)[chunk_row],
        "dataset": chunks["dataset"].to_numpy(dtype=object)[chunk_row],
        "doc_id": chunks["doc_id"].to_numpy(dtype=object)[chunk_row],
        "system": np.where(is_control, CONTROL_SYSTEM, systems[np.maximum(item_index, 0)]),
        "is_control": is_control,
        "text": chunks["text"].to_numpy(dtype=object)[chunk_row],
        "chunk_start": chunks["chunk_start"].to_numpy()[chunk_row].astype("int64"),
        "replicate": raw["replicate"].astype("int64"),
    })
    if tasks["task_key"].duplicated().any():  # 80-bit keys: practically impossible, but never silent
        raise PosthocInputError("two tasks got the same key; change the study name or seed")
    return tasks


def _prefill_table(tasks: pd.DataFrame, cm: pd.DataFrame,
                   controls: list[ControlTask], chunks: pd.DataFrame,
                   config: StudyConfig, key_secret: bytes | None) -> pd.DataFrame:
    real = tasks.loc[~tasks["is_control"], ["task_key", "chunk_id", "system"]].reset_index(names="task_order")
    joined = real.merge(cm[["chunk_id", "system", "start", "end", "doc_start", "doc_end", "surface", "link", "is_nil"]],
                        on=["chunk_id", "system"], how="inner")
    joined["expected_outcome"] = None
    joined["expected_link"] = None
    control_rows: list[dict[str, Any]] = []
    control_tasks = tasks[tasks["is_control"]]
    chunk_start = chunks["chunk_start"].to_numpy()
    for order, key, control in zip(control_tasks.index, control_tasks["task_key"], controls, strict=True):
        offset = int(chunk_start[control.chunk_row])
        for annotation in control.annotations:
            control_rows.append({"task_order": order, "task_key": key, **annotation,
                                 "doc_start": offset + annotation["start"], "doc_end": offset + annotation["end"]})
    frames = [joined.drop(columns=["chunk_id", "system"])]
    if control_rows:
        frames.append(pd.DataFrame(control_rows))
    prefill = pd.concat(frames, ignore_index=True)
    prefill["link"] = prefill["link"].astype(object).where(prefill["link"].notna(), None)
    prefill = prefill.sort_values(["task_order", "start", "end", "link"], kind="stable", na_position="first")
    index_in_task = prefill.groupby("task_order").cumcount().to_numpy()
    prefill["mention_id"] = mention_keys(config.name, config.seed, prefill["task_key"].tolist(),
                                         index_in_task.tolist(), key=key_secret)
    prefill = prefill[list(PREFILL_COLUMNS)].reset_index(drop=True)
    return prefill.astype({"start": "int64", "end": "int64", "doc_start": "int64", "doc_end": "int64",
                           "is_nil": bool})


def _items_table(item_keys: pd.DataFrame, controls: list[ControlTask],
                 chunks: pd.DataFrame, k: int) -> pd.DataFrame:
    real = pd.DataFrame({"item_id": item_keys["item_id"], "chunk_id": item_keys["chunk_id"],
                         "system": item_keys["system"], "replicates": k,
                         "n_mentions": item_keys["n_mentions"].astype("int64"), "is_control": False})
    control = pd.DataFrame({
        "item_id": [control.item_id for control in controls],
        "chunk_id": [chunks["chunk_id"].iloc[control.chunk_row] for control in controls],
        "system": CONTROL_SYSTEM, "replicates": 1, "n_mentions": 3, "is_control": True,
    })
    return pd.concat([real, control], ignore_index=True) if len(control) else real
