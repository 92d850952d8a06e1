"""Only ``posthoc/labelstudio/records.py`` knows Label Studio's JSON keys (README, architecture): checked on the source
(ast).

Every module of ``plugin/posthoc`` and ``ml_backend`` but records.py (the other modules of ``labelstudio/``
included) that reads a record's ``id``, a task's ``data`` / ``annotations`` / ``predictions`` / ``drafts``, an
annotation's ``result`` / ``completed_by`` / ``was_cancelled``, a prediction's ``model_version`` / ``score``, a
result item's ``from_name`` / ``to_name`` / ``value`` / ``meta`` / ``score``, a value's ``start`` / ``end`` /
``text`` / ``labels`` / ``choices``, a project's ``title`` or a webhook's ``action`` goes through the accessors
of :mod:`posthoc.labelstudio.records` (or the parsed :class:`~posthoc.labelstudio.regions.Region`) instead of
indexing the JSON itself. The scan flags

- ``x.get(KEY, ...)`` / ``x.pop(KEY, ...)`` / ``x.setdefault(KEY, ...)`` with one of the keys, and
- subscripts ``x[KEY]`` of the keys that are never a tidy table's column name here (:data:`COLUMN_KEYS`:
  ``completed_by``, ``was_cancelled``, ``start``, ``end``, ``text``, ``title``, ``score`` and ``action`` are
  also columns of the judgements, mentions, annotations and events tables, which pandas code rightly indexes by
  name; for those only the ``.get`` / ``.pop`` / ``.setdefault`` reads are flagged).

Writing JSON (dict literals such as ``{"from_name": ...}``) is not reading it and is not flagged.
``export/synthetic.py`` writes Label Studio exports for tests and is allowed to know the shape. Most keys are
generic words: a module where one of them names something else than Label Studio JSON (another service's JSON,
a file this project writes) is exempt for that key only, with the reason (:data:`NOT_LABEL_STUDIO`); an
exemption whose read has gone fails the test too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "plugin" / "posthoc" / "labelstudio" / "records.py"
ALLOWED = {RECORDS, ROOT / "plugin" / "posthoc" / "export" / "synthetic.py"}
#: keys that are also tidy tables' column names: only their .get / .pop / .setdefault reads are flagged
COLUMN_KEYS = frozenset({"completed_by", "was_cancelled", "start", "end", "text", "title", "score", "action"})
SUBSCRIPT_KEYS = frozenset({"id", "data", "annotations", "predictions", "drafts", "result", "model_version",
                            "from_name", "to_name", "value", "meta", "labels", "choices"})
GET_KEYS = SUBSCRIPT_KEYS | COLUMN_KEYS
DICT_READS = frozenset({"get", "pop", "setdefault"})
_FILE_LINE = "a line of the predictions file this command writes"
_CORPUS_LINE = "a document of a JSON-lines corpus"
#: Keys that are, in one module, something else than Label Studio JSON: module -> {key: the reason}.
NOT_LABEL_STUDIO: dict[str, dict[str, str]] = {
    "plugin/posthoc/cli/plan.py": {"annotations": "the study plan summary's count of annotations to verify"},
    "plugin/posthoc/http.py": {"data": "httpx's data= keyword argument (a raw request body)"},
    "plugin/posthoc/links.py": {"title": "the title= parameter of a Wikipedia URL's query string"},
    "plugin/posthoc/eaglet/kb.py": {"title": "a page of a MediaWiki API answer"},
    "plugin/posthoc/sequence/study.py": {"value": "a column of the task outcomes' own frame"},
    "plugin/posthoc/validity/metrics.py": {"value": "the reliability table's value column"},
    "plugin/posthoc/report/findings.py": {"value": "the rates' and the findings' value column"},
    "plugin/posthoc/study/planner/outcome_section.py": {"value": "the reliability table's value column"},
    "plugin/posthoc/readers/jsonl.py": {"id": _CORPUS_LINE, "text": _CORPUS_LINE},
    "plugin/posthoc/readers/rel.py": {"start": "a REL prediction record", "end": "a REL prediction record"},
    "plugin/posthoc/predictors/run.py": {"id": _FILE_LINE, "text": _FILE_LINE},
    "plugin/posthoc/sample/build_sample.py": {"id": "a document of the sample corpus"},
    "plugin/posthoc/study/live/progress.py": {"id": "a region of the regions column (events.regions_of's dicts)"},
    "plugin/posthoc/jobs/setup_record.py": {"model_version": "an entry of the setup record file it writes"},
}


def json_key_reads(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """``(line, key)`` of every read of a Label Studio JSON key in ``source`` (see the module docstring)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DICT_READS:
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value in GET_KEYS:
                found.append((node.lineno, str(first.value)))
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in SUBSCRIPT_KEYS:
                found.append((node.lineno, str(key.value)))
    return sorted(found)


