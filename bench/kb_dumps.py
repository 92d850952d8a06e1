"""Synthetic MediaWiki SQL dumps in the exact format of dumps.wikimedia.org (issue 42's bench and tests).

:func:`write_dumps` writes ``{wiki}-{date}-page.sql.gz``, ``-redirect.sql.gz`` and ``-page_props.sql.gz`` as
mysqldump writes them for current MediaWiki (the header comments, DROP / CREATE TABLE with every column of today's
schema, ``INSERT INTO ... VALUES (...),(...);`` lines of about 1 MB, the closing comments). Shares follow English
Wikipedia: of 60 M page rows about 28% are in namespace 0 and 58% of those are redirects (13 M redirect rows, all
namespaces), 40 M page_props rows of which one in 1.6 is a ``wikibase_item``. Titles are words of realistic
length (mean about 20 characters) with the hard cases of the real dumps mixed in: an apostrophe (``\\'``), a
double quote, a backslash, parentheses with ``),(``, Latin accents, CJK and an astral character. Redirects: most
go to an article; some to a redirect (double), some to a missing page, a few in a loop, to another namespace, with
a fragment, or interwiki.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

PAGE_COLUMNS = """  `page_id` int(8) unsigned NOT NULL AUTO_INCREMENT,
  `page_namespace` int(11) NOT NULL DEFAULT 0,
  `page_title` varbinary(255) NOT NULL DEFAULT '',
  `page_is_redirect` tinyint(1) unsigned NOT NULL DEFAULT 0,
  `page_is_new` tinyint(1) unsigned NOT NULL DEFAULT 0,
  `page_random` double unsigned NOT NULL DEFAULT 0,
  `page_touched` binary(14) NOT NULL,
  `page_links_updated` varbinary(14) DEFAULT NULL,
  `page_latest` int(8) unsigned NOT NULL DEFAULT 0,
  `page_len` int(8) unsigned NOT NULL DEFAULT 0,
  `page_content_model` varbinary(32) DEFAULT NULL,
  `page_lang` varbinary(35) DEFAULT NULL,
  PRIMARY KEY (`page_id`),
  UNIQUE KEY `page_name_title` (`page_namespace`,`page_title`),
  KEY `page_random` (`page_random`),
  KEY `page_len` (`page_len`),
  KEY `page_redirect_namespace_len` (`page_is_redirect`,`page_namespace`,`page_len`)"""
REDIRECT_COLUMNS = """  `rd_from` int(8) unsigned NOT NULL DEFAULT 0,
  `rd_namespace` int(11) NOT NULL DEFAULT 0,
  `rd_title` varbinary(255) NOT NULL DEFAULT '',
  `rd_interwiki` varbinary(32) DEFAULT NULL,
  `rd_fragment` varbinary(255) DEFAULT NULL,
  PRIMARY KEY (`rd_from`),
  KEY `rd_ns_title` (`rd_namespace`,`rd_title`,`rd_from`)"""
PROPS_COLUMNS = """  `pp_page` int(10) unsigned NOT NULL,
  `pp_propname` varbinary(60) NOT NULL,
  `pp_value` blob NOT NULL,
  `pp_sortkey` float DEFAULT NULL,
  PRIMARY KEY (`pp_page`,`pp_propname`),
  UNIQUE KEY `pp_propname_page` (`pp_propname`,`pp_page`),
  UNIQUE KEY `pp_propname_sortkey_page` (`pp_propname`,`pp_sortkey`,`pp_page`)"""

_WORDS = ("history", "river", "john", "smith", "national", "park", "football", "club", "album", "united", "states",
          "battle", "of", "the", "church", "station", "county", "list", "school", "district", "film", "song",
          "university", "airport", "railway", "mount", "lake", "saint", "george", "music", "festival", "party",
          "election", "people's", "republic", "company", "women's", "o'brien", "championship", "new", "york")
_ODD = ("Côte_d'Ivoire", "São_Paulo", "Zürich", "東京", "Москва", 'The_"Quoted"_One', "Back\\slash",
        "A_(b),(c)", "𝔸stral_𝄞", "Ελλάδα", "Ńowa", "C++", "100%_Pure", "Semi;colon")
_OTHER_PROPS = ("page_image_free", "wikibase-shortdesc", "defaultsort", "notoc", "jsonconfig_getdata")


def sql_string(text: str) -> str:
    """``text`` quoted as mysqldump quotes it (backslash escapes)."""
    escaped = (text.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r").replace("\0", "\\0").replace("\x1a", "\\Z"))
    return f"'{escaped}'"


def dump_text_head(table: str, columns: str) -> str:
    """mysqldump's header and CREATE TABLE for ``table``."""
    return ("-- MySQL dump 10.19  Distrib 10.3.39-MariaDB, for debian-linux-gnu (x86_64)\n--\n"
            "-- Host: db1206    Database: xxwiki\n-- ------------------------------------------------------\n"
            "-- Server version\t10.6.17-MariaDB-log\n\n"
            "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n"
            "/*!40103 SET TIME_ZONE='+00:00' */;\n\n--\n"
            f"-- Table structure for table `{table}`\n--\n\nDROP TABLE IF EXISTS `{table}`;\n"
            "/*!40101 SET @saved_cs_client     = @@character_set_client */;\n"
            "/*!40101 SET character_set_client = utf8 */;\n"
            f"CREATE TABLE `{table}` (\n{columns}\n) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;\n"
            "/*!40101 SET character_set_client = @saved_cs_client */;\n\n--\n"
            f"-- Dumping data for table `{table}`\n--\n\n/*!40000 ALTER TABLE `{table}` DISABLE KEYS */;\n")


