"""The study manifest: the plan persisted, the source of truth for every later step.

Label Studio setup imports :meth:`Manifest.tasks` per worker; the ML backend answers ``/predict``
with :meth:`Manifest.prefill` of the task's opaque key; the export joins judgements back by
``task_key`` and ``mention_id`` through :meth:`Manifest.mentions`. Task keys and mention ids are
opaque (:mod:`posthoc.study.plan.keys`): nothing shown to an annotator reveals a system or a dataset.
Storage lives in :mod:`posthoc.study.plan.storage` (one SQLite file).

Revisions (``posthoc study extend`` / ``reassign`` / ``add-system``, :mod:`posthoc.study.plan.revision`) append
tasks and mark tasks withdrawn (``add-system`` also records a new system's annotations,
:meth:`Manifest.added_annotations`); :meth:`Manifest.revise` rewrites the whole file atomically (built beside it,
then renamed over it), never in place. :meth:`Manifest.tasks` keeps its columns and lists every task, withdrawn ones too
(they stay in their worker's Label Studio project, which serves tasks in import order); :meth:`Manifest.revisions`
and :meth:`Manifest.task_revisions` say what each revision did. A manifest written before revisions existed
has neither table and reads as revision 0 throughout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.study.plan import storage
from posthoc.study.plan.index import TaskInfo

if TYPE_CHECKING:  # pandas is imported where a table is made: opening a manifest needs none (issue 24)
    import pandas as pd

    from posthoc.study.plan.design import StudyPlan

_TASK_SELECT = (
    "SELECT t.task_key, t.worker, t.position, t.batch, t.item_id, t.chunk_id, c.dataset, c.doc_id, t.system, "
    "t.is_control, c.text, c.chunk_start FROM tasks t JOIN chunks c ON c.chunk_id = t.chunk_id"
)
_PREFILL_COLUMNS = "p.mention_id, p.start, p.\"end\", p.surface, p.link, p.is_nil, p.expected_outcome"
_MENTIONS_SELECT = (
    "SELECT t.task_key, t.worker, t.position, t.item_id, t.chunk_id, c.dataset, c.doc_id, t.system, t.is_control, "
    "p.mention_id, p.start, p.\"end\", p.doc_start, p.doc_end, p.surface, p.link, p.is_nil, p.expected_outcome, "
    "p.expected_link FROM prefill p JOIN tasks t ON t.task_key = p.task_key JOIN chunks c ON c.chunk_id = t.chunk_id "
    "ORDER BY t.worker, t.position, p.ord"
)


@dataclass(frozen=True)
class TaskRecord(TaskInfo):
    """One task, as a row of :meth:`Manifest.tasks`: what :class:`~posthoc.study.plan.index.TaskInfo` holds, and
    its key, batch, chunk text and the chunk's start in its document."""

    task_key: str
    batch: int
    text: str
    chunk_start: int


def _meta(plan: StudyPlan) -> dict[str, str]:
    config = plan.config
    return {
        "format": storage.FORMAT,
        "version": storage.VERSION,
        "study": config.name,
        "seed": str(config.seed),
        "k": str(config.k),
        "config": config.to_json(),
        "summary": json.dumps(plan.summary, sort_keys=True, ensure_ascii=False),
    }


def _tables(plan: StudyPlan) -> dict[str, pd.DataFrame]:
    import pandas as pd

    workers = pd.DataFrame({"worker": list(plan.workers), "ord": range(len(plan.workers))})
    prefill = plan.prefill.copy()
    prefill["ord"] = prefill.groupby("task_key", sort=False).cumcount()
    return {
        "workers": workers,
        "documents": plan.documents,
        "source_mentions": plan.source_mentions,
        "chunks": plan.chunks,
        "items": plan.items,
        "tasks": plan.tasks,
        "prefill": prefill,
        **{name: pd.DataFrame({column: [] for column, _ in storage.TABLES[name]}) for name in storage.REVISION_TABLES},
    }


