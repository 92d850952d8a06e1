"""The Data Manager tab of a worker's project: which task data columns an annotator sees.

Label Studio shows every task data field as a Data Manager column, and shows ``kb_pages`` (HTML for
the labeling page's ``<HyperText>``) there as its raw source. Open-source Label Studio 1.23 shares a
project's tabs ("views") between all its users and honours each tab's ``hiddenColumns`` for the
list (``explore``) and the labeling side panel (``labeling``), so the setup keeps one tab whose hidden
columns include :data:`HIDDEN_COLUMNS` (measured in the browser: tests/browser). Tabs a person made
are kept and get the same columns hidden; nothing else of them changes.
"""

from __future__ import annotations

from typing import Any, Final

from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.records import record_id, view_data

#: Data Manager column ids (``tasks:data.<field>``) an annotator never needs to read
HIDDEN_COLUMNS: Final = ("tasks:data.kb_pages",)
TAB_TITLE: Final = "Tasks"


def _hidden(data: dict[str, Any]) -> dict[str, list[str]]:
    raw = data.get("hiddenColumns")
    hidden: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {side: list(dict.fromkeys([*(hidden.get(side) or []), *HIDDEN_COLUMNS]))
            for side in ("explore", "labeling")}


def _fix(client: LabelStudioClient, project_id: int, views: list[dict[str, Any]]) -> int:
    if not views:
        client.post("/api/dm/views/", {"project": project_id,
                                       "data": {"title": TAB_TITLE, "hiddenColumns": _hidden({})}})
        return 1
    changed = 0
    for view in views:
        data = dict(view_data(view))
        hidden = _hidden(data)
        if data.get("hiddenColumns") != hidden:
            client.patch(f"/api/dm/views/{record_id(view)}/", {"project": project_id,
                                                          "data": {**data, "hiddenColumns": hidden}})
            changed += 1
    return changed


def ensure_tabs(client: LabelStudioClient, project_ids: list[int]) -> int:
    """Make every Data Manager tab of each of ``project_ids`` hide :data:`HIDDEN_COLUMNS` (one tab is created for
    a project with none), after one listing of the organisation's tabs (a rerun makes no other call); returns the
    number of tabs created or changed (0 on a rerun).

    Not scoped per project (``GET /api/dm/views/?project=ID``, which Label Studio 1.23 filters on) on purpose: that
    is one request a worker, ~37 ms each (600 one-row requests took ~22 s in bench/results/study_scale_bench.txt),
    so +11 s on a 300-worker rerun that takes ~5 s; the organisation's listing grows with the tabs of other
    projects, which Label Studio makes only when a person opens their Data Manager, and cost nothing measurable
    on a server holding 1,000 other projects (bench/results/study_server_bench.txt: create rerun 0.79x)."""
    by_project: dict[int, list[dict[str, Any]]] = {pid: [] for pid in project_ids}
    for view in client.get("/api/dm/views/") or []:
        if int(view.get("project") or 0) in by_project:
            by_project[int(view["project"])].append(view)
    return sum(_fix(client, project_id, views) for project_id, views in sorted(by_project.items()))
