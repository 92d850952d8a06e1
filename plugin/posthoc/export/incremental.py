"""Export a study's projects at scale: cheap change signals, bounded concurrent exports, a cache of judgements.

A periodic ``posthoc score`` on a study of 20 to 300 projects (31,000 tasks) must not export everything to find
that nothing changed. Per run:

1. :mod:`posthoc.export.signals` reads each project's *change signal*, cheaply: the counts and the label config
   from one listing (the one that found the study's projects, or one of their ids) and one one-row Data Manager
   query a project (the tasks holding a draft or updated since the last run's baseline: how many, and the most
   recent); a project found changed gets one more query from its new baseline, before anything is exported. The
   signal changes on every annotation created, updated, skipped or deleted through the API or the labeling
   screen, on tasks imported or deleted, on predictions added or deleted, on a draft saved or removed, and on a
   changed label config. What it does not catch is in docs/score.md ("Incremental runs").
2. Projects whose signal (and flattening context: manifest, worker, tags, e-mail map, code version) equal the
   cached ones are not exported: their flattened judgements and exclusions are read from the cache
   (:class:`JudgementCache`, ``<out>/.posthoc-cache/``). The others are exported by a small thread pool
   (:data:`EXPORT_THREADS`; an export Label Studio reports failed is made again, :data:`EXPORT_TRIES` tries;
   a snapshot export is create + poll + download per project,
   :func:`posthoc.export.fetch.fetch_export`) and each is flattened on its own (:class:`ExportFlattener`).
3. :func:`combine` joins the per-project tables in project order into exactly what one flattener over every
   export gives (same rows, order and dtypes: tested byte for byte), so outputs are byte-identical to a full
   run. A task key found in two projects' exports (possible only with ``--project`` ids) makes the run fall back
   to exporting every project and flattening them with one flattener, which keeps the first.

The signal is read *before* the export, so a change during the export is seen by the next run. Cache files are
staged in the run's work folder and moved in (``os.replace``) only after the outputs are committed: a failed or
killed run leaves the previous cache, and a cache entry is complete or absent.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posthoc.errors import PosthocServiceError
from posthoc.export.signals import ProjectSignal, digest, listed_projects, pool_map, project_signals, rebaseline
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.lazy import Lazy
from posthoc.study.plan.study import Study

if TYPE_CHECKING:  # pandas and the flattener are imported where a project is flattened or read from the cache:
    # a periodic run that finds every signal unchanged imports neither (issue 24)
    from posthoc.export.flatten import Flattened
    from posthoc.labelstudio.label_config import VerificationTags
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.tables import Judgements

#: projects exported at once: Label Studio is one process, mostly busy in Python, on one SQLite file (4 at once
#: made a 1,500-task snapshot export fail now and then: its writes wait for a lock)
EXPORT_THREADS = 2
#: tries of one project's snapshot export that Label Studio reports failed (a new export each time)
EXPORT_TRIES = 3
CACHE_NAME = ".posthoc-cache"
STATE_NAME = "state.json"
#: bump when flattening changes what it writes for the same export (invalidates every cached project)
CACHE_VERSION = 1


@dataclass
class ProjectPart:
    """The flattened judgements and exclusions of one project's export, flattened on its own."""

    judgements: Judgements
    exclusions: list[tuple[str, str, str, str, int]]
    n_tasks: int
    task_keys: list[str] = field(default_factory=list)  # the task keys this export claimed (first seen here)


def flatten_part(path: Path, index: ManifestIndex, tags: VerificationTags, *, user_workers: Mapping[str, str],
                 worker: str | None, source: str) -> ProjectPart:
    """One export flattened alone (``source`` names it in exclusion details, e.g. ``project 12``).

    Examples:
        The task of :func:`~posthoc.export.flatten.flatten_exports`' example, every decision verify: its one task key,
        two verify rows.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.export.incremental import flatten_part
        >>> from posthoc.export.synthetic import write_synthetic_export
        >>> from posthoc.export.synthetic import example_index
        >>> index, tags = example_index()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = write_synthetic_export(Path(folder, "e.json"), index, tags, probabilities=(1, 0, 0, 0)).path
        ...     part = flatten_part(path, index, tags, user_workers={"w1@posthoc.local": "w1"}, worker="w1",
        ...                         source="project 1")
        >>> part.task_keys, part.n_tasks, part.judgements["outcome"].tolist(), part.exclusions
        (['k1'], 1, ['verify', 'verify'], [])
    """
    from posthoc.export.flatten import ExportFlattener

    flattener = ExportFlattener(index, tags, user_workers=user_workers)
    flattener.add_export(path, worker=worker, source=source)
    result = flattener.result()
    return ProjectPart(judgements=result.judgements, exclusions=list(flattener.log.rows), n_tasks=result.n_tasks,
                       task_keys=sorted(flattener.seen_keys))


