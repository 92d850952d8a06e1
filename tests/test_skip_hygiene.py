"""Skips say the project's reason, and only for optional resources (issue 10, item 6; the developers' guide)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lsfixtures

TESTS = Path(__file__).resolve().parent
PYPROJECT = TESTS.parent / "pyproject.toml"


def test_parameters_from_an_absent_shared_folder_skip_with_the_projects_reason(tmp_path: Path) -> None:
    module = tmp_path / "test_absent.py"
    module.write_text(
        "import pytest\n"
        "from sharedparams import shared_params\n"
        "@pytest.mark.parametrize('name', shared_params([], what='nif/*.ttl files'))\n"
        "def test_each(name):\n"
        "    assert name\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", str(module)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "../shared/data is absent" in done.stdout and "no nif/*.ttl files" in done.stdout
    assert "got empty parameter set" not in done.stdout


def test_an_empty_parameter_list_fails_collection_instead_of_skipping_without_a_reason(tmp_path: Path) -> None:
    """The project's pytest settings turn pytest's generic "got empty parameter set" skip into an error: a list
    built from an absent folder must say why it is empty (:func:`sharedparams.shared_params`)."""
    module = tmp_path / "test_empty.py"
    module.write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('name', sorted(p.name for p in []))\n"
        "def test_each(name):\n"
        "    assert name\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(PYPROJECT), "--rootdir", str(tmp_path), "-rs",
                           "-p", "no:cacheprovider", str(module)],
                          capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Empty parameter set in 'test_each'" in done.stdout
    assert "got empty parameter set" not in done.stdout and "skipped" not in done.stdout


def test_shared_params_pass_present_values_through() -> None:
    from sharedparams import shared_params

    assert shared_params(["a.ttl", "b.ttl"], what="files") == ["a.ttl", "b.ttl"]


def test_a_missing_label_studio_fails_instead_of_skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "label_studio" else real(name))
    with pytest.raises(pytest.fail.Exception, match="label-studio is not installed, but the tests need it"):
        lsfixtures._require_label_studio()
    monkeypatch.undo()
    lsfixtures._require_label_studio()  # installed here: nothing happens
