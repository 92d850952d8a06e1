"""The export-and-score job behind ``posthoc score``: Label Studio -> judgements -> metrics -> report.

:func:`run_score_job` opens the study once (:class:`~posthoc.study.plan.study.Study`), pulls a snapshot export of
every project of it or reads export files (the :class:`JudgementSource`), flattens them against the manifest's index
(:mod:`posthoc.export`), scores them with the :class:`ScoreOptions`
(:func:`posthoc.metrics.score_judgements`, seed 000 sections 3-4) and writes into ``out_dir``:

``report.html`` (Figures 3-6, tables, exclusions), ``tables/<name>.csv|parquet`` (every
:class:`~posthoc.scores.Scores` table), ``judgements.csv|parquet``, ``summary.json`` (sorted keys, no
timestamps), ``corrected_gold.jsonl`` and ``corrected_gold.ttl`` (NIF).

Cron-friendly: a non-blocking lock (``.posthoc-score.lock``) refuses overlapping runs
(:class:`ScoreJobLocked`); every file is written to a staging directory and moved in with
``os.replace``, and the fingerprint (SHA-256 of the normalised judgements, exclusions, options and the
manifest digest) is written last, so an interrupted run leaves complete files and is redone. With
``ScoreOptions(periodic=True)`` an unchanged fingerprint returns status ``nothing-new`` without rewriting anything.
Label Studio unreachable raises :class:`~posthoc.errors.PosthocServiceError` before any output is
touched. The same data gives byte-identical files. No judgement and no exclusion at all (an export of ``[]``, a study
nobody has annotated yet) returns status ``empty``: nothing is scored or written, no report of empty tables. A first
run that writes nothing (failed, interrupted by Ctrl-C, or empty) removes the ``out_dir`` it made, lock file and all.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import filelock

from posthoc.errors import PosthocInputError
from posthoc.export.incremental import CACHE_NAME, JudgementCache, StudyExport
from posthoc.jobs.score_options import FORMATS, JudgementSource, ScoreOptions
from posthoc.labelstudio import records
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.plan.study import Study

if TYPE_CHECKING:  # pandas, the flattener, the metrics and the report are imported where a run needs them: a
    # periodic run that finds nothing new imports none of them (issue 24; tests/export/test_nothing_new_imports.py)
    from hashlib import _Hash

    import pandas as pd

    from posthoc.export.flatten import Flattened
    from posthoc.html import Section
    from posthoc.scores import Scores
    from posthoc.tables import Judgements

__all__ = ["EXIT_LOCKED", "EXIT_NOTHING_NEW", "EXIT_UPDATED", "FINGERPRINT_NAME", "FORMATS", "LOCK_NAME",
           "JudgementSource", "ScoreJobLocked", "ScoreJobResult", "ScoreOptions", "fingerprint", "run_score_job"]

LOCK_NAME = ".posthoc-score.lock"
FINGERPRINT_NAME = ".posthoc-score.fingerprint"
EXIT_UPDATED = 0
EXIT_NOTHING_NEW = 10
EXIT_LOCKED = 4


#: what a run did: outputs written, the same as the last run, or no judgement at all (nothing written)
RunStatus = Literal["updated", "nothing-new", "empty"]


class ScoreJobLocked(RuntimeError):
    """Another ``posthoc score`` run holds the lock on the output directory."""


@dataclass(frozen=True)
class ScoreJobResult:
    """What a run did: ``status`` is ``updated``, ``nothing-new`` or ``empty`` (no judgement and no exclusion at
    all: nothing scored, nothing written); paths of the outputs."""

    status: RunStatus
    out_dir: Path
    report_path: Path
    fingerprint: str
    n_judgements: int
    n_exclusions: int
    files: tuple[Path, ...] = field(default_factory=tuple)
    exported: tuple[int, ...] = ()  # Label Studio projects exported by this run
    reused: tuple[int, ...] = ()  # projects unchanged since the last run: their cached judgements were used

    @property
    def exit_code(self) -> int:
        """0 when updated or empty, 10 when nothing was new (the CLI uses 10 only with ``--periodic``)."""
        return EXIT_NOTHING_NEW if self.status == "nothing-new" else EXIT_UPDATED


def _study_projects(client: LabelStudioClient, study: Study, project_ids: Sequence[int]
                    ) -> tuple[list[tuple[int, str | None]], dict[int, records.Project] | None]:
    """``(project id, worker or None)`` of every project of the study, and the projects as the listing that found
    them gives them, with the fields their change signal reads (``None`` when ``project_ids`` names them).

    Without ``project_ids``: the projects that carry the study's worker markers, looked up by the ids the setup
    record beside the manifest names and listing every project only when some worker's is unknown
    (:func:`posthoc.study.live.projects.find_study_projects`, written by ``posthoc study create``), asking that
    listing for :data:`~posthoc.export.signals.SIGNAL_FIELDS` too, so one listing finds and signals them.
    """
    if project_ids:
        return [(int(p), None) for p in project_ids], None
    from posthoc.export.signals import SIGNAL_FIELDS
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.labelstudio.calls import PROJECT_FIELDS
    from posthoc.study.live.projects import find_study_projects

    known = recorded_project_ids(default_setup_file(study.path), study=study.name).values()
    found = find_study_projects(client, study.name, study.workers, known_ids=known,
                                include=tuple(dict.fromkeys((*PROJECT_FIELDS, *SIGNAL_FIELDS))))
    if not found:
        raise PosthocInputError(f"Label Studio holds no project of study {study.name!r}; run "
                                "`posthoc study create` first or pass --project")
    return ([(records.int_id(project), worker) for worker, project in found.items()],
            {records.int_id(project): project for project in found.values()})


def _study_export(study: Study, source: JudgementSource, previous: dict[str, object] | None) -> StudyExport:
    """The study's projects on Label Studio with their change signals (read before anything is exported), counted
    from the ``previous`` run's state."""
    from posthoc.export.fetch import connect

    url, token = source.labelstudio()
    client = connect(url, token, timeout=120)
    projects, listed = _study_projects(client, study, source.project_ids)
    return StudyExport.open(client, projects, study, listed=listed, previous=previous)


