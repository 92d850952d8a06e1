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
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.study.plan._columns import object_values
from posthoc.study.plan.chunking import Chunking, chunk_documents
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.keys import mention_keys, stream_rng, task_key, worker_rng
from posthoc.tables import DOCUMENT_COLUMNS, GT_SYSTEM, MENTION_COLUMNS, require_columns

CONTROL_SYSTEM = "CONTROL"

#: columns of :attr:`StudyPlan.tasks` (the order of :meth:`posthoc.study.plan.manifest.Manifest.tasks`)
TASK_COLUMNS = ("task_key", "worker", "position", "batch", "item_id", "chunk_id", "dataset", "doc_id", "system",
                "is_control", "text", "chunk_start")
#: columns of :attr:`StudyPlan.prefill`
PREFILL_COLUMNS = ("task_key", "mention_id", "start", "end", "doc_start", "doc_end", "surface", "link", "is_nil",
                   "expected_outcome", "expected_link")
#: control compositions (verify, edit, remove): one or two correct annotations, the rest corrupted
CONTROL_MIXES = ((2, 1, 0), (2, 0, 1), (1, 2, 0), (1, 0, 2), (1, 1, 1))

_WORD = re.compile(r"\w+")


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


def worker_order(seed: int, worker: str, n_real: int, real_per_batch: int,
                 *, controls: bool) -> tuple[np.ndarray, list[int], list[int]]:
    """One worker's sequence: ``(permutation, batch_sizes, control_places)``.

    ``permutation`` orders the worker's ``n_real`` real tasks (given in canonical item order);
    ``batch_sizes`` are the real tasks of each batch (consecutive in the permutation); and
    ``control_places`` the 0-based place of the control task within each batch's sequence (empty
    without controls). A function of ``(seed, worker, n_real, real_per_batch)`` only.
    """
    rng = worker_rng(seed, worker)
    permutation = rng.permutation(n_real)
    n_batches = max(1, math.ceil(n_real / real_per_batch))
    base, extra = divmod(n_real, n_batches)
    sizes = [base + (1 if b < extra else 0) for b in range(n_batches)]
    places = [int(rng.integers(0, size + 1)) for size in sizes] if controls else []
    return permutation, sizes, places


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


def _assign(chunk_of_slot: np.ndarray, n_workers: int, rng: np.random.Generator) -> np.ndarray:
    """Worker index of every slot: all slots of a chunk to distinct, least-loaded workers."""
    order = np.argsort(chunk_of_slot, kind="stable")
    sorted_chunks = chunk_of_slot[order]
    boundaries = np.flatnonzero(np.diff(sorted_chunks)) + 1
    groups = np.split(order, boundaries)
    worker_of_slot = np.empty(len(chunk_of_slot), dtype=np.int64)
    # Workers are dealt out in rounds: each round is a fresh random permutation of all workers, so the
    # next worker in line is always one of the least loaded (loads differ by at most one). A worker
    # that already has a slot of the current chunk is skipped and stays first in line for the next.
    queue: deque[int] = deque()
    for g in rng.permutation(len(groups)).tolist():
        slots = groups[g]
        chosen: list[int] = []
        skipped: list[int] = []
        while len(chosen) < len(slots):
            if not queue:
                queue.extend(rng.permutation(n_workers).tolist())
            worker = queue.popleft()
            if worker in chosen:
                skipped.append(worker)
            else:
                chosen.append(worker)
        queue.extendleft(reversed(skipped))
        worker_of_slot[slots] = chosen
    return worker_of_slot


@dataclass
class _ControlPool:
    """Chunks that can hold a control task: their usable annotations, and (lazily) their free words."""

    chunk_rows: list[int]  # chunks with at least one usable ground-truth annotation, in order
    mentions: dict[int, list[tuple[int, int, str, str]]]  # chunk row -> [(start, end, surface, link)]
    spans: dict[int, list[tuple[int, int]]]  # chunk row -> every system's spans
    texts: np.ndarray
    links: list[str]
    _words: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)

    def words(self, row: int) -> list[tuple[int, int, str]]:
        """Words of the chunk that no system annotated (lowercase ones if there are any)."""
        found = self._words.get(row)
        if found is None:
            text = str(self.texts[row])
            mask = bytearray(len(text))
            for s, e in self.spans.get(row, []):
                mask[s:e] = b"\x01" * (e - s)
            free = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)
                    if mask.find(1, m.start(), m.end()) < 0]
            found = [w for w in free if w[2].islower() and len(w[2]) >= 2] or free
            self._words[row] = found
        return found

    def preferred(self, row: int) -> bool:
        """Whether every control mix can be drawn from this chunk."""
        return len(self.mentions[row]) >= 3 and len(self.links) >= 2 and len(self.words(row)) >= 2


