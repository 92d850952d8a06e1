"""The export-and-score job behind ``posthoc score``: Label Studio -> judgements -> metrics -> report.

:func:`run_score_job` pulls a snapshot export of every project of a study (or reads export files),
flattens them against the study manifest (:mod:`posthoc.export`), scores them
(:func:`posthoc.metrics.score_judgements`, seed 000 sections 3-4) and writes into ``out_dir``:

``report.html`` (Figures 3-6, tables, exclusions), ``tables/<name>.csv|parquet`` (every
:class:`~posthoc.scores.Scores` table), ``judgements.csv|parquet``, ``summary.json`` (sorted keys, no
timestamps), ``corrected_gold.jsonl`` and ``corrected_gold.ttl`` (NIF).

Cron-friendly: a non-blocking lock (``.posthoc-score.lock``) refuses overlapping runs
(:class:`ScoreJobLocked`); every file is written to a staging directory and moved in with
``os.replace``, and the fingerprint (SHA-256 of the normalised judgements, exclusions, options and the
manifest digest) is written last, so an interrupted run leaves complete files and is redone. With
``periodic=True`` an unchanged fingerprint returns status ``nothing-new`` without rewriting anything.
Label Studio unreachable raises :class:`~posthoc.errors.PosthocServiceError` before any output is
touched. The same data gives byte-identical files.
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
from typing import Any, Literal

import filelock
import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.export.checks import summarise_exclusions
from posthoc.export.flatten import ExportFlattener, Flattened, ManifestIndex, default_user_workers
from posthoc.export.incremental import CACHE_NAME, JudgementCache, StudyExport
from posthoc.html import Section
from posthoc.jobs.score_outputs import commit_outputs, merge_exclusions, stage_outputs
from posthoc.labelstudio.label_config import VerificationTags, verification_tags

LOCK_NAME = ".posthoc-score.lock"
FINGERPRINT_NAME = ".posthoc-score.fingerprint"
FORMATS = ("csv", "parquet")
EXIT_UPDATED = 0
EXIT_NOTHING_NEW = 10
EXIT_INPUT = 2
EXIT_SERVICE = 3
EXIT_LOCKED = 4


class ScoreJobLocked(RuntimeError):
    """Another ``posthoc score`` run holds the lock on the output directory."""


@dataclass(frozen=True)
class ScoreJobResult:
    """What a run did: ``status`` is ``updated`` or ``nothing-new``; paths of the outputs."""

    status: Literal["updated", "nothing-new"]
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
        """0 when updated, 10 when nothing was new (the CLI uses 10 only with ``--periodic``)."""
        return EXIT_UPDATED if self.status == "updated" else EXIT_NOTHING_NEW


def _open_manifest(path: str | os.PathLike[str]) -> Any:
    from posthoc.study.plan.manifest import Manifest

    return Manifest.open(Path(path))


def _study_projects(client: Any, manifest: Any, project_ids: Sequence[int] | None) -> list[tuple[int, str | None]]:
    """``(project id, worker or None)`` of every project of the study.

    Without ``project_ids``: the projects that carry the study's worker markers
    (:func:`posthoc.study.live.projects.study_projects`, written by ``posthoc study create``).
    """
    if project_ids:
        return [(int(p), None) for p in project_ids]
    from posthoc.study.live.projects import study_projects

    found = study_projects(client.projects(), str(manifest.study), manifest.workers())
    if not found:
        raise PosthocInputError(f"Label Studio holds no project of study {manifest.study!r}; run "
                                "`posthoc study create` first or pass --project")
    return [(int(project["id"]), worker) for worker, project in found.items()]


def collect_judgements(manifest: Any, *, ls_url: str | None = None, token: str | None = None,
                       export_files: Sequence[str | os.PathLike[str]] | None = None,
                       project_ids: Sequence[int] | None = None, label_config: str | None = None,
                       work_dir: str | os.PathLike[str], progress: bool = False) -> Flattened:
    """Judgements and exclusions of a study, from export files or fetched from Label Studio into ``work_dir``
    (every project exported, :data:`~posthoc.export.incremental.EXPORT_THREADS` at a time; no cache)."""
    if export_files:
        return _from_export_files(manifest, export_files, label_config=label_config, progress=progress)
    study = _open_study(manifest, ls_url=ls_url, token=token, project_ids=project_ids)
    return study.collect(None, Path(work_dir), progress=progress).flattened


def _from_export_files(manifest: Any, export_files: Sequence[str | os.PathLike[str]], *, label_config: str | None,
                       progress: bool) -> Flattened:
    index = ManifestIndex.from_manifest(manifest)
    flattener = ExportFlattener(index, _default_tags(label_config), user_workers=_user_workers(manifest, index.workers))
    for path in export_files:
        flattener.add_export(path, progress=progress)
    return flattener.result()


def _open_study(manifest: Any, *, ls_url: str | None, token: str | None,
                project_ids: Sequence[int] | None) -> StudyExport:
    """The study's projects on Label Studio with their change signals (read before anything is exported)."""
    if not ls_url:
        raise PosthocInputError("give a Label Studio URL (--url) or export files (--export-file)")
    if not token:
        raise PosthocInputError("no Label Studio API token: set LABEL_STUDIO_TOKEN (or the variable named by "
                                "--token-env)")
    from posthoc.export.fetch import connect

    client = connect(ls_url, token, timeout=120)
    projects = _study_projects(client, manifest, project_ids)
    return StudyExport.open(client, client, projects, lambda: ManifestIndex.from_manifest(manifest),
                            user_workers=_user_workers(manifest, manifest.workers()),
                            manifest_digest=str(manifest.digest))


