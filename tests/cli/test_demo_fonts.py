"""Whatever the demo needs from Debian, it installs: the fonts that draw the sample's emoji and CJK text are
installed with apt-get when missing and this runs as root, else one line names them and the command
(:mod:`posthoc.debian`; the installer and the package check are stand-ins here, nothing is installed)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from posthoc.debian import DEMO_FONTS, ensure_packages, is_installed
from posthoc.sample import sample_paths


def _run(*, root: bool, missing: set[str], works: bool = True) -> tuple[list[str], list[list[str]], list[str]]:
    said: list[str] = []
    asked: list[list[str]] = []

    def install(packages: Sequence[str]) -> bool:
        asked.append(list(packages))
        return works

    done = ensure_packages(DEMO_FONTS, purpose="fonts for the sample", echo=said.append, root=root,
                           installed=lambda name: name not in missing, install=install)
    return said, asked, done


def test_as_root_the_missing_fonts_are_installed() -> None:
    said, asked, done = _run(root=True, missing={"fonts-noto-color-emoji"})
    assert asked == [["fonts-noto-color-emoji"]] and done == ["fonts-noto-color-emoji"]
    assert len(said) == 1 and "fonts-noto-color-emoji" in said[0]


def test_not_root_one_line_names_what_to_install_and_how() -> None:
    said, asked, done = _run(root=False, missing={"fonts-noto-color-emoji", "fonts-symbola"})
    assert asked == [] and done == []
    assert len(said) == 1
    assert "sudo apt-get install fonts-noto-color-emoji fonts-symbola" in said[0] and "empty boxes" in said[0]


def test_a_failed_install_is_one_warning_line_and_the_demo_goes_on() -> None:
    said, asked, done = _run(root=True, missing={"fonts-noto-cjk"}, works=False)
    assert asked == [["fonts-noto-cjk"]] and done == []
    assert said[-1].startswith("posthoc: warning: `apt-get install fonts-noto-cjk` failed")


def test_nothing_is_said_or_run_when_everything_is_there() -> None:
    assert _run(root=True, missing=set()) == ([], [], [])


def test_the_fonts_are_the_ones_the_test_script_installs_and_the_sample_needs_them() -> None:
    from pathlib import Path

    script = (Path(__file__).resolve().parents[2] / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert all(name in script for name in DEMO_FONTS)
    texts = [json.loads(line)["text"] for line in sample_paths()["GT"].read_text(encoding="utf-8").splitlines()]
    assert any(ord(c) >= 0x1F300 for text in texts for c in text)  # emoji: what fonts-noto-color-emoji draws
    assert any("\u4e00" <= c <= "\u9fff" for text in texts for c in text)  # CJK: fonts-noto-cjk


def test_the_package_check_reads_dpkg() -> None:
    found = is_installed("dpkg")
    if found is None:
        pytest.skip("not Debian: no dpkg-query")
    assert found is True and is_installed("no-such-package-posthoc") is False
