"""The labeling page in a real browser (Debian chromium via Playwright, loopback only).

An annotator logs in, opens their stream, sees the pre-filled regions with the link and the decision
radios, verifies one, edits one (types a new link), removes one and submits; the snapshot export holds
the three outcomes. The task text carries a ``<script>`` tag and an ``onerror`` image, a link is
``javascript:``: all must render inert. The regions follow emoji (flags, a ZWJ family) and sit in a
chunk that starts after more emoji: the offsets the UI shows and stores are checked against the text,
and the project's export code maps them back to document offsets.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from lsfixtures import run_backend
from posthoc.export.flatten import flatten_exports
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study, read_accounts
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.label_config import verification_tags
from posthoc.paths import label_config
from posthoc.study import StudyConfig, plan_study
from posthoc.study.plan.index import ManifestIndex
from posthoc.study.plan.manifest import Manifest
from posthoc.study.plan.study import Study

pytestmark = [pytest.mark.browser, pytest.mark.labelstudio, pytest.mark.slow]

INTRO = "Flags 🇫🇷🇩🇪 and a family 👩‍👩‍👧 open this story, far from any name at all. "
BODY = ('The 👩‍👩‍👧 family flew from 🇫🇷 France to Berlin, <script>window.__pwned=1</script> read '
        '<img src=x onerror="window.__pwned=2"> and then Paris.')
TEXT = INTRO + BODY
LINKS = {"France": "https://en.wikipedia.org/wiki/France", "Berlin": "https://en.wikipedia.org/wiki/Berlin",
         "Paris": "javascript:alert(document.cookie)"}
NEW_LINK = "https://en.wikipedia.org/wiki/Berlin_(disambiguation)"


def _mention(surface: str) -> dict[str, Any]:
    start = TEXT.index(surface)
    return {"dataset": "browser", "doc_id": "d1", "system": "SYS", "start": start, "end": start + len(surface),
            "surface": surface, "link": LINKS[surface], "link_original": LINKS[surface], "is_nil": False}




OTHER_TEXT = "Rome is old."
OUTLINER = "[class*=outliner-item__title]"


def _outliner(page: Any) -> dict[str, str]:
    """The Regions list as {mention text: label shown}: what an annotator reads without selecting anything."""
    shown = {}
    for title in page.locator(OUTLINER).all():
        label, _, text = title.inner_text().strip().partition("\n")
        shown[text.strip()] = label.strip()
    return shown


def _backgrounds(page: Any) -> dict[str, str]:
    return dict(page.eval_on_selector_all(
        "span.htx-highlight", "els => els.map(e => [e.textContent, getComputedStyle(e).backgroundColor])"))


def _labels_in_text(page: Any) -> dict[str, str]:
    """The words written beside each mention in the text (``<Text showLabels="true">``: Label Studio draws the
    region's label after its highlight), by mention: a decision readable without telling colours apart."""
    pairs = page.eval_on_selector_all("span.htx-highlight", """els => els.map(e => {
        const after = getComputedStyle(e, '::after').content;
        return [e.textContent, (e.getAttribute('data-label') || '') + '|' + (after || '')];
    })""")
    return {text: shown for text, shown in pairs}


def _decide_other_task(page: Any, seen: dict[str, Any]) -> None:
    """The one-mention task of the batch: verify it by keyboard (Alt+. selects the next mention) and submit."""
    seen["other_header"] = page.locator("text=/Task \\d+ of \\d+ in your batch/").first.inner_text()
    page.keyboard.press("Alt+.")
    page.keyboard.press("1")
    page.get_by_test_id("bottombar-submit-button").click()


def _wait_for_task(page: Any) -> list[str]:
    page.wait_for_selector("span.htx-highlight", timeout=90_000)
    page.wait_for_timeout(1000)
    return [h.inner_text() for h in page.locator("span.htx-highlight").all()]


@pytest.fixture(scope="module")
def labeled(browser, ls_server, tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("browser")
    documents = pd.DataFrame([{"dataset": "browser", "doc_id": "d1", "text": TEXT},
                              {"dataset": "browser", "doc_id": "d2", "text": OTHER_TEXT}])
    rome = {"dataset": "browser", "doc_id": "d2", "system": "SYS", "start": 0, "end": 4, "surface": "Rome",
            "link": "https://en.wikipedia.org/wiki/Rome", "link_original": "https://en.wikipedia.org/wiki/Rome",
            "is_nil": False}
    mentions = pd.DataFrame([_mention(s) for s in ("France", "Berlin", "Paris")] + [rome])
    plan = plan_study(documents, mentions, StudyConfig(name="browser", seed=1, n_workers=1, control_tasks=False,
                                                       max_chars=150))
    manifest = Manifest.create(folder / "manifest.sqlite", plan)
    tasks = manifest.tasks()
    assert len(tasks) == 2
    task = next(t for t in tasks.itertuples(index=False) if t.doc_id == "d1")
    assert task.chunk_start > 0 and any(ord(ch) > 0xFFFF for ch in TEXT[:task.chunk_start])
    with run_backend(manifest.path) as backend_url:
        setup = create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                          backend_url=backend_url),
                             SetupOptions(accounts_file=folder / "accounts.json", email_domain="browser.posthoc.local"))
        account = read_accounts(folder / "accounts.json")["w001"]
        (project,) = setup.projects
        admin = LabelStudioClient(ls_server.url, ls_server.token)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("dialog", lambda dialog: dialog.dismiss())
        page.goto(f"{ls_server.url}/user/login/")
        page.fill("input[name=email]", account["email"])
        page.fill("input[name=password]", account["password"])
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(f"{ls_server.url}/projects/")
        page.wait_for_selector(f"text={project.title}", timeout=60_000)
        seen: dict[str, Any] = {"projects_page": page.inner_text("body")}
        shots = folder / "screenshots"
        shots.mkdir()
        page.screenshot(path=str(shots / "0-projects.png"))
        page.goto(project.link)
        highlights = _wait_for_task(page)
        if highlights == ["Rome"]:
            _decide_other_task(page, seen)
            highlights = _wait_for_task(page)
        seen.update({
            "highlights": [(h.inner_text(), h.get_attribute("data-start"), h.get_attribute("data-end"))
                           for h in page.locator("span.htx-highlight").all()],
            "pwned": page.evaluate("window.__pwned"),
            "page_text": page.inner_text("body"),
            "hrefs": page.eval_on_selector_all("a[href]", "els => els.map(e => [e.getAttribute('href'), "
                                                          "e.getAttribute('target'), e.textContent])"),
            "img_x": page.locator("img[src=x]").count(),
            "outliner_before": _outliner(page),
            "backgrounds_before": _backgrounds(page),
            "labels_before": _labels_in_text(page),
        })
        page.screenshot(path=str(shots / "1-stream.png"))
        highlight = page.locator("span.htx-highlight")
        highlight.filter(has_text="France").first.click()
        seen["link_shown"] = page.locator("[data-testid=htx-textbox-content]").first.inner_text()
        seen["new_link_visible_before_edit"] = page.locator("input[name=new_link]").is_visible()
        page.keyboard.press("1")  # verify France
        page.keyboard.press("u")  # unselect: what follows is what the page shows without any selection
        page.wait_for_timeout(300)
        seen["outliner_one_decided"] = _outliner(page)
        seen["backgrounds_one_decided"] = _backgrounds(page)
        page.screenshot(path=str(shots / "2-one-decided.png"))
        page.get_by_test_id("bottombar-submit-button").click()  # Berlin and Paris are undecided
        page.wait_for_selector("text=still undecided", timeout=10_000)
        seen["blocked_message"] = page.locator(".ant-modal-content, [class*=modal]").filter(
            has_text="still undecided").first.inner_text()
        seen["selected_after_block"] = page.locator("[data-testid=htx-textbox-content]").first.inner_text()
        seen["annotations_after_block"] = sum(len(t.get("annotations") or []) for t in admin.tasks(project.project_id)
                                              if t["data"]["text"] == BODY)
        page.screenshot(path=str(shots / "3-submit-blocked.png"))
        page.get_by_role("button", name="OK").click()
        page.keyboard.press("2")  # Berlin, selected by the blocked Submit: edit
        seen["new_link_visible_on_edit"] = page.locator("input[name=new_link]").is_visible()
        page.fill("input[name=new_link]", NEW_LINK)
        page.keyboard.press("Enter")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("Alt+.")  # the next mention, Paris
        page.keyboard.press("3")  # remove
        page.keyboard.press("u")
        page.wait_for_timeout(300)
        seen["outliner_all_decided"] = _outliner(page)
        seen["backgrounds_all_decided"] = _backgrounds(page)
        seen["labels_all_decided"] = _labels_in_text(page)
        page.screenshot(path=str(shots / "4-all-decided.png"))
        page.get_by_test_id("bottombar-submit-button").click()
        if "other_header" not in seen:
            _wait_for_task(page)
            _decide_other_task(page, seen)
        page.wait_for_selector("text=No More Tasks", timeout=60_000)
        page.screenshot(path=str(shots / "5-done.png"))
        page.goto(f"{ls_server.url}/projects/{project.project_id}/data")
        page.wait_for_selector("text=Task 1 of 2 in your batch", timeout=60_000)
        page.wait_for_timeout(1000)
        seen["data_manager"] = page.inner_text("body")
        page.screenshot(path=str(shots / "6-data-manager.png"))
        page.close()
        export = admin.export_snapshot(project.project_id)
    export_path = folder / "export.json"
    export_path.write_text(json.dumps(export), encoding="utf-8")
    return {"seen": seen, "export": export, "export_path": export_path, "manifest": manifest, "task": task,
            "account": account, "shots": shots}


