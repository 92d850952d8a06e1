"""``posthoc kb build``: the KB index of one wiki from its SQL dumps, with a progress bar (issue 42).

The work is :func:`posthoc.readers.wiki_index_build.build_index`; this job finds the three dump files (given one by
one, or a folder holding ``{wiki}-{date}-page.sql.gz``, ``-redirect.sql.gz`` and ``-page_props.sql.gz`` of one
wiki and date), takes the wiki's language from the file name (``enwiki`` -> ``en``) unless told, and shows the
uncompressed bytes read against the files' sizes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from posthoc.errors import PosthocInputError
from posthoc.readers.wiki_index_build import BuildReport, build_index

TABLES = ("page", "redirect", "page_props")
_DUMP_NAME = re.compile(r"^(?P<wiki>[a-z_\-]+?)wiki-(?P<date>\d{8}|latest)-(?P<table>page|redirect|page_props)\.sql"
                        r"(?:\.gz)?$")


@dataclass(frozen=True)
class DumpSet:
    """The three dump files of one wiki and its language."""

    page: Path
    redirect: Path
    page_props: Path
    lang: str


def find_dumps(*, folder: Path | None = None, page: Path | None = None, redirect: Path | None = None,
               page_props: Path | None = None, lang: str | None = None) -> DumpSet:
    """The dump set from a folder (one wiki and date in it) and/or files given one by one (which win)."""
    found: dict[str, Path] = {}
    langs = set()
    if folder is not None:
        if not folder.is_dir():
            raise PosthocInputError(f"{folder}: not a folder; give the folder holding the three dump files")
        for path in sorted(folder.iterdir()):
            match = _DUMP_NAME.match(path.name)
            if match:
                if match.group("table") in found:
                    table = match.group("table")
                    raise PosthocInputError(f"{folder}: two {table} dumps ({found[table].name}, {path.name}); keep "
                                            "one wiki and date in the folder or name the files")
                found[match.group("table")] = path
                langs.add(match.group("wiki"))
    given = {"page": page, "redirect": redirect, "page_props": page_props}
    found.update({table: path for table, path in given.items() if path is not None})
    missing = [table for table in TABLES if table not in found]
    if missing:
        raise PosthocInputError(f"{folder or 'the options'}: no {', '.join(missing)} dump; give "
                                f"{{wiki}}-{{date}}-{missing[0]}.sql.gz (--{missing[0].replace('_', '-')} or --dumps)")
    for table, path in found.items():
        if not path.is_file():
            raise PosthocInputError(f"{path}: no such {table} dump file; check the path")
        match = _DUMP_NAME.match(path.name)
        if match:
            langs.add(match.group("wiki"))
    if lang is None:
        lang = langs.pop().replace("_", "-") if len(langs) == 1 else "en"
    return DumpSet(found["page"], found["redirect"], found["page_props"], lang)


def run_kb_build(dumps: DumpSet, *, out: Path, progress: bool = True, cache_mb: int = 256,
                 parallel: bool = True) -> BuildReport:
    """Build the index of ``dumps`` at ``out`` (atomically; owner-only), a progress bar in uncompressed bytes of
    the dumps this process reads (the page dump alone when ``parallel``), estimated from the files' sizes (gzip:
    times 4)."""
    from tqdm import tqdm

    read_here = (dumps.page,) if parallel else (dumps.page, dumps.redirect, dumps.page_props)
    total = sum(os.path.getsize(p) * (4 if p.suffix == ".gz" else 1) for p in read_here)
    with tqdm(total=total, unit="B", unit_scale=True, desc="kb build", disable=not progress) as bar:
        return build_index(page=dumps.page, redirect=dumps.redirect, page_props=dumps.page_props, out=out,
                           lang=dumps.lang, cache_mb=cache_mb, parallel=parallel, progress=bar.update)