def combine(parts: Sequence[ProjectPart]) -> Flattened:
    """The per-project tables joined in order: equal (rows, order, dtypes) to one flattener over the same exports
    in the same order, as long as no task key is in two of them (:func:`overlapping`).

    Examples:
        Two projects' parts, w2's first: the joined rows are in the table's order (w1 first), the tasks summed.

        >>> import pandas as pd
        >>> from posthoc.export.incremental import ProjectPart, combine
        >>> def part(worker, key):
        ...     row = pd.DataFrame({"worker": [worker], "position": [0], "task_key": [key], "start": [0], "end": [5],
        ...                         "mention_id": [f"m-{key}"]})
        ...     return ProjectPart(judgements=row, exclusions=[], n_tasks=1, task_keys=[key])
        >>> joined = combine([part("w2", "k2"), part("w1", "k1")])
        >>> joined.judgements["worker"].tolist(), joined.n_tasks, len(joined.exclusions)
        (['w1', 'w2'], 2, 0)
    """
    import pandas as pd

    from posthoc.export.checks import exclusions_frame
    from posthoc.export.flatten import Flattened, empty_judgements, judgement_sort

    frames = [part.judgements for part in parts if len(part.judgements)]
    judgements = judgement_sort(pd.concat(frames, ignore_index=True)) if frames else empty_judgements()
    rows = [row for part in parts for row in part.exclusions]
    return Flattened(judgements=judgements, exclusions=exclusions_frame(rows), n_tasks=sum(p.n_tasks for p in parts))


def overlapping(parts: Sequence[ProjectPart]) -> bool:
    """Whether a task key was claimed by two parts (the flattener then keeps the first: one flattener is needed).

    Examples:
        >>> import pandas as pd
        >>> from posthoc.export.incremental import ProjectPart, overlapping
        >>> def part(*keys):
        ...     return ProjectPart(judgements=pd.DataFrame(), exclusions=[], n_tasks=len(keys), task_keys=list(keys))
        >>> overlapping([part("k1", "k2"), part("k3")]), overlapping([part("k1", "k2"), part("k2")])
        (False, True)
    """
    seen: set[str] = set()
    for part in parts:
        keys = set(part.task_keys)
        if keys & seen:
            return True
        seen |= keys
    return False


def context_key(*, manifest_digest: str, worker: str | None, user_workers: Mapping[str, str]) -> str:
    """Everything besides the export and the label config that decides a project's flattened tables (the config,
    which decides the verification tags, is in the signal's key).

    Examples:
        The e-mail map's order does not change the key (its items are sorted); another worker does.

        >>> from posthoc.export.incremental import context_key
        >>> key = context_key(manifest_digest="abc", worker="w1", user_workers={"a@x.org": "w1", "b@x.org": "w2"})
        >>> key == context_key(manifest_digest="abc", worker="w1", user_workers={"b@x.org": "w2", "a@x.org": "w1"})
        True
        >>> key == context_key(manifest_digest="abc", worker="w2", user_workers={"a@x.org": "w1", "b@x.org": "w2"})
        False
    """
    from posthoc import __version__

    return digest({"version": [CACHE_VERSION, __version__], "manifest": manifest_digest, "worker": worker,
                    "users": sorted(user_workers.items())})


