"""A server's error answer becomes one short line (the CLI prints service errors as one line)."""

from __future__ import annotations

from posthoc.errors import answer_summary

DJANGO_500 = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Label Studio &amp; co</title>
</head>
<body>
""" + "<p>line</p>\n" * 200 + "</body></html>"


def test_an_html_error_page_is_its_title_on_one_line() -> None:
    assert answer_summary(DJANGO_500) == "an HTML page (Label Studio & co)"
    assert answer_summary("<html><body>oops</body></html>") == "an HTML page of 30 characters"


def test_a_json_or_text_body_is_one_line_and_bounded() -> None:
    assert answer_summary('{"detail":\n  "Not found."}\n') == '{"detail": "Not found."}'
    long = answer_summary("x " * 400, limit=50)
    assert len(long) == 50 and long.endswith("...") and "\n" not in long
