"""A study's listings follow the study, not the server (issue 24): on a server holding other projects (another
study's markers, a look-alike title), setup reruns, score, status and the gateway's authoriser find exactly the
study's projects, and a rerun with everything known lists neither every project nor the organisation's members.

Requests are counted by a wrapper around ``LabelStudioClient.request`` that records each call and forwards it to
the real Label Studio (``ls_server``).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lsfixtures import run_backend, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.jobs.setup import SETUP_FIELDS, SetupOptions, SetupTarget, create_study
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.live.projects import find_study_projects, marker_html, project_marker
from posthoc.study.plan.logins import default_accounts_file, read_accounts
from posthoc.study.plan.study import Study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

STUDY = "scoped"
Call = tuple[str, str, dict[str, Any]]


@contextlib.contextmanager
def counted() -> Iterator[list[Call]]:
    """Every ``(method, path, params)`` any LabelStudioClient sends while inside (the calls still go out)."""
    seen: list[Call] = []
    original = LabelStudioClient.request

    def counting(self: LabelStudioClient, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204),
                 **options: Any) -> Any:
        seen.append((method, path, dict(options.get("params") or {})))
        return original(self, method, path, ok=ok, **options)

    LabelStudioClient.request = counting  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        LabelStudioClient.request = original  # type: ignore[method-assign]


def every_project(calls: list[Call]) -> list[Call]:
    """The listings of every project (no ``ids=`` filter)."""
    return [c for c in calls if c[0] == "GET" and c[1] == "/api/projects/" and "ids" not in c[2]]


def by_ids(calls: list[Call]) -> list[set[int]]:
    """The project ids each ``ids=`` listing asked for."""
    return [{int(i) for i in str(c[2]["ids"]).split(",")} for c in calls
            if c[0] == "GET" and c[1] == "/api/projects/" and "ids" in c[2]]


def member_listings(calls: list[Call]) -> list[Call]:
    """Listings of the organisation's users (memberships, paged; or the unpaged ``/api/users/``)."""
    return [c for c in calls if c[0] == "GET" and (c[1].endswith("/memberships") or c[1] == "/api/users/")]


