"""The ``nif`` predictor: a NIF web-service annotator called the way GERBIL calls one.

Protocol (GERBIL's ``NIFBasedAnnotatorWebservice``, github.com/dice-group/gerbil, and NIF 2.0 Core,
persistence.uni-leipzig.org/nlp2rdf): ``POST <url>`` with ``Content-Type: application/x-turtle`` and
``Accept: application/x-turtle``; the body is a NIF 2.0 Turtle document holding one ``nif:Context``
``<http://www.aksw.org/gerbil/NifWebService/request_N#char=0,L>`` (types ``nif:Context``,
``nif:RFC5147String``) with ``nif:isString`` (the text), ``nif:beginIndex 0`` and ``nif:endIndex L``. The
annotator answers the same document with its annotations added: one subject a mention, with
``nif:referenceContext`` (the context), ``nif:beginIndex`` / ``nif:endIndex`` (else the ``#char=s,e`` of its
URI), optional ``nif:anchorOf`` and zero or more ``itsrdf:taIdentRef`` (none: a recognised mention without a
link, NIL; GERBIL's ``http://aksw.org/notInWiki/X`` are emerging entities; of several links the first
non-NIL one in sorted order is taken). The answer is parsed with rdflib.

Offsets. NIF counts characters, and GERBIL's own NIF library counts code points: its
``AnnotationWriter.addSpan`` (github.com/dice-group/gerbil,
``src/main/java/org/aksw/gerbil/io/nif/AnnotationWriter.java``) writes ``nif:beginIndex`` as
``text.codePointCount(0, startInJavaText)``. An annotator that writes Java ``String`` indices itself counts
UTF-16 code units, which run ahead of code points after any astral character (emoji, rare CJK).
``offsets="auto"`` (default) reads a document's mentions as code points when every ``nif:anchorOf`` equals
the text there, else as UTF-16 units when every one does so. Mentions without ``anchorOf`` (both readings
can then be read, and differ only after an astral character) are read the way that puts every span on
word boundaries: starting and ending on a token boundary of :func:`posthoc.predictors.linker.tokens`, never
on whitespace (GERBIL's checks warn on a marking that starts or ends with whitespace); code points when
both do, and :class:`~posthoc.errors.PosthocInputError` naming the spans when neither does (give
``--nif-offsets``). ``"codepoints"`` and ``"utf16"`` force one reading. Sent offsets are code points.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final, Literal

from rdflib import RDF, XSD, Graph, Namespace, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.term import Node

from posthoc.errors import PosthocInputError
from posthoc.links import normalise_link
from posthoc.predictors.base import PredictedMention, PredictorAnswerError, mention, sorted_unique
from posthoc.predictors.http import ServiceClient
from posthoc.predictors.linker import tokens

NIF: Final = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF: Final = Namespace("http://www.w3.org/2005/11/its/rdf#")
#: the document URI GERBIL gives each request (a counter is appended)
DOCUMENT_URI: Final = "http://www.aksw.org/gerbil/NifWebService/request_"
TURTLE: Final = "application/x-turtle"
_CHAR = re.compile(r"#char=(\d+),(\d+)$")
Offsets = Literal["auto", "codepoints", "utf16"]


def request_document(text: str, context: str) -> bytes:
    """The NIF 2.0 Turtle request for ``text`` under the context URI ``context`` (UTF-8)."""
    graph = Graph()
    graph.bind("nif", NIF)
    graph.bind("xsd", XSD)
    node = URIRef(context)
    graph.add((node, RDF.type, NIF.Context))
    graph.add((node, RDF.type, NIF.RFC5147String))
    graph.add((node, NIF.isString, RdfLiteral(text, datatype=XSD.string)))
    graph.add((node, NIF.beginIndex, RdfLiteral(0, datatype=XSD.nonNegativeInteger)))
    graph.add((node, NIF.endIndex, RdfLiteral(len(text), datatype=XSD.nonNegativeInteger)))
    return graph.serialize(format="turtle", encoding="utf-8")


def utf16_to_codepoints(text: str) -> dict[int, int]:
    """UTF-16 code unit offset -> code point offset, at every code point boundary of ``text`` (and its end)."""
    table: dict[int, int] = {}
    unit = 0
    for index, char in enumerate(text):
        table[unit] = index
        unit += 2 if ord(char) > 0xFFFF else 1
    table[unit] = len(text)
    return table


def _on_words(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every span lies in the text, starts and ends on token boundaries and not on whitespace."""
    if not spans:
        return True
    starts, ends = set(), set()
    for start, end in tokens(text):
        starts.add(start)
        ends.add(end)
    return all(0 <= b < e <= len(text) and b in starts and e in ends and not text[b].isspace()
               and not text[e - 1].isspace() for b, e in spans)


