"""Who judges what, in which order: the workers, the assignment of judgement slots and each worker's sequence.

Rules (paper 000, section 2.1; paper 004, section 4), all seeded by ``config.seed``:

* **workers**: ``n_workers`` if set, else as many as there are batches (one batch a worker, as with
  the paper's HITs), and never fewer than the largest number of slots of one chunk.
* **assignment**: chunks are taken in a seeded random order; all slots of a chunk (its items times
  ``k``) go to *distinct* workers, the least loaded ones with random tie-breaking.
* **order**: each worker's real tasks, in canonical (item, replicate) order, are permuted by a
  generator seeded with ``(seed, sha256(worker id))`` (:func:`posthoc.study.plan.keys.worker_rng`), cut into
  batches of ``tasks_per_batch - 1`` (sizes as equal as possible), and the batch's control task
  (:mod:`posthoc.study.plan.control_tasks`) is put at a random place in it by the same generator.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from posthoc.arrays import Ints
from posthoc.errors import PosthocInputError
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import ControlPool, ControlTask, control_annotations, pick_control_chunk
from posthoc.study.plan.keys import worker_rng

#: one task of a worker's sequence: (worker, position, batch, item index or -1, replicate, control index or -1)
TaskRow = tuple[str, int, int, int, int, int]


def worker_order(seed: int, worker: str, n_real: int, real_per_batch: int,
                 *, controls: bool) -> tuple[Ints, list[int], list[int]]:
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


def study_workers(config: StudyConfig, slots_per_chunk: Ints, n_slots: int) -> tuple[str, ...]:
    """The workers' ids (``w001``, ...): ``config.n_workers`` of them, else one batch's worth of slots each, and
    at least the most slots of one chunk (each for a different worker); raises PosthocInputError when
    ``n_workers`` is too few for a chunk or more than there are slots."""
    k = config.k
    need = int(slots_per_chunk.max())
    n_workers = config.n_workers if config.n_workers is not None else max(
        need, math.ceil(n_slots / config.real_tasks_per_batch))
    if n_workers < need:
        raise PosthocInputError(
            f"n_workers = {n_workers} is too few: a chunk has {need // k} systems' items x k = {k} judgements, "
            f"each for a different worker; set n_workers >= {need}"
        )
    if n_workers > n_slots:
        raise PosthocInputError(f"n_workers = {n_workers} exceeds the {n_slots} tasks to give out; lower n_workers")
    width = max(3, len(str(n_workers)))
    return tuple(f"w{i + 1:0{width}d}" for i in range(n_workers))


def assign_slots(chunk_of_slot: Ints, n_workers: int, rng: np.random.Generator) -> Ints:
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


def sequence_tasks(workers: tuple[str, ...], slot_worker: Ints, slot_item: Ints,
                   slot_replicate: Ints, item_chunk_row: Ints, pool: ControlPool | None, *,
                   seed: int, real_per_batch: int) -> tuple[list[TaskRow], list[ControlTask]]:
    """Every worker's tasks in order, batch by batch, with a control task in each batch when ``pool`` is given.

    A slot is one judgement: replicate ``slot_replicate[i]`` of item ``slot_item[i]`` (whose chunk is row
    ``item_chunk_row[item]`` of the chunks), given to worker ``slot_worker[i]``. Within a worker the slots
    come in canonical item then replicate order, then :func:`worker_order` permutes and batches them.
    """
    by_worker = np.argsort(slot_worker, kind="stable")  # within a worker: item then replicate order
    bounds = np.searchsorted(slot_worker[by_worker], np.arange(len(workers) + 1))
    task_rows: list[TaskRow] = []
    control_tasks: list[ControlTask] = []
    for w, worker in enumerate(workers):
        slots = by_worker[bounds[w]:bounds[w + 1]]
        permutation, sizes, places = worker_order(seed, worker, len(slots), real_per_batch,
                                                  controls=pool is not None)
        ordered = slots[permutation]
        seen_rows = set(item_chunk_row[slot_item[ordered]].tolist())
        rng = worker_rng(seed, f"{worker}/controls")
        used: set[int] = set()
        position = 0
        offset = 0
        for b, size in enumerate(sizes):
            batch_slots = ordered[offset:offset + size].tolist()
            offset += size
            if pool is not None:
                control_index = len(control_tasks)
                row = pick_control_chunk(pool, seen_rows, used, rng, worker)
                used.add(row)
                control_tasks.append(ControlTask(f"q{control_index:06d}", row, w, control_annotations(pool, row, rng)))
                batch_slots.insert(places[b], -1 - control_index)
            for slot in batch_slots:
                if slot < 0:
                    task_rows.append((worker, position, b, -1, 0, -1 - slot))
                else:
                    task_rows.append((worker, position, b, int(slot_item[slot]), int(slot_replicate[slot]), -1))
                position += 1
    return task_rows, control_tasks
