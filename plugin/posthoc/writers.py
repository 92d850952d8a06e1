"""The project's writers of a corpus (JSONL, GERBIL NIF 2.0 Turtle) and of a table (CSV, Parquet).

:func:`write_table` writes every table a command writes (CSV: no index, LF line ends, UTF-8; Parquet:
pyarrow, no index); every ``summary.json`` is :func:`posthoc.atomic.write_summary_json`'s.

The corpus writers write atomically (:mod:`posthoc.atomic`): a complete file or the old one, never a partial one.
What they write reads back (:func:`posthoc.readers.read_mentions`) to the same documents and
mentions: texts byte for byte (emoji, ZWJ sequences, flags, CJK, combining marks), code point
offsets, canonical links. Links are written in canonical form (:mod:`posthoc.links`); an anonymous
NIL is ``null`` in JSONL and GERBIL's bare ``http://aksw.org/notInWiki`` in NIF (so that it survives
beside a link on the same span: NIF has one node a span), a named emerging entity ``nil:X`` is
written as ``nil:X`` in JSONL and as GERBIL's ``http://aksw.org/notInWiki/X`` in NIF.
The curation step (design.md, last stage) writes the corrected gold standard with these.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Literal
from urllib.parse import quote

import pandas as pd
from rdflib import XSD, Namespace

from posthoc.atomic import atomic_open, write_bytes_atomic
from posthoc.errors import PosthocInputError
from posthoc.links import NIL_PREFIX
from posthoc.readers.corpus import Corpus
from posthoc.readers.nif import WRITER_BASE_URI
from posthoc.turtle import TurtleWriter, iri, string, typed_integer

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")
ITSRDF = Namespace("http://www.w3.org/2005/11/its/rdf#")
NOT_IN_WIKI = "http://aksw.org/notInWiki/"
DEFAULT_BASE_URI = WRITER_BASE_URI
ParquetCompression = Literal["snappy", "zstd"]


def table_bytes(frame: pd.DataFrame, *, fmt: str, parquet_compression: ParquetCompression = "snappy") -> bytes:
    """``frame`` without its index: ``csv`` (UTF-8, LF line ends) or ``parquet`` (pyarrow, ``parquet_compression``)."""
    if fmt == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False, engine="pyarrow", compression=parquet_compression)
        return buffer.getvalue()
    if fmt == "csv":
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")
    raise PosthocInputError(f"unknown table format {fmt!r}; give csv or parquet")


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str], *, fmt: str = "csv",
                parquet_compression: ParquetCompression = "snappy", permissions: int | None = None) -> None:
    """Write ``frame`` atomically as :func:`table_bytes` gives it (``permissions`` as in :mod:`posthoc.atomic`)."""
    write_bytes_atomic(path, table_bytes(frame, fmt=fmt, parquet_compression=parquet_compression),
                       permissions=permissions)


def _systems_to_write(corpus: Corpus, system: str | None) -> list[str]:
    present = corpus.systems
    if system is None:
        return present
    if system not in present and not corpus.mentions.empty:
        raise PosthocInputError(f"system {system!r} is not in the corpus; it has {', '.join(present) or 'none'}")
    return [system]


def _check_documents(corpus: Corpus, path: str | os.PathLike[str]) -> None:
    """Every mention's document must be in the documents table (else it would be silently lost)."""
    known = set(zip(corpus.documents["dataset"].astype(str), corpus.documents["doc_id"].astype(str), strict=True))
    used = set(zip(corpus.mentions["dataset"].astype(str), corpus.mentions["doc_id"].astype(str), strict=True))
    missing = sorted(used - known)
    if missing:
        dataset, doc_id = missing[0]
        raise PosthocInputError(f"{Path(path)}: not written: {len(missing)} document(s) with mentions are not in the "
                                f"documents table, e.g. {doc_id!r} of dataset {dataset!r}; add their texts")


def _sorted_mentions(corpus: Corpus) -> dict[tuple[str, str, str], pd.DataFrame]:
    ordered = corpus.mentions.sort_values(["dataset", "doc_id", "system", "start", "end", "link"], kind="stable")
    return {
        (str(d), str(i), str(s)): group
        for (d, i, s), group in ordered.groupby(["dataset", "doc_id", "system"], sort=False)
    }


def _json_link(link: str) -> str | None:
    return None if link == NIL_PREFIX else link


def json_line(record: dict[str, object]) -> str:
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
    _check_documents(corpus, path)
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
                handle.write(json_line(record))


