"""The shell every report shares: escaped text, tables and embedded figures in one HTML file.

Every area renders :class:`Section` objects with these helpers; nothing else builds HTML by hand.
All text is escaped; only ``http``/``https`` links are ever made clickable (:func:`safe_link`).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1f2328;line-height:1.45}
h1{border-bottom:2px solid #d0d7de;padding-bottom:.3em}h2{margin-top:2em;border-bottom:1px solid #d0d7de}
.table{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:1em 0;font-size:.9em;max-width:100%}
th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:right;overflow-wrap:break-word;max-width:28em}
td.w{overflow-wrap:anywhere}
caption{text-align:left;font-weight:600;padding:.2em 0}details{margin:.5em 0}summary{cursor:pointer;color:#0969da}
th{background:#f6f8fa}td.l,th.l{text-align:left}figure{margin:1em 0}figcaption{color:#57606a;font-size:.9em}
figure img{max-width:100%;height:auto}
td a.x{color:inherit;text-decoration:none}td a.x:hover{text-decoration:underline;color:#0969da}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:.5em 1em;border-radius:4px}
"""


@dataclass(frozen=True)
class Section:
    """A titled part of a report. ``body_html`` must already be safe (built with this module's helpers)."""

    title: str
    body_html: str
    anchor: str = ""


def esc(value: object) -> str:
    """HTML-escape any value's ``str``."""
    return html.escape("" if value is None else str(value), quote=True)


def paragraph(text: str, *, css_class: str = "") -> str:
    """An escaped paragraph."""
    cls = f' class="{esc(css_class)}"' if css_class else ""
    return f"<p{cls}>{esc(text)}</p>"


def web_link(url: str | None) -> str | None:
    """``url`` (surrounding whitespace removed) if it is an absolute http(s) URL with a host, else None.

    Strict on purpose, so the ``href`` a browser follows is exactly the one checked here: no control
    character or whitespace inside (browsers drop tabs and newlines and strip leading control
    characters, so ``"ht\ttp:"`` or ``"\x00http:"`` would otherwise be judged by another string than the
    one written), the scheme at the very start (``JaVaScRiPt:``, ``data:``, ``//host`` and ``http:host``
    are refused) and written in lower case.
    """
    if not isinstance(url, str):
        return None
    candidate = url.strip()
    if not candidate or any(ch.isspace() or ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in candidate):
        return None
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or not candidate.lower().startswith(scheme + "://"):
        return None
    return scheme + candidate[len(scheme):]


def safe_link(url: str | None, text: str | None = None) -> str:
    """A clickable link only for http(s) URLs (:func:`web_link`); anything else (``javascript:``, ``data:``)
    is escaped plain text."""
    label = esc(text if text is not None else url)
    href = web_link(url)
    if href is not None:
        return f'<a href="{esc(href)}" rel="noopener noreferrer nofollow">{label}</a>'
    return label


#: tables longer than this are shown collapsed (``<details>``): the page stays readable
COLLAPSE_AFTER = 25
#: a text cell with a word longer than this (a link, a hash) may break anywhere; other words stay whole
LONG_WORD = 24


def with_intervals(frame: pd.DataFrame, intervals: Sequence[tuple[str, str, str]], *,
                   float_format: str = "{:.3f}") -> pd.DataFrame:
    """``frame`` for a report table with each ``(value, low, high)`` triple as one text column ``value``,
    ``0.500 [0.400, 0.600]`` (its bounds' columns dropped): a table of many intervals fits the page; the files keep
    the three columns. A missing value shows as empty, missing bounds as the value alone.

    Examples:
        >>> import pandas as pd
        >>> with_intervals(pd.DataFrame({"share": [0.5, None], "low": [0.4, None], "high": [0.6, None]}),
        ...                [("share", "low", "high")])["share"].tolist()
        ['0.500 [0.400, 0.600]', '']
    """

    def text(value: object, low: object, high: object) -> str:
        if pd.isna(value):  # type: ignore[call-overload]
            return ""
        shown = float_format.format(value)
        if pd.isna(low) or pd.isna(high):  # type: ignore[call-overload]
            return shown
        return f"{shown} [{float_format.format(low)}, {float_format.format(high)}]"

    out = frame.copy()
    for value, low, high in intervals:
        out[value] = [text(v, lo, hi) for v, lo, hi in zip(frame[value], frame[low], frame[high], strict=True)]
        out = out.drop(columns=[low, high])
    return out


