"""Readers of entity-linking corpora and systems' outputs into the tidy tables of :mod:`posthoc.tables`.

``read_mentions(path)`` returns a :class:`Corpus` (``documents``: ``dataset, doc_id, text``;
``mentions``: ``dataset, doc_id, system, start, end, surface, link, link_original, is_nil``).
Every mention is validated as it is read (``0 <= start < end <= len(text)`` and
``text[start:end] == surface``, offsets in code points); bad input raises
:class:`~posthoc.errors.PosthocInputError` naming the file, document and mention and saying what to fix.
Links go through :func:`posthoc.links.normalise_link`. Formats (:data:`FORMATS`):

``jsonl``  the project's own format (:mod:`posthoc.readers.jsonl`), also what the writers emit;
``nif``    GERBIL NIF 2.0 Turtle / N-Triples (:mod:`posthoc.readers.nif`);
``wned``   WNED XML with its ``RawText/`` folder (:mod:`posthoc.readers.wned`);
``aida``   AIDA-CoNLL TSV, the AIDA-YAGO2 layout (:mod:`posthoc.readers.aida`);
``rel``    REL's output JSON; it carries no text, so ``documents=`` is required (:mod:`posthoc.readers.rel`).

Every reader has the one signature :class:`Reader` states; the ones other than ``jsonl`` are imported at their
first use (rdflib, the XML parser).

Paper 000 (posthoc verification) starts from "a corpus, the ground truth and the outputs of one or
more systems": each file read here is one of those, the ground truth under the system name ``GT``.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import Final, Protocol, cast

import pandas as pd

from posthoc.errors import PosthocInputError
from posthoc.readers.corpus import Corpus
from posthoc.readers.jsonl import read_jsonl
from posthoc.readers.validate import validate_corpus

__all__ = ["FORMATS", "Corpus", "detect_format", "read_mentions", "validate_corpus"]

class Reader(Protocol):
    """What every reader is: ``reader(path, *, dataset, system, documents=None, progress=False) -> Corpus``."""

    def __call__(self, path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
                 progress: bool = False) -> Corpus: ...


def _on_first_use(module: str, function: str) -> Reader:
    """The reader ``posthoc.readers.<module>.<function>``, imported when first called (rdflib and the XML
    parser load only for a file of that format)."""
    def read(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
             progress: bool = False) -> Corpus:
        reader = cast(Reader, getattr(importlib.import_module(f"posthoc.readers.{module}"), function))
        return reader(path, dataset=dataset, system=system, documents=documents, progress=progress)

    return read


#: format name -> reader(path, *, dataset, system, documents, progress)
FORMATS: Final[dict[str, Reader]] = {
    "jsonl": read_jsonl,
    "nif": _on_first_use("nif", "read_nif"),
    "wned": _on_first_use("wned", "read_wned"),
    "aida": _on_first_use("aida", "read_aida"),
    "rel": _on_first_use("rel", "read_rel"),
}

_EXTENSIONS: Final = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".ttl": "nif",
    ".nt": "nif",
    ".n3": "nif",
    ".nif": "nif",
    ".xml": "wned",
    ".tsv": "aida",
    ".conll": "aida",
    ".json": "rel",
}


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path`` from its extension, else from its first bytes; PosthocInputError if unknown.

    Examples:
        The extension decides when it is known (the file need not exist); else the first bytes do.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers import detect_format
        >>> detect_format("gold.ttl"), detect_format("aida.tsv"), detect_format("system.json")
        ('nif', 'aida', 'rel')
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "corpus.txt"
        >>> _ = path.write_text("-DOCSTART- (1 EU)", encoding="utf-8")
        >>> detect_format(path)
        'aida'
        >>> folder.cleanup()
    """
    path = Path(path)
    if path.is_dir():
        if any(path.glob("*.xml")) and (path / "RawText").is_dir():
            return "wned"
        raise PosthocInputError(f"{path}: a folder that is not a WNED corpus (an .xml file beside RawText/); "
                                "give a file, or a WNED folder")
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt:
        return fmt
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    except OSError as error:
        raise PosthocInputError(f"{path}: cannot read the file ({error.strerror}); check the path") from None
    if head.startswith("-DOCSTART-"):
        return "aida"
    if head.startswith(("@prefix", "@base", "PREFIX", "<http", "_:")):
        return "nif"
    if head.startswith("<?xml") or head.startswith("<"):
        return "wned"
    first_line = head.split("\n", 1)[0]
    if re.match(r'^\{\s*"id"\s*:', first_line) or '"mentions"' in first_line or '"text"' in first_line:
        return "jsonl"
    if head.startswith(("{", "[")):
        return "rel"
    raise PosthocInputError(
        f"{path}: unknown format (extension {path.suffix or 'none'!r}); "
        f"give fmt= one of {', '.join(FORMATS)} or use a known extension ({', '.join(sorted(_EXTENSIONS))})"
    )