def auto_reading(text: str, phrases: list[tuple[int, int, str | None, str | None]], where: str) -> Offsets:
    """How ``--nif-offsets auto`` reads one document's mentions (module docstring): "codepoints" or "utf16"."""
    table = utf16_to_codepoints(text)
    if max(table) == len(text):  # no astral character: both readings are the same
        return "codepoints"
    anchored = [(b, e, a) for b, e, a, _ in phrases if a is not None]
    if anchored:
        if all(text[b:e] == a for b, e, a in anchored):
            return "codepoints"
        units = all(b in table and e in table and text[table[b]:table[e]] == a for b, e, a in anchored)
        return "utf16" if units else "codepoints"  # neither: refused with the code point reading's mismatch
    spans = [(b, e) for b, e, _, _ in phrases]
    if _on_words(text, spans):
        return "codepoints"
    if all(b in table and e in table for b, e in spans) and _on_words(text, [(table[b], table[e]) for b, e in spans]):
        return "utf16"
    shown = ", ".join(f"{b}..{e} ({text[b:e]!r} as code points)" for b, e in sorted(spans)[:3])
    raise PosthocInputError(f"{where}: mentions without nif:anchorOf ({shown}{', ...' if len(spans) > 3 else ''}) "
                            "fall on word boundaries neither as code points nor as UTF-16 units; give "
                            "--nif-offsets codepoints or utf16 for this annotator")


def _int(value: Node | None) -> int | None:
    if value is None:
        return None
    python = value.toPython() if isinstance(value, RdfLiteral) else None
    if isinstance(python, bool) or not isinstance(python, int):
        try:
            return int(str(value))
        except ValueError:
            return None
    return python


def _pick_link(links: list[str]) -> str | None:
    if not links:
        return None
    return sorted(links, key=lambda link: (normalise_link(link).is_nil, link))[0]


class NIFLinker:
    """A NIF web-service annotator as a :class:`~posthoc.predictors.base.TextLinker`."""

    name = "nif"

    def __init__(self, url: str, *, timeout: float = 30.0, retries: int = 2, offsets: Offsets = "auto",
                 concurrency: int = 2, backoff: float = 0.5) -> None:
        if offsets not in ("auto", "codepoints", "utf16"):
            raise ValueError(f"nif: offsets must be auto, codepoints or utf16, not {offsets!r}")
        if concurrency < 1:
            raise ValueError("nif: concurrency must be at least 1")
        self.client = ServiceClient("NIF annotator", url, timeout=timeout, retries=retries, backoff=backoff)
        self.offsets: Offsets = offsets
        self.concurrency = concurrency
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def _context(self, text: str) -> str:
        with self._lock:
            number = next(self._counter)
        return f"{DOCUMENT_URI}{number}#char=0,{len(text)}"

    def link_one(self, text: str, *, deadline: float | None = None) -> list[PredictedMention]:
        """The annotator's mentions of one text."""
        if not text:
            return []
        context = self._context(text)
        reply = self.client.post(data=request_document(text, context), deadline=deadline,
                                 headers={"Content-Type": f"{TURTLE}; charset=utf-8", "Accept": TURTLE})
        where = f"NIF annotator at {self.client.shown_url}"
        graph = Graph()
        try:
            graph.parse(data=reply.content.decode("utf-8"), format="turtle")
        except UnicodeDecodeError:
            raise PredictorAnswerError(f"{where}: the answer is not UTF-8") from None
        except Exception as exc:  # rdflib raises assorted parser errors on broken Turtle
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
            raise PredictorAnswerError(f"{where}: the answer is not NIF Turtle ({reason})") from None
        ours: Node = URIRef(context)
        contexts = set(graph.subjects(NIF.isString, None))
        if ours not in contexts and len(contexts) == 1:
            (only,) = contexts
            if str(graph.value(only, NIF.isString)) == text:
                ours = only  # the annotator renamed the document but kept its text
        phrases = []
        for subject in sorted(set(graph.subjects(NIF.referenceContext, ours)), key=str):
            begin, end = _int(graph.value(subject, NIF.beginIndex)), _int(graph.value(subject, NIF.endIndex))
            fragment = _CHAR.search(str(subject))
            if (begin is None or end is None) and fragment:
                begin, end = int(fragment.group(1)), int(fragment.group(2))
            if begin is None or end is None:
                raise PredictorAnswerError(f"{where}: mention <{subject}> has no nif:beginIndex / nif:endIndex")
            anchor = graph.value(subject, NIF.anchorOf)
            links = [str(node) for node in graph.objects(subject, ITSRDF.taIdentRef)]
            phrases.append((begin, end, None if anchor is None else str(anchor), _pick_link(links)))
        return sorted_unique(self._mentions(text, phrases, where))

    def _mentions(self, text: str, phrases: list[tuple[int, int, str | None, str | None]],
                  where: str) -> list[PredictedMention]:
        mode = self.offsets if self.offsets != "auto" else auto_reading(text, phrases, where)
        if mode == "utf16":
            table = utf16_to_codepoints(text)
            converted = []
            for begin, end, anchor, link in phrases:
                if begin not in table or end not in table:
                    raise PredictorAnswerError(f"{where}: mention {begin}..{end} (UTF-16 units) does not fall on "
                                               "character boundaries of the text")
                converted.append((table[begin], table[end], anchor, link))
            phrases = converted
        return [mention(text, begin, end, link, surface=anchor, service=where) for begin, end, anchor, link in phrases]

    def link_texts(self, texts: Sequence[str], *, deadline: float | None = None) -> list[list[PredictedMention]]:
        if self.concurrency == 1 or len(texts) <= 1:
            return [self.link_one(text, deadline=deadline) for text in texts]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(texts))) as pool:
            return list(pool.map(lambda text: self.link_one(text, deadline=deadline), texts))
