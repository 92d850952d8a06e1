"""The shared HTML shell (posthoc.html): every helper escapes, only http(s) links are clickable."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from posthoc.html import Section, esc, figure_html, page, paragraph, safe_link, table_html, web_link
from security.htmlcheck import HOSTILE, HOSTILE_URLS, assert_safe_html, hrefs, shown


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_a_hostile_url_is_never_a_link_and_is_shown_escaped(url: str) -> None:
    rendered = safe_link(url)
    assert web_link(url) is None
    assert "<a" not in rendered and hrefs(rendered) == []
    assert rendered == esc(url)
    assert_safe_html(rendered)


@pytest.mark.parametrize(("url", "href"), [
    ("https://en.wikipedia.org/wiki/Ghent", "https://en.wikipedia.org/wiki/Ghent"),
    ("http://dbpedia.org/resource/Paris", "http://dbpedia.org/resource/Paris"),
    ("  https://en.wikipedia.org/wiki/Łódź\n", "https://en.wikipedia.org/wiki/Łódź"),
    ("HTTPS://EN.WIKIPEDIA.ORG/wiki/X", "https://EN.WIKIPEDIA.ORG/wiki/X"),
    ('https://example.org/a"onmouseover="alert(1)', 'https://example.org/a"onmouseover="alert(1)'),
    ("https://example.org/<script>alert(1)</script>", "https://example.org/<script>alert(1)</script>"),
], ids=["https", "http", "spaces and non-ASCII", "upper-case scheme", "quotes in the path", "markup in the path"])
def test_an_http_url_becomes_exactly_one_escaped_link(url: str, href: str) -> None:
    rendered = safe_link(url, text="<b>label</b>")
    assert hrefs(rendered) == [href]  # the browser's value after unescaping: the checked URL, quotes kept inside
    assert "&lt;b&gt;label&lt;/b&gt;" in rendered and 'rel="noopener noreferrer nofollow"' in rendered
    assert_safe_html(rendered)


@pytest.mark.filterwarnings("ignore:Glyph")  # control characters have no glyph in the figure's font
@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_helper_escapes_what_it_is_given(hostile: str) -> None:
    frame = pd.DataFrame({hostile: [hostile, None], "n": [1, 2], "x": [0.5, float("nan")]})
    figure, axes = plt.subplots()
    axes.set_title(hostile)  # text inside the PNG: pixels, not markup
    body = (paragraph(hostile, css_class=hostile) + table_html(frame, caption=hostile)
            + figure_html(figure, caption=hostile, alt=hostile) + safe_link(hostile, hostile))
    document = page(hostile, [Section(hostile, body, anchor=hostile), Section(hostile, "")], intro=hostile)
    assert_safe_html(document)
    # the hostile text is there, escaped, in the title, headings, table head, cells, caption, alt and class
    assert document.count(shown(hostile)) >= 10


def test_table_cells_of_any_type_are_escaped() -> None:
    class Hostile:
        def __str__(self) -> str:
            return "<script>alert(1)</script>"

    frame = pd.DataFrame({"object": [Hostile()], "bytes": [b"<script>"], "list": [["<img src=x onerror=alert(1)>"]],
                          "category": pd.Categorical(["<script>alert(2)</script>"])})
    rendered = table_html(frame)
    assert_safe_html(rendered)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered and "&lt;script&gt;alert(2)" in rendered
