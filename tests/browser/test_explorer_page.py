"""The study explorer in a real browser (Debian chromium via Playwright; no Label Studio, no network).

explorer.html opened from file:// and from a static server on loopback: a cell's annotations listed, one opened
with its span highlighted in its text (emoji, CJK, combining marks: code-point offsets), filters, the search by
surface form, the keyboard's next / previous, the CSV export, a hostile surface and a ``javascript:`` link inert,
and no console error.
"""

from __future__ import annotations

import csv
import functools
import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
import pytest

from explorer_study import DOCUMENTS, MENTIONS, TEXT_1, WIKI, ZOE, scored, span
from posthoc.report.explorer import write_explorer
from posthoc.report.explorer_cells import build_explorer_data
from posthoc.report.explorer_data import AnnotationTable, annotation_cell_id

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    scores, judgements = scored()
    categories = pd.DataFrame([("news", "d1", "A", *span(TEXT_1, "北京"), WIKI + "Beijing", "disambiguation wrong")],
                              columns=["dataset", "doc_id", "system", "start", "end", "link", "category"])
    tables = [AnnotationTable("categories", categories, ("category",))]
    out = tmp_path_factory.mktemp("explorer")
    write_explorer(out, scores=scores, judgements=judgements, mentions=MENTIONS, documents=DOCUMENTS,
                   annotation_tables=tables)
    data = build_explorer_data(scores, judgements, MENTIONS, annotation_tables=tables)
    rates = scores.rates
    every_a = rates.index[(rates["system"] == "A") & (rates["metric"] == "verification_rate")][0]
    return {"path": out, "data": data, "cell": f"rates.{every_a}"}


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(accept_downloads=True)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    return page, errors


def _case_text(page: Any) -> str:
    """The case's span in the document pane (one mark a piece when other annotations cut it)."""
    return "".join(page.eval_on_selector_all("#casepane > .doc mark.case", "ms => ms.map(m => m.textContent)"))


def _count(page: Any) -> int:
    return int(page.inner_text("#pager").split()[0])


def test_a_cell_lists_its_annotations_and_opens_each_highlighted_in_its_text(browser: Any, folder: dict[str, Any]
                                                                            ) -> None:
    data = folder["data"]
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri() + "#cell=" + quote(folder["cell"]))
    members = data.annotations.iloc[data.members(folder["cell"])]
    assert _count(page) == len(members) == (MENTIONS["system"] == "A").sum() == 6
    shown = page.eval_on_selector_all("#list tbody tr td:nth-child(5)", "tds => tds.map(t => t.textContent)")
    assert shown == list(members["surface"])  # annotation order: by document, then span
    for number, surface in enumerate(members["surface"]):
        page.click(f"#list tbody tr:nth-child({number + 1})")
        assert _case_text(page) == surface, surface
        assert page.inner_text("#casepane h2").startswith(f"Case {number + 1} of 6")
    page.keyboard.press("Home")
    page.click("#list tbody tr:nth-child(1)")
    page.keyboard.press("j")
    assert page.inner_text("#casepane h2").startswith("Case 2 of 6")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("k")
    assert page.inner_text("#casepane h2").startswith("Case 2 of 6")
    page.keyboard.press("k")
    assert page.inner_text("#casepane h2").startswith("Case 1 of 6")
    assert errors == []


def test_the_place_shows_every_system_and_each_verdict_and_only_web_links_click(browser: Any,
                                                                               folder: dict[str, Any]) -> None:
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri())
    page.fill("#search", "北京")
    assert _count(page) == 3  # GT's and B's 北京大学, A's 北京
    page.fill("#search", "")
    page.select_option("#f-dataset", label="news")
    page.fill("#search", "Lyon")
    assert _count(page) == 2  # GT's and B's
    place = page.inner_text("#casepane table")
    assert "GT" in place and "B" in place and "javascript:alert(1)" in place
    assert page.eval_on_selector_all("#casepane a", "as => as.map(a => a.href)") == []  # javascript: not a link
    page.fill("#search", "script")
    assert _count(page) == 1
    assert _case_text(page) == "<script>window.__pwned=1</script>"
    assert page.evaluate("window.__pwned") is None
    links = page.eval_on_selector_all("#casepane a", "as => as.map(a => a.href)")
    assert links == [WIKI + "Script"]
    page.fill("#search", "")
    page.select_option("#f-system", label="B")
    page.select_option("#f-verdict", label="verify")
    assert _count(page) == 4  # B's four verified by w1 alone or by w1 and w2; Lyon: one verify of two judges
    page.select_option("#f-worker", label="w2")
    assert _count(page) == 1  # B's Macron on document 2, where w2 judged too
    page.select_option("#f-facet0", label="disambiguation wrong")
    assert _count(page) == 0
    assert errors == []


