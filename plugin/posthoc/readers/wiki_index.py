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
temporary table), so 100,000 links resolve in well under a second from a cold start.

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
#: problems after which a redirect still lands on an article (the others lead nowhere in namespace 0)
RESOLVED_PROBLEMS: Final = frozenset({None, "double"})
#: the look-ups: records by title or by Wikidata id, and where a title lands (the article itself, a redirect's
#: resolved target, NULL for a broken redirect; :attr:`TitleRecord.lands_on` in SQL)
_JOINS: Final = {
    **{column: f"SELECT t.* FROM json_each(?) w JOIN titles t ON t.{column} = w.value"  # noqa: S608
       for column in ("title", "wikidata")},
    "landing": "SELECT t.title, CASE WHEN t.redirect = 0 THEN t.title WHEN t.problem IS NULL OR t.problem = 'double' "
               "THEN t.target END FROM json_each(?) w JOIN titles t ON t.title = w.value",
    "item": "SELECT t.wikidata, t.title FROM json_each(?) w JOIN titles t ON t.wikidata = w.value WHERE t.redirect = 0",
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
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
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
        """The ``titles`` rows (or the columns :data:`_JOINS` names) whose ``column`` (``title`` for ``landing``,
        ``wikidata`` for ``item``) is one of ``values``: one statement joining ``titles`` with the values passed
        as one JSON array (SQLite's ``json_each``), whatever their number."""
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
        id; a link the index cannot place is its own key. Two links name one entity when their keys are equal."""
        wanted = list(dict.fromkeys(links))
        titles = {link: self.title_of_link(link) for link in wanted}
        items = {link: wikidata_id(link) for link in wanted if titles[link] is None}
        by_item = self.titles_of_wikidata(item for item in items.values() if item)
        landings: dict[object, object] = {
            title: landing for title, landing in self._joined("landing", {t for t in titles.values() if t}
                                                              | set(by_item.values()))}
        keys = {}
        for link in wanted:
            own = titles[link]
            landing = landings.get(own or by_item.get(items.get(link) or "", ""))
            keys[link] = link if landing is None or landing == own else self.link_of_title(str(landing))
        return keys