def _user_workers(manifest: Any, workers: Sequence[str]) -> dict[str, str]:
    """Login e-mail -> worker: ``<worker>@<study>.posthoc.local`` (``study create``'s default) and
    ``<worker>@posthoc.local`` (studies made before it), plus the accounts file `posthoc study create` wrote
    beside the manifest (which holds the e-mails of a study set up with another domain)."""
    from posthoc.jobs.setup import default_accounts_file, read_accounts

    mapping = default_user_workers(workers, study=str(manifest.study))
    known = set(workers)
    path = getattr(manifest, "path", None)
    if path is not None:
        for worker, account in read_accounts(default_accounts_file(Path(path))).items():
            if account.get("email") and worker in known:
                mapping[str(account["email"]).lower()] = worker
    return mapping


def _default_tags(label_config: str | None) -> VerificationTags:
    from posthoc.paths import label_config as bundled

    text = label_config if label_config is not None else bundled("entity_verification")
    return verification_tags(text)


def _hash_csv(hasher: Any, frame: pd.DataFrame, *, rows_at_a_time: int = 50_000) -> None:
    """Feed ``frame`` as CSV into ``hasher`` in slices (a million judgements never become one string)."""
    for start in range(0, max(len(frame), 1), rows_at_a_time):
        part = frame.iloc[start:start + rows_at_a_time]
        hasher.update(part.to_csv(index=False, header=start == 0, lineterminator="\n").encode("utf-8"))


def fingerprint(flattened: Flattened, options: dict[str, Any], manifest_digest: str) -> str:
    """SHA-256 of the normalised judgements and exclusions, the scoring options and the manifest digest."""
    hasher = hashlib.sha256()
    hasher.update(json.dumps(options, sort_keys=True).encode("utf-8"))
    hasher.update(manifest_digest.encode("utf-8"))
    _hash_csv(hasher, flattened.judgements)
    hasher.update(b"\x00exclusions\x00")
    _hash_csv(hasher, flattened.exclusions)
    return hasher.hexdigest()


