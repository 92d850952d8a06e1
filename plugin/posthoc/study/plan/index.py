"""The manifest in memory, by opaque task key: one index for setup, the ML backend and the score job.

Read once from :meth:`Manifest.tasks` and :meth:`Manifest.mentions` (two queries), it answers with dictionary
look-ups only:

- ``posthoc study create`` (:func:`posthoc.jobs.setup.import_items`) and the ML backend's ``/predict``: a task's
  chunk text (:meth:`ManifestIndex.text`), its pre-filled mentions as rows for
  :func:`posthoc.labelstudio.payloads.manifest_prediction` (:meth:`ManifestIndex.prefill_rows`) and the regions
  its stored prediction must hold (:meth:`ManifestIndex.regions`);
- the score job's flattener (:mod:`posthoc.export.flatten`): what the manifest says about a task
  (:class:`TaskInfo`) and its pre-fills with chunk and document offsets and the expected outcome of a control
  (:class:`Prefill`).

A million pre-fills stay small: frozen dataclasses, one object per distinct repeated string (worker, dataset,
document, system, chunk text...), dictionaries only. The manifest file is never changed in place: a revision
(``posthoc study extend`` / ``reassign``) replaces it whole, with a new digest; an index keeps the revision it was
built from (a running ML backend or gateway builds a new one when the file is replaced: posthoc_backend.reload).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:  # pandas is imported where an index is built: the manifest imports TaskInfo (issue 24)
    import pandas as pd

TASK_COLUMNS = ("task_key", "worker", "position", "item_id", "chunk_id", "dataset", "doc_id", "system",
                "is_control")
PREFILL_COLUMNS = ("task_key", "mention_id", "start", "end", "doc_start", "doc_end", "surface", "link",
                   "expected_outcome")

#: a cell of a manifest table as ``tolist()`` gives it
Cell = str | int | float | bool | None


class ManifestLike(Protocol):
    """What is read of :class:`posthoc.study.plan.manifest.Manifest` (once)."""

    study: str

    def tasks(self, worker: str | None = None) -> pd.DataFrame:
        """One row a task: :data:`TASK_COLUMNS` and ``text``."""

    def mentions(self) -> pd.DataFrame:
        """Every pre-filled annotation: :data:`PREFILL_COLUMNS` and ``is_nil``, in text order."""


@dataclass(frozen=True)
class TaskInfo:
    """What the manifest says about one task (one chunk x system shown to one worker)."""

    worker: str
    position: int
    item_id: str
    chunk_id: str
    dataset: str
    doc_id: str
    system: str
    is_control: bool


@dataclass(frozen=True)
class Prefill:
    """One pre-filled annotation of a task: chunk offsets for Label Studio, document offsets for tables."""

    mention_id: str
    start: int
    end: int
    doc_start: int
    doc_end: int
    surface: str
    link: str
    expected_outcome: str | None
    is_nil: bool = False

    def row(self) -> dict[str, str | int | bool]:
        """The mention as :func:`~posthoc.labelstudio.payloads.manifest_prediction` and
        :func:`~posthoc.labelstudio.tasks.study_task_data` read it: ``mention_id, start, end, surface, link,
        is_nil``."""
        return {"mention_id": self.mention_id, "start": self.start, "end": self.end, "surface": self.surface,
                "link": self.link, "is_nil": self.is_nil}


def _records(frame: pd.DataFrame, columns: Sequence[str]) -> Iterator[dict[str, Cell]]:
    for values in zip(*(frame[c].tolist() for c in columns), strict=True):
        yield dict(zip(columns, values, strict=True))


def _missing(value: object) -> bool:
    import pandas as pd  # imported already: the index is built from pandas tables

    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _int(value: Cell) -> int:
    return int(cast("float", value))


class _Shared:
    """One object per distinct string: a million rows repeating a few workers and documents keep one copy each."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        return self._seen.setdefault(value, value)


