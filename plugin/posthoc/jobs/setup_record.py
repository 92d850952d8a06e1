"""The setup record: the workers' projects a run of ``posthoc study create`` has checked, kept beside the manifest.

A project is recorded once its tasks are the plan and each holds exactly one prediction equal to the manifest's
pre-fill (steps 5 and 6 of :mod:`posthoc.jobs.setup`). A later run trusts the record for a project when
Label Studio's one project listing still agrees with it: the same project id, the planned number of tasks and as
many predictions, and the recorded model version. Then it reads none of the project's tasks, so a rerun with
nothing to do makes a handful of listings whatever the size of the study. ``posthoc study create --verify``
ignores the record and reads every project back.

File ``<manifest stem>.setup.json``::

    {"studies": {"<study>": {"<worker>": {"project_id": 7, "tasks": 1500, "model_version": "posthoc-v1",
                                          "backend": "http://127.0.0.1:9090"}}}}

``backend`` is the ML backend's URL the project was connected to when it was checked: a study without the
webhook has no webhook listing to show the backend connected, so the record vouches for it
(:meth:`SetupRecord.connected`) instead of a listing of each project's ML backends.

It is not keyed by the server's URL (one server has many: a proxy, ``localhost`` or ``127.0.0.1``): a project
of another server is trusted only if it carries this study's marker for the worker, under the recorded id, with
the planned task and prediction counts and the recorded model version. Nothing secret is in it. A broken file
is an input error naming it (remove it: the next run checks every project).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls


def default_setup_file(manifest_path: Path) -> Path:
    """``<manifest stem>.setup.json`` beside the manifest."""
    return manifest_path.with_name(f"{manifest_path.stem}.setup.json")


def recorded_project_ids(path: Path, *, study: str) -> dict[str, int]:
    """``{worker: project id}`` the record at ``path`` holds for ``study``: the ids a study's lookup lists first
    (:func:`posthoc.study.live.projects.find_study_projects`). Empty when there is no record or it is broken: the
    lookup then lists every project, which costs time, never a wrong answer (markers decide either way)."""
    try:
        return SetupRecord(path, study=study).project_ids()
    except PosthocInputError:
        return {}


class SetupRecord:
    """The checked projects of one study on one Label Studio (module docstring); safe to share between threads."""

    def __init__(self, path: Path, *, study: str, trust: bool = True) -> None:
        """``trust=False`` (``--verify``): :meth:`trusted` answers no for every project; checks are still recorded."""
        self.path = path
        self.study = study
        self.trust = trust
        self._lock = threading.Lock()
        self._all = self._read()
        self._mine: dict[str, dict[str, Any]] = self._all.setdefault(study, {})

    def _read(self) -> dict[str, dict[str, dict[str, Any]]]:
        if not self.path.is_file():
            return {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            studies = raw["studies"]
            if not isinstance(studies, dict) or not all(
                isinstance(workers, dict) and all(isinstance(w, dict) for w in workers.values())
                for workers in studies.values()
            ):
                raise TypeError("studies must map each study to its workers")
        except (ValueError, KeyError, TypeError) as exc:
            raise PosthocInputError(f"{self.path}: not a setup record ({exc}); remove it (the next "
                                    "`posthoc study create` then checks every project)") from exc
        return studies

    def trusted(self, worker: str, project: ls.Project, n_tasks: int) -> bool:
        """Whether ``project`` (from Label Studio's project listing) is the one recorded as checked for ``worker``,
        still holding ``n_tasks`` tasks, as many predictions, and the recorded model version."""
        if not self.trust:
            return False
        with self._lock:
            entry = self._mine.get(worker)
        if not isinstance(entry, dict):
            return False
        recorded_version = entry.get("model_version")
        return (entry.get("project_id") == ls.int_id(project) and entry.get("tasks") == n_tasks
                and ls.project_task_number(project) == n_tasks and ls.project_prediction_number(project) == n_tasks
                and bool(recorded_version) and ls.model_version(project) == recorded_version)

    def project_ids(self) -> dict[str, int]:
        """``{worker: project id}`` of the projects recorded as checked (whether or not they are trusted)."""
        with self._lock:
            entries = dict(self._mine)
        return {w: e["project_id"] for w, e in entries.items() if isinstance(e.get("project_id"), int)}

    def connected(self, worker: str, project_id: int, backend: str) -> bool:
        """Whether ``worker``'s project ``project_id`` is recorded as checked while connected to the ML backend at
        ``backend`` (never with ``trust=False``)."""
        with self._lock:
            entry = self._mine.get(worker)
        return (self.trust and isinstance(entry, dict) and entry.get("project_id") == project_id
                and entry.get("backend") == backend)

    def checked(self, worker: str, project_id: int, n_tasks: int, model_version: str, *,
                backend: str | None = None) -> None:
        """Record that ``worker``'s project passed the checks, connected to the ML backend at ``backend`` (written
        at once, atomically)."""
        with self._lock:
            self._mine[worker] = {"project_id": project_id, "tasks": n_tasks, "model_version": model_version,
                                  **({"backend": backend} if backend is not None else {})}
            text = json.dumps({"studies": self._all}, indent=1, sort_keys=True) + "\n"
            write_text_atomic(self.path, text)
