"""Reassign the work of workers who failed their control tasks or left: the judgements they owe go to others.

:func:`plan_reassignment` (pure): the manifest's stored tables, the task keys Label Studio holds a submitted
annotation for (``done``), the workers who failed (``failed``: every judgement of theirs is excluded by the
score job's control rule, so all their items need another judge) and those who left (``left``: what they
judged stays, what they did not is owed). Then:

* **withdrawn**: every task of a failed or left worker that is not done (control tasks too) is marked withdrawn
  in this revision, with the reason (``failed control tasks`` / ``left the study``). It stays in the worker's
  Label Studio project (the project serves its tasks in import order; ``posthoc study reassign`` deletes
  nothing unless ``--delete-withdrawn``), and the score job leaves a judgement of it out (exclusion kind
  ``withdrawn``) so that it is never one of an item's ``k``.
* **owed slots**: an item's judges are its tasks that are not withdrawn and whose worker has not failed (in this
  or an earlier revision); every real item with fewer than ``k`` gets one slot a missing judge, with the
  replicate numbers of the tasks it lost.
* **receivers**: the study's workers except every failed or left one (this and earlier revisions), and
  ``new_workers`` new accounts (``w021``, ... after the highest id); a slot goes by
  :func:`posthoc.study.plan.revision.assign_balanced` to a worker who has no real task of the item's chunk (so
  nobody judges an item twice), preferably one who did not see it as a control task either (a worker who did
  gets it only when nobody else can), the one with the fewest live tasks of the item's system, then the fewest
  live tasks
  (loads start from each worker's live real tasks, so new accounts fill first). A new account that gets no slot
  is not made.
* the receivers' new tasks are appended in new batches with a control task each, in their seeded order
  (:func:`posthoc.study.plan.revision.sequence_revision`).

Rerun with the same inputs it finds nothing owed and nothing to withdraw: an empty revision, nothing written.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import control_pool
from posthoc.study.plan.revision import (
    ITEM_PREFILL_COLUMNS,
    Revision,
    Tables,
    assign_balanced,
    assignment_rng,
    reject_duplicates,
    sequence_revision,
    study_chunking,
    taken_out,
)

FAILED = "failed control tasks"
LEFT = "left the study"


def new_accounts(workers: list[str], n: int) -> list[str]:
    """``n`` new worker ids after the highest (``w`` + the existing width, at least three digits)."""
    numbers = [int(w[1:]) for w in workers if w[1:].isdigit()]
    width = max([3, *(len(w) - 1 for w in workers)])
    top = max(numbers, default=0)
    return [f"w{top + i + 1:0{width}d}" for i in range(n)]


def plan_reassignment(tables: Tables, config: StudyConfig, done: Collection[str], *, failed: Collection[str] = (),
                      left: Collection[str] = (), new_workers: int = 0, revision: int,
                      key_secret: bytes | None) -> Revision:
    """The revision that withdraws what the failed and left workers owe and gives it to others (module docstring).

    Raises PosthocInputError for an unknown worker, a worker both failed and left, or when no eligible
    worker is left for some item (then pass ``new_workers``).
    """
    workers = [str(w) for w in tables["workers"]["worker"]]
    failed, left = {str(w) for w in failed}, {str(w) for w in left}
    unknown = sorted((failed | left) - set(workers))
    if unknown:
        raise PosthocInputError(f"unknown worker(s) {unknown}; the study's workers are {workers[0]}..{workers[-1]}")
    if failed & left:
        raise PosthocInputError(f"worker(s) {sorted(failed & left)} given as both failed and left; give one")
    if new_workers < 0:
        raise PosthocInputError(f"--new-workers must be >= 0, got {new_workers}")
    all_failed = failed | taken_out(tables["revisions"], kinds=("failed",))
    out = all_failed | left | taken_out(tables["revisions"])
    tasks = tables["tasks"].copy()
    marks = tables["task_revisions"]
    withdrawn_before = set(marks.loc[marks["withdrawn_in"].notna(), "task_key"])
    done_keys = {str(k) for k in done}
    owing = tasks["worker"].isin(failed | left) & ~tasks["task_key"].isin(done_keys | withdrawn_before)
    withdraw = tasks.loc[owing, ["task_key", "worker"]].assign(
        reason=[FAILED if w in failed else LEFT for w in tasks.loc[owing, "worker"]])
    gone = withdrawn_before | set(withdraw["task_key"])
    real = tasks.loc[~tasks["is_control"].astype(bool)]
    live = real.loc[~real["task_key"].isin(gone) & ~real["worker"].isin(all_failed)]
    count = live.groupby("item_id").size()
    items = tables["items"].loc[~tables["items"]["is_control"].astype(bool)]
    rows = []
    for item_id, chunk_id, system in zip(items["item_id"], items["chunk_id"], items["system"], strict=True):
        need = config.k - int(count.get(item_id, 0))
        if need > 0:
            lost = sorted(set(real.loc[real["item_id"] == item_id, "replicate"].astype(int))
                          - set(live.loc[live["item_id"] == item_id, "replicate"].astype(int)))
            replicates = (lost + list(range(max(lost, default=-1) + 1, max(lost, default=-1) + 1 + need)))[:need]
            rows += [{"item_id": item_id, "replicate": r, "chunk_id": chunk_id, "system": system}
                     for r in replicates]
    parameters = {"failed": sorted(failed), "left": sorted(left), "new_workers": new_workers}
    if not rows:
        return Revision(revision, "reassign", parameters, withdrawn=withdraw.reset_index(drop=True))
    slots = pd.DataFrame(rows)
    fresh = new_accounts(workers, new_workers)
    receivers = [w for w in workers if w not in out] + fresh
    control = tasks["is_control"].astype(bool)
    seen = {str(w): set(map(str, g["chunk_id"])) for w, g in tasks.loc[~control].groupby("worker")}
    shown = {str(w): set(map(str, g["chunk_id"])) for w, g in tasks.loc[control].groupby("worker")}
    slots["worker"] = assign_balanced(slots, receivers, seen, assignment_rng(config.seed, revision),
                                      start=live.loc[live["worker"].isin(receivers)], avoid=shown)
    chunking, _ = study_chunking(tables["documents"], tables["source_mentions"], tables["chunks"],
                                 max_chars=config.max_chars)
    prefill = tables["prefill"].merge(real[["task_key", "item_id"]], on="task_key")
    first = prefill.groupby("item_id")["task_key"].transform("min")
    source = prefill.loc[prefill["task_key"] == first].sort_values(["item_id", "ord"], kind="stable")
    pool = control_pool(chunking) if config.control_tasks else None
    sequenced = sequence_revision(tables, slots, source[list(ITEM_PREFILL_COLUMNS)], config=config,
                                  revision=revision, chunking=chunking, pool=pool, key_secret=key_secret)
    reject_duplicates(tables, sequenced.tasks)
    used = set(sequenced.tasks["worker"])
    return Revision(revision, "reassign", parameters, tasks=sequenced.tasks, prefill=sequenced.prefill,
                    items=sequenced.items, workers=tuple(w for w in fresh if w in used),
                    withdrawn=withdraw.reset_index(drop=True))
