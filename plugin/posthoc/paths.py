"""Where the project's own files are: the label configs and the bundled sample corpus."""

from __future__ import annotations

import sys
from pathlib import Path

from posthoc.errors import PosthocInputError

_REPO_ROOT = Path(__file__).resolve().parents[2]


def label_configs_dir() -> Path:
    """The ``label_configs/`` folder: the repository's in a checkout, else the installed copy."""
    for candidate in (_REPO_ROOT / "label_configs", Path(sys.prefix) / "share" / "posthoc" / "label_configs"):
        if candidate.is_dir():
            return candidate
    raise PosthocInputError("label_configs/ not found: reinstall posthoc-review (pip install -e .)")


def label_config(name: str) -> str:
    """The XML text of ``label_configs/<name>.xml``."""
    path = label_configs_dir() / f"{name}.xml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in label_configs_dir().glob("*.xml")))
        raise PosthocInputError(f"no label config named {name!r}; known: {known}")
    return path.read_text(encoding="utf-8")
