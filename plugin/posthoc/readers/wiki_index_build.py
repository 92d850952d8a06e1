"""Build the KB index of one wiki from its page / redirect / page_props SQL dumps (issue 42; read by
:mod:`posthoc.readers.wiki_index`).

Why SQLite: it is in the standard library (no new dependency), one file, indexed look-ups by title and by
Wikidata id from a cold start in milliseconds, and it does the joins of tens of millions of rows on disk with a
bounded page cache and on-disk sorting, so the build's memory does not grow with the dump (DuckDB would be a new
dependency; Parquet has no index for point look-ups).

Steps, each in SQL over staging tables of two scratch databases beside the output (deleted at the end; steps 2
and 3 run in a second process at the same time as step 1 unless ``parallel=False``):

1. ``page``: the namespace-0 rows of the page dump (``page_id, page_title, page_is_redirect``; the namespace is
   tested on the raw token before any value is converted);
2. ``rd``: every row of the redirect dump (``rd_from, rd_namespace, rd_title, rd_interwiki, rd_fragment``);
3. ``prop``: one row a page holding the page_props rows named ``disambiguation`` or ``wikibase_item``;
4. the output table ``titles`` (:data:`posthoc.readers.wiki_index.SCHEMA`) from one pass over ``page`` joined by
   page id with ``rd`` and ``prop`` (all three keyed by page id and filled in the dumps' own order, so every row is
   appended to its b-tree and no index is built afterwards), sorted once by title, each redirect's ``target`` its
   first hop;
5. the chains followed in ``titles``: the redirects whose first hop is itself a redirect (few: double redirects
   and loops) are followed in a small table, hop by hop while the target is a redirect, at most
   :data:`MAX_HOPS` times; a chain still on a redirect after that, or back at its start, is a loop.

The scratch databases run without journal, fsync or lock renewals (``journal_mode=OFF``, ``synchronous=OFF``,
``locking_mode=EXCLUSIVE``), with 16 KB pages and a page cache of ``cache_mb``; SQLite's sort spills to temporary
files (``temp_store=FILE``), so memory stays bounded whatever the dump's size, sorting them in a helper thread
(``threads=2``).

The output is written to a temporary file beside ``out`` (owner-only) and renamed over it at the end: a failed or
interrupted build leaves the previous index, never a half-written one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Final

from posthoc.errors import PosthocInputError
from posthoc.readers.mediawiki_sql import read_rows
from posthoc.readers.wiki_index import FORMAT_VERSION, SCHEMA

MAX_HOPS: Final = 10


@dataclass(frozen=True)
class BuildReport:
    """What a build found: titles, redirects, disambiguation pages and Wikidata ids in namespace 0, and the
    redirects by problem (``double``, ``loop``, ``missing target``, ``interwiki``, ``other namespace``, ``no
    redirect row``)."""

    titles: int
    redirects: int
    disambiguations: int
    wikidata: int
    problems: dict[str, int]


def _load(db: sqlite3.Connection, sql: str, rows: Iterable[tuple[object, ...]]) -> None:
    """Insert ``rows`` (streamed: ``executemany`` consumes the iterator); inside a transaction, always."""
    db.executemany(sql, rows)


def _script(db: sqlite3.Connection, script: str) -> None:
    """The statements of ``script`` (none holds a ``;`` of its own) inside the build's one transaction
    (``executescript`` would commit first)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


_PAGE_TABLE: Final = ("CREATE TABLE stage.page (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
                      "is_redirect INTEGER NOT NULL)")
#: staging tables keyed by page id (the dumps' own order: each row is appended to its b-tree, no index built later);
#: ``prop`` holds one row a page: whether it is marked ``disambiguation``, its last ``wikibase_item``
_SIDE_TABLES: Final = """
    CREATE TABLE rd (id INTEGER PRIMARY KEY, ns INTEGER, title TEXT, interwiki TEXT, fragment TEXT);
    CREATE TABLE prop (id INTEGER PRIMARY KEY, disambiguation INTEGER NOT NULL, has_item INTEGER NOT NULL,
                       wikidata TEXT)
"""
_PROP_UPSERT: Final = ("INSERT INTO prop VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                       "disambiguation = max(disambiguation, excluded.disambiguation), "
                       "has_item = max(has_item, excluded.has_item), "
                       "wikidata = CASE WHEN excluded.has_item THEN excluded.wikidata ELSE wikidata END")


def _tune(db: sqlite3.Connection, schemas: Iterable[str], cache_mb: int) -> None:
    """Scratch databases of one connection: no journal, no fsync, no lock taken again at each transaction."""
    db.execute("PRAGMA locking_mode = EXCLUSIVE")
    for schema in schemas:
        db.execute(f"PRAGMA {schema}.page_size = 16384")
        db.execute(f"PRAGMA {schema}.journal_mode = OFF")
        db.execute(f"PRAGMA {schema}.synchronous = OFF")
        db.execute(f"PRAGMA {schema}.cache_size = {-1024 * cache_mb}")
    db.execute("PRAGMA temp_store = FILE")  # the sort of step 4 spills to disk: memory stays bounded
    db.execute("PRAGMA threads = 2")  # a sort larger than the cache sorts its runs in a helper thread


