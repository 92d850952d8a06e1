"""A revision of a planned study: tasks appended to workers' sequences, tasks withdrawn from a worker.

What ``posthoc study extend`` (:mod:`posthoc.study.plan.extend`), ``posthoc study reassign``
(:mod:`posthoc.study.plan.reassign`) and ``posthoc study add-system`` (:mod:`posthoc.study.plan.add_system`)
share. All are pure: the manifest's stored tables in, a :class:`Revision`
out, which :meth:`Revision.apply` turns into the next tables (:meth:`posthoc.study.plan.manifest.Manifest.revise`
writes them atomically). The rules kept from the plan (:mod:`posthoc.study.plan.design`):

* **assignment** (:func:`assign_balanced`): chunks in a seeded random order (``stream_rng(seed,
  "assignment/revision-<n>")``); every slot of a chunk goes to a different worker, and never to a worker who
  already has a task of that chunk (so nobody judges an item twice, nor sees one chunk twice); among the
  eligible workers the one with the fewest new tasks of the slot's system, then the fewest new tasks, then a
  seeded random draw. Loads are counted over the revision's new tasks (the plan balanced the older ones).
* **order** (:func:`sequence_revision`): each worker's new real tasks, in canonical (item, replicate) order,
  are ordered by :func:`posthoc.study.plan.assignment.worker_order` seeded with ``(seed, "<worker>/revision-<n>")``
  (revision 0 is the plan's ``(seed, worker)``), cut into new batches of ``tasks_per_batch - 1`` real tasks with
  one control task each, and appended after the worker's last position and batch. Label Studio serves a
  Sequential project in import order, so a worker's new tasks come after the ones they have
  (:func:`posthoc.jobs.setup.create_study` imports the missing suffix).
* **control tasks**: a chunk of the whole study (old and new documents) that the worker sees in no other task
  and that holds no control task of theirs yet, drawn by :func:`~posthoc.study.plan.control_tasks.pick_control_chunk`
  with ``worker_rng(seed, "<worker>/controls/revision-<n>")``; ids continue ``q......`` after the last.
* **keys**: :func:`~posthoc.study.plan.keys.task_key` of (study, seed, worker, item, replicate) and
  :func:`~posthoc.study.plan.keys.mention_keys` under the study's secret, as the plan made them; new item ids,
  chunk ids and control ids continue after the highest stored, so nothing collides with an existing key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from posthoc.arrays import Bools
from posthoc.errors import PosthocInputError
from posthoc.study.plan.assignment import worker_order
from posthoc.study.plan.chunking import Chunking, chunk_documents
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import CONTROL_SYSTEM, ControlPool, control_annotations, pick_control_chunk
from posthoc.study.plan.keys import mention_keys, stream_rng, task_key, worker_rng
from posthoc.study.plan.storage import TABLES

Tables = dict[str, pd.DataFrame]
#: the columns of a revision's per-item pre-fill source (chunk offsets, document offsets, text order)
ITEM_PREFILL_COLUMNS = ("item_id", "start", "end", "doc_start", "doc_end", "surface", "link", "is_nil")


def config_of(record: dict[str, Any]) -> StudyConfig:
    """The study's settings from the manifest's stored config record (its inputs are not needed here)."""
    return StudyConfig(name=str(record["name"]), seed=int(record["seed"]), k=int(record["k"]),
                       tasks_per_batch=int(record["tasks_per_batch"]), max_chars=int(record["max_chars"]),
                       n_workers=record.get("n_workers"), control_tasks=bool(record["control_tasks"]))


def next_number(ids: pd.Series, prefix: str) -> int:
    """The number after the highest stored id ``<prefix>NNNNNN`` (0 when there is none)."""
    numbers = [int(str(v)[1:]) for v in ids if str(v).startswith(prefix) and str(v)[1:].isdigit()]
    return max(numbers, default=-1) + 1


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series([], dtype=object) for column, _ in TABLES[name]})


@dataclass(frozen=True)
class Revision:
    """What one revision adds (rows of the stored tables) and withdraws (``task_key, worker, reason``)."""

    number: int
    kind: str
    parameters: dict[str, Any]
    tasks: pd.DataFrame = field(default_factory=lambda: _empty("tasks"))
    prefill: pd.DataFrame = field(default_factory=lambda: _empty("prefill"))
    items: pd.DataFrame = field(default_factory=lambda: _empty("items"))
    chunks: pd.DataFrame = field(default_factory=lambda: _empty("chunks"))
    documents: pd.DataFrame = field(default_factory=lambda: _empty("documents"))
    source_mentions: pd.DataFrame = field(default_factory=lambda: _empty("source_mentions"))
    added_annotations: pd.DataFrame = field(default_factory=lambda: _empty("added_annotations"))
    workers: tuple[str, ...] = ()
    withdrawn: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        {"task_key": pd.Series([], dtype=object), "worker": pd.Series([], dtype=object),
         "reason": pd.Series([], dtype=object)}))

    @property
    def empty(self) -> bool:
        """Whether it changes nothing (then no revision is written)."""
        return (not len(self.tasks) and not len(self.withdrawn) and not self.workers
                and not len(self.added_annotations))

    def digest(self) -> str:
        """SHA-256 of what it adds and withdraws: task keys, withdrawn keys and new workers, sorted."""
        hasher = hashlib.sha256()
        for part in (sorted(map(str, self.tasks["task_key"])), sorted(map(str, self.withdrawn["task_key"])),
                     sorted(self.workers)):
            hasher.update("\x1e".join(part).encode("utf-8") + b"\x1d")
        return hasher.hexdigest()

    def per_worker(self) -> pd.DataFrame:
        """``worker, added, added_control, withdrawn, new_account`` of every worker the revision touches."""
        added = self.tasks.groupby("worker")["is_control"].agg(["size", "sum"]) if len(self.tasks) else None
        gone = self.withdrawn.groupby("worker").size() if len(self.withdrawn) else pd.Series(dtype="int64")
        counts = ({str(w): (int(n), int(c)) for w, n, c in zip(added.index, added["size"], added["sum"], strict=True)}
                  if added is not None else {})
        names = sorted(set(counts) | set(map(str, gone.index)) | set(self.workers))
        return pd.DataFrame({
            "worker": names,
            "added": [counts.get(w, (0, 0))[0] for w in names],
            "added_control": [counts.get(w, (0, 0))[1] for w in names],
            "withdrawn": [int(gone.get(w, 0)) for w in names],
            "new_account": [w in self.workers for w in names],
        })

    def apply(self, tables: Tables, *, created: str) -> Tables:
        """The next stored tables: rows appended, withdrawn tasks marked, the revision recorded (``created``: UTC)."""
        out = dict(tables)
        for name in ("documents", "source_mentions", "chunks", "items", "tasks", "prefill", "added_annotations"):
            extra: pd.DataFrame = getattr(self, name)
            if len(extra):
                out[name] = pd.concat([tables[name], extra[list(tables[name].columns)]], ignore_index=True)
        if self.workers:
            first = len(tables["workers"])
            out["workers"] = pd.concat([tables["workers"], pd.DataFrame(
                {"worker": list(self.workers), "ord": range(first, first + len(self.workers))})], ignore_index=True)
        marks = tables["task_revisions"].copy()
        if len(self.tasks):
            marks = pd.concat([marks, pd.DataFrame({"task_key": self.tasks["task_key"].tolist(),
                                                    "revision": self.number, "withdrawn_in": None,
                                                    "withdrawn_reason": None})], ignore_index=True)
        if len(self.withdrawn):
            known = set(marks["task_key"])
            fresh = [k for k in self.withdrawn["task_key"] if k not in known]
            marks = pd.concat([marks, pd.DataFrame({"task_key": fresh, "revision": 0, "withdrawn_in": None,
                                                    "withdrawn_reason": None})], ignore_index=True)
            reasons = dict(zip(self.withdrawn["task_key"], self.withdrawn["reason"], strict=True))
            hit = marks["task_key"].isin(reasons)
            marks["withdrawn_in"] = marks["withdrawn_in"].astype(object)
            marks["withdrawn_reason"] = marks["withdrawn_reason"].astype(object)
            marks.loc[hit, "withdrawn_in"] = self.number
            marks.loc[hit, "withdrawn_reason"] = marks.loc[hit, "task_key"].map(reasons)
        out["task_revisions"] = marks
        row = pd.DataFrame({"number": [self.number], "kind": [self.kind], "created": [created],
                            "parameters": [json.dumps(self.parameters, sort_keys=True)], "digest": [self.digest()]})
        out["revisions"] = pd.concat([tables["revisions"], row], ignore_index=True) if len(tables["revisions"]) \
            else row
        return out


def study_chunking(documents: pd.DataFrame, source_mentions: pd.DataFrame, stored_chunks: pd.DataFrame, *,
                   max_chars: int) -> tuple[Chunking, Bools]:
    """The chunking of every document (stored and new) with the stored chunk ids kept and new ids continuing
    after the highest; and the mask of new chunks. The stored documents must chunk exactly as stored (else the
    inputs changed since the plan: a PosthocInputError)."""
    chunking = chunk_documents(documents, source_mentions, max_chars=max_chars)
    chunks = chunking.chunks.copy()
    stored = {(str(d), str(i), int(n)): (str(c), int(s), int(e)) for d, i, n, c, s, e in zip(
        stored_chunks["dataset"], stored_chunks["doc_id"], stored_chunks["chunk_index"], stored_chunks["chunk_id"],
        stored_chunks["chunk_start"], stored_chunks["chunk_end"], strict=True)}
    stored_docs = {(d, i) for d, i, _ in stored}
    number = next_number(stored_chunks["chunk_id"], "c")
    ids: list[str] = []
    new = np.zeros(len(chunks), dtype=bool)
    for row, (d, i, n, s, e) in enumerate(zip(chunks["dataset"], chunks["doc_id"], chunks["chunk_index"],
                                              chunks["chunk_start"], chunks["chunk_end"], strict=True)):
        found = stored.get((str(d), str(i), int(n)))
        if found is not None and (found[1], found[2]) == (int(s), int(e)):
            ids.append(found[0])
        elif (str(d), str(i)) in stored_docs:
            raise PosthocInputError(f"document {i!r} of dataset {d!r} no longer chunks as the manifest stores it: "
                                    "the study's inputs changed since it was planned; give the config it was "
                                    "planned from")
        else:
            ids.append(f"c{number:06d}")
            number += 1
            new[row] = True
    rename = dict(zip(chunks["chunk_id"], ids, strict=True))
    chunks["chunk_id"] = ids
    mentions = chunking.mentions.copy()
    mentions["chunk_id"] = mentions["chunk_id"].map(rename)
    return Chunking(chunks=chunks, mentions=mentions, max_chars=max_chars), new


def assign_balanced(slots: pd.DataFrame, workers: list[str], seen: dict[str, set[str]], rng: np.random.Generator,
                    *, start: pd.DataFrame | None = None, avoid: dict[str, set[str]] | None = None) -> list[str]:
    """The worker of every slot (``item_id, replicate, chunk_id, system``; rules in the module docstring).

    ``seen``: each worker's chunks so far (a slot never goes to a worker who has its chunk); updated in place.
    ``avoid``: chunks a worker saw as a control task: such a worker gets the slot only when no other can.
    ``start``: tasks (``worker, system``) the loads start from (default none: the revision's own tasks only).
    Raises PosthocInputError naming the chunk when no eligible worker is left (add workers).
    """
    chosen = [""] * len(slots)
    system_load: dict[tuple[str, str], int] = {}
    load = dict.fromkeys(workers, 0)
    if start is not None:
        sizes = start.groupby(["worker", "system"]).size()
        for (w, system), n in zip(sizes.index.tolist(), sizes.tolist(), strict=True):
            system_load[(str(w), str(system))] = int(n)
            load[str(w)] = load.get(str(w), 0) + int(n)
    chunk_ids = slots["chunk_id"].astype(str).to_numpy()
    systems = slots["system"].astype(str).to_numpy()
    order = sorted(set(chunk_ids.tolist()))
    for c in rng.permutation(len(order)).tolist():
        chunk = order[c]
        tiebreak = dict(zip(workers, rng.random(len(workers)).tolist(), strict=True))
        for slot in np.flatnonzero(chunk_ids == chunk).tolist():
            system = str(systems[slot])
            eligible = [w for w in workers if chunk not in seen.setdefault(w, set())]
            if not eligible:
                raise PosthocInputError(f"no worker is left who has not seen chunk {chunk} (every one has a task of "
                                        "it); add workers (--new-workers N)")
            shown = avoid or {}
            pick = min(eligible, key=lambda w: (chunk in shown.get(w, ()), system_load.get((w, system), 0), load[w],
                                                tiebreak[w]))
            chosen[slot] = pick
            seen[pick].add(chunk)
            load[pick] += 1
            system_load[(pick, system)] = system_load.get((pick, system), 0) + 1
    return chosen


@dataclass(frozen=True)
class Sequenced:
    """New rows of one revision's sequences: tasks, pre-fill and control items."""

    tasks: pd.DataFrame
    prefill: pd.DataFrame
    items: pd.DataFrame


def sequence_revision(tables: Tables, slots: pd.DataFrame, item_prefill: pd.DataFrame, *, config: StudyConfig,
                      revision: int, chunking: Chunking, pool: ControlPool | None,
                      key_secret: bytes | None) -> Sequenced:
    """Every receiving worker's new tasks in order (module docstring, "order" and "control tasks").

    ``slots``: ``worker, item_id, replicate, chunk_id, system`` of each new real task; ``item_prefill``:
    :data:`ITEM_PREFILL_COLUMNS` of each item, in text order (the same for every replicate).
    """
    old = tables["tasks"]
    chunk_row = {str(c): r for r, c in enumerate(chunking.chunks["chunk_id"])}
    chunk_start = chunking.chunks["chunk_start"].to_numpy()
    next_control = next_number(tables["items"]["item_id"], "q")
    prefill_of = {str(i): g for i, g in item_prefill.groupby("item_id", sort=False)}
    task_rows: list[dict[str, Any]] = []
    prefill_rows: list[dict[str, Any]] = []
    control_items: list[dict[str, Any]] = []
    for worker in sorted(set(slots["worker"].astype(str))):
        mine = slots.loc[slots["worker"] == worker].sort_values(["item_id", "replicate"], kind="stable")
        theirs = old.loc[old["worker"] == worker]
        position = int(theirs["position"].max()) + 1 if len(theirs) else 0
        first_batch = int(theirs["batch"].max()) + 1 if len(theirs) else 0
        permutation, sizes, places = worker_order(config.seed, f"{worker}/revision-{revision}", len(mine),
                                                  config.real_tasks_per_batch, controls=pool is not None)
        ordered: list[dict[str, Any]] = [{str(c): v for c, v in r.items()}
                                         for r in mine.iloc[permutation].to_dict("records")]
        seen = {chunk_row[str(c)] for c in [*theirs.loc[~theirs["is_control"].astype(bool), "chunk_id"],
                                           *mine["chunk_id"]]}
        used = {chunk_row[str(c)] for c in theirs.loc[theirs["is_control"].astype(bool), "chunk_id"]}
        rng = worker_rng(config.seed, f"{worker}/controls/revision-{revision}")
        offset = 0
        for b, size in enumerate(sizes):
            batch: list[dict[str, Any] | None] = list(ordered[offset:offset + size])
            offset += size
            if pool is not None:
                batch.insert(places[b], None)
            for slot in batch:
                if slot is None:
                    assert pool is not None
                    row = pick_control_chunk(pool, seen, used, rng, worker)
                    used.add(row)
                    item_id = f"q{next_control:06d}"
                    next_control += 1
                    chunk_id = str(chunking.chunks["chunk_id"].iloc[row])
                    key = task_key(config.name, config.seed, worker, item_id, 0, key=key_secret)
                    control_items.append({"item_id": item_id, "chunk_id": chunk_id, "system": CONTROL_SYSTEM,
                                          "replicates": 1, "n_mentions": 3, "is_control": True})
                    task_rows.append({"task_key": key, "worker": worker, "position": position,
                                      "batch": first_batch + b, "item_id": item_id, "replicate": 0,
                                      "chunk_id": chunk_id, "system": CONTROL_SYSTEM, "is_control": True})
                    for a in control_annotations(pool, row, rng):
                        prefill_rows.append({"task_key": key, **a, "doc_start": int(chunk_start[row]) + a["start"],
                                             "doc_end": int(chunk_start[row]) + a["end"]})
                else:
                    key = task_key(config.name, config.seed, worker, str(slot["item_id"]), int(slot["replicate"]),
                                   key=key_secret)
                    task_rows.append({"task_key": key, "worker": worker, "position": position,
                                      "batch": first_batch + b, "item_id": str(slot["item_id"]),
                                      "replicate": int(slot["replicate"]), "chunk_id": str(slot["chunk_id"]),
                                      "system": str(slot["system"]), "is_control": False})
                    for m in prefill_of[str(slot["item_id"])].to_dict("records"):
                        prefill_rows.append({"task_key": key, **{c: m[c] for c in ITEM_PREFILL_COLUMNS[1:]},
                                             "expected_outcome": None, "expected_link": None})
                position += 1
    return Sequenced(tasks=_frame(task_rows, "tasks"), prefill=_prefill_frame(prefill_rows, config, key_secret),
                     items=_frame(control_items, "items"))


def _frame(rows: list[dict[str, Any]], name: str) -> pd.DataFrame:
    columns = [c for c, _ in TABLES[name]]
    return pd.DataFrame(rows, columns=columns) if rows else _empty(name)


def _prefill_frame(rows: list[dict[str, Any]], config: StudyConfig, key_secret: bytes | None) -> pd.DataFrame:
    """The new pre-fill rows with ``ord`` (text order within a task) and their opaque mention ids."""
    if not rows:
        return _empty("prefill")
    frame = pd.DataFrame(rows)
    frame["ord"] = frame.groupby("task_key", sort=False).cumcount()
    frame["mention_id"] = mention_keys(config.name, config.seed, frame["task_key"].tolist(),
                                       frame["ord"].tolist(), key=key_secret)
    return frame[[c for c, _ in TABLES["prefill"]]]


def reject_duplicates(tables: Tables, added: pd.DataFrame) -> None:
    """PosthocInputError when a new task key collides with a stored one (80-bit keys: never in practice)."""
    if added["task_key"].isin(set(tables["tasks"]["task_key"])).any() or added["task_key"].duplicated().any():
        raise PosthocInputError("a new task got the key of an existing task; nothing was written")
    return None


def taken_out(revisions: pd.DataFrame, *, kinds: tuple[str, ...] = ("failed", "left")) -> set[str]:
    """Workers an earlier reassignment took out (its ``failed`` / ``left`` parameters): they get no new tasks."""
    out: set[str] = set()
    for kind, parameters in zip(revisions["kind"], revisions["parameters"], strict=True):
        if kind == "reassign":
            record = json.loads(str(parameters))
            for name in kinds:
                out |= set(record.get(name, []))
    return out


def assignment_rng(seed: int, revision: int) -> np.random.Generator:
    """The revision's assignment stream (module docstring)."""
    return stream_rng(seed, f"assignment/revision-{revision}")
