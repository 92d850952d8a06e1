"""The explorer's data (posthoc.report.explorer): the annotations behind every cell, checked against the judgements
table computed independently (plain pandas and loops, not the module's code), the file it writes, escaping, and
the report's links into it."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer_study import DOCUMENTS, MENTIONS, TEXT_1, WIKI, ZOE, scored, span
from posthoc.html import table_html
from posthoc.report.categories_section import categories_for_explorer
from posthoc.report.explorer import DATA, PAGE, CellLinks, data_script, explorer_payload, write_explorer
from posthoc.report.explorer_cells import build_explorer_data
from posthoc.report.explorer_data import AnnotationTable, ExplorerData, annotation_cell_id
from posthoc.report.study_report import build_report
from posthoc.synthetic import paper_sized_study

KEY = ["dataset", "doc_id", "system", "start", "end", "link"]


def _keys(data: ExplorerData, cell: str) -> set[tuple[object, ...]]:
    rows = data.annotations.iloc[data.members(cell)]
    return {(str(d), str(i), str(s), int(a), int(b), str(k)) for d, i, s, a, b, k in rows[KEY].itertuples(
        index=False, name=None)}


def _as_keys(frame: pd.DataFrame) -> set[tuple[object, ...]]:
    return {(str(d), str(i), str(s), int(a), int(b), str(k)) for d, i, s, a, b, k in frame[KEY].itertuples(
        index=False, name=None)}


def _counted(judgements: pd.DataFrame, excluded: set[str]) -> pd.DataFrame:
    return judgements[~judgements["is_control"].astype(bool) & ~judgements["worker"].isin(excluded)]


def _expected_rates_cells(scores: object, judgements: pd.DataFrame) -> dict[str, set[tuple[object, ...]]]:
    """What each rates and outcome_counts row holds, from the judgements alone (groupby, majority by hand)."""
    controls = scores.controls  # type: ignore[attr-defined]
    excluded = set(controls.loc[controls["excluded"], "worker"])
    counted = _counted(judgements, excluded)
    per = counted.groupby(KEY)["outcome"].agg(list).reset_index()
    per["verified"] = [2 * outcomes.count("verify") > len(outcomes) for outcomes in per["outcome"]]
    expected: dict[str, set[tuple[object, ...]]] = {}
    for label, row in scores.rates.iterrows():  # type: ignore[attr-defined]
        d, s, metric = row["dataset"], row["system"], row["metric"]
        mine = per[(per["dataset"] == d) & (per["system"] == s)]
        if metric.endswith("_share"):
            outcome = metric.removesuffix("_share")
            mine = mine[[outcome in outcomes for outcomes in mine["outcome"]]]
        union = per[(per["dataset"] == d) & per["verified"]]
        keys = {"posthoc_recall": _as_keys(union), "posthoc_f1": _as_keys(mine) | _as_keys(union)}
        expected[f"rates.{label}"] = keys.get(metric, _as_keys(mine))
    for label, row in scores.outcome_counts.iterrows():  # type: ignore[attr-defined]
        mine = per[(per["dataset"] == row["dataset"]) & (per["system"] == row["system"])]
        expected[f"outcome_counts.{label}"] = _as_keys(mine[[row["outcome"] in o for o in mine["outcome"]]])
    return expected


def test_rates_and_outcome_cells_hold_the_annotations_the_judgements_say() -> None:
    scores, judgements = scored()
    data = build_explorer_data(scores, judgements, MENTIONS)
    expected = _expected_rates_cells(scores, judgements)
    assert expected and all(_keys(data, cell) == keys for cell, keys in expected.items())
    verification = scores.rates[(scores.rates["metric"] == "verification_rate") & (scores.rates["system"] == "A")]
    # the cell's size is the rate's denominator n, its verified members the numerator
    cell = f"rates.{verification.index[0]}"
    members = data.annotations.iloc[data.members(cell)]
    assert len(members) == int(verification["n"].iloc[0])
    assert (members["verdict"] == 1).sum() == round(float(verification["value"].iloc[0]) * len(members))


def test_the_excluded_workers_judgement_and_the_controls_are_not_counted_but_shown() -> None:
    scores, judgements = scored()
    assert list(scores.controls.loc[scores.controls["excluded"], "worker"]) == ["w9"]
    data = build_explorer_data(scores, judgements, MENTIONS)
    zoe = data.annotations.index[(data.annotations["system"] == "GT") & (data.annotations["surface"] == ZOE)][0]
    judged = range(data.judgement_offsets[zoe], data.judgement_offsets[zoe + 1])
    assert sorted(data.workers[data.judgement_worker[j]] for j in judged) == ["w1", "w9"]
    assert sorted(int(data.judgement_flags[j]) for j in judged) == [0, 2]  # w9's: excluded worker
    assert data.annotations.at[zoe, "verdict"] == 1 and data.annotations.at[zoe, "n_judges"] == 1
    controls = scores.controls.reset_index(drop=True)
    for label, row in controls.iterrows():
        wanted = {("news", "control", "GT", 0, 5, WIKI + "Paris")} if row["n_control"] else set()
        assert _keys(data, f"controls.{label}") == wanted, row["worker"]
    failing = scores.exclusions.index[scores.exclusions["kind"] == "failing_worker"][0]
    assert ("news", "d1", "GT", *span(TEXT_1, ZOE), WIKI + ZOE) in _keys(data, f"exclusions.{failing}")


def _letter(row: pd.Series, gt: pd.DataFrame) -> str:
    """Figure 6's letter by the paper's words, one GT mention at a time."""
    same = gt[(gt["doc_id"] == row["doc_id"])]
    if ((same["start"] == row["start"]) & (same["end"] == row["end"]) & (same["link"] == row["link"])).any():
        return "A"
    if ((same["start"] == row["start"]) & (same["end"] == row["end"])).any():
        return "B"
    overlap = (same["start"] < row["end"]) & (same["end"] > row["start"])
    if (overlap & (same["link"] == row["link"])).any():
        return "C"
    return "D" if overlap.any() else "E"


def test_union_outcome_cells_hold_the_verified_annotations_of_their_letter() -> None:
    scores, judgements = scored()
    data = build_explorer_data(scores, judgements, MENTIONS)
    counted = _counted(judgements, {"w9"})
    per = counted.groupby(KEY)["outcome"].agg(list).reset_index()
    verified = per[[2 * o.count("verify") > len(o) for o in per["outcome"]]]
    gt = MENTIONS[MENTIONS["system"] == "GT"]
    letters = [_letter(row, gt) for _, row in verified.iterrows()]
    assert set(letters) >= {"A", "B", "C", "E"}
    for label, row in scores.union_outcomes.iterrows():
        assert _keys(data, f"union_outcomes.{label}") == _as_keys(verified[[x == row["outcome"] for x in letters]])


def test_pair_preannotation_and_agreement_cells() -> None:
    scores, judgements = scored()
    data = build_explorer_data(scores, judgements, MENTIONS)
    for label, row in scores.comparisons.iterrows():
        both = _keys(data, f"rates.{scores.rates.index[(scores.rates['system'] == row['system_a']) & (scores.rates['metric'] == 'verification_rate')][0]}") \
            | _keys(data, f"rates.{scores.rates.index[(scores.rates['system'] == row['system_b']) & (scores.rates['metric'] == 'verification_rate')][0]}")  # noqa: E501
        assert _keys(data, f"comparisons.{label}") == both
    for label, row in scores.preannotation.iterrows():
        wanted = MENTIONS[MENTIONS["system"].isin([row["system"], "GT"])]
        assert _keys(data, f"preannotation.{label}") == _as_keys(wanted)
    for label, row in scores.agreement.iterrows():  # every system has the span and link, judges summed
        assert len(_keys(data, f"agreement.{label}")) == 3 * int(row["count"])


def test_paper_like_study_cells_match_the_judgements_at_k2_with_failing_workers() -> None:
    from posthoc.metrics import ScoringOptions, score_judgements

    _, mentions, judgements = paper_sized_study(scale=0.004, k=2, failing_worker_share=0.3, seed=3)
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=10, interval="percentile"))
    assert scores.controls["excluded"].any()
    data = build_explorer_data(scores, judgements, mentions)
    expected = _expected_rates_cells(scores, judgements)
    assert len(expected) > 100
    assert all(_keys(data, cell) == keys for cell, keys in expected.items())


def _ints(text: str) -> list[int]:
    return np.frombuffer(base64.b64decode(text), dtype="<i4").tolist()


def test_written_data_decodes_to_the_cells_with_code_point_offsets(tmp_path: Path) -> None:
    scores, judgements = scored()
    files = write_explorer(tmp_path, scores=scores, judgements=judgements, mentions=MENTIONS, documents=DOCUMENTS)
    assert sorted(p.name for p in files) == sorted([PAGE, DATA, "explorer.css", "explorer.js"])
    script = (tmp_path / DATA).read_text(encoding="utf-8")
    assert script.isascii() and script.startswith("window.POSTHOC_EXPLORER_DATA = ")
    payload = json.loads(script[script.index("=") + 1:].rstrip().rstrip(";"))
    data = build_explorer_data(scores, judgements, MENTIONS)
    lists_offsets, lists_items = _ints(payload["lists"]["offsets"]), _ints(payload["lists"]["items"])
    cells_offsets, cells_items = _ints(payload["cells"]["offsets"]), _ints(payload["cells"]["items"])
    for number, cell in enumerate(payload["cells"]["ids"]):
        lists = cells_items[cells_offsets[number]:cells_offsets[number + 1]]
        rows = {a for i in lists for a in lists_items[lists_offsets[i]:lists_offsets[i + 1]]}
        assert sorted(rows) == data.members(cell).tolist(), cell
    start, end, doc = (_ints(payload["ann"][k]) for k in ("start", "end", "doc"))
    texts = payload["docs"]["text"]
    for i, surface in enumerate(payload["surface"]):
        if texts[doc[i]] is not None:
            assert texts[doc[i]][start[i]:end[i]] == surface  # code points: Python str indices
    assert "北京" in payload["surface"] and "🇫🇷" in payload["surface"]


def test_the_page_builds_no_html_from_data() -> None:
    from importlib import resources

    source = (resources.files("posthoc.report") / "static" / "explorer.js").read_text(encoding="utf-8")
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function", source)
    page = (resources.files("posthoc.report") / "static" / "explorer.html").read_text(encoding="utf-8")
    assert "connect-src 'none'" in page and not re.search(r"(src|href)=\"(https?:)?//", page)


def test_data_script_keeps_hostile_text_inside_the_json_literal() -> None:
    script = data_script({"surface": ["</script><script>alert(1)</script>", "\u2028", "é"]})
    assert script.isascii() and "\\u2028" in script
    assert json.loads(script[script.index("=") + 1:].rstrip().rstrip(";"))["surface"][1] == "\u2028"


def test_report_rows_link_to_cells_that_exist(tmp_path: Path) -> None:
    scores, judgements = scored()
    html = build_report(scores, links=CellLinks(PAGE))
    categories = categories_for_explorer(scores)
    assert categories is not None
    data = build_explorer_data(scores, judgements, MENTIONS, annotation_tables=[categories])
    cells = re.findall(r'href="explorer\.html#cell=([^"]+)"', html)
    from urllib.parse import unquote

    assert {unquote(c).split(".")[0] for c in cells} >= {"rates", "preannotation", "comparisons", "rankings",
                                                         "outcome_counts", "union_outcomes", "controls", "exclusions"}
    assert any(unquote(c).startswith("categories:strict=error|") for c in cells)  # the error categories' rows too
    assert all(unquote(c) in data.cells for c in cells)
    assert "explorer.html" not in build_report(scores)  # no explorer, no links: the report as before


@pytest.mark.parametrize("link", ["javascript:alert(1)", "//evil.example/x", "../secret.html", "data:text/html,x"])
def test_a_hostile_row_link_stays_plain_text(link: str) -> None:
    html = table_html(pd.DataFrame({"a": ["x"]}), row_links=[link])
    assert "<a " not in html and "<td" in html


def test_an_annotation_table_adds_filters_and_cells_and_its_unmatched_rows() -> None:
    scores, judgements = scored()
    start, end = span(TEXT_1, "Paris")
    categories = pd.DataFrame([
        ("news", "d1", "A", *span(TEXT_1, "北京"), WIKI + "Beijing", "disambiguation wrong", "partial name"),
        ("news", "d1", "B", start, end, WIKI + "Paris_(mythology)", "disambiguation wrong", "other"),
        ("news", "d1", "A", start, end, None, "detection false negative", "partial overlap"),  # A has no such span
    ], columns=["dataset", "doc_id", "system", "start", "end", "link", "category", "kind"])
    data = build_explorer_data(scores, judgements, MENTIONS,
                               annotation_tables=[AnnotationTable("categories", categories, ("category", "kind"))])
    assert [(t, c, v) for t, c, v, _, _ in data.facets] == [
        ("categories", "category", ["detection false negative", "disambiguation wrong"]),
        ("categories", "kind", ["other", "partial name", "partial overlap"])]
    wrong = data.annotations.iloc[data.members(annotation_cell_id("categories", "category", "disambiguation wrong"))]
    assert sorted(wrong["surface"]) == ["Paris", "北京"]
    cell = annotation_cell_id("categories", "kind", "partial overlap", dataset="news", system="A")
    added = data.annotations.iloc[data.members(cell)]
    assert list(added["origin"]) == ["categories"] and list(added["start"]) == [start]
    assert int(added["verdict"].iloc[0]) == 0  # not judged: not one of A's annotations
    payload = explorer_payload(data, DOCUMENTS)
    assert payload["origins"] == ["", "categories"] and len(payload["facets"]) == 2  # type: ignore[arg-type]