def _checked_sources() -> list[Path]:
    folders = (ROOT / "plugin" / "posthoc", ROOT / "ml_backend")
    return sorted(p for folder in folders for p in folder.rglob("*.py") if p not in ALLOWED)


def test_the_scan_sees_reads_and_ignores_writes_and_columns() -> None:
    sample = (
        "for a in task.get('annotations') or []:\n"          # 1: flagged
        "    who = a.get('completed_by')\n"                  # 2: flagged
        "    names = [r['from_name'] for r in a['result']]\n"  # 3: flagged twice (from_name, result)
        "frame = frame[~frame['was_cancelled']]\n"           # 4: a table column: not flagged
        "task['predictions'] = []\n"                         # 5: flagged (a subscript, even as a target)
        "out = {'from_name': 'label', 'to_name': 'text'}\n"  # 6: a dict literal (writing): not flagged
        "d.pop('drafts', None)\n"                            # 7: flagged
        "key = task['data']['task_key']\n"                   # 8: flagged (data), task_key is not a key here
        "first = int(task.get('id'))\n"                       # 9: flagged
        "kept = [i.get('value') for i in p['result']]\n"     # 10: flagged twice (value, result)
        "version = p.get('model_version', '')\n"             # 11: flagged
        "meta = item.setdefault('meta', {})\n"               # 12: flagged
        "row = {'id': 1, 'data': {}, 'result': []}\n"       # 13: a dict literal (writing): not flagged
        "span = (v.get('start'), v.get('end'), v.get('text'))\n"  # 14: flagged three times
        "spans = frame[['start', 'end']], frame['text']\n"  # 15: table columns: not flagged
        "chosen = v['labels'] + v.get('choices', [])\n"     # 16: flagged twice (labels, choices)
        "hint = item.get('score', p.get('score'))\n"        # 17: flagged twice (score)
        "name, kind = project.get('title'), payload.get('action')\n"  # 18: flagged twice (title, action)
        "deleted = events[events['action'] == 'X']['title']\n"  # 19: table columns: not flagged
    )
    assert json_key_reads(sample) == [
        (1, "annotations"), (2, "completed_by"), (3, "from_name"), (3, "result"), (5, "predictions"),
        (7, "drafts"), (8, "data"), (9, "id"), (10, "result"), (10, "value"), (11, "model_version"), (12, "meta"),
        (14, "end"), (14, "start"), (14, "text"), (16, "choices"), (16, "labels"), (17, "score"), (17, "score"),
        (18, "action"), (18, "title")]


def test_the_scan_covers_the_readers_of_exports_and_labelstudio_but_records() -> None:
    names = {str(p.relative_to(ROOT)) for p in _checked_sources()}
    assert {"plugin/posthoc/export/flatten.py", "plugin/posthoc/crowdtruth/io.py",
            "plugin/posthoc/study/live/events.py", "plugin/posthoc/eaglet/review.py",
            "ml_backend/posthoc_backend/live.py"} <= names
    inside = {p.name for p in (ROOT / "plugin" / "posthoc" / "labelstudio").glob("*.py")}
    assert {"regions.py", "calls.py", "backend.py", "views.py"} <= inside
    assert {f"plugin/posthoc/labelstudio/{name}" for name in inside - {"records.py"}} <= names
    assert "plugin/posthoc/labelstudio/records.py" not in names


@pytest.mark.parametrize("path", _checked_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_label_studio_json_is_read_only_through_posthoc_labelstudio(path: Path) -> None:
    other = NOT_LABEL_STUDIO.get(str(path.relative_to(ROOT)), {})
    found = [(line, key) for line, key in json_key_reads(path.read_text(encoding="utf-8"), str(path))
             if key not in other]
    assert not found, (f"{path.relative_to(ROOT)} reads Label Studio JSON keys itself {found}: use the accessors "
                       "of posthoc.labelstudio.records")


def test_every_exemption_names_a_read_that_is_there() -> None:
    """An exemption whose read has gone is removed too (the map stays the short list of real exceptions); an
    exemption names a checked module and a key the scan looks for."""
    checked = {str(p.relative_to(ROOT)) for p in _checked_sources()}
    assert set(NOT_LABEL_STUDIO) <= checked, sorted(set(NOT_LABEL_STUDIO) - checked)
    assert all(set(keys) <= GET_KEYS for keys in NOT_LABEL_STUDIO.values())
    stale = {(module, key) for module, keys in NOT_LABEL_STUDIO.items() for key in keys
             if key not in {k for _, k in json_key_reads((ROOT / module).read_text(encoding="utf-8"), module)}}
    assert not stale, f"exemptions without a read: {sorted(stale)}"