def test_side_by_side_and_code_point_highlights_after_emoji(browser: Any, folder: dict[str, Any]) -> None:
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri())
    page.fill("#search", ZOE)
    page.select_option("#f-system", label="A")
    assert _count(page) == 1
    page.select_option("#side-left", label="A")
    page.select_option("#side-right", label="B")
    script = ("ds => ds.map(d => [d.querySelector('h3').textContent, "
              "Array.from(d.querySelectorAll('mark')).map(m => m.textContent)])")
    sides = page.eval_on_selector_all(".sides > div", script)
    assert sides[0] == ["A", [ZOE, "北京", "Seine", "Paris, Île"]]
    assert sides[1][0] == "B" and sides[1][1] == [ZOE, "北京大学", "Paris", "Île-de-France"]  # the case outlined
    assert errors == []


def test_export_writes_the_current_list_as_csv(browser: Any, folder: dict[str, Any]) -> None:
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri() + "#cell=" + quote(folder["cell"]))
    with page.expect_download() as download:
        page.click("#export")
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    members = folder["data"].annotations.iloc[folder["data"].members(folder["cell"])]
    assert [r["surface"] for r in rows] == list(members["surface"])
    assert {r["system"] for r in rows} == {"A"} and rows[0]["judgements"].startswith("w1: ")
    assert "categories category" in rows[0]
    assert errors == []


def test_an_added_table_cell_opens_from_its_id(browser: Any, folder: dict[str, Any]) -> None:
    cell = annotation_cell_id("categories", "category", "disambiguation wrong", dataset="news", system="A")
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri() + "#cell=" + quote(cell, safe=""))
    assert _count(page) == 1 and _case_text(page) == "北京"
    assert "disambiguation wrong" in page.inner_text("#casepane table")
    assert errors == []


@pytest.fixture
def served(folder: dict[str, Any]) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder["path"]))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_it_works_from_a_static_server_too(browser: Any, folder: dict[str, Any], served: str) -> None:
    page, errors = _open(browser, served + "explorer.html#cell=" + quote(folder["cell"]))
    assert _count(page) == 6
    assert errors == []


def test_choosing_a_table_then_a_cell_opens_it(browser: Any, folder: dict[str, Any]) -> None:
    data = folder["data"]
    page, errors = _open(browser, (folder["path"] / "explorer.html").as_uri())
    assert _count(page) == len(data.annotations)  # no cell: every annotation
    page.select_option("#table", "union_outcomes")
    page.wait_for_function("() => location.hash.includes('union_outcomes')")
    cells = [c for c in data.cells if c.startswith("union_outcomes.")]
    assert page.eval_on_selector_all("#cell option", "os => os.length") == len(cells)
    chosen = max(cells, key=lambda c: len(data.members(c)))
    page.select_option("#cell", label=data.labels[chosen])
    page.wait_for_function(f"() => location.hash.endsWith({chosen!r})")
    assert _count(page) == len(data.members(chosen)) > 0
    assert page.inner_text("#celllabel") == data.labels[chosen]
    assert errors == []


def test_a_report_row_opens_its_cell_in_the_explorer(browser: Any, folder: dict[str, Any]) -> None:
    from posthoc.report.explorer import PAGE, CellLinks
    from posthoc.report.study_report import build_report

    scores, _ = scored()
    (folder["path"] / "report.html").write_text(build_report(scores, links=CellLinks(PAGE)), encoding="utf-8")
    page, errors = _open_report(browser, folder["path"] / "report.html")
    row = scores.union_outcomes.index[scores.union_outcomes["count"] > 0][0]
    page.click(f"a[href='explorer.html#cell=union_outcomes.{row}']")
    page.wait_for_selector("body[data-ready='1']")
    assert page.url.endswith(f"explorer.html#cell=union_outcomes.{row}")
    assert _count(page) == len(folder["data"].members(f"union_outcomes.{row}")) > 0
    assert errors == []


def _open_report(browser: Any, report: Path) -> tuple[Any, list[str]]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(report.as_uri())
    if page.locator("#figure-6 details").count():  # a long table is folded
        page.click("#figure-6 details summary")
    return page, errors
