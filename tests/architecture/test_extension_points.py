"""Every registered piece of the four extension points is in the docs' lists (issue 43).

A reader format (``readers.FORMATS``), a score table (``scores.TABLE_NAMES``) with its place in the report
(``report.study_report.STUDY_SECTIONS`` or ``FILE_ONLY_TABLES``), a predictor (``predictors.registry.PREDICTORS``)
and an Eaglet rule (``eaglet.rules.RULE_TYPES``: its name and its flags' names) each have one registration; this
test fails when one is missing from the page the README points to for it, and CONTRIBUTING.md's checklists name
the files a newcomer edits for each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.architecture.test_boundaries import ROOT

from posthoc.eaglet.rules import FLAG_RULES, RULE_TYPES
from posthoc.predictors.registry import PREDICTORS
from posthoc.readers import FORMATS
from posthoc.report.study_report import FILE_ONLY_TABLES, STUDY_SECTIONS
from posthoc.scores import TABLE_NAMES

CONTRIBUTING = ROOT / "CONTRIBUTING.md"


def _named(page: Path) -> set[str]:
    """The names a page gives in code spans (`name`, also inside `a` / `b` table cells)."""
    return set(re.findall(r"`([^`\s]+)`", page.read_text(encoding="utf-8")))


def _missing(names: Iterable[str], page: str) -> list[str]:
    named = _named(ROOT / page) | _named(CONTRIBUTING)
    return [name for name in names if name not in named]


@pytest.mark.parametrize(("kind", "names", "page"), [
    ("reader format", lambda: FORMATS, "docs/readers.md"),
    ("score table", lambda: TABLE_NAMES, "docs/metrics.md"),
    ("predictor", lambda: PREDICTORS, "docs/backend.md"),
    ("Eaglet rule", lambda: [rule.name for rule in RULE_TYPES], "docs/eaglet.md"),
    ("Eaglet flag", lambda: FLAG_RULES, "docs/eaglet.md"),
], ids=["readers", "score-tables", "predictors", "eaglet-rules", "eaglet-flags"])
def test_every_registered_piece_is_in_its_docs_list(kind: str, names: object, page: str) -> None:
    registered = list(names())  # type: ignore[operator]
    assert registered, f"no {kind} registered: the registry moved?"
    missing = _missing(registered, page)
    assert not missing, f"{kind}s registered but named in neither {page} nor CONTRIBUTING.md: {missing}"


def test_the_readme_points_at_each_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("docs/readers.md", "docs/metrics.md", "docs/backend.md", "docs/eaglet.md"):
        assert f"]({page}" in readme, page


def test_every_score_table_has_a_report_section_or_is_a_file_only() -> None:
    shown = [table for section in STUDY_SECTIONS for table in section.tables]
    assert len(shown) == len(set(shown)), shown
    assert sorted([*shown, *FILE_ONLY_TABLES]) == sorted(TABLE_NAMES)


def test_contributing_walks_each_extension_point_as_numbered_steps_naming_files() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    for heading in ("### A reader", "### A metric", "### A predictor", "### An Eaglet rule"):
        assert heading in text, heading
        section = text.split(heading, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        steps = re.findall(r"^\d+\. ", section, flags=re.M)
        assert len(steps) >= 3, (heading, steps)
        files = re.findall(r"`((?:plugin/|tests/|docs/|[a-z_]+/)[\w/.<>]*\.(?:py|md))", section)
        sources = [str(path.relative_to(ROOT)) for path in ROOT.glob("plugin/**/*.py")]
        for name in (n for n in files if "<" not in n):  # `<format>.py`: the file the newcomer writes
            assert (ROOT / name).exists() or any(source.endswith(f"/{name}") for source in sources), (heading, name)
        assert files, heading
