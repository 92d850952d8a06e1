"""The KB index built from Wikipedia's own dumps (``posthoc kb build``, :mod:`posthoc.readers.wiki_index`) as one more
:class:`~posthoc.eaglet.kb.KnowledgeBase` of the URI rule (paper 003, Sect. 3.4 "URI Error"; issue 42).

Offline and at full scale, what Eaglet asks the MediaWiki API per title: for a canonical link of the index's wiki,

``redirect``        the title redirects to an article (chains followed): ``target`` is that article's link (an
                    outdated URI; ``detail`` names a double redirect and a fragment);
``missing``         the title is not in namespace 0 (an invalid URI), or it is a redirect that lands on no
                    article (a loop, a missing target, another wiki or namespace: ``detail`` says which);
``disambiguation``  page_props marks it ``disambiguation`` (candidates: not read from the dumps);
``page``            an article;
``unknown``         a link of another wiki or KB; a Wikidata id the index maps to an article is a ``page``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from posthoc.eaglet.kb import UriStatus
from posthoc.links import wikipedia_url
from posthoc.readers.wiki_index import RESOLVED_PROBLEMS, TitleRecord, WikiIndex, wikidata_id


def _status(record: TitleRecord | None, lang: str) -> UriStatus:
    if record is None:
        return UriStatus("missing", detail="title not in the KB index")
    if record.redirect:
        if record.problem in RESOLVED_PROBLEMS and record.target:
            notes = [f"double redirect, {record.hops} hops"] if record.problem == "double" else []
            notes += [f"to section {record.fragment}"] if record.fragment else []
            return UriStatus("redirect", wikipedia_url(record.target, lang=lang), detail="; ".join(notes))
        where = f" {record.target}" if record.target else ""
        return UriStatus("missing", detail=f"a redirect that lands on no article ({record.problem}{where})")
    if record.disambiguation:
        return UriStatus("disambiguation")
    return UriStatus("page")


@dataclass
class WikiIndexKb:
    """A :class:`~posthoc.eaglet.kb.KnowledgeBase` over a built index (module docstring).

    Examples:
        Built from dump excerpts and checked in ``tests/eaglet/test_kb_index.py`` (the paper's
        People's_Republic_of_China -> China through the dump path).
    """

    path: str | os.PathLike[str]
    _index: WikiIndex = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._index = WikiIndex(self.path)

    def lookup(self, links: Iterable[str]) -> dict[str, UriStatus]:
        wanted = list(dict.fromkeys(links))
        titles = {link: self._index.title_of_link(link) for link in wanted}
        records = self._index.records(t for t in titles.values() if t)
        items = {link: wikidata_id(link) for link in wanted if titles[link] is None}
        known_items = self._index.titles_of_wikidata(item for item in items.values() if item)
        answers = {}
        for link in wanted:
            title = titles[link]
            if title is not None:
                answers[link] = _status(records.get(title), self._index.lang)
            elif items.get(link) in known_items:
                answers[link] = UriStatus("page")
            else:
                answers[link] = UriStatus("unknown")
        return answers
