"""An annotator works their whole batch through the gateway in a real browser (Debian chromium via Playwright):
logs in with Label Studio's form, sees no other project on the projects page, gets the gateway's refusal on
another worker's project, then decides every mention by keyboard, submits and takes the next task until the
batch is done; their annotations arrive in Label Studio, one a task, completed by them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gateway.live_study import study_behind_gateway
from gateway.record_worker_calls import browser_login, decide_task
from posthoc.labelstudio.records import completed_by, task_annotations, user_id

pytestmark = [pytest.mark.browser, pytest.mark.labelstudio, pytest.mark.slow]


@pytest.fixture(scope="module")
def worked(browser: Any, ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with study_behind_gateway(ls_server, tmp_path_factory.mktemp("gwbrowser"), name="gwbrowser") as study:
        url, account = study["url"], study["accounts"]["w001"]
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("dialog", lambda dialog: dialog.dismiss())
        refused: list[str] = []
        page.on("response", lambda r: refused.append(r.url) if r.status in (401, 403) else None)
        browser_login(page, url, account)
        page.goto(f"{url}/projects/")
        page.wait_for_timeout(3000)
        seen: dict[str, Any] = {"projects_page": page.inner_text("body")}
        other = page.goto(f"{url}/projects/{study['projects']['w002']}/data?labeling=1")
        seen["other_status"], seen["other_text"] = other.status if other else None, page.inner_text("body")
        page.goto(f"{url}/projects/{study['projects']['w001']}/data?labeling=1")
        submitted = 0
        for _ in range(len(study["tasks"]["w001"])):
            decide_task(page)
            submitted += 1
        page.wait_for_selector("text=No More Tasks", timeout=60_000)
        seen["submitted"] = submitted
        seen["refused_during_work"] = [u for u in refused if "/projects/" + str(study["projects"]["w002"]) not in u]
        page.close()
        tasks = list(study["admin"].tasks(study["projects"]["w001"]))
        w001_id = next(int(m["id"]) for m in study["admin"].members() if m["email"] == account["email"])
        yield {"seen": seen, "tasks": tasks, "study": study, "w001_id": w001_id}


def test_the_projects_page_shows_no_other_project(worked: dict[str, Any]) -> None:
    page = worked["seen"]["projects_page"]
    assert "worker w002" not in page and "worker w003" not in page and "admin's own" not in page


def test_another_workers_project_shows_the_gateways_refusal(worked: dict[str, Any]) -> None:
    assert worked["seen"]["other_status"] == 403
    assert "refused by the study gateway" in worked["seen"]["other_text"]


def test_the_whole_batch_is_submitted_through_the_gateway(worked: dict[str, Any]) -> None:
    tasks = worked["tasks"]
    assert worked["seen"]["submitted"] == len(tasks) > 0
    for task in tasks:
        (annotation,) = task_annotations(task)
        assert user_id(completed_by(annotation)) == worked["w001_id"]


def test_what_the_stream_does_without_is_only_what_the_rules_refuse_on_purpose(worked: dict[str, Any]) -> None:
    refused = {u.split("?")[0].split("://", 1)[1].partition("/")[2] for u in worked["seen"]["refused_during_work"]}
    assert refused <= {"api/projects", "api/projects/", "api/ml", "heidi-tips"}, worked["seen"]["refused_during_work"]
