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
from posthoc.export.flatten import ManifestIndex, flatten_exports
from posthoc.export.tags import verification_tags
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.setup import create_study, read_accounts
from posthoc.paths import label_config
from posthoc.study import StudyConfig, plan_study
from posthoc.study.manifest import Manifest

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




@pytest.fixture(scope="module")
def labeled(browser, ls_server, tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("browser")
    documents = pd.DataFrame([{"dataset": "browser", "doc_id": "d1", "text": TEXT}])
    mentions = pd.DataFrame([_mention(s) for s in ("France", "Berlin", "Paris")])
    plan = plan_study(documents, mentions, StudyConfig(name="browser", seed=1, n_workers=1, control_tasks=False,
                                                       max_chars=150))
    manifest = Manifest.create(folder / "manifest.sqlite", plan)
    (task,) = manifest.tasks().itertuples(index=False)
    assert task.chunk_start > 0 and any(ord(ch) > 0xFFFF for ch in TEXT[:task.chunk_start])
    with run_backend(manifest.path) as backend_url:
        setup = create_study(manifest, url=ls_server.url, token=ls_server.token, backend_url=backend_url,
                             accounts_file=folder / "accounts.json", email_domain="browser.posthoc.local")
        account = read_accounts(folder / "accounts.json")["w001"]
        (project,) = setup.projects
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("dialog", lambda dialog: dialog.dismiss())
        page.goto(f"{ls_server.url}/user/login/")
        page.fill("input[name=email]", account["email"])
        page.fill("input[name=password]", account["password"])
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(project.link)
        page.wait_for_selector("span.htx-highlight", timeout=90_000)
        page.wait_for_timeout(1000)
        seen: dict[str, Any] = {
            "highlights": [(h.inner_text(), h.get_attribute("data-start"), h.get_attribute("data-end"))
                           for h in page.locator("span.htx-highlight").all()],
            "pwned": page.evaluate("window.__pwned"),
            "page_text": page.inner_text("body"),
            "hrefs": page.eval_on_selector_all("a[href]", "els => els.map(e => [e.getAttribute('href'), "
                                                          "e.getAttribute('target'), e.textContent])"),
            "img_x": page.locator("img[src=x]").count(),
            "radios": page.locator("label:has-text('verify')").count(),
        }
        shots = folder / "screenshots"
        shots.mkdir()
        page.screenshot(path=str(shots / "1-stream.png"))
        highlight = page.locator("span.htx-highlight")
        highlight.filter(has_text="France").first.click()
        seen["link_shown"] = page.locator("[data-testid=htx-textbox-content]").first.inner_text()
        seen["new_link_visible_before_edit"] = page.locator("input[name=new_link]").is_visible()
        page.locator("label:has-text('verify')").click()
        highlight.filter(has_text="Berlin").first.click()
        page.locator("label:has-text('edit')").click()
        seen["new_link_visible_on_edit"] = page.locator("input[name=new_link]").is_visible()
        page.fill("input[name=new_link]", NEW_LINK)
        page.keyboard.press("Enter")
        page.screenshot(path=str(shots / "2-edit.png"))
        highlight.filter(has_text="Paris").first.click()
        page.keyboard.press("3")  # the remove hotkey
        page.screenshot(path=str(shots / "3-remove.png"))
        page.get_by_test_id("bottombar-submit-button").click()
        page.wait_for_selector("text=No More Tasks", timeout=60_000)
        page.screenshot(path=str(shots / "4-done.png"))
        page.close()
        export = LabelStudioClient(ls_server.url, ls_server.token).export_snapshot(project.project_id)
    export_path = folder / "export.json"
    export_path.write_text(json.dumps(export), encoding="utf-8")
    return {"seen": seen, "export": export, "export_path": export_path, "manifest": manifest, "task": task,
            "account": account}


def test_stream_shows_prefilled_regions_at_code_point_offsets(labeled) -> None:
    chunk = BODY
    highlights = labeled["seen"]["highlights"]
    assert [h[0] for h in highlights] == ["France", "Berlin", "Paris"]
    for surface, start, end in highlights:
        assert (int(start), int(end)) == (chunk.index(surface), chunk.index(surface) + len(surface))
    assert labeled["seen"]["radios"] >= 1


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
    (task,) = labeled["export"]
    (annotation,) = task["annotations"]
    assert annotation["completed_by"]["email"] == labeled["account"]["email"]
    tags = verification_tags(label_config("entity_verification"))
    decisions = {}
    for item in annotation["result"]:
        text = task["data"]["text"]
        start, end = item["value"]["start"], item["value"]["end"]
        assert text == BODY
        surface = text[start:end]
        if item["from_name"] == tags.decision:
            decisions[surface] = item["value"]["choices"]
        if item["from_name"] == tags.new_link:
            assert (surface, item["value"]["text"]) == ("Berlin", [NEW_LINK])
        if item["from_name"] == tags.labels:
            assert item["value"]["text"] == surface
    assert decisions == {"France": ["verify"], "Berlin": ["edit"], "Paris": ["remove"]}


def test_export_code_maps_ui_offsets_to_the_document(labeled) -> None:
    index = ManifestIndex.from_manifest(labeled["manifest"])
    flat = flatten_exports([labeled["export_path"]], index, verification_tags(label_config("entity_verification")),
                           workers=["w001"], user_workers={labeled["account"]["email"]: "w001"})
    judgements = flat.judgements.set_index("surface")
    assert sorted(judgements.index) == ["Berlin", "France", "Paris"]
    for surface, row in judgements.iterrows():
        assert TEXT[int(row["start"]):int(row["end"])] == surface
        assert int(row["start"]) == TEXT.index(str(surface))
    assert judgements.loc["France", "outcome"] == "verify"
    assert judgements.loc["Berlin", "outcome"] == "edit" and judgements.loc["Berlin", "new_link"] == NEW_LINK
    assert judgements.loc["Paris", "outcome"] == "remove"
