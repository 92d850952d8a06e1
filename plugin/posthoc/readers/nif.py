"""GERBIL NIF 2.0 (Turtle, N-Triples, N3) into a :class:`Corpus`, parsed with rdflib.

- a document is a subject with ``nif:isString`` (usually typed ``nif:Context``); its ``doc_id``
  is the context URI without its ``#char=...`` fragment (``http://aksw.org/N3/Reuters-128/77``);
  contexts written by :func:`posthoc.writers.write_nif` under its default base URI get their
  original id back;
- a mention is a subject with ``nif:referenceContext``: ``nif:beginIndex`` / ``nif:endIndex`` (code
  point offsets; taken from the ``#char=s,e`` fragment when absent), ``nif:anchorOf`` (checked
  against the text when present) and ``itsrdf:taIdentRef``: none gives one NIL mention, several give
  one row a link; GERBIL's ``http://aksw.org/notInWiki/X`` are emerging entities (NIL, kept);
  a mention covering the whole text shares the context's URI and is recognised by its
  ``nif:anchorOf`` / ``itsrdf:taIdentRef``.

Documents are in natural order of their ids (``.../2`` before ``.../10``), mentions by offsets and
canonical link.
Real data: N3-Reuters-128 has 128 documents and 880 markings (230 of them notInWiki), N3-RSS-500
500 and 1000 (476); a ``grep -c nif:referenceContext`` says one more because it also counts the
property's own ``owl:DatatypeProperty`` declaration.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Final
from urllib.parse import unquote

import pandas as pd
from rdflib import Graph, Namespace
from rdflib.term import Literal, Node
from tqdm import tqdm

from posthoc.links import normalise_link
from posthoc.readers.corpus import Corpus
from posthoc.readers.validate import CorpusBuilder

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF = Namespace("http://www.w3.org/2005/11/its/rdf#")
WRITER_BASE_URI: Final = "http://posthoc.invalid/"
_RDF_FORMATS: Final = {".nt": "nt", ".n3": "n3"}
_CHAR = re.compile(r"#char=(\d+),(\d+)$")


def doc_id_of(context: str) -> str:
    """The document id of a context URI (see the module docstring).

    Examples:
        A context URI's id is the URI before ``#``; the writers' own base is taken off (and unquoted).

        >>> from posthoc.readers.nif import doc_id_of
        >>> doc_id_of("http://aksw.org/N3/Reuters-128/1#char=0,1036")
        'http://aksw.org/N3/Reuters-128/1'
        >>> doc_id_of("http://posthoc.invalid/doc%201#char=0,11")
        'doc 1'
    """
    base = context.split("#", 1)[0]
    if base.startswith(WRITER_BASE_URI):
        return unquote(base[len(WRITER_BASE_URI):])
    return base


def _natural(key: str) -> list[object]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", key)]


def _integer(node: Node | None, fallback: int | None) -> object:
    if node is None:
        return fallback
    value = node.toPython() if isinstance(node, Literal) else node
    return value if isinstance(value, int) and not isinstance(value, bool) else str(node)


def read_nif(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
             progress: bool = False) -> Corpus:
    """Read a NIF 2.0 file (format in the module docstring) into a validated :class:`Corpus`.

    Examples:
        A context of 12 characters and one mention; ``#char=8,11`` gives its offsets, a GERBIL ``notInWiki`` link is
        NIL.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers.nif import read_nif
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "toy.ttl"
        >>> _ = path.write_text(
        ...     "@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .\\n"
        ...     "@prefix itsrdf: <http://www.w3.org/2005/11/its/rdf#> .\\n"
        ...     '<http://ex.org/d1#char=0,12> a nif:Context ; nif:isString "Ann met Bob." .\\n'
        ...     "<http://ex.org/d1#char=8,11> nif:referenceContext <http://ex.org/d1#char=0,12> ;\\n"
        ...     '    nif:anchorOf "Bob" ; itsrdf:taIdentRef <http://aksw.org/notInWiki/Bob_Smith> .\\n',
        ...     encoding="utf-8")
        >>> corpus = read_nif(path, dataset="toy", system="GT")
        >>> corpus.mentions[["doc_id", "start", "end", "surface", "link", "is_nil"]]
                     doc_id  start  end surface           link  is_nil
        0  http://ex.org/d1      8   11     Bob  nil:Bob_Smith    True
        >>> folder.cleanup()
    """
    builder = CorpusBuilder(path, dataset=dataset, system=system)
    graph = Graph()
    try:
        graph.parse(path, format=_RDF_FORMATS.get(path.suffix.lower(), "turtle"))
    except (OSError, UnicodeDecodeError):
        raise
    except Exception as error:  # rdflib raises many parser exception types
        detail = " ".join(str(error).split())[:300]
        raise builder.fail(f"not valid NIF / RDF ({type(error).__name__}: {detail}); fix the syntax") from None
    texts = {str(s): o for s, o in graph.subject_objects(NIF.isString)}
    context_of = {str(s): str(o) for s, o in graph.subject_objects(NIF.referenceContext)}
    begins = {str(s): o for s, o in graph.subject_objects(NIF.beginIndex)}
    ends = {str(s): o for s, o in graph.subject_objects(NIF.endIndex)}
    anchors = {str(s): o for s, o in graph.subject_objects(NIF.anchorOf)}
    links: dict[str, list[str]] = defaultdict(list)
    for subject, target in graph.subject_objects(ITSRDF.taIdentRef):
        links[str(subject)].append(str(target))

    doc_of_context = {}
    for context in sorted(texts, key=lambda c: _natural(doc_id_of(c))):
        doc_id = doc_id_of(context)
        text = texts[context]
        if not isinstance(text, Literal):
            raise builder.fail("nif:isString is not a literal; give the text as a string", doc_id=doc_id)
        builder.add_document(doc_id, str(text), where=f"context <{context}>")
        doc_of_context[context] = doc_id

    by_context: dict[str, list[str]] = defaultdict(list)
    for mention, context in context_of.items():
        if mention in texts and (mention != context or (mention not in anchors and mention not in links)):
            # a context pointing at itself or a parent: a mention only when it is one (a span covering the
            # whole text has the context's URI and carries nif:anchorOf / itsrdf:taIdentRef)
            continue
        if context not in doc_of_context:
            raise builder.fail(
                f"mention <{mention}> has nif:referenceContext <{context}>, which has no nif:isString; "
                "add the context with its text"
            )
        by_context[context].append(mention)

    for context in tqdm(list(doc_of_context), desc=path.name, unit="doc", disable=not progress):
        rows: list[tuple[object, object, str | None, str, str | None]] = []
        for mention in by_context.get(context, []):
            fragment = _CHAR.search(mention)
            start = _integer(begins.get(mention), int(fragment.group(1)) if fragment else None)
            end = _integer(ends.get(mention), int(fragment.group(2)) if fragment else None)
            anchor_node = anchors.get(mention)
            surface = None if anchor_node is None else str(anchor_node)
            targets: list[str | None] = [*sorted(links.get(mention, []))] or [None]
            rows.extend((start, end, link, mention, surface) for link in targets)
        rows.sort(key=lambda r: (r[0] if isinstance(r[0], int) else -1, r[1] if isinstance(r[1], int) else -1,
                                 normalise_link(r[2]).link))
        for start, end, link, mention, surface in rows:
            builder.add_mention(doc_of_context[context], start, end, link, surface=surface,
                                where=f"mention <{mention}>")
    return builder.build()
