"""Only ``posthoc/labelstudio`` knows Label Studio's JSON keys (README, architecture): checked on the source (ast).

A module outside ``plugin/posthoc/labelstudio/`` that reads a record's ``id``, a task's ``data`` /
``annotations`` / ``predictions`` / ``drafts``, an annotation's ``result`` / ``completed_by`` /
``was_cancelled``, a prediction's ``model_version`` or a result item's ``from_name`` / ``to_name`` / ``value``
/ ``meta`` goes through :mod:`posthoc.labelstudio.records` instead of indexing the JSON itself. The scan flags

- ``x.get(KEY, ...)`` / ``x.pop(KEY, ...)`` / ``x.setdefault(KEY, ...)`` with one of the keys, and
- subscripts ``x[KEY]`` of the keys that are never a tidy table's column name here (``completed_by`` and
  ``was_cancelled`` are also columns of the annotations and events tables, which pandas code rightly
  indexes by name; for those two only the ``.get`` / ``.pop`` / ``.setdefault`` reads are flagged).

Writing JSON (dict literals such as ``{"from_name": ...}``) is not reading it and is not flagged.
``export/synthetic.py`` writes Label Studio exports for tests and is allowed to know the shape. ``id``,
``data``, ``result``, ``value``, ``meta`` and ``model_version`` are generic words: a module where one of the
keys names something else than Label Studio JSON is exempt for that key only, with the reason
(:data:`NOT_LABEL_STUDIO`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABEL_STUDIO = ROOT / "plugin" / "posthoc" / "labelstudio"
ALLOWED = {ROOT / "plugin" / "posthoc" / "export" / "synthetic.py"}
#: the keys Label Studio's records share with other JSON and tables (flagged like the others, exempt per module)
GENERIC_KEYS = frozenset({"id", "data", "result", "value", "meta", "model_version"})
SUBSCRIPT_KEYS = frozenset({"annotations", "predictions", "drafts", "from_name", "to_name"}) | GENERIC_KEYS
GET_KEYS = SUBSCRIPT_KEYS | {"completed_by", "was_cancelled"}
DICT_READS = frozenset({"get", "pop", "setdefault"})
#: Keys that are, in one module, something else than Label Studio JSON: module -> {key: the reason}.
NOT_LABEL_STUDIO: dict[str, dict[str, str]] = {
    "plugin/posthoc/cli/plan.py": {"annotations": "the study plan summary's count of annotations to verify"},
    "plugin/posthoc/http.py": {"data": "httpx's data= keyword argument (a raw request body)"},
    "plugin/posthoc/sequence/study.py": {"value": "a column of the task outcomes' own frame"},
    "plugin/posthoc/validity/metrics.py": {"value": "the reliability table's value column"},
    "plugin/posthoc/study/planner/outcome_section.py": {"value": "the reliability table's value column"},
    "plugin/posthoc/readers/jsonl.py": {"id": "a document of a JSON-lines corpus"},
    "plugin/posthoc/predictors/run.py": {"id": "a line of the predictions file this command writes"},
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
    return sorted(p for folder in folders for p in folder.rglob("*.py")
                  if LABEL_STUDIO not in p.parents and p not in ALLOWED)


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
    )
    assert json_key_reads(sample) == [(1, "annotations"), (2, "completed_by"), (3, "from_name"),
                                      (3, "result"), (5, "predictions"), (7, "drafts"), (8, "data"), (9, "id"),
                                      (10, "result"), (10, "value"), (11, "model_version"), (12, "meta")]


def test_the_scan_covers_the_readers_of_exports() -> None:
    names = {str(p.relative_to(ROOT)) for p in _checked_sources()}
    assert {"plugin/posthoc/export/flatten.py", "plugin/posthoc/crowdtruth/io.py",
            "plugin/posthoc/study/live/events.py",
            "plugin/posthoc/eaglet/review.py"} <= names
    assert not any(n.startswith("plugin/posthoc/labelstudio/") for n in names)


@pytest.mark.parametrize("path", _checked_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_label_studio_json_is_read_only_through_posthoc_labelstudio(path: Path) -> None:
    other = NOT_LABEL_STUDIO.get(str(path.relative_to(ROOT)), {})
    found = [(line, key) for line, key in json_key_reads(path.read_text(encoding="utf-8"), str(path))
             if key not in other]
    assert not found, (f"{path.relative_to(ROOT)} reads Label Studio JSON keys itself {found}: use the accessors "
                       "of posthoc.labelstudio.records")


def test_every_exemption_names_a_read_that_is_there() -> None:
    """An exemption whose read has gone is removed too (the map stays the short list of real exceptions)."""
    stale = {(module, key) for module, keys in NOT_LABEL_STUDIO.items() for key in keys
             if key not in {k for _, k in json_key_reads((ROOT / module).read_text(encoding="utf-8"), module)}}
    assert not stale, f"exemptions without a read: {sorted(stale)}"
