"""The package boundaries the README's architecture section states, checked on the source (ast, no import).

- only ``posthoc/labelstudio/client.py`` and ``posthoc/http.py`` import an HTTP library or the Label Studio SDK
  (``test_http_modules.py``, which uses :func:`imported_modules` from here);
- ``plugin/posthoc`` never imports ``posthoc_backend`` (the backend builds on posthoc, not the reverse).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, top-level module)`` of every import in ``path``, wherever it stands (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module.split(".")[0]


def test_the_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os\ndef f():\n    from requests import get\n    import httpx.auth\n", encoding="utf-8")
    assert [m for _, m in imported_modules(sample)] == ["os", "requests", "httpx"]


@pytest.mark.parametrize("path", _sources("plugin/posthoc"), ids=lambda p: str(p.relative_to(ROOT)))
def test_posthoc_never_imports_the_backend(path: Path) -> None:
    found = [line for line, module in imported_modules(path) if module == "posthoc_backend"]
    assert not found, f"{path.relative_to(ROOT)} imports posthoc_backend (lines {found}); move the code into posthoc"