def test_stream_shows_prefilled_regions_at_code_point_offsets(labeled) -> None:
    chunk = BODY
    highlights = labeled["seen"]["highlights"]
    assert [h[0] for h in highlights] == ["France", "Berlin", "Paris"]
    for surface, start, end in highlights:
        assert (int(start), int(end)) == (chunk.index(surface), chunk.index(surface) + len(surface))
    assert labeled["seen"]["outliner_before"] == {"France": "undecided", "Berlin": "undecided", "Paris": "undecided"}


def test_script_and_javascript_links_are_inert(labeled) -> None:
    seen = labeled["seen"]
    assert seen["pwned"] is None
    assert seen["img_x"] == 0
    assert "<script>window.__pwned=1</script>" in seen["page_text"]
    assert 'onerror="window.__pwned=2"' in seen["page_text"]
    hrefs = seen["hrefs"]
    assert not [h for h in hrefs if h[0].strip().lower().startswith(("javascript:", "data:"))]
    kb = {text: (href, target) for href, target, text in hrefs if "wikipedia.org" in href}
    assert kb == {"France": (LINKS["France"], "_blank"), "Berlin": (LINKS["Berlin"], "_blank")}
    assert "javascript:alert(document.cookie)" in seen["page_text"]  # shown as text, not a link