def _hash_csv(hasher: _Hash, frame: pd.DataFrame, *, rows_at_a_time: int = 50_000) -> None:
    """Feed ``frame`` as CSV into ``hasher`` in slices (a million judgements never become one string)."""
    for start in range(0, max(len(frame), 1), rows_at_a_time):
        part = frame.iloc[start:start + rows_at_a_time]
        hasher.update(part.to_csv(index=False, header=start == 0, lineterminator="\n").encode("utf-8"))


def fingerprint(flattened: Flattened, options: dict[str, int | str], manifest_digest: str) -> str:
    """SHA-256 of the normalised judgements and exclusions, the scoring options and the manifest digest."""
    hasher = hashlib.sha256()
    hasher.update(json.dumps(options, sort_keys=True).encode("utf-8"))
    hasher.update(manifest_digest.encode("utf-8"))
    _hash_csv(hasher, flattened.judgements)
    hasher.update(b"\x00exclusions\x00")
    _hash_csv(hasher, flattened.exclusions)
    return hasher.hexdigest()


def run_score_job(*, manifest_path: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                  source: JudgementSource, options: ScoreOptions | None = None,
                  extra_sections: Iterable[Section] = ()) -> ScoreJobResult:
    """Export (or read), flatten, score and report a study into ``out_dir`` (see the module docstring).

    ``source``: where the judgements come from; ``options``: how they are scored (:class:`ScoreOptions`, checked
    when made; ``None``: the defaults); ``extra_sections``: more sections for the report.

    Raises :class:`PosthocInputError` (bad manifest, export file or option), PosthocServiceError (Label
    Studio unreachable or refusing; previous outputs untouched) or :class:`ScoreJobLocked`.
    """
    options = options if options is not None else ScoreOptions()
    source.check()
    study = Study.open(manifest_path, label_config=source.label_config)  # bad input fails before out_dir is touched
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise PosthocInputError(f"--out {target} is a file; give a folder (new or an earlier run's)")
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(target / LOCK_NAME), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise ScoreJobLocked(f"another posthoc score run holds {target / LOCK_NAME}; try again later") from None
    try:
        _remove_stale_staging(target)
        return _run_locked_naming_disk_errors(_ScoreRun(study, source, options, target), extra_sections)
    finally:  # also on Ctrl-C (KeyboardInterrupt): a first run that wrote nothing leaves no folder behind
        if created and {p.name for p in target.iterdir()} <= {LOCK_NAME}:
            (target / LOCK_NAME).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                target.rmdir()
        lock.release()


def _run_locked_naming_disk_errors(run: _ScoreRun, extra_sections: Iterable[Section]) -> ScoreJobResult:
    """:func:`_run_locked`, with a full disk or an unwritable folder as one PosthocInputError naming the output
    folder (the outputs are staged and moved in whole, so nothing partial is left)."""
    try:
        return _run_locked(run, extra_sections)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
            raise PosthocInputError(f"--out {run.target}: cannot write the outputs ({exc.strerror}); free space "
                                    "or choose another folder; the previous outputs are unchanged") from exc
        raise


