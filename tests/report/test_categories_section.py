"""The report's "Errors against verified truth" section (issue 45): headline, both sides, escaping, empty scores."""

from __future__ import annotations

import pandas as pd

from posthoc.metrics import score_judgements
from posthoc.report.categories_section import error_categories_section
from posthoc.report.study_report import build_report
from posthoc.scores import Scores
from posthoc.synthetic import synthetic_study


def test_the_section_leads_with_the_share_of_strict_errors_verified_as_right() -> None:
    _, mentions, judgements = synthetic_study(6, seed=5)
    scores = score_judgements(judgements, mentions)
    html = build_report(scores)
    assert 'id="error-categories"' in html and "Errors against verified truth" in html
    body = error_categories_section(scores).body_html
    headline = scores.error_category_summary.query("side == 'system' and category == 'strict_error'")
    first = headline.iloc[0]
    # the headline table comes first, with each system's share verified as right as the summary has it
    assert body.index("verified as right") < body.index("by category and kind")
    assert f"{first['overturned_share']:.3f}" in body
    assert "partial_overlap" in body or "lowercased" in body or "other" in body


def test_a_system_name_is_escaped() -> None:
    _, mentions, judgements = synthetic_study(4, seed=6, systems=("GT", "<script>alert(1)</script>"))
    html = error_categories_section(score_judgements(judgements, mentions)).body_html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_scores_without_categories_say_so_in_one_line() -> None:
    empty = pd.DataFrame()
    html = error_categories_section(Scores(*[empty] * 10)).body_html
    assert "No annotation to categorise" in html and "<table" not in html
