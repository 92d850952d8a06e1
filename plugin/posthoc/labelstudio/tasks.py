"""Label Studio task data for a study task: the chunk text, the opaque key, and the safe KB-page list.

Task data is shown to annotators (as Data Manager columns too), so it holds only what the
annotator must see and nothing that names a system or a dataset (paper 000's blind verification):

``text``
    the chunk text, exactly the string the pre-filled offsets index (code points, no normalisation).
``task_key``
    the opaque key the ML backend looks the task up by.
``batch_position``
    ``Task N of M in your batch``: where the task sits in its worker's batch (the project's tasks in
    the planned order), shown by a ``<Header value="$batch_position">``: Label Studio's own counter
    only counts the tasks seen so far ("2 of 2").
``kb_pages``
    HTML for ``<HyperText name="kb_pages">``: one numbered line a pre-filled mention, in text order,
    with its surface and its knowledge-base page. Built here, never from user HTML: every value is
    escaped, only ``http``/``https`` links become clickable (``javascript:``, ``data:`` and other
    URIs are shown as plain text) and they open in a new tab with ``rel="noopener noreferrer"``.
    Paper 000, section 2.1: workers "open up the corresponding Wikipedia page".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from posthoc.html import esc, web_link
from posthoc.links import NIL_PREFIX, title_of

TASK_DATA_KEYS = ("text", "task_key", "batch_position", "kb_pages")


def is_web_link(link: str) -> bool:
    """Whether ``link`` is an absolute http(s) URL with a host and no whitespace or control characters
    (:func:`posthoc.html.web_link`, the check every HTML output of the project shares)."""
    return isinstance(link, str) and link == link.strip() and web_link(link) is not None


def link_title(link: str, *, is_nil: bool = False) -> str:
    """What an annotator reads for a link: the page title, ``NIL (...)`` or the link itself."""
    if is_nil or link.startswith(NIL_PREFIX):
        name = link[len(NIL_PREFIX):] if link.startswith(NIL_PREFIX) else ""
        return "NIL: no page in the knowledge base" + (f" ({title_of('https://en.wikipedia.org/wiki/' + name)})"
                                                          if name else "")
    return title_of(link) or link


def link_html(link: str, *, is_nil: bool = False) -> str:
    """A clickable link (new tab) for an http(s) link, else escaped plain text."""
    title = esc(link_title(link, is_nil=is_nil))
    href = web_link(link) if is_web_link(link) else None
    if is_nil or href is None:
        return f"<span>{title}</span>"
    return f'<a href="{esc(href)}" target="_blank" rel="noopener noreferrer nofollow">{title}</a>'


def kb_pages_html(mentions: Iterable[Mapping[str, Any]]) -> str:
    """The ``kb_pages`` HTML for pre-filled ``mentions`` (rows with ``surface``, ``link``, optional ``is_nil`` and
    ``lands_on``: the page a reader of ``link`` lands on when it is another, a redirect's target, shown after it).

    Examples:
        >>> kb_pages_html([{"surface": "Paris", "link": "https://en.wikipedia.org/wiki/Paris_(France)",
        ...                 "lands_on": "https://en.wikipedia.org/wiki/Paris"}]).count("<a ")
        2
    """
    items = []
    for row in mentions:
        link = row.get("link")
        link = link if isinstance(link, str) else ""
        is_nil = bool(row.get("is_nil") or False)
        lands_on = row.get("lands_on")
        moved = (f" (lands on {link_html(lands_on)})" if isinstance(lands_on, str) and lands_on
                 and lands_on != link and not is_nil else "")
        items.append(f"<li><b>{esc(row.get('surface', ''))}</b>: {link_html(link, is_nil=is_nil)}{moved}</li>")
    if not items:
        return "<p>No highlighted mentions.</p>"
    return '<ol style="margin: 0; padding-left: 1.5em">' + "".join(items) + "</ol>"


def batch_position(number: int, total: int) -> str:
    """What the annotator reads above the text: ``Task 2 of 17 in your batch`` (``number`` from 1)."""
    return f"Task {number} of {total} in your batch"


def study_task_data(task_key: str, text: str, mentions: Iterable[Mapping[str, Any]], *, number: int | None = None,
              total: int | None = None) -> dict[str, str]:
    """The ``data`` of one Label Studio task (see the module docstring); ``number`` / ``total``: its place
    in the worker's batch (``batch_position`` is empty without them)."""
    position = batch_position(number, total) if number is not None and total is not None else ""
    return {"text": text, "task_key": task_key, "batch_position": position, "kb_pages": kb_pages_html(mentions)}
