"""The KB index of one wiki (built by :mod:`posthoc.readers.wiki_index_build`, ``posthoc kb build``): look-ups of
titles, links and Wikidata ids, many at once.

One SQLite file, table ``titles`` (one row per namespace-0 title of the page dump, underscores as in the dump):

``title``           the title (primary key);
``page_id``         its page id;
``redirect``        1 when the page is a redirect;
``target``          a redirect's final target title (chains followed), NULL otherwise; a ``missing target``
                    keeps the title it points to;
``hops``            redirects followed to reach it (1: a plain redirect; more: a double redirect);
``problem``         NULL, or for a redirect: ``double`` (resolved through more than one hop), ``loop``,
                    ``missing target`` (the target page does not exist), ``interwiki`` (to another wiki),
                    ``other namespace`` (to a category, portal ...), ``no redirect row``;
``fragment``        the section a redirect points to (``#History``), NULL when none;
``disambiguation``  1 when page_props marks the page ``disambiguation``;
``wikidata``        its Wikidata item (page_props ``wikibase_item``, ``Q90``), NULL when none; indexed;

and table ``meta`` (``key, value``: ``format``, ``lang``, the dump files' names). Look-ups load the asked titles
as one JSON array parameter and join it with ``titles`` (``json_each``: one statement, whatever their number, no
temporary table), on the file opened read-only, immutable and memory-mapped, so 100,000 links resolve in well
under a second from a cold start.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = Path(folder.name) / "kb.sqlite"
    >>> db = sqlite3.connect(path)
    >>> _ = db.executescript(SCHEMA)
    >>> _ = db.executemany("INSERT INTO titles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
    ...     ("China", 5405, 0, None, None, None, None, 0, "Q148"),
    ...     ("People's_Republic_of_China", 23238, 1, "China", 1, None, None, 0, None)])
    >>> _ = db.executemany("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT_VERSION), ("lang", "en")])
    >>> db.commit(); db.close()
    >>> index = WikiIndex(path)
    >>> index.records(["People's_Republic_of_China", "Atlantis"])["People's_Republic_of_China"].target
    'China'
    >>> index.entity_keys(["https://en.wikipedia.org/wiki/People%27s_Republic_of_China",
    ...                    "http://www.wikidata.org/entity/Q148"])  # doctest: +NORMALIZE_WHITESPACE
    {'https://en.wikipedia.org/wiki/People%27s_Republic_of_China': 'https://en.wikipedia.org/wiki/China',
     'http://www.wikidata.org/entity/Q148': 'https://en.wikipedia.org/wiki/China'}
    >>> index.close(); folder.cleanup()
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote, unquote

from posthoc.errors import PosthocInputError
from posthoc.links import LINK_SAFE, wikipedia_url

FORMAT_VERSION: Final = "posthoc-kb-1"
SCHEMA: Final = """
CREATE TABLE titles (title TEXT PRIMARY KEY, page_id INTEGER NOT NULL, redirect INTEGER NOT NULL, target TEXT,
                     hops INTEGER, problem TEXT, fragment TEXT, disambiguation INTEGER NOT NULL, wikidata TEXT)
                     WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: the most of an index memory-mapped (SQLite caps it at its compile-time maximum, 2 GB by default)
MMAP_BYTES: Final = 1 << 40
#: problems after which a redirect still lands on an article (the others lead nowhere in namespace 0)
RESOLVED_PROBLEMS: Final = frozenset({None, "double"})
#: the look-ups: records by title or by Wikidata id, and the articles carrying Wikidata ids
_JOINS: Final = {
    **{column: f"SELECT t.* FROM json_each(?) w JOIN titles t ON t.{column} = w.value"  # noqa: S608
       for column in ("title", "wikidata")},
    "item": "SELECT t.wikidata, t.title FROM json_each(?) w JOIN titles t ON t.wikidata = w.value WHERE t.redirect = 0",
}
#: the links that move to another title, as ``(position in the JSON array passed, title landed on)``: a title's
#: redirect that lands somewhere (the array is the links' titles, in order); a Wikidata id's article (the parameter
#: is a JSON object ``{"position": "Q90"}``), walked in the index's order
_MOVES: Final = {
    "title": "SELECT w.key, t.target FROM (SELECT key, value FROM json_each(?) WHERE value IS NOT NULL "
             "ORDER BY value) w JOIN titles t ON t.title = w.value "
             "WHERE t.redirect = 1 AND (t.problem IS NULL OR t.problem = 'double')",
    "item": "SELECT CAST(w.key AS INTEGER), t.title FROM (SELECT key, value FROM json_each(?) ORDER BY value) w "
            "JOIN titles t ON t.wikidata = w.value WHERE t.redirect = 0",
}
#: a title that percent-encoding leaves as it is (the common case: no quoting call)
_PLAIN = re.compile(r"[A-Za-z0-9_\-.~;@$!*(),/:]*\Z")
_WIKIDATA = re.compile(r"^(?:https?://(?:www\.)?wikidata\.org/(?:entity|wiki)/|wd:)?(Q[1-9][0-9]*)$")