def _nif_link(link: str) -> str:
    """The ``itsrdf:taIdentRef`` term of a canonical link (a NIL as GERBIL's notInWiki IRI)."""
    if link.startswith(NIL_PREFIX):
        return iri(NOT_IN_WIKI + link[len(NIL_PREFIX):])
    return iri(link)


def _document_uri(doc_id: str, base_uri: str) -> str:
    if re.match(r"^https?://[^\s#<>\"{}|\\^`]+$", doc_id):
        return doc_id
    return base_uri + quote(doc_id, safe="")


def write_nif(corpus: Corpus, path: str | os.PathLike[str], *, system: str | None = None,
              base_uri: str = DEFAULT_BASE_URI) -> None:
    """Write one system's mentions (and all documents) as GERBIL NIF 2.0 Turtle.

    NIF has no notion of a system: ``system`` names the one to write (default: the only one
    present, else :class:`PosthocInputError`). A context is ``<doc_id>#char=0,N`` when the id is
    an http(s) URI (as NIF ids read by :mod:`posthoc.readers.nif` are), else
    ``<base_uri><percent-encoded doc_id>#char=0,N``, with ``nif:isString``; the dataset name is not
    written (the reader takes it from its argument or the file stem); each mention is
    ``...#char=s,e`` with ``nif:anchorOf``, ``nif:beginIndex``,
    ``nif:endIndex``, ``nif:referenceContext`` and ``itsrdf:taIdentRef`` (several links on one span
    give several ``taIdentRef``). Written by :class:`posthoc.turtle.TurtleWriter` in document order, spans
    sorted (linear; rdflib's serializer is quadratic in the spans).
    """
    systems = _systems_to_write(corpus, system)
    if len(systems) > 1:
        raise PosthocInputError(f"{Path(path)}: NIF holds one system's annotations; the corpus has "
                                f"{', '.join(systems)}; choose one with system=")
    _check_documents(corpus, path)
    uris: dict[str, tuple[str, str]] = {}
    for dataset, doc_id in corpus.documents[["dataset", "doc_id"]].itertuples(index=False):
        uri = _document_uri(str(doc_id), base_uri)
        if uri in uris:
            raise PosthocInputError(f"{Path(path)}: not written: document {doc_id!r} of dataset {dataset!r} and "
                                    f"{uris[uri][1]!r} of dataset {uris[uri][0]!r} would share the NIF URI <{uri}>; "
                                    "write one dataset a NIF file")
        uris[uri] = (str(dataset), str(doc_id))
    groups = _sorted_mentions(corpus)
    integer, text_string = "xsd:nonNegativeInteger", "xsd:string"
    with atomic_open(path, "w") as handle:
        turtle = TurtleWriter(handle, {"nif": str(NIF), "itsrdf": str(ITSRDF), "xsd": str(XSD)})
        for dataset, doc_id, text in corpus.documents[["dataset", "doc_id", "text"]].itertuples(index=False):
            text = str(text)
            doc_uri = _document_uri(str(doc_id), base_uri)
            context = iri(f"{doc_uri}#char=0,{len(text)}")
            turtle.subject(context, [
                ("a", ["nif:Context", "nif:RFC5147String"]),
                ("nif:beginIndex", [typed_integer(0, integer)]),
                ("nif:endIndex", [typed_integer(len(text), integer)]),
                ("nif:isString", [string(text, datatype=text_string)]),
            ])
            group = groups.get((str(dataset), str(doc_id), systems[0])) if systems else None
            if group is None:
                continue
            spans: dict[tuple[int, int], tuple[list[str], list[str]]] = {}  # one node a span, in sorted order
            for start, end, surface, link in group[["start", "end", "surface", "link"]].itertuples(index=False):
                anchors, links = spans.setdefault((int(start), int(end)), ([], []))
                anchors.append(string(str(surface), datatype=text_string))
                links.append(_nif_link(str(link)))
            for (start, end), (anchors, links) in spans.items():
                turtle.subject(iri(f"{doc_uri}#char={start},{end}"), [
                    ("a", ["nif:Phrase", "nif:RFC5147String"]),
                    ("nif:anchorOf", anchors),
                    ("nif:beginIndex", [typed_integer(start, integer)]),
                    ("nif:endIndex", [typed_integer(end, integer)]),
                    ("nif:referenceContext", [context]),
                    ("itsrdf:taIdentRef", links),
                ])
