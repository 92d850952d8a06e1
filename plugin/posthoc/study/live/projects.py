"""How a study's projects are recognised in Label Studio: the one place that finds them.

``posthoc study create`` marks each worker's project with ``posthoc-study <study> worker <worker>``, kept in
its ``expert_instruction`` as ``<meta name="MARKER">`` (never shown: the instructions are off and a meta tag
renders as nothing; Label Studio's HTML cleaning strips comments but keeps this). Projects made before the
marker moved there kept it as a line of their description, and are still found. :func:`study_projects` is
how create, status, score and the gateway decide: only marked projects belong to a study (never a title that
happens to name it); :func:`find_study_projects` is what they list, scoped to the study's project ids where
they are known, so that what they cost follows the study, not the server.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from posthoc.errors import PosthocServiceError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.calls import PROJECT_FIELDS, ApiCalls

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


def find_study_projects(client: ApiCalls, study: str, workers: Sequence[str], *, known_ids: Iterable[int] = (),
                        include: Sequence[str] = PROJECT_FIELDS, any_worker: bool = False) -> dict[str, ls.Project]:
    """``{worker: project}`` of ``study`` in Label Studio (:func:`study_projects` over a listing scoped to it).

    What it costs: with ``known_ids`` (the setup record's projects, ``posthoc.jobs.setup_record``) that carry
    every worker's marker, one listing of those ids (``ids=``, ``include=``; one request per 100 projects),
    the same on a server holding 1,000 other projects as on an empty one. When some worker's project is still
    unknown (no record: a first run, another machine; a recorded project deleted or re-marked), one listing of
    every project with ``include=`` (~0.15-0.2 s a page of 100), whose markers decide. A second project with a
    worker's marker is an error (:func:`study_projects`) wherever a listing shows both: a scoped lookup sees
    only the known ids (``study create --verify`` passes none, and lists everything).

    ``workers``: the manifest's; every one must be found for the scoped lookup to suffice; ``any_worker``: also
    keep projects marked for other workers of the study (:func:`study_projects` with ``workers=None``).
    ``include``: the fields the caller reads (Label Studio computes only the counts named).
    """
    wanted = None if any_worker else workers
    ids = sorted({int(i) for i in known_ids})
    if ids:
        found = study_projects(client.projects(ids=ids, include=include), study, wanted)
        if set(workers) <= set(found):
            return found
    return study_projects(client.projects(include=include), study, wanted)