@dataclass(frozen=True)
class TitleRecord:
    """One row of ``titles`` (module docstring)."""

    title: str
    page_id: int
    redirect: bool
    target: str | None
    hops: int | None
    problem: str | None
    fragment: str | None
    disambiguation: bool
    wikidata: str | None

    @property
    def lands_on(self) -> str | None:
        """The article a reader lands on: the title itself, a redirect's resolved target, or None (a broken
        redirect)."""
        if not self.redirect:
            return self.title
        return self.target if self.problem in RESOLVED_PROBLEMS else None


def wikidata_id(link: str) -> str | None:
    """The item id of a Wikidata link (``http://www.wikidata.org/entity/Q90``, ``.../wiki/Q90``, ``wd:Q90``, ``Q90``).

    Examples:
        >>> wikidata_id("http://www.wikidata.org/entity/Q90"), wikidata_id("Q90"), wikidata_id("Paris")
        ('Q90', 'Q90', None)
    """
    match = _WIKIDATA.match(link.strip())
    return match.group(1) if match else None


class WikiIndex:
    """A built index, opened read-only (PosthocInputError when ``path`` is not one)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise PosthocInputError(f"{self.path}: no such KB index; build one with `posthoc kb build`")
        try:
            # read-only and immutable (a rebuild replaces the file, never writes into it: no locks, no change
            # checks); memory-mapped: the look-ups read the b-trees in place instead of copying pages into the cache
            self._db = sqlite3.connect(f"file:{quote(str(self.path.resolve()))}?mode=ro&immutable=1", uri=True)
            self._db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            raise PosthocInputError(f"{self.path}: not a KB index (no meta table); build one with "
                                    "`posthoc kb build`") from None
        if meta.get("format") != FORMAT_VERSION:
            raise PosthocInputError(f"{self.path}: KB index format {meta.get('format')!r}, this version reads "
                                    f"{FORMAT_VERSION!r}; rebuild it with `posthoc kb build`")
        self.lang = meta.get("lang", "en")
        self.meta = meta
        self._prefix = wikipedia_url("", lang=self.lang)

    def close(self) -> None:
        self._db.close()

    def _joined(self, column: str, values: Iterable[str]) -> list[tuple[object, ...]]:
        """The ``titles`` rows (or the columns :data:`_JOINS` names) whose ``column`` (``wikidata`` for ``item``)
        is one of ``values``: one statement joining ``titles`` with the values passed as one JSON array (SQLite's
        ``json_each``), whatever their number."""
        # sorted: the probes then walk the title index in its own order (code points sort as UTF-8 bytes do)
        wanted = json.dumps(sorted(set(values)), ensure_ascii=False)
        return self._db.execute(_JOINS[column], (wanted,)).fetchall()

    def records(self, titles: Iterable[str]) -> dict[str, TitleRecord]:
        """The records of those of ``titles`` (underscored, as in the dump) the index has."""
        found = {}
        for row in self._joined("title", titles):
            found[str(row[0])] = TitleRecord(*row)  # type: ignore[arg-type]
        return found

    def titles_of_wikidata(self, items: Iterable[str]) -> dict[str, str]:
        """``item -> title`` for the Wikidata items an article of the index carries (redirects carry none)."""
        return {str(item): str(title) for item, title in self._joined("item", items)}

    def title_of_link(self, link: str) -> str | None:
        """The underscored title of a canonical link of this index's wiki (:mod:`posthoc.links`), else None."""
        if not link.startswith(self._prefix):
            return None
        title = unquote(link[len(self._prefix):]) if "%" in link else link[len(self._prefix):]
        return title or None

    def link_of_title(self, title: str) -> str:
        """The canonical link of a title of the index (already in MediaWiki's form: only the encoding to do)."""
        return self._prefix + (title if _PLAIN.match(title) else quote(title, safe=LINK_SAFE))

    def entity_keys(self, links: Iterable[str]) -> dict[str, str]:
        """Each link's entity: the canonical link of the article it lands on, through redirects and from a Wikidata
        id; a link the index cannot place is its own key. Two links name one entity when their keys are equal.

        Two statements whatever the number of links (:data:`_MOVES`): the links' titles, one JSON array in the
        links' order (``null`` where a link is not of this wiki), joined with the redirects that land somewhere,
        and the Wikidata ids of the other links joined with the articles carrying them; only the moved links are
        then touched in Python (an article's own link, absent titles and broken redirects stay as they are)."""
        wanted = list(dict.fromkeys(links))
        prefix, start = self._prefix, len(self._prefix)
        titles: list[str | None] = [link[start:] or None if link.startswith(prefix) else None for link in wanted]
        for position in [i for i, title in enumerate(titles) if title and "%" in title]:
            titles[position] = unquote(titles[position] or "") or None
        items = {i: item for i, link in enumerate(wanted) if titles[i] is None and (item := wikidata_id(link))}
        moved = self._db.execute(_MOVES["title"], (json.dumps(titles, ensure_ascii=False),)).fetchall()
        if items:
            moved += self._db.execute(_MOVES["item"], (json.dumps(items),)).fetchall()
        keys = dict(zip(wanted, wanted, strict=True))
        plain = _PLAIN.match
        for position, landing in moved:
            if landing != titles[position]:
                keys[wanted[position]] = prefix + (landing if plain(landing) else quote(landing, safe=LINK_SAFE))
        return keys