def _control_pool(chunking: Chunking) -> _ControlPool:
    ments = chunking.mentions
    system = ments["system"].to_numpy(dtype=object)
    systems = sorted(set(system.tolist()))
    source = GT_SYSTEM if GT_SYSTEM in systems else (systems[0] if systems else None)
    link = object_values(ments["link"])
    is_nil = ments["is_nil"].to_numpy(dtype=bool)
    linked = ~is_nil & np.array([x is not None and str(x) != "" for x in link], dtype=bool)
    links = sorted({str(x) for x in link[linked]})
    chunk_codes = pd.Index(chunking.chunks["chunk_id"]).get_indexer(ments["chunk_id"])
    starts = ments["start"].to_numpy(dtype=np.int64)
    ends = ments["end"].to_numpy(dtype=np.int64)
    surface = object_values(ments["surface"])
    usable: dict[int, list[tuple[int, int, str, str]]] = {}
    chosen = np.flatnonzero((system == source) & linked)
    chosen = chosen[np.lexsort((link[chosen].astype(str), ends[chosen], starts[chosen], chunk_codes[chosen]))]
    for i in chosen.tolist():
        row = int(chunk_codes[i])
        kept = usable.setdefault(row, [])
        if kept and starts[i] < kept[-1][1]:
            continue  # keep a non-overlapping subset, in text order
        kept.append((int(starts[i]), int(ends[i]), str(surface[i]), str(link[i])))
    spans: dict[int, list[tuple[int, int]]] = {}
    for row, s, e in zip(chunk_codes.tolist(), starts.tolist(), ends.tolist(), strict=True):
        if row in usable:
            spans.setdefault(row, []).append((s, e))
    return _ControlPool(chunk_rows=sorted(usable), mentions=usable, spans=spans,
                        texts=chunking.chunks["text"].to_numpy(dtype=object), links=links)


def _pick_control_chunk(pool: _ControlPool, seen: set[int], used: set[int], rng: np.random.Generator,
                        worker: str) -> int:
    """A random control chunk the worker does not see otherwise: preferably one that allows every mix and
    is not yet used for this worker; rejection sampling first (a worker sees few chunks of a large pool)."""
    rows = pool.chunk_rows
    for _ in range(64 if rows else 0):
        row = rows[int(rng.integers(len(rows)))]
        if row not in seen and row not in used and pool.preferred(row):
            return row
    preferred = [r for r in rows if r not in seen and pool.preferred(r)]
    feasible = [r for r in rows if r not in seen and _feasible_mixes(pool, r)]
    for candidates in ([r for r in preferred if r not in used], preferred, [r for r in feasible if r not in used],
                       feasible):
        if candidates:
            return candidates[int(rng.integers(len(candidates)))]
    raise PosthocInputError(
        f"cannot build a control task for worker {worker}: no chunk it does not already see has a ground-truth "
        "annotation with a link and a word that no system annotated (three of them together); add documents, "
        "raise n_workers or set control_tasks = false"
    )


def _feasible_mixes(pool: _ControlPool, row: int) -> list[tuple[int, int, int]]:
    n_mentions, n_words = len(pool.mentions.get(row, [])), len(pool.words(row))
    can_edit = len(pool.links) >= 2
    can_remove = len(pool.links) >= 1
    return [
        (v, e, r) for v, e, r in CONTROL_MIXES
        if v + e <= n_mentions and r <= n_words and (e == 0 or can_edit) and (r == 0 or can_remove)
    ]