def _props(rows: Iterable[tuple[object, ...]]) -> Iterator[tuple[object, int, int, object]]:
    """``(page, disambiguation, has_item, item)`` of the page_props rows named ``disambiguation`` or
    ``wikibase_item``."""
    for page, name, value in rows:
        if name == "wikibase_item":
            yield page, 0, 1, value
        elif name == "disambiguation":
            yield page, 1, 0, None


def _stage_side(redirect: Path, page_props: Path, path: str, cache_mb: int,
                progress: Callable[[int], None] | None = None) -> None:
    """The ``rd`` and ``prop`` staging tables (every redirect row; the ``disambiguation`` and ``wikibase_item``
    page properties) in their own scratch database ``path``."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        _tune(db, ["main"], cache_mb)
        db.execute("BEGIN")
        _script(db, _SIDE_TABLES)
        _load(db, "INSERT OR REPLACE INTO rd VALUES (?, ?, ?, ?, ?)",
              read_rows(redirect, table="redirect", progress=progress,
                        columns=("rd_from", "rd_namespace", "rd_title", "rd_interwiki", "rd_fragment")))
        _load(db, _PROP_UPSERT, _props(read_rows(page_props, table="page_props", progress=progress,
                                                 columns=("pp_page", "pp_propname", "pp_value"),
                                                 where={"pp_propname": ("disambiguation", "wikibase_item")})))
        db.execute("COMMIT")
    finally:
        db.close()


def _side_process(redirect: Path, page_props: Path, path: str, cache_mb: int, answer: Connection) -> None:
    """:func:`_stage_side` in a second process; sends ``None``, or the one-line message of what went wrong."""
    try:
        _stage_side(redirect, page_props, path, cache_mb)
        answer.send(None)
    except PosthocInputError as error:
        answer.send(("input", str(error)))
    except BaseException as error:
        answer.send(("error", f"{type(error).__name__}: {error}"))


def _stage(db: sqlite3.Connection, *, page: Path, redirect: Path, page_props: Path, side: str, cache_mb: int,
           parallel: bool, progress: Callable[[int], None] | None) -> None:
    """Staging tables: ``stage.page`` here; ``rd`` and ``prop`` in the database ``side`` (attached as ``side``),
    read by a second process at the same time when ``parallel`` (the page dump is about half of the work)."""
    if not parallel:
        _stage_side(redirect, page_props, side, cache_mb, progress)
    else:
        context = multiprocessing.get_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_side_process, args=(redirect, page_props, side, cache_mb, sender),
                                  daemon=True)
        process.start()
    try:
        db.execute("BEGIN")  # one transaction (in autocommit mode each row of executemany would be one)
        db.execute(_PAGE_TABLE)
        _load(db, "INSERT OR REPLACE INTO stage.page VALUES (?, ?, ?)",
              read_rows(page, table="page", columns=("page_id", "page_title", "page_is_redirect"),
                        where={"page_namespace": 0}, progress=progress))
        db.execute("COMMIT")
        if parallel:
            try:
                failure = receiver.recv()
            except EOFError:
                failure = ("error", "the process reading the redirect and page_props dumps died")
            if failure is not None:
                kind, message = failure
                raise PosthocInputError(message) if kind == "input" else RuntimeError(message)
    finally:
        if parallel:
            if process.is_alive():
                process.terminate()
            process.join()
    db.execute("ATTACH DATABASE ? AS side", (side,))


def _final(db: sqlite3.Connection) -> None:
    """``titles`` from one pass over the pages in id order (their redirect and property rows found by id), sorted
    once by title; a redirect's ``target`` is its first hop, ``hops`` 1 (module docstring, step 4)."""
    _script(db, SCHEMA)
    db.execute("""
        INSERT INTO titles (title, page_id, redirect, target, hops, problem, fragment, disambiguation, wikidata)
        SELECT p.title, p.id, p.is_redirect,
               CASE WHEN p.is_redirect != 1 OR r.id IS NULL OR COALESCE(r.interwiki, '') != '' OR r.ns != 0
                    THEN NULL ELSE r.title END,
               CASE WHEN p.is_redirect = 1 THEN 1 END,
               CASE WHEN p.is_redirect != 1 THEN NULL
                    WHEN r.id IS NULL THEN 'no redirect row'
                    WHEN COALESCE(r.interwiki, '') != '' THEN 'interwiki'
                    WHEN r.ns != 0 THEN 'other namespace' END,
               CASE WHEN p.is_redirect = 1 THEN NULLIF(r.fragment, '') END,
               COALESCE(d.disambiguation, 0), d.wikidata
        FROM stage.page p LEFT JOIN side.rd r ON r.id = p.id LEFT JOIN side.prop d ON d.id = p.id
        ORDER BY p.title
    """)