def _task(row: Mapping[str, Cell], shared: _Shared) -> TaskInfo:
    return TaskInfo(worker=shared(str(row["worker"])), position=_int(row["position"]),
                    item_id=shared(str(row["item_id"])), chunk_id=shared(str(row["chunk_id"])),
                    dataset=shared(str(row["dataset"])), doc_id=shared(str(row["doc_id"])),
                    system=shared(str(row["system"])), is_control=bool(row["is_control"]))


def _prefill(row: Mapping[str, Cell], shared: _Shared) -> Prefill:
    expected = None if _missing(row["expected_outcome"]) else shared(str(row["expected_outcome"]))
    return Prefill(mention_id=str(row["mention_id"]), start=_int(row["start"]), end=_int(row["end"]),
                   doc_start=_int(row["doc_start"]), doc_end=_int(row["doc_end"]),
                   surface=str(row["surface"]), link="" if _missing(row["link"]) else str(row["link"]),
                   expected_outcome=expected, is_nil=bool(row.get("is_nil") or False))


@dataclass(frozen=True)
class ManifestIndex:
    """Look-ups from a study manifest, built once: task key -> task, -> its pre-filled annotations, -> its text."""

    study: str
    tasks: Mapping[str, TaskInfo]
    prefills: Mapping[str, tuple[Prefill, ...]]
    texts: Mapping[str, str] = field(default_factory=dict)
    #: task key -> reason of the tasks a revision withdrew from their worker (``posthoc study reassign``)
    withdrawn: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_frames(cls, study: str, tasks: pd.DataFrame, mentions: pd.DataFrame) -> ManifestIndex:
        """From a tasks table (:data:`TASK_COLUMNS`, ``text`` when present) and a pre-filled mentions table
        (:data:`PREFILL_COLUMNS`, ``is_nil`` when present)."""
        from posthoc.tables import require_columns

        require_columns(tasks, TASK_COLUMNS, table="manifest tasks")
        require_columns(mentions, PREFILL_COLUMNS, table="manifest mentions")
        shared = _Shared()
        task_map = {str(row["task_key"]): _task(row, shared) for row in _records(tasks, TASK_COLUMNS)}
        texts = ({str(key): shared(str(text)) for key, text in zip(tasks["task_key"].tolist(), tasks["text"].tolist(),
                                                                   strict=True)}
                 if "text" in tasks.columns else {})
        columns = [*PREFILL_COLUMNS, *(["is_nil"] if "is_nil" in mentions.columns else [])]
        grouped: dict[str, list[Prefill]] = {}
        for row in _records(mentions, columns):
            grouped.setdefault(str(row["task_key"]), []).append(_prefill(row, shared))
        return cls(study=str(study), tasks=task_map, prefills={k: tuple(v) for k, v in grouped.items()},
                   texts=texts)

    @classmethod
    def from_manifest(cls, manifest: ManifestLike) -> ManifestIndex:
        """From a :class:`posthoc.study.plan.manifest.Manifest` (its ``tasks()`` and ``mentions()``)."""
        index = cls.from_frames(str(manifest.study), manifest.tasks(), manifest.mentions())
        withdrawn = getattr(manifest, "withdrawn", None)
        return replace(index, withdrawn=withdrawn()) if callable(withdrawn) else index

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def workers(self) -> list[str]:
        """The workers of the study, sorted."""
        return sorted({info.worker for info in self.tasks.values()})

    def text(self, task_key: str) -> str | None:
        """The chunk text of a task, ``None`` for an unknown key."""
        return self.texts.get(task_key)

    def prefill_rows(self, task_key: str) -> list[dict[str, str | int | bool]]:
        """The task's pre-filled mentions in text order as rows (:meth:`Prefill.row`; empty for an unknown key)."""
        return [prefill.row() for prefill in self.prefills.get(task_key, ())]

    def regions(self, task_key: str) -> dict[str, tuple[int, int, str]]:
        """``{mention_id: (start, end, link)}`` of the task's pre-filled mentions (what its prediction must hold)."""
        return {p.mention_id: (p.start, p.end, p.link) for p in self.prefills.get(task_key, ())}
