"""Test helpers for the Eaglet tests: the paper's examples as a Corpus, and lenient JSON-LD parsing.

``read_corpus`` uses :func:`posthoc.readers.read_mentions` when the NIF reader is there, else a
minimal rdflib parse of the two example documents (test-only; the product reads through posthoc.readers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from posthoc.links import normalise_link
from posthoc.readers.corpus import Corpus, documents_frame, mentions_frame

EAGLET_VOCAB = "http://gerbil.aksw.org/eaglet/vocab#"

#: Eaglet's error types (hasErrorType) -> our rule names.
EAGLET_RULES = {
    "CombinedTagging": "combined_marking",
    "Overlapping": "overlapping",
    "WrongPos": "positioning",
    "LongDesc": "long_description",
    "OutdatedUriErr": "outdated_uri",
    "DisambiguationUriErr": "disambiguation_uri",
    "InvalidUriErr": "invalid_uri",
}


def read_corpus(path: Path, *, dataset: str = "eaglet") -> Corpus:
    try:
        from posthoc.readers import read_mentions

        return read_mentions(path, fmt="nif", dataset=dataset)
    except (ImportError, ModuleNotFoundError, KeyError):
        pass
    from rdflib import Graph, URIRef

    nif = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
    graph = Graph().parse(path, format="turtle")
    docs, rows = [], []
    for context, text in graph.subject_objects(URIRef(nif + "isString")):
        docs.append((dataset, str(context).split("#")[0], str(text)))
    for phrase, context in graph.subject_objects(URIRef(nif + "referenceContext")):
        start = int(graph.value(phrase, URIRef(nif + "beginIndex")))
        end = int(graph.value(phrase, URIRef(nif + "endIndex")))
        surface = str(graph.value(phrase, URIRef(nif + "anchorOf")))
        link = graph.value(phrase, URIRef("http://www.w3.org/2005/11/its/rdf#taIdentRef"))
        norm = normalise_link(None if link is None else str(link))
        rows.append((dataset, str(context).split("#")[0], "GT", start, end, surface, norm.link, norm.original,
                     norm.is_nil))
    return Corpus(documents_frame(sorted(docs)), mentions_frame(rows))


def expected_checks(path: Path) -> set[tuple[str, int, int]]:
    """``(rule, start, end)`` of Eaglet's flags in an expected-checks JSON-LD file.

    Parsed leniently: an HTML-escaped quote (``& quot;``, one file has one where a closing quote
    should be) is turned back into ``"`` and a raw newline or other control character inside a
    string is replaced by a space before JSON parsing.
    """
    raw = re.sub(r"&\s?quot;", '"', path.read_text(encoding="utf-8"))
    cleaned = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: re.sub(r"[\x00-\x1f]", " ", m.group()), raw, flags=re.S)
    data = json.loads(cleaned)
    found = set()
    for node in data["@graph"]:
        error = node.get("hasErrorType")
        if error:
            name = str(error).rsplit("#", 1)[-1]
            found.add((EAGLET_RULES[name], int(node["beginIndex"]), int(node["endIndex"])))
    return found