def dump_text(table: str, columns: str, statements: list[list[str]]) -> str:
    """A whole (small) dump: header, one INSERT statement per list of rows, tail."""
    inserts = "".join(f"INSERT INTO `{table}` VALUES {','.join(rows)};\n"  # noqa: S608 (a dump's text)
                      for rows in statements if rows)
    return dump_text_head(table, columns) + inserts + dump_text_tail(table)


def dump_text_tail(table: str) -> str:
    return (f"/*!40000 ALTER TABLE `{table}` ENABLE KEYS */;\n\n"
            "/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;\n\n-- Dump completed on 2026-12-01  2:44:10\n")


def _write(path: Path, table: str, columns: str, rows: list[str] | object, *, line_bytes: int = 1_000_000) -> None:
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6, newline="\n") as out:
        out.write(dump_text_head(table, columns))
        batch: list[str] = []
        size = 0
        for row in rows:  # type: ignore[attr-defined]
            batch.append(row)
            size += len(row) + 1
            if size >= line_bytes:
                out.write(f"INSERT INTO `{table}` VALUES {','.join(batch)};\n")  # noqa: S608 (a dump's text)
                batch, size = [], 0
        if batch:
            out.write(f"INSERT INTO `{table}` VALUES {','.join(batch)};\n")  # noqa: S608 (a dump's text)
        out.write(dump_text_tail(table))


def _title(rng: random.Random, number: int) -> str:
    if rng.random() < 0.01:
        return f"{rng.choice(_ODD)}_{number}"
    words = [rng.choice(_WORDS) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))]
    return "_".join(words).capitalize() + f"_{number}"


def write_dumps(folder: Path, *, pages: int, seed: int = 42, wiki: str = "xxwiki") -> dict[str, Path]:
    """The three dump files for ``pages`` page rows (redirect and page_props rows in English's shares)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"{wiki}-20261201-{name}.sql.gz" for name in ("page", "redirect", "page_props")}
    namespaces = [0] * 28 + [1] * 12 + [2] * 20 + [3] * 25 + [4, 6, 6, 6, 10, 14, 14, 14, 118, 828] + [0] * 5
    page_rows, redirect_rows, prop_rows = [], [], []
    articles: list[tuple[int, str]] = []
    redirects: list[tuple[int, str]] = []
    for page_id in range(1, pages + 1):
        ns = rng.choice(namespaces)
        title = _title(rng, page_id)
        is_redirect = int(rng.random() < (0.58 if ns == 0 else 0.1))
        page_rows.append(f"({page_id},{ns},{sql_string(title)},{is_redirect},{int(rng.random() < 0.1)},"
                         f"{rng.random():.12f},'2026112{rng.randrange(10)}{rng.randrange(10**6):06d}',"
                         f"'20261120{rng.randrange(10**6):06d}',{rng.randrange(10**9)},{rng.randrange(10**5)},"
                         f"'wikitext',NULL)")
        if ns == 0:
            (redirects if is_redirect else articles).append((page_id, title))
        if is_redirect:
            redirect_rows.append((page_id, ns))
        elif rng.random() < 0.75 or ns == 0:
            prop_rows.append((page_id, ns))
    titles = [t for _, t in articles] or ["Main_Page"]
    redirect_text = []
    ns0_redirects = dict(redirects)
    redirect_titles = [t for _, t in redirects] or titles
    for page_id, ns in redirect_rows:
        roll = rng.random()
        target_ns, target, interwiki, fragment = 0, rng.choice(titles), "''", "''"
        if ns != 0 or roll < 0.002:
            target_ns = rng.choice((4, 14, 2))
        elif roll < 0.03:
            target = rng.choice(redirect_titles)  # a double redirect (or, when it is itself, a loop)
        elif roll < 0.035:
            target = f"Missing_page_{page_id}"
        elif roll < 0.037:
            interwiki, target = "'wikt'", "word"
        elif roll < 0.08:
            fragment = sql_string(rng.choice(("History", "Early_life", "See_also")))
        if page_id in ns0_redirects and target == ns0_redirects[page_id]:
            target = titles[0]
        redirect_text.append(f"({page_id},{target_ns},{sql_string(target)},{interwiki},{fragment})")
    props_text = []
    for page_id, ns in prop_rows:
        if ns == 0 and rng.random() < 0.95:
            props_text.append(f"({page_id},'wikibase_item','Q{rng.randrange(1, 10**8)}',NULL)")
        if ns == 0 and rng.random() < 0.03:
            props_text.append(f"({page_id},'disambiguation','',NULL)")
        for name in rng.sample(_OTHER_PROPS, rng.choice((0, 1, 1, 2))):
            props_text.append(f"({page_id},'{name}',{sql_string(rng.choice(_WORDS) + ' ' + str(page_id))},"
                              f"{'NULL' if rng.random() < 0.7 else f'{rng.random():.6g}'})")
    props_text.sort(key=lambda row: (int(row[1:row.index(",")]), row))
    _write(paths["page"], "page", PAGE_COLUMNS, page_rows)
    _write(paths["redirect"], "redirect", REDIRECT_COLUMNS, redirect_text)
    _write(paths["page_props"], "page_props", PROPS_COLUMNS, props_text)
    return paths
