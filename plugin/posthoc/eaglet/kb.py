"""Knowledge-base look-ups for the URI error module (paper 003, Sect. 3.4 "URI Error", Sect. 4.3 item 5).

Every knowledge base answers :meth:`KnowledgeBase.lookup`: canonical links (:mod:`posthoc.links`) in,
one :class:`UriStatus` per link out, ``kind`` one of

``page``            an existing article;
``redirect``        an outdated title: ``target`` is where it redirects now (chains followed);
``disambiguation``  a disambiguation page; ``candidates`` the pages it lists, when known;
``missing``         the KB has a title list and this title is not in it;
``unknown``         the KB has nothing to say (no flag is raised).

Three implementations (the third, :class:`posthoc.eaglet.kb_index.WikiIndexKb`, reads the index that
``posthoc kb build`` makes of Wikipedia's own dumps):

:class:`KbSnapshot`          offline, from files: DBpedia's ``redirects`` and ``disambiguations``
                             dumps (N-Triples-style ``.ttl``, also ``.bz2`` / ``.gz``, or any Turtle
                             rdflib reads) and a simple TSV ``title<TAB>kind<TAB>target`` where kind is
                             ``page``, ``redirect`` (target: the new title) or ``disambiguation``
                             (target: candidates separated by ``|``, may be empty).
:class:`MediaWikiChecker`    online, OFF by default: the MediaWiki Action API
                             (``action=query&redirects=1&prop=pageprops&ppprop=disambiguation``),
                             50 titles a request, at most one request per ``min_interval`` seconds,
                             answers cached in a JSON file so a rerun asks nothing twice.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from posthoc.atomic import write_text_atomic
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.links import normalise_link, title_of, wikipedia_url

_TRIPLE = re.compile(r'^\s*<([^>]*)>\s+<([^>]*)>\s+<([^>]*)>\s*\.\s*$')
_UESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})")


@dataclass(frozen=True)
class UriStatus:
    """What a KB says about one link (see the module docstring); ``detail``: why, in a few words, when the KB
    knows more (a double redirect, a redirect that lands nowhere)."""

    kind: str
    target: str = ""
    candidates: tuple[str, ...] = ()
    detail: str = ""


class KnowledgeBase(Protocol):
    """Anything that can tell the status of canonical links."""

    def lookup(self, links: Iterable[str]) -> dict[str, UriStatus]: ...


def _canonical(value: str) -> str:
    return normalise_link(value).link


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def _iri(value: str) -> str:
    return _UESCAPE.sub(lambda m: codecs.decode("\\" + m.group(1), "unicode_escape"), value)


def _triples(path: Path, predicate_suffix: str) -> Iterable[tuple[str, str]]:
    """``(subject, object)`` of the triples whose predicate ends with ``predicate_suffix``."""
    if not path.is_file():
        raise PosthocInputError(f"{path}: no such KB file; check the path")
    with _open_text(path) as handle:
        head = handle.read(4096)
    if "@prefix" in head or "PREFIX" in head:  # real Turtle: let rdflib parse it
        from rdflib import Graph

        graph = Graph()
        try:
            with _open_text(path) as handle:
                graph.parse(data=handle.read(), format="turtle")
        except Exception as error:
            raise PosthocInputError(f"{path}: not valid Turtle ({error}); give a DBpedia dump or N-Triples") from None
        for s, p, o in graph:
            if str(p).endswith(predicate_suffix):
                yield str(s), str(o)
        return
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = _TRIPLE.match(line)
            if match is None:
                raise PosthocInputError(f"{path}, line {number}: not an N-Triples line <s> <p> <o> .; "
                                        "give DBpedia's redirects / disambiguations dump")
            if match.group(2).endswith(predicate_suffix):
                yield _iri(match.group(1)), _iri(match.group(3))


@contextlib.contextmanager
def _unreadable_as_input_error(path: Path) -> Iterator[None]:
    """A KB file that is not UTF-8 text (or a broken .bz2 / .gz) becomes one PosthocInputError naming it."""
    try:
        yield
    except (UnicodeDecodeError, EOFError) as error:
        raise PosthocInputError(f"{path}: not a UTF-8 text KB file ({error}); give a DBpedia dump, "
                                "N-Triples or a TSV (.bz2/.gz allowed)") from None
    except OSError as error:  # gzip.BadGzipFile, a bz2 'Invalid data stream', a folder
        raise PosthocInputError(f"{path}: cannot read this KB file ({error}); give a DBpedia dump, "
                                "N-Triples or a TSV (.bz2/.gz allowed)") from None


@dataclass
class KbSnapshot:
    """An offline KB snapshot: redirects, disambiguation pages and (optionally) the known titles."""

    redirects: dict[str, str] = field(default_factory=dict)
    disambiguations: dict[str, list[str]] = field(default_factory=dict)
    titles: set[str] | None = None

    @classmethod
    def from_files(cls, *, redirects: Iterable[str | os.PathLike[str]] = (),
                   disambiguations: Iterable[str | os.PathLike[str]] = (),
                   tsv: Iterable[str | os.PathLike[str]] = ()) -> KbSnapshot:
        """Read DBpedia ``redirects`` / ``disambiguations`` dumps and TSV files (module docstring)."""
        kb = cls()
        for path in map(Path, redirects):
            with _unreadable_as_input_error(path):
                for subject, target in _triples(path, "wikiPageRedirects"):
                    kb.redirects[_canonical(subject)] = _canonical(target)
        for path in map(Path, disambiguations):
            with _unreadable_as_input_error(path):
                for subject, target in _triples(path, "wikiPageDisambiguates"):
                    kb.disambiguations.setdefault(_canonical(subject), []).append(_canonical(target))
        for path in map(Path, tsv):
            with _unreadable_as_input_error(path):
                kb._read_tsv(path)
        return kb

    def _read_tsv(self, path: Path) -> None:
        if not path.is_file():
            raise PosthocInputError(f"{path}: no such KB file; check the path")
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                fields = line.rstrip("\r\n").split("\t")
                if not line.strip() or line.startswith("#") or (number == 1 and fields[0].lower() == "title"):
                    continue
                kind = fields[1].strip().lower() if len(fields) > 1 else "page"
                target = fields[2].strip() if len(fields) > 2 else ""
                title = _canonical(fields[0])
                if kind == "page":
                    self.titles = set() if self.titles is None else self.titles
                    self.titles.add(title)
                elif kind == "redirect" and target:
                    self.redirects[title] = _canonical(target)
                elif kind == "disambiguation":
                    self.disambiguations[title] = [_canonical(t) for t in target.split("|") if t.strip()]
                else:
                    raise PosthocInputError(f"{path}, line {number}: kind must be page, redirect (with a target) "
                                            f"or disambiguation, not {kind!r}")

    def lookup(self, links: Iterable[str]) -> dict[str, UriStatus]:
        answers = {}
        for link in links:
            if link in self.redirects:
                target, seen = link, {link}
                while target in self.redirects and self.redirects[target] not in seen:
                    target = self.redirects[target]
                    seen.add(target)
                answers[link] = UriStatus("redirect", target)
            elif link in self.disambiguations:
                answers[link] = UriStatus("disambiguation", candidates=tuple(self.disambiguations[link]))
            elif self.titles is not None:
                answers[link] = UriStatus("page" if link in self.titles else "missing")
            else:
                answers[link] = UriStatus("unknown")
        return answers


@dataclass
class MediaWikiChecker:
    """The MediaWiki Action API as a KB: cached, rate-limited, for one wiki (``api_url``).

    ``api_url``: e.g. ``https://en.wikipedia.org/w/api.php``; ``lang``: the language of the canonical
    links it answers for (others are ``unknown``); ``cache_path``: a JSON file of earlier answers;
    ``min_interval``: seconds between two requests; ``batch``: titles per request (API limit 50).
    """

    api_url: str
    lang: str = "en"
    cache_path: str | os.PathLike[str] | None = None
    min_interval: float = 1.0
    batch: int = 50
    timeout: float = 20.0
    user_agent: str = "posthoc-review (Eaglet URI checks; https://github.com/)"
    _cache: dict[str, UriStatus] = field(default_factory=dict)
    _last_request: float = 0.0

    def __post_init__(self) -> None:
        if self.cache_path is not None and Path(self.cache_path).is_file():
            try:
                raw = json.loads(Path(self.cache_path).read_text(encoding="utf-8"))
                self._cache = {k: UriStatus(v["kind"], v.get("target", ""), tuple(v.get("candidates", ())))
                               for k, v in raw.items()}
            except (ValueError, KeyError, TypeError) as error:
                raise PosthocInputError(f"{self.cache_path}: not a MediaWiki cache file ({error}); "
                                        "delete it to start afresh") from None

    def lookup(self, links: Iterable[str]) -> dict[str, UriStatus]:
        wanted = list(dict.fromkeys(links))
        titles: dict[str, str] = {}
        for link in wanted:
            title = title_of(link)
            if link not in self._cache and title and link.startswith(f"https://{self.lang}.wikipedia.org/"):
                titles[title] = link
        pending = list(titles)
        for i in range(0, len(pending), self.batch):
            self._query(pending[i:i + self.batch], titles)
        if pending and self.cache_path is not None:
            payload = {k: {"kind": v.kind, "target": v.target, "candidates": list(v.candidates)}
                       for k, v in sorted(self._cache.items())}
            write_text_atomic(self.cache_path, json.dumps(payload, ensure_ascii=False, indent=0))
        return {link: self._cache.get(link, UriStatus("unknown")) for link in wanted}

    def _query(self, titles: list[str], links: dict[str, str]) -> None:
        wait = self._last_request + self.min_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        params = {"action": "query", "format": "json", "formatversion": "2", "redirects": "1",
                  "prop": "pageprops", "ppprop": "disambiguation", "titles": "|".join(titles)}
        from posthoc.http import TransportFailure, web_get_json

        try:
            answer = web_get_json(self.api_url, params=params, headers={"User-Agent": self.user_agent},
                                  timeout=self.timeout)
            query = answer.get("query", {}) if isinstance(answer, dict) else {}
        except TransportFailure as error:
            raise PosthocServiceError(f"MediaWiki API {self.api_url} failed: {error}") from None
        finally:
            self._last_request = time.monotonic()
        normalized = {n["from"]: n["to"] for n in query.get("normalized", [])}
        redirects = {r["from"]: r["to"] for r in query.get("redirects", [])}
        pages = {p.get("title"): p for p in query.get("pages", [])}
        for title in titles:
            current = normalized.get(title, title)
            redirected, seen = current, {current}
            while redirected in redirects and redirects[redirected] not in seen:
                redirected = redirects[redirected]
                seen.add(redirected)
            page = pages.get(redirected, {})
            if redirected != current:
                status = UriStatus("redirect", wikipedia_url(redirected, lang=self.lang))
            elif page.get("missing") or page.get("invalid") or not page:
                status = UriStatus("missing")
            elif "disambiguation" in page.get("pageprops", {}):
                status = UriStatus("disambiguation")
            else:
                status = UriStatus("page")
            self._cache[links[title]] = status