def run_score_job(*, manifest_path: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                  ls_url: str | None = None, token: str | None = None,
                  export_files: Sequence[str | os.PathLike[str]] | None = None,
                  project_ids: Sequence[int] | None = None, label_config: str | None = None,
                  n_resamples: int = 1000, seed: int = 0, resample_unit: str = "doc_id",
                  fmt: Literal["csv", "parquet"] = "csv", periodic: bool = False, progress: bool = False,
                  extra_sections: Iterable[Section] = (), union: str = "exact",
                  interval: str = "bca") -> ScoreJobResult:
    """Export, flatten, score and report a study into ``out_dir`` (see the module docstring).

    ``union``: the verification union ``exact`` (default) or ``overlap``; ``interval``: the method of the rates'
    and the comparisons' intervals, ``bca`` or ``percentile`` (:func:`posthoc.metrics.score_judgements`).

    Raises :class:`PosthocInputError` (bad manifest, export file or option), PosthocServiceError (Label
    Studio unreachable or refusing; previous outputs untouched) or :class:`ScoreJobLocked`.
    """
    if fmt not in FORMATS:
        raise PosthocInputError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if n_resamples < 0:
        raise PosthocInputError(f"--resamples must be 0 or more, not {n_resamples}")
    from posthoc.metrics.intervals import check_method
    from posthoc.metrics.verification import check_union

    check_union(union)
    check_method(interval)
    _check_sources(ls_url=ls_url, token=token, export_files=export_files)
    manifest = _open_manifest(manifest_path)  # bad input fails before out_dir is touched
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
        return _run_locked_naming_disk_errors(
                           target, manifest, target, ls_url=ls_url, token=token, export_files=export_files,
                           project_ids=project_ids, label_config=label_config, n_resamples=n_resamples, seed=seed,
                           resample_unit=resample_unit, fmt=fmt, periodic=periodic, progress=progress,
                           extra_sections=extra_sections, union=union, interval=interval)
    except Exception:
        if created and {p.name for p in target.iterdir()} <= {LOCK_NAME}:
            (target / LOCK_NAME).unlink(missing_ok=True)  # a failed first run leaves no folder behind
            with contextlib.suppress(OSError):
                target.rmdir()
        raise
    finally:
        lock.release()


def _run_locked_naming_disk_errors(target: Path, *args: Any, **kwargs: Any) -> ScoreJobResult:
    """:func:`_run_locked`, with a full disk or an unwritable folder as one PosthocInputError naming ``target``
    (the outputs are staged and moved in whole, so nothing partial is left)."""
    try:
        return _run_locked(*args, **kwargs)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
            raise PosthocInputError(f"--out {target}: cannot write the outputs ({exc.strerror}); free space "
                                    "or choose another folder; the previous outputs are unchanged") from exc
        raise


