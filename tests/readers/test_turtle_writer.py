"""The NIF Turtle writer (posthoc.turtle, posthoc.writers.write_nif) against rdflib, the peer implementation.

The expected graph is built with rdflib's own API from the same corpus, the way the writer built it before it
wrote Turtle itself; rdflib parses our file to a graph isomorphic to it (same triples, literal for literal).
"""

from __future__ import annotations

from pathlib import Path

from rdflib import RDF, XSD, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic

from posthoc.readers import Corpus
from posthoc.readers.corpus import documents_frame, mentions_frame
from posthoc.turtle import iri, string
from posthoc.writers import DEFAULT_BASE_URI, NOT_IN_WIKI, write_nif

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF = Namespace("http://www.w3.org/2005/11/its/rdf#")
TEXT = "👩🏽‍🚀 Zoë 🇯🇵 東京 𠮷野家 cafe\u0301 \"quoted\" \\ back\nline\ttab\r bell\x07 del\x7f end"


def _rdflib_graph(corpus: Corpus) -> Graph:
    """The NIF graph of the GT system, built triple by triple with rdflib."""
    graph = Graph()
    for doc_id, text in corpus.documents[["doc_id", "text"]].itertuples(index=False):
        doc = DEFAULT_BASE_URI + str(doc_id)
        context = URIRef(f"{doc}#char=0,{len(text)}")
        graph.add((context, RDF.type, NIF.Context))
        graph.add((context, RDF.type, NIF.RFC5147String))
        graph.add((context, NIF.isString, Literal(text, datatype=XSD.string)))
        graph.add((context, NIF.beginIndex, Literal(0, datatype=XSD.nonNegativeInteger)))
        graph.add((context, NIF.endIndex, Literal(len(text), datatype=XSD.nonNegativeInteger)))
        rows = corpus.mentions[corpus.mentions["doc_id"] == doc_id]
        for start, end, surface, link in rows[["start", "end", "surface", "link"]].itertuples(index=False):
            phrase = URIRef(f"{doc}#char={start},{end}")
            graph.add((phrase, RDF.type, NIF.RFC5147String))
            graph.add((phrase, RDF.type, NIF.Phrase))
            graph.add((phrase, NIF.anchorOf, Literal(surface, datatype=XSD.string)))
            graph.add((phrase, NIF.beginIndex, Literal(int(start), datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.endIndex, Literal(int(end), datatype=XSD.nonNegativeInteger)))
            graph.add((phrase, NIF.referenceContext, context))
            target = NOT_IN_WIKI + link[4:] if link.startswith("nil:") else link
            graph.add((phrase, ITSRDF.taIdentRef, URIRef(target)))
    return graph


def test_write_nif_gives_rdflibs_graph_with_every_character_kept(tmp_path: Path) -> None:
    spans, cursor = [], 0
    for token in TEXT.split(" "):
        spans.append((cursor, cursor + len(token)))
        cursor += len(token) + 1
    rows = [("u", "d1", "GT", s, e, TEXT[s:e], f"https://en.wikipedia.org/wiki/T{i}", "", False)
            for i, (s, e) in enumerate(spans)]
    s0, e0 = spans[0]
    rows.append(("u", "d1", "GT", s0, e0, TEXT[s0:e0], "nil:Astronaut_X", "", True))  # two links, one node
    rows.append(("u", "d2", "GT", 0, 5, "whole", "https://en.wikipedia.org/wiki/Whole", "", False))  # = context
    corpus = Corpus(documents_frame([("u", "d1", TEXT), ("u", "d2", "whole")]), mentions_frame(rows))
    path = tmp_path / "gt.ttl"
    write_nif(corpus, path)
    parsed = Graph().parse(path, format="turtle")
    expected = _rdflib_graph(corpus)
    assert len(parsed) == len(expected)
    assert isomorphic(parsed, expected)
    strings = {str(o) for o in parsed.objects(None, NIF.isString)}
    assert TEXT in strings  # byte for byte: emoji, ZWJ, flags, CJK, combining marks, controls
    assert path.read_text(encoding="utf-8").count("#char=0,5> a ") == 2  # the context and the phrase on it


def test_terms_escape_what_turtle_forbids() -> None:
    assert iri('http://x.org/a b<"{}|^`\\>') == "<http://x.org/a%20b%3C%22%7B%7D%7C%5E%60%5C%3E>"
    assert iri("https://ja.wikipedia.org/wiki/東京") == "<https://ja.wikipedia.org/wiki/東京>"  # IRIs keep Unicode
    assert string('a"b\\c\nd\te\x00') == '"a\\"b\\\\c\\nd\\te\\u0000"'
    assert string("x", datatype="xsd:string") == '"x"^^xsd:string'
