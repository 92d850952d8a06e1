"""How a study's projects are recognised in Label Studio: the one place that finds them.

``posthoc study create`` marks each worker's project with ``posthoc-study <study> worker <worker>``, kept in
its ``expert_instruction`` as ``<meta name="MARKER">`` (never shown: the instructions are off and a meta tag
renders as nothing; Label Studio's HTML cleaning strips comments but keeps this). Projects made before the
marker moved there kept it as a line of their description, and are still found. :func:`study_projects` is
what create, status, score and the Eaglet review use: only marked projects belong to a study (never every
project on the server, never a title that happens to name it).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio import records as ls

MARKER = "posthoc-study"
REVIEW_MARKER = "posthoc-study eaglet-review"
#: a project as a listing gives it (:class:`~posthoc.labelstudio.records.Project`, or a plain dict)
ProjectT = TypeVar("ProjectT", bound=Mapping[str, object])


def project_marker(study: str, worker: str) -> str:
    """The marker that identifies a project as this study's worker project (see :func:`project_markers`)."""
    return f"{MARKER} {study} worker {worker}"


def project_markers(project: object) -> set[str]:
    """The markers a project carries: ``<meta name="...">`` in its ``expert_instruction`` or, for projects
    made before the marker moved there, a line of its ``description``. ``project``: a dict or an SDK object
    (its attributes)."""
    def field(name: str) -> str:
        value = project.get(name) if isinstance(project, dict) else getattr(project, name, None)
        return str(value or "")

    lines = [html.unescape(m) for m in re.findall(r'<meta\s+name="([^"]*)"', field("expert_instruction"))]
    lines += field("description").splitlines()
    return {line.strip() for line in lines if line.strip().startswith(f"{MARKER} ")}


def marker_html(marker: str) -> str:
    """The ``expert_instruction`` that carries ``marker`` (an invisible meta tag)."""
    return f'<meta name="{html.escape(marker, quote=True)}">'


def marked_projects(projects: Iterable[ProjectT], marker: str) -> list[ProjectT]:
    """The projects among ``projects`` that carry exactly ``marker`` (see :func:`project_markers`)."""
    return [project for project in projects if marker in project_markers(project)]


def study_projects(projects: Iterable[ProjectT], study: str,
                   workers: Iterable[str] | None = None) -> dict[str, ProjectT]:
    """``{worker: project}`` of ``study`` among ``projects`` (one listing, e.g. ``LabelStudioClient.projects()``).

    ``workers``: the manifest's workers (others' markers are ignored); ``None``: any worker the markers name.
    PosthocServiceError when two projects carry one worker's marker (delete the extra one).
    """
    prefix = f"{MARKER} {study} worker "
    wanted = None if workers is None else set(workers)
    found: dict[str, list[ProjectT]] = {}
    for project in projects:
        for line in project_markers(project):
            worker = line[len(prefix):] if line.startswith(prefix) else None
            if worker and (wanted is None or worker in wanted):
                found.setdefault(worker, []).append(project)
    doubled = {w: sorted(ls.int_id(p) for p in ps) for w, ps in found.items() if len(ps) > 1}
    if doubled:
        worker, ids = sorted(doubled.items())[0]
        raise PosthocServiceError(f"Label Studio holds several projects marked {prefix + worker!r} (ids "
                                  f"{', '.join(map(str, ids))}); delete the extra ones and rerun")
    return {worker: ps[0] for worker, ps in sorted(found.items())}
