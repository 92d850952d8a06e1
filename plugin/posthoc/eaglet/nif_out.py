"""NIF 2.0 Turtle carrying the flags, in Eaglet's vocabulary (paper 003, Sect. 4; Eaglet's output).

The checked system's documents and annotations are written as :func:`posthoc.writers.write_nif`
writes them (same document URIs, so :mod:`posthoc.readers.nif` reads them back), and every flag is
added to its phrase (``<document URI>#char=s,e``):

``eaglet:hasErrorType``    :data:`ERROR_TYPES` (Eaglet's names: ``LongDesc``, ``WrongPos``,
                           ``Overlapping``, ``CombinedTagging``, ``OutdatedUriErr``, ...);
``eaglet:hasCheckResult``  :data:`CHECK_RESULTS` by suggestion (``Deleted``, ``Overlaps``,
                           ``NeedToPair``, ``OutdatedUri``, ``Added``, ``NeedToCheck``); annotations
                           without a flag get ``Good``, as in Eaglet's own output;
``eaglet:hasPairPartner``  the partner phrase; ``eaglet:hasSuggestion``, ``eaglet:hasFlagId``,
                           ``rdfs:comment`` (the detail) as literals; ``eaglet:hasSuggestedUri`` for
                           an outdated URI's target.
Proposed annotations (``insert``) are new phrases with ``itsrdf:taIdentRef`` when they have a link.
"""

from __future__ import annotations

import os
import re
from types import SimpleNamespace
from typing import Final
from urllib.parse import quote

import pandas as pd
from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef

from posthoc.atomic import write_bytes_atomic
from posthoc.links import NIL_PREFIX
from posthoc.readers.corpus import Corpus
from posthoc.writers import DEFAULT_BASE_URI, ITSRDF, NIF, NOT_IN_WIKI

_URL: Final = re.compile(r"^https?://[^\s#<>\"{}|\\^`]+$")
EAGLET: Final = Namespace("http://gerbil.aksw.org/eaglet/vocab#")
ERROR_TYPES: Final = {
    "long_description": "LongDesc",
    "positioning": "WrongPos",
    "overlapping": "Overlapping",
    "combined_marking": "CombinedTagging",
    "outdated_uri": "OutdatedUriErr",
    "disambiguation_uri": "DisambiguationUriErr",
    "invalid_uri": "InvalidUriErr",
    "inconsistent_marking": "InconsistentMarking",
    "missing_entity": "MissingEntity",
}


def check_result(rule: str, suggestion: str) -> str:
    """Eaglet's ``hasCheckResult`` name for a flag."""
    if suggestion == "insert":
        return "Added"
    if suggestion == "delete":
        return "Deleted"
    if suggestion == "update-uri":
        return "OutdatedUri"
    return {"overlapping": "Overlaps", "combined_marking": "NeedToPair"}.get(rule, "NeedToCheck")


def _phrase(documents: dict[str, str], doc_id: str, start: int, end: int) -> URIRef:
    return URIRef(f"{documents[doc_id]}#char={start},{end}")


def _document_uri(doc_id: str, base_uri: str) -> str:
    """The document URI :func:`posthoc.writers.write_nif` uses (a URL id as it is, else base + quoted id)."""
    if _URL.match(doc_id):
        return doc_id
    return base_uri + quote(doc_id, safe="")


def _add_phrase(graph: Graph, phrase: URIRef, context: URIRef, start: int, end: int, surface: str,
                link: str) -> None:
    graph.add((phrase, RDF.type, NIF.Phrase))
    graph.add((phrase, RDF.type, NIF.RFC5147String))
    graph.add((phrase, NIF.anchorOf, Literal(surface, datatype=XSD.string)))
    graph.add((phrase, NIF.beginIndex, Literal(start, datatype=XSD.nonNegativeInteger)))
    graph.add((phrase, NIF.endIndex, Literal(end, datatype=XSD.nonNegativeInteger)))
    graph.add((phrase, NIF.referenceContext, context))
    if link and link != NIL_PREFIX:
        target = NOT_IN_WIKI + link[len(NIL_PREFIX):] if link.startswith(NIL_PREFIX) else link
        graph.add((phrase, ITSRDF.taIdentRef, URIRef(target)))


def write_flagged_nif(corpus: Corpus, flags: pd.DataFrame, path: str | os.PathLike[str], *, system: str = "GT",
                      base_uri: str = DEFAULT_BASE_URI) -> None:
    """Write ``system``'s annotations of ``corpus`` with ``flags`` as NIF (atomically).

    The file is N-Triples, which is also Turtle: rdflib's pretty Turtle serialiser grows a prefix
    trie per document URI and took minutes on the shared corpora; N-Triples takes seconds.
    """
    graph = Graph()
    documents: dict[str, str] = {}
    contexts: dict[str, URIRef] = {}
    for doc_id, text in corpus.documents[["doc_id", "text"]].itertuples(index=False):
        doc_id, text = str(doc_id), str(text)
        documents[doc_id] = _document_uri(doc_id, base_uri)
        context = contexts[doc_id] = URIRef(f"{documents[doc_id]}#char=0,{len(text)}")
        graph.add((context, RDF.type, NIF.Context))
        graph.add((context, RDF.type, NIF.RFC5147String))
        graph.add((context, NIF.isString, Literal(text, datatype=XSD.string)))
        graph.add((context, NIF.beginIndex, Literal(0, datatype=XSD.nonNegativeInteger)))
        graph.add((context, NIF.endIndex, Literal(len(text), datatype=XSD.nonNegativeInteger)))
    checked = corpus.mentions[corpus.mentions["system"] == system]
    for doc_id, start, end, surface, link in checked[["doc_id", "start", "end", "surface", "link"]].itertuples(
            index=False):
        _add_phrase(graph, _phrase(documents, str(doc_id), int(start), int(end)), contexts[str(doc_id)],
                    int(start), int(end), str(surface), str(link))
    flagged: set[URIRef] = set()
    for record in flags.to_dict("records"):
        row = SimpleNamespace(**{str(k): v for k, v in record.items()})
        doc_id, start, end = str(row.doc_id), int(row.start), int(row.end)
        phrase = _phrase(documents, doc_id, start, end)
        flagged.add(phrase)
        if row.suggestion == "insert":
            _add_phrase(graph, phrase, contexts[doc_id], start, end, str(row.surface), str(row.link))
        graph.add((phrase, EAGLET.hasErrorType, EAGLET[ERROR_TYPES[str(row.rule)]]))
        graph.add((phrase, EAGLET.hasCheckResult, EAGLET[check_result(str(row.rule), str(row.suggestion))]))
        graph.add((phrase, EAGLET.hasSuggestion, Literal(str(row.suggestion))))
        graph.add((phrase, EAGLET.hasFlagId, Literal(str(row.flag_id))))
        if str(row.detail):
            graph.add((phrase, RDFS.comment, Literal(str(row.detail))))
        if int(row.partner_start) >= 0 and row.suggestion != "update-span":
            graph.add((phrase, EAGLET.hasPairPartner,
                       _phrase(documents, doc_id, int(row.partner_start), int(row.partner_end))))
        if row.suggestion == "update-uri" and str(row.partner_link):
            graph.add((phrase, EAGLET.hasSuggestedUri, URIRef(str(row.partner_link))))
    for node in set(graph.subjects(RDF.type, NIF.Phrase)) - flagged:
        graph.add((node, EAGLET.hasCheckResult, EAGLET.Good))
    write_bytes_atomic(path, graph.serialize(format="nt", encoding="utf-8"))
