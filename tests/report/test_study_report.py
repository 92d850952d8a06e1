"""The study report: Figures 3-6 embedded, tables, exclusions, escaping, byte-identical reruns."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from report_scores_data import small_scores

from posthoc.html import Section, paragraph
from posthoc.report import figures
from posthoc.report.study_report import build_report

HERE = Path(__file__).resolve().parent


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)]


def test_report_embeds_four_png_figures_and_no_external_resource() -> None:
    html = build_report(small_scores())
    images = _images(html)
    assert len(images) == 4
    assert all(image.startswith(b"\x89PNG\r\n\x1a\n") for image in images)
    for number in (3, 4, 5, 6):
        assert f"Figure {number}" in html
    assert not re.search(r'(src|href)="(?!data:|#)', html), "a resource outside the file"
    assert "<script" not in html.lower()


def test_report_holds_the_tables_and_the_method() -> None:
    html = build_report(small_scores())
    assert "posthoc_precision" in html and "0.900" in html  # aida GT posthoc precision 0.9
    assert "1000 resamples of doc_id" in html
    assert "fleiss_kappa" in html and "0.610" in html
    assert "w002" in html and "0.333" in html  # controls table


def test_report_lists_exclusions_with_reasons() -> None:
    html = build_report(small_scores())
    section = html[html.index('id="exclusions"'):]
    assert "skipped" in section and "the worker skipped (cancelled) the task" in section
    assert "draft" in section and "never submitted" in section
    assert "annotation 7 by w001@posthoc.local" in section


@pytest.mark.parametrize("link", ["javascript:alert(1)", "<script>alert(1)</script>",
                                  'https://x.org/"><script>alert(1)</script>'])
def test_hostile_links_are_escaped_and_not_clickable(link: str) -> None:
    html = build_report(small_scores(gold_link=link))
    assert "<script>alert" not in html
    assert 'href="javascript:' not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "javascript:alert(1)" in html


def test_extra_sections_are_appended_after_the_study_sections() -> None:
    html = build_report(small_scores(), extra_sections=[Section("CrowdTruth", paragraph("unit <quality>"), "ct")])
    assert html.index('id="exclusions"') < html.index('id="ct"')
    assert "unit &lt;quality&gt;" in html


@pytest.mark.slow
def test_same_scores_give_byte_identical_html_across_processes(tmp_path: Path) -> None:
    first = build_report(small_scores())
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from report_scores_data import small_scores; from posthoc.report.study_report import build_report;"
        "open(sys.argv[2], 'w', encoding='utf-8').write(build_report(small_scores()))"
    )
    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-c", script, str(HERE), str(out)], check=True)
    assert out.read_text(encoding="utf-8") == first
    assert build_report(small_scores()) == first


def test_figure_3_bars_are_the_posthoc_values_with_their_intervals() -> None:
    scores = small_scores()
    figure = figures.precision_recall_figure(scores.rates, scores.preannotation)
    pre_precision, posthoc_precision = figure.axes[0], figure.axes[1]
    strict_micro = scores.preannotation.query("matching == 'strict' and averaging == 'micro'")
    assert sorted(round(p.get_height(), 6) for p in pre_precision.patches) == sorted(
        round(v, 6) for v in strict_micro["precision"])  # no bar for GT, which has no pre-annotation score
    assert posthoc_precision.get_title() == "posthoc precision"
    heights = sorted(round(p.get_height(), 6) for p in posthoc_precision.patches)
    expected = sorted(round(v, 6) for v in scores.rates.query("metric == 'posthoc_precision'")["value"])
    assert heights == expected
    # error bar segments span low..high of each bar
    segments = [seg for coll in posthoc_precision.collections for seg in coll.get_segments()]
    spans = sorted((round(s[0][1], 6), round(s[1][1], 6)) for s in segments)
    rows = scores.rates.query("metric == 'posthoc_precision'")
    assert spans == sorted((round(lo, 6), round(hi, 6)) for lo, hi in zip(rows["low"], rows["high"], strict=True))


def test_figure_4_stacks_shares_to_one_per_system() -> None:
    scores = small_scores()
    figure = figures.outcome_figure(scores.outcome_counts)
    axes = figure.axes[0]
    tops = {}
    for patch in axes.patches:
        x = round(patch.get_x(), 6)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    assert len(tops) == 6
    assert np.allclose(list(tops.values()), 1.0)


def test_figure_6_shares_follow_the_counts() -> None:
    scores = small_scores()
    axes = figures.union_outcomes_figure(scores.union_outcomes).axes[0]
    widths = [round(p.get_width(), 6) for p in axes.patches]
    # first dataset's bars come in A..E order, one per outcome, for each dataset
    assert widths[:: 2] == [0.6, 0.16, 0.04, 0.02, 0.18]


def test_empty_scores_still_render_every_figure() -> None:
    scores = small_scores()
    for name in ("rates", "preannotation", "outcome_counts", "agreement", "union_outcomes", "exclusions"):
        setattr(scores, name, getattr(scores, name).iloc[0:0])
    html = build_report(scores)
    assert len(_images(html)) == 4
    assert "Nothing was excluded." in html


def test_figure_3_bars_are_centred_on_their_dataset_tick() -> None:
    """Left panels have no GT bar: the bars drawn there are centred on the tick, not shifted off it."""
    scores = small_scores()
    figure = figures.precision_recall_figure(scores.rates, scores.preannotation)
    for axes in figure.axes[:4]:
        ticks = list(axes.get_xticks())
        centres = [p.get_x() + p.get_width() / 2 for p in axes.patches]
        assert centres
        for tick in ticks:
            mine = [c for c in centres if abs(c - tick) < 0.5]
            assert mine and abs(sum(mine) / len(mine) - tick) < 1e-9, (axes.get_title(), tick, mine)


def test_every_exclusion_kind_has_a_reason() -> None:
    from posthoc.export.checks import EXCLUSION_KINDS, exclusions_frame, summarise_exclusions

    kinds = [*EXCLUSION_KINDS, "control_rows", "failing_worker"]
    summary = summarise_exclusions(exclusions_frame([(kind, "w1", "", "", 1) for kind in kinds]))
    assert set(summary["kind"]) == set(kinds)
    assert all(str(reason).strip() and "no reason" not in str(reason) for reason in summary["reason"])


def test_long_tables_are_collapsed_with_their_row_count() -> None:
    import pandas as pd

    from posthoc.html import table_html

    short = table_html(pd.DataFrame({"a": range(3)}), caption="Short")
    assert "<details" not in short and "<caption>Short</caption>" in short
    long = table_html(pd.DataFrame({"a": range(40)}), caption="Long")
    assert long.startswith("<details><summary>Long: all 40 rows (click to show)</summary>")
    assert long.count("<tr>") == 41  # the header and every row are still there, folded


def test_figures_draw_cjk_and_emoji_with_installed_fonts() -> None:
    """With Noto Sans CJK and Symbola installed (scripts/test.sh installs them), no glyph is a box."""
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from posthoc.html import figure_html
    from posthoc.report import figures as _figures  # noqa: F401 - importing it sets the figure fonts
    from posthoc.report.fonts import figure_fonts

    families = figure_fonts()
    assert families[0] == "DejaVu Sans"
    if not {"Noto Sans CJK JP", "Symbola"} <= set(families):
        pytest.skip(f"CJK / emoji fonts not installed (found {families}); apt-get install fonts-noto-cjk "
                    "fonts-symbola")
    figure = Figure()
    FigureCanvasAgg(figure)
    figure.subplots().set_title("東京タワー 🗼 and 👩 in São Paulo")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        html = figure_html(figure)
    assert html.startswith("<figure><img")
    assert not [w for w in caught if "missing from font" in str(w.message)]


def _compared_scores(systems: tuple[str, ...] = ("GT", "E2E", "REL")):
    from posthoc.metrics import ScoringOptions, score_judgements
    from posthoc.synthetic import synthetic_study

    _, mentions, judgements = synthetic_study(12, systems=systems, seed=4)
    return score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=200))


def test_the_comparison_section_holds_its_figure_tables_and_escapes_system_names() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    scores = _compared_scores(("GT", "E2E", hostile))
    html = build_report(scores)
    section = html[html.index('id="comparisons"'):html.index('id="figure-4"')]
    assert len(_images(section)) == 1
    assert "Holm" in section and "rank_change" in section and "p_holm" in section
    assert hostile not in html and "&lt;img src=x onerror=alert(1)&gt;" in section
    changed = scores.rankings["changed"].sum()
    assert f"{changed} of {len(scores.rankings)} ranks change" in section


def test_comparison_figure_bars_are_the_paired_differences() -> None:
    scores = _compared_scores()
    figure = figures.comparison_figure(scores.comparisons)
    precision_axes = figure.axes[0]
    heights = sorted(round(patch.get_height(), 9) for patch in precision_axes.patches)
    expected = scores.comparisons.loc[scores.comparisons["metric"] == "posthoc_precision", "difference"]
    assert heights == sorted(round(float(v), 9) for v in expected)
    assert len(heights) == 2 * 3  # two datasets, three pairs