def test_selected_region_shows_its_link_and_the_new_link_box_only_on_edit(labeled) -> None:
    assert labeled["seen"]["link_shown"] == LINKS["France"]
    assert labeled["seen"]["new_link_visible_before_edit"] is False
    assert labeled["seen"]["new_link_visible_on_edit"] is True


def test_export_holds_the_three_outcomes_with_ui_offsets(labeled) -> None:
    (task,) = [t for t in labeled["export"] if t["data"]["text"] == BODY]
    (annotation,) = task["annotations"]
    assert annotation["completed_by"]["email"] == labeled["account"]["email"]
    tags = verification_tags(label_config("entity_verification"))
    assert tags.decision_in_labels  # the result format since issue 13: the decision is the region's label
    decisions = {}
    for item in annotation["result"]:
        text = task["data"]["text"]
        start, end = item["value"]["start"], item["value"]["end"]
        surface = text[start:end]
        if item["from_name"] == tags.new_link:
            assert (surface, item["value"]["text"]) == ("Berlin", [NEW_LINK])
        if item["from_name"] == tags.labels:
            assert item["value"]["text"] == surface
            decisions[surface] = item["value"]["labels"]
    assert decisions == {"France": ["verify"], "Berlin": ["edit"], "Paris": ["remove"]}
    assert not [i for i in annotation["result"] if i["type"] == "choices"]  # the Submit guard stores nothing


