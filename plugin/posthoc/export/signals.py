"""The change signal of a study's projects: what Label Studio says, cheaply, about each project, such that the
signal changes whenever the project's export would. Read before anything is exported, once a run.

Per run, for a study of N projects (Label Studio 1.23):

1. **One listing** gives the counts and the label config: ``GET /api/projects/?ids=...&include=`` :data:`SIGNAL_FIELDS`
   (100 projects a page; ``include`` also limits which counts Label Studio computes). The score job asks for these
   fields in the listing that finds the study's projects (:func:`posthoc.study.live.projects.find_study_projects`),
   so that finding and signalling cost one listing, not two.
2. **One Data Manager query a project** (:func:`project_signals`): the tasks that hold a draft *or* were updated
   after the project's *baseline* (a task ``updated_at`` the last run kept), ordered by ``-updated_at``, one row:
   the number of such tasks (``recent``) and the most recent one. The counts alone miss an annotation *updated*
   in place; Label Studio's ``Annotation.save()`` and ``Annotation.delete()`` both save the task's ``updated_at``
   (its ``tasks/models.py``: ``Annotation.update_task``; measured: a new, an updated and a deleted annotation each
   moved it), so such a task enters the set and becomes its most recent; a draft does not move ``updated_at``
   (measured), but it enters the set through ``draft_exists``.
3. A project whose signal differs from the last run's is exported; before that its baseline moves up to its most
   recent task update (:meth:`ProjectSignal.rebaselined`) and the query is asked again with it (one more request,
   :func:`rebaseline`), so that the signal kept for the next run counts exactly the tasks holding a draft: then a
   new draft raises ``recent``, a removed one lowers it, and any annotation saved or deleted puts a task updated
   after the baseline first.

What it does not catch is in docs/score.md ("Incremental runs"): one draft removed and another saved on another
task between two runs, with no annotation saved (the count is the same), among others.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio import records
from posthoc.labelstudio.calls import ApiCalls

__all__ = ["COUNT_FIELDS", "EPOCH", "SIGNAL_FIELDS", "ProjectSignal", "digest", "pool_map", "project_signals",
           "rebaseline"]

#: the listing's counts the signal holds (``include=`` makes Label Studio compute only these)
COUNT_FIELDS = ("task_number", "total_annotations_number", "skipped_annotations_number", "total_predictions_number")
#: every field the signal reads from the project listing
SIGNAL_FIELDS = ("id", "label_config", *COUNT_FIELDS)
#: the baseline of a project no run has seen: every task was updated after it
EPOCH = "1970-01-01T00:00:00.000000Z"
#: the Data Manager's datetime format (``data_manager/managers.py`` ``DATETIME_FORMAT`` in Label Studio 1.23)
DM_DATETIME = "%Y-%m-%dT%H:%M:%S.%fZ"
#: requests to Label Studio at once: it is one process, mostly busy in Python
SIGNAL_THREADS = 2
T = TypeVar("T")
R = TypeVar("R")


def digest(value: object) -> str:
    """SHA-256 of ``value`` as sorted JSON.

    Examples:
        The keys are sorted first, so the order they were given in does not change the digest.

        >>> import hashlib
        >>> from posthoc.export.signals import digest
        >>> digest({"b": 1, "a": [2, 3]}) == digest({"a": [2, 3], "b": 1})
        True
        >>> digest({"b": 1, "a": [2, 3]}) == hashlib.sha256(b'{"a": [2, 3], "b": 1}').hexdigest()
        True
    """
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def pool_map(function: Callable[[T], R], items: Sequence[T], *, threads: int,
             done: Callable[[R], None] | None = None) -> list[R]:
    """``[function(item) for item in items]`` on ``threads`` threads; the first failure is raised (the rest
    are cancelled) as it was raised; ``done`` is called with each result as it comes.

    Examples:
        Results come back in the order of ``items`` whichever thread finished first.

        >>> from posthoc.export.signals import pool_map
        >>> pool_map(lambda n: n * n, [3, 1, 2], threads=2)
        [9, 1, 4]
        >>> pool_map(lambda n: 1 // n, [1, 0], threads=2)
        Traceback (most recent call last):
        ...
        ZeroDivisionError: integer division or modulo by zero
    """
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(items))), thread_name_prefix="posthoc-export") as pool:
        futures: list[Future[R]] = [pool.submit(function, item) for item in items]
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                if future.exception() is not None:
                    for other in pending:
                        other.cancel()
                    raise future.exception()  # type: ignore[misc]
                if done is not None:
                    done(future.result())
        return [future.result() for future in futures]


def dm_timestamp(value: str) -> str:
    """An ISO 8601 time as Label Studio answers it (``...Z``; microseconds absent when zero) in the Data
    Manager's fixed format (:data:`DM_DATETIME`, UTC, always microseconds), so that two compare as text as in
    time; PosthocServiceError if it is no time.

    Examples:
        Microseconds are always written, and an offset is turned into UTC (10:00 at +02:00 is 08:00 UTC).

        >>> from posthoc.export.signals import dm_timestamp
        >>> dm_timestamp("2024-05-01T10:00:00Z")
        '2024-05-01T10:00:00.000000Z'
        >>> dm_timestamp("2024-05-01T10:00:00.25+02:00")
        '2024-05-01T08:00:00.250000Z'
    """
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise PosthocServiceError(f"Label Studio answered a task updated_at {value!r} that is no ISO 8601 time") \
            from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime(DM_DATETIME)


def since_query(baseline: str) -> dict[str, object]:
    """The Data Manager query of the tasks holding a draft or updated after ``baseline``, most recent first.

    Examples:
        >>> from posthoc.export.signals import EPOCH, since_query
        >>> query = since_query(EPOCH)
        >>> query["filters"]["conjunction"], [item["filter"] for item in query["filters"]["items"]]
        ('or', ['filter:tasks:draft_exists', 'filter:tasks:updated_at'])
        >>> query["filters"]["items"][1]["value"], query["ordering"]
        ('1970-01-01T00:00:00.000000Z', ['-tasks:updated_at'])
    """
    return {"filters": {"conjunction": "or", "items": [
        {"filter": "filter:tasks:draft_exists", "operator": "equal", "type": "Boolean", "value": True},
        {"filter": "filter:tasks:updated_at", "operator": "greater", "type": "Datetime", "value": baseline}]},
        "ordering": ["-tasks:updated_at"]}


@dataclass(frozen=True)
class ProjectSignal:
    """What Label Studio says about one project, cheaply: ``key`` changes whenever its export would.

    ``counts``: :data:`COUNT_FIELDS` from the listing; ``baseline``: the task update time the query counted from;
    ``recent``: how many tasks hold a draft or were updated after it; ``latest``: the most recently updated of
    those (id, ``updated_at``), ``None`` when there is none."""

    project_id: int
    counts: tuple[int, ...]
    label_config: str
    baseline: str
    recent: int
    latest: tuple[int, str] | None

    @property
    def key(self) -> str:
        return digest({"counts": list(self.counts), "baseline": self.baseline, "recent": self.recent,
                       "latest": list(self.latest) if self.latest else None,
                       "label_config": hashlib.sha256(self.label_config.encode("utf-8")).hexdigest()})

    def rebaselined(self) -> str:
        """The baseline for the next run: the most recent task update seen, if later than this baseline."""
        return max(self.baseline, self.latest[1]) if self.latest is not None else self.baseline


def listed_projects(http: ApiCalls, project_ids: Sequence[int]) -> dict[int, records.Project]:
    """``{id: project}`` of ``project_ids`` with :data:`SIGNAL_FIELDS`, one listing (PosthocServiceError if one is
    missing: deleted while the job ran, or not visible to the token's user).

    Examples:
        An in-process stand-in for the API that lists only project 3: asking for 3 and 4 names the missing one.

        >>> from posthoc.export.signals import listed_projects
        >>> class Api:
        ...     def projects(self, *, ids, include):
        ...         return [{"id": 3, "label_config": "<View/>", "task_number": 2}]
        >>> list(listed_projects(Api(), [3]))
        [3]
        >>> listed_projects(Api(), [3, 4])
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocServiceError: Label Studio lists no project 4; it was deleted while the job ran, or the
        token's user cannot see it
    """
    listed = {records.int_id(p): p for p in http.projects(ids=project_ids, include=SIGNAL_FIELDS)}
    missing = sorted({int(p) for p in project_ids} - set(listed))
    if missing:
        raise PosthocServiceError(f"Label Studio lists no project {', '.join(map(str, missing))}; it was deleted "
                                  "while the job ran, or the token's user cannot see it")
    return listed


def _count(project: Mapping[str, object], name: str) -> int:
    value = project.get(name)
    return int(value) if isinstance(value, int | str) and str(value).lstrip("-").isdigit() else 0


def _signal(http: ApiCalls, project_id: int, *, counts: tuple[int, ...], label_config: str,
            baseline: str) -> ProjectSignal:
    tasks, recent = http.task_query(project_id, since_query(baseline), include="id,updated_at")
    latest = None
    if tasks:
        changed = records.updated_at(tasks[0])
        if not changed:
            raise PosthocServiceError(f"Label Studio answered a task of project {project_id} without updated_at")
        latest = (records.int_id(tasks[0]), dm_timestamp(changed))
    return ProjectSignal(project_id=project_id, counts=counts, label_config=label_config, baseline=baseline,
                         recent=recent, latest=latest)


def project_signals(http: ApiCalls, projects: Mapping[int, Mapping[str, object]], *,
                    baselines: Mapping[int, str] | None = None,
                    threads: int = SIGNAL_THREADS) -> dict[int, ProjectSignal]:
    """The change signal of each of ``projects`` (``{id: project}`` with :data:`SIGNAL_FIELDS`, as
    :func:`listed_projects` gives them): one one-row Data Manager query a project, from its baseline in
    ``baselines`` (:data:`EPOCH` when it has none).

    Examples:
        An in-process stand-in for the API: the query from the epoch (no baseline known) finds one task, task 9, so
        ``recent`` is 1 and it is the latest; the counts missing from the listing are 0.

        >>> from posthoc.export.signals import project_signals
        >>> class Api:
        ...     def task_query(self, project_id, query, *, include):
        ...         return [{"id": 9, "updated_at": "2026-12-01T10:00:00.000000Z"}], 1
        >>> signal = project_signals(Api(), {3: {"id": 3, "label_config": "<View/>", "task_number": 2}})[3]
        >>> signal.counts, signal.baseline, signal.recent, signal.latest
        ((2, 0, 0, 0), '1970-01-01T00:00:00.000000Z', 1, (9, '2026-12-01T10:00:00.000000Z'))
    """
    known = baselines or {}

    def read(project_id: int) -> ProjectSignal:
        project = projects[project_id]
        return _signal(http, project_id, counts=tuple(_count(project, name) for name in COUNT_FIELDS),
                       label_config=str(project.get("label_config") or ""), baseline=known.get(project_id, EPOCH))

    return {signal.project_id: signal for signal in pool_map(read, sorted(projects), threads=threads)}


def rebaseline(http: ApiCalls, signals: Sequence[ProjectSignal], *,
               threads: int = SIGNAL_THREADS) -> dict[int, ProjectSignal]:
    """The signals of projects about to be exported from their :meth:`~ProjectSignal.rebaselined` baselines (one
    more query each whose baseline moves; the others are returned as they are), read before the export.

    Examples:
        An in-process stand-in for the API where task 9 (updated at 10:00) holds no draft: from the new baseline 10:00
        nothing is counted, so ``recent`` is 0 and there is no latest task.

        >>> from posthoc.export.signals import ProjectSignal, rebaseline
        >>> class Api:
        ...     def task_query(self, project_id, query, *, include):
        ...         print("from", query["filters"]["items"][1]["value"])
        ...         return [], 0
        >>> seen = ProjectSignal(project_id=3, counts=(2, 1, 0, 0), label_config="<View/>",
        ...                      baseline="1970-01-01T00:00:00.000000Z", recent=1,
        ...                      latest=(9, "2026-12-01T10:00:00.000000Z"))
        >>> moved = rebaseline(Api(), [seen])[3]
        from 2026-12-01T10:00:00.000000Z
        >>> moved.baseline, moved.recent, moved.latest
        ('2026-12-01T10:00:00.000000Z', 0, None)
    """
    moved = [s for s in signals if s.rebaselined() != s.baseline]

    def again(signal: ProjectSignal) -> ProjectSignal:
        return _signal(http, signal.project_id, counts=signal.counts, label_config=signal.label_config,
                       baseline=signal.rebaselined())

    return {**{s.project_id: s for s in signals}, **{s.project_id: s for s in pool_map(again, moved, threads=threads)}}