def _remove_stale_staging(target: Path) -> None:
    """Remove staging folders a killed run left in ``target`` (safe: this run holds the lock, so no other run
    writes there; outputs are only ever moved in complete, so nothing else needs repair)."""
    for leftover in target.glob(".posthoc-score-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)


def _check_sources(*, ls_url: str | None, token: str | None,
                   export_files: Sequence[str | os.PathLike[str]] | None) -> None:
    """PosthocInputError unless the judgements have a source: readable export files, or a URL and a token."""
    if export_files:
        for path in export_files:
            if not Path(path).is_file():
                what = "is a folder" if Path(path).is_dir() else "does not exist"
                raise PosthocInputError(f"--export-file {path} {what}; give a Label Studio JSON export file")
        return
    if not ls_url:
        raise PosthocInputError("give a Label Studio URL (--url) or export files (--export-file)")
    from posthoc.labelstudio.url import check_url

    check_url(ls_url)
    if not token:
        raise PosthocInputError("no Label Studio API token: set LABEL_STUDIO_TOKEN (or the variable named by "
                                "--token-env)")


def _run_locked(manifest: Any, target: Path, *, ls_url: str | None, token: str | None,
                export_files: Sequence[str | os.PathLike[str]] | None, project_ids: Sequence[int] | None,
                label_config: str | None, n_resamples: int, seed: int, resample_unit: str, fmt: str,
                periodic: bool, progress: bool, extra_sections: Iterable[Section], union: str = "exact",
                interval: str = "bca") -> ScoreJobResult:
    """The job once the lock on ``target`` is held."""
    options = {"n_resamples": n_resamples, "seed": seed, "resample_unit": resample_unit, "format": fmt,
               "union": union, "interval": interval}
    from posthoc.study.planner.estimate_file import estimate_digest, estimate_path

    manifest_path = getattr(manifest, "path", None)
    estimate_hash = estimate_digest(manifest_path) if manifest_path is not None else ""
    manifest_digest = str(manifest.digest) + (f":{estimate_hash}" if estimate_hash else "")
    report_path = target / "report.html"
    marker = target / FINGERPRINT_NAME
    previous = marker.read_text(encoding="utf-8").strip() if marker.is_file() and report_path.is_file() else None
    with tempfile.TemporaryDirectory(prefix=".posthoc-score-", dir=target) as work:
        work_dir = Path(work)
        cache: JudgementCache | None = None
        exported: tuple[int, ...] = ()
        reused: tuple[int, ...] = ()
        state: dict[str, Any] = {}
        if export_files:
            flattened = _from_export_files(manifest, export_files, label_config=label_config, progress=progress)
        else:
            study = _open_study(manifest, ls_url=ls_url, token=token, project_ids=project_ids)
            cache = JudgementCache(target / CACHE_NAME, work_dir / "cache")
            state = {"context": _state_context(options, manifest_digest),
                     "keys": {str(p): k for p, k in sorted(study.keys.items())}}
            last = cache.state()
            if periodic and previous is not None and last is not None and last.get("fingerprint") == previous \
                    and all(last.get(name) == value for name, value in state.items()):
                return ScoreJobResult(status="nothing-new", out_dir=target, report_path=report_path,
                                      fingerprint=previous, n_judgements=int(last.get("n_judgements", 0)),
                                      n_exclusions=int(last.get("n_exclusions", 0)),
                                      reused=tuple(p for p, _ in study.projects))
            collected = study.collect(cache, work_dir, progress=progress)
            flattened, exported, reused = collected.flattened, collected.exported, collected.reused
        digest = fingerprint(flattened, options, manifest_digest)
        state.update(fingerprint=digest, n_judgements=len(flattened.judgements),
                     n_exclusions=int(flattened.exclusions["count"].sum()))
        keep = [int(p) for p in state.get("keys", {})]
        if periodic and previous == digest:
            if cache is not None:
                cache.commit(keep, state)
            return ScoreJobResult(status="nothing-new", out_dir=target, report_path=report_path,
                                  fingerprint=digest, n_judgements=len(flattened.judgements),
                                  n_exclusions=int(flattened.exclusions["count"].sum()), exported=exported,
                                  reused=reused)
        from posthoc.metrics import score_judgements

        scores = score_judgements(flattened.judgements, manifest.source_mentions(), n_resamples=n_resamples,
                                  seed=seed, resample_unit=resample_unit, study=str(manifest.study), union=union,
                                  interval=interval)
        scores.exclusions = merge_exclusions(flattened.exclusions, scores.exclusions)
        excluded = summarise_exclusions(scores.exclusions)
        summary = {**scores.summary, **options, "study": str(manifest.study),
                   "n_tasks_exported": flattened.n_tasks, "n_judgements_exported": len(flattened.judgements),
                   "exclusions": {str(k): int(c) for k, c in zip(excluded["kind"], excluded["count"],
                                                                  strict=True)},
                   "fingerprint": digest}
        scores.summary = summary
        stage = work_dir / "stage"
        from posthoc.jobs.study_sections import study_sections

        excluded_workers = scores.controls.loc[scores.controls["excluded"], "worker"] if len(scores.controls) else ()
        sections = [*study_sections(flattened.judgements, exclude_workers=excluded_workers), *extra_sections]
        if manifest_path is not None:  # the estimate of `posthoc study estimate`, when saved beside the manifest
            from posthoc.study.planner.outcome_section import plan_against_outcome_section

            planned = plan_against_outcome_section(estimate_path(manifest_path), scores, flattened.judgements,
                                                   study=str(manifest.study))
            sections += [planned] if planned is not None else []
        written = stage_outputs(stage, scores=scores, flattened=flattened, manifest=manifest, fmt=fmt,
                                 summary=summary, extra_sections=sections)
        commit_outputs(stage, target, written)
        if cache is not None:  # after the outputs: a cache entry never runs ahead of the files it explains
            cache.commit(keep, None)
        marker_tmp = work_dir / FINGERPRINT_NAME
        marker_tmp.write_text(digest + "\n", encoding="utf-8")
        os.replace(marker_tmp, marker)
        if cache is not None:  # last: the next periodic run trusts it only when its fingerprint is the marker's
            cache.commit(keep, state)
        shutil.rmtree(stage, ignore_errors=True)
    return ScoreJobResult(status="updated", out_dir=target, report_path=report_path, fingerprint=digest,
                          n_judgements=len(flattened.judgements),
                          n_exclusions=int(scores.exclusions["count"].sum()),
                          files=tuple(target / p for p in written), exported=exported, reused=reused)


def _state_context(options: dict[str, Any], manifest_digest: str) -> str:
    """What besides the projects decides the outputs: the options and the manifest (and estimate) digest."""
    return hashlib.sha256(json.dumps([options, manifest_digest], sort_keys=True).encode("utf-8")).hexdigest()