class Manifest:
    """A study manifest file (SQLite); open with :meth:`open`, write with :meth:`create`."""

    def __init__(self, path: Path, reader: storage.Reader, meta: dict[str, str]) -> None:
        self.path = path
        self._reader = reader
        self._meta = meta
        self.study: str = meta["study"]
        self.seed: int = int(meta["seed"])
        self.k: int = int(meta["k"])
        self._digest: str | None = None

    # ----------------------------------------------------------------- writing / opening
    @classmethod
    def create(cls, path: str | Path, plan: StudyPlan, *, overwrite: bool = False) -> Manifest:
        """Write ``plan`` to ``path`` atomically and open it.

        The file is built beside ``path`` first. When ``path`` already holds a file with the same bytes
        (the same plan), nothing is replaced (a no-op); a different plan, or a file that is not a
        manifest, is a :class:`PosthocInputError` unless ``overwrite=True``.
        """
        target = Path(path)
        existing: Manifest | None = None
        if target.exists():
            try:
                existing = cls.open(target)
            except PosthocInputError:
                if not overwrite:
                    raise PosthocInputError(
                        f"{target} exists and is not a study manifest; choose another --out or pass --overwrite"
                    ) from None
        refused: list[Manifest] = []

        def replace(built: Path) -> bool:
            if existing is None:
                return True
            existing.close()
            if storage.file_sha256(built) == existing.digest:
                return False
            if not overwrite:
                refused.append(existing)
                return False
            return True

        storage.write_database(target, _meta(plan), _tables(plan), replace=replace)
        if refused:
            raise PosthocInputError(
                f"{target} holds a different study plan (study {refused[0].study!r}, seed {refused[0].seed}); "
                "choose another --out or pass --overwrite to replace it"
            )
        return cls.open(target)

    @classmethod
    def open(cls, path: str | Path) -> Manifest:
        """Open an existing manifest; :class:`PosthocInputError` if it is missing or not a manifest."""
        target = Path(path)
        if not target.is_file():
            what = "is a folder, not a manifest file" if target.is_dir() else "does not exist"
            raise PosthocInputError(f"study manifest {target} {what}; run `posthoc study plan` first")
        if not storage.is_sqlite(target):
            raise PosthocInputError(f"{target} is not a study manifest (not an SQLite file)")
        reader = storage.Reader(target)
        try:
            meta = reader.meta()
        except Exception as exc:  # sqlite3.DatabaseError and friends: not our schema
            reader.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise PosthocServiceError(f"study manifest {target}: SQLite says '{exc}': another program holds "
                                          "a lock on it (it has the file open for writing); retry when it has "
                                          "finished") from None
            raise PosthocInputError(f"{target} is not a study manifest: {exc}") from None
        if meta.get("format") != storage.FORMAT:
            reader.close()
            raise PosthocInputError(f"{target} is not a study manifest (no {storage.FORMAT} marker)")
        if meta.get("version") != storage.VERSION:
            reader.close()
            raise PosthocInputError(
                f"{target} is a study manifest of version {meta.get('version')}; this build reads version "
                f"{storage.VERSION}: re-run `posthoc study plan`"
            )
        return cls(target, reader, meta)

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        self._reader.close()

    def __repr__(self) -> str:
        return f"Manifest({str(self.path)!r}, study={self.study!r}, seed={self.seed}, k={self.k})"

    @classmethod
    def revise(cls, path: str | Path, tables: dict[str, pd.DataFrame], *, expected_digest: str) -> Manifest:
        """Rewrite the manifest at ``path`` with ``tables`` (every table of :data:`storage.TABLES`, rows in storage
        order) and its own metadata, atomically; :class:`PosthocInputError` when the file changed since it was read
        (its digest is no longer ``expected_digest``: another command revised it meanwhile)."""
        target = Path(path)
        current = cls.open(target)
        meta = dict(current._meta)
        changed = current.digest != expected_digest
        current.close()
        if changed:
            raise PosthocInputError(f"{target} changed while this revision was computed; run the command again")
        storage.write_database(target, meta, tables)
        return cls.open(target)

    def raw_tables(self) -> dict[str, pd.DataFrame]:
        """Every stored table as written (columns of :data:`storage.TABLES`, rows in storage order): what
        :meth:`revise` takes back with rows appended. The revision tables are empty for an old manifest."""
        tables: dict[str, pd.DataFrame] = {}
        for name in storage.TABLES:
            tables[name] = self.raw_tables_of(name)
        return tables

    def revisions(self) -> pd.DataFrame:
        """``number, kind, created, parameters, digest`` of every revision (``extend`` / ``reassign``), in order;
        empty for a manifest that was never revised. ``created`` is UTC (ISO 8601), ``parameters`` JSON."""
        return self.raw_tables_of("revisions").sort_values("number", kind="stable").reset_index(drop=True)

    def task_revisions(self) -> pd.DataFrame:
        """``task_key, worker, revision, withdrawn_in, withdrawn_reason`` of every task (sorted as :meth:`tasks`):
        the revision that added it (0 = the plan) and, for a task withdrawn from its worker, the revision that
        withdrew it and why (``None`` otherwise)."""
        tasks = self._reader.frame("SELECT task_key, worker FROM tasks ORDER BY worker, position")
        marks = self.raw_tables_of("task_revisions")
        merged = tasks.merge(marks, on="task_key", how="left")
        merged["revision"] = merged["revision"].fillna(0).astype("int64")
        merged["withdrawn_in"] = merged["withdrawn_in"].astype(object).where(merged["withdrawn_in"].notna(), None)
        merged["withdrawn_reason"] = merged["withdrawn_reason"].astype(object).where(
            merged["withdrawn_reason"].notna(), None)
        return merged

    def withdrawn(self) -> dict[str, str]:
        """Task key -> reason of every withdrawn task (what the score job leaves out, kind ``withdrawn``)."""
        marks = self.raw_tables_of("task_revisions")
        marks = marks.loc[marks["withdrawn_in"].notna()]
        return {str(k): str(r) for k, r in zip(marks["task_key"], marks["withdrawn_reason"], strict=True)}

    def added_annotations(self) -> pd.DataFrame:
        """Every annotation of a system ``posthoc study add-system`` added (:mod:`posthoc.study.plan.add_system`):
        ``revision, system, dataset, doc_id, start, end`` (document offsets, code points), ``surface, link,
        link_original, is_nil, chunk_id`` (``None``: in no stored chunk), ``status`` (``reused | sampled |
        unsampled | unplaced``), ``reused_from`` (the study systems whose judged annotation it equals, comma-separated)
        and ``chunk_sampled`` (its chunk has a task of the added system). Empty when no system was added."""
        return self.raw_tables_of("added_annotations")

    def raw_tables_of(self, name: str) -> pd.DataFrame:
        """One stored table (rows in storage order); a revision table (:data:`storage.REVISION_TABLES`) is empty
        in a manifest from before revisions."""
        columns = storage.TABLES[name]
        if name in storage.REVISION_TABLES and not self._reader.has_table(name):
            import pandas as pd

            return pd.DataFrame({column: pd.Series([], dtype=object) for column, _ in columns})
        quoted = ", ".join(f'"{column}"' for column, _ in columns)
        return self._reader.frame(f"SELECT {quoted} FROM {name} ORDER BY rowid")  # noqa: S608

    # ----------------------------------------------------------------- metadata
    @property
    def digest(self) -> str:
        """SHA-256 of the manifest file: equal for equal plans (the file is byte-identical)."""
        if self._digest is None:
            self._digest = storage.file_sha256(self.path)
        return self._digest

    @property
    def config(self) -> dict[str, Any]:
        """The study config it was planned with: settings, input paths as written and their SHA-256."""
        return dict(json.loads(self._meta["config"]))

    @property
    def summary(self) -> dict[str, Any]:
        """The plan summary: documents, chunks, items, workers, tasks per worker, control tasks, ..."""
        return dict(json.loads(self._meta["summary"]))

    # ----------------------------------------------------------------- tables
    def workers(self) -> list[str]:
        """Worker ids ``w001``, ``w002``, ... sorted."""
        return [row[0] for row in self._reader.connection().execute("SELECT worker FROM workers ORDER BY worker")]

    def tasks(self, worker: str | None = None) -> pd.DataFrame:
        """One row a task, sorted by worker then position (columns: the fields of :class:`TaskRecord`)."""
        if worker is None:
            return self._reader.frame(f"{_TASK_SELECT} ORDER BY t.worker, t.position")
        return self._reader.frame(f"{_TASK_SELECT} WHERE t.worker = ? ORDER BY t.position", (worker,))

    def task(self, task_key: str) -> TaskRecord | None:
        """The task with this key (an indexed lookup), or ``None``."""
        row = self._reader.row(f"{_TASK_SELECT} WHERE t.task_key = ?", (task_key,))
        return TaskRecord(**row) if row else None

    def prefill(self, task_key: str) -> pd.DataFrame:
        """The annotations to pre-fill for a task, in text order.

        Columns: ``mention_id, start, end`` (code points into the chunk text), ``surface, link, is_nil,
        expected_outcome`` (``None`` for real items; ``verify | edit | remove`` for control annotations).
        Empty for an unknown key.
        """
        return self._reader.frame(
            f"SELECT {_PREFILL_COLUMNS} FROM prefill p WHERE p.task_key = ? ORDER BY p.ord",  # noqa: S608
            (task_key,),
        )

    def mentions(self) -> pd.DataFrame:
        """Every pre-filled annotation joined with its task (sorted by worker, position, text order).

        Columns: ``task_key, worker, position, item_id, chunk_id, dataset, doc_id, system, is_control,
        mention_id, start, end`` (chunk-relative), ``doc_start, doc_end`` (document offsets), ``surface,
        link, is_nil, expected_outcome, expected_link`` (the right link of a control annotation whose link
        was corrupted, or of a correct one; ``None`` otherwise).
        """
        return self._reader.frame(_MENTIONS_SELECT)

    def documents(self) -> pd.DataFrame:
        """``dataset, doc_id, text`` of every document of the study."""
        return self._reader.frame("SELECT dataset, doc_id, text FROM documents ORDER BY rowid")

    def source_mentions(self) -> pd.DataFrame:
        """The input mentions table, every system including ``GT`` (for pre-annotation metrics)."""
        return self._reader.frame(
            'SELECT dataset, doc_id, system, start, "end", surface, link, link_original, is_nil '
            "FROM source_mentions ORDER BY rowid"
        )

    def chunks(self) -> pd.DataFrame:
        """``dataset, doc_id, chunk_id, chunk_start, chunk_end, text`` of every chunk, in document order."""
        return self._reader.frame(
            "SELECT dataset, doc_id, chunk_id, chunk_start, chunk_end, text FROM chunks ORDER BY chunk_id"
        )

    def items(self) -> pd.DataFrame:
        """``item_id, chunk_id, system, replicates, n_mentions, is_control`` of every item (controls too)."""
        return self._reader.frame("SELECT * FROM items ORDER BY item_id")