def _resolve(db: sqlite3.Connection) -> None:
    """Redirect chains followed in ``titles`` (module docstring, step 5), in one scan of its redirects: a first hop
    to a missing page is settled at once, one to a redirect (double redirects, loops: few) goes through the
    bounded hop passes in the small table ``stage.pending``; only the settled rows are written back."""
    _script(db, """
        CREATE TABLE stage.pending (title TEXT PRIMARY KEY, target TEXT, hops INTEGER, problem TEXT) WITHOUT ROWID;
        INSERT INTO stage.pending
        SELECT t.title, t.target, 1, CASE WHEN u.title IS NULL THEN 'missing target' END
        FROM titles t LEFT JOIN titles u ON u.title = t.target
        WHERE t.redirect = 1 AND t.problem IS NULL AND (u.title IS NULL OR u.redirect = 1);
        CREATE TABLE stage.settled (title TEXT PRIMARY KEY, target TEXT, hops INTEGER, problem TEXT) WITHOUT ROWID;
        INSERT INTO stage.settled SELECT * FROM stage.pending WHERE problem IS NOT NULL;
        DELETE FROM stage.pending WHERE problem IS NOT NULL;
    """)
    for _ in range(MAX_HOPS):
        if db.execute("SELECT COUNT(*) FROM stage.pending").fetchone()[0] == 0:
            break
        _script(db, """
            UPDATE stage.pending SET target = h.target, hops = pending.hops + 1, problem = h.problem
            FROM titles h WHERE h.title = pending.target AND h.redirect = 1;
            INSERT INTO stage.settled
            SELECT title, target, hops, CASE WHEN target = title THEN 'loop' ELSE problem END FROM stage.pending
            WHERE problem IS NOT NULL OR target = title
               OR NOT EXISTS (SELECT 1 FROM titles h WHERE h.title = pending.target AND h.redirect = 1);
            DELETE FROM stage.pending WHERE title IN (SELECT title FROM stage.settled);
        """)
    _script(db, """
        INSERT INTO stage.settled SELECT title, NULL, hops, 'loop' FROM stage.pending;
        UPDATE titles SET target = CASE WHEN s.problem = 'loop' THEN NULL ELSE s.target END, hops = s.hops,
                          problem = COALESCE(s.problem, CASE WHEN NOT EXISTS (SELECT 1 FROM titles u
                                                                              WHERE u.title = s.target)
                                                             THEN 'missing target' ELSE 'double' END)
        FROM stage.settled s WHERE s.title = titles.title;
    """)


def report_of(db: sqlite3.Connection) -> BuildReport:
    """The counts of an index (:class:`BuildReport`)."""
    titles, redirects, disambiguations, wikidata = db.execute(
        "SELECT COUNT(*), TOTAL(redirect), TOTAL(disambiguation), COUNT(wikidata) FROM titles").fetchone()
    problems = dict(db.execute("SELECT problem, COUNT(*) FROM titles WHERE problem IS NOT NULL "
                               "GROUP BY problem ORDER BY problem").fetchall())
    return BuildReport(titles=int(titles), redirects=int(redirects), disambiguations=int(disambiguations),
                       wikidata=int(wikidata), problems=problems)


def build_index(*, page: str | os.PathLike[str], redirect: str | os.PathLike[str],
                page_props: str | os.PathLike[str], out: str | os.PathLike[str], lang: str = "en",
                cache_mb: int = 256, parallel: bool = True,
                progress: Callable[[int], None] | None = None) -> BuildReport:
    """Build the index at ``out`` from one wiki's three dumps (module docstring); ``lang``: the wiki's language
    (the links it answers for); ``cache_mb``: SQLite's page cache per database (the build's memory beyond one
    INSERT line); ``parallel``: read the redirect and page_props dumps in a second process while this one reads
    the page dump; ``progress``: called with the bytes of each page dump line read (and of the others' lines when
    not ``parallel``).

    Examples:
        Built from the dump excerpts of ``tests/readers/data/kb`` in ``tests/readers/test_wiki_index.py``.
    """
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    scratch, side = f"{tmp}.stage", f"{tmp}.side"
    try:
        os.chmod(tmp, 0o600)
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS stage", (scratch,))
            _tune(db, ["main", "stage"], cache_mb)
            _stage(db, page=Path(page), redirect=Path(redirect), page_props=Path(page_props), side=side,
                   cache_mb=cache_mb, parallel=parallel, progress=progress)
            db.execute("BEGIN")  # one transaction: pages stay in the cache between the steps
            _final(db)
            _resolve(db)
            db.execute("CREATE INDEX titles_wikidata ON titles (wikidata) WHERE wikidata IS NOT NULL")
            meta = {"format": FORMAT_VERSION, "lang": lang, "page": Path(page).name, "redirect": Path(redirect).name,
                    "page_props": Path(page_props).name}
            _load(db, "INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            db.execute("COMMIT")
            db.execute("DETACH DATABASE stage")
            db.execute("DETACH DATABASE side")
            report = report_of(db)
        finally:
            db.close()
        os.replace(tmp, target)
        return report
    finally:
        for leftover in (tmp, scratch, side):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
