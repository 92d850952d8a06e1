"""Stream Label Studio JSON exports into the judgements table (seed 000 section 2.1).

One row per pre-filled annotation (a prediction region whose id is a manifest ``mention_id``) judged by
the project's worker, columns :data:`posthoc.tables.JUDGEMENT_COLUMNS`:

- ``outcome`` is the region's decision (verify / edit / remove): its label in the current config (pre-filled
  ``undecided``), its per-region ``decision`` choice in earlier ones (:func:`_decision_values`); a
  pre-filled region the annotator deleted counts as ``remove`` with ``deleted_region = True``;
- ``start`` / ``end`` are document code point offsets (``doc_start`` / ``doc_end`` of the manifest,
  i.e. the chunk start plus the region's chunk offset); ``surface`` and ``link`` are the manifest's
  (what was pre-filled), ``new_link`` the canonical form (:func:`posthoc.links.normalise_link`) of the
  link typed into the ``new_link`` box of an edit;
- ``worker``, ``position``, ``is_control``, ``expected_outcome`` and the item columns come from the
  manifest, ``created_at`` and ``lead_time`` from the annotation.

Everything else is an exclusion row (:mod:`posthoc.export.checks`): skipped tasks, drafts,
annotations by other users, earlier submissions of a task annotated twice (the latest is kept),
tasks without a prediction, regions drawn by hand, moved or resized regions, undecided regions.

The export is read with ``ijson`` one task at a time, so a million judgements never need the whole
JSON in memory; only the output columns grow, and their repeated strings are the manifest's own
objects.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import ijson
import numpy as np
import pandas as pd
from tqdm import tqdm

from posthoc.errors import PosthocInputError
from posthoc.export.checks import ExclusionLog
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.label_config import VerificationTags
from posthoc.labelstudio.regions import Region, parse_regions
from posthoc.links import normalise_link
from posthoc.study.plan.index import ManifestIndex, Prefill, TaskInfo
from posthoc.study.plan.logins import default_user_workers
from posthoc.tables import JUDGEMENT_COLUMNS, OUTCOMES, Judgements

_JUDGEMENT_DTYPES = {
    "study": "string", "dataset": "string", "doc_id": "string", "chunk_id": "string", "item_id": "string",
    "task_key": "string", "mention_id": "string", "system": "string", "start": "int64", "end": "int64",
    "surface": "string", "link": "string", "worker": "string", "outcome": "string", "new_link": "string",
    "deleted_region": "bool", "position": "int64", "created_at": "string", "lead_time": "float64",
    "is_control": "bool", "expected_outcome": "string",
}
#: bytes read at a time: ijson's C backend holds the events of one buffer, about ten times its size
_BUFFER = 16 * 1024
_OUTCOME = {outcome: outcome for outcome in OUTCOMES}
_SORT = ["worker", "position", "task_key", "start", "end", "mention_id"]


class _Columns:
    """The judgements as a few parallel lists of references (task and pre-fill objects are the index's own).

    A million judgements cost about 8 list slots each while reading; the 21 typed columns are built
    one at a time at the end.
    """

    def __init__(self, study: str = "") -> None:
        self.study = study
        self.keys: list[str] = []
        self.tasks: list[TaskInfo] = []
        self.prefills: list[Prefill] = []
        self.outcomes: list[str] = []
        self.new_links: list[str | None] = []
        self.deleted: list[bool] = []
        self.created_at: list[str | None] = []
        self.lead_time: list[float | None] = []

    def append(self, key: str, task: TaskInfo, prefill: Prefill, *, outcome: str, new_link: str | None,
               deleted: bool, created_at: str | None, lead_time: float | None) -> None:
        self.keys.append(key)
        self.tasks.append(task)
        self.prefills.append(prefill)
        self.outcomes.append(outcome)
        self.new_links.append(new_link)
        self.deleted.append(deleted)
        self.created_at.append(created_at)
        self.lead_time.append(lead_time)

    def _column(self, name: str) -> Sequence[object]:
        task_fields = {"dataset", "doc_id", "chunk_id", "item_id", "system", "worker", "position", "is_control"}
        if name == "study":
            return [self.study] * len(self.keys)
        if name in task_fields:
            return [getattr(task, name) for task in self.tasks]
        if name in ("start", "end"):
            attribute = "doc_start" if name == "start" else "doc_end"
            return [getattr(prefill, attribute) for prefill in self.prefills]
        if name in ("mention_id", "surface", "link", "expected_outcome"):
            return [getattr(prefill, name) for prefill in self.prefills]
        own: dict[str, Sequence[object]] = {"task_key": self.keys, "outcome": self.outcomes, "new_link": self.new_links,
               "deleted_region": self.deleted, "created_at": self.created_at}
        if name == "lead_time":
            return [float("nan") if v is None else v for v in self.lead_time]
        return own[name]

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame({name: pd.Series(np.asarray(self._column(name), dtype=object),
                                              dtype=_JUDGEMENT_DTYPES[name])
                              for name in JUDGEMENT_COLUMNS})
        return judgement_sort(frame)


def judgement_sort(frame: Judgements) -> Judgements:
    """Judgement rows in the table's order (worker, position, task, span, mention; stable), index reset.

    Examples:
        By worker first, then position: w1's row comes before w2's though listed after it.

        >>> import pandas as pd
        >>> from posthoc.export.flatten import judgement_sort
        >>> rows = pd.DataFrame({"worker": ["w2", "w1", "w1"], "position": [0, 1, 0], "task_key": ["k3", "k2", "k1"],
        ...                      "start": [0, 0, 0], "end": [5, 5, 5], "mention_id": ["m3", "m2", "m1"]})
        >>> judgement_sort(rows)[["worker", "position", "task_key"]]
          worker  position task_key
        0     w1         0       k1
        1     w1         1       k2
        2     w2         0       k3
    """
    return frame.sort_values(_SORT, kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class Flattened:
    """The judgements table and the exclusions table (:mod:`posthoc.export.checks`) of one or more exports."""

    judgements: Judgements
    exclusions: pd.DataFrame
    n_tasks: int


def empty_judgements() -> Judgements:
    """An empty judgements table with the right columns and dtypes.

    Examples:
        >>> from posthoc.export.flatten import empty_judgements
        >>> from posthoc.tables import JUDGEMENT_COLUMNS
        >>> table = empty_judgements()
        >>> len(table), tuple(table.columns) == JUDGEMENT_COLUMNS, str(table["start"].dtype)
        (0, True, 'int64')
    """
    return _Columns().frame()


def iter_export_tasks(path: str | os.PathLike[str]) -> Iterator[object]:
    """The elements of a Label Studio JSON export (a JSON array of tasks), one at a time, without loading the file
    (each as parsed: the reader checks it is a task object).

    Examples:
        An array of two tasks gives two elements; a file that is not an array is refused (the message starts with its
        path).

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.export.flatten import iter_export_tasks
        >>> folder = tempfile.TemporaryDirectory()
        >>> _ = Path(folder.name, "export.json").write_text('[{"id": 1}, {"id": 2}]', encoding="utf-8")
        >>> _ = Path(folder.name, "task.json").write_text('{"id": 1}', encoding="utf-8")
        >>> [task["id"] for task in iter_export_tasks(Path(folder.name, "export.json"))]
        [1, 2]
        >>> list(iter_export_tasks(Path(folder.name, "task.json")))
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: ...task.json: not a Label Studio JSON export (a JSON array of tasks): the file
        does not start with '['
        >>> folder.cleanup()
    """
    source = Path(path)
    what = "not a Label Studio JSON export (a JSON array of tasks)"
    try:
        with source.open("rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
            if head and not head.startswith(b"["):
                raise PosthocInputError(f"{source}: {what}: the file does not start with '['")
            handle.seek(0)
            yield from ijson.items(handle, "item", use_float=True, buf_size=_BUFFER)
    except FileNotFoundError as exc:
        raise PosthocInputError(f"{source}: export file not found") from exc
    except IsADirectoryError as exc:
        raise PosthocInputError(f"{source}: a folder, not an export file") from exc
    except UnicodeDecodeError as exc:
        raise PosthocInputError(f"{source}: {what}: not UTF-8 at byte {exc.start} (Label Studio writes UTF-8)") from exc
    except ijson.JSONError as exc:
        raw = exc.args[0] if exc.args else ""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        reason = (text.strip().splitlines() or [type(exc).__name__])[0]
        raise PosthocInputError(f"{source}: {what}: {reason}") from exc


def user_key(completed_by: ls.UserRef | None) -> str:
    """A stable key for an annotation's ``completed_by``: the lower-case e-mail, else ``id:N``.

    Examples:
        >>> from posthoc.export.flatten import user_key
        >>> user_key({"id": 2, "email": "Ann@Example.org"}), user_key({"id": 2}), user_key(7)
        ('ann@example.org', 'id:2', 'id:7')
    """
    email = str(ls.user_email(completed_by) or "").lower()
    return email if email else f"id:{ls.user_id(completed_by)}"


def _first_line(lines: Sequence[str]) -> str:
    """The first non-blank line typed into a TextArea, stripped (``""`` without one)."""
    return next((stripped for line in lines if (stripped := line.strip())), "")


def _prediction_of(annotation: ls.Annotation, task: ls.Task) -> ls.Prediction | None:
    """The prediction the annotation started from, else the task's newest prediction, else ``None``."""
    embedded = ls.annotation_prediction(annotation)
    if isinstance(embedded, Mapping) and ls.result_items(embedded):
        return embedded
    predictions = [p for p in ls.task_predictions(task) if isinstance(p, Mapping) and ls.result_items(p)]
    parent = ls.parent_prediction(annotation)
    for prediction in predictions:
        if parent is not None and ls.record_id(prediction) == parent:
            return prediction
    return max(predictions, key=lambda p: int(ls.record_id(p) or 0)) if predictions else None


def _decision_values(region: Region, tags: VerificationTags) -> list[str]:
    """The decision values of one region.

    The current config (``tags.decision_in_labels``) keeps the decision in the region's label
    (``labels: ["verify"]``; the pre-filled ``undecided`` is no decision). Configs before it kept it in a
    per-region ``choices`` item; a project relabelled with the new config may hold annotations of
    both kinds, so a region whose label is no outcome falls back to a ``choices`` item with one.
    """
    if not tags.decision_in_labels:
        return list(region.choices.get(tags.decision, ()))
    values = list(region.labels) if region.label_from == tags.labels else []
    if not any(v in _OUTCOME for v in values):
        for name, chosen in region.choices.items():
            if name != tags.labels and any(v in _OUTCOME for v in chosen):
                return list(chosen)
    return values


def _describe(annotation: ls.Annotation) -> str:
    return f"annotation {ls.record_id(annotation)} by {user_key(ls.completed_by(annotation))}"


class ExportFlattener:
    """Flattens exports into judgement rows against one manifest; call :meth:`add_export`, then :meth:`result`."""

    def __init__(self, index: ManifestIndex, tags: VerificationTags, *,
                 user_workers: Mapping[str, str] | None = None) -> None:
        self.index = index
        self.tags = tags
        self.user_workers = dict(user_workers) if user_workers is not None else default_user_workers(index.workers)
        self.log = ExclusionLog()
        self._columns = _Columns(index.study)
        self._seen: dict[str, str] = {}
        self._n_tasks = 0

    @property
    def seen_keys(self) -> set[str]:
        """The task keys flattened so far (a later export holding one of them is ``task_in_two_exports``)."""
        return set(self._seen)

    def add_export(self, path: str | os.PathLike[str], *, worker: str | None = None,
                   tags: VerificationTags | None = None, progress: bool = False, source: str | None = None) -> None:
        """Flatten one export file; ``worker`` is the project's worker when known (else each task's),
        ``tags`` the project's tag names when its label config differs from the flattener's, ``source`` how
        exclusion details name the export (default: its path)."""
        tasks = iter_export_tasks(path)
        for element in tqdm(tasks, desc=f"flatten {Path(path).name}", unit=" tasks", disable=not progress):
            if not isinstance(element, Mapping):
                raise PosthocInputError(f"{path}: an element of the export array is not a task object")
            task = cast(ls.Task, element)
            try:
                self.add_task(task, source=str(path) if source is None else source, worker=worker, tags=tags)
            except PosthocInputError:
                raise
            except (AttributeError, TypeError, ValueError, KeyError) as exc:  # a field of the wrong shape
                raise PosthocInputError(f"{path}: Label Studio task {ls.record_id(task)!r} is malformed "
                                        f"({type(exc).__name__}: {exc}); give the export as Label Studio wrote it"
                                        ) from None

    def add_task(self, task: ls.Task, *, source: str = "", worker: str | None = None,
                 tags: VerificationTags | None = None) -> None:
        """Flatten one exported task (a dict as Label Studio exports it)."""
        self._n_tasks += 1
        data = ls.task_data(task)
        key = str(data.get("task_key") or "")
        info = self.index.tasks.get(key)
        if info is None:
            self.log.add("unknown_task", task_key=key, detail=f"Label Studio task {ls.record_id(task)} in {source}")
            return
        if worker is not None and info.worker != worker:
            self.log.add("wrong_project", worker=info.worker, task_key=key,
                         detail=f"found in the export of {worker}'s project ({source})")
            return
        if key in self.index.withdrawn:
            self.log.add("withdrawn", worker=info.worker, task_key=key, detail=self.index.withdrawn[key])
            return
        if key in self._seen:
            self.log.add("task_in_two_exports", worker=info.worker, task_key=key,
                         detail=f"kept {self._seen[key]}, left out {source}")
            return
        self._seen[key] = source
        drafts = [d for d in ls.task_drafts(task) if isinstance(d, Mapping)]
        if drafts:
            users = ", ".join(sorted({str(ls.draft_user(d)) for d in drafts}))
            self.log.add("draft", worker=info.worker, task_key=key, count=len(drafts),
                         detail=f"{len(drafts)} draft(s) by {users}")
        submitted = []
        for annotation in ls.task_annotations(task):
            author = self.user_workers.get(user_key(ls.completed_by(annotation)))
            if author != info.worker:
                self.log.add("foreign_annotator", worker=info.worker, task_key=key, detail=_describe(annotation))
            elif ls.was_cancelled(annotation):
                self.log.add("skipped", worker=info.worker, task_key=key, detail=_describe(annotation))
            else:
                submitted.append(annotation)
        if not submitted:
            return
        submitted.sort(key=lambda a: (str(ls.created_at(a) or ""), int(ls.record_id(a) or 0)))
        for earlier in submitted[:-1]:
            self.log.add("annotated_twice", worker=info.worker, task_key=key,
                         detail=f"{_describe(earlier)} left out; kept annotation {ls.record_id(submitted[-1])}")
        self._add_annotation(key, info, submitted[-1], task, tags or self.tags)

    def _add_annotation(self, key: str, info: TaskInfo, annotation: ls.Annotation, task: ls.Task,
                        tags: VerificationTags) -> None:
        prediction = _prediction_of(annotation, task)
        if prediction is None:
            self.log.add("no_prediction", worker=info.worker, task_key=key, detail=_describe(annotation))
            return
        predicted = {str(ls.region_id(r)) for r in ls.result_items(prediction)
                     if ls.region_from_name(r) == tags.labels}
        prefills = self.index.prefills.get(key, ())
        known = {p.mention_id for p in prefills}
        for region in sorted(predicted - known):
            self.log.add("unknown_prediction_region", worker=info.worker, task_key=key,
                         detail=f"prediction {ls.record_id(prediction)} region {region}")
        regions = {str(region.id): region for region in parse_regions(ls.result_items(annotation), relations=True)}
        for region in sorted(set(regions) - predicted):
            self.log.add("manual_region", worker=info.worker, task_key=key,
                         detail=f"{_describe(annotation)} region {region}")
        created = ls.created_at(annotation)
        created_at = None if created is None else str(created)
        lead = ls.lead_time(annotation)
        lead_time = None if lead is None else float(lead)
        for prefill in prefills:
            if prefill.mention_id not in predicted:
                self.log.add("not_prefilled", worker=info.worker, task_key=key,
                             detail=f"mention {prefill.mention_id} not in prediction {ls.record_id(prediction)}")
                continue
            judged = regions.get(prefill.mention_id)
            if judged is None or not judged.items:
                self._columns.append(key, info, prefill, outcome="remove", new_link=None,
                                     deleted=True, created_at=created_at, lead_time=lead_time)
                continue
            moved = {span for span in judged.spans if span != (prefill.start, prefill.end)}
            if moved:
                self.log.add("offsets_changed", worker=info.worker, task_key=key,
                             detail=f"mention {prefill.mention_id} pre-filled at {prefill.start}-{prefill.end} "
                                    f"(chunk), annotated at {', '.join(f'{s}-{e}' for s, e in sorted(moved))}")
                continue
            choices = _decision_values(judged, tags)
            outcome = _OUTCOME.get(choices[0], "") if len(choices) == 1 else ""  # shared constant objects
            if not outcome:
                self.log.add("undecided_region", worker=info.worker, task_key=key,
                             detail=f"mention {prefill.mention_id}: decision {choices!r}")
                continue
            new_link = None
            if outcome == "edit" and tags.new_link in judged.texts:
                typed = _first_line(judged.texts[tags.new_link])
                new_link = normalise_link(typed).link if typed else None
            self._columns.append(key, info, prefill, outcome=outcome, new_link=new_link,
                                 deleted=False, created_at=created_at, lead_time=lead_time)

    def result(self) -> Flattened:
        """The judgements and exclusions collected so far (sorted, typed)."""
        return Flattened(judgements=self._columns.frame(), exclusions=self.log.frame(), n_tasks=self._n_tasks)


def flatten_exports(paths: Sequence[str | os.PathLike[str]], index: ManifestIndex, tags: VerificationTags, *,
                    workers: Sequence[str | None] | None = None, user_workers: Mapping[str, str] | None = None,
                    progress: bool = False) -> Flattened:
    """Flatten export files (``workers[i]``: the worker of ``paths[i]``'s project, or None) into one table pair.

    Examples:
        One task of worker w1 pre-filled with ``Paris`` and ``Seine``, written by
        :func:`~posthoc.export.synthetic.write_synthetic_export` with every decision verify: two verify rows, no
        exclusion. One file with no worker is refused.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.export.flatten import flatten_exports
        >>> from posthoc.export.synthetic import write_synthetic_export
        >>> from posthoc.export.synthetic import example_index
        >>> index, tags = example_index()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = write_synthetic_export(Path(folder, "e.json"), index, tags, probabilities=(1, 0, 0, 0)).path
        ...     flattened = flatten_exports([path], index, tags)
        ...     flatten_exports([path], index, tags, workers=[])
        Traceback (most recent call last):
        ...
        posthoc.errors.PosthocInputError: 1 export files but 0 workers given; give one per file
        >>> flattened.judgements[["worker", "mention_id", "start", "end", "link", "outcome"]]
          worker mention_id  start  end   link outcome
        0     w1         m1      0    5  Paris  verify
        1     w1         m2     10   15  Seine  verify
        >>> flattened.n_tasks, len(flattened.exclusions)
        (1, 0)
    """
    flattener = ExportFlattener(index, tags, user_workers=user_workers)
    owners = list(workers) if workers is not None else [None] * len(paths)
    if len(owners) != len(paths):
        raise PosthocInputError(f"{len(paths)} export files but {len(owners)} workers given; give one per file")
    for path, owner in zip(paths, owners, strict=True):
        flattener.add_export(path, worker=owner, progress=progress)
    return flattener.result()
