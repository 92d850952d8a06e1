"""Writers of a :class:`~posthoc.readers.Corpus`: the project's JSONL and GERBIL NIF 2.0 Turtle.

Both write atomically (:mod:`posthoc.atomic`): a complete file or the old one, never a partial one.
What they write reads back (:func:`posthoc.readers.read_mentions`) to the same documents and
mentions: texts byte for byte (emoji, ZWJ sequences, flags, CJK, combining marks), code point
offsets, canonical links. Links are written in canonical form (:mod:`posthoc.links`); an anonymous
NIL is ``null`` in JSONL and has no ``itsrdf:taIdentRef`` in NIF, a named emerging entity
``nil:X`` is written as ``nil:X`` in JSONL and as GERBIL's ``http://aksw.org/notInWiki/X`` in NIF.
The curation step (design.md, last stage) writes the corrected gold standard with these.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from rdflib import RDF, XSD, Graph, Literal, Namespace, URIRef

from posthoc.atomic import atomic_open, write_bytes_atomic
from posthoc.errors import PosthocInputError
from posthoc.links import NIL_PREFIX
from posthoc.readers.corpus import Corpus

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF = Namespace("http://www.w3.org/2005/11/its/rdf#")
NOT_IN_WIKI = "http://aksw.org/notInWiki/"
DEFAULT_BASE_URI = "http://posthoc.invalid/"


def _systems_to_write(corpus: Corpus, system: str | None) -> list[str]:
    present = corpus.systems
    if system is None:
        return present
    if system not in present and not corpus.mentions.empty:
        raise PosthocInputError(f"system {system!r} is not in the corpus; it has {', '.join(present) or 'none'}")
    return [system]


def _sorted_mentions(corpus: Corpus) -> dict[tuple[str, str, str], pd.DataFrame]:
    ordered = corpus.mentions.sort_values(["dataset", "doc_id", "system", "start", "end", "link"], kind="stable")
    return {
        (str(d), str(i), str(s)): group
        for (d, i, s), group in ordered.groupby(["dataset", "doc_id", "system"], sort=False)
    }


def _json_link(link: str) -> str | None:
    return None if link == NIL_PREFIX else link


def _json_line(record: dict[str, object]) -> str:
    """One JSON line; the line separators JSON leaves raw (U+2028, U+2029, U+0085) are escaped too."""
    line = json.dumps(record, ensure_ascii=False)
    for char in ("\u2028", "\u2029", "\u0085"):
        line = line.replace(char, f"\\u{ord(char):04x}")
    return line + "\n"


def write_jsonl(corpus: Corpus, path: str | os.PathLike[str], *, system: str | None = None) -> None:
    """Write ``corpus`` as JSONL (format: :mod:`posthoc.readers.jsonl`), one line a document and system.

    ``system`` None writes every system present (one line per document and system, a document
    without mentions of a system gets an empty list); a name writes that system only. A corpus
    without any mentions is written one line a document, without ``system``.
    """
    systems = _systems_to_write(corpus, system)
    groups = _sorted_mentions(corpus)
    with atomic_open(path, "w") as handle:
        for dataset, doc_id, text in corpus.documents[["dataset", "doc_id", "text"]].itertuples(index=False):
            for name in systems or [None]:  # type: ignore[list-item]
                record: dict[str, object] = {"id": str(doc_id), "dataset": str(dataset)}
                if name is not None:
                    record["system"] = name
                record["text"] = str(text)
                group = groups.get((str(dataset), str(doc_id), str(name)))
                record["mentions"] = [] if group is None else [
                    {"start": int(start), "end": int(end), "surface": str(surface), "link": _json_link(str(link))}
                    for start, end, surface, link in group[["start", "end", "surface", "link"]].itertuples(index=False)
                ]
                handle.write(_json_line(record))


def _nif_link(link: str) -> URIRef | None:
    if link == NIL_PREFIX:
        return None
    if link.startswith(NIL_PREFIX):
        return URIRef(NOT_IN_WIKI + link[len(NIL_PREFIX):])
    return URIRef(link)


def write_nif(corpus: Corpus, path: str | os.PathLike[str], *, system: str | None = None,
              base_uri: str = DEFAULT_BASE_URI) -> None:
    """Write one system's mentions (and all documents) as GERBIL NIF 2.0 Turtle.

    NIF has no notion of a system: ``system`` names the one to write (default: the only one
    present, else :class:`PosthocInputError`). Contexts are ``<base_uri><dataset>/<doc_id>#char=0,N``
    with ``nif:isString``; each mention is ``...#char=s,e`` with ``nif:anchorOf``, ``nif:beginIndex``,
    ``nif:endIndex``, ``nif:referenceContext`` and ``itsrdf:taIdentRef`` (several links on one span
    give several ``taIdentRef``).
    """
    systems = _systems_to_write(corpus, system)
    if len(systems) > 1:
        raise PosthocInputError(f"{Path(path)}: NIF holds one system's annotations; the corpus has "
                                f"{', '.join(systems)}; choose one with system=")
    graph = Graph()
    graph.bind("nif", NIF)
    graph.bind("itsrdf", ITSRDF)
    graph.bind("xsd", XSD)
    groups = _sorted_mentions(corpus)
    for dataset, doc_id, text in corpus.documents[["dataset", "doc_id", "text"]].itertuples(index=False):
        text = str(text)
        doc_uri = f"{base_uri}{quote(str(dataset), safe='')}/{quote(str(doc_id), safe='')}"
        context = URIRef(f"{doc_uri}#char=0,{len(text)}")
        graph.add((context, RDF.type, NIF.Context))
        graph.add((context, RDF.type, NIF.RFC5147String))
        graph.add((context, NIF.isString, Literal(text, datatype=XSD.string)))
        graph.add((context, NIF.beginIndex, Literal(0, datatype=XSD.nonNegativeInteger)))
        graph.add((context, NIF.endIndex, Literal(len(text), datatype=XSD.nonNegativeInteger)))
        group = groups.get((str(dataset), str(doc_id), systems[0])) if systems else None
        if group is None:
            continue
        for start, end, surface, link in group[["start", "end", "surface", "link"]].itertuples(index=False):
            phrase = URIRef(f"{doc_uri}#char={int(start)},{int(end)}")
            graph.add((phrase, RDF.type, NIF.RFC5147String))
            graph.add((phrase, RDF.type, NIF.Phrase))
            graph.add((phrase, NIF.anchorOf, Literal(str(surface), datatype=XSD.string)))
            graph.add((phrase, NIF.beginIndex, Literal(int(start), datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.endIndex, Literal(int(end), datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.referenceContext, context))
            target = _nif_link(str(link))
            if target is not None:
                graph.add((phrase, ITSRDF.taIdentRef, target))
    data = graph.serialize(format="turtle", encoding="utf-8")
    write_bytes_atomic(path, data)
