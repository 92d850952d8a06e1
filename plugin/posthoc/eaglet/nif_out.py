"""NIF 2.0 Turtle carrying the flags, in Eaglet's vocabulary (paper 003, Sect. 4; Eaglet's output).

The checked system's documents and annotations are written by :func:`posthoc.writers.write_nif`,
then every flag is added to its phrase (the writer's document URI + ``#char=s,e``):

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
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Final

import pandas as pd
from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef

from posthoc.atomic import write_bytes_atomic
from posthoc.links import NIL_PREFIX
from posthoc.readers.corpus import Corpus
from posthoc.readers.nif import doc_id_of
from posthoc.writers import DEFAULT_BASE_URI, ITSRDF, NIF, NOT_IN_WIKI, write_nif

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


def write_flagged_nif(corpus: Corpus, flags: pd.DataFrame, path: str | os.PathLike[str], *, system: str = "GT",
                      base_uri: str = DEFAULT_BASE_URI) -> None:
    """Write ``system``'s annotations of ``corpus`` with ``flags`` as NIF Turtle (atomically)."""
    checked = Corpus(corpus.documents, corpus.mentions[corpus.mentions["system"] == system])
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.ttl"
        write_nif(checked, plain, system=system if not checked.mentions.empty else None, base_uri=base_uri)
        graph = Graph().parse(plain, format="turtle")
    graph.bind("eaglet", EAGLET)
    # the document URIs exactly as the writer made them: doc_id -> context URI without its fragment
    documents = {doc_id_of(str(c)): str(c).split("#", 1)[0] for c in graph.subjects(NIF.isString, None)}
    texts = {str(i): str(t) for i, t in corpus.documents[["doc_id", "text"]].itertuples(index=False)}
    flagged: set[URIRef] = set()
    for record in flags.to_dict("records"):
        row = SimpleNamespace(**{str(k): v for k, v in record.items()})
        doc_id, start, end = str(row.doc_id), int(row.start), int(row.end)
        phrase = _phrase(documents, doc_id, start, end)
        flagged.add(phrase)
        if row.suggestion == "insert":
            context = URIRef(f"{documents[doc_id]}#char=0,{len(texts[doc_id])}")
            graph.add((phrase, RDF.type, NIF.Phrase))
            graph.add((phrase, RDF.type, NIF.RFC5147String))
            graph.add((phrase, NIF.anchorOf, Literal(str(row.surface), datatype=XSD.string)))
            graph.add((phrase, NIF.beginIndex, Literal(start, datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.endIndex, Literal(end, datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.referenceContext, context))
            link = str(row.link)
            if link and link != NIL_PREFIX:
                target = NOT_IN_WIKI + link[len(NIL_PREFIX):] if link.startswith(NIL_PREFIX) else link
                graph.add((phrase, ITSRDF.taIdentRef, URIRef(target)))
        graph.add((phrase, EAGLET.hasErrorType, EAGLET[ERROR_TYPES[str(row.rule)]]))
        graph.add((phrase, EAGLET.hasCheckResult, EAGLET[check_result(str(row.rule), str(row.suggestion))]))
        graph.add((phrase, EAGLET.hasSuggestion, Literal(str(row.suggestion))))
        graph.add((phrase, EAGLET.hasFlagId, Literal(str(row.flag_id))))
        if str(row.detail):
            graph.add((phrase, RDFS.comment, Literal(str(row.detail))))
        if int(row.partner_start) >= 0:
            graph.add((phrase, EAGLET.hasPairPartner,
                       _phrase(documents, doc_id, int(row.partner_start), int(row.partner_end))))
        if row.suggestion == "update-uri" and str(row.partner_link):
            graph.add((phrase, EAGLET.hasSuggestedUri, URIRef(str(row.partner_link))))
    for node in set(graph.subjects(RDF.type, NIF.Phrase)) - flagged:
        graph.add((node, EAGLET.hasCheckResult, EAGLET.Good))
    write_bytes_atomic(path, graph.serialize(format="turtle", encoding="utf-8"))