def table_html(frame: pd.DataFrame, *, float_format: str = "{:.3f}", max_rows: int = 500,
               caption: str = "", collapse_after: int | None = COLLAPSE_AFTER,
               row_links: Sequence[str | None] | None = None) -> str:
    """An escaped HTML table of ``frame`` (index dropped); text columns left-aligned.

    Cells wrap at spaces, and a cell holding a word longer than :data:`LONG_WORD` characters (a link,
    a hash) may break inside it, so no table is wider than the page. A table of more than
    ``collapse_after`` rows is folded into ``<details>`` whose summary says how many rows it holds
    (``None``: never folded); at most ``max_rows`` rows are written, the rest are in the table files.
    ``row_links``: one link a row of ``frame`` (None: none), made of every cell of the row (the study explorer's
    cell behind the row); only relative links and http(s) are written, anything else stays plain text.
    """
    shown = frame.head(max_rows)
    head = "".join(
        f'<th class="{"l" if not pd.api.types.is_numeric_dtype(shown[c]) else ""}">{esc(c)}</th>'
        for c in shown.columns
    )
    rows = []
    for number, record in enumerate(shown.itertuples(index=False, name=None)):
        link = _row_link(row_links[number]) if row_links is not None else None
        cells = []
        for value in record:
            if isinstance(value, float):
                shown_value = "" if pd.isna(value) else (f"{value:.3g}" if abs(value) >= 1e6 else
                                                         float_format.format(value))  # 2.68e+16, not 17 digits
                cells.append(f"<td>{esc(shown_value)}</td>")
            elif isinstance(value, (int,)) and not isinstance(value, bool):
                cells.append(f"<td>{value}</td>")
            else:
                text = "" if value is None or value is pd.NA else str(value)
                wrap = " w" if any(len(word) > LONG_WORD for word in text.split()) else ""
                cells.append(f'<td class="l{wrap}">{esc(text)}</td>')
        if link is not None:
            cells = [_linked(cell, link) for cell in cells]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = ""
    if len(frame) > max_rows:
        more = paragraph(f"{len(frame) - max_rows} more rows are in the table files beside this report.")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    table = f'<div class="table"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    if collapse_after is not None and len(frame) > collapse_after:
        label = f"{caption}: all {len(frame)} rows" if caption else f"All {len(frame)} rows"
        return f"<details><summary>{esc(label)} (click to show)</summary>{table}{more}</details>"
    return table + more


def _row_link(url: str | None) -> str | None:
    """``url`` when it is a relative link to a page beside the report (``explorer.html#cell=...``: no scheme, no
    host, no ``..``) or an http(s) one (:func:`web_link`), else None."""
    if not url:
        return None
    if web_link(url) is not None:
        return web_link(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    plain = not parts.scheme and not parts.netloc and ".." not in parts.path and not url.startswith(("/", "\\"))
    return url if plain and not any(ch.isspace() or ord(ch) < 32 for ch in url) else None


def _linked(cell: str, href: str) -> str:
    """The cell ``<td ...>value</td>`` with its value a link to ``href``."""
    opening = cell.index(">") + 1
    return f'{cell[:opening]}<a class="x" href="{esc(href)}">{cell[opening:-len("</td>")]}</a></td>'


def figure_html(figure: Figure, *, caption: str = "", alt: str = "") -> str:
    """Embed a matplotlib figure as a PNG data URI (deterministic: no timestamps in the PNG). Figures are
    made after :func:`posthoc.report.fonts.use_figure_fonts` (CJK and emoji glyphs when such fonts exist)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{esc(alt or caption)}" src="data:image/png;base64,{data}"/>{cap}</figure>'


def page(title: str, sections: Iterable[Section], *, intro: str = "", lead: int = 0) -> str:
    """A complete, self-contained HTML document (no external resources).

    The first ``lead`` sections stand before the table of contents, on the first screen (the study report's
    findings); the contents still list them."""
    parts = []
    toc = []
    for number, section in enumerate(sections, start=1):
        anchor = section.anchor or f"s{number}"
        toc.append(f'<li><a href="#{esc(anchor)}">{esc(section.title)}</a></li>')
        parts.append(f'<section id="{esc(anchor)}"><h2>{esc(section.title)}</h2>{section.body_html}</section>')
    intro_html = paragraph(intro) if intro else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{esc(title)}</h1>{intro_html}{''.join(parts[:lead])}<nav><ul>{''.join(toc)}</ul></nav>"
        f"{''.join(parts[lead:])}</body></html>\n"
    )