class JudgementCache:
    """Flattened tables of each project keyed to ``project id + signal + context`` in ``folder``.

    ``project-<id>.json`` (key, task count, claimed task keys, exclusion rows) names
    ``project-<id>-<key>.parquet`` (the judgements). :meth:`stage` writes into a staging folder;
    :meth:`commit` moves the staged files in (the JSON last, so an entry is complete or absent) and removes
    entries of projects no longer in the study. An unreadable entry is a miss, never an error.
    """

    def __init__(self, folder: Path, staging: Path) -> None:
        self.folder = folder
        self.staging = staging
        self._staged: list[str] = []

    def load(self, project_id: int, key: str) -> ProjectPart | None:
        import pandas as pd

        from posthoc.export.flatten import empty_judgements

        meta_path = self.folder / f"project-{project_id}.json"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("key") != key:
                return None
            judgements = pd.read_parquet(self.folder / str(meta["judgements"]), engine="pyarrow")
            reference = empty_judgements()
            if list(judgements.columns) != list(reference.columns):
                return None
            judgements = judgements.astype(reference.dtypes.to_dict())
            rows = [(str(k), str(w), str(t), str(d), int(c)) for k, w, t, d, c in meta["exclusions"]]
            return ProjectPart(judgements=judgements, exclusions=rows, n_tasks=int(meta["n_tasks"]),
                               task_keys=[str(k) for k in meta["task_keys"]])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def stage(self, project_id: int, key: str, part: ProjectPart) -> None:
        self.staging.mkdir(parents=True, exist_ok=True)
        table = f"project-{project_id}-{key[:16]}.parquet"
        part.judgements.to_parquet(self.staging / table, index=False, engine="pyarrow", compression="zstd")
        meta = {"key": key, "project": project_id, "judgements": table, "n_tasks": part.n_tasks,
                "task_keys": part.task_keys, "exclusions": [list(row) for row in part.exclusions]}
        (self.staging / f"project-{project_id}.json").write_text(
            json.dumps(meta, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        self._staged += [table, f"project-{project_id}.json"]

    def commit(self, keep: Sequence[int], state: Mapping[str, Any] | None) -> None:
        """Move the staged entries in, drop entries of other projects, then write ``state`` (last)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for name in self._staged:
            os.replace(self.staging / name, self.folder / name)
        self._staged = []
        wanted: set[str] = set()
        for project_id in keep:
            wanted.add(f"project-{project_id}.json")
            with contextlib.suppress(OSError, ValueError, KeyError):
                wanted.add(str(json.loads((self.folder / f"project-{project_id}.json").read_text("utf-8"))
                               ["judgements"]))
        for path in self.folder.iterdir():
            if path.name != STATE_NAME and path.name not in wanted:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
        if state is not None:
            staged_state = self.staging / STATE_NAME
            self.staging.mkdir(parents=True, exist_ok=True)
            staged_state.write_text(json.dumps(state, sort_keys=True, indent=1) + "\n", encoding="utf-8")
            os.replace(staged_state, self.folder / STATE_NAME)

    def state(self) -> dict[str, Any] | None:
        """The state the last successful run wrote (fingerprint, keys of every project, counts), if readable."""
        try:
            loaded = json.loads((self.folder / STATE_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return loaded if isinstance(loaded, dict) else None


def _tags_reader(label_config: str, *, where: str) -> Lazy[VerificationTags]:
    """The verification tags of ``label_config``, parsed (and the parser, which imports pandas, imported) at the
    first call: a run that finds nothing new makes none (issue 24)."""
    def parse() -> VerificationTags:
        from posthoc.labelstudio.label_config import verification_tags

        return verification_tags(label_config, where=where)

    return Lazy(parse)


def _last_keys(state: Mapping[str, object] | None) -> tuple[dict[int, str], dict[int, str]]:
    """The cache keys and signal baselines of each project in the last run's state (``{}`` when it has none)."""
    def read(name: str) -> dict[int, str]:
        value = (state or {}).get(name)
        if not isinstance(value, dict):
            return {}
        return {int(p): str(v) for p, v in value.items() if str(p).isdigit() and isinstance(v, str)}

    return read("keys"), read("baselines")


def combined_key(signal: ProjectSignal, context: str) -> str:
    """The cache key of one project: its signal and its flattening context.

    Examples:
        The digest of the project id, the signal's key and the context, in that order.

        >>> from posthoc.export.incremental import combined_key
        >>> from posthoc.export.signals import EPOCH, ProjectSignal, digest
        >>> signal = ProjectSignal(project_id=3, counts=(2, 1, 0, 0), label_config="<View/>", baseline=EPOCH, recent=0,
        ...                        latest=None)
        >>> combined_key(signal, "context") == digest([3, signal.key, "context"])
        True
        >>> combined_key(signal, "context") == combined_key(signal, "other context")
        False
    """
    return digest([signal.project_id, signal.key, context])


@dataclass
class Collected:
    """What :meth:`StudyExport.collect` did: the tables, which projects were exported and which were reused."""

    flattened: Flattened
    exported: tuple[int, ...]
    reused: tuple[int, ...]


@dataclass
class StudyExport:
    """A study's projects on one Label Studio with their signals and cache keys (read before any export).

    ``client``: the :class:`~posthoc.labelstudio.client.LabelStudioClient` that reads the signals and exports;
    ``projects`` are ``(project id, worker or None)``; ``study``: the opened study, whose manifest index is built
    when the first project is flattened (a run with nothing new never builds it).
    """

    client: LabelStudioClient
    projects: list[tuple[int, str | None]]
    study: Study
    read_tags: dict[int, Lazy[VerificationTags]]
    keys: dict[int, str]
    baselines: dict[int, str] = field(default_factory=dict)  # each project's signal baseline (signals.py)

    @property
    def index(self) -> ManifestIndex:
        """The manifest's index, read when the first project is flattened (a run with nothing new never is)."""
        return self.study.index

    @property
    def user_workers(self) -> Mapping[str, str]:
        """Login e-mail -> worker of the study (:attr:`posthoc.study.plan.study.Study.user_workers`)."""
        return self.study.user_workers

    def tags(self, project_id: int) -> VerificationTags:
        """The verification tags of the project's label config, parsed when the project is first flattened (the
        SDK's parser takes ~0.9 s to import; a run with nothing new needs neither)."""
        return self.read_tags[project_id]()

    @classmethod
    def open(cls, client: LabelStudioClient, projects: Sequence[tuple[int, str | None]], study: Study, *,
             listed: Mapping[int, Mapping[str, object]] | None = None, previous: Mapping[str, object] | None = None,
             threads: int = EXPORT_THREADS) -> StudyExport:
        """Read every project's signal (:mod:`posthoc.export.signals`) and label config; PosthocServiceError /
        PosthocInputError on failure. ``listed``: the projects with :data:`~posthoc.export.signals.SIGNAL_FIELDS`
        from the listing that found them (else one listing here); ``previous``: the last run's state
        (:meth:`JudgementCache.state`), whose keys tell which projects changed and whose baselines the queries
        count from."""
        ids = [p for p, _ in projects]
        found = listed if listed is not None else listed_projects(client, ids)
        last_keys, last_baselines = _last_keys(previous)
        signals = project_signals(client, {p: found[p] for p in ids}, baselines=last_baselines, threads=threads)
        contexts = {p: context_key(manifest_digest=study.digest, worker=worker, user_workers=study.user_workers)
                    for p, worker in projects}
        changed = [signals[p] for p in ids if last_keys.get(p) != combined_key(signals[p], contexts[p])]
        signals.update(rebaseline(client, changed, threads=threads))  # before any export: see signals.py
        tags: dict[int, Lazy[VerificationTags]] = {}
        parsed: dict[str, Lazy[VerificationTags]] = {}  # a study's projects share one config: parsed once
        for project_id in ids:
            config = signals[project_id].label_config
            if config not in parsed:
                parsed[config] = _tags_reader(config, where=f"project {project_id}")
            tags[project_id] = parsed[config]
        return cls(client=client, projects=list(projects), study=study, read_tags=tags,
                   keys={p: combined_key(signals[p], contexts[p]) for p in ids},
                   baselines={p: signals[p].baseline for p in ids})

    def _export_part(self, project: tuple[int, str | None], work_dir: Path) -> ProjectPart:
        from posthoc.export.fetch import fetch_export

        project_id, worker = project
        for attempt in range(EXPORT_TRIES):
            try:
                path = fetch_export(self.client, project_id, work_dir / f"project-{project_id}.json")
                break
            except PosthocServiceError as exc:
                if "failed" not in str(exc) or attempt == EXPORT_TRIES - 1:
                    raise
                time.sleep(1.0 + attempt)
        try:
            return flatten_part(path, self.index, self.tags(project_id), user_workers=self.user_workers,
                                worker=worker, source=f"project {project_id}")
        finally:
            path.unlink(missing_ok=True)  # 31,000 tasks of exports need not stay on disk

    def collect(self, cache: JudgementCache | None, work_dir: Path, *, progress: bool = False,
                threads: int = EXPORT_THREADS) -> Collected:
        """Reuse the cached projects, export the others (``threads`` at a time), stage their cache entries."""
        from tqdm import tqdm

        parts: dict[int, ProjectPart] = {}
        if cache is not None:
            for project_id, _ in self.projects:
                hit = cache.load(project_id, self.keys[project_id])
                if hit is not None:
                    parts[project_id] = hit
        reused = tuple(p for p, _ in self.projects if p in parts)
        todo = [project for project in self.projects if project[0] not in parts]
        with tqdm(total=len(todo), desc="export projects", unit=" project", disable=not progress) as bar:
            fresh = pool_map(lambda project: self._export_part(project, work_dir), todo, threads=threads,
                              done=lambda _: bar.update())
        for (project_id, _), part in zip(todo, fresh, strict=True):
            parts[project_id] = part
            if cache is not None:
                cache.stage(project_id, self.keys[project_id], part)
        ordered = [parts[p] for p, _ in self.projects]
        if overlapping(ordered):  # a task in two projects: one flattener over every export keeps the first
            return Collected(flattened=self._flatten_all(work_dir, progress=progress), exported=tuple(
                p for p, _ in self.projects), reused=())
        return Collected(flattened=combine(ordered), exported=tuple(p for p, _ in todo), reused=reused)

    def _flatten_all(self, work_dir: Path, *, progress: bool) -> Flattened:
        from posthoc.export.fetch import fetch_export
        from posthoc.export.flatten import ExportFlattener

        flattener = ExportFlattener(self.index, self.tags(self.projects[0][0]), user_workers=self.user_workers)
        for project_id, worker in self.projects:
            path = fetch_export(self.client, project_id, work_dir / f"project-{project_id}.json")
            flattener.add_export(path, worker=worker, tags=self.tags(project_id), progress=progress,
                                 source=f"project {project_id}")
            path.unlink(missing_ok=True)
        return flattener.result()