def _control_annotations(pool: _ControlPool, row: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Three control annotations over chunk ``row``, in text order, with their expected outcomes."""
    mixes = _feasible_mixes(pool, row)
    n_verify, n_edit, n_remove = mixes[int(rng.integers(len(mixes)))]
    mentions = pool.mentions[row]
    picked = sorted(rng.choice(len(mentions), size=n_verify + n_edit, replace=False).tolist())
    kinds = ["verify"] * n_verify + ["edit"] * n_edit
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    annotations: list[dict[str, Any]] = []
    for index, kind in zip(picked, kinds, strict=True):
        start, end, surface, link = mentions[index]
        shown = link
        if kind == "edit":
            others = [x for x in pool.links if x != link]
            shown = others[int(rng.integers(len(others)))]
        annotations.append({"start": start, "end": end, "surface": surface, "link": shown, "is_nil": False,
                            "expected_outcome": kind, "expected_link": link})
    words = pool.words(row)
    for index in sorted(rng.choice(len(words), size=n_remove, replace=False).tolist()) if n_remove else []:
        start, end, word = words[index]
        link = pool.links[int(rng.integers(len(pool.links)))]
        annotations.append({"start": start, "end": end, "surface": word, "link": link, "is_nil": False,
                            "expected_outcome": "remove", "expected_link": None})
    return sorted(annotations, key=lambda a: (a["start"], a["end"]))


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

    # items = (chunk, system) pairs with at least one annotation
    item_keys = cm.groupby(["chunk_id", "system"], sort=True).size().reset_index(name="n_mentions")
    item_keys["item_id"] = [f"i{i:06d}" for i in range(len(item_keys))]
    k = config.k
    n_items = len(item_keys)
    chunk_codes, _ = pd.factorize(item_keys["chunk_id"], sort=True)
    slot_item = np.repeat(np.arange(n_items), k)
    slot_replicate = np.tile(np.arange(k), n_items)
    slot_chunk = chunk_codes[slot_item]
    per_chunk = np.bincount(chunk_codes) * k
    need = int(per_chunk.max())
    real_per_batch = config.real_tasks_per_batch
    n_slots = n_items * k
    n_workers = config.n_workers if config.n_workers is not None else max(need, math.ceil(n_slots / real_per_batch))
    if n_workers < need:
        raise PosthocInputError(
            f"n_workers = {n_workers} is too few: a chunk has {need // k} systems' items x k = {k} judgements, "
            f"each for a different worker; set n_workers >= {need}"
        )
    if n_workers > n_slots:
        raise PosthocInputError(f"n_workers = {n_workers} exceeds the {n_slots} tasks to give out; lower n_workers")
    width = max(3, len(str(n_workers)))
    workers = tuple(f"w{i + 1:0{width}d}" for i in range(n_workers))
    slot_worker = _assign(slot_chunk, n_workers, stream_rng(config.seed, "assignment"))

    pool = _control_pool(chunking) if config.control_tasks else None
    chunk_row_of_id = {cid: i for i, cid in enumerate(chunks["chunk_id"])}
    item_chunk_row = np.array([chunk_row_of_id[c] for c in item_keys["chunk_id"]], dtype=np.int64)

    # per worker: canonical slot order -> seeded permutation -> batches -> control places
    by_worker = np.argsort(slot_worker, kind="stable")  # within a worker: item then replicate order
    bounds = np.searchsorted(slot_worker[by_worker], np.arange(n_workers + 1))
    task_rows: list[tuple[Any, ...]] = []  # (worker, position, batch, item_index or -1, replicate, control index)
    control_specs: list[tuple[str, int, int, list[dict[str, Any]]]] = []  # (control item id, chunk row, ...)
    for w, worker in enumerate(workers):
        slots = by_worker[bounds[w]:bounds[w + 1]]
        permutation, sizes, places = worker_order(config.seed, worker, len(slots), real_per_batch,
                                                  controls=pool is not None)
        ordered = slots[permutation]
        seen_rows = set(item_chunk_row[slot_item[ordered]].tolist())
        rng = worker_rng(config.seed, f"{worker}/controls")
        used: set[int] = set()
        position = 0
        offset = 0
        for b, size in enumerate(sizes):
            batch_slots = ordered[offset:offset + size].tolist()
            offset += size
            if pool is not None:
                control_index = len(control_specs)
                row = _pick_control_chunk(pool, seen_rows, used, rng, worker)
                used.add(row)
                control_specs.append((f"q{control_index:06d}", row, w, _control_annotations(pool, row, rng)))
                batch_slots.insert(places[b], -1 - control_index)
            for slot in batch_slots:
                if slot < 0:
                    task_rows.append((worker, position, b, -1, 0, -1 - slot))
                else:
                    task_rows.append((worker, position, b, int(slot_item[slot]), int(slot_replicate[slot]), -1))
                position += 1

    tasks = _task_table(task_rows, item_keys, item_chunk_row, control_specs, chunks, config, key_secret)
    prefill = _prefill_table(tasks, cm, control_specs, chunks, config, key_secret)
    items = _items_table(item_keys, control_specs, chunks, k)
    source = ments.reset_index(drop=True)
    per_worker = tasks.groupby("worker").size()
    summary = {
        "study": config.name,
        "seed": config.seed,
        "k": k,
        "documents": len(docs),
        "chunks": len(chunks),
        "oversized_chunks": int(chunks["oversized"].sum()),
        "systems": sorted(set(cm["system"])),
        "items": n_items,
        "workers": n_workers,
        "tasks": len(tasks),
        "tasks_per_worker_min": int(per_worker.min()),
        "tasks_per_worker_max": int(per_worker.max()),
        "control_tasks": len(control_specs),
        "annotations": int((prefill["expected_outcome"].isna()).sum()),
        "control_annotations": int(prefill["expected_outcome"].notna().sum()),
    }
    plan_chunks = chunks[["dataset", "doc_id", "chunk_id", "chunk_index", "chunk_start", "chunk_end", "text", "cut",
                          "oversized"]].reset_index(drop=True)
    return StudyPlan(config=config, documents=docs, source_mentions=source, chunks=plan_chunks, items=items,
                     tasks=tasks, prefill=prefill, workers=workers, summary=summary)


def _task_table(task_rows: list[tuple[Any, ...]], item_keys: pd.DataFrame, item_chunk_row: np.ndarray,
                control_specs: list[tuple[str, int, int, list[dict[str, Any]]]], chunks: pd.DataFrame,
                config: StudyConfig, key_secret: bytes | None) -> pd.DataFrame:
    raw = pd.DataFrame(task_rows, columns=["worker", "position", "batch", "item", "replicate", "control"])
    item_index = raw["item"].to_numpy()
    control_index = raw["control"].to_numpy()
    is_control = item_index < 0
    control_rows = np.array([spec[1] for spec in control_specs], dtype=np.int64)
    control_ids = np.array([spec[0] for spec in control_specs], dtype=object)
    chunk_row = np.where(is_control, control_rows[np.maximum(control_index, 0)] if len(control_specs) else 0,
                         item_chunk_row[np.maximum(item_index, 0)])
    item_ids = item_keys["item_id"].to_numpy(dtype=object)
    systems = item_keys["system"].to_numpy(dtype=object)
    control_item = control_ids[np.maximum(control_index, 0)] if len(control_specs) else np.full(len(raw), "")
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
                   control_specs: list[tuple[str, int, int, list[dict[str, Any]]]], chunks: pd.DataFrame,
                   config: StudyConfig, key_secret: bytes | None) -> pd.DataFrame:
    real = tasks.loc[~tasks["is_control"], ["task_key", "chunk_id", "system"]].reset_index(names="task_order")
    joined = real.merge(cm[["chunk_id", "system", "start", "end", "doc_start", "doc_end", "surface", "link", "is_nil"]],
                        on=["chunk_id", "system"], how="inner")
    joined["expected_outcome"] = None
    joined["expected_link"] = None
    control_rows: list[dict[str, Any]] = []
    control_tasks = tasks[tasks["is_control"]]
    chunk_start = chunks["chunk_start"].to_numpy()
    for order, key, spec in zip(control_tasks.index, control_tasks["task_key"], control_specs, strict=True):
        offset = int(chunk_start[spec[1]])
        for annotation in spec[3]:
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


def _items_table(item_keys: pd.DataFrame, control_specs: list[tuple[str, int, int, list[dict[str, Any]]]],
                 chunks: pd.DataFrame, k: int) -> pd.DataFrame:
    real = pd.DataFrame({"item_id": item_keys["item_id"], "chunk_id": item_keys["chunk_id"],
                         "system": item_keys["system"], "replicates": k,
                         "n_mentions": item_keys["n_mentions"].astype("int64"), "is_control": False})
    control = pd.DataFrame({
        "item_id": [spec[0] for spec in control_specs],
        "chunk_id": [chunks["chunk_id"].iloc[spec[1]] for spec in control_specs],
        "system": CONTROL_SYSTEM, "replicates": 1, "n_mentions": 3, "is_control": True,
    })
    return pd.concat([real, control], ignore_index=True) if len(control) else real
