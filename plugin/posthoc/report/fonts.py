"""Fonts for report figures: CJK and emoji text drawn as glyphs, not empty boxes, when such fonts exist.

Surface forms, dataset and worker names may hold CJK or emoji. matplotlib's default DejaVu Sans has
neither, and matplotlib only knows the fonts its cache saw when it was built. :func:`figure_fonts`
registers the installed fallback fonts it finds (Noto Sans CJK, Symbola or Noto Emoji; Debian's
``fonts-noto-cjk`` and ``fonts-symbola``) and returns the family list to draw with: DejaVu Sans first
(so Latin text looks as before), then each fallback (matplotlib >= 3.6 falls back glyph by glyph
through a list of concrete families; a generic ``sans-serif`` does not), and :func:`use_figure_fonts`
makes it the default.
Colour-bitmap fonts (Noto Color Emoji) cannot be scaled by matplotlib and are skipped; browsers use
them for the labeling pages. Nothing is downloaded; with no fallback installed the list is just
DejaVu Sans.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache
from pathlib import Path

#: file names of fallback fonts, in the order they are tried
FALLBACK_FILES = ("NotoSansCJK-Regular.ttc", "NotoSansCJKjp-Regular.otf", "Symbola.ttf", "Symbola_hint.ttf",
                  "NotoEmoji-Regular.ttf")
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")


@lru_cache(maxsize=1)
def figure_fonts() -> tuple[str, ...]:
    """The font families figures draw with (see the module docstring); found once per process."""
    from matplotlib import font_manager

    families = ["DejaVu Sans"]
    for name in FALLBACK_FILES:
        for folder in FONT_DIRS:
            root = Path(folder).expanduser()
            if not root.is_dir():
                continue
            found = sorted(root.rglob(name))[:1]
            for path in found:
                with contextlib.suppress(Exception):  # an unreadable or non-scalable font is skipped
                    font_manager.fontManager.addfont(str(path))
                    family = font_manager.FontProperties(fname=str(path)).get_name()
                    if family not in families:
                        families.append(family)
            if found:
                break
    return tuple(families)


def use_figure_fonts() -> tuple[str, ...]:
    """Make :func:`figure_fonts` matplotlib's ``font.family`` (a text keeps the family list it was made
    with, so this runs before any figure is drawn: on import of the report figure modules)."""
    import matplotlib

    families = figure_fonts()
    matplotlib.rcParams["font.family"] = list(families)
    return families