def _remove_stale_staging(target: Path) -> None:
    """Remove staging folders a killed run left in ``target`` (safe: this run holds the lock, so no other run
    writes there; outputs are only ever moved in complete, so nothing else needs repair)."""
    for leftover in target.glob(".posthoc-score-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)


@dataclass
class _ScoreRun:
    """One run once the lock on ``target`` is held: the study, the source, the options, what the last run left."""

    study: Study
    source: JudgementSource
    options: ScoreOptions
    target: Path
    cache: JudgementCache | None = None
    state: dict[str, object] = field(default_factory=dict)
    keep: list[int] = field(default_factory=list)
    exported: tuple[int, ...] = ()
    reused: tuple[int, ...] = ()

    @property
    def report_path(self) -> Path:
        """``report.html`` in the output folder."""
        return self.target / "report.html"

    @property
    def marker(self) -> Path:
        """The fingerprint file, written last."""
        return self.target / FINGERPRINT_NAME

    @property
    def previous(self) -> str | None:
        """The last run's fingerprint, when it finished (its report is there)."""
        if self.marker.is_file() and self.report_path.is_file():
            return self.marker.read_text(encoding="utf-8").strip()
        return None

    def result(self, status: RunStatus, digest: str, n_judgements: int, n_exclusions: int,
               files: tuple[Path, ...] = ()) -> ScoreJobResult:
        """What this run did, with the projects it exported and reused."""
        return ScoreJobResult(status=status, out_dir=self.target, report_path=self.report_path,
                              fingerprint=digest, n_judgements=n_judgements, n_exclusions=n_exclusions,
                              files=files, exported=self.exported, reused=self.reused)

    def judgements(self, work_dir: Path, previous: str | None) -> Flattened | ScoreJobResult:
        """The flattened judgements, from the export files or Label Studio (through the cache); a ``nothing-new``
        result instead when a periodic run finds every project as the last run left it."""
        study, options = self.study, self.options
        if self.source.export_files:
            from posthoc.export.flatten import flatten_exports

            return flatten_exports(list(self.source.export_files), study.index, study.tags,
                                   user_workers=study.user_workers, progress=options.progress)
        self.cache = JudgementCache(self.target / CACHE_NAME, work_dir / "cache")
        last = self.cache.state()
        export = _study_export(study, self.source, last)
        self.state = {"context": _state_context(options.fingerprinted(), study.plan_digest),
                      "keys": {str(p): k for p, k in sorted(export.keys.items())},
                      "baselines": {str(p): b for p, b in sorted(export.baselines.items())}}
        self.keep = sorted(export.keys)
        if options.periodic and previous is not None and last is not None and last.get("fingerprint") == previous \
                and all(last.get(name) == value for name, value in self.state.items()):
            self.reused = tuple(p for p, _ in export.projects)
            return self.result("nothing-new", previous, int(last.get("n_judgements", 0)),
                               int(last.get("n_exclusions", 0)))
        from posthoc.labelstudio.versions import warn_if_unsupported

        # one line for a server outside 1.20-1.23, asked only by a run that exports (not on the nothing-new path)
        warn_if_unsupported(export.client)
        collected = export.collect(self.cache, work_dir, progress=options.progress)
        self.exported, self.reused = collected.exported, collected.reused
        return collected.flattened

    def commit_cache(self, state: dict[str, object] | None) -> None:
        """Move the staged cache entries in and, given ``state``, write it (no cache for export files)."""
        if self.cache is not None:
            self.cache.commit(self.keep, state)


def _run_locked(run: _ScoreRun, extra_sections: Iterable[Section]) -> ScoreJobResult:
    """The job once the lock on the output folder is held."""
    previous = run.previous
    with tempfile.TemporaryDirectory(prefix=".posthoc-score-", dir=run.target) as work:
        work_dir = Path(work)
        flattened = run.judgements(work_dir, previous)
        if isinstance(flattened, ScoreJobResult):
            return flattened
        n_exclusions = int(flattened.exclusions["count"].sum())
        if flattened.judgements.empty and not n_exclusions:  # nothing annotated at all: no report of empty tables
            return run.result("empty", previous or "", 0, 0)
        digest = fingerprint(flattened, run.options.fingerprinted(), run.study.plan_digest)
        run.state.update(fingerprint=digest, n_judgements=len(flattened.judgements), n_exclusions=n_exclusions)
        if run.options.periodic and previous == digest:
            run.commit_cache(run.state)
            return run.result("nothing-new", digest, len(flattened.judgements), n_exclusions)
        from posthoc.jobs.score_outputs import commit_outputs, stage_outputs

        scores = _score(run.study, flattened, run.options, digest)
        stage = work_dir / "stage"
        written = stage_outputs(stage, scores=scores, flattened=flattened, documents=run.study.manifest.documents(),
                                fmt=run.options.fmt, summary=scores.summary,
                                extra_sections=_sections(run.study, scores, flattened, extra_sections),
                                study=run.study, target=run.options.target_halfwidth,
                                mentions=run.study.manifest.source_mentions())
        commit_outputs(stage, run.target, written)
        run.commit_cache(None)  # after the outputs: a cache entry never runs ahead of the files it explains
        marker_tmp = work_dir / FINGERPRINT_NAME
        marker_tmp.write_text(digest + "\n", encoding="utf-8")
        os.replace(marker_tmp, run.marker)
        run.commit_cache(run.state)  # last: the next periodic run trusts it only when its fingerprint is the marker's
        shutil.rmtree(stage, ignore_errors=True)
    return run.result("updated", digest, len(flattened.judgements), int(scores.exclusions["count"].sum()),
                      files=tuple(run.target / p for p in written))


def with_kb_entities(mentions: pd.DataFrame, kb_index: str | os.PathLike[str]) -> pd.DataFrame:
    """``mentions`` with the ``entity`` column of strict_kb (:mod:`posthoc.metrics.preannotation`): each link's
    article in the KB index (:meth:`posthoc.readers.wiki_index.WikiIndex.entity_keys`, one batch look-up)."""
    from posthoc.readers.wiki_index import WikiIndex

    index = WikiIndex(kb_index)
    try:
        keys = index.entity_keys(mentions["link"].astype(str).unique().tolist())
    finally:
        index.close()
    return mentions.assign(entity=mentions["link"].astype(str).map(keys))


def _score(study: Study, flattened: Flattened, options: ScoreOptions, digest: str) -> Scores:
    """The study's scores (:func:`posthoc.metrics.score_judgements`), the export's exclusions merged in, with the
    summary ``summary.json`` holds."""
    from posthoc.export.checks import summarise_exclusions
    from posthoc.jobs.score_outputs import merge_exclusions
    from posthoc.metrics import score_judgements

    mentions = study.manifest.source_mentions()
    if options.kb_index is not None:
        mentions = with_kb_entities(mentions, options.kb_index)
    judgements, added = _without_added_systems(study, flattened.judgements)
    scores = score_judgements(judgements, mentions, options=options.scoring(study=study.name))
    scores.exclusions = merge_exclusions(flattened.exclusions, scores.exclusions)
    excluded = summarise_exclusions(scores.exclusions)
    scores.summary = {**scores.summary, **options.fingerprinted(), "study": study.name,
                      "n_tasks_exported": flattened.n_tasks, "n_judgements_exported": len(flattened.judgements),
                      "exclusions": {str(k): int(c) for k, c in zip(excluded["kind"], excluded["count"], strict=True)},
                      "fingerprint": digest,
                      **({"added_systems_not_scored": added} if added else {})}
    return scores


def _without_added_systems(study: Study, judgements: Judgements) -> tuple[Judgements, list[str]]:
    """The judgements without those of systems ``posthoc study add-system`` added, and those systems' names.

    An added system's tasks are a sample of its chunks (docs/study.md), so its judgements scored as any system's
    would give figures of the sampled chunks only, biased for the system as a whole; its figures need the reused
    and predicted verdicts beside them (issue 46's estimation side), so it is left out of the tables and the
    summary names it (``added_systems_not_scored``). Its judgements stay in ``judgements.csv``."""
    added = study.manifest.added_annotations()
    systems = sorted({str(name) for name in added["system"]}) if len(added) else []
    if not systems or len(judgements) == 0:
        return judgements, systems
    return judgements.loc[~judgements["system"].astype(str).isin(systems)].reset_index(drop=True), systems


def _sections(study: Study, scores: Scores, flattened: Flattened, extra: Iterable[Section]) -> list[Section]:
    """The report's sections beyond the scores': the study's own, ``extra``, and the plan held against the outcome
    when ``posthoc study estimate`` saved an estimate beside the manifest."""
    from posthoc.jobs.study_sections import study_sections
    from posthoc.study.planner.outcome_section import plan_against_outcome_section

    excluded_workers = scores.controls.loc[scores.controls["excluded"], "worker"] if len(scores.controls) else ()
    sections = [*study_sections(flattened.judgements, exclude_workers=excluded_workers), *extra]
    planned = plan_against_outcome_section(study.estimate_path, scores, flattened.judgements, study=study.name)
    return sections + ([planned] if planned is not None else [])


def _state_context(options: dict[str, int | str], manifest_digest: str) -> str:
    """What besides the projects decides the outputs: the options and the manifest (and estimate) digest."""
    return hashlib.sha256(json.dumps([options, manifest_digest], sort_keys=True).encode("utf-8")).hexdigest()