def _default_dataset(path: Path, fmt: str, documents: pd.DataFrame | None) -> str:
    if fmt == "rel" and documents is not None and documents["dataset"].nunique() == 1:
        return str(documents["dataset"].iloc[0])
    if fmt == "wned":
        return path.name if path.is_dir() else path.parent.name
    return path.stem


def read_mentions(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    dataset: str | None = None,
    system: str = "GT",
    documents: pd.DataFrame | None = None,
    progress: bool = False,
) -> Corpus:
    """Read one corpus / system-output file into a validated :class:`Corpus`.

    ``fmt``: one of :data:`FORMATS`, default detected from the extension (``.ttl``/``.nt`` nif,
    ``.xml`` or a folder wned, ``.jsonl``, ``.tsv`` aida, ``.json`` rel) or the first bytes.
    ``dataset``: default the file stem (the folder name for WNED; for REL the dataset of
    ``documents`` when it holds one). ``system``: the name of the
    system whose output this is (``GT`` for the ground truth). ``documents``: a documents table
    giving the texts (required for REL, optional for JSONL lines without text). ``progress``: a
    tqdm bar over documents. Nothing is written; errors are :class:`PosthocInputError`.

    Examples:
        A JSONL line with the example of :mod:`posthoc.readers.jsonl`: offsets count code points (``東京`` is 12-14),
        a ``null`` link is NIL, a bare title becomes its Wikipedia URL; the dataset is the file's stem.

        >>> import json
        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers import read_mentions
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "news.jsonl"
        >>> line = {"id": "doc-1", "text": "Zoë flew to 東京.",
        ...         "mentions": [{"start": 0, "end": 3, "surface": "Zoë", "link": None},
        ...                      {"start": 12, "end": 14, "surface": "東京", "link": "Tokyo"}]}
        >>> _ = path.write_text(json.dumps(line, ensure_ascii=False), encoding="utf-8")
        >>> corpus = read_mentions(path)
        >>> corpus.documents
          dataset doc_id             text
        0    news  doc-1  Zoë flew to 東京.
        >>> corpus.mentions[["system", "start", "end", "surface", "link", "is_nil"]]
          system  start  end surface                                 link  is_nil
        0     GT      0    3     Zoë                                 nil:    True
        1     GT     12   14      東京  https://en.wikipedia.org/wiki/Tokyo   False
        >>> folder.cleanup()
    """
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        raise PosthocInputError(f"{path}: unknown format {fmt!r}; give one of {', '.join(FORMATS)}")
    if not path.exists():
        raise PosthocInputError(f"{path}: no such file; check the path")
    fmt = fmt or detect_format(path)
    if not system or not isinstance(system, str):
        raise PosthocInputError(f"{path}: the system name must be a non-empty string (GT for the ground truth)")
    name = dataset or _default_dataset(path, fmt, documents)
    try:
        return FORMATS[fmt](path, dataset=name, system=system, documents=documents, progress=progress)
    except PosthocInputError:
        raise
    except UnicodeDecodeError as error:
        raise PosthocInputError(
            f"{path}: not UTF-8 text (byte {error.start}: {error.reason}); save the file as UTF-8"
        ) from None
    except IsADirectoryError:
        raise PosthocInputError(f"{path}: is a folder, not a {fmt} file; give the file") from None
    except OSError as error:
        raise PosthocInputError(f"{path}: cannot read the file ({error.strerror}); check the path and permissions") \
            from None