def test_decisions_are_visible_without_selecting_a_mention(labeled) -> None:
    """After deciding one mention (and unselecting it), the Regions list names each mention with its
    decision and the decided one has its own colour in the text."""
    seen = labeled["seen"]
    assert seen["outliner_one_decided"] == {"France": "verify", "Berlin": "undecided", "Paris": "undecided"}
    colours = seen["backgrounds_one_decided"]
    assert colours["Berlin"] == colours["Paris"] == seen["backgrounds_before"]["Berlin"]
    assert colours["France"] != colours["Berlin"]
    assert seen["outliner_all_decided"] == {"France": "verify", "Berlin": "edit", "Paris": "remove"}
    assert len(set(seen["backgrounds_all_decided"].values())) == 3  # verify, edit, remove: three colours


def test_submit_with_undecided_mentions_is_blocked_and_they_are_named(labeled) -> None:
    seen = labeled["seen"]
    assert seen["annotations_after_block"] == 0  # nothing was submitted
    assert "still undecided" in seen["blocked_message"] and "Regions list" in seen["blocked_message"]
    assert seen["selected_after_block"] == LINKS["Berlin"]  # the first undecided mention is selected for you
    undecided = {text for text, label in seen["outliner_one_decided"].items() if label == "undecided"}
    assert undecided == {"Berlin", "Paris"}  # named in the Regions list beside the warning


def test_each_task_says_where_it_sits_in_the_batch(labeled) -> None:
    seen = labeled["seen"]
    headers = {seen["other_header"]} | {line for line in seen["page_text"].splitlines() if "in your batch" in line}
    assert headers == {"Task 1 of 2 in your batch", "Task 2 of 2 in your batch"}


def test_annotators_see_no_raw_html_or_study_marker(labeled) -> None:
    seen = labeled["seen"]
    assert "posthoc-study" not in seen["projects_page"]
    assert "Task 1 of 2 in your batch" in seen["data_manager"]
    for raw in ("<ol", "<li>", "<a href", "&lt;"):
        assert raw not in seen["data_manager"]


def test_export_code_maps_ui_offsets_to_the_document(labeled) -> None:
    index = ManifestIndex.from_manifest(labeled["manifest"])
    flat = flatten_exports([labeled["export_path"]], index, verification_tags(label_config("entity_verification")),
                           workers=["w001"], user_workers={labeled["account"]["email"]: "w001"})
    judgements = flat.judgements.set_index("surface")
    assert judgements.loc["Rome", "outcome"] == "verify"  # the other task, decided by keyboard only
    judgements = judgements.drop(index="Rome")
    assert sorted(judgements.index) == ["Berlin", "France", "Paris"]
    for surface, row in judgements.iterrows():
        assert TEXT[int(row["start"]):int(row["end"])] == surface
        assert int(row["start"]) == TEXT.index(str(surface))
    assert judgements.loc["France", "outcome"] == "verify"
    assert judgements.loc["Berlin", "outcome"] == "edit" and judgements.loc["Berlin", "new_link"] == NEW_LINK
    assert judgements.loc["Paris", "outcome"] == "remove"


def test_decisions_are_written_beside_each_mention_not_only_coloured(labeled) -> None:
    """Readable without colour (issue 29): each highlight carries its decision as a word in the text."""
    seen = labeled["seen"]

    def words(shown: dict[str, str]) -> dict[str, str]:  # '1:verify|"1:verify"': data-label | drawn ::after
        found = {}
        for mention, both in shown.items():
            attribute, _, drawn = both.partition("|")
            assert drawn.strip('"') == attribute, both  # the word is drawn on the page, not only an attribute
            found[mention] = attribute.rpartition(":")[2]
        return found

    assert words(seen["labels_before"]) == {"France": "undecided", "Berlin": "undecided", "Paris": "undecided"}
    assert words(seen["labels_all_decided"]) == {"France": "verify", "Berlin": "edit", "Paris": "remove"}
