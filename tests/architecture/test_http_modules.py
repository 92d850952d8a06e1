"""Two modules speak HTTP (issue 25): ``posthoc/labelstudio/client.py`` to Label Studio (with the SDK) and
``posthoc/http.py`` for the rest (the retrying transport, a MediaWiki API, REL, a NIF annotator). Checked on the
source (ast, imports inside functions included): no other module of ``plugin/`` or ``ml_backend/`` imports an
HTTP library or the Label Studio SDK, and the SDK only in the client.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.architecture.test_boundaries import ROOT, imported_modules

CLIENT = ROOT / "plugin" / "posthoc" / "labelstudio" / "client.py"
GENERIC = ROOT / "plugin" / "posthoc" / "http.py"
HTTP = {"requests", "httpx", "httpcore", "urllib3", "label_studio_sdk", "aiohttp"}


def _sources() -> list[Path]:
    return sorted(p for folder in ("plugin", "ml_backend") for p in (ROOT / folder).rglob("*.py"))


def http_imports(path: Path) -> set[str]:
    """The HTTP libraries (and the SDK) ``path`` imports anywhere."""
    return {module for _, module in imported_modules(path) if module in HTTP}


def test_exactly_the_two_http_modules_import_http_libraries_or_the_sdk() -> None:
    importing = {str(p.relative_to(ROOT)) for p in _sources() if http_imports(p)}
    assert importing == {"plugin/posthoc/labelstudio/client.py", "plugin/posthoc/http.py"}


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_other_module_imports_http_libraries_or_the_sdk(path: Path) -> None:
    if path in (CLIENT, GENERIC):
        return
    found = [(line, module) for line, module in imported_modules(path) if module in HTTP]
    assert not found, (f"{path.relative_to(ROOT)} imports {found}: go through posthoc.labelstudio.client "
                       "(Label Studio) or posthoc.http (other services)")


def test_the_client_uses_the_sdk_and_httpx_and_the_generic_module_httpx_only() -> None:
    assert {"httpx", "label_studio_sdk"} <= http_imports(CLIENT)
    assert http_imports(GENERIC) == {"httpx"}
