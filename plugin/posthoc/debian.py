"""Debian packages a command needs from the system: installed when missing (as root, with apt-get, as
``scripts/test.sh`` installs the tests' ones), else one line saying what to install.

The rule: whatever the demo needs from Debian, it installs. :data:`DEMO_FONTS` are the fonts that draw the sample
study's text (emoji, a ZWJ sequence, flags, CJK and Hangul) as glyphs instead of empty boxes: on the labeling pages
(Noto Color Emoji, Noto CJK) and in the report's figures (Symbola: matplotlib draws no colour-bitmap font,
:mod:`posthoc.report.fonts`). Off Debian (no ``dpkg-query``) nothing is checked or said.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence

#: package -> what it is for, as the one line names it
DEMO_FONTS: dict[str, str] = {
    "fonts-noto-color-emoji": "emoji on the labeling pages",
    "fonts-noto-cjk": "CJK and Hangul text",
    "fonts-symbola": "emoji in the report's figures",
}
APT_TIMEOUT = 900.0


def is_installed(package: str) -> bool | None:
    """Whether Debian's ``package`` is installed; ``None`` off Debian (no ``dpkg-query``)."""
    query = shutil.which("dpkg-query")
    if query is None:
        return None
    done = subprocess.run([query, "-W", "-f=${Status}", package], capture_output=True, text=True, check=False)
    return done.returncode == 0 and "install ok installed" in done.stdout


def apt_install(packages: Sequence[str]) -> bool:
    """``apt-get update`` then ``apt-get install -y`` of ``packages`` (quiet, non-interactive); whether both worked."""
    apt = shutil.which("apt-get")
    if apt is None:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", *packages]):
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=APT_TIMEOUT,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        if done.returncode != 0:
            return False
    return True


def ensure_packages(packages: Mapping[str, str], *, purpose: str, echo: Callable[[str], None],
                    root: bool | None = None,
                    installed: Callable[[str], bool | None] = is_installed,
                    install: Callable[[Sequence[str]], bool] = apt_install) -> list[str]:
    """Install the missing ones of ``packages`` (package -> what it is for; ``purpose``: what they are together)
    when this runs as root (``root``: default, the effective user id is 0), else ``echo`` one line naming them and
    the command that installs them.
    Returns the packages installed now (none when all were there, off Debian, or not root)."""
    missing = [name for name in packages if installed(name) is False]
    if not missing:
        return []
    needs = "; ".join(f"{name} ({packages[name]})" for name in missing)
    command = f"apt-get install {' '.join(missing)}"
    if root if root is not None else os.geteuid() == 0:
        echo(f"Installing Debian's {', '.join(missing)} ({purpose}) ...")
        if install(missing):
            return missing
        echo(f"posthoc: warning: `{command}` failed; without {needs} it shows as empty boxes")
        return []
    echo(f"posthoc: note: not installed: {needs}; it shows as empty boxes until `sudo {command}`")
    return []
