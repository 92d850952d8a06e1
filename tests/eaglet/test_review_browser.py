"""The review config in a real browser: a reviewer sees every flag as a pre-filled region with its
suggested link, accepts two with the mouse and the hotkey, and the corrected gold holds exactly those.

Debian chromium via Playwright, Label Studio on loopback (paper 003 Sect. 4.4, the review module's UI).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from posthoc.cli.flags import check_command
from posthoc.eaglet.review import apply_review, create_review_project
from posthoc.readers import read_mentions

pytestmark = [pytest.mark.browser, pytest.mark.labelstudio, pytest.mark.slow]

EX2 = "http://example.org/Example2FromThePaper"
W = "https://en.wikipedia.org/wiki/"




def test_reviewer_accepts_flags_in_the_browser(browser: Any, ls_server: Any, ls_annotator: Any, shared_data: Path,
                                               tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("People's Republic of China\tredirect\tChina\n", encoding="utf-8")
    flags_dir = tmp_path / "flags"
    result = CliRunner().invoke(check_command, [str(shared_data / "eaglet" / "paper_examples.ttl"), "--out",
                                                str(flags_dir), "--kb-tsv", str(kb),
                                                "--rules", "positioning,uri,inconsistent_marking"])
    assert result.exit_code == 0, result.output
    project = create_review_project(flags_dir, url=ls_server.url, token=ls_server.token,
                                    title=f"browser review {tmp_path.name}")
    assert project.created == 1
    reviewer = ls_annotator()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{ls_server.url}/user/login/")
    page.fill("input[name=email]", reviewer.email)
    page.fill("input[name=password]", reviewer.password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("networkidle")
    page.goto(f"{ls_server.url}/projects/{project.project_id}/data?labeling=1")
    page.wait_for_selector("span.htx-highlight", timeout=90_000)
    page.wait_for_timeout(1000)
    highlights = page.locator("span.htx-highlight")
    assert sorted(h.inner_text() for h in highlights.all()) == ["China", "Seattle", "foot"]
    page.screenshot(path=str(tmp_path / "1-review.png"))
    highlights.filter(has_text="China").first.click()
    assert page.locator("label:has-text('accept')").count() >= 1
    # the flag's reason is on screen for the selected region (its meta text, in the info panel)
    page.get_by_text("redirects to https://en.wikipedia.org/wiki/China").first.wait_for(timeout=10_000)
    shown = page.locator("textarea[name=link], input[name=link], [data-testid=htx-textbox-content]")
    assert W + "China" in " ".join(el.input_value() if el.evaluate("e => 'value' in e") else el.inner_text()
                                   for el in shown.all())
    page.locator("label:has-text('accept')").first.click()
    highlights.filter(has_text="foot").first.click()
    page.keyboard.press("1")  # the accept hotkey
    page.screenshot(path=str(tmp_path / "2-decided.png"))
    page.get_by_test_id("bottombar-submit-button").click()
    page.wait_for_timeout(3000)
    page.close()

    applied = apply_review(flags_dir, url=ls_server.url, token=ls_server.token, project_id=None,
                           out_dir=tmp_path / "corrected")
    original = read_mentions(flags_dir / "checked.jsonl")
    before = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in original.mentions.itertuples()}
    after = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in applied.corpus.mentions.itertuples()}
    assert before - after == {(EX2, 12, 16, W + "Foot"), (EX2, 62, 67, W + "People%27s_Republic_of_China")}
    assert after - before == {(EX2, 62, 67, W + "China")}
    log = applied.log.set_index("rule")
    assert log.loc["inconsistent_marking", "decision"] == "undecided"
    assert set(log["reviewer"]) == {reviewer.email}
    assert json.loads((flags_dir / "review.json").read_text())["project_id"] == project.project_id