@pytest.fixture(scope="module")
def study(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp(STUDY)
    manifest = small_sample_manifest(folder / "manifest.sqlite", name=STUDY, n_workers=3, control_tasks=False)
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    others = [admin.create_project({"title": f"{STUDY}-twin · worker w001",  # another study's marker
                                    "expert_instruction": marker_html(project_marker(f"{STUDY}-twin", "w001"))}),
              admin.create_project({"title": f"{STUDY} · worker w002",  # a look-alike title, no marker
                                    "description": "a copy someone made"}),
              admin.create_project({"title": "older study",  # another study's marker as a description line
                                    "description": f"posthoc-study {STUDY}x worker w003\n"})]
    try:
        with run_backend(manifest.path) as backend_url:
            target = SetupTarget(url=ls_server.url, token=ls_server.token, backend_url=backend_url)
            with counted() as first_calls:
                setup = create_study(Study(manifest), target)
            yield {"manifest": manifest, "setup": setup, "target": target, "admin": admin, "folder": folder,
                   "others": [int(p["id"]) for p in others], "first_calls": first_calls}
    finally:
        for project in others:
            admin.delete(f"/api/projects/{project['id']}/")


def test_a_first_run_lists_every_project_once_with_include(study: dict[str, Any]) -> None:
    calls = study["first_calls"]
    listed = every_project(calls)
    assert len(listed) == 1, listed  # one page: the shared server holds fewer than 100 projects
    include = set(str(listed[0][2]["include"]).split(","))
    assert include == set(SETUP_FIELDS) and {"id", "title", "description", "expert_instruction", "label_config",
                                             "model_version", "task_number", "total_predictions_number"} <= include
    # no user id known yet: the members matched by e-mail, then listed once more for the new accounts' ids
    assert len(member_listings(calls)) == 2
    assert set(study["setup"].project_ids().values()).isdisjoint(study["others"])


def test_a_rerun_with_everything_known_lists_neither_every_project_nor_the_members(study: dict[str, Any]) -> None:
    setup = study["setup"]
    with counted() as calls:
        rerun = create_study(Study(study["manifest"]), study["target"])
    assert rerun.project_ids() == setup.project_ids()
    assert (rerun.created_projects, rerun.created_users, rerun.imported_tasks) == (0, 0, 0)
    assert every_project(calls) == [] and member_listings(calls) == []
    assert by_ids(calls) == [set(setup.project_ids().values())]
    # the listing answered every field compared (include= leaves the others out): nothing written, no task read
    assert [c for c in calls if c[0] != "GET" or c[1] == "/api/tasks/"] == []
    read_users = sorted(int(m.group(1)) for c in calls if (m := re.fullmatch(r"/api/users/(\d+)/", c[1])))
    assert read_users == sorted(p.user_id for p in setup.projects)
    saved = read_accounts(default_accounts_file(Path(study["manifest"].path)))
    assert {w: int(e["user_id"]) for w, e in saved.items()} == {p.worker: p.user_id for p in setup.projects}


def test_score_exports_exactly_the_studys_projects_and_lists_only_them(study: dict[str, Any], ls_server: Any,
                                                                        tmp_path: Path) -> None:
    from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
    from posthoc.jobs.simulate import SimulationConfig, annotate_study
    from posthoc.labelstudio.users import ensure_user
    from posthoc.paths import label_config

    manifest, setup = study["manifest"], study["setup"]
    w001 = read_accounts(default_accounts_file(Path(manifest.path)))["w001"]
    token = ensure_user(ls_server.url, ls_server.token, email=w001["email"], password=w001["password"]).token
    posted = annotate_study(manifest, url=ls_server.url, tokens={"w001": token}, project_ids=setup.project_ids(),
                            label_config=label_config("entity_verification"), config=SimulationConfig(seed=3),
                            workers=["w001"])
    assert posted.annotations > 0
    source = JudgementSource(ls_url=ls_server.url, token=ls_server.token)
    ids = set(setup.project_ids().values())
    with counted() as calls:
        full = run_score_job(manifest_path=manifest.path, out_dir=tmp_path, source=source,
                             options=ScoreOptions(n_resamples=20))
    with counted() as quiet:
        again = run_score_job(manifest_path=manifest.path, out_dir=tmp_path, source=source,
                              options=ScoreOptions(n_resamples=20, periodic=True))
    assert set(full.exported) == ids and again.status == "nothing-new" and set(again.reused) == ids
    assert set(pd.read_csv(tmp_path / "judgements.csv")["worker"]) == {"w001"}
    assert every_project(calls + quiet) == [] and member_listings(calls + quiet) == []
    assert all(asked == ids for asked in by_ids(calls + quiet))
    # nothing new: one listing finds and signals the projects, then one one-row Data Manager query a project; the
    # server's release is asked once a process (issue 44), here by the full run before
    assert sorted(c[1] for c in quiet) == sorted(["/health", "/api/current-user/whoami", "/api/projects/",
                                                 *["/api/tasks/"] * len(ids)])
    assert [c[1] for c in calls + quiet].count("/api/version") <= 1
    assert {int(c[2]["project"]) for c in quiet if c[1] == "/api/tasks/"} == ids


def test_status_reads_exactly_the_studys_projects(study: dict[str, Any], ls_server: Any) -> None:
    from posthoc.jobs.setup_record import default_setup_file, recorded_project_ids
    from posthoc.study.live.progress import annotations_from_label_studio

    manifest = study["manifest"]
    known = recorded_project_ids(default_setup_file(Path(manifest.path)), study=str(manifest.study)).values()
    with counted() as calls:
        annotations_from_label_studio(ls_server.url, ls_server.token, manifest, known_ids=known)
    read = {int(c[2]["project"]) for c in calls if c[1] == "/api/tasks/"}
    assert read == set(study["setup"].project_ids().values())
    assert every_project(calls) == [] and by_ids(calls) == [read]


def test_the_authoriser_maps_each_workers_login_to_their_project(study: dict[str, Any]) -> None:
    from posthoc_backend.gateway import load_study_access

    manifest, setup = study["manifest"], study["setup"]
    with counted() as calls:
        access = load_study_access(Path(manifest.path), study["admin"])
    stored = read_accounts(default_accounts_file(Path(manifest.path)))
    assert dict(access.workers) == {stored[w]["email"]: (w, p) for w, p in setup.project_ids().items()}
    assert every_project(calls) == [] and member_listings(calls) == []


def test_without_a_record_or_with_wrong_ids_the_markers_of_every_project_decide(study: dict[str, Any]) -> None:
    admin, setup = study["admin"], study["setup"]
    workers = study["manifest"].workers()
    expected = setup.project_ids()
    with counted() as calls:
        found = find_study_projects(admin, STUDY, workers)
    assert {w: int(p["id"]) for w, p in found.items()} == expected
    assert len(every_project(calls)) == 1 and by_ids(calls) == []
    with counted() as calls:  # a record naming other projects (another server's ids): checked, then every project
        found = find_study_projects(admin, STUDY, workers, known_ids=study["others"])
    assert {w: int(p["id"]) for w, p in found.items()} == expected
    assert by_ids(calls) == [set(study["others"])] and len(every_project(calls)) == 1


def test_a_doubled_marker_is_an_error_wherever_a_listing_shows_both(study: dict[str, Any]) -> None:
    admin, setup = study["admin"], study["setup"]
    workers = study["manifest"].workers()
    twin = admin.create_project({"title": "a second w002 project",
                                 "expert_instruction": marker_html(project_marker(STUDY, "w002"))})
    try:
        with pytest.raises(PosthocServiceError, match=f"several projects marked .*w002.*{twin['id']}"):
            find_study_projects(admin, STUDY, workers)
        with pytest.raises(PosthocServiceError, match="several projects marked"):  # --verify lists every project
            create_study(Study(study["manifest"]), study["target"], SetupOptions(verify=True))
        # the recorded ids alone do not show the second project (documented): found as recorded
        found = find_study_projects(admin, STUDY, workers, known_ids=setup.project_ids().values())
        assert {w: int(p["id"]) for w, p in found.items()} == setup.project_ids()
    finally:
        admin.delete(f"/api/projects/{twin['id']}/")


def test_an_accounts_file_without_user_ids_lists_the_members_once_then_never(study: dict[str, Any]) -> None:
    from posthoc.jobs.accounts import ensure_accounts

    manifest, setup = study["manifest"], study["setup"]
    path = study["folder"] / "old.accounts.json"
    shutil.copy(default_accounts_file(Path(manifest.path)), path)
    old = {w: {k: v for k, v in e.items() if k != "user_id"} for w, e in read_accounts(path).items()}
    path.write_text(json.dumps(old), encoding="utf-8")  # as a run before user ids were kept wrote it
    expected = {p.worker: (p.email, p.user_id) for p in setup.projects}
    for listings in (1, 0):
        with counted() as calls:
            made = ensure_accounts(study["admin"], manifest.workers(), path, study=STUDY)
        assert made.users == expected and made.created == 0
        assert len(member_listings(calls)) == listings
        assert {w: int(e["user_id"]) for w, e in read_accounts(path).items()} == {w: i for w, (_, i) in
                                                                                expected.items()}
