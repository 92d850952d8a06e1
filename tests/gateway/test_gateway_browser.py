"""An annotator works their whole batch through the gateway in a real browser (Debian chromium via Playwright):
logs in with Label Studio's form, sees no other project on the projects page, gets the gateway's refusal on
another worker's project, then decides every mention by the keyboard shortcuts (the first task's mentions
verified, the second's edited with a new link typed in, the third's removed), submits and takes the next task
until the batch is done; their annotations arrive in Label Studio, one a task, completed by them, and in
``posthoc score``'s judgements unchanged: every planned mention of the batch once, with the decision made in the
browser, the typed link on the edits, nothing excluded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from gateway.live_study import study_behind_gateway
from gateway.record_worker_calls import browser_login, decide_task
from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
from posthoc.labelstudio.records import completed_by, task_annotations, user_id
from posthoc.links import normalise_link
from posthoc.study.plan.manifest import Manifest

pytestmark = [pytest.mark.browser, pytest.mark.labelstudio, pytest.mark.slow]

#: what the worker decides on the n-th task they are served: the hotkey (label_configs/entity_verification.xml)
#: and, for an edit, the link typed into the new-link box
DECISIONS = (("verify", "1", None), ("edit", "2", "https://en.wikipedia.org/wiki/Gateway_edit_\u00e9"),
             ("remove", "3", None))


@pytest.fixture(scope="module")
def worked(browser: Any, ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    # 2 documents: w001 has 4 tasks (verify, edit, remove, verify), each decided and submitted in the browser;
    # 4 documents gave 8 tasks: twice the browser time, and no kind of decision more
    with study_behind_gateway(ls_server, tmp_path_factory.mktemp("gwbrowser"), name="gwbrowser",
                              n_documents=2) as study:
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
        for n in range(len(study["tasks"]["w001"])):
            _, key, new_link = DECISIONS[n % len(DECISIONS)]
            decide_task(page, key, new_link)
            submitted += 1
        page.wait_for_selector("text=No More Tasks", timeout=60_000)
        seen["submitted"] = submitted
        seen["refused_during_work"] = [u for u in refused if "/projects/" + str(study["projects"]["w002"]) not in u]
        page.close()
        tasks = list(study["admin"].tasks(study["projects"]["w001"]))
        w001_id = next(int(m["id"]) for m in study["admin"].members() if m["email"] == account["email"])
        scored = tmp_path_factory.mktemp("gwbrowser-score")
        run_score_job(manifest_path=study["manifest"], out_dir=scored, options=ScoreOptions(),
                      source=JudgementSource(ls_url=ls_server.url, token=ls_server.token))
        yield {"seen": seen, "tasks": tasks, "study": study, "w001_id": w001_id, "scored": scored}


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


def test_the_judgements_arrive_in_posthoc_score_unchanged(worked: dict[str, Any]) -> None:
    """The default score job (no options) over the study: w001's judgements are exactly their planned mentions,
    one decision per task as typed in the browser (an edit's link in its canonical form, é percent-encoded), in the
    order the tasks were served."""
    judgements = pd.read_csv(worked["scored"] / "judgements.csv", keep_default_na=False)
    mine = judgements[judgements["worker"] == "w001"]
    plan = Manifest.open(worked["study"]["manifest"])
    planned = plan.mentions()
    planned = planned[planned["worker"] == "w001"]
    assert sorted(mine["mention_id"]) == sorted(planned["mention_id"]) and len(mine) > 0
    served = mine.sort_values("position").drop_duplicates("task_key")["task_key"].tolist()
    assert len(served) == len(worked["tasks"])
    for n, task_key in enumerate(served):
        outcome, _, new_link = DECISIONS[n % len(DECISIONS)]
        rows = mine[mine["task_key"] == task_key]
        assert set(rows["outcome"]) == {outcome}, (task_key, rows[["surface", "outcome"]])
        if new_link is not None:
            assert set(rows["new_link"]) == {normalise_link(new_link).link}  # the canonical form (flatten's rule)
    exclusions = pd.read_csv(worked["scored"] / "tables" / "exclusions.csv", keep_default_na=False)
    assert "w001" not in set(exclusions["worker"])
