"""The lean install (issue 44): ``posthoc score`` on label-studio-sdk alone, without the ``server`` extra.

Nothing is installed: the commands run in a subprocess whose ``sitecustomize`` (a temp folder first on
``PYTHONPATH``) makes the ``label_studio`` module unimportable and hides the ``label-studio`` distribution's
metadata, as on a machine where ``pip install posthoc-review`` left it out. Against the suite's Label Studio, that
score's judgements equal those of a normal run; a command that needs the server package exits 2 with one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ls_tiny_study import TinyStudy

ROOT = Path(__file__).resolve().parents[2]

#: What the lean install lacks: ``import label_studio`` fails and ``importlib.metadata`` does not find the
#: ``label-studio`` distribution (``label_studio_sdk`` is another module and stays).
BLOCKER = '''
import importlib.abc
import importlib.metadata
import sys


class _NoServerPackage(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "label_studio" or name.startswith("label_studio."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoServerPackage())
_discover = importlib.metadata.Distribution.discover.__func__


def _discover_but_the_server(cls, **kwargs):
    return (found for found in _discover(cls, **kwargs)
            if (found.metadata["Name"] or "").lower().replace("_", "-") != "label-studio")


importlib.metadata.Distribution.discover = classmethod(_discover_but_the_server)
'''


def environment(tmp_path: Path, *, lean: bool, token: str = "") -> dict[str, str]:
    """This run's environment for a ``posthoc`` subprocess, with the blocker first on ``PYTHONPATH`` if ``lean``."""
    paths = [str(ROOT / "plugin"), str(ROOT / "ml_backend")]
    if lean:
        blocker = tmp_path / "lean-site"
        blocker.mkdir(exist_ok=True)
        (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
        paths.insert(0, str(blocker))
    env = {key: value for key, value in os.environ.items()
           if key not in {"POSTHOC_LS_URL", "POSTHOC_LS_TOKEN", "LABEL_STUDIO_TOKEN", "PYTHONPATH"}}
    env.update(PYTHONPATH=os.pathsep.join(paths), LABEL_STUDIO_TOKEN=token)
    return env


def posthoc(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


def test_the_blocker_hides_the_server_package_and_keeps_the_sdk(tmp_path: Path) -> None:
    probe = ("import importlib.metadata as m, importlib.util as u\n"
             "try:\n    m.version('label-studio'); print('dist found')\n"
             "except m.PackageNotFoundError:\n    print('dist hidden')\n"
             "try:\n    import label_studio; print('module found')\n"
             "except ImportError:\n    print('module hidden')\n"
             "import label_studio_sdk; print('sdk', m.version('label-studio-sdk'))\n")
    lean = subprocess.run([sys.executable, "-c", probe], env=environment(tmp_path, lean=True), capture_output=True,
                          text=True, timeout=120, check=True).stdout.split("\n")
    full = subprocess.run([sys.executable, "-c", probe], env=environment(tmp_path, lean=False), capture_output=True,
                          text=True, timeout=120, check=True).stdout.split("\n")
    assert lean[:2] == ["dist hidden", "module hidden"] and lean[2].startswith("sdk ")
    assert full[:2] == ["dist found", "module found"]  # the blocker, not this machine, hides them


@pytest.mark.parametrize("command", [["ls", "start", "--data-dir", "lsdata"],
                                     ["demo", "--no-serve", "--out", "lsdata"]])
def test_a_command_that_needs_the_server_says_how_to_get_it(command: list[str], tmp_path: Path) -> None:
    done = posthoc(command, environment(tmp_path, lean=True), tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"posthoc: error: posthoc {command[0]}")
    assert "pip install 'posthoc-review[server]'" in lines[0]
    assert not (tmp_path / "lsdata").exists()  # said before anything was made


@pytest.mark.labelstudio
def test_score_from_the_lean_install_judges_as_the_full_one(tiny_study: TinyStudy, tmp_path: Path) -> None:
    runs = {}
    for lean in (True, False):
        out = tmp_path / ("lean" if lean else "full")
        done = posthoc(["score", "--manifest", str(tiny_study.manifest_path), "--url", tiny_study.url, "--out",
                        str(out), "--resamples", "20", "--quiet"],
                       environment(tmp_path, lean=lean, token=tiny_study.token), tmp_path)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr  # the suite's server is inside the supported range
        runs[lean] = (out / "judgements.csv").read_bytes()
    assert runs[True] == runs[False]
    assert runs[True].count(b"\n") > 1  # a header and judgements, not two empty files
